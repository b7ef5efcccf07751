/* CoreSight decode session (decoders/coresight/cs_session.c) on juno_r1_1's ETB: offsets follow the
 * base offset a block is fed with, a 4x FSYNC frame resets every decoder, bad set-ups are
 * refused with the ID named. The comparison with OpenCSD itself is tests/e2e/t30. */
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
