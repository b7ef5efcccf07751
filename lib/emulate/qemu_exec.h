/* The executed path of an aarch64 program from the starts of the translation blocks qemu
 * executed, in order (emu_etm.c takes them from tracectl's plugin; tests also from qemu's
 * exec log, `qemu-aarch64 -d exec,nochain`: one "Trace N: HOST [FLAGS/PC/...] SYM" line per
 * executed TB). TB starts become blocks that end in ETM waypoints (branch or ISB), the input
 * of lib/emulate/etm4_enc: the program image tells where each TB ends and what its last
 * instruction is. */
#ifndef TC_LIB_EMULATE_QEMU_EXEC_H
#define TC_LIB_EMULATE_QEMU_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/emulate/etm4_enc.h"
#include "lib/util/err.h"

/* One exec log line: 1 and *pc for a TB execution line, 0 for anything else. *cpu (may be
 * NULL) gets N of "Trace N:", the vCPU index: qemu-user gives every thread its own, in
 * creation order, and the threads' lines interleave in one log. */
int tc_qemu_exec_parse_line(const char *line, unsigned *cpu, uint64_t *pc);

/* Reads program bytes at a virtual address; returns how many it could. */
typedef size_t (*tc_qexec_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);
/* Receives each block. Return nonzero (with e set) to stop. */
typedef int (*tc_qexec_block_fn)(void *ctx, const struct tc_etm4_enc_block *b, struct tc_err *e);

struct tc_qemu_exec_stats {
	uint64_t tbs;		/* TB executions fed */
	uint64_t blocks;	/* blocks delivered */
	uint64_t continuations;	/* TBs that only continued a block (page end, SVC, ...) */
	uint64_t gaps;		/* flow the program image cannot explain (signals, unknown
				 * code): delivered as END_NONE and a new start */
};

struct tc_qemu_exec;

struct tc_qemu_exec *tc_qemu_exec_new(tc_qexec_read_fn rd, tc_qexec_block_fn fn, void *ctx,
			      struct tc_err *e);
void tc_qemu_exec_free(struct tc_qemu_exec *q);
/* The next executed TB starts at pc. */
int tc_qemu_exec_tb(struct tc_qemu_exec *q, uint64_t pc, struct tc_err *e);
/* Does the last TB fed end with the instruction at addr (where qemu ends a TB: a branch,
 * an SVC, ...)? False too when its code could not be read. */
bool tc_qemu_exec_last_tb_ends_at(struct tc_qemu_exec *q, uint64_t addr);
/* End of the log: deliver the unfinished last block (END_NONE). */
int tc_qemu_exec_end(struct tc_qemu_exec *q, struct tc_err *e);
const struct tc_qemu_exec_stats *tc_qemu_exec_stats(const struct tc_qemu_exec *q);

#endif
