/* Tracepoint samples of a perf.data (cmd/decode_events.c): kept while decode_input.c reads
 * the records, printed through decoders/tp_event in time order among themselves and each
 * before the first decoded trace record from later in time (trace with perf time: Intel
 * PT) or else from later in the file. */
#ifndef TC_CMD_DECODE_EVENTS_H
#define TC_CMD_DECODE_EVENTS_H

#include <stdint.h>

#include "decoders/rec.h"
#include "lib/perfdata/perf_data.h"

struct decode_ev;

struct decode_ev *decode_ev_new(void (*emit)(void *ctx, const struct tc_rec *r), void *ctx);
void decode_ev_free(struct decode_ev *x);
/* Every record in file order: samples of tracepoints with raw data are kept. */
void decode_ev_record(struct decode_ev *x, const struct tc_perf_data *pd,
		      const struct tc_perf_data_record *r);
/* Emit the kept events from before file offset `before` (UINT64_MAX: all); pd holds the
 * tracing data. */
void decode_ev_flush(struct decode_ev *x, struct tc_perf_data *pd, uint64_t before);
/* Emit the kept events up to perf time `time`. */
void decode_ev_flush_time(struct decode_ev *x, struct tc_perf_data *pd, uint64_t time);
/* Warnings (no or bad tracing data, samples that do not fit their format) and a status
 * line; returns the number of problems warned about. */
int decode_ev_finish(struct decode_ev *x, const char *input);

#endif
