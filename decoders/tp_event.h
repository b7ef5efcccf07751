/* Tracepoint samples into EVENT records: the raw data of a PERF_SAMPLE_RAW sample read
 * through its format from the tracing data (lib/perfdata/tracing_data_read.h): the event's name, its
 * print format applied (perf script's text), and its own fields (common_* left out). */
#ifndef TC_DECODERS_TP_EVENT_H
#define TC_DECODERS_TP_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "decoders/rec.h"
#include "lib/util/err.h"

struct tep_handle;
struct tc_tp_event;

/* tep is borrowed; it must outlive the renderer. */
struct tc_tp_event *tc_tp_event_new(struct tep_handle *tep);
void tc_tp_event_free(struct tc_tp_event *t);

/* Fill r's name, text and fields for the raw data of tracepoint id (the attr's config); r's
 * other members are the caller's. What r points to stays valid until the next call. -1
 * (and r unchanged) when id has no format or the data does not fit it. */
int tc_tp_event_render(struct tc_tp_event *t, uint64_t id, const uint8_t *raw, size_t len,
		  struct tc_rec *r, struct tc_err *e);

#endif
