/* tracectl report: the exact instruction profile of a recording or snapshot (per function,
 * optionally per thread), written by lib/analysis/profile.c through one analysis (lib/analysis/analysis.h)
 * fed from a decode session (decoders/session.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/kernel_opts.h"
#include "cmd/run_opts.h"
#include "cmd/prof_args.h"
#include "cmd/tracectl.h"
#include "decoders/session.h"
#include "lib/analysis/analysis.h"
#include "lib/analysis/symcache.h"

enum { OPT_SORT = TC_OPT_CMD_BASE, OPT_LIMIT, OPT_TID, OPT_CPU, OPT_COMM, OPT_DSO,
       OPT_PER_THREAD, OPT_SYMFS, OPT_TIME, OPT_PID, OPT_SYM,
       OPT_VMLINUX, OPT_KALLSYMS_, OPT_KCORE_ /* kept in this order (cmd/kernel_opts.h) */,
       OPT_JOBS, OPT_DECODER_ /* kept in this order (cmd/run_opts.h) */ };

const struct tc_opt report_opts[] = {
	{ "input", 'i', 1, "FILE", "read FILE (default perf.data; - for a pipe on stdin) or an "
	  "OpenCSD snapshot directory" },
	{ "sort", OPT_SORT, 1, "KEY", "order rows by self (default), total, calls or name" },
	{ "limit", OPT_LIMIT, 1, "N", "at most N functions per table (0: all)" },
	{ "time", OPT_TIME, 1, "START,END", "count only what has perf time in [START,END] "
	  "(seconds; either may be empty)" },
	{ "cpu", OPT_CPU, 1, "LIST", "count only what ran on these CPUs (0-3,6)" },
	{ "pid", OPT_PID, 1, "LIST", "count only these processes" },
	{ "tid", OPT_TID, 1, "LIST", "count only these threads" },
	{ "comm", OPT_COMM, 1, "NAME[,NAME]", "count only threads with these command names" },
	{ "dso", OPT_DSO, 1, "NAME[,NAME]", "count only code in these binaries (recorded path or "
	  "file name)" },
	{ "sym", OPT_SYM, 1, "NAME[,NAME]", "count only code in these functions" },
	{ "per-thread", OPT_PER_THREAD, 0, NULL, "one table per thread" },
	{ "symfs", OPT_SYMFS, 1, "DIR", "find traced binaries under DIR (recorded paths)" },
	TC_KERNEL_OPT_ROWS(OPT_VMLINUX),
	TC_RUN_OPT_ROWS(OPT_JOBS),
	{ 0 },
};

int tc_report_sort_parse(const char *s, enum tc_profile_sort *out)
{
	static const char *const names[] = { [TC_PROFILE_BY_SELF] = "self",
		[TC_PROFILE_BY_TOTAL] = "total", [TC_PROFILE_BY_CALLS] = "calls",
		[TC_PROFILE_BY_NAME] = "name" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i])) {
			*out = (enum tc_profile_sort)i;
			return 0;
		}
	return -1;
}

int tc_report_parse_count(const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		return -1;
	*out = v;
	return 0;
}

int tc_report_view_opt(const struct tc_cmd *cmd, bool sort, const char *arg,
		       struct tc_profile_view *view)
{
	long v;

	if (sort) {
		if (tc_report_sort_parse(arg, &view->sort))
			return tc_msg_usage_error(
				cmd, "bad sort key '%s' (self, total, calls or name)", arg);
	} else {
		if (tc_report_parse_count(arg, &v))
			return tc_msg_usage_error(cmd, "bad --limit '%s'", arg);
		view->limit = (size_t)v;
	}
	return 0;
}

struct feed {
	struct tc_analysis **an;
	struct tc_rec_filter *filter;
	struct tc_session *d;
	struct tc_symcache *cache;	/* the filter's symbols and dsos (--sym, --dso) */
};

static int filter_sym(void *ctx, int pid, uint64_t addr, const char **name, uint64_t *start)
{
	return tc_symcache_sym(((struct feed *)ctx)->cache, pid, addr, name, start);
}

static const char *filter_dso(void *ctx, int pid, uint64_t addr)
{
	return tc_symcache_dso(((struct feed *)ctx)->cache, pid, addr);
}

static const char *filter_comm(void *ctx, const struct tc_rec *r)
{
	return tc_session_comm_rec(((struct feed *)ctx)->d, r);
}

static void feed_one(void *ctx, const struct tc_rec *r)
{
	tc_analysis_feed(ctx, r);	/* out of memory shows at tc_analysis_finish */
}

static void feed_all(void *ctx, const struct tc_rec *r)
{
	tc_analysis_feed(*((struct feed *)ctx)->an, r);	/* as feed_one */
}

static void feed_ranges(void *ctx, const struct tc_rec *r, size_t n)
{
	tc_analysis_feed_ranges(*((struct feed *)ctx)->an, r, n);	/* as feed_one */
}

/* The filter (decoders/rec_filter.h) between the decoder and the analysis. */
static void feed(void *ctx, const struct tc_rec *r)
{
	struct feed *f = ctx;

	tc_symcache_refresh(f->cache);
	if (tc_rec_filter_pass(f->filter, r, feed_one, *f->an))
		tc_fatal("out of memory");
}

int tc_report_run(const struct tc_session_opts *a, struct tc_analysis_opts *o,
		  struct tc_rec_filter *filter, struct tc_analysis **out,
		  struct tc_session **dec)
{
	struct tc_session *d;
	struct feed f = { out, filter, NULL, NULL };
	struct tc_session_opts sa = *a;
	int problems;

	/* The analysis needs the session's symbols and the session the analysis to feed: the
	 * session comes first, feeding whatever *out holds once it runs. */
	sa.kernel.sysfs_root = tc_g.sysfs_root;	/* modules' sections on this machine */
	if (!filter) {	/* runs of ranges straight to the analysis, which reads no offset */
		sa.emit_ranges = feed_ranges;
		sa.no_offsets = true;
	}
	if (!(f.d = d = tc_session_new(&sa, filter ? feed : feed_all, &f)))
		tc_fatal("out of memory");
	if (filter) {
		if (!(f.cache = tc_symcache_new(&(struct tc_symcache_opts){
			      .sym = tc_session_sym, .sym_ctx = d, .dso = tc_session_dso,
			      .dso_ctx = d, .space = tc_session_space, .space_ctx = d })))
			tc_fatal("out of memory");
		tc_rec_filter_source(filter, &(struct tc_rec_filter_src){
			.sym = filter_sym, .dso = filter_dso, .comm = filter_comm, .ctx = &f });
	}
	o->sym = tc_session_sym;
	o->sym_ctx = d;
	o->space = tc_session_space;
	o->space_ctx = d;
	o->dso = tc_session_dso;
	o->dso_ctx = d;
	o->comm = tc_session_comm;
	o->comm_ctx = d;
	if (!(*out = tc_analysis_new(o)))
		tc_fatal("out of memory");
	problems = tc_decode_run(d);
	if (tc_analysis_finish(*out))
		tc_fatal("the profile could not be completed (out of memory or a write error)");
	if (filter)	/* the filter is not asked again: its source goes */
		tc_rec_filter_source(filter, &(struct tc_rec_filter_src){ .ctx = NULL });
	tc_symcache_free(f.cache);
	*dec = d;
	return problems;
}

struct report {
	struct tc_session_opts a;
	struct tc_analysis_opts o;
	struct tc_rec_filter *filter;
};



static int on_opt(int key, const char *arg, void *ctx)
{
	const struct tc_cmd *cmd = tc_cmd_find("report");
	struct report *r = ctx;
	int rc;

	if (tc_run_opt(cmd, key, OPT_JOBS, arg, &r->a, &rc))
		return rc;
	if (tc_kernel_opt(key, OPT_VMLINUX, arg, &r->a.kernel))
		return 0;
	switch (key) {
	case 'i': r->a.input = arg; break;
	case OPT_SYMFS: r->a.symfs = arg; break;
	case OPT_SORT:
	case OPT_LIMIT:
		return tc_report_view_opt(cmd, key == OPT_SORT, arg, &r->o.view);
	case OPT_TIME: return tc_decode_filter_opt(cmd, &r->filter, TC_REC_FILTER_TIME, arg);
	case OPT_CPU: return tc_decode_filter_opt(cmd, &r->filter, TC_REC_FILTER_CPU, arg);
	case OPT_PID: return tc_decode_filter_opt(cmd, &r->filter, TC_REC_FILTER_PID, arg);
	case OPT_TID: return tc_decode_filter_opt(cmd, &r->filter, TC_REC_FILTER_TID, arg);
	case OPT_COMM: return tc_decode_filter_opt(cmd, &r->filter, TC_REC_FILTER_COMM, arg);
	case OPT_DSO: return tc_decode_filter_opt(cmd, &r->filter, TC_REC_FILTER_DSO, arg);
	case OPT_SYM: return tc_decode_filter_opt(cmd, &r->filter, TC_REC_FILTER_SYM, arg);
	case OPT_PER_THREAD: r->o.view.per_thread = true; break;
	}
	return 0;
}

int do_report(int argc, char **argv)
{
	const struct tc_cmd *cmd = tc_cmd_find("report");
	struct report r = { .a.input = "perf.data", .a.jobs = tc_run_opt_jobs(),
			    .o = { .f = stdout, .tid = -1, .cpu = -1 } };
	struct tc_analysis *an;
	struct tc_session *dec;
	int i = tc_opts_parse(cmd, argc, argv, on_opt, &r), problems;

	if (i < 0) {
		tc_rec_filter_free(r.filter);
		return TC_EXIT_USAGE;
	}
	if (i < argc) {
		tc_rec_filter_free(r.filter);
		return tc_msg_usage_error(cmd, "unexpected argument '%s'", argv[i]), TC_EXIT_USAGE;
	}
	r.o.format = tc_g.json ? TC_ANALYSIS_REPORT_JSON : TC_ANALYSIS_REPORT;
	problems = tc_report_run(&r.a, &r.o, r.filter, &an, &dec);
	tc_rec_filter_free(r.filter);
	tc_analysis_free(an);
	tc_session_free(dec);
	return problems ? TC_EXIT_DATA : TC_EXIT_OK;
}
