#include "rec_open.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <perf/core.h>
#include <perf/cpumap.h>
#include <perf/evsel.h>
#include <perf/threadmap.h>

#include "perf_kernel.h"

void tc_rec_event_name(const struct tc_rec_event *ev, char *buf, size_t len)
{
	int l;

	if (ev->trigger)
		l = snprintf(buf, len, "%s trigger %s (%s)", tc_rec_role_name(ev->role),
			     ev->trigger, ev->pmu);
	else if (ev->role == TC_ROLE_SIDEBAND)
		l = snprintf(buf, len, "side-band dummy event");
	else
		l = snprintf(buf, len, "%s event", ev->pmu);
	if (l >= 0 && (size_t)l < len && ev->cpu >= 0)
		snprintf(buf + l, len - (size_t)l, " on cpu %d", ev->cpu);
}

struct perf_evsel *tc_rec_evsel_new(const struct tc_rec_event *ev, struct tc_err *e)
{
	struct perf_event_attr attr;
	struct perf_evsel *evsel;

	/* The kernel reads attr.size bytes from libperf's copy, which ends with the header's
	 * struct: say no more than that, and refuse what would be cut off. */
	if (sizeof(struct perf_event_attr) <= TC_ATTR_CONFIG3_OFF && tc_attr_config3(&ev->a))
		return tc_err_set(e, ENOTSUP, "config3 is set, and this build's libperf cannot "
				  "pass it (its perf_event_attr ends before config3)"), NULL;
	static int inited;

	/* libperf's page size (for its rings) is set here; NULL: modules in lib/ never print. */
	if (!inited) {
		libperf_init(NULL);
		inited = 1;
	}
	memcpy(&attr, &ev->a.attr, sizeof(attr));
	if (attr.size > sizeof(attr))
		attr.size = sizeof(attr);
	evsel = perf_evsel__new(&attr);
	if (!evsel)
		tc_err_set(e, ENOMEM, "out of memory");
	return evsel;
}

int tc_rec_evsel_open(struct perf_evsel *evsel, const struct tc_rec_event *ev, pid_t pid,
		      const char *terms, struct tc_err *e)
{
	struct perf_cpu_map *cpus;
	struct perf_thread_map *threads;
	char what[160], cpu[16], msg[480];
	int rc;

	if (ev->cpu >= 0) {
		snprintf(cpu, sizeof(cpu), "%d", ev->cpu);
		cpus = perf_cpu_map__new(cpu);
	} else {
		cpus = perf_cpu_map__dummy_new();
	}
	threads = perf_thread_map__new_dummy();
	if (!cpus || !threads) {
		perf_cpu_map__put(cpus);
		perf_thread_map__put(threads);
		return tc_err_set(e, ENOMEM, "out of memory");
	}
	perf_thread_map__set_pid(threads, 0, pid);
	rc = perf_evsel__open(evsel, cpus, threads);
	perf_cpu_map__put(cpus);
	perf_thread_map__put(threads);
	if (rc < 0) {
		struct tc_open_ctx c = { .what = what, .terms = terms,
					 .paranoid = tc_read_paranoid(NULL),
					 .cpu_wide = pid == -1 };

		tc_rec_event_name(ev, what, sizeof(what));
		if (tc_attr_aux_action(&ev->a))
			c.suspect = "aux_action (aux_start_paused/aux_pause/aux_resume)";
		tc_perf_open_msg(-rc, &c, msg, sizeof(msg));
		return tc_err_set(e, -rc, "%s", msg);
	}
	return 0;
}
