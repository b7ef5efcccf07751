/* decode --show-events: every perf.data record (side-band, AUX, samples, perf's own) as
 * one text line or one JSON object, with its file offset, size, and the time, CPU and
 * pid/tid it carries (perf's --show-mmap-events, --show-task-events,
 * --show-switch-events, --show-lost-events, all at once). */
#ifndef TC_LIB_OUTPUT_SHOW_EVENTS_H
#define TC_LIB_OUTPUT_SHOW_EVENTS_H

#include <stdbool.h>
#include <stdio.h>

#include "lib/perfdata/perf_data.h"
#include "lib/util/json.h"

struct tc_show_events {
	FILE *f;
	bool json;
	struct tc_json j;
};

void tc_show_events_init(struct tc_show_events *o, FILE *f, bool json);
void tc_show_events_write(struct tc_show_events *o, const struct tc_perf_data_record *r);

#endif
