/* rec_nopmu: the record loop (lib/record/record_loop.c) on a machine without an AUX PMU, for the
 * parts the host kernel can prove for real: side-band, sampled events (-e) and trigger
 * groups opened through libperf, their samples drained into perf.data with attrs, ids,
 * event names and tracing data. Without a trace PMU the side-band event owns each CPU's
 * ring, and -g groups the --pause-on triggers under it with no aux_action bits.
 *
 *   rec_nopmu [-a] [-g] [-m PAGES] -o FILE [-e EVENT]... [-P EVENT]... [-- CMD ARGS]
 *
 * -m: data ring pages per CPU (64). A SIGSTOP/SIGCONT pause does not stop the recording.
 *
 * Test tool only: it prints and exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/record/record_loop.h"

static void die(const char *what, const struct tc_err *e)
{
	fprintf(stderr, "rec_nopmu: %s: %s\n", what, e->msg);
	exit(2);
}

static void notify(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "rec_nopmu: warning: %s\n", msg);
}

int main(int argc, char **argv)
{
	struct tc_record_opts o = { 0 };
	struct tc_pmu_list pmus = { 0 };
	struct tc_record_plan pl;
	struct tc_record_stats st;
	struct tc_err e = { 0 };
	bool all = false, group = false;
	const char *out = "perf.data";
	unsigned pages = 64;
	int c;

	while ((c = getopt(argc, argv, "age:m:o:P:")) != -1) {
		switch (c) {
		case 'a': all = true; break;
		case 'g': group = true; break;
		case 'e': o.events[o.nevents++] = optarg; break;
		case 'P': o.pause_on[o.npause++] = optarg; break;
		case 'o': out = optarg; break;
		case 'm': pages = (unsigned)atoi(optarg); break;
		default: return 2;
		}
		if (o.nevents == TC_REC_MAX_TRIGGERS || o.npause == TC_REC_MAX_TRIGGERS)
			return 2;
	}
	o.workload = optind < argc;
	if (tc_record_plan_build("/sys", &pmus, &o, &pl, &e))
		die("plan", &e);
	/* Each trigger joins the side-band event of its CPU, which leads the group. */
	for (size_t i = 0; group && i < pl.n; i++) {
		if (pl.ev[i].role != TC_ROLE_PAUSE)
			continue;
		tc_attr_set_aux_action(&pl.ev[i].a, 0);
		for (size_t k = 0; k < pl.n; k++)
			if (pl.ev[k].role == TC_ROLE_SIDEBAND && pl.ev[k].cpu == pl.ev[i].cpu) {
				pl.ev[i].group_leader = (int)k;
				pl.ev[k].group_leader = (int)k;
			}
	}
	struct tc_record_run r = {
		.plan = &pl, .sysfs_root = "/sys", .output = out, .data_pages = pages,
		.cpu_wide = all, .inherit = true, .argv = o.workload ? argv + optind : NULL,
		.argc = argc - optind, .cmdline = argv, .cmdline_argc = argc, .notify = notify,
	};
	if (tc_record_loop_run(&r, &st, &e))
		die("record", &e);
	printf("rec_nopmu: %zu events, %llu bytes of records, %llu lost samples\n", pl.n,
	       (unsigned long long)st.data_bytes, (unsigned long long)st.lost_samples);
	printf("rec_nopmu: %llu LOST records (%llu events), kernel's count %s%llu\n",
	       (unsigned long long)st.lost_records, (unsigned long long)st.lost_events,
	       st.kernel_lost_known ? "" : "unknown ", (unsigned long long)st.kernel_lost);
	tc_record_plan_free(&pl);
	return 0;
}
