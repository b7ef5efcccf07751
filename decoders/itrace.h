/* What decode synthesizes from the instruction flow, chosen as perf's --itrace letters
 * choose it (perf's tools/perf/Documentation/itrace.txt): i instructions, b branches,
 * c calls, r returns, e errors. Instructions are RANGE records of one instruction each
 * (start its address, end the next's), their lengths read from the program's image (x86:
 * lib/isa/x86.h; A64, A32: 4 bytes; T32: 2 or 4); where an image or a length is missing the
 * rest of the range goes out as it is. Calls and returns are made here from the decoder's ranges (a range whose last
 * instruction is an executed call or return, to the start of the thread's next range),
 * as BRANCH records whose last_type is TC_INSN_CALL or TC_INSN_RET and whose value is the
 * call depth (perf script --call-trace's indentation): a call is at the depth of its
 * caller, the depth then grows; a return lowers it first (never below 0).
 * Tracepoint samples (EVENT) always pass; the rest of the flow (ranges, context changes,
 * timestamps...) only without --itrace. */
#ifndef TC_DECODERS_ITRACE_H
#define TC_DECODERS_ITRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoders/rec.h"
#include "lib/util/err.h"

enum {
	TC_ITRACE_BRANCHES = 1 << 0,	/* b: every taken branch (the decoder's branch mode) */
	TC_ITRACE_CALLS = 1 << 1,	/* c */
	TC_ITRACE_RETURNS = 1 << 2,	/* r */
	TC_ITRACE_ERRORS = 1 << 3,	/* e: decode errors, lost trace, no image, no sync */
	TC_ITRACE_INSNS = 1 << 4,	/* i */
};

/* The letters of --itrace=LETTERS into TC_ITRACE_* flags; -1 with e naming the letter
 * (and what perf means by it) that is not supported. */
int tc_itrace_parse(const char *s, unsigned *kinds, struct tc_err *e);

struct tc_itrace;

struct tc_itrace *tc_itrace_new(unsigned kinds, void (*emit)(void *ctx, const struct tc_rec *r),
				void *ctx);	/* NULL on ENOMEM */
/* Where instruction bytes come from (i): tc_session_read's signature. */
void tc_itrace_read(struct tc_itrace *t,
		    size_t (*read)(void *ctx, int pid, uint64_t addr, void *buf, size_t len),
		    void *ctx);
/* One decoded record (a decoder's emit callback: ctx is the tc_itrace); out of memory
 * shows at tc_itrace_finish. */
void tc_itrace_feed(void *t, const struct tc_rec *r);
/* Calls and returns whose target did not come (the trace ended) go out with target 0.
 * -1 if memory ran out while feeding. */
int tc_itrace_finish(struct tc_itrace *t);
void tc_itrace_free(struct tc_itrace *t);

#endif
