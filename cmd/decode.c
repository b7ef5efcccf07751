/* tracectl decode: a perf.data recording (Intel PT or CoreSight) or an OpenCSD snapshot
 * directory, decoded into instruction ranges (or branches, or packets) as text or JSON
 * lines, one stream per thread (--per-thread), or call-stack outputs (--format). The input
 * side is a decode session (decoders/session.h), run here for report and diff too. */
#include <stdlib.h>

#include <string.h>

#include "cmd/kernel_opts.h"
#include "cmd/progress.h"
#include "cmd/tracectl.h"
#include "decoders/session.h"
#include "lib/analysis/analysis.h"
#include "lib/output/autofdo.h"
#include "lib/output/bolt.h"
#include "lib/output/branch_profile.h"
#include "lib/output/listing.h"
#include "lib/output/streams.h"
#include "lib/util/diag.h"
#include "lib/util/parse.h"

enum { OPT_PACKETS = TC_OPT_CMD_BASE, OPT_PER_THREAD, OPT_BUFFER, OPT_ID, OPT_FORMAT, OPT_SYMFS,
       OPT_BRANCHES, OPT_FORCE, OPT_DSO,
       OPT_VMLINUX, OPT_KALLSYMS_, OPT_KCORE_ /* kept in this order (cmd/kernel_opts.h) */ };

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
	  "(flame graph); or a profile for an optimiser: autofdo (simpleperf inject's text), "
	  "bolt (perf2bolt -pa's branches)" },
	{ "dso", OPT_DSO, 1, "BINARY", "--format autofdo or bolt: the profile of this binary only "
	  "(its recorded path or file name)" },
	{ "symfs", OPT_SYMFS, 1, "DIR", "find traced binaries under DIR (recorded paths)" },
	TC_KERNEL_OPT_ROWS(OPT_VMLINUX),
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
	struct tc_branch_profile *bp;	/* --format autofdo or bolt */
	const char *dso;
};

/* The formats written from a branch profile (lib/output/branch_profile.h). */
static bool profile_format(const char *f)
{
	return f && (!strcmp(f, "autofdo") || !strcmp(f, "bolt"));
}

static int on_opt(int key, const char *arg, void *ctx)
{
	struct decode *d = ctx;

	if (tc_kernel_opt(key, OPT_VMLINUX, arg, &d->a.kernel))
		return 0;
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
		if (!profile_format(arg) &&
		    tc_analysis_format_parse(arg, &(enum tc_analysis_format){ 0 }))
			return tc_msg_usage_error(tc_cmd_find("decode"), "bad format '%s' (folded, "
					      "chrome, svg, autofdo or bolt)", arg);
		d->format = arg;
		break;
	case OPT_DSO: d->dso = arg; break;
	}
	return 0;
}

static void emit(void *ctx, const struct tc_rec *r)
{
	struct decode *d = ctx;

	if (d->an)
		tc_analysis_feed(d->an, r);	/* out of memory shows at tc_analysis_finish */
	else if (d->bp)
		tc_branch_profile_feed(d->bp, r);	/* ENOMEM shows at its finish */
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

/* Does the binary's recorded path, or its file name, say name? */
static bool dso_is(const char *path, const char *name)
{
	const char *base = strrchr(path, '/');

	return !strcmp(path, name) || (base && !strcmp(base + 1, name));
}

/* The binaries the trace ran in, for messages. */
static void dso_names(const struct tc_branch_profile_bin *b, size_t n, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < n && strlen(buf) + 8 < len; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? ", " : "", b[i].dso);
	if (!n)
		snprintf(buf, len, "none that was found (--symfs gives where they are)");
}

/* --format autofdo or bolt: the binaries (--dso: that one) written from the profile. */
static void write_profile(struct decode *d)
{
	const struct tc_branch_profile_bin *bins, *pick = NULL;
	size_t n, matches = 0;
	char names[1024];
	bool bolt = !strcmp(d->format, "bolt");
	int rc;

	if (tc_branch_profile_finish(d->bp, &bins, &n))
		tc_fatal("%s profile: out of memory", d->format);
	dso_names(bins, n, names, sizeof(names));
	for (size_t i = 0; d->dso && i < n; i++)
		if (dso_is(bins[i].dso, d->dso)) {
			pick = pick ? pick : &bins[i];
			matches++;
		}
	if (d->dso && !matches)
		tc_fatal("--dso %s: the trace ran in no such binary; it ran in %s", d->dso, names);
	if (matches > 1)
		tc_fatal("--dso %s names %zu binaries (different build ids or paths): give its "
			 "recorded path; the trace ran in %s", d->dso, matches, names);
	if (bolt && !pick && n != 1)
		tc_fatal("--format bolt writes the profile of one binary: choose it with --dso "
			 "(the trace ran in %s)", names);
	if (bolt && !pick)
		pick = &bins[0];
	rc = bolt ? tc_bolt_write(pick, stdout) :
	     pick ? tc_autofdo_write(pick, 1, stdout) : tc_autofdo_write(bins, n, stdout);
	if (rc)
		tc_fatal("%s output could not be written in full (out of memory or a write error)",
			 d->format);
	if (pick)
		tc_status("tracectl decode: %s profile of %s (build id %s)", d->format, pick->dso,
			  *pick->build_id ? pick->build_id : "none");
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
	if (d.dso && !profile_format(d.format))
		return tc_msg_usage_error(cmd, "--dso chooses the binary of --format autofdo or "
					  "bolt"),
		       TC_EXIT_USAGE;
	if (d.force && !d.per_thread)
		return tc_msg_usage_error(cmd, "--force is for --per-thread DIR"), TC_EXIT_USAGE;
	if (d.a.packets && d.a.branches)
		return tc_msg_usage_error(cmd, "--packets and --branches exclude each other"),
		       TC_EXIT_USAGE;
	tc_listing_init(&d.out, stdout, tc_g.json);
	if (d.per_thread && !(d.streams = tc_streams_open(d.per_thread, tc_g.json, d.force, &e)))
		tc_fatal("%s", e.msg);
	d.a.kernel.sysfs_root = tc_g.sysfs_root;	/* modules' sections on this machine */
	if (!(dec = tc_session_new(&d.a, emit, &d)))
		tc_fatal("out of memory");
	if (!d.streams && !d.format) {
		d.out.sym = tc_session_symbolize;
		d.out.sym_ctx = dec;
	}
	if (profile_format(d.format)) {
		d.bp = tc_branch_profile_new(&(struct tc_branch_profile_opts){
			.file = tc_session_file, .read = tc_session_read, .ctx = dec });
		if (!d.bp)
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
	if (d.bp)
		write_profile(&d);
	tc_branch_profile_free(d.bp);
	tc_session_free(dec);
	if (tc_streams_close(d.streams, &nstreams, d.stream_failed ? NULL : &d.serr) ||
	    d.stream_failed)
		tc_fatal("%s", d.serr.msg);
	if (d.per_thread)
		tc_status("tracectl decode: %u streams written to %s", nstreams, d.per_thread);
	return problems ? TC_EXIT_DATA : TC_EXIT_OK;
}
