/* CoreSight decode session (decoders/coresight/cs_session.c) on juno_r1_1's ETB: offsets follow the
 * base offset a block is fed with, a 4x FSYNC frame resets every decoder, bad set-ups are
 * refused with the ID named; with --jobs (tc_cs_session_par) every record comes back field
 * for field, in the one-thread order, notes among them. The comparison with OpenCSD itself
 * is tests/e2e/t30. */
#include <pthread.h>
#include <stdint.h>

#include "decoders/coresight/cs_session.h"
#include "decoders/coresight/cs_snapshot.h"
#include "lib/perfdata/snapshot.h"
#include "lib/util/diag.h"
#include "tests/unit/tc_test.h"

struct got {
	uint64_t n, nosync_reset, first_reset_off;
	uint64_t sum_off;	/* offsets summed: cheap fingerprint of where records are */
	uint64_t packets, ranges;
	uint64_t base, low;
};

static void on_rec(void *ctx, const struct tc_rec *r)
{
	struct got *g = ctx;

	g->n++;
	/* An ID that never had data ends at index 0, as in OpenCSD's own listing. */
	if (r->type == TC_REC_EOT)
		return;
	g->sum_off += r->offset;
	if (r->offset < g->base && !g->low++)
		printf("#   %s record at offset %llu, before the base\n", tc_rec_type_name(r->type),
		       (unsigned long long)r->offset);
	g->packets += r->type == TC_REC_PACKET;
	g->ranges += r->type == TC_REC_RANGE;
	if (r->type == TC_REC_NO_SYNC && r->text && !strcmp(r->text, "reset-decoder") &&
	    !g->nosync_reset++)
		g->first_reset_off = r->offset;
}

static uint8_t *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = malloc(1 << 20);

	if (!f || !b)
		abort();
	*len = fread(b, 1, 1 << 20, f);
	fclose(f);
	return b;
}

/* A session with every ETM of juno_r1_1 (packets and elements, no memory). */
static struct tc_cs_snapshot_mem *mem;	/* the snapshot's dumps */

static size_t read_mem(void *ctx, const struct tc_etm_mem_ctx *m, uint64_t addr, uint8_t *buf,
		       size_t len)
{
	(void)ctx;
	return tc_cs_snapshot_mem_read(mem, m, addr, buf, len);
}

static struct tc_cs_session *juno(const struct tc_snapshot *ss, struct got *g)
{
	struct tc_err e;
	struct tc_cs_session *s =
		tc_cs_session_new(TC_ETM_PACKETS | TC_ETM_ELEMENTS, on_rec, read_mem, g, &e);
	const struct tc_snapshot_buffer *b = tc_snapshot_buffer(ss, "ETB_0");

	if (!s || !b)
		abort();
	for (size_t i = 0; i < b->nsources; i++) {
		struct tc_etm_cfg cfg;

		CHECK_INT(tc_cs_snapshot_cfg(ss, tc_snapshot_device(ss, b->sources[i]), &cfg, &e),
			  0);
		CHECK_INT(tc_cs_session_add_source(s, &cfg, &e), 0);
	}
	return s;
}

TEST(offsets_follow_the_base_and_4x_fsync_resets)
{
	const char *td = tc_testdata();
	char path[4096];
	struct tc_snapshot *ss;
	struct tc_err e;
	struct tc_diag notes = { 0 };
	struct got a = { 0 }, b = { .base = 0x100000 }, c = { 0 };
	struct tc_cs_session *s;
	uint8_t *buf, *ins;
	size_t len;
	const size_t cut = 32768;	/* a frame boundary in the middle */

	if (!td)
		SKIP("no ../shared/testdata");
	snprintf(path, sizeof(path), "%s/opencsd/juno_r1_1", td);
	CHECK_INT(tc_snapshot_open(&ss, path, &e), 0);
	snprintf(path, sizeof(path), "%s/opencsd/juno_r1_1/cstrace.bin", td);
	buf = load(path, &len);
	CHECK_INT(len, 65536);
	mem = tc_cs_snapshot_mem_open(ss, &notes, &e);
	CHECK(mem != NULL);
	CHECK_INT(notes.n, 0);
	tc_diag_free(&notes);

	s = juno(ss, &a);
	tc_cs_session_feed(s, buf, len, 0, TC_CS_SESSION_FRAMED);
	tc_cs_session_flush(s);
	/* As trc_pkt_lister counts them for this buffer (t30 compares them one by one). */
	CHECK_INT(a.packets, 31464);
	CHECK_INT(a.ranges, 6733);
	CHECK_INT(tc_cs_session_stats(s, 0x10)->packets, 29451);
	CHECK(tc_cs_session_stats(s, 0x16) == NULL);
	CHECK_INT(tc_cs_session_id_bytes(s, 0x10), 55273);
	CHECK_INT(tc_cs_session_errors(s), 0);
	CHECK_INT(tc_cs_session_demux_stats(s)->resets, 0);
	CHECK_INT(tc_cs_session_add_source(s, &(struct tc_etm_cfg){ .proto = TC_ETM_PROTO_ETMV4,
							     .trace_id = 0x10 }, &e), -1);
	CHECK(strstr(e.msg, "trace ID 0x10") != NULL);
	tc_cs_session_free(s);

	/* The same bytes at file offset 0x100000: every record moves by that much. */
	s = juno(ss, &b);
	tc_cs_session_feed(s, buf, len, 0x100000, TC_CS_SESSION_FRAMED);
	tc_cs_session_flush(s);
	CHECK_INT(b.n, a.n);	/* 6 of them EOT, one per ID */
	CHECK_INT(b.low, 0);
	CHECK(b.sum_off == a.sum_off + (a.n - 6) * 0x100000ull);
	tc_cs_session_free(s);

	/* A 4x FSYNC frame between two halves: all decoders reset there. */
	ins = malloc(len + 16);
	memcpy(ins, buf, cut);
	memset(ins + cut, 0xff, 16);
	for (int i = 3; i < 16; i += 4)
		ins[cut + i] = 0x7f;
	memcpy(ins + cut + 16, buf + cut, len - cut);
	s = juno(ss, &c);
	tc_cs_session_feed(s, ins, len + 16, 0, TC_CS_SESSION_FRAMED);
	tc_cs_session_flush(s);
	CHECK_INT(tc_cs_session_demux_stats(s)->resets, 1);
	CHECK(c.nosync_reset >= 1);
	CHECK(c.first_reset_off >= cut);
	tc_cs_session_free(s);
	free(ins);

	/* RAW with no source: counted nowhere, no crash. */
	s = tc_cs_session_new(TC_ETM_PACKETS, on_rec, NULL, &c, &e);
	tc_cs_session_feed(s, buf, 64, 0, TC_CS_SESSION_RAW);
	tc_cs_session_free(s);
	free(buf);
	tc_cs_snapshot_mem_free(mem);
	tc_snapshot_free(ss);
}

TEST(configs_from_snapshot_devices)
{
	const char *td = tc_testdata();
	char path[4096];
	struct tc_snapshot *ss;
	struct tc_err e;
	struct tc_etm_cfg cfg;

	if (!td)
		SKIP("no ../shared/testdata");
	snprintf(path, sizeof(path), "%s/opencsd/TC2", td);
	CHECK_INT(tc_snapshot_open(&ss, path, &e), 0);
	CHECK_INT(tc_cs_snapshot_cfg(ss, tc_snapshot_device(ss, "ETM_0"), &cfg, &e), 0);
	CHECK_INT(cfg.proto, TC_ETM_PROTO_ETMV3);
	CHECK_INT(cfg.trace_id, 0x10);
	CHECK_INT(cfg.arch, TC_ETM_ARCH_V7);
	CHECK_INT(cfg.cpu, 0);
	CHECK_INT(tc_cs_snapshot_cfg(ss, tc_snapshot_device(ss, "PTM_0"), &cfg, &e), 0);
	CHECK_INT(cfg.proto, TC_ETM_PROTO_PTM);
	CHECK_INT(cfg.trace_id, 0x13);
	/* The ITM has no decoder in OpenCSD 1.3.3. */
	CHECK_INT(tc_cs_snapshot_cfg(ss, tc_snapshot_device(ss, "ITM_0"), &cfg, &e), -1);
	CHECK(strstr(e.msg, "ITM") != NULL);
	tc_snapshot_free(ss);

	snprintf(path, sizeof(path), "%s/opencsd/juno_r1_1", td);
	CHECK_INT(tc_snapshot_open(&ss, path, &e), 0);
	CHECK_INT(tc_cs_snapshot_cfg(ss, tc_snapshot_device(ss, "STM_12"), &cfg, &e), 0);
	CHECK_INT(cfg.proto, TC_ETM_PROTO_STM);
	CHECK_INT(cfg.trace_id, 0x20);
	CHECK_INT(tc_cs_snapshot_cfg(ss, tc_snapshot_device(ss, "ETM_4"), &cfg, &e), 0);
	CHECK_INT(cfg.trace_id, 0x14);
	CHECK_INT(cfg.cpu, 4);
	CHECK_INT(cfg.arch, TC_ETM_ARCH_V8);	/* Cortex-A57 */
	tc_snapshot_free(ss);
}

/* ---- --jobs: the records a lane hands the caller's thread (its two codecs mixed) ---- */

/* Every field of every record, and the notes among them, in order: a running hash. */
struct seq {
	uint64_t h, n, notes, ranges;
};

static void fold(struct seq *q, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		q->h = (q->h ^ b[i]) * 0x100000001b3ull;
}

static void fold_str(struct seq *q, const char *s)
{
	fold(q, s ? "S" : "N", 1);
	if (s)
		fold(q, s, strlen(s) + 1);
}

static void seq_rec(void *ctx, const struct tc_rec *r)
{
	struct seq *q = ctx;
	uint64_t v[] = { (uint64_t)r->type, (uint64_t)r->id, (uint64_t)r->cpu, (uint64_t)r->pid,
			 (uint64_t)r->tid, r->offset, r->start, r->end, r->insns,
			 (uint64_t)r->isa, (uint64_t)r->last, r->last_type, r->last_size,
			 r->last_taken, r->value, r->has_time, r->time, r->nfields,
			 r->fields != NULL };

	q->n++;
	q->ranges += r->type == TC_REC_RANGE;
	fold(q, v, sizeof(v));
	fold_str(q, r->name);
	fold_str(q, r->text);
}

static void seq_note(void *ctx, const char *text)
{
	struct seq *q = ctx;

	q->notes++;
	fold(q, "note", 4);
	fold_str(q, text);
}

/* Memory for the sessions below: some reads make a note (as a missing image does in
 * cs_perf.c), handed back in order with --jobs, folded in at once without. */
static pthread_mutex_t mem_mu = PTHREAD_MUTEX_INITIALIZER;
static struct seq *mem_seq;	/* one thread: where its notes go; NULL with --jobs */

static size_t read_mem_noting(void *ctx, const struct tc_etm_mem_ctx *m, uint64_t addr,
			      uint8_t *buf, size_t len)
{
	char text[64];
	size_t n;

	(void)ctx;
	pthread_mutex_lock(&mem_mu);	/* the snapshot's dumps count their reads */
	n = tc_cs_snapshot_mem_read(mem, m, addr, buf, len);
	pthread_mutex_unlock(&mem_mu);
	if ((addr & 0x3c0) == 0x140) {
		snprintf(text, sizeof(text), "read 0x%llx by 0x%02x", (unsigned long long)addr,
			 m->trace_id);
		if (mem_seq)
			seq_note(mem_seq, text);
		else
			tc_cs_session_par_note(text);
	}
	return n;
}

/* A snapshot's ETB decoded with what, on jobs threads (1: no parallel context). */
static struct seq decode_etb(const struct tc_snapshot *ss, const uint8_t *buf, size_t len,
			      unsigned what, unsigned jobs)
{
	struct seq q = { .h = 0xcbf29ce484222325ull };
	struct tc_cs_session_par *p = NULL;
	struct tc_err e;
	struct tc_cs_session *s =
		tc_cs_session_new(what, seq_rec, read_mem_noting, &q, &e);
	const struct tc_snapshot_buffer *b = tc_snapshot_buffer(ss, "ETB_0");

	if (!s || !b)
		abort();
	mem_seq = jobs > 1 ? NULL : &q;
	if (jobs > 1) {
		p = tc_cs_session_par_new(jobs, seq_rec, NULL, seq_note, &q);
		if (!p)
			abort();
		tc_cs_session_use_par(s, p);
	}
	for (size_t i = 0; i < b->nsources; i++) {
		struct tc_etm_cfg cfg;

		CHECK_INT(tc_cs_snapshot_cfg(ss, tc_snapshot_device(ss, b->sources[i]), &cfg, &e),
			  0);
		CHECK_INT(tc_cs_session_add_source(s, &cfg, &e), 0);
	}
	/* in pieces, a reset between two: steps of every kind, records of every ID */
	for (size_t at = 0; at < len; at += 4096) {
		tc_cs_session_feed(s, buf + at, len - at < 4096 ? len - at : 4096, at,
				   TC_CS_SESSION_FRAMED);
		if (at == 8 * 4096)
			tc_cs_session_reset(s, at + 4096);
	}
	tc_cs_session_flush(s);
	CHECK_INT(tc_cs_session_par_drain(p), 0);
	tc_cs_session_par_free(p);	/* first: its threads use the session */
	tc_cs_session_free(s);
	return q;
}

/* juno_r1_1: ETMv4, ranges after ranges (most sent in short), packets between them
 * (named); Snowball: PTM, timestamps after timestamps (records alike but for their value). */
TEST(jobs_give_every_record_field_for_field)
{
	const char *td = tc_testdata();
	static const char *const snaps[] = { "juno_r1_1", "Snowball" };
	/* by the fast decoders (ETMv4: lanes decode at once) and by OpenCSD's (its lock) */
	static const unsigned whats[] = { TC_ETM_ELEMENTS, TC_ETM_PACKETS | TC_ETM_ELEMENTS,
					  TC_ETM_ELEMENTS | TC_ETM_REFERENCE,
					  TC_ETM_PACKETS | TC_ETM_ELEMENTS | TC_ETM_REFERENCE };

	if (!td)
		SKIP("no ../shared/testdata");
	for (size_t sn = 0; sn < sizeof(snaps) / sizeof(snaps[0]); sn++) {
		char path[4096];
		struct tc_snapshot *ss;
		struct tc_err e;
		struct tc_diag notes = { 0 };
		uint8_t *buf;
		size_t len;

		snprintf(path, sizeof(path), "%s/opencsd/%s", td, snaps[sn]);
		CHECK_INT(tc_snapshot_open(&ss, path, &e), 0);
		snprintf(path, sizeof(path), "%s/opencsd/%s/cstrace.bin", td, snaps[sn]);
		buf = load(path, &len);
		mem = tc_cs_snapshot_mem_open(ss, &notes, &e);
		CHECK(mem != NULL);
		tc_diag_free(&notes);
		for (size_t w = 0; w < sizeof(whats) / sizeof(whats[0]); w++) {
			struct seq one = decode_etb(ss, buf, len, whats[w], 1);

			CHECK(one.ranges > 1000);
			CHECK(one.notes > 10);
			for (unsigned jobs = 2; jobs <= 4; jobs += 2) {
				struct seq par = decode_etb(ss, buf, len, whats[w], jobs);

				if (par.h != one.h || par.n != one.n || par.notes != one.notes)
					printf("#   %s, what 0x%x, %u jobs: %llu records %llu notes,"
					       " one thread %llu and %llu\n", snaps[sn], whats[w],
					       jobs, (unsigned long long)par.n,
					       (unsigned long long)par.notes,
					       (unsigned long long)one.n,
					       (unsigned long long)one.notes);
				CHECK(par.h == one.h);
				CHECK_INT(par.n, one.n);
				CHECK_INT(par.notes, one.notes);
			}
		}
		free(buf);
		tc_cs_snapshot_mem_free(mem);
		tc_snapshot_free(ss);
	}
}
