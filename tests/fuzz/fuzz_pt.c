/* libFuzzer target for Intel PT decoding: the packet lister (decoders/intel_pt/pt_packets.c) and the
 * instruction-flow decoder (decoders/intel_pt/pt_flow.c) over the same bytes.
 *
 * The input's first 512 bytes (or less) are also the code image, mapped at 0x400000 and
 * again at 0x7f0000000000, so flow decoding reaches real instruction decoding, not only
 * "no image". Invariants checked on every record: offsets lie inside the buffer, ranges are
 * non-empty with start < end, branch/range/error counts agree with the decoder's stats,
 * decoding in steps of time (tc_pt_flow_run) gives the records decoding at once gives.
 * A broken invariant calls abort(), which libFuzzer reports as a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/intel_pt/pt_flow.h"
#include "decoders/intel_pt/pt_packets.h"
#include "tests/fuzz/fuzz_check.h"

#define BASE_OFF 0x1000		/* file offset given to the decoders */

struct run {
	const uint8_t *code;
	size_t ncode;
	size_t len;
	uint64_t ranges, branches, errors, packets;
	uint64_t records, hash;		/* of every flow record, in order */
};

static void check_off(const struct run *r, const struct tc_rec *rec)
{
	/* LOST/END/ERROR may point at the end of the buffer, nothing past it */
	CHECK(rec->offset >= BASE_OFF && rec->offset <= BASE_OFF + r->len);
}

static void on_packet(void *ctx, const struct tc_rec *rec)
{
	struct run *r = ctx;

	check_off(r, rec);
	if (rec->type == TC_REC_PACKET) {
		CHECK(rec->name && rec->name[0]);
		r->packets++;
	}
}

static void on_flow(void *ctx, const struct tc_rec *rec)
{
	struct run *r = ctx;
	const uint64_t f[] = { rec->type, rec->offset, rec->start, rec->end, rec->insns,
			       rec->value, (uint64_t)rec->isa };

	check_off(r, rec);
	r->records++;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		r->hash = (r->hash ^ f[i]) * 0x100000001b3ULL;
	switch (rec->type) {
	case TC_REC_RANGE:
		CHECK(rec->start < rec->end && rec->insns > 0);
		CHECK(rec->end - rec->start >= rec->insns);
		r->ranges++;
		break;
	case TC_REC_BRANCH:
		r->branches++;
		break;
	case TC_REC_ERROR:
		r->errors++;
		break;
	default:
		break;
	}
}

static size_t rd(void *ctx, int cpu, uint64_t cr3, uint64_t addr, uint8_t *buf, size_t len)
{
	const struct run *r = ctx;
	static const uint64_t bases[] = { 0x400000, 0x7f0000000000ULL };

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run r = { .code = data, .ncode = size < 512 ? size : 512, .len = size }, r2 = r;
	struct tc_pt_packets_stats ps = { 0 };
	/* time from tick events (as for queues interleaved by time) for odd sizes */
	struct tc_pt_flow_ops ops = { .read = rd, .emit = on_flow, .ctx = &r, .timestamps = true,
				  .ticks = size & 1,
				  .events = true };
	struct tc_err e;
	struct tc_pt_flow *f;

	if (tc_pt_packets_decode(NULL, data, size, BASE_OFF, 0, on_packet, &r, &ps, &e) == 0)
		CHECK(ps.packets == r.packets);

	f = tc_pt_flow_new(NULL, NULL, 0, &ops, &e);
	CHECK(f);
	if (tc_pt_flow_feed(f, data, size, BASE_OFF, &e) == 0) {
		const struct tc_pt_flow_stats *st = tc_pt_flow_stats(f);

		CHECK(st->ranges == r.ranges);
		CHECK(st->branches == r.branches);
		CHECK(st->errors == r.errors);
	}
	tc_pt_flow_free(f);

	/* In the smallest steps of time (as when queues interleave): the same records. */
	ops.ctx = &r2;
	f = tc_pt_flow_new(NULL, NULL, 0, &ops, &e);
	CHECK(f);
	if (tc_pt_flow_begin(f, data, size, BASE_OFF, &e) == 0) {
		uint64_t until = 0;

		while (tc_pt_flow_run(f, until) == 1)
			CHECK(tc_pt_flow_next_time(f, &until));
		CHECK(r2.records == r.records && r2.hash == r.hash);
	}
	tc_pt_flow_free(f);
	return 0;
}
