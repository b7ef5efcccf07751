/* libFuzzer target for Intel PT decoding of whole perf.data files (decoders/intel_pt/pt_session.c):
 * the records of the input go to the session, which queues the trace per CPU or thread,
 * keeps the side-band, and decodes with the queues interleaved by time (time_heap) when the
 * trace has time, one after the other when not. Images come from the recorded paths (none
 * under the --symfs given, so mostly no_image). Invariants: the records of the kind asked
 * for (ranges, or branches for odd sizes) are as many as the stats say, each has a queue's
 * CPU or -1, and symbolising any of them does not crash. A broken invariant calls abort(). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "decoders/intel_pt/pt_session.h"
#include "lib/perfdata/perf_data.h"
#include "tests/fuzz/fuzz_check.h"

struct run {
	struct tc_pt_session *s;
	int branches;
	uint64_t ranges, branch_recs;
};

static void on_rec(void *ctx, const struct tc_rec *r)
{
	struct run *x = ctx;
	struct tc_images_sym sym;

	CHECK(r->cpu >= -1);
	x->ranges += r->type == TC_REC_RANGE;
	x->branch_recs += r->type == TC_REC_BRANCH;
	if (r->type == TC_REC_RANGE || r->type == TC_REC_BRANCH)
		(void)tc_pt_session_symbolize(x->s, r->pid, r->start, &sym);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run x = { .branches = (int)(size & 1) };
	struct tc_perf_data *pd;
	struct tc_perf_data_record r;
	struct tc_err e;
	int n;

	if (tc_perf_data_open_mem(&pd, data, size, "fuzz", &e))
		return 0;
	x.s = tc_pt_session_new(&(struct tc_pt_session_opts){ .symfs = "/nonexistent",
							      .branches = x.branches,
							      .emit = on_rec,
							      .ctx = &x },
				&e);
	CHECK(x.s);
	while ((n = tc_perf_data_next(pd, &r, &e)) > 0)
		if (tc_pt_session_record(x.s, pd, &r, &e))
			break;
	if (n == 0 && tc_pt_session_is_intel_pt(x.s) && tc_pt_session_decode(x.s, pd, &e) == 0) {
		const struct tc_pt_session_stats *st = tc_pt_session_stats(x.s);
		const struct tc_pt_session_missing *miss;
		size_t nmiss = tc_pt_session_missing(x.s, &miss);

		if (x.branches)
			CHECK(x.ranges == 0 && x.branch_recs == st->branches);
		else
			CHECK(x.branch_recs == 0 && x.ranges == st->ranges);
		for (size_t i = 0; i < nmiss; i++)
			CHECK(miss[i].line && miss[i].line[0]);
	}
	tc_pt_session_free(x.s);
	tc_perf_data_close(pd);
	return 0;
}
