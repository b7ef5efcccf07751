/* perf script --call-trace's listing: one line per call and per return, the function's
 * name indented by the call depth, from the call and return records decoders/itrace.c
 * synthesizes (BRANCH records, last_type TC_INSN_CALL or TC_INSN_RET, value the depth).
 * A call names the function called (its target), a return the function it leaves (its
 * source). Other records (errors, tracepoint samples) go to the listing writer. */
#ifndef TC_LIB_OUTPUT_CALL_TRACE_H
#define TC_LIB_OUTPUT_CALL_TRACE_H

#include <stdbool.h>
#include <stdio.h>

#include "decoders/rec.h"
#include "lib/output/listing.h"
#include "lib/util/json.h"

struct tc_call_trace {
	FILE *f;
	bool json;
	struct tc_json j;
	/* the function at addr (pid's address space): name, 0 when found */
	int (*sym)(void *ctx, int pid, uint64_t addr, const char **name, uint64_t *start);
	tc_symbolize_fn symbolize;	/* fallback for addresses without a function */
	void *ctx;
	struct tc_listing *other;	/* the rest, or NULL to leave it out */
};

void tc_call_trace_init(struct tc_call_trace *c, FILE *f, bool json);
void tc_call_trace_write(struct tc_call_trace *c, const struct tc_rec *r);

#endif
