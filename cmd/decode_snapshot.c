/* tracectl decode -i DIR for an OpenCSD / DS-5 snapshot directory: one trace buffer decoded
 * (the first by default, as trc_pkt_lister does), as instruction ranges and other elements,
 * or as packets (--packets). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../decoders/cs_snapshot.h"
#include "../lib/snapshot.h"
#include "../out/analysis.h"
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

struct ss_out {
	struct tc_rec_out rec;
	struct tc_an *an;	/* --format: records go to the analysis instead */
};

static void emit(void *ctx, const struct tc_rec *r)
{
	struct ss_out *o = ctx;

	if (o->an)
		tc_an_feed(o->an, r);	/* out of memory shows at tc_an_finish */
	else
		tc_rec_write(&o->rec, r);
}

int tc_decode_snapshot(const struct tc_decode_args *a)
{
	struct tc_snapshot *ss;
	struct ss_out out = { .an = NULL };
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
	tc_rec_out_init(&out.rec, stdout, tc_g.json);
	if (a->format) {
		struct tc_an_opts o = { .f = stdout, .tid = -1, .cpu = -1,
					.title = "tracectl decode (instructions)" };

		tc_an_format_parse(a->format, &o.format);
		out.an = tc_an_new(&o);
		if (!out.an)
			tc_fatal("out of memory");
	}
	rc = tc_cs_ss_decode(ss, &run, &e);
	if (out.an && !rc && tc_an_finish(out.an))
		tc_fatal("%s output could not be written in full (out of memory or a write "
			 "error)", a->format);
	tc_an_free(out.an);
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
