/* tracectl diff A B: the per-function profiles of two recordings side by side (lib/analysis/profile.h
 * tc_profile_diff), and an exit status a CI job can gate on (--fail-above). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "cmd/kernel_opts.h"
#include "cmd/run_opts.h"
#include "cmd/prof_args.h"
#include "cmd/tracectl.h"
#include "decoders/session.h"
#include "lib/analysis/analysis.h"

enum { OPT_FAIL_ABOVE = TC_OPT_CMD_BASE, OPT_SORT, OPT_LIMIT, OPT_SYMFS, OPT_TIME, OPT_CPU,
       OPT_PID, OPT_TID, OPT_COMM, OPT_DSO, OPT_SYM,
       OPT_VMLINUX, OPT_KALLSYMS_, OPT_KCORE_ /* kept in this order (cmd/kernel_opts.h) */,
       OPT_JOBS, OPT_DECODER_ /* kept in this order (cmd/run_opts.h) */ };

const struct tc_opt diff_opts[] = {
	{ "fail-above", OPT_FAIL_ABOVE, 1, "PCT", "exit 4 when a function's self instructions "
	  "grew by more than PCT percent" },
	{ "sort", OPT_SORT, 1, "KEY", "order rows by the change in self (default), total, calls, "
	  "or by name" },
	{ "limit", OPT_LIMIT, 1, "N", "show at most N functions (0: all)" },
	{ "symfs", OPT_SYMFS, 1, "DIR", "find traced binaries under DIR (recorded paths)" },
	{ "time", OPT_TIME, 1, "START,END", "compare only what has perf time in [START,END] "
	  "(seconds; either may be empty; both recordings)" },
	{ "cpu", OPT_CPU, 1, "LIST", "compare only what ran on these CPUs (0-3,6)" },
	{ "pid", OPT_PID, 1, "LIST", "compare only these processes" },
	{ "tid", OPT_TID, 1, "LIST", "compare only these threads" },
	{ "comm", OPT_COMM, 1, "NAME[,NAME]", "compare only threads with these command names" },
	{ "dso", OPT_DSO, 1, "NAME[,NAME]", "compare only code in these binaries (recorded path or "
	  "file name)" },
	{ "sym", OPT_SYM, 1, "NAME[,NAME]", "compare only these functions" },
	TC_KERNEL_OPT_ROWS(OPT_VMLINUX),
	TC_RUN_OPT_ROWS(OPT_JOBS),
	{ 0 },
};

struct diff {
	const char *symfs;
	struct tc_kernel_opts kernel;
	struct tc_session_opts run;	/* --jobs, --decoder (cmd/run_opts.h) */
	struct tc_profile_view view;	/* its limit only cuts the output (see do_diff) */
	double fail_above;
	bool gate;
	struct tc_rec_filter *filter;	/* applied to both recordings */
};

static int on_opt(int key, const char *arg, void *ctx)
{
	const struct tc_cmd *cmd = tc_cmd_find("diff");
	struct diff *d = ctx;
	char *end;
	int rc;

	if (tc_run_opt(cmd, key, OPT_JOBS, arg, &d->run, &rc))
		return rc;
	if (tc_kernel_opt(key, OPT_VMLINUX, arg, &d->kernel))
		return 0;
	switch (key) {
	case OPT_SYMFS: d->symfs = arg; break;
	case OPT_TIME: return tc_decode_filter_opt(cmd, &d->filter, TC_REC_FILTER_TIME, arg);
	case OPT_CPU: return tc_decode_filter_opt(cmd, &d->filter, TC_REC_FILTER_CPU, arg);
	case OPT_PID: return tc_decode_filter_opt(cmd, &d->filter, TC_REC_FILTER_PID, arg);
	case OPT_TID: return tc_decode_filter_opt(cmd, &d->filter, TC_REC_FILTER_TID, arg);
	case OPT_COMM: return tc_decode_filter_opt(cmd, &d->filter, TC_REC_FILTER_COMM, arg);
	case OPT_DSO: return tc_decode_filter_opt(cmd, &d->filter, TC_REC_FILTER_DSO, arg);
	case OPT_SYM: return tc_decode_filter_opt(cmd, &d->filter, TC_REC_FILTER_SYM, arg);
	case OPT_SORT:
	case OPT_LIMIT:
		return tc_report_view_opt(cmd, key == OPT_SORT, arg, &d->view);
	case OPT_FAIL_ABOVE:
		errno = 0;
		d->fail_above = strtod(arg, &end);
		if (errno || end == arg || *end || !isfinite(d->fail_above) || d->fail_above < 0)
			return tc_msg_usage_error(cmd, "bad --fail-above '%s' (a percentage >= 0)",
						  arg);
		d->gate = true;
		break;
	}
	return 0;
}

static int profile(const char *input, const struct diff *d, struct tc_analysis **an,
		   struct tc_session **dec)
{
	struct tc_session_opts a = { .input = input, .symfs = d->symfs, .kernel = d->kernel,
				     .jobs = d->run.jobs, .reference = d->run.reference };
	struct tc_analysis_opts o = { .format = TC_ANALYSIS_PROFILE, .tid = -1, .cpu = -1 };

	return tc_report_run(&a, &o, d->filter, an, dec);
}

int do_diff(int argc, char **argv)
{
	const struct tc_cmd *cmd = tc_cmd_find("diff");
	struct diff d = { .view.sort = TC_PROFILE_BY_SELF, .run.jobs = tc_run_opt_jobs() };
	struct tc_analysis *an[2];
	struct tc_session *dec[2];
	struct tc_profile_diff pd;
	const struct tc_profile_diff_row *grew = NULL;
	const char *in[3];
	size_t limit;
	int i = tc_opts_parse(cmd, argc, argv, on_opt, &d), n = 0, problems = 0;

	/* Options may follow the operands too (diff A B --fail-above 5): parse again after
	 * each one, which then stands where argv[0] does. */
	while (i >= 0 && i < argc) {
		int next;

		if (n < 3)
			in[n++] = argv[i];
		next = tc_opts_parse(cmd, argc - i, argv + i, on_opt, &d);
		i = next < 0 ? -1 : i + next;
	}
	if (i < 0) {
		tc_rec_filter_free(d.filter);
		return TC_EXIT_USAGE;
	}
	if (n != 2) {
		tc_rec_filter_free(d.filter);
		return tc_msg_usage_error(cmd, "diff takes two recordings (or snapshots), A and B"),
		       TC_EXIT_USAGE;
	}
	for (int k = 0; k < 2; k++)
		problems += profile(in[k], &d, &an[k], &dec[k]);
	/* The whole difference is checked against the threshold; --limit only cuts the output. */
	limit = d.view.limit;
	d.view.limit = 0;
	if (tc_profile_diff(tc_analysis_profile(an[0]), tc_analysis_profile(an[1]), &d.view, &pd))
		tc_fatal("out of memory");
	if (d.gate)
		grew = tc_profile_diff_grew(&pd, d.fail_above, false);
	if (limit && pd.n > limit)
		pd.n = limit;
	if (tc_g.json) {
		struct tc_json j;

		tc_msg_json_stdout(&j);
		tc_profile_diff_write_json(&pd, &j);
		tc_json_flush(&j);
	} else {
		tc_profile_diff_write_text(&pd, stdout);
	}
	if (grew)
		tc_error("%s grew past %g%%: self instructions %llu -> %llu", grew->name,
			 d.fail_above, (unsigned long long)grew->a_self,
			 (unsigned long long)grew->b_self);
	tc_profile_diff_free(&pd);
	tc_rec_filter_free(d.filter);
	for (int k = 0; k < 2; k++) {
		tc_analysis_free(an[k]);
		tc_session_free(dec[k]);
	}
	if (grew)
		return TC_EXIT_GREW;
	return problems ? TC_EXIT_DATA : TC_EXIT_OK;
}
