/* Intel PT fast path against the reference where a queue comes in several AUXTRACE buffers
 * (decoders/intel_pt/pt_walk.c's model of libipt's block cache, pt_flow.c's fall-back): a
 * buffer that ends at a branch needing trace leaves libipt's cache with that branch alone, and
 * a later buffer the walk gives up on is decoded by libipt with the cache warmed as the
 * reference has it. Records (offsets included) and statistics must be the same, with the
 * code mapped from a file at several addresses (the warm-up's order follows them). Also the
 * walk's tick events (queues interleaved by time) against libipt's. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "decoders/intel_pt/pt_flow.h"
#include "lib/util/grow.h"
#include "tests/unit/pt_enc.h"
#include "tests/unit/pt_pieces.h"
#include "tests/unit/tc_test.h"

/*   00: xor eax,eax; 02: inc eax; 04: cmp eax,3; 07: jnz 02; 09: call 11; 0e: nop;
 *   0f: jmp *rax; 11: nop; 12: ret; 13: mov cr3,rax (the walk gives up); 16: jmp 09 */
static const uint8_t code[] = {
	0x31, 0xc0, 0xff, 0xc0, 0x83, 0xf8, 0x03, 0x75, 0xf9, 0xe8, 0x03, 0x00, 0x00, 0x00,
	0x90, 0xff, 0xe0, 0x90, 0xc3, 0x0f, 0x22, 0xd8, 0xeb, 0xf1,
};

struct run {
	uint64_t base;
	/* buffers cut at these trace offsets (file offsets 0x1000, 0x2000, ...) */
	const size_t *cuts;
	size_t ncuts;
	bool no_offsets;	/* records without their offsets */
	const char *path;
	uint8_t *out;		/* every record's fields, serialised */
	size_t n, cap;
	size_t errors;
	bool threads;		/* a thread callback: a mark in out, a new pid each time */
	int pids;
	bool batched;		/* ranges through emit_ranges */
	size_t runs, bad_runs;	/* runs of ranges; those not of one pid or not RANGE */
	size_t inc_reads;	/* reads of the inc at code[2] */
};

static void put(struct run *r, const void *p, size_t len)
{
	if (tc_grow((void **)&r->out, &r->cap, r->n + len, 1))
		abort();
	memcpy(r->out + r->n, p, len);
	r->n += len;
}

static void on_rec(void *ctx, const struct tc_rec *rec)
{
	struct run *r = ctx;
	const uint64_t f[] = { rec->type, (uint64_t)rec->pid, r->no_offsets ? 0 : rec->offset,
			       rec->time, rec->start, rec->end,
			       rec->insns, (uint64_t)rec->last, rec->last_type, rec->last_size,
			       rec->last_taken, rec->value };

	r->errors += rec->type == TC_REC_ERROR;
	put(r, f, sizeof(f));
	if (rec->text)
		put(r, rec->text, strlen(rec->text) + 1);
}

/* A run of ranges: each one as on_rec would have it, in order. */
static void on_ranges(void *ctx, const struct tc_rec *rec, size_t n)
{
	struct run *r = ctx;

	r->runs++;
	if (!n)
		r->bad_runs++;
	for (size_t i = 0; i < n; i++) {
		if (rec[i].type != TC_REC_RANGE || rec[i].pid != rec[0].pid)
			r->bad_runs++;
		on_rec(ctx, &rec[i]);
	}
}

static void thread(void *ctx, int cpu, uint64_t cr3, const struct tc_pt_flow_time *t, int *pid,
		   int *tid)
{
	struct run *r = ctx;
	static const char mark[] = "thread";

	(void)cpu;
	(void)cr3;
	(void)t;
	put(r, mark, sizeof(mark));
	*pid = *tid = ++r->pids;
}

static size_t rd(void *ctx, int cpu, uint64_t cr3, uint64_t addr, uint8_t *buf, size_t len)
{
	struct run *r = ctx;

	(void)cpu;
	(void)cr3;
	r->inc_reads += addr == r->base + 2;
	if (addr < r->base || addr - r->base >= sizeof(code))
		return 0;
	if (len > sizeof(code) - (addr - r->base))
		len = sizeof(code) - (addr - r->base);
	memcpy(buf, code + (addr - r->base), len);
	return len;
}

static int span(void *ctx, int cpu, uint64_t cr3, uint64_t addr, struct tc_pt_flow_span *s)
{
	const struct run *r = ctx;

	(void)cpu;
	(void)cr3;
	if (addr < r->base || addr - r->base >= sizeof(code))
		return -1;
	*s = (struct tc_pt_flow_span){ r->path, r->base, sizeof(code), 0 };
	return 0;
}

static uint64_t space(void *ctx)
{
	(void)ctx;
	return 1;
}

static void add(struct pt_packet *p, size_t *n, enum pt_packet_type t, uint64_t arg)
{
	memset(&p[*n], 0, sizeof(p[*n]));
	p[*n].type = t;
	switch (t) {
	case ppt_mode:
		p[*n].payload.mode.leaf = pt_mol_exec;
		p[*n].payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
		break;
	case ppt_tip_pge:
	case ppt_tip:
	case ppt_fup:
		p[*n].payload.ip.ipc = pt_ipc_sext_48;
		p[*n].payload.ip.ip = arg;
		break;
	case ppt_tip_pgd:
		p[*n].payload.ip.ipc = pt_ipc_suppressed;
		break;
	case ppt_tsc:
		p[*n].payload.tsc.tsc = arg;
		break;
	case ppt_tnt_8:	/* arg: bits << 8 | payload */
		p[*n].payload.tnt.bit_size = (uint8_t)(arg >> 8);
		p[*n].payload.tnt.payload = arg & 0xff;
		break;
	default:
		break;
	}
	(*n)++;
}

/* PSB+, MODE.Exec 64-bit, TIP.PGE to ip. */
static size_t start(struct pt_packet *p, uint64_t ip)
{
	size_t n = 0;

	add(p, &n, ppt_psb, 0);
	add(p, &n, ppt_psbend, 0);
	add(p, &n, ppt_mode, 0);
	add(p, &n, ppt_tip_pge, ip);
	return n;
}

/* Feed the buffers to a new flow decoder; records and statistics into r. */
static void decode(struct run *r, bool reference, uint8_t (*bufs)[64], const int *lens,
		   size_t nbufs, struct tc_pt_flow_stats *st)
{
	struct tc_pt_flow_ops ops = { .read = rd, .emit = on_rec, .span = span, .space = space,
				      .ctx = r, .reference = reference,
				      .thread = r->threads ? thread : NULL,
				      /* as report asks (the reference makes them anyway) */
				      .skip = r->threads ? 1u << TC_REC_BRANCH : 0,
				      .emit_ranges = r->batched ? on_ranges : NULL };
	struct tc_err e;
	struct tc_pt_flow *f = tc_pt_flow_new(NULL, NULL, 0, &ops, &e);

	CHECK(f != NULL);
	if (!f)
		return;
	for (size_t i = 0; i < nbufs; i++)
		CHECK_INT(tc_pt_flow_feed(f, bufs[i], (size_t)lens[i], 0x1000 * (i + 1), &e), 0);
	*st = *tc_pt_flow_stats(f);
	tc_pt_flow_free(f);
}

/* The same records, in the same order among the thread callbacks, when ranges come in runs
 * (emit_ranges), for the fast path (its fall-back included) and the reference: each run of
 * one pid, ended before the callback and before any other record. */
static bool same_in_runs(const char *path, uint64_t base, uint8_t (*bufs)[64], const int *lens)
{
	bool same = true;

	for (int reference = 0; reference < 2; reference++) {
		struct run one = { .base = base, .path = path, .threads = true }, runs = one;
		struct tc_pt_flow_stats s1, s2;

		runs.batched = true;
		memset(&s1, 0, sizeof(s1));
		memset(&s2, 0, sizeof(s2));
		decode(&one, reference, bufs, lens, 3, &s1);
		decode(&runs, reference, bufs, lens, 3, &s2);
		if (one.n != runs.n || memcmp(one.out, runs.out, one.n) || runs.bad_runs ||
		    !runs.runs || memcmp(&s1, &s2, sizeof(s1))) {
			printf("#   base 0x%" PRIx64 "%s: %zu bytes of records in runs against "
			       "%zu one by one, %zu runs (%zu bad)\n", base,
			       reference ? " (reference)" : "", runs.n, one.n, runs.runs,
			       runs.bad_runs);
			same = false;
		}
		CHECK(one.pids > 1);	/* the runs had callbacks to end at */
		free(one.out);
		free(runs.out);
	}
	return same;
}

/* Three buffers; the first maps the code (nop; jmp *rax, where tracing stops), so that
 * libipt caches blocks of it from then on.
 * - cut at a return: the second from the call, ending at the return; the third whole (the
 *   call, the function, its compressed return, the stop). The call's range ends with the
 *   next block, so its offset is where the decoder is after that block: before the return's
 *   TNT where libipt's cache has the return alone.
 * - the walk gives up later: the second from the loop, ending at its branch; the third
 *   calls, returns, goes to mov cr3 (the walk gives up: libipt decodes the buffer again,
 *   its cache warmed as the reference has it), calls and returns again and only then runs
 *   the loop (whose blocks depend on that cache) and stops. */
static bool same_both_ways(const char *path, uint64_t base, bool give_up)
{
	uint8_t bufs[3][64];
	int lens[3];
	struct pt_packet p[16];
	size_t n;
	struct run fast = { .base = base, .path = path }, ref = fast;
	struct tc_pt_flow_stats sf, sr;
	bool same;

	n = start(p, base + 0xe);
	add(p, &n, ppt_tip_pgd, 0);
	lens[0] = encode_pt(bufs[0], sizeof(bufs[0]), p, n);
	if (!give_up) {
		n = start(p, base + 0x9);
		lens[1] = encode_pt(bufs[1], sizeof(bufs[1]), p, n);
		n = start(p, base + 0x9);
		add(p, &n, ppt_tnt_8, 1 << 8 | 1);
	} else {
		n = start(p, base);
		lens[1] = encode_pt(bufs[1], sizeof(bufs[1]), p, n);
		n = start(p, base + 0x9);
		add(p, &n, ppt_tnt_8, 1 << 8 | 1);	/* ret */
		add(p, &n, ppt_tip, base + 0x13);
		add(p, &n, ppt_tnt_8, 1 << 8 | 1);	/* ret */
		add(p, &n, ppt_tip, base);
		add(p, &n, ppt_tnt_8, 2 << 8 | 1);	/* jnz not taken, ret */
	}
	add(p, &n, ppt_tip_pgd, 0);
	lens[2] = encode_pt(bufs[2], sizeof(bufs[2]), p, n);
	CHECK(lens[0] > 0 && lens[1] > 0 && lens[2] > 0);
	if (lens[0] <= 0 || lens[1] <= 0 || lens[2] <= 0)
		return false;
	memset(&sf, 0, sizeof(sf));
	memset(&sr, 0, sizeof(sr));
	decode(&fast, false, bufs, lens, 3, &sf);
	decode(&ref, true, bufs, lens, 3, &sr);
	same = fast.n == ref.n && !memcmp(fast.out, ref.out, fast.n) &&
	       !memcmp(&sf, &sr, sizeof(sf)) && fast.n > 0;
	if (!same)
		printf("#   base 0x%" PRIx64 "%s: %zu bytes of records against the reference's "
		       "%zu, %" PRIu64 " insns against %" PRIu64 "\n", base,
		       give_up ? ", walk gives up" : "", fast.n, ref.n, sf.insns, sr.insns);
	CHECK_INT(ref.errors, 0);
	CHECK_INT(sr.insns, give_up ? 27 : 10);
	free(fast.out);
	free(ref.out);
	return same && same_in_runs(path, base, bufs, lens);
}

TEST(pt_cuts_fast_is_reference)
{
	char path[] = "/tmp/test_pt_cuts.XXXXXX";
	int fd = mkstemp(path);
	size_t bad = 0;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, code, sizeof(code)) == (ssize_t)sizeof(code));
	close(fd);
	for (unsigned v = 0; v < 16; v++) {
		uint64_t base = 0x400000 + v * 0x10040ULL;

		bad += !same_both_ways(path, base, false);
		bad += !same_both_ways(path, base, true);
	}
	CHECK_INT(bad, 0);
	unlink(path);
}

/* Ranges in runs across time changes in a buffer: each new time asks the thread callback
 * (a mark, a new pid) between ranges; the runs must end there, as the records one by one
 * show. The loop (jnz taken twice, then not), the call, its compressed return, jmp *rax back
 * to the start; a TSC after each round. */
TEST(pt_cuts_runs_end_at_thread_callbacks)
{
	struct run one = { .base = 0x400000, .threads = true }, runs = one;
	struct pt_packet p[64];
	uint8_t buf[512];
	size_t n = start(p, 0x400000);
	struct tc_err e;
	int len;

	for (unsigned k = 0; k < 8; k++) {
		add(p, &n, ppt_tnt_8, 4 << 8 | 0xd);	/* 1 1 0 1 */
		add(p, &n, ppt_tsc, 1000 + k);
		add(p, &n, ppt_tip, 0x400000);
	}
	add(p, &n, ppt_tip_pgd, 0);
	len = encode_pt(buf, sizeof(buf), p, n);
	CHECK(len > 0);
	runs.batched = true;
	for (struct run *r = &one; r; r = r == &one ? &runs : NULL) {
		struct tc_pt_flow_ops ops = { .read = rd, .emit = on_rec, .thread = thread,
					      .emit_ranges = r->batched ? on_ranges : NULL,
					      .ctx = r, .skip = 1u << TC_REC_BRANCH };	/* report's */
		struct tc_pt_flow *f = tc_pt_flow_new(NULL, NULL, 0, &ops, &e);

		CHECK(f != NULL);
		if (!f || len <= 0)
			return;
		CHECK_INT(tc_pt_flow_feed(f, buf, (size_t)len, 0x1000, &e), 0);
		CHECK_INT(tc_pt_flow_stats(f)->insns, 8 * 15 + 4);	/* 15 a round */
		tc_pt_flow_free(f);
	}
	CHECK_INT(one.errors, 0);
	CHECK(one.pids > 8);	/* a callback per new time */
	CHECK(runs.runs > 8 && runs.runs < (size_t)one.pids * 2);	/* several ranges a run */
	CHECK_INT(runs.bad_runs, 0);
	CHECK(one.n == runs.n && !memcmp(one.out, runs.out, one.n));
	free(one.out);
	free(runs.out);
}

/* A queue's trace cut anywhere into consecutive buffers (perf cuts where it drained the AUX
 * ring, inside packets) decodes to the records of the trace whole, offsets aside (where
 * the decoder is differs where a decode went on from a PSB): the fast path, the reference
 * and report's skim, with perf's padding after each piece, and with a piece too short to
 * hold a PSB (taken whole by the tail before); the fast path's offsets are the
 * reference's. The trace: the loop, the call and its compressed return, jmp *rax back;
 * every other round a PSB+ at the loop's start (the flow is there). */
static void cut_decode(struct run *r, int mode, const uint8_t *buf, size_t len,
		       struct tc_pt_flow_stats *st)
{
	struct tc_pt_flow_ops ops = { .read = rd, .emit = on_rec, .span = span, .space = space,
				      .ctx = r, .reference = mode == 1, .no_offsets = mode == 2,
				      .skip = mode == 2 ? 1u << TC_REC_BRANCH : 0 };
	struct tc_pt_flow *f = tc_pt_flow_new(NULL, NULL, 0, &ops, &(struct tc_err){ 0 });
	uint8_t piece[8][1024];
	struct tc_pt_flow_buf next[8];
	size_t from[9], n = r->ncuts + 1;
	struct pieces ps = { next, n };	/* the flow asks for them until it is freed */
	struct tc_err e;

	CHECK(f != NULL && n <= 8);
	if (!f || n > 8)
		return;
	for (size_t i = 0; i < n; i++) {
		from[i] = i ? r->cuts[i - 1] : 0;
		from[i + 1] = i + 1 < n ? r->cuts[i] : len;
	}
	for (size_t i = 0; i < n; i++) {
		size_t k = from[i + 1] - from[i];

		memset(piece[i], 0, sizeof(piece[i]));	/* perf's padding: zeros to 8 bytes */
		memcpy(piece[i], buf + from[i], k);
		next[i] = (struct tc_pt_flow_buf){ piece[i], k, 0x1000 * (i + 1) };
	}
	for (size_t i = 0; i < n; i++) {
		size_t k = from[i + 1] - from[i];

		tc_pt_flow_follow(f, k, next_piece, &ps, i);
		CHECK_INT(tc_pt_flow_feed(f, piece[i], (k + 7) & ~(size_t)7, 0x1000 * (i + 1), &e),
			  0);
	}
	*st = *tc_pt_flow_stats(f);
	tc_pt_flow_free(f);
}

TEST(pt_cuts_stream_cut_anywhere_is_whole)
{
	struct pt_packet p[128];
	uint8_t buf[1024];
	size_t n = start(p, 0x400000), bad = 0, tried = 0;
	int len;

	for (unsigned k = 0; k < 10; k++) {
		add(p, &n, ppt_tnt_8, 4 << 8 | 0xd);	/* jnz taken twice, not; ret */
		add(p, &n, ppt_tip, 0x400000);	/* jmp *rax */
		if (k % 2 == 0) {
			add(p, &n, ppt_psb, 0);
			add(p, &n, ppt_mode, 0);
			add(p, &n, ppt_fup, 0x400000);
			add(p, &n, ppt_psbend, 0);
		}
	}
	add(p, &n, ppt_tip_pgd, 0);
	len = encode_pt(buf, sizeof(buf), p, n);
	CHECK(len > 200);
	if (len <= 200)
		return;
	for (int mode = 0; mode < 3; mode++) {
		struct run whole = { .base = 0x400000, .no_offsets = true };
		struct tc_pt_flow_stats sw;

		cut_decode(&whole, mode, buf, (size_t)len, &sw);
		CHECK_INT(whole.errors, 0);
		CHECK_INT(sw.insns, 10 * 15 + 4);
		for (size_t c = 1; c + 1 < (size_t)len; c++) {
			/* one cut; and two, the second 7 bytes on (no PSB between: taken whole) */
			for (int two = 0; two < 2; two++) {
				size_t cuts[2] = { c, c + 7 };
				struct run cut = { .base = 0x400000, .cuts = cuts, .no_offsets = true,
						   .ncuts = two && c + 8 < (size_t)len ? 2 : 1 };
				struct run fast = cut, ref = cut;
				struct tc_pt_flow_stats sc, sf, sr;

				cut_decode(&cut, mode, buf, (size_t)len, &sc);
				tried++;
				if (cut.n != whole.n || memcmp(cut.out, whole.out, whole.n) ||
				    sc.insns != sw.insns || sc.ranges != sw.ranges ||
				    sc.branches != sw.branches || sc.errors) {
					if (bad++ < 5)
						printf("#   mode %d, cut at %zu%s: %" PRIu64 " insns, %"
						       PRIu64 " errors, %zu bytes of records against %zu\n",
						       mode, c, cut.ncuts == 2 ? " and +7" : "", sc.insns,
						       sc.errors, cut.n, whole.n);
				}
				free(cut.out);
				if (mode)
					continue;
				fast.no_offsets = ref.no_offsets = false;
				cut_decode(&fast, 0, buf, (size_t)len, &sf);
				cut_decode(&ref, 1, buf, (size_t)len, &sr);
				if (fast.n != ref.n || memcmp(fast.out, ref.out, ref.n) ||
				    memcmp(&sf, &sr, sizeof(sf))) {
					if (bad++ < 5)
						printf("#   cut at %zu%s: the fast path's offsets or "
						       "statistics are not the reference's\n", c,
						       cut.ncuts == 2 ? " and +7" : "");
				}
				free(fast.out);
				free(ref.out);
			}
		}
		free(whole.out);
	}
	CHECK(tried > 1000);
	CHECK_INT(bad, 0);
}

/* The loop with a TSC between the jnz's second and third TNT bits and another before the
 * jmp's TIP, decoded with tick events in the smallest steps of time (as queues interleaved
 * by time are): the fast path's walk makes libipt's tick events, at the same branches, so
 * the records, their times and offsets, and the pauses are the reference's. The walk reads
 * every instruction of each run it decodes through the callback (the inc in the run from
 * the loop's start and in the one from the inc), libipt's block decoder reads the mapped
 * file and the callback gives only a few instructions more: more reads of the inc show
 * that the walk decoded (with the block decoder in its place, 1 and 1). */
static size_t tick_decode(struct run *r, bool reference, const uint8_t *buf, size_t len,
			  bool stepwise)
{
	struct tc_pt_flow_ops ops = { .read = rd, .emit = on_rec, .span = span, .space = space,
				      .ctx = r, .reference = reference, .ticks = true };
	struct tc_err e;
	struct tc_pt_flow *f = tc_pt_flow_new(NULL, NULL, 0, &ops, &e);
	uint64_t until = 0;
	size_t pauses = 0;

	CHECK(f != NULL);
	if (!f)
		return 0;
	CHECK_INT(tc_pt_flow_begin(f, buf, len, 0x1000, &e), 0);
	while (tc_pt_flow_run(f, stepwise ? until : UINT64_MAX) == 1 &&
	       tc_pt_flow_next_time(f, &until))
		pauses++;
	CHECK_INT(tc_pt_flow_stats(f)->errors, 0);
	tc_pt_flow_free(f);
	return pauses;
}

TEST(pt_ticks_walk_is_reference)
{
	char path[] = "/tmp/test_pt_cuts.XXXXXX";
	int fd = mkstemp(path);
	struct pt_packet p[128];
	uint8_t buf[1024];
	size_t n = 0;
	int len;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, code, sizeof(code)) == (ssize_t)sizeof(code));
	close(fd);
	add(p, &n, ppt_psb, 0);
	add(p, &n, ppt_tsc, 1000);
	add(p, &n, ppt_psbend, 0);
	add(p, &n, ppt_mode, 0);
	add(p, &n, ppt_tip_pge, 0x400000);
	for (unsigned k = 0; k < 8; k++) {
		add(p, &n, ppt_tnt_8, 2 << 8 | 0x3);	/* jnz taken twice */
		add(p, &n, ppt_tsc, 1010 + 100 * k);
		add(p, &n, ppt_tnt_8, 2 << 8 | 0x1);	/* jnz not taken; ret */
		add(p, &n, ppt_tsc, 1050 + 100 * k);
		add(p, &n, ppt_tip, 0x400000);	/* jmp *rax */
	}
	add(p, &n, ppt_tip_pgd, 0);
	len = encode_pt(buf, sizeof(buf), p, n);
	CHECK(len > 100);
	for (int stepwise = 0; len > 100 && stepwise < 2; stepwise++) {
		struct run fast = { .base = 0x400000, .path = path }, ref = fast;
		size_t pf = tick_decode(&fast, false, buf, (size_t)len, stepwise);
		size_t pr = tick_decode(&ref, true, buf, (size_t)len, stepwise);

		CHECK(fast.n > 0 && fast.n == ref.n && !memcmp(fast.out, ref.out, ref.n));
		CHECK_INT(pf, pr);
		/* a pause at each of the 16 ticks, at least */
		CHECK(!stepwise || pf >= 16);
		CHECK(fast.inc_reads > ref.inc_reads);
		printf("#   %s: %zu bytes of records, %zu pauses, inc reads %zu/%zu\n",
		       stepwise ? "stepwise" : "whole", fast.n, pf, fast.inc_reads, ref.inc_reads);
		free(fast.out);
		free(ref.out);
	}
	unlink(path);
}
