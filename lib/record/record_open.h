/* Opening record's events through libperf: the one place that knows what libperf cannot
 * carry (it copies struct perf_event_attr as the build's uapi header declares it). */
#ifndef TC_LIB_RECORD_RECORD_OPEN_H
#define TC_LIB_RECORD_RECORD_OPEN_H

#include <stdint.h>
#include <sys/types.h>

#include "lib/record/record_plan.h"
#include "lib/util/err.h"

struct perf_evsel;

/* A libperf evsel for ev; fails if ev uses a field libperf would drop (config3 past the
 * header's struct). */
struct perf_evsel *tc_record_open_evsel_new(const struct tc_record_event *ev, struct tc_err *e);

/* Make member open in leader's group (the leader must be opened first, on the same CPU and
 * task). libperf 6.1 sets leaders only for a whole evlist (perf_evlist__set_leader), so the
 * two pass through a throw-away one. */
int tc_record_open_evsel_set_leader(struct perf_evsel *leader, struct perf_evsel *member,
			    struct tc_err *e);

/* Open ev on its CPU (-1: any) for pid (-1: every task, needs a CPU), with leader's fd as
 * group when given. On failure e holds tc_perf_kernel_open_msg()'s explanation. */
int tc_record_open_evsel_open(struct perf_evsel *evsel, const struct tc_record_event *ev, pid_t pid,
		      const char *terms, struct tc_err *e);

/* The records the kernel could not write for this event (opened with read_format
 * PERF_FORMAT_LOST, Linux 6.0+): every record it failed to put into its ring, whether or
 * not a PERF_RECORD_LOST ever told of it. */
int tc_record_open_evsel_lost(struct perf_evsel *evsel, uint64_t *lost, struct tc_err *e);

/* Describe ev for messages ("tracepoint sched:sched_switch on cpu 1"). */
void tc_record_open_event_name(const struct tc_record_event *ev, char *buf, size_t len);

#endif

/* The gap libperf 6.1 leaves for AUX tracing (rec_open.c): it has no call giving an evsel's
 * fd nor mapping the AUX area. */

/* Open like tc_record_open_evsel_open and return the event's fd (one CPU, one thread: exactly one
 * fd). libperf keeps it private, so the lowest free descriptor is noted before opening
 * (open() always takes the lowest) and checked to be a perf event afterwards. */
int tc_record_open_evsel_open_fd(struct perf_evsel *evsel, const struct tc_record_event *ev,
				 pid_t pid, const char *terms, int *fd, struct tc_err *e);

/* The rings of one AUX event: the user page and data ring, the AUX area after it. */
struct tc_record_rings {
	void *base;			/* user page + data pages */
	size_t base_len, data_size;
	void *aux;
	size_t aux_size;
};

/* Map data_pages (+1 user page) and, with aux_pages, the AUX area at the user page's
 * aux_offset; overwrite maps it read-only (the kernel's snapshot mode). */
int tc_record_open_map(int fd, unsigned data_pages, unsigned aux_pages, int overwrite,
	       struct tc_record_rings *r, struct tc_err *e);
void tc_record_open_unmap(struct tc_record_rings *r);
