/* The fast ETMv4 decoder (decoders/coresight/etm4_walk.c) and its A64 facts (lib/isa/a64.c):
 * waypoint classes as the architecture encodes them; on juno_r1_1's ETB (6 ETMv4 sources
 * with the snapshot's memory dumps), the fast decoder is the one used, hits its block cache,
 * and gives the records OpenCSD's full decoder gives, one for one, also after a 4x FSYNC
 * reset in the middle. Every output form over every file: tests/e2e/t74. */
#include <stdint.h>
#include <stdlib.h>

#include "decoders/coresight/cs_session.h"
#include "decoders/coresight/cs_snapshot.h"
#include "lib/isa/a64.h"
#include "lib/perfdata/snapshot.h"
#include "lib/util/diag.h"
#include "tests/unit/tc_test.h"

TEST(a64_waypoints)
{
	struct tc_a64_wp_info w;

	tc_a64_waypoint(0x97fffcc8, 0x400f90, 0, &w);	/* bl 4002b0 */
	CHECK_INT(w.wp, TC_A64_WP_DIRECT);
	CHECK_INT(w.link, 1);
	CHECK_INT(w.sub, TC_A64_SUB_LINK);
	CHECK(w.target == 0x4002b0);
	tc_a64_waypoint(0x54ffffa1, 0x1000, 0, &w);	/* b.ne -0xc */
	CHECK_INT(w.wp, TC_A64_WP_DIRECT);
	CHECK_INT(w.cond, 1);
	CHECK(w.target == 0xff4);
	tc_a64_waypoint(0x37080040, 0x1000, 0, &w);	/* tbnz w0, #1, +8 */
	CHECK(w.wp == TC_A64_WP_DIRECT && w.target == 0x1008);
	tc_a64_waypoint(0xb4000040, 0x1000, 0, &w);	/* cbz x0, +8 */
	CHECK(w.wp == TC_A64_WP_DIRECT && w.target == 0x1008 && !w.link);
	tc_a64_waypoint(0xd63f0060, 0, 0, &w);		/* blr x3 */
	CHECK(w.wp == TC_A64_WP_INDIRECT && w.link && w.sub == TC_A64_SUB_LINK);
	tc_a64_waypoint(0xd65f03c0, 0, 0, &w);		/* ret */
	CHECK(w.wp == TC_A64_WP_INDIRECT && w.sub == TC_A64_SUB_RET && !w.link);
	tc_a64_waypoint(0xd69f03e0, 0, 0, &w);		/* eret */
	CHECK(w.wp == TC_A64_WP_INDIRECT && w.sub == TC_A64_SUB_ERET);
	tc_a64_waypoint(0xd65f0bff, 0, 0, &w);		/* retaa: a waypoint from v8.3 */
	CHECK_INT(w.wp, TC_A64_WP_NONE);
	tc_a64_waypoint(0xd65f0bff, 0, TC_A64_F_V8_3, &w);
	CHECK(w.wp == TC_A64_WP_INDIRECT && w.sub == TC_A64_SUB_RET);
	tc_a64_waypoint(0xd63f081f, 0, TC_A64_F_V8_3, &w);	/* blraaz x0 */
	CHECK(w.wp == TC_A64_WP_INDIRECT && w.link);
	tc_a64_waypoint(0xd5033fdf, 0, 0, &w);		/* isb */
	CHECK_INT(w.wp, TC_A64_WP_ISB);
	tc_a64_waypoint(0xd5033f9f, 0, 0, &w);		/* dsb sy: not unless asked */
	CHECK_INT(w.wp, TC_A64_WP_NONE);
	tc_a64_waypoint(0xd5033f9f, 0, TC_A64_F_DSB_DMB, &w);
	CHECK_INT(w.wp, TC_A64_WP_DSB_DMB);
	tc_a64_waypoint(0xd503207f, 0, 0, &w);		/* wfi */
	CHECK_INT(w.wp, TC_A64_WP_NONE);
	tc_a64_waypoint(0xd503207f, 0, TC_A64_F_WFI_WFE, &w);
	CHECK_INT(w.wp, TC_A64_WP_WFI_WFE);
	tc_a64_waypoint(0xd5233060, 0, TC_A64_F_AA64, &w);	/* tstart x0 */
	CHECK_INT(w.wp, TC_A64_WP_TSTART);
	tc_a64_waypoint(0xd503201f, 0, ~0u, &w);	/* nop */
	CHECK_INT(w.wp, TC_A64_WP_NONE);
	tc_a64_waypoint(0x17ffffff, 0x1000, 0, &w);	/* b -4 */
	CHECK(w.wp == TC_A64_WP_DIRECT && w.target == 0xffc && !w.link);
}

/* Every record as a line, to compare two runs. */
struct out {
	char *buf;
	size_t len, cap;
	uint64_t ranges;
};

static void on_rec(void *ctx, const struct tc_rec *r)
{
	struct out *o = ctx;
	char line[512];
	int n = snprintf(line, sizeof(line), "%d %d %llx %llx %llx %u %d %c %u %u %llx %s %s\n",
			 (int)r->type, r->id, (unsigned long long)r->offset,
			 (unsigned long long)r->start, (unsigned long long)r->end, r->insns,
			 (int)r->isa, r->last ? r->last : '-', r->last_type, r->last_size,
			 (unsigned long long)r->value, r->name ? r->name : "-",
			 r->text ? r->text : "-");

	if (o->len + (size_t)n > o->cap) {
		o->cap = (o->cap + (size_t)n) * 2;
		o->buf = realloc(o->buf, o->cap);
		if (!o->buf)
			abort();
	}
	memcpy(o->buf + o->len, line, (size_t)n);
	o->len += (size_t)n;
	o->ranges += r->type == TC_REC_RANGE;
}

static struct tc_cs_snapshot_mem *mem;

/* buf to s, reset at cut (len: none), then flushed. */
static void feed_cut(struct tc_cs_session *s, const uint8_t *buf, size_t len, size_t cut,
		     enum tc_cs_session_format fmt)
{
	tc_cs_session_feed(s, buf, cut, 0, fmt);
	if (cut < len) {
		tc_cs_session_reset(s, cut);
		tc_cs_session_feed(s, buf + cut, len - cut, cut, fmt);
	}
	tc_cs_session_flush(s);
}

static size_t read_mem(void *ctx, const struct tc_etm_mem_ctx *m, uint64_t addr, uint8_t *buf,
		       size_t len)
{
	(void)ctx;
	return tc_cs_snapshot_mem_read(mem, m, addr, buf, len);
}

static void decode(const struct tc_snapshot *ss, unsigned what, const uint8_t *buf, size_t len,
		   size_t cut, struct out *o, bool *fast, uint64_t *hits)
{
	struct tc_err e;
	struct tc_cs_session *s = tc_cs_session_new(what, on_rec, read_mem, o, &e);
	const struct tc_snapshot_buffer *b = tc_snapshot_buffer(ss, "ETB_0");

	if (!s || !b)
		abort();
	for (size_t i = 0; i < b->nsources; i++) {
		struct tc_etm_cfg cfg;

		CHECK_INT(tc_cs_snapshot_cfg(ss, tc_snapshot_device(ss, b->sources[i]), &cfg, &e),
			  0);
		CHECK_INT(tc_cs_session_add_source(s, &cfg, &e), 0);
	}
	feed_cut(s, buf, len, cut, TC_CS_SESSION_FRAMED);
	*fast = tc_cs_session_stats(s, 0x10)->fast;
	*hits = tc_cs_session_stats(s, 0x10)->block_hits;
	CHECK_INT(tc_cs_session_stats(s, 0x10)->unmodelled, 0);
	tc_cs_session_free(s);
}

TEST(juno_fast_equals_reference)
{
	const char *td = tc_testdata();
	char path[4096];
	struct tc_snapshot *ss;
	struct tc_err e;
	struct tc_diag notes = { 0 };
	uint8_t *buf = malloc(1 << 20);
	size_t len;
	FILE *f;

	if (!td) {
		free(buf);
		SKIP("no ../shared/testdata");
	}
	snprintf(path, sizeof(path), "%s/opencsd/juno_r1_1", td);
	CHECK_INT(tc_snapshot_open(&ss, path, &e), 0);
	snprintf(path, sizeof(path), "%s/opencsd/juno_r1_1/cstrace.bin", td);
	f = fopen(path, "rb");
	CHECK(f != NULL);
	len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	mem = tc_cs_snapshot_mem_open(ss, &notes, &e);
	CHECK(mem != NULL);
	tc_diag_free(&notes);
	/* whole, then cut at a frame boundary with a reset there */
	for (int k = 0; k < 2; k++) {
		size_t cut = k ? 32768 : len;
		struct out fast = { 0 }, ref = { 0 };
		bool is_fast, ref_fast;
		uint64_t hits, ref_hits;

		decode(ss, TC_ETM_ELEMENTS, buf, len, cut, &fast, &is_fast, &hits);
		decode(ss, TC_ETM_ELEMENTS | TC_ETM_REFERENCE, buf, len, cut, &ref, &ref_fast,
		       &ref_hits);
		CHECK(is_fast);
		CHECK(!ref_fast);
		CHECK(hits > 1000);
		CHECK_INT(ref_hits, 0);
		CHECK(fast.ranges > 6000);
		CHECK_INT(fast.len, ref.len);
		CHECK(fast.len == ref.len && !memcmp(fast.buf, ref.buf, fast.len));
		free(fast.buf);
		free(ref.buf);
	}
	free(buf);
	tc_cs_snapshot_mem_free(mem);
	tc_snapshot_free(ss);
}

/* ---- hand-made ETMv4 trace: a Cortex-A53's ID registers, MAXSPEC 0 (each P0 element
 * commits when it is complete), A64 NOPs everywhere ---- */

static size_t nops(void *ctx, const struct tc_etm_mem_ctx *m, uint64_t addr, uint8_t *buf,
		   size_t len)
{
	static const uint8_t nop[4] = { 0x1f, 0x20, 0x03, 0xd5 };

	(void)ctx, (void)m;
	for (size_t i = 0; i < len; i++)
		buf[i] = nop[(addr + i) & 3];
	return len;
}

/* The source decode_raw() decodes; tests change fields and put it back. */
static const struct tc_etm_cfg a53 = { .proto = TC_ETM_PROTO_ETMV4, .trace_id = 0x10,
				       .arch = TC_ETM_ARCH_AA64, .profile = TC_ETM_PROFILE_A,
				       .trcidr0 = 0x28000ea1, .trcidr1 = 0x4100f403,
				       .trcidr2 = 0x00000488, .trcidr8 = 0, .trcconfigr = 0xc1,
				       .trctraceidr = 0x10, .trcdevarch = 0x47704a13 };
static struct tc_etm_cfg src = a53;

/* Decode trace (raw, trace ID 0x10, source src) into o; the decoder's count of places where
 * OpenCSD would read members it never set. Fast unless asked for the reference or src is
 * one the fast decoder leaves to it (ETE, Q elements). */
static uint64_t decode_raw(unsigned what, const uint8_t *trace, size_t len, struct out *o)
{
	struct tc_err e;
	struct tc_cs_session *s = tc_cs_session_new(what, on_rec, nops, o, &e);
	bool ref = (what & TC_ETM_REFERENCE) || src.proto == TC_ETM_PROTO_ETE ||
		   ((src.trcconfigr >> 13) & 3);
	uint64_t undefined;

	if (!s)
		abort();
	CHECK_INT(tc_cs_session_add_source(s, &src, &e), 0);
	tc_cs_session_feed(s, trace, len, 0, TC_CS_SESSION_RAW);
	tc_cs_session_flush(s);
	CHECK(tc_cs_session_stats(s, 0x10)->fast == !ref);
	CHECK_INT(tc_cs_session_stats(s, 0x10)->unmodelled, 0);
	undefined = tc_cs_session_stats(s, 0x10)->ref_undefined;
	tc_cs_session_free(s);
	return undefined;
}

#define ASYNC 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80
#define TINFO 0x01, 0x00		/* TRACE_INFO, no sections */

/* Decode trace with the fast decoder and with OpenCSD's (the reference): the same records;
 * the fast one's as a text (the caller frees it). */
static char *both(const uint8_t *trace, size_t len)
{
	struct out fast = { 0 }, ref = { 0 };

	CHECK_INT(decode_raw(TC_ETM_ELEMENTS, trace, len, &fast), 0);
	CHECK_INT(decode_raw(TC_ETM_ELEMENTS | TC_ETM_REFERENCE, trace, len, &ref), 0);
	CHECK_INT(fast.len, ref.len);
	CHECK(fast.len == ref.len && !memcmp(fast.buf, ref.buf, fast.len));
	free(ref.buf);
	fast.buf = realloc(fast.buf, fast.len + 1);
	if (!fast.buf)
		abort();
	fast.buf[fast.len] = 0;
	return fast.buf;
}

/* OpenCSD 1.3.3 never initialises its decoder's instruction address and ISA, and no reset
 * sets them; an exception committed before the decoder ever had an address walks from them
 * to its return address (under ASan: from 0xbebebebebebebebe, ISA 0xbebebebe, and the
 * instruction decoder's error is a fatal response; without, from heap garbage: with code
 * everywhere a walk that may not end; fuzz_etm_diff found it,
 * tests/fuzz/repro/etm_diff-differs-1). The guard (etm4_guard.h) names that commit's packet:
 * both decoders skip it and resynchronise, with the same records. So does an exception at
 * the last branch target with neither context nor IS bit before the decoder had an ISA
 * (it reads the ISA). Where an address came first (also before a reset) both walk. */
TEST(exception_before_any_address_is_a_hazard)
{
	/* exception type 4, then a short address (IS0) 0: at MAXSPEC 0 the address commits
	 * the exception; then a new sync, an address and an A64 context (0x85: 64-bit address
	 * 0x10000, EL0, NS, SF), and an exception returning to 0x10020 (a long address): the
	 * decoder had an address now */
	static const uint8_t first[] = { ASYNC, TINFO, 0x06, 0x08, 0x95, 0x00,
					 ASYNC, TINFO, 0x85, 0, 0, 1, 0, 0, 0, 0, 0, 0x30,
					 0x06, 0x08, 0x9d, 0x08, 0, 1, 0, 0, 0, 0, 0 };
	/* exception type 4 "address same as the last branch target": reads the ISA */
	static const uint8_t same[] = { ASYNC, TINFO, 0x06, 0x48, 0x95, 0x00 };
	/* the same with a context */
	static const uint8_t same_ctx[] = { ASYNC, TINFO, 0x06, 0x48,
					    0x85, 0, 0, 1, 0, 0, 0, 0, 0, 0x30 };
	/* an address and a context, then the exception, returning to 0x10010: 4
	 * instructions from the last address; then a reserved header (0x08: the decoder
	 * resets), a new sync and an exception returning to 0x10020 (a long address):
	 * walked from 0x10010 */
	static const uint8_t after[] = { ASYNC, TINFO, 0x85, 0, 0, 1, 0, 0, 0, 0, 0, 0x30,
					 0x06, 0x08, 0x95, 0x04, 0x08,
					 ASYNC, TINFO, 0x06, 0x08, 0x9d, 0x08, 0, 1, 0, 0, 0, 0, 0 };
	char *t;

	t = both(first, sizeof(first));
	/* at the address packet (offset 16): an error, the decoder reset */
	CHECK(strstr(t, "\n11 16 10 0 0 0 0 - 0 0 0 - a commit of an exception before the "
			"decoder had any address: packet skipped, decoder resynchronised\n"
			"7 16 10 0 0 0 0 - 0 0 0 - reset-decoder\n") != NULL);
	CHECK(strstr(t, "\n4 16 e ") == NULL);		/* not the first exception */
	CHECK(strstr(t, "\n0 16 2a 10000 10020 8 ") != NULL);	/* the second one's walk */
	CHECK(strstr(t, "\n4 16 2a 10020 ") != NULL);
	free(t);
	t = both(same, sizeof(same));
	CHECK(strstr(t, "before the decoder had any instruction set: packet skipped") != NULL);
	free(t);
	t = both(same_ctx, sizeof(same_ctx));
	CHECK(strstr(t, "before the decoder") == NULL);
	CHECK(strstr(t, "\n4 16 e 10000 0 0 ") != NULL);	/* the exception */
	free(t);
	t = both(after, sizeof(after));
	CHECK(strstr(t, "before the decoder") == NULL);
	CHECK(strstr(t, "\n0 16 18 10000 10010 4 ") != NULL);	/* walked, then */
	CHECK(strstr(t, "\n0 16 2b 10010 10020 4 ") != NULL);	/* after the reset */
	free(t);
}

/* OpenCSD 1.3.3 declares m_unseen_spec_elem ("speculative elements at decode start") and
 * never sets it: a cancel of more elements than its stack holds counts the rest off it, and
 * a mispredict that finds no atom reads it to choose between its error and going on (heap
 * garbage decides; under ASan 0xbebebebe: on). The guard names both packets; both decoders
 * skip them and resynchronise, with the same records (fuzz_etm_diff compared no such input
 * before). A mispredict with an atom on the stack, and a cancel within it, decode. */
TEST(cancel_or_mispredict_beyond_the_stack_is_a_hazard)
{
	/* an address and a context (not P0: a cancel drops them), then Cancel format 1 of
	 * one element (offset 24); then a new sync, the address and context again and an
	 * exception (offset 50) returning to 0x10020 (a long address): walked from 0x10000 */
	static const uint8_t cancel[] = { ASYNC, TINFO, 0x85, 0, 0, 1, 0, 0, 0, 0, 0, 0x30,
					  0x2e, 0x01,
					  ASYNC, TINFO, 0x85, 0, 0, 1, 0, 0, 0, 0, 0, 0x30,
					  0x06, 0x08, 0x9d, 0x08, 0, 1, 0, 0, 0, 0, 0 };
	/* MAXSPEC 8: TRACE_INFO with a speculation depth of 2 (elements the decoder never
	 * saw), then a Mispredict (0x30, offset 15) */
	static const uint8_t unseen[] = { ASYNC, 0x01, 0x04, 0x02, 0x30 };
	/* MAXSPEC 8: an address, two E atoms, a Mispredict (the newest atom), a Cancel of
	 * one, an exception with its address: all within the stack (nothing commits: with
	 * NOPs everywhere an atom's walk would not end) */
	static const uint8_t within[] = { ASYNC, TINFO, 0x85, 0, 0, 1, 0, 0, 0, 0, 0, 0x30,
					  0xf7, 0xf7, 0x30, 0x2e, 0x01,
					  0x06, 0x08, 0x9d, 0x08, 0, 1, 0, 0, 0, 0, 0 };
	char *t;

	t = both(cancel, sizeof(cancel));
	CHECK(strstr(t, "\n11 16 18 0 0 0 0 - 0 0 0 - a cancel of more elements than are "
			"speculative: packet skipped, decoder resynchronised\n") != NULL);
	CHECK(strstr(t, "\n0 16 32 10000 10020 8 ") != NULL);	/* after the next sync */
	free(t);
	src.trcidr8 = 8;
	t = both(unseen, sizeof(unseen));
	CHECK(strstr(t, "\n11 16 f 0 0 0 0 - 0 0 0 - a mispredict with no speculative atom "
			"to mispredict: packet skipped") != NULL);
	free(t);
	t = both(within, sizeof(within));
	CHECK(strstr(t, "speculative") == NULL);
	CHECK(strstr(t, "\n11 ") == NULL);		/* no error at all */
	free(t);
	src = a53;
}

/* Q elements (TRCIDR0.QSUPP, TRCCONFIGR.QE: OpenCSD's decoder, never the fast one).
 * processQElement() walks a Q's instruction count from the decoder's instruction address,
 * which OpenCSD 1.3.3 never initialises: before the decoder ever had an address the guard
 * names the commit; after one, the count walks. A Q without its own address (its address
 * packet after it) is one whatever came before: 1.3.3 deletes the popped Q element with its
 * address and then reads its count and index from the freed memory (here the range's
 * offset came out as heap garbage; under ASan, heap-use-after-free). */
TEST(q_element_before_any_address_is_a_hazard)
{
	/* Q with a short address (IS0) and a count of 4 (offset 14): MAXSPEC 0 commits it */
	static const uint8_t qaddr[] = { ASYNC, TINFO, 0xa5, 0x04, 0x04 };
	/* an address 0x10000 and a context, then that Q (offset 24): to 0x10010 */
	static const uint8_t after[] = { ASYNC, TINFO, 0x85, 0, 0, 1, 0, 0, 0, 0, 0, 0x30,
					 0xa5, 0x04, 0x04 };
	/* the address and context, a Q with a count of 4 and no address (offset 24), then
	 * an address 0x10010 (offset 26) */
	static const uint8_t qnoaddr[] = { ASYNC, TINFO, 0x85, 0, 0, 1, 0, 0, 0, 0, 0, 0x30,
					   0xac, 0x04, 0x9d, 0x04, 0, 1, 0, 0, 0, 0, 0 };
	/* MAXSPEC 8: the address and context, that Q, two E atoms in one packet (0xdb), a
	 * Commit of one (the Q, offset 28): 1.3.3's commit then pops the next oldest element
	 * too, the atoms, unwalked; so a Mispredict (offset 30) finds no atom */
	static const uint8_t popped[] = { ASYNC, TINFO, 0x85, 0, 0, 1, 0, 0, 0, 0, 0, 0x30,
					  0xa5, 0x04, 0x04, 0xdb, 0x2d, 0x01, 0x30 };
	/* a Q without count or address (offset 14), then an address (offset 15) */
	static const uint8_t nocount[] = { ASYNC, TINFO, 0xaf, 0x95, 0x08 };
	char *t;

	src.trcidr0 |= 0x18000;		/* QSUPP: Q elements with and without counts */
	src.trcconfigr |= 0x2000;	/* QE */
	t = both(qaddr, sizeof(qaddr));
	CHECK(strstr(t, "\n11 16 e 0 0 0 0 - 0 0 0 - a commit of a Q element before the "
			"decoder had any address: packet skipped, decoder resynchronised\n") != NULL);
	free(t);
	t = both(after, sizeof(after));
	CHECK(strstr(t, "Q element") == NULL);
	CHECK(strstr(t, "\n0 16 18 10000 10010 4 ") != NULL);	/* the Q's walk */
	free(t);
	t = both(qnoaddr, sizeof(qnoaddr));
	CHECK(strstr(t, "\n11 16 1a 0 0 0 0 - 0 0 0 - a commit of a Q element without its own "
			"address: packet skipped") != NULL);
	CHECK(strstr(t, "\n0 16 ") == NULL);		/* no walk */
	free(t);
	t = both(nocount, sizeof(nocount));
	CHECK(strstr(t, "\n11 16 f 0 0 0 0 - 0 0 0 - a commit of a Q element without its own "
			"address: packet skipped") != NULL);
	free(t);
	src.trcidr8 = 8;
	t = both(popped, sizeof(popped));
	CHECK(strstr(t, "\n0 16 18 10000 10010 4 ") != NULL);	/* the Q's walk */
	CHECK(strstr(t, "\n11 16 1e 0 0 0 0 - 0 0 0 - a mispredict with no speculative atom "
			"to mispredict: packet skipped") != NULL);
	free(t);
	src = a53;
}

/* ETE (OpenCSD's decoder: the ETMv4 one at architecture 5) sends a PE reset and a failed
 * transaction as exception packets of types 0 and 0x18 (PE_RESET, TRANS_FAIL). Neither takes
 * 1.3.3's exception path: its decoder has no case for PE_RESET ("Unknown packet type": a bad
 * packet and a reset), and TRANS_FAIL is a non-P0 memory transaction element. So what the
 * decoder set before stays known to the guard: an exception at the last branch target with
 * neither context nor IS bit after them, before any instruction set, is still named. */
TEST(ete_pe_reset_and_trans_fail_keep_the_guard_going)
{
	/* PE reset (offset 14); a new sync; the exception (31) and its address (33) */
	static const uint8_t reset[] = { ASYNC, TINFO, 0x06, 0x00, 0x00,
					 ASYNC, TINFO, 0x06, 0x48, 0x95, 0x00 };
	/* failed transaction (offset 14); the exception (17) and its address (19) */
	static const uint8_t fail[] = { ASYNC, TINFO, 0x06, 0x30, 0x00, 0x06, 0x48, 0x95, 0x00 };
	char *t;

	src.proto = TC_ETM_PROTO_ETE;
	src.trcdevarch = 0x47705a13;	/* ETE, architecture 5.0 */
	t = both(reset, sizeof(reset));
	CHECK(strstr(t, "\n11 16 21 0 0 0 0 - 0 0 0 - a commit of an exception before the "
			"decoder had any instruction set: packet skipped") != NULL);
	free(t);
	t = both(fail, sizeof(fail));
	CHECK(strstr(t, "\n11 16 13 0 0 0 0 - 0 0 0 - a commit of an exception before the "
			"decoder had any instruction set: packet skipped") != NULL);
	free(t);
	src = a53;
}

/* ---- the hand-over (etm_ocsd.h): where the fast decoder meets code that is not A64,
 * OpenCSD's decoder takes over ---- */

/* Reads of two_isas so far, and after how many its B at 0x20008 is a NOP (0: never). */
static uint64_t reads, reads_b;

/* A64 at 0x20000 (two NOPs, a B back to 0x20000), A32 at 0x10000 (ADD r0, r0, #1, a B back
 * to 0x10000), no memory elsewhere. */
static size_t two_isas(void *ctx, const struct tc_etm_mem_ctx *m, uint64_t addr, uint8_t *buf,
		       size_t len)
{
	static const uint32_t a64[3] = { 0xd503201f, 0xd503201f, 0x17fffffe };
	static const uint32_t a32[2] = { 0xe2800001, 0xeafffffd };
	bool nop = reads_b && ++reads > reads_b;
	size_t n;

	(void)ctx, (void)m;
	for (n = 0; n < len; n++) {
		uint64_t a = addr + n;
		uint32_t w;

		if (a >= 0x20000 && a < 0x2000c)
			w = nop && a >= 0x20008 ? a64[0] : a64[(a - 0x20000) / 4];
		else if (a >= 0x10000 && a < 0x10008)
			w = a32[(a - 0x10000) / 4];
		else
			break;
		buf[n] = (uint8_t)(w >> 8 * (a & 3));
	}
	return n;
}

struct taken {
	struct out o;
	uint64_t handovers, unmodelled;
};

/* trace (raw, source src) decoded with what on jobs threads, reset at cut (len: none). */
static void decode_isas(unsigned what, const uint8_t *trace, size_t len, size_t cut,
			unsigned jobs, struct taken *t)
{
	struct tc_err e;
	struct tc_cs_session_par *p = NULL;
	struct tc_cs_session *s = tc_cs_session_new(what, on_rec, two_isas, &t->o, &e);

	if (!s)
		abort();
	if (jobs > 1) {
		if (!(p = tc_cs_session_par_new(jobs, on_rec, NULL, NULL, &t->o)))
			abort();
		tc_cs_session_use_par(s, p);
	}
	CHECK_INT(tc_cs_session_add_source(s, &src, &e), 0);
	feed_cut(s, trace, len, cut, TC_CS_SESSION_RAW);
	CHECK_INT(tc_cs_session_par_drain(p), 0);
	tc_cs_session_par_free(p);
	t->handovers = tc_cs_session_stats(s, 0x10)->handovers;
	t->unmodelled = tc_cs_session_stats(s, 0x10)->unmodelled;
	tc_cs_session_free(s);
	if (!(t->o.buf = realloc(t->o.buf, t->o.len + 1)))
		abort();
	t->o.buf[t->o.len] = 0;
}

/* A64, then A32 (a context without SF), then A64: with the fast decoder the records are the
 * reference's, A32 ranges and all, with one thread and two, with a reset between (the
 * hand-over decodes from there, reset first) or not. Checked to fail with the hand-over
 * turned off (the fast decoder's error in place of the A32 ranges) and with the records
 * given not left out of the replay (the A64 ranges twice). */
TEST(code_not_a64_is_handed_over_to_opencsd)
{
	static const uint8_t trace[] = {
		ASYNC, TINFO, 0x85, 0, 0, 2, 0, 0, 0, 0, 0, 0x30,	/* A64 at 0x20000 */
		0xf7, 0xf7,						/* E, E */
		ASYNC, TINFO, 0x82, 0, 0, 1, 0, 0x20,		/* (offset 26) A32 at 0x10000 */
		0xf7, 0xf7, 0xf7,
		0x85, 0, 0, 2, 0, 0, 0, 0, 0, 0x30, 0xf7,		/* A64 again */
	};

	for (unsigned k = 0; k < 4; k++) {
		size_t cut = k & 1 ? 26 : sizeof(trace);
		unsigned jobs = k & 2 ? 2 : 1;
		struct taken fast = { 0 }, ref = { 0 };

		decode_isas(TC_ETM_ELEMENTS, trace, sizeof(trace), cut, jobs, &fast);
		decode_isas(TC_ETM_ELEMENTS | TC_ETM_REFERENCE, trace, sizeof(trace), cut, jobs,
			    &ref);
		CHECK_INT(fast.handovers, 1);
		CHECK_INT(fast.unmodelled, 0);
		CHECK_INT(ref.handovers, 0);
		CHECK_STR(fast.o.buf, ref.o.buf);
		/* A64 ranges (isa 1) at both ends, A32 ones (isa 2) between, no error */
		CHECK(strstr(fast.o.buf, "\n0 16 18 20000 2000c 3 1 ") != NULL);
		CHECK(strstr(fast.o.buf, "\n0 16 2e 10000 10008 2 2 ") != NULL);
		CHECK(strstr(fast.o.buf, "\n0 16 3b 20000 2000c 3 1 ") != NULL);
		CHECK(strstr(fast.o.buf, "\n11 ") == NULL);
		free(fast.o.buf);
		free(ref.o.buf);
	}
}

/* Past what is kept for a hand-over, the fast decoder says what it met, as before: an error
 * naming the reference decoder, counted. */
TEST(code_not_a64_past_what_is_kept_is_an_error)
{
	static const uint8_t tail[] = { ASYNC, TINFO, 0x82, 0, 0, 1, 0, 0x20, 0xf7 };
	size_t fill = (TC_ETM_OCSD_KEEP / 12 + 1) * 12, n = fill + sizeof(tail);
	uint8_t *trace = malloc(n);
	struct taken fast = { 0 };

	if (!trace)
		abort();
	for (size_t i = 0; i < fill; i += 12)	/* ASYNCs */
		memcpy(trace + i, tail, 12);
	memcpy(trace + fill, tail, sizeof(tail));
	decode_isas(TC_ETM_ELEMENTS, trace, n, n, 1, &fast);
	CHECK_INT(fast.handovers, 0);
	CHECK_INT(fast.unmodelled, 1);
	CHECK(strstr(fast.o.buf, "code that is not A64 (use --decoder=reference)") != NULL);
	free(fast.o.buf);
	free(trace);
}

/* The memory behind the callback changed between the fast decoder's reads and the
 * hand-over's (here after the A64 part's): OpenCSD's decoder, decoding the trace before
 * again, gives other records there; an error says so, and its records go on from where the
 * fast decoder's stopped. */
TEST(a_hand_over_that_reads_other_memory_says_so)
{
	static const uint8_t trace[] = {
		ASYNC, TINFO, 0x85, 0, 0, 2, 0, 0, 0, 0, 0, 0x30, 0xf7, 0xf7,
		0x82, 0, 0, 1, 0, 0x20, 0xf7,
	};
	struct taken first = { 0 }, fast = { 0 };

	/* OpenCSD's reads for the A64 part */
	reads_b = 1u << 30;
	reads = 0;
	decode_isas(TC_ETM_ELEMENTS | TC_ETM_REFERENCE, trace, 26, 26, 1, &first);
	CHECK(reads > 0);
	reads_b = reads;
	reads = 0;
	decode_isas(TC_ETM_ELEMENTS, trace, sizeof(trace), sizeof(trace), 1, &fast);
	reads_b = 0;
	CHECK_INT(fast.handovers, 1);
	CHECK(strstr(fast.o.buf, "\n0 16 19 20000 2000c 3 1 ") != NULL);	/* as it was */
	CHECK(strstr(fast.o.buf, "\n0 16 20 10000 10008 2 2 ") != NULL);	/* A32 */
	/* said where OpenCSD's own records begin: after what the fast decoder gave (to the
	 * A32 context) */
	CHECK(strstr(fast.o.buf, "\n3 16 1a 0 0 0 2 - 0 0 0 - -\n11 16 1a 0 0 0 0 - 0 0 0 "
				 "- OpenCSD's decoder, taking over") != NULL);
	free(first.o.buf);
	free(fast.o.buf);
}

/* OpenCSD's decoder keeps its elements' context ID across a reset: after one, a context
 * without an ID gives the old one. A new decoder would give none, so the hand-over is not
 * made (tc_etm4_walk_as_new): the fast decoder says what it met, where the reference shows
 * the old ID and the A32 range. Nor where such a context came before the A32 one with its
 * ID (fuzz_etm_diff found it: the new decoder's replay showed another ID there). */
TEST(no_hand_over_where_a_new_decoder_would_differ)
{
	static const uint8_t trace[] = {
		ASYNC, TINFO, 0x85, 0, 0, 2, 0, 0, 0, 0, 0, 0xb0, 0x2a, 0, 0, 0, /* ID 0x2a */
		0xf7,
		ASYNC, TINFO, 0x82, 0, 0, 1, 0, 0x20, 0xf7,	/* (offset 29) no ID */
	};
	static const uint8_t before_addr[] = {
		ASYNC, TINFO, 0x85, 0, 0, 2, 0, 0, 0, 0, 0, 0x30, 0xf7,	/* A64, E */
		ASYNC, TINFO, 0x06, 0x08, 0x95, 0x00,	/* (offset 25) exception, to 0 */
		0x82, 0, 0, 1, 0, 0x20, 0xf7,			/* A32 */
	};
	static const uint8_t shown[] = {
		ASYNC, TINFO, 0x85, 0, 0, 2, 0, 0, 0, 0, 0, 0xb0, 0x2a, 0, 0, 0, 0xf7,
		ASYNC, TINFO, 0x85, 0, 0, 2, 0, 0, 0, 0, 0, 0x30, 0xf7,	/* no ID: 0x2a */
		0x82, 0, 0, 1, 0, 0xa0, 0, 0, 0, 0, 0xf7,		/* A32, ID 0 */
	};
	struct taken fast = { 0 }, ref = { 0 };

	decode_isas(TC_ETM_ELEMENTS, trace, sizeof(trace), 29, 1, &fast);
	decode_isas(TC_ETM_ELEMENTS | TC_ETM_REFERENCE, trace, sizeof(trace), 29, 1, &ref);
	CHECK_INT(fast.handovers, 0);
	CHECK_INT(fast.unmodelled, 1);
	CHECK(strstr(fast.o.buf, "code that is not A64 (use --decoder=reference)") != NULL);
	CHECK(strstr(ref.o.buf, "\n3 16 2b 0 0 0 2 - 0 0 2a - -\n0 16 31 10000 10008 2 2 ") !=
	      NULL);
	free(fast.o.buf);
	free(ref.o.buf);
	memset(&fast, 0, sizeof(fast));
	memset(&ref, 0, sizeof(ref));
	decode_isas(TC_ETM_ELEMENTS, shown, sizeof(shown), 29, 1, &fast);
	decode_isas(TC_ETM_ELEMENTS | TC_ETM_REFERENCE, shown, sizeof(shown), 29, 1, &ref);
	CHECK_INT(fast.handovers, 0);
	CHECK_INT(fast.unmodelled, 1);
	CHECK(strstr(ref.o.buf, "\n3 16 2b 0 0 0 1 - 0 0 2a - -\n") != NULL);
	CHECK(strstr(ref.o.buf, " 10000 10008 2 2 ") != NULL);
	free(fast.o.buf);
	free(ref.o.buf);
	/* Nor where an exception after the reset, before any address, walked from the address
	 * before it (a new decoder's guard would name that exception) */
	memset(&fast, 0, sizeof(fast));
	memset(&ref, 0, sizeof(ref));
	decode_isas(TC_ETM_ELEMENTS, before_addr, sizeof(before_addr), 25, 1, &fast);
	decode_isas(TC_ETM_ELEMENTS | TC_ETM_REFERENCE, before_addr, sizeof(before_addr), 25, 1,
		    &ref);
	CHECK_INT(fast.handovers, 0);
	CHECK_INT(fast.unmodelled, 1);
	CHECK(strstr(ref.o.buf, "before the decoder had any address") == NULL);
	CHECK(strstr(ref.o.buf, " 10000 10008 2 2 ") != NULL);
	free(fast.o.buf);
	free(ref.o.buf);
}

/* OpenCSD 1.3.3's read cache takes a read at the last 4 bytes of the address space as in
 * any page it holds (the end wraps to 0) and copies from far past that page: its decoder
 * crashed (SIGSEGV) on an address packet taking it there after a walk elsewhere. The guard
 * names that packet: both decoders skip it and resynchronise, with the same records. */
TEST(an_address_in_the_last_word_is_a_hazard)
{
	/* A64 at 0x20000, an E atom; an address 0xfffffffffffffffc (offset 25, 64-bit IS0),
	 * an E atom; a new sync, 0x20000 again, an E atom (offset 59) */
	static const uint8_t trace[] = {
		ASYNC, TINFO, 0x85, 0, 0, 2, 0, 0, 0, 0, 0, 0x30, 0xf7,
		0x9d, 0x7f, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf7,
		ASYNC, TINFO, 0x85, 0, 0, 2, 0, 0, 0, 0, 0, 0x30, 0xf7,
	};
	struct taken fast = { 0 }, ref = { 0 };

	decode_isas(TC_ETM_ELEMENTS, trace, sizeof(trace), sizeof(trace), 1, &fast);
	decode_isas(TC_ETM_ELEMENTS | TC_ETM_REFERENCE, trace, sizeof(trace), sizeof(trace), 1,
		    &ref);
	CHECK_STR(fast.o.buf, ref.o.buf);
	CHECK(strstr(ref.o.buf, "\n11 16 19 0 0 0 0 - 0 0 0 - an address in the last 4 bytes of "
				"the address space: packet skipped, decoder resynchronised\n") != NULL);
	CHECK(strstr(ref.o.buf, "\n0 16 3b 20000 2000c 3 1 ") != NULL);	/* resynchronised */
	free(fast.o.buf);
	free(ref.o.buf);
}
