/* Opening record's events through libperf: the one place that knows what libperf cannot
 * carry (it copies struct perf_event_attr as the build's uapi header declares it). */
#ifndef TC_REC_OPEN_H
#define TC_REC_OPEN_H

#include <sys/types.h>

#include "err.h"
#include "record_attrs.h"

struct perf_evsel;

/* A libperf evsel for ev; fails if ev uses a field libperf would drop (config3 past the
 * header's struct). */
struct perf_evsel *tc_rec_evsel_new(const struct tc_rec_event *ev, struct tc_err *e);

/* Open ev on its CPU (-1: any) for pid (-1: every task, needs a CPU), with leader's fd as
 * group when given. On failure e holds tc_perf_open_msg()'s explanation. */
int tc_rec_evsel_open(struct perf_evsel *evsel, const struct tc_rec_event *ev, pid_t pid,
		      const char *terms, struct tc_err *e);

/* Describe ev for messages ("tracepoint sched:sched_switch on cpu 1"). */
void tc_rec_event_name(const struct tc_rec_event *ev, char *buf, size_t len);

#endif
