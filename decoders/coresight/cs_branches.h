/* Branches from CoreSight instruction ranges, in perf's convention (what `perf script
 * --itrace=b` prints for cs_etm): a branch from the last instruction of a range whose last
 * branch was taken (or that an exception ended) to the start of the next range; from 0 into
 * the first range after a discontinuity; to 0 out of the last range before one (but not at
 * the end of the trace: perf emits nothing there). One state
 * per trace ID: ranges of different IDs never connect. */
#ifndef TC_DECODERS_CORESIGHT_CS_BRANCHES_H
#define TC_DECODERS_CORESIGHT_CS_BRANCHES_H

#include <stdbool.h>
#include <stdint.h>

#include "decoders/rec.h"

struct tc_cs_branches {
	enum { TC_CS_BRANCHES_EMPTY, TC_CS_BRANCHES_RANGE, TC_CS_BRANCHES_GAP } prev;
	uint64_t prev_last;		/* address of the previous range's last instruction */
	bool prev_taken;
};

typedef void (*tc_csb_emit_fn)(void *ctx, const struct tc_rec *r);

static inline void tc_csb_init(struct tc_cs_branches *b) { b->prev = TC_CS_BRANCHES_EMPTY; }

/* Feed one element of the ID's stream (RANGE, EXCEPTION, EXCEPTION_RET, TRACE_ON, NO_SYNC,
 * EOT; others are ignored); emits at most one TC_REC_BRANCH that takes id, cpu, pid, tid and
 * offset from r. */
void tc_cs_branches_feed(struct tc_cs_branches *b, const struct tc_rec *r, tc_csb_emit_fn emit,
			 void *ctx);
/* The same, the branch taking pid and tid from these instead (r's are not looked at). */
void tc_cs_branches_feed_as(struct tc_cs_branches *b, const struct tc_rec *r, int pid, int tid,
			    tc_csb_emit_fn emit, void *ctx);

#endif
