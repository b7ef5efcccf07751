/* AArch64 (A64) instruction classes that matter for trace: where control goes and
 * whether ETM sees a waypoint there. */
#ifndef TC_LIB_ISA_A64_H
#define TC_LIB_ISA_A64_H

#include <stdint.h>

enum tc_a64_class {
	TC_A64_OTHER,
	TC_A64_BRANCH,		/* B, BL: *target */
	TC_A64_COND,		/* B.cond, CBZ/CBNZ, TBZ/TBNZ: *target */
	TC_A64_INDIRECT,	/* BR, BLR, RET, ERET and their pointer-auth forms */
	TC_A64_ISB,		/* a waypoint for ETM (E atom) */
	TC_A64_TB_END,		/* qemu ends the TB after it, no waypoint: SVC, WFI, ... */
};

/* Class of the instruction insn at pc; *target set for the direct branches. */
enum tc_a64_class tc_a64_classify(uint32_t insn, uint64_t pc, uint64_t *target);

#endif
