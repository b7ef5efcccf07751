/* Chrome trace-event JSON (chrome://tracing, Perfetto): the call stacks as nested slices per
 * thread, B and E events written as ranges arrive. ts is the latest TIMESTAMP value where
 * the stream has them (raw trace time units), else the count of instructions executed
 * before (all threads): a timeline in instructions. Threads without a tid are shown as
 * tid 1000000 + cpu. A break closes the thread's slices and marks an instant event.
 * Each thread, when first seen, gets metadata events ("ph":"M") naming it and its process
 * (thread_name, process_name: the comm; "cpu N" for a thread known only by its CPU), as
 * perf's and magic-trace's timelines do. */
#ifndef TC_LIB_OUTPUT_CHROME_H
#define TC_LIB_OUTPUT_CHROME_H

#include <stdio.h>

#include "lib/analysis/callstack.h"

struct tc_chrome;

/* Starts the document on f. NULL on ENOMEM. */
/* comm (may be NULL) names threads and processes: tid's command, or NULL. */
struct tc_chrome *tc_chrome_new(FILE *f, tc_sym_fn sym, void *sym_ctx,
				const char *(*comm)(void *ctx, int pid, int tid), void *comm_ctx);
void tc_chrome_range(void *chrome, const struct tc_callstack_range *r);	/* tc_callstack_ops.range */
void tc_chrome_brk(void *chrome, int pid, int tid, int cpu, const struct tc_rec *r);
/* Closes every open slice and the document, frees c. -1 if memory ran out on the way (the
 * document is still well formed) or f has a write error. */
int tc_chrome_finish(struct tc_chrome *c);

#endif
