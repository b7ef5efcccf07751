/* tracectl decode -i DIR for an OpenCSD / DS-5 snapshot directory: one trace buffer decoded
 * (the first by default, as trc_pkt_lister does), as instruction ranges and other elements,
 * or as packets (--packets). */
#include <inttypes.h>

#include "decoders/coresight/cs_snapshot.h"
#include "lib/perfdata/snapshot.h"
#include "cmd/decode_input.h"
#include "cmd/tracectl.h"

int tc_decode_snapshot(const struct tc_decode_args *a,
		       void (*emit)(void *ctx, const struct tc_rec *r), void *ctx)
{
	struct tc_snapshot *ss;
	struct tc_err e;
	struct tc_cs_snapshot_run run = { .buffer = a->buffer, .what = a->packets ? TC_ETM_PACKETS
									 : TC_ETM_ELEMENTS,
				 .want_id = a->any_id ? a->want_id : NULL, .emit = emit,
				 .emit_ctx = ctx };
	int rc;

	if (a->branches)
		tc_fatal("--branches is for perf.data recordings, not snapshot directories");
	if (tc_snapshot_open(&ss, a->input, &e))
		tc_fatal("%s", e.msg);
	rc = tc_cs_snapshot_decode(ss, &run, &e);
	for (size_t i = 0; i < run.notes.n; i++)
		tc_warning("%s", run.notes.msgs[i]);
	tc_diag_free(&run.notes);
	if (rc) {
		tc_snapshot_free(ss);
		tc_fatal("%s", e.msg);
	}
	if (run.errors)
		tc_warning("%s: %" PRIu64 " decode errors (decoding resynchronised after each)",
			   a->input, run.errors);
	tc_status("tracectl decode: buffer %s (%s), %u sources, %" PRIu64 " packets, %" PRIu64
		  " ranges, %" PRIu64 " instructions, %" PRIu64 " errors", run.buf->name,
		  run.buf->format, run.sources, run.packets, run.ranges, run.insns, run.errors);
	tc_snapshot_free(ss);
	return run.errors ? 1 : 0;
}
