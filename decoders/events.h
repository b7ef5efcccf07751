/* Tracepoint samples of a perf.data (decoders/events.c): kept while the session reads the
 * records, emitted through decoders/tp_event in time order among themselves and each
 * before the first decoded trace record from later in time (records with perf time) or
 * else from later in the file. */
#ifndef TC_DECODERS_EVENTS_H
#define TC_DECODERS_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "decoders/rec.h"
#include "lib/perfdata/perf_data.h"
#include "lib/util/diag.h"
#include "lib/util/err.h"

struct tc_events;

/* NULL on ENOMEM. */
struct tc_events *tc_events_new(void (*emit)(void *ctx, const struct tc_rec *r), void *ctx);
void tc_events_free(struct tc_events *x);
/* Every record in file order: samples of tracepoints with raw data are kept. -1 on ENOMEM. */
int tc_events_record(struct tc_events *x, const struct tc_perf_data *pd,
		     const struct tc_perf_data_record *r, struct tc_err *e);
/* Emit the kept events from before file offset `before` (UINT64_MAX: all); pd holds the
 * tracing data. -1 once the event formats found no memory (nothing more is emitted). */
int tc_events_flush(struct tc_events *x, const struct tc_perf_data *pd, uint64_t before);
/* Emit the kept events up to perf time `time`; -1 as above. */
int tc_events_flush_time(struct tc_events *x, const struct tc_perf_data *pd, uint64_t time);
/* Whether kept events wait to be emitted: without, the flushes have nothing to do. */
bool tc_events_waiting(const struct tc_events *x);
/* Warnings (no or bad tracing data, samples that do not fit their format) and a status
 * line into m; returns the number of problems warned about. */
int tc_events_finish(struct tc_events *x, const char *input, struct tc_diag *m);

#endif
