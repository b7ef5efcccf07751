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

/* What an ETMv4 instruction-trace decoder needs of one A64 instruction: whether it is a
 * waypoint (P0 instruction) and of which kind, in the terms of the architecture's ETM
 * instruction categories and of OpenCSD's element types (decoders/coresight/etm4_walk.c
 * must give what OpenCSD gives). */
enum tc_a64_wp {
	TC_A64_WP_NONE,		/* not a waypoint */
	TC_A64_WP_DIRECT,	/* B, BL, B.cond, BC.cond, CBZ/CBNZ, TBZ/TBNZ: target known */
	TC_A64_WP_INDIRECT,	/* BR, BLR, RET, ERET (and pointer-auth forms from v8.3) */
	TC_A64_WP_ISB,
	TC_A64_WP_DSB_DMB,	/* only with TC_A64_F_DSB_DMB */
	TC_A64_WP_WFI_WFE,	/* only with TC_A64_F_WFI_WFE */
	TC_A64_WP_TSTART,	/* only with TC_A64_F_AA64 */
};
enum tc_a64_wp_sub { TC_A64_SUB_NONE, TC_A64_SUB_LINK, TC_A64_SUB_RET, TC_A64_SUB_ERET };

#define TC_A64_F_V8_3	0x1	/* v8.3 or later: pointer-auth branches */
#define TC_A64_F_AA64	0x2	/* later AArch64 features: WFIT/WFET, TSTART */
#define TC_A64_F_WFI_WFE 0x4	/* WFI/WFE are traced as branches (ETM 4.3+, TRCIDR2) */
#define TC_A64_F_DSB_DMB 0x8	/* DSB/DMB are waypoints */

struct tc_a64_wp_info {
	uint8_t wp;		/* enum tc_a64_wp */
	uint8_t sub;		/* enum tc_a64_wp_sub */
	uint8_t link;		/* writes the link register */
	uint8_t cond;		/* conditional branch */
	uint64_t target;	/* TC_A64_WP_DIRECT */
};

/* Waypoint facts of insn at pc under flags (TC_A64_F_*). */
void tc_a64_waypoint(uint32_t insn, uint64_t pc, unsigned flags, struct tc_a64_wp_info *w);

#endif
