/* tracectl decode -i DIR for an OpenCSD / DS-5 snapshot directory: one trace buffer decoded
 * (the first by default, as trc_pkt_lister does), as instruction ranges and other elements,
 * or as packets (--packets). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../decoders/cs_snapshot.h"
#include "../lib/snapshot.h"
#include "../out/records.h"
#include "tracectl.h"

int tc_parse_trace_ids(const char *arg, bool want[128])
{
	char *list = strdup(arg), *save = NULL;
	int rc = 0;

	if (!list)
		tc_fatal("out of memory");
	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long id;

		errno = 0;
		id = strtoul(tok, &end, 0);
		if (errno || end == tok || *end || id > 0x7f) {
			rc = -1;
			break;
		}
		want[id] = true;
	}
	free(list);
	return rc;
}

static void emit(void *ctx, const struct tc_rec *r)
{
	tc_rec_write(ctx, r);
}

int tc_decode_snapshot(const struct tc_decode_args *a)
{
	struct tc_snapshot *ss;
	struct tc_rec_out out;
	struct tc_err e;
	struct tc_cs_run run = { .buffer = a->buffer, .what = a->packets ? TC_ETM_PACKETS
									 : TC_ETM_ELEMENTS,
				 .want_id = a->any_id ? a->want_id : NULL, .emit = emit,
				 .emit_ctx = &out };
	int rc;

	if (a->per_thread)
		tc_fatal("--per-thread is for perf.data recordings, not snapshot directories");
	if (tc_snapshot_open(&ss, a->input, &e))
		tc_fatal("%s", e.msg);
	tc_rec_out_init(&out, stdout, tc_g.json);
	rc = tc_cs_ss_decode(ss, &run, &e);
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
	return run.errors ? TC_EXIT_DATA : TC_EXIT_OK;
}
