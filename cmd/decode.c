/* tracectl decode: a perf.data recording (Intel PT or CoreSight) or an OpenCSD snapshot
 * directory, decoded into instruction ranges (or branches, or packets) as text or JSON
 * lines, one stream per thread (--per-thread), or call-stack outputs (--format). The input
 * side is a decode session (decoders/session.h), run here for report and diff too. */
#include <stdlib.h>

#include <string.h>
#include <unistd.h>
#include <stdint.h>

#include "cmd/prof_args.h"
#include "cmd/kernel_opts.h"
#include "cmd/progress.h"
#include "cmd/run_opts.h"
#include "cmd/tracectl.h"
#include "decoders/itrace.h"
#include "decoders/rec_filter.h"
#include "decoders/session.h"
#include "lib/analysis/analysis.h"
#include "lib/output/autofdo.h"
#include "lib/output/bolt.h"
#include "lib/output/branch_profile.h"
#include "lib/output/call_trace.h"
#include "lib/output/lanes.h"
#include "lib/output/listing.h"
#include "lib/output/show_events.h"
#include "lib/output/streams.h"
#include "lib/util/diag.h"
#include "lib/util/parse.h"

enum { OPT_PACKETS = TC_OPT_CMD_BASE, OPT_PER_THREAD, OPT_BUFFER, OPT_ID, OPT_FORMAT, OPT_SYMFS,
       OPT_BRANCHES, OPT_FORCE, OPT_DSO, OPT_TIME, OPT_CPU, OPT_PID, OPT_TID, OPT_COMM,
       OPT_SYM, OPT_ITRACE, OPT_CALL_TRACE, OPT_SHOW_EVENTS, OPT_NO_COMM,
       OPT_VMLINUX, OPT_KALLSYMS_, OPT_KCORE_ /* kept in this order (cmd/kernel_opts.h) */,
       OPT_JOBS, OPT_DECODER_ /* kept in this order (cmd/run_opts.h) */ };

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
	{ "no-comm", OPT_NO_COMM, 0, NULL, "--format folded or svg: no root frame with the "
	  "command name (comm) of each stack" },
	{ "fields", 'F', 1, "F[,F]", "list these fields, perf script's names: comm, pid, tid, "
	  "cpu, time, event, flags, insncnt, ip, sym, symoff, dso, dsoff, addr, and offset, id "
	  "(text in perf script's layout; JSON: these keys)" },
	{ "itrace", OPT_ITRACE, 1, "LETTERS", "synthesize perf's --itrace kinds only: i instructions, "
	  "b branches, c calls, r returns, e errors (e.g. --itrace=cre)" },
	{ "call-trace", OPT_CALL_TRACE, 0, NULL, "calls and returns, one line each, the function "
	  "indented by call depth (perf script --call-trace)" },
	{ "show-events", OPT_SHOW_EVENTS, 0, NULL, "list the file's side-band and sample records "
	  "(COMM, MMAP, FORK, EXIT, SWITCH, AUX, LOST...) instead of decoding" },
	{ "time", OPT_TIME, 1, "START,END", "keep records with perf time in [START,END] (seconds "
	  "as perf script prints them; either may be empty)" },
	{ "cpu", OPT_CPU, 1, "LIST", "keep records of these CPUs (0-3,6)" },
	{ "pid", OPT_PID, 1, "LIST", "keep records of these processes" },
	{ "tid", OPT_TID, 1, "LIST", "keep records of these threads" },
	{ "comm", OPT_COMM, 1, "NAME[,NAME]", "keep records of threads with these command names" },
	{ "dso", OPT_DSO, 1, "NAME[,NAME]", "keep records at addresses in these binaries (recorded "
	  "path or file name); --format autofdo or bolt: write these binaries' profiles" },
	{ "sym", OPT_SYM, 1, "NAME[,NAME]", "keep records at addresses in these functions" },
	{ "symfs", OPT_SYMFS, 1, "DIR", "find traced binaries under DIR (recorded paths)" },
	TC_KERNEL_OPT_ROWS(OPT_VMLINUX),
	TC_RUN_OPT_ROWS(OPT_JOBS),
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
	struct tc_rec_filter *filter;	/* --time, --cpu, --pid, --tid, --comm, --dso, --sym */
	struct tc_itrace *it;		/* --itrace, --call-trace */
	unsigned itrace;
	bool call_trace, show_events;
	struct tc_call_trace ct;
	struct tc_show_events se;
	bool no_comm;			/* --no-comm */
	unsigned fields;		/* -F, lib/output/listing.h; 0 the default listing */
	struct tc_session *dec;
	struct tc_lanes *lanes;		/* --jobs: the listing made on the decoding threads */
};

static const struct { int key; enum tc_rec_filter_key k; } filter_keys[] = {
	{ OPT_TIME, TC_REC_FILTER_TIME }, { OPT_CPU, TC_REC_FILTER_CPU },
	{ OPT_PID, TC_REC_FILTER_PID }, { OPT_TID, TC_REC_FILTER_TID },
	{ OPT_COMM, TC_REC_FILTER_COMM }, { OPT_DSO, TC_REC_FILTER_DSO },
	{ OPT_SYM, TC_REC_FILTER_SYM },
};

/* A filter option of decode, report or diff into *f (made on first use); the usage
 * error's code for a bad value. */
int tc_decode_filter_opt(const struct tc_cmd *cmd, struct tc_rec_filter **f,
			 enum tc_rec_filter_key k, const char *arg)
{
	struct tc_err e;

	if (!*f && !(*f = tc_rec_filter_new()))
		tc_fatal("out of memory");
	if (tc_rec_filter_add(*f, k, arg, &e))
		return tc_msg_usage_error(cmd, "%s", e.msg);
	return 0;
}

/* The formats written from a branch profile (lib/output/branch_profile.h). */
static bool profile_format(const char *f)
{
	return f && (!strcmp(f, "autofdo") || !strcmp(f, "bolt"));
}

static int on_opt(int key, const char *arg, void *ctx)
{
	struct decode *d = ctx;
	int rc;

	if (tc_kernel_opt(key, OPT_VMLINUX, arg, &d->a.kernel))
		return 0;
	if (tc_run_opt(tc_cmd_find("decode"), key, OPT_JOBS, arg, &d->a, &rc))
		return rc;
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
	case OPT_ITRACE: {
		struct tc_err e;

		if (tc_itrace_parse(arg, &d->itrace, &e))
			return tc_msg_usage_error(tc_cmd_find("decode"), "%s", e.msg);
		break;
	}
	case OPT_CALL_TRACE: d->call_trace = true; break;
	case OPT_SHOW_EVENTS: d->show_events = true; break;
	case OPT_NO_COMM: d->no_comm = true; break;
	case 'F': {
		char bad[64];

		if (tc_listing_fields_parse(arg, &d->fields, bad, sizeof(bad)))
			return tc_msg_usage_error(tc_cmd_find("decode"), "-F: unknown field '%s' "
						  "(known: %s)", bad, tc_listing_field_names());
		break;
	}
	default:
		for (size_t i = 0; i < sizeof(filter_keys) / sizeof(filter_keys[0]); i++)
			if (filter_keys[i].key == key)
				return tc_decode_filter_opt(tc_cmd_find("decode"), &d->filter,
							    filter_keys[i].k, arg);
	}
	return 0;
}

static void write_rec(void *ctx, const struct tc_rec *r)
{
	struct decode *d = ctx;

	if (d->call_trace)
		tc_call_trace_write(&d->ct, r);
	else if (d->an)
		tc_analysis_feed(d->an, r);	/* out of memory shows at tc_analysis_finish */
	else if (d->bp)
		tc_branch_profile_feed(d->bp, r);	/* ENOMEM shows at its finish */
	else if (!d->streams)
		tc_listing_write(&d->out, r);
	else if (!d->stream_failed && tc_streams_write(d->streams, r, &d->serr))
		d->stream_failed = 1;
}

/* After --itrace: the filter, then the writer. The analyses and branch profiles follow a
 * thread's flow, so they are told where the filter left records out. */
static void filtered(void *ctx, const struct tc_rec *r)
{
	struct decode *d = ctx;

	if (d->an || d->bp) {
		if (tc_rec_filter_pass(d->filter, r, write_rec, d))
			tc_fatal("out of memory");
	} else if (tc_rec_filter_keep(d->filter, r)) {
		write_rec(d, r);
	}
}

/* The decoder's records: --itrace's choice, the filter, the writer. */
static void emit(void *ctx, const struct tc_rec *r)
{
	struct decode *d = ctx;

	if (d->it)
		tc_itrace_feed(d->it, r);
	else
		filtered(d, r);
}

/* Runs of ranges straight to the analysis (no --itrace or filter between), as report's: it
 * reads no offset. */
static void emit_ranges(void *ctx, const struct tc_rec *r, size_t n)
{
	struct decode *d = ctx;

	tc_analysis_feed_ranges(d->an, r, n);	/* out of memory shows at tc_analysis_finish */
}

/* --show-events: a perf.data record, not decoded; the --cpu, --pid, --tid and --time
 * filters apply to what it carries. */
static void show_record(void *ctx, const struct tc_perf_data_record *pr)
{
	struct decode *d = ctx;
	/* what the filter looks at: a sample's ip is its address */
	struct tc_rec r = { .type = TC_REC_OTHER, .id = -1, .cpu = -1, .pid = -1, .tid = -1,
			    .offset = pr->offset, .has_time = pr->sid.has_time,
			    .time = pr->sid.time };

	if (pr->sid.has_cpu)
		r.cpu = (int)pr->sid.cpu;
	if (pr->sid.has_tid) {
		r.pid = (int)pr->sid.pid;
		r.tid = (int)pr->sid.tid;
	}
	if (pr->type == PERF_RECORD_SAMPLE && pr->u.sample.has_ip) {
		r.type = TC_REC_ADDR_NACC;
		r.start = pr->u.sample.ip;
	}
	if (tc_rec_filter_keep(d->filter, &r))
		tc_show_events_write(&d->se, pr);
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

/* decode's listing while it batches records (not to a terminal, nothing else on stdout):
 * handed on before the messages that follow the records, or at exit after a fatal error. */
static struct tc_listing *batched;

static void flush_batched(void)
{
	if (batched) {
		tc_listing_flush(batched);
		tc_listing_batch(batched, false);
		batched = NULL;
	}
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

	flush_batched();
	for (size_t i = 0; i < m.n; i++) {
		if (m.msgs[i].level == TC_DIAG_STATUS)
			tc_status("%s", m.msgs[i].text);
		else
			tc_warning("%s", m.msgs[i].text);
	}
	/* a warning is a problem with the input: exit 3 (man tracectl), whoever gave it */
	if (problems == 0 && tc_diag_warnings(&m))
		problems = 1;
	tc_diag_free(&m);
	if (problems < 0)
		tc_fatal("%s", e.msg);
	return problems;
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

/* --format autofdo or bolt: the binaries (--dso: those) written from the profile; true if
 * ranges were left out for want of their binary (warned). */
static bool write_profile(struct decode *d)
{
	struct tc_diag m = { 0 };
	uint64_t dropped;
	const struct tc_branch_profile_bin *bins;
	const char *const *want = d->filter ? tc_rec_filter_dsos(d->filter) : NULL;
	struct tc_branch_profile_bin *pick = NULL;
	size_t n, npick = 0;
	char names[1024];
	bool bolt = !strcmp(d->format, "bolt");
	int rc;

	if (tc_branch_profile_finish(d->bp, &bins, &n))
		tc_fatal("%s profile: out of memory", d->format);
	/* before any refusal below: it may be why no binary is there */
	dropped = tc_branch_profile_warn(d->bp, d->format, &m);
	for (size_t i = 0; i < m.n; i++)
		tc_warning("%s", m.msgs[i].text);
	tc_diag_free(&m);
	dso_names(bins, n, names, sizeof(names));
	for (size_t w = 0; want && want[w]; w++) {
		size_t matches = 0;

		for (size_t i = 0; i < n; i++)
			if (tc_rec_filter_dso_is(bins[i].dso, want[w])) {
				if (!matches &&
				    !(pick = reallocarray(pick, npick + 1, sizeof(*pick))))
					tc_fatal("out of memory");
				if (!matches++)
					pick[npick++] = bins[i];
			}
		if (!matches)
			tc_fatal("--dso %s: the trace ran in no such binary; it ran in %s", want[w],
				 names);
		if (matches > 1)
			tc_fatal("--dso %s names %zu binaries (different build ids or paths): give "
				 "its recorded path; the trace ran in %s", want[w], matches, names);
	}
	if (bolt && npick > 1)
		tc_fatal("--format bolt writes the profile of one binary: give one --dso");
	if (bolt && !npick && n != 1)
		tc_fatal("--format bolt writes the profile of one binary: choose it with --dso "
			 "(the trace ran in %s)", names);
	rc = bolt ? tc_bolt_write(npick ? pick : &bins[0], stdout) :
	     npick ? tc_autofdo_write(pick, npick, stdout) : tc_autofdo_write(bins, n, stdout);
	if (rc)
		tc_fatal("%s output could not be written in full (out of memory or a write error)",
			 d->format);
	for (size_t i = 0; i < npick; i++)
		tc_status("tracectl decode: %s profile of %s (build id %s)", d->format, pick[i].dso,
			  *pick[i].build_id ? pick[i].build_id : "none");
	free(pick);
	return dropped != 0;
}

/* The record writer's symbols, thread names and fields, from the session. */
static void listing_setup(struct tc_listing *o, struct tc_session *dec, unsigned fields)
{
	o->sym = tc_session_symbolize;
	o->sym_ctx = dec;
	o->comm = tc_session_comm_rec;
	o->comm_ctx = dec;
	o->fields = fields;
}

static int decode_main(struct decode *d, int argc, char **argv);

/* The filter outlives every return of decode_main, usage errors included. */
int do_decode(int argc, char **argv)
{
	struct decode d = { .a.input = "perf.data", .a.jobs = tc_run_opt_jobs() };
	int rc = decode_main(&d, argc, argv);

	tc_rec_filter_free(d.filter);
	return rc;
}

static int decode_main(struct decode *d, int argc, char **argv)
{
	const struct tc_cmd *cmd = tc_cmd_find("decode");
	struct tc_session *dec;
	struct tc_err e;
	int i = tc_opts_parse(cmd, argc, argv, on_opt, d), problems;
	unsigned nstreams = 0;

	if (i < 0)
		return TC_EXIT_USAGE;
	if (i < argc)
		return tc_msg_usage_error(cmd, "unexpected argument '%s'", argv[i]), TC_EXIT_USAGE;
	if (d->format && (d->a.packets || d->a.branches || d->per_thread))
		return tc_msg_usage_error(cmd,
					  "--format takes instruction ranges: not with --packets, "
					  "--branches or --per-thread"),
		       TC_EXIT_USAGE;
	if (d->filter && profile_format(d->format))
		tc_rec_filter_dso_off(d->filter);	/* --dso chooses the profiles written */
	if ((d->call_trace || d->itrace) &&
	    (d->a.packets || d->a.branches || d->per_thread || d->format))
		return tc_msg_usage_error(cmd, "--%s lists records of its own: not with --packets, "
					  "--branches, --per-thread or --format",
					  d->call_trace ? "call-trace" : "itrace"),
		       TC_EXIT_USAGE;
	if (d->show_events && (d->a.packets || d->a.branches || d->per_thread || d->format ||
			       d->call_trace || d->itrace))
		return tc_msg_usage_error(cmd, "--show-events lists the file's records instead of "
					  "decoding: not with --packets, --branches, --per-thread, "
					  "--format, --itrace or --call-trace"),
		       TC_EXIT_USAGE;
	if (d->call_trace)
		d->itrace = TC_ITRACE_CALLS | TC_ITRACE_RETURNS;
	if (d->itrace & TC_ITRACE_BRANCHES)
		d->a.branches = true;	/* the decoder's own branches */
	if (d->fields && (d->format || d->call_trace || d->show_events))
		return tc_msg_usage_error(cmd, "-F chooses the fields of the listing: not with "
					  "--format, --call-trace or --show-events"), TC_EXIT_USAGE;
	if (d->no_comm && (!d->format || (strcmp(d->format, "folded") && strcmp(d->format, "svg"))))
		return tc_msg_usage_error(cmd, "--no-comm is for --format folded or svg"),
		       TC_EXIT_USAGE;
	if (d->force && !d->per_thread)
		return tc_msg_usage_error(cmd, "--force is for --per-thread DIR"), TC_EXIT_USAGE;
	if (d->a.packets && d->a.branches)
		return tc_msg_usage_error(cmd, "--packets and --branches exclude each other"),
		       TC_EXIT_USAGE;
	tc_listing_init(&d->out, stdout, tc_g.json);
	if (!d->call_trace && !d->show_events && !isatty(STDOUT_FILENO)) {
		tc_listing_batch(&d->out, true);
		batched = &d->out;
		atexit(flush_batched);
	}
	if (d->show_events) {
		tc_show_events_init(&d->se, stdout, tc_g.json);
		d->a.record = show_record;
		d->a.record_ctx = d;
	}
	if (d->per_thread &&
	    !(d->streams = tc_streams_open(d->per_thread, tc_g.json, d->force, &e)))
		tc_fatal("%s", e.msg);
	/* --jobs with the listing alone on stdout: formatted on the decoding threads */
	if (d->a.jobs > 1 && !d->format && !d->streams && !d->filter && !d->itrace &&
	    !d->call_trace && !d->show_events) {
		d->lanes = tc_lanes_new(&(struct tc_lanes_opts){
			.f = stdout, .fd = STDOUT_FILENO, .json = tc_g.json, .fields = d->fields });
		if (!d->lanes)
			tc_fatal("out of memory");
		d->a.writer = tc_lanes_writer(d->lanes);
	}
	/* an analysis alone (folded, svg, chrome): as report's, ranges in runs without their
	 * offsets (Intel PT: the skim, pt_skim.h; with --jobs a worker decodes, pt_pipe.c) */
	if (d->format && !profile_format(d->format) && !d->filter && !d->itrace &&
	    !d->call_trace && !d->streams && !d->show_events && !d->a.branches && !d->a.packets) {
		d->a.emit_ranges = emit_ranges;
		d->a.no_offsets = true;
	}
	if (!(d->dec = dec = tc_session_new(&d->a, emit, d)))
		tc_fatal("out of memory");
	if (d->lanes)
		tc_lanes_comm(d->lanes, tc_session_comm_rec, dec);
	if (!d->format)
		listing_setup(d->streams ? tc_streams_listing(d->streams) : &d->out, dec, d->fields);
	/* the writer keeps the symbols' forms while the decoder's address spaces stay */
	if (!d->format && tc_listing_keep_syms(d->streams ? tc_streams_listing(d->streams) : &d->out,
					       tc_session_space, dec))
		tc_fatal("out of memory");
	if (d->filter)
		tc_rec_filter_source(d->filter, &(struct tc_rec_filter_src){
			.sym = tc_session_sym, .dso = tc_session_dso, .comm = tc_session_comm_rec,
			.ctx = dec });
	if (d->itrace && !(d->it = tc_itrace_new(d->itrace, filtered, d)))
		tc_fatal("out of memory");
	if (d->it)
		tc_itrace_read(d->it, tc_session_read, dec);
	if (d->call_trace) {
		tc_call_trace_init(&d->ct, stdout, tc_g.json);
		d->ct.sym = tc_session_sym;
		d->ct.symbolize = tc_session_symbolize;
		d->ct.ctx = dec;
		d->ct.other = &d->out;
	}
	if (profile_format(d->format)) {
		d->bp = tc_branch_profile_new(&(struct tc_branch_profile_opts){
			.file = tc_session_file, .read = tc_session_read, .dso = tc_session_dso,
			.ctx = dec });
		if (!d->bp)
			tc_fatal("out of memory");
	} else if (d->format) {
		struct tc_analysis_opts o = { .f = stdout, .tid = -1, .cpu = -1,
					.sym = tc_session_sym, .sym_ctx = dec,
					.space = tc_session_space, .space_ctx = dec,
					.dso = tc_session_dso, .dso_ctx = dec,
					.comm = tc_session_comm, .comm_ctx = dec,
					.comm_roots = !d->no_comm,
					.title = "tracectl decode (instructions)" };

		tc_analysis_format_parse(d->format, &o.format);
		if (!(d->an = tc_analysis_new(&o)))
			tc_fatal("out of memory");
	}
	problems = tc_decode_run(dec);
	tc_lanes_free(d->lanes);
	d->lanes = NULL;
	if (d->it && tc_itrace_finish(d->it))
		tc_fatal("out of memory");
	tc_itrace_free(d->it);
	if (d->an && tc_analysis_finish(d->an))
		tc_fatal("%s output could not be written in full (out of memory or a write error)",
			 d->format);
	tc_analysis_free(d->an);
	if (d->bp && write_profile(d))
		problems++;
	tc_branch_profile_free(d->bp);
	tc_listing_fini(&d->out);
	tc_session_free(dec);
	if (tc_streams_close(d->streams, &nstreams, d->stream_failed ? NULL : &d->serr) ||
	    d->stream_failed)
		tc_fatal("%s", d->serr.msg);
	if (d->per_thread)
		tc_status("tracectl decode: %u streams written to %s", nstreams, d->per_thread);
	return problems ? TC_EXIT_DATA : TC_EXIT_OK;
}
