/* record's event plan (lib/record/record_plan.c) against tests/fixtures/sysfs, and the kernel
 * verdicts and errno messages of lib/pmu/perf_kernel.c. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/pmu/perf_kernel.h"
#include "lib/record/record_plan.h"
#include "tests/unit/tc_test.h"

static const char *fixture(const char *name)
{
	static char path[PATH_MAX];
	const char *top = getenv("TOP");

	snprintf(path, sizeof(path), "%s/tests/fixtures/sysfs/%s", top ? top : ".", name);
	return path;
}

/* Build a plan on a fixture; returns the build's result, e->msg on failure. */
static int plan(const char *fx, const struct tc_record_opts *o, struct tc_pmu_list *l,
		struct tc_record_plan *pl, struct tc_err *e)
{
	memset(e, 0, sizeof(*e));
	if (tc_pmu_discover(fixture(fx), l, e))
		return -1;
	return tc_record_plan_build(fixture(fx), l, o, pl, e);
}

static size_t count_role(const struct tc_record_plan *pl, enum tc_record_role r)
{
	size_t n = 0;

	for (size_t i = 0; i < pl->n; i++)
		n += pl->ev[i].role == r;
	return n;
}

TEST(juno_sink_hash_goes_into_sinkid_bits)
{
	struct tc_record_opts o = { .sink = "tmc_etr0" };
	struct tc_pmu_list l;
	struct tc_record_plan pl;
	struct tc_err e;

	CHECK_INT(plan("juno", &o, &l, &pl, &e), 0);
	CHECK_INT(pl.ncpus, 6);
	CHECK_INT(count_role(&pl, TC_ROLE_AUX), 6);
	CHECK_INT(count_role(&pl, TC_ROLE_SIDEBAND), 6);
	CHECK_INT(pl.ev[0].a.attr.type, 10);
	CHECK_INT(pl.ev[0].cpu, 0);
	/* sinkid=config2:0-31 holds the hash from sinks/tmc_etr0 */
	CHECK_INT(pl.ev[0].a.attr.config2, 0xa6509eae);
	/* timestamp=config:28, contextid=config:14 by default */
	CHECK_INT(pl.ev[0].a.attr.config, (1ULL << 28) | (1ULL << 14));
	CHECK_INT(pl.ev[5].cpu, 5);
	CHECK_INT(pl.ev[0].group_leader, -1);
	CHECK_INT(tc_attr_aux_action(&pl.ev[0].a), 0);
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);
}

TEST(config_terms_set_and_unknown_term_lists_valid_ones)
{
	struct tc_record_opts o = { .config = "cycacc,timestamp=0,preset=5,configid=0x12" };
	struct tc_pmu_list l;
	struct tc_record_plan pl;
	struct tc_err e;

	CHECK_INT(plan("juno", &o, &l, &pl, &e), 0);
	CHECK_INT(pl.ev[0].a.attr.config, (1ULL << 12) | (1ULL << 14) | 5);
	/* configid=config2:32-63 beside sinkid=config2:0-31, the sink tracectl chose */
	CHECK_INT(pl.ev[0].a.attr.config2, (0x12ULL << 32) | 0xa6509eae);
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);

	o.config = "cyc=1";
	CHECK_INT(plan("juno", &o, &l, &pl, &e), -1);
	CHECK(strstr(e.msg, "no format term 'cyc'") && strstr(e.msg, "retstack") &&
	      strstr(e.msg, "sinkid"));
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);

	o.config = "preset=16";	/* config:0-3 holds 0..15 */
	CHECK_INT(plan("juno", &o, &l, &pl, &e), -1);
	CHECK(strstr(e.msg, "does not fit") != NULL);
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);
}

TEST(ete_trbe_per_cpu_sink_needs_its_cpu)
{
	struct tc_record_opts o = { .sink = "trbe1" };
	struct tc_pmu_list l;
	struct tc_record_plan pl;
	struct tc_err e;

	CHECK_INT(plan("ete-trbe", &o, &l, &pl, &e), -1);
	CHECK(strstr(e.msg, "not reachable from cpu 0") && strstr(e.msg, "-C"));
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);

	o.cpu_list = "1";
	CHECK_INT(plan("ete-trbe", &o, &l, &pl, &e), 0);
	CHECK_INT(pl.ncpus, 1);
	CHECK_INT(pl.ev[0].cpu, 1);
	CHECK_INT(pl.ev[0].a.attr.config2, 0x58ca323);
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);

	o.sink = "trbe9";
	CHECK_INT(plan("ete-trbe", &o, &l, &pl, &e), -1);
	CHECK(strstr(e.msg, "no sink 'trbe9'") && strstr(e.msg, "would work: trbe1"));
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);

	o.sink = NULL;
	o.cpu_list = "0,7";
	CHECK_INT(plan("ete-trbe", &o, &l, &pl, &e), -1);
	CHECK(strstr(e.msg, "cpu 7 has no CoreSight tracer") != NULL);
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);
}

TEST(sink_claimed_through_sysfs_is_refused)
{
	struct tc_record_opts o = { .sink = "tmc_etr0" };
	struct tc_pmu_list l;
	struct tc_record_plan pl;
	struct tc_err e;

	CHECK_INT(tc_cs_topo_sink_claimed(fixture("juno-claimed"), "tmc_etr0"), 1);
	CHECK_INT(tc_cs_topo_sink_claimed(fixture("juno"), "tmc_etr0"), 0);
	CHECK_INT(plan("juno-claimed", &o, &l, &pl, &e), -1);
	CHECK_INT(e.errnum, EBUSY);
	CHECK(strstr(e.msg, "enabled through sysfs") && strstr(e.msg, "another sink: tmc_etf0"));
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);
}

TEST(intel_pt_defaults_cpus_and_no_sinks)
{
	struct tc_record_opts o = { .config = "cyc,noretcomp=1" };
	struct tc_pmu_list l;
	struct tc_record_plan pl;
	struct tc_err e;
	uint64_t want = 1 | (1ULL << 13) | (1ULL << 10) | (1ULL << 9) | (3ULL << 14) |
			(3ULL << 24) | (1ULL << 1) | (1ULL << 11);

	CHECK_INT(plan("intel-pt", &o, &l, &pl, &e), 0);
	CHECK_INT(pl.ncpus, 4);
	CHECK_INT(pl.ev[0].a.attr.type, 8);
	CHECK_INT(pl.ev[0].a.attr.config, want);
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);

	o.config = NULL;
	o.cpu_list = "2,4";	/* the fixture has 0-3 online */
	CHECK_INT(plan("intel-pt", &o, &l, &pl, &e), -1);
	CHECK(strstr(e.msg, "cpu 4 is not online; online CPUs: 0-3") != NULL);
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);

	o.cpu_list = NULL;
	o.sink = "tmc_etr0";
	CHECK_INT(plan("intel-pt", &o, &l, &pl, &e), -1);
	CHECK(strstr(e.msg, "--sink is for cs_etm") != NULL);
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);
}

TEST(triggers_group_under_the_aux_event)
{
	struct tc_record_opts o = { .cpu_list = "0-1", .start_paused = true,
				 .resume_on = { "sched:sched_switch" }, .nresume = 1,
				 .pause_on = { "page-faults/period=10/" }, .npause = 1 };
	struct tc_pmu_list l;
	struct tc_record_plan pl;
	struct tc_err e;

	CHECK_INT(plan("juno", &o, &l, &pl, &e), 0);
	CHECK_INT(pl.n, 8);	/* per CPU: aux, pause, resume; then 2 side-band */
	CHECK_INT(pl.ev[0].role, TC_ROLE_AUX);
	CHECK_INT(pl.ev[0].group_leader, 0);
	CHECK_INT(tc_attr_aux_action(&pl.ev[0].a), TC_AUX_START_PAUSED);
	CHECK_INT(pl.ev[1].role, TC_ROLE_PAUSE);
	CHECK_INT(pl.ev[1].a.attr.type, PERF_TYPE_SOFTWARE);
	CHECK_INT(pl.ev[1].a.attr.config, PERF_COUNT_SW_PAGE_FAULTS);
	CHECK_INT(pl.ev[1].a.attr.sample_period, 10);
	CHECK_INT(tc_attr_aux_action(&pl.ev[1].a), TC_AUX_PAUSE);
	CHECK_INT(pl.ev[2].role, TC_ROLE_RESUME);
	CHECK_INT(pl.ev[2].a.attr.type, PERF_TYPE_TRACEPOINT);
	CHECK_INT(pl.ev[2].a.attr.config, 314);
	CHECK(pl.ev[2].a.attr.sample_type & PERF_SAMPLE_RAW);
	CHECK_INT(tc_attr_aux_action(&pl.ev[2].a), TC_AUX_RESUME);
	CHECK_INT(pl.ev[4].group_leader, 3);
	CHECK_INT(pl.ev[4].cpu, 1);
	CHECK(pl.pause_resume);
	/* aux_action sits at byte 116: bit 0 start paused, 1 pause, 2 resume */
	CHECK_INT(pl.ev[2].a.raw[116], 4);
	CHECK_INT(pl.ev[0].a.raw[116], 1);
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);
}

TEST(sideband_event_bits)
{
	struct tc_attr a;

	tc_record_plan_sideband_attr(&a, true, true);
	CHECK_INT(a.attr.type, PERF_TYPE_SOFTWARE);
	CHECK_INT(a.attr.config, PERF_COUNT_SW_DUMMY);
	CHECK(a.attr.sample_id_all && a.attr.comm && a.attr.mmap2 && a.attr.task &&
	      a.attr.context_switch && a.attr.enable_on_exec);
	CHECK_INT(a.attr.sample_type, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
		  PERF_SAMPLE_TIME | PERF_SAMPLE_CPU);
	CHECK_INT(a.attr.size, 136);
}

TEST(bad_triggers_say_why)
{
	struct tc_record_event ev = { 0 };
	struct tc_err e = { 0 };

	CHECK_INT(tc_record_plan_trigger_attr(fixture("juno"), NULL, "sched:nope", &ev, &e), -1);
	CHECK(strstr(e.msg, "no tracepoint 'sched:nope'") != NULL);
	free(ev.trigger), ev.trigger = NULL;
	CHECK_INT(tc_record_plan_trigger_attr(fixture("juno"), NULL, "bogus/period=3/", &ev, &e),
		  -1);
	CHECK(strstr(e.msg, "unknown counter") && strstr(e.msg, "cycles"));
	free(ev.trigger), ev.trigger = NULL;
	CHECK_INT(tc_record_plan_trigger_attr(fixture("juno"), NULL, "cycles/period=0/", &ev, &e),
		  -1);
	CHECK(strstr(e.msg, "period=N") != NULL);
	free(ev.trigger), ev.trigger = NULL;
	CHECK_INT(tc_record_plan_trigger_attr(fixture("tc2"), NULL, "sched:sched_switch", &ev, &e),
		  -1);
	CHECK(strstr(e.msg, "tracefs is not mounted") != NULL);
	free(ev.trigger), ev.trigger = NULL;
	CHECK_INT(tc_record_plan_trigger_attr(fixture("juno"), NULL, "/proc/self/exe:no_such_fn_x",
					      &ev, &e),
		  -1);
	CHECK(strstr(e.msg, "no function 'no_such_fn_x'") != NULL);
	free(ev.trigger);
	free(ev.uprobe_path);
}

TEST(uprobe_symbol_to_file_offset)
{
	struct tc_record_event ev = { 0 };
	struct tc_err e = { 0 };

	/* juno's uprobe PMU type is 7; main is a function of this test binary */
	CHECK_INT(
		tc_record_plan_trigger_attr(fixture("juno"), NULL, "/proc/self/exe:main", &ev, &e),
		0);
	CHECK_INT(ev.a.attr.type, 7);
	CHECK(ev.uprobe_path && ev.uprobe_path[0] == '/');
	CHECK_INT(ev.a.attr.config1, (uint64_t)(uintptr_t)ev.uprobe_path);
	CHECK(ev.a.attr.config2 > 0);
	free(ev.trigger);
	free(ev.uprobe_path);
	memset(&ev, 0, sizeof(ev));
	CHECK_INT(tc_record_plan_trigger_attr(fixture("juno"), NULL, "/proc/self/exe:0x1234", &ev,
					      &e),
		  0);
	CHECK_INT(ev.a.attr.config2, 0x1234);
	free(ev.trigger);
	free(ev.uprobe_path);
}

TEST(without_sink_an_etr_every_cpu_reaches_is_chosen)
{
	struct tc_record_opts o = { 0 };
	struct tc_pmu_list l;
	struct tc_record_plan pl;
	struct tc_err e;

	CHECK_INT(plan("juno", &o, &l, &pl, &e), 0);
	CHECK_STR(pl.sink, "tmc_etr0");
	CHECK(pl.sink_auto && strstr(pl.sink_why, "ETR") != NULL);
	CHECK_INT(pl.ev[0].a.attr.config2, 0xa6509eae);
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);

	/* the ETR is held through sysfs: the ETF */
	CHECK_INT(plan("juno-claimed", &o, &l, &pl, &e), 0);
	CHECK_STR(pl.sink, "tmc_etf0");
	CHECK_INT(pl.ev[0].a.attr.config2, 0x97979549);
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);

	/* per-CPU TRBEs, no sink in common: the kernel takes each CPU's own */
	CHECK_INT(plan("ete-trbe", &o, &l, &pl, &e), 0);
	CHECK_STR(pl.sink, "");
	CHECK(!pl.sink_auto);
	CHECK_INT(pl.ev[0].a.attr.config2, 0);
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);

	/* the user's own sinkid term wins */
	o.config = "sinkid=0x97979549";
	CHECK_INT(plan("juno", &o, &l, &pl, &e), 0);
	CHECK(!pl.sink_auto);
	CHECK_INT(pl.ev[0].a.attr.config2, 0x97979549);
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);

	/* Intel PT has no sinks */
	o.config = NULL;
	CHECK_INT(plan("intel-pt", &o, &l, &pl, &e), 0);
	CHECK(!pl.sink_auto && !*pl.sink);
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);
}

TEST(per_thread_sink_must_serve_every_cpu)
{
	struct tc_record_opts o = { .per_thread = true, .sink = "tmc_etf0", .workload = true };
	struct tc_pmu_list l;
	struct tc_record_plan pl;
	struct tc_err e;

	CHECK_INT(plan("juno", &o, &l, &pl, &e), 0);
	CHECK_INT(pl.ncpus, 0);
	CHECK_INT(pl.ev[0].cpu, -1);
	CHECK_INT(pl.ev[0].a.attr.config2, 0x97979549);
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);

	o.sink = "trbe0";	/* serves cpu0 only; the task may run on any */
	CHECK_INT(plan("ete-trbe", &o, &l, &pl, &e), -1);
	CHECK(strstr(e.msg, "not reachable from cpu 1") != NULL);
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);
}

TEST(user_or_kernel_space_sets_the_exclude_bits)
{
	static const struct {
		enum tc_record_space space;
		unsigned excl_kernel, excl_hv, excl_user;
	} cases[] = {
		{ TC_SPACE_BOTH, 0, 0, 0 },
		{ TC_SPACE_USER, 1, 1, 0 },
		{ TC_SPACE_KERNEL, 0, 0, 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tc_record_opts o = { .space = cases[i].space };
		struct tc_pmu_list l;
		struct tc_record_plan pl;
		struct tc_err e;

		CHECK_INT(plan("intel-pt", &o, &l, &pl, &e), 0);
		CHECK_INT(pl.ev[0].role, TC_ROLE_AUX);
		CHECK_INT(pl.ev[0].a.attr.exclude_kernel, cases[i].excl_kernel);
		CHECK_INT(pl.ev[0].a.attr.exclude_hv, cases[i].excl_hv);
		CHECK_INT(pl.ev[0].a.attr.exclude_user, cases[i].excl_user);
		tc_record_plan_free(&pl);
		tc_pmu_list_free(&l);
	}
}

TEST(who_may_trace_the_kernel)
{
	const uint64_t perfmon = 1ULL << 38, sys_admin = 1ULL << 21, other = 1ULL << 20;
	char path[] = "/tmp/tc_status_XXXXXX";
	int fd = mkstemp(path);

	CHECK(tc_perf_kernel_may_trace_kernel(-1, 0));
	CHECK(tc_perf_kernel_may_trace_kernel(1, 0));
	CHECK(!tc_perf_kernel_may_trace_kernel(2, 0));
	CHECK(!tc_perf_kernel_may_trace_kernel(3, other));
	CHECK(!tc_perf_kernel_may_trace_kernel(INT_MIN, 0));
	CHECK(tc_perf_kernel_may_trace_kernel(2, perfmon));
	CHECK(tc_perf_kernel_may_trace_kernel(3, sys_admin));
	CHECK(fd >= 0);
	static const char status[] = "Name:\ttracectl\nCapInh:\t0000000000000000\n"
				     "CapEff:\t0000004000000000\n";

	CHECK(write(fd, status, sizeof(status) - 1) == (ssize_t)sizeof(status) - 1);
	close(fd);
	CHECK_INT(tc_perf_kernel_cap_eff(path), perfmon);
	unlink(path);
	CHECK_INT(tc_perf_kernel_cap_eff("/nonexistent/status"), 0);
}

TEST(snapshot_on_events_are_sampled_and_wake_the_reader)
{
	struct tc_record_opts o = { .snapshot = true, .snapshot_on = { "cycles/period=1000/" },
				    .nsnapshot_on = 1, .cpu_list = "0" };
	struct tc_pmu_list l;
	struct tc_record_plan pl;
	struct tc_err e;

	CHECK_INT(plan("intel-pt", &o, &l, &pl, &e), 0);
	CHECK_INT(count_role(&pl, TC_ROLE_SNAPSHOT), 1);
	CHECK_INT(pl.ev[1].role, TC_ROLE_SNAPSHOT);
	CHECK_STR(tc_record_plan_role_name(pl.ev[1].role), "snapshot");
	CHECK_INT(pl.ev[1].a.attr.wakeup_events, 1);
	CHECK_INT(pl.ev[1].a.attr.sample_period, 1000);
	CHECK_INT(pl.ev[1].group_leader, -1);
	CHECK_INT(tc_attr_aux_action(&pl.ev[1].a), 0);
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);

	o.snapshot = false;
	CHECK_INT(plan("intel-pt", &o, &l, &pl, &e), -1);
	CHECK(strstr(e.msg, "--snapshot-on") && strstr(e.msg, "needs -S"));
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&l);
}

TEST(cpu_lists)
{
	int c[8];
	size_t n;

	CHECK_INT(tc_record_plan_parse_cpus("0-2,5,1", c, 8, &n), 0);
	CHECK_INT(n, 4);
	CHECK_INT(c[3], 5);
	CHECK_INT(tc_record_plan_parse_cpus("3-1", c, 8, &n), -1);
	CHECK_INT(tc_record_plan_parse_cpus("a", c, 8, &n), -1);
	CHECK_INT(tc_record_plan_parse_cpus("", c, 8, &n), -1);
	CHECK_INT(tc_record_plan_parse_cpus("0-100", c, 8, &n), -1);
}

TEST(pause_resume_verdict_names_feature_and_kernel)
{
	char why[256] = "";

	CHECK_INT(tc_perf_kernel_aux_pause_verdict("6.13.2", EOPNOTSUPP, why, sizeof(why)), 1);
	CHECK_INT(tc_perf_kernel_aux_pause_verdict("6.1.0-28-amd64", EINVAL, why, sizeof(why)), 0);
	CHECK(strstr(why, "6.13") && strstr(why, "6.1.0-28-amd64") && strstr(why, "pause"));
	CHECK_INT(tc_perf_kernel_at_least("6.13.0", 6, 13), 1);
	CHECK_INT(tc_perf_kernel_at_least("6.9.1", 6, 13), 0);
	CHECK_INT(tc_perf_kernel_at_least("7.0", 6, 13), 1);
	CHECK_INT(tc_perf_kernel_at_least("x", 6, 13), 0);
}

TEST(pause_resume_probe_agrees_with_the_running_kernel)
{
	char rel[128], why[256];
	int err = tc_perf_kernel_probe_aux_action();

	tc_perf_kernel_release(rel, sizeof(rel));
	printf("#   kernel %s: probe errno %d\n", rel, err);
	if (err == EACCES || err == EPERM)
		SKIP("perf_event_open not permitted here");
	/* A kernel that knows aux_action refuses start-paused on a software event. */
	CHECK_INT(tc_perf_kernel_aux_pause_verdict(rel, err, why, sizeof(why)),
		  tc_perf_kernel_at_least(rel, 6, 13));
}

TEST(errno_messages)
{
	struct tc_perf_kernel_open_ctx c = { .what = "cs_etm event on cpu 2",
					     .paranoid = 2,
					     .cpu_wide = 1,
					     .terms = "timestamp=0x1",
					     .suspect = "term 'cycacc'" };
	char m[512];

	tc_perf_kernel_open_msg(EACCES, &c, m, sizeof(m));
	CHECK(strstr(m, "perf_event_paranoid is 2") && strstr(m, "CAP_PERFMON") &&
	      strstr(m, "CPU-wide"));
	tc_perf_kernel_open_msg(EINVAL, &c, m, sizeof(m));
	CHECK(strstr(m, "term 'cycacc'") && strstr(m, "cpu 2"));
	tc_perf_kernel_open_msg(EMFILE, &c, m, sizeof(m));
	CHECK(strstr(m, "ulimit -n") != NULL);
	tc_perf_kernel_open_msg(ENOSPC, &c, m, sizeof(m));
	CHECK(strstr(m, "ENOSPC") != NULL);
	c.paranoid = INT_MIN;
	tc_perf_kernel_open_msg(EPERM, &c, m, sizeof(m));
	CHECK(strstr(m, "could not be read") != NULL);
	CHECK_INT(tc_perf_kernel_paranoid("/nonexistent"), INT_MIN);
	CHECK(tc_perf_kernel_paranoid(NULL) != INT_MIN);
}
