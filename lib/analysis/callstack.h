/* Call stacks rebuilt from a decoded record stream, per thread (tid, or cpu where the tid is
 * not known), for reports and flame graphs. Consumers get, for every RANGE, the stack it ran
 * in and its instruction count.
 *
 * Rules (the trace shows branches, not stacks, so only what was seen is on a stack):
 *  - A thread's first range, and the first range after a break, start a stack of one ROOT
 *    frame: code entered before we could see it, its callers unknown. Nothing is invented
 *    below it.
 *  - A range ending in CALL pushes a CALL frame: return address = the range's end, function =
 *    where the next range starts. If the next range starts at the return address itself the
 *    callee was not traced and nothing is pushed.
 *  - A range ending in RET pops to the deepest frame whose return address is where the next
 *    range starts (frames above it left without a traced return). If no frame matches, the
 *    thread returned past the oldest frame seen (the trace started mid-stack): the stack is
 *    replaced by one ROOT frame for the code returned to, and `unmatched` counts it.
 *  - SYSCALL ranges and EXCEPTION records push an EXC frame (one, if both come for the same
 *    SVC); EXC_RET ranges and EXCEPTION_RET records pop to the deepest EXC frame (one pop,
 *    if both come), or, with none, replace the stack by a ROOT frame as above.
 *  - TRACE_ON, NO_SYNC, ERROR, LOST, ADDR_NACC are breaks: what ran in between is unknown, so
 *    the thread's stack is dropped (the brk callback tells consumers; no frames are invented).
 *    A break with neither tid nor cpu known drops every stack.
 *  - A frame's function is the symboliser's function start for its addresses; a range in a
 *    different known function than the deepest frame's (a tail call, a jump through a PLT
 *    stub) moves that frame to it. Unknown code keeps the raw address it was entered at. */
#ifndef TC_LIB_ANALYSIS_CALLSTACK_H
#define TC_LIB_ANALYSIS_CALLSTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoders/rec.h"

/* Symboliser: the function holding addr in process pid. Returns 0 and sets *name (valid until
 * the next call at least) and *start when known, -1 otherwise. */
typedef int (*tc_sym_fn)(void *ctx, int pid, uint64_t addr, const char **name,
			 uint64_t *start);

enum tc_frame_kind {
	TC_FRAME_ROOT,		/* bottom frame: entered unseen, callers unknown */
	TC_FRAME_CALL,		/* seen being called */
	TC_FRAME_EXC,		/* syscall or exception entry */
};

#define TC_CALLSTACK_MAX_DEPTH 1024	/* deeper stacks lose their oldest frames (counted) */

/* One range as the consumer sees it; valid only during the callback. */
struct tc_callstack_range {
	const struct tc_rec *rec;
	int pid, tid, cpu;	/* the thread's (latest known) */
	const uint64_t *func;	/* function address per frame, root first, deepest last */
	const uint8_t *kind;	/* enum tc_frame_kind per frame */
	unsigned depth;		/* >= 1 */
	unsigned kept;		/* frames [0, kept) are as at the thread's previous range;
				 * [kept, depth) were entered since (or the stack was dropped) */
	uint32_t insns;
	bool has_ts;		/* a TIMESTAMP came before this range */
	uint64_t ts;		/* the latest TIMESTAMP value */
	uint64_t insns_before;	/* instructions of all ranges before this one (any thread) */
};

struct tc_callstack_ops {
	void (*range)(void *ctx, const struct tc_callstack_range *r);		/* required */
	/* optional: a break dropped this thread's stack (tid/cpu -1 where unknown) */
	void (*brk)(void *ctx, int pid, int tid, int cpu, const struct tc_rec *r);
	tc_sym_fn sym;		/* optional: without it functions are entry addresses */
	void *ctx;		/* for range and brk */
	void *sym_ctx;
	/* optional: a number that changes whenever sym may answer differently (lib/analysis/
	 * symcache.h, decoders/session.h tc_session_space; NULL while not known). With it the
	 * function of an address is asked once while the number stands, not once per range. */
	const uint64_t *(*space)(void *ctx);
	void *space_ctx;
};

struct tc_callstack_stats {
	uint64_t ranges, insns, calls, returns, exceptions, exc_returns;
	uint64_t unmatched;	/* returns past the oldest frame seen */
	uint64_t breaks;	/* stacks dropped at a discontinuity */
	uint64_t depth_drops;	/* frames lost to TC_CALLSTACK_MAX_DEPTH */
	unsigned max_depth, threads;
};

struct tc_callstack;

struct tc_callstack *tc_callstack_new(const struct tc_callstack_ops *ops);	/* NULL on ENOMEM */
/* Feed every record in stream order. -1 only on ENOMEM (the record is then ignored). */
int tc_callstack_feed(struct tc_callstack *cs, const struct tc_rec *r);
/* Records r[0..n) in order (a run of RANGE records from a decoder, decoders/decoder.h
 * emit_ranges), as tc_callstack_feed of each. -1 if any failed on ENOMEM. */
int tc_callstack_feed_ranges(struct tc_callstack *cs, const struct tc_rec *r, size_t n);
const struct tc_callstack_stats *tc_callstack_stats(const struct tc_callstack *cs);
void tc_callstack_free(struct tc_callstack *cs);

/* The name of the function at addr: the symboliser's, else "0x<addr>" in buf. */
const char *tc_callstack_func_name(tc_sym_fn sym, void *sym_ctx, int pid, uint64_t addr, char *buf,
			 size_t len);

#endif
