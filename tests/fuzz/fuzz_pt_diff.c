/* Differential libFuzzer target for Intel PT flow decoding (decoders/intel_pt/pt_flow.c): the
 * fast path (our cache of blocks' last instructions, records made only of the type asked
 * for) against the reference (--decoder=reference: libipt's block decoder alone) on the same
 * trace, both with the code mapped from a file (libipt's own block cache) as perf.data's
 * images are. Every record, field by field and
 * string by string, and the statistics must be the same: mutated traces give errors,
 * overflows, stops without code and resumes, all of which must come out alike. The input's
 * first 512 bytes (or less) are the code, mapped at 0x400000 and 0x7f0000000000 (as in
 * fuzz_pt). Time from tick events for odd sizes, from the decoder for even ones; bit 1 of
 * the size: branches asked for instead of ranges (the other type is dropped here from the
 * reference's records, as the session drops it); bit 2: its first half fed first; bit 3:
 * the trace cut into pieces fed first, with bit 4 as one stream (each piece's decode goes
 * on into the next: pt_flow.h's tc_pt_flow_follow).
 * Any difference calls abort(). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoders/intel_pt/pt_flow.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_recs.h"
#include "tests/unit/pt_pieces.h"

#define BASE_OFF 0x1000		/* file offset given to the decoder */

static const uint64_t bases[] = { 0x400000, 0x7f0000000000ULL };

struct run {
	const uint8_t *code;
	size_t ncode;
	const char *path;	/* the code as a file, for the span callback */
	unsigned drop;		/* record types not kept (1 << type) */
	struct fuzz_recs recs;	/* every record, serialised, offsets too */
};

static void on_rec(void *ctx, const struct tc_rec *rec)
{
	struct run *r = ctx;

	if (!(r->drop & (1u << rec->type)))
		fuzz_recs_add(&r->recs, rec);
}

static size_t rd(void *ctx, int cpu, uint64_t cr3, uint64_t addr, uint8_t *buf, size_t len)
{
	const struct run *r = ctx;

	(void)cpu;
	(void)cr3;
	for (size_t i = 0; i < 2; i++) {
		if (addr < bases[i] || addr - bases[i] >= r->ncode)
			continue;
		size_t o = (size_t)(addr - bases[i]);
		size_t n = r->ncode - o < len ? r->ncode - o : len;

		memcpy(buf, r->code + o, n);
		return n;
	}
	return 0;
}

static int span(void *ctx, int cpu, uint64_t cr3, uint64_t addr, struct tc_pt_flow_span *s)
{
	const struct run *r = ctx;

	(void)cpu;
	(void)cr3;
	for (size_t i = 0; i < 2; i++) {
		if (addr < bases[i] || addr - bases[i] >= r->ncode)
			continue;
		*s = (struct tc_pt_flow_span){ r->path, bases[i], r->ncode, 0 };
		return 0;
	}
	return -1;
}

static uint64_t space(void *ctx)
{
	(void)ctx;
	return 1;
}

/* Decode data with the fast path or the reference; the records go to r, the stats to st. */
static bool decode(struct run *r, bool reference, const uint8_t *data, size_t size,
		   struct tc_pt_flow_stats *st)
{
	struct tc_pt_flow_ops ops = { .read = rd, .emit = on_rec, .ctx = r, .timestamps = true,
				      .events = true, .ticks = size & 1, .reference = reference };
	size_t piece = 24 + (size >> 4) % 200;
	/* the pieces of bit 3: the flow may ask for them until it is freed */
	struct tc_pt_flow_buf *p = malloc((size / piece + 1) * sizeof(*p));
	struct pieces ps = { p, 0 };
	struct tc_err e;
	struct tc_pt_flow *f;
	bool ok;

	CHECK(p);
	r->drop = 1u << (size & 2 ? TC_REC_RANGE : TC_REC_BRANCH);
	ops.skip = r->drop;	/* the reference makes them all anyway */
	if (r->path) {
		ops.span = span;
		ops.space = space;
	}
	f = tc_pt_flow_new(NULL, NULL, 0, &ops, &e);
	CHECK(f);
	/* bit 2 of the size: its first half first, as a buffer of its own: the whole trace
	 * then decodes with what that left (libipt's block cache, or the fast path's model of
	 * it, used where the fast path gives up in the second) */
	ok = !(size & 4) || tc_pt_flow_feed(f, data, size / 2, BASE_OFF, &e) == 0;
	/* bit 3: the trace cut into pieces first, each a buffer of its own, as perf writes a
	 * queue's AUX ring drains (a piece may end at a branch whose query then fails) */
	if (size & 8) {
		for (size_t at = 0; at < size; at += piece)
			p[ps.n++] = (struct tc_pt_flow_buf){ data + at, size - at < piece ?
							     size - at : piece, 2 * BASE_OFF + at };
		/* bit 4: one stream (tc_pt_flow_follow) */
		for (size_t i = 0; ok && i < ps.n; i++) {
			if (size & 16)
				tc_pt_flow_follow(f, p[i].len, next_piece, &ps, i);
			ok = tc_pt_flow_feed(f, p[i].buf, p[i].len, p[i].file_offset, &e) == 0;
		}
	}
	ok = ok && tc_pt_flow_feed(f, data, size, 4 * BASE_OFF + size, &e) == 0;
	*st = *tc_pt_flow_stats(f);
	tc_pt_flow_free(f);
	free(p);
	return ok;
}

static char path[64];

static void remove_code(void)
{
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run fast = { .code = data, .ncode = size < 512 ? size : 512,
			    .recs.with_offset = true }, ref = fast;
	struct tc_pt_flow_stats sf, sr;
	bool okf, okr;
	FILE *fp;

	if (!path[0]) {
		snprintf(path, sizeof(path), "/tmp/fuzz_pt_diff.%d.code", (int)getpid());
		atexit(remove_code);
	}
	if (fast.ncode && (fp = fopen(path, "wb"))) {
		if (fwrite(data, 1, fast.ncode, fp) == fast.ncode)
			fast.path = ref.path = path;
		fclose(fp);
	}
	okf = decode(&fast, false, data, size, &sf);
	okr = decode(&ref, true, data, size, &sr);
	CHECK(okf == okr);
	fuzz_recs_same("fuzz_pt_diff", "fast", &fast.recs, "reference", &ref.recs);
	CHECK(!memcmp(&sf, &sr, sizeof(sf)));
	fuzz_recs_free(&fast.recs);
	fuzz_recs_free(&ref.recs);
	return 0;
}
