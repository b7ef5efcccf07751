/* tracectl decode: a perf.data recording (Intel PT or CoreSight) or an OpenCSD snapshot
 * directory, decoded into instruction ranges (or branches, or packets) as text or JSON
 * lines, one stream per thread (--per-thread), or call-stack outputs (--format). The input
 * side is a decode session (decoders/session.h), run here for report and diff too. */
#include <stdlib.h>

#include <string.h>

#include "cmd/progress.h"
#include "cmd/tracectl.h"
#include "decoders/session.h"
#include "lib/analysis/analysis.h"
#include "lib/output/autofdo.h"
#include "lib/output/listing.h"
#include "lib/output/streams.h"
#include "lib/util/diag.h"
#include "lib/util/parse.h"

enum { OPT_PACKETS = TC_OPT_CMD_BASE, OPT_PER_THREAD, OPT_BUFFER, OPT_ID, OPT_FORMAT, OPT_SYMFS,
       OPT_BRANCHES, OPT_FORCE };

const struct tc_opt decode_opts[] = {
	{ "input", 'i', 1, "FILE", "read FILE (default perf.data; - for a pipe on stdin) or an "
	  "OpenCSD snapshot directory" },
	{ "packets", OPT_PACKETS, 0, NULL, "list trace packets" },
	{ "branches", OPT_BRANCHES, 0, NULL, "list taken branches (perf's convention) instead of "
	  "ranges" },
	{ "per-thread", OPT_PER_THREAD, 1, "DIR", "write one stream per thread into DIR" },
	{ "force", OPT_FORCE, 0, NULL, "--per-thread: write into a DIR that is not empty, "
	  "overwriting its files of the same names" },
	{ "format", OPT_FORMAT, 1, "FMT", "write call stacks: folded, chrome (trace JSON) or svg "
	  "(flame graph); or autofdo (simpleperf inject's text)" },
	{ "symfs", OPT_SYMFS, 1, "DIR", "find traced binaries under DIR (recorded paths)" },
	{ "buffer", OPT_BUFFER, 1, "NAME", "snapshot: decode trace buffer NAME (default the first)" },
	{ "id", OPT_ID, 1, "ID[,ID]", "CoreSight: only these trace IDs (repeatable)" },
	{ 0 },
};

struct decode {
	struct tc_session_opts a;
	const char *per_thread, *format;
	bool force;
	struct tc_listing out;
	struct tc_streams *streams;
	struct tc_err serr;
	int stream_failed;
	struct tc_analysis *an;
	struct tc_autofdo *afdo;
};

static int on_opt(int key, const char *arg, void *ctx)
{
	struct decode *d = ctx;

	switch (key) {
	case 'i': d->a.input = arg; break;
	case OPT_PACKETS: d->a.packets = true; break;
	case OPT_BRANCHES: d->a.branches = true; break;
	case OPT_PER_THREAD: d->per_thread = arg; break;
	case OPT_FORCE: d->force = true; break;
	case OPT_SYMFS: d->a.symfs = arg; break;
	case OPT_BUFFER: d->a.buffer = arg; break;
	case OPT_ID:
		if (tc_parse_trace_ids(arg, d->a.want_id))
			return tc_msg_usage_error(tc_cmd_find("decode"), "bad trace ID list '%s'",
						  arg);
		d->a.any_id = true;
		break;
	case OPT_FORMAT:
		if (strcmp(arg, "autofdo") &&
		    tc_analysis_format_parse(arg, &(enum tc_analysis_format){ 0 }))
			return tc_msg_usage_error(tc_cmd_find("decode"), "bad format '%s' (folded, "
					      "chrome, svg or autofdo)", arg);
		d->format = arg;
		break;
	}
	return 0;
}

static void emit(void *ctx, const struct tc_rec *r)
{
	struct decode *d = ctx;

	if (d->an)
		tc_analysis_feed(d->an, r);	/* out of memory shows at tc_analysis_finish */
	else if (d->afdo)
		tc_autofdo_feed(d->afdo, r);	/* and at tc_autofdo_write */
	else if (!d->streams)
		tc_listing_write(&d->out, r);
	else if (!d->stream_failed && tc_streams_write(d->streams, r, &d->serr))
		d->stream_failed = 1;
}

static void watch_begin(void *ctx)
{
	*(struct tc_progress **)ctx = tc_progress_new();
}

static void watch_buffer(void *ctx, uint64_t offset, uint64_t size)
{
	tc_progress_buffer(*(struct tc_progress **)ctx, offset, size);
}

static void watch_at(void *ctx, uint64_t offset)
{
	tc_progress_at(*(struct tc_progress **)ctx, offset);
}

static void watch_end(void *ctx)
{
	tc_progress_end(*(struct tc_progress **)ctx);
	*(struct tc_progress **)ctx = NULL;
}

/* A write error on stdout stops the reading; it is reported at exit. */
static bool watch_stop(void *ctx)
{
	(void)ctx;
	return ferror(stdout);
}

int tc_decode_run(struct tc_session *s)
{
	struct tc_progress *p = NULL;
	struct tc_session_progress watch = { .begin = watch_begin, .buffer = watch_buffer,
					     .at = watch_at, .end = watch_end,
					     .stop = watch_stop, .ctx = &p };
	struct tc_diag m = { 0 };
	struct tc_err e;
	int problems = tc_session_run(s, &watch, &m, &e);

	for (size_t i = 0; i < m.n; i++) {
		if (m.msgs[i].level == TC_DIAG_STATUS)
			tc_status("%s", m.msgs[i].text);
		else
			tc_warning("%s", m.msgs[i].text);
	}
	tc_diag_free(&m);
	if (problems < 0)
		tc_fatal("%s", e.msg);
	return problems;
}

int do_decode(int argc, char **argv)
{
	const struct tc_cmd *cmd = tc_cmd_find("decode");
	struct decode d = { .a.input = "perf.data" };
	struct tc_session *dec;
	struct tc_err e;
	int i = tc_opts_parse(cmd, argc, argv, on_opt, &d), problems;
	unsigned nstreams = 0;

	if (i < 0)
		return TC_EXIT_USAGE;
	if (i < argc)
		return tc_msg_usage_error(cmd, "unexpected argument '%s'", argv[i]), TC_EXIT_USAGE;
	if (d.format && (d.a.packets || d.a.branches || d.per_thread))
		return tc_msg_usage_error(cmd,
					  "--format takes instruction ranges: not with --packets, "
					  "--branches or --per-thread"),
		       TC_EXIT_USAGE;
	if (d.force && !d.per_thread)
		return tc_msg_usage_error(cmd, "--force is for --per-thread DIR"), TC_EXIT_USAGE;
	if (d.a.packets && d.a.branches)
		return tc_msg_usage_error(cmd, "--packets and --branches exclude each other"),
		       TC_EXIT_USAGE;
	tc_listing_init(&d.out, stdout, tc_g.json);
	if (d.per_thread && !(d.streams = tc_streams_open(d.per_thread, tc_g.json, d.force, &e)))
		tc_fatal("%s", e.msg);
	if (!(dec = tc_session_new(&d.a, emit, &d)))
		tc_fatal("out of memory");
	if (!d.streams && !d.format) {
		d.out.sym = tc_session_symbolize;
		d.out.sym_ctx = dec;
	}
	if (d.format && !strcmp(d.format, "autofdo")) {
		d.afdo = tc_autofdo_new(&(struct tc_autofdo_opts){ .file = tc_session_file,
							     .read = tc_session_read, .ctx = dec });
		if (!d.afdo)
			tc_fatal("out of memory");
	} else if (d.format) {
		struct tc_analysis_opts o = { .f = stdout, .tid = -1, .cpu = -1,
					.sym = tc_session_sym, .sym_ctx = dec,
					.dso = tc_session_dso, .dso_ctx = dec,
					.comm = tc_session_comm, .comm_ctx = dec,
					.title = "tracectl decode (instructions)" };

		tc_analysis_format_parse(d.format, &o.format);
		if (!(d.an = tc_analysis_new(&o)))
			tc_fatal("out of memory");
	}
	problems = tc_decode_run(dec);
	if (d.an && tc_analysis_finish(d.an))
		tc_fatal("%s output could not be written in full (out of memory or a write error)",
			 d.format);
	tc_analysis_free(d.an);
	if (d.afdo && tc_autofdo_write(d.afdo, stdout))
		tc_fatal("autofdo output could not be written in full (out of memory or a write "
			 "error)");
	tc_autofdo_free(d.afdo);
	tc_session_free(dec);
	if (tc_streams_close(d.streams, &nstreams, d.stream_failed ? NULL : &d.serr) ||
	    d.stream_failed)
		tc_fatal("%s", d.serr.msg);
	if (d.per_thread)
		tc_status("tracectl decode: %u streams written to %s", nstreams, d.per_thread);
	return problems ? TC_EXIT_DATA : TC_EXIT_OK;
}
