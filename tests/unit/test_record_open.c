/* record's side-band and trigger events opened for real on the running kernel through
 * libperf (lib/record/record_open.c): the part of record the host can prove without an AUX PMU. */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <perf/evsel.h>

#include "lib/record/record_open.h"
#include "tests/unit/tc_test.h"

static char tracefs[PATH_MAX];
static int mounted;

/* The uprobe target: not inlined, so the probe has a place to hit. */
__attribute__((noinline, used)) int tc_uprobe_target(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

static int can_perf(void)
{
	struct tc_record_event ev = { .cpu = -1 };
	struct perf_evsel *evsel;
	struct tc_err e;
	int rc;

	tc_record_plan_sideband_attr(&ev.a, false, false);
	evsel = tc_record_open_evsel_new(&ev, &e);
	if (!evsel)
		return 0;
	rc = tc_record_open_evsel_open(evsel, &ev, 0, NULL, &e);
	perf_evsel__close(evsel);
	perf_evsel__delete(evsel);
	return rc == 0 || (e.errnum != EACCES && e.errnum != EPERM && e.errnum != ENOSYS);
}

/* tracefs as mounted, or mounted privately in a temporary directory (and taken down). */
static const char *find_tracefs(void)
{
	static char tmp[] = "/tmp/tc-tracefs-XXXXXX";

	if (!tc_record_plan_tracefs_find("/sys", tracefs, sizeof(tracefs)))
		return tracefs;
	if (!mkdtemp(tmp))
		return NULL;
	if (mount("nodev", tmp, "tracefs", 0, NULL)) {
		rmdir(tmp);
		return NULL;
	}
	mounted = 1;
	snprintf(tracefs, sizeof(tracefs), "%s", tmp);
	return tracefs;
}

static void drop_tracefs(void)
{
	if (mounted) {
		umount(tracefs);
		rmdir(tracefs);
		mounted = 0;
	}
}

static uint64_t count(struct perf_evsel *evsel)
{
	struct perf_counts_values v = { 0 };

	if (perf_evsel__read(evsel, 0, 0, &v))
		return UINT64_MAX;
	return v.val;
}

TEST(sideband_dummy_opens_per_cpu)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (!can_perf())
		SKIP("perf_event_open is not permitted for this user");
	for (int cpu = 0; cpu < n; cpu++) {
		struct tc_record_event ev = { .cpu = cpu, .role = TC_ROLE_SIDEBAND };
		struct perf_evsel *evsel;
		struct tc_err e = { 0 };

		tc_record_plan_sideband_attr(&ev.a, true, false);
		evsel = tc_record_open_evsel_new(&ev, &e);
		CHECK(evsel != NULL);
		if (!evsel)
			return;
		CHECK_INT(tc_record_open_evsel_open(evsel, &ev, -1, NULL, &e), 0);
		if (e.errnum)
			printf("#   %s\n", e.msg);
		/* a ring to read records from opens on it too */
		CHECK_INT(perf_evsel__mmap(evsel, 2), 0);
		perf_evsel__munmap(evsel);
		perf_evsel__close(evsel);
		perf_evsel__delete(evsel);
	}
}

TEST(tracepoint_trigger_opens_and_counts)
{
	struct tc_record_event ev = { .cpu = -1, .role = TC_ROLE_PAUSE };
	struct perf_evsel *evsel;
	struct tc_err e = { 0 };
	const char *tfs;

	if (!can_perf())
		SKIP("perf_event_open is not permitted for this user");
	tfs = find_tracefs();
	if (!tfs)
		SKIP("no tracefs and it cannot be mounted here");
	CHECK_INT(tc_record_plan_trigger_attr("/sys", tfs, "sched:sched_switch", &ev, &e), 0);
	if (e.errnum)
		printf("#   %s\n", e.msg);
	CHECK_INT(ev.a.attr.type, PERF_TYPE_TRACEPOINT);
	evsel = tc_record_open_evsel_new(&ev, &e);
	CHECK(evsel != NULL);
	if (evsel) {
		/* this task, any CPU: every sleep switches out */
		CHECK_INT(tc_record_open_evsel_open(evsel, &ev, 0, NULL, &e), 0);
		if (e.errnum)
			printf("#   %s\n", e.msg);
		CHECK_INT(perf_evsel__enable(evsel), 0);
		for (int i = 0; i < 3; i++)
			usleep(1000);
		CHECK(count(evsel) >= 3 && count(evsel) != UINT64_MAX);
		perf_evsel__close(evsel);
		perf_evsel__delete(evsel);
	}
	free(ev.trigger);
	drop_tracefs();
}

TEST(uprobe_trigger_opens_and_fires)
{
	struct tc_record_event ev = { .cpu = -1, .role = TC_ROLE_RESUME };
	struct perf_evsel *evsel;
	struct tc_err e = { 0 };
	volatile int x = 0;

	if (!can_perf())
		SKIP("perf_event_open is not permitted for this user");
	CHECK_INT(tc_record_plan_trigger_attr("/sys", NULL, "/proc/self/exe:tc_uprobe_target", &ev,
					      &e),
		  0);
	if (e.errnum) {
		printf("#   %s\n", e.msg);
		return;
	}
	evsel = tc_record_open_evsel_new(&ev, &e);
	CHECK(evsel != NULL);
	if (evsel) {
		CHECK_INT(tc_record_open_evsel_open(evsel, &ev, 0, NULL, &e), 0);
		if (e.errnum)
			printf("#   %s\n", e.msg);
		CHECK_INT(perf_evsel__enable(evsel), 0);
		for (int i = 0; i < 5; i++)
			x = tc_uprobe_target(x);
		CHECK_INT(x, 5);
		CHECK_INT(count(evsel), 5);
		perf_evsel__close(evsel);
		perf_evsel__delete(evsel);
	}
	free(ev.trigger);
	free(ev.uprobe_path);
}

/* tc_record_open_evsel_set_leader: the member opens in the leader's group, which a group read
 * of the leader shows (two values), and counts only while the leader is enabled. */
TEST(trigger_joins_its_leaders_group)
{
	struct tc_record_event lead = { .cpu = -1, .role = TC_ROLE_SIDEBAND };
	struct tc_record_event mem = { .cpu = -1, .role = TC_ROLE_PAUSE };
	struct perf_evsel *l, *m;
	struct tc_err e = { 0 };
	uint64_t vals[8] = { 0 };
	int lfd = -1, mfd = -1;
	volatile int x = 0;

	if (!can_perf())
		SKIP("perf_event_open is not permitted for this user");
	tc_record_plan_sideband_attr(&lead.a, false, false);
	lead.a.attr.read_format = PERF_FORMAT_GROUP;
	CHECK_INT(tc_record_plan_trigger_attr("/sys", NULL, "/proc/self/exe:tc_uprobe_target", &mem,
					      &e),
		  0);
	mem.a.attr.disabled = 0;		/* follows its leader, as record opens it */
	l = tc_record_open_evsel_new(&lead, &e);
	m = tc_record_open_evsel_new(&mem, &e);
	CHECK(l && m);
	if (!l || !m)
		goto out;
	CHECK_INT(tc_record_open_evsel_open_fd(l, &lead, 0, NULL, &lfd, &e), 0);
	CHECK_INT(tc_record_open_evsel_set_leader(l, m, &e), 0);
	CHECK_INT(tc_record_open_evsel_open_fd(m, &mem, 0, NULL, &mfd, &e), 0);
	if (e.errnum)
		printf("#   %s\n", e.msg);
	if (lfd < 0 || mfd < 0)
		goto out;
	x = tc_uprobe_target(x);	/* leader disabled: the member does not count */
	ioctl(lfd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 3; i++)
		x = tc_uprobe_target(x);
	ioctl(lfd, PERF_EVENT_IOC_DISABLE, 0);
	CHECK(read(lfd, vals, sizeof(vals)) > 0);
	CHECK_INT(vals[0], 2);		/* nr: the leader and its member */
	CHECK_INT(vals[2], 3);		/* the member's count */
out:
	if (m) {
		perf_evsel__close(m);
		perf_evsel__delete(m);
	}
	if (l) {
		perf_evsel__close(l);
		perf_evsel__delete(l);
	}
	free(mem.trigger);
	free(mem.uprobe_path);
}

TEST(pause_trigger_without_aux_leader_is_refused_with_a_reason)
{
	struct tc_record_event ev = { .cpu = -1, .role = TC_ROLE_PAUSE };
	struct perf_evsel *evsel;
	struct tc_err e = { 0 };

	if (!can_perf())
		SKIP("perf_event_open is not permitted for this user");
	CHECK_INT(tc_record_plan_trigger_attr("/sys", NULL, "page-faults/period=1/", &ev, &e), 0);
	tc_attr_set_aux_action(&ev.a, TC_AUX_PAUSE);
	evsel = tc_record_open_evsel_new(&ev, &e);
	CHECK(evsel != NULL);
	if (evsel) {
		/* Every kernel refuses it: old ones do not know the bit, new ones want an AUX
		 * group leader. The message names the field either way. */
		CHECK_INT(tc_record_open_evsel_open(evsel, &ev, 0, NULL, &e), -1);
		CHECK_INT(e.errnum, EINVAL);
		CHECK(strstr(e.msg, "aux_action") && strstr(e.msg, "page-faults/period=1/"));
		perf_evsel__delete(evsel);
	}
	free(ev.trigger);
}
