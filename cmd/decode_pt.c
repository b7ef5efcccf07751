/* tracectl decode for Intel PT: instruction flow (ranges, or branches with --branches)
 * through decoders/intel_pt/pt_session; images through --symfs, the recorded paths and
 * ~/.debug (perf's build-id cache). */
#include "cmd/decode_pt.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/intel_pt/pt_session.h"
#include "cmd/decode_cs.h"
#include "cmd/tracectl.h"

struct decode_pt {
	struct tc_pt_session *s;
	char *buildid_dir;
};

struct decode_pt *decode_pt_new(const char *symfs, bool branches,
				void (*emit)(void *ctx, const struct tc_rec *r), void *ctx,
				struct tc_listing *out)
{
	struct decode_pt *p = calloc(1, sizeof(*p));
	struct tc_err e;

	if (!p)
		tc_fatal("out of memory");
	p->buildid_dir = tc_buildid_dir();
	p->s = tc_pt_session_new(&(struct tc_pt_session_opts){ .symfs = symfs,
							       .buildid_dir = p->buildid_dir,
							       .branches = branches,
							       .emit = emit,
							       .ctx = ctx },
				 &e);
	if (!p->s)
		tc_fatal("%s", e.msg);
	if (out) {
		out->sym = tc_pt_session_symbolize;
		out->sym_ctx = p->s;
	}
	return p;
}

void decode_pt_record(struct decode_pt *p, struct tc_perf_data *pd,
		      const struct tc_perf_data_record *r)
{
	struct tc_err e;

	if (tc_pt_session_record(p->s, pd, r, &e))
		tc_fatal("%s", e.msg);
}

bool decode_pt_is_intel_pt(const struct decode_pt *p)
{
	return tc_pt_session_is_intel_pt(p->s);
}

int decode_pt_finish(struct decode_pt *p, struct tc_perf_data *pd, const char *input)
{
	const struct tc_pt_session_missing *miss;
	const struct tc_pt_session_stats *st;
	struct tc_err e;
	size_t nmiss;
	int problems = 0;

	if (tc_pt_session_decode(p->s, pd, &e))
		tc_fatal("%s", e.msg);
	st = tc_pt_session_stats(p->s);
	nmiss = tc_pt_session_missing(p->s, &miss);
	if (nmiss) {
		tc_warning("%s: %zu images needed but not found (give their root with --symfs DIR);"
			   " decoding stopped %" PRIu64 " times for lack of code", input, nmiss,
			   st->nomap);
		for (size_t i = 0; i < nmiss; i++)
			tc_warning("%s: image not found: %s: decoding stopped there %" PRIu64
				   " times", input, miss[i].line, miss[i].stops);
		problems++;
	}
	if (st->nomap_unmapped) {
		tc_warning("%s: decoding stopped %" PRIu64 " times at addresses no MMAP record"
			   " covers", input, st->nomap_unmapped);
		problems++;
	}
	if (st->errors || st->overflows) {
		tc_warning("%s: %" PRIu64 " decode errors, %" PRIu64 " overflows (decoding"
			   " resynchronised at the next PSB after each)", input, st->errors,
			   st->overflows);
		problems++;
	}
	if (st->buffers && !st->syncs) {
		tc_warning("%s: no PSB found in %" PRIu64 " bytes of trace: nothing decoded",
			   input, st->bytes);
		problems++;
	}
	tc_status("tracectl decode: %" PRIu64 " AUXTRACE buffers (%" PRIu64 " bytes) in %" PRIu64
		  " queues, %" PRIu64 " instructions, %" PRIu64 " ranges, %" PRIu64
		  " branches, %" PRIu64 " errors, %" PRIu64 " stops without code",
		  st->buffers, st->bytes, st->queues, st->insns, st->ranges, st->branches,
		  st->errors, st->nomap);
	return problems;
}

void decode_pt_free(struct decode_pt *p)
{
	if (!p)
		return;
	tc_pt_session_free(p->s);
	free(p->buildid_dir);
	free(p);
}

struct tc_pt_session *decode_pt_session(struct decode_pt *p)
{
	return p->s;
}
