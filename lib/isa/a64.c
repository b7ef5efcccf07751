#include "lib/isa/a64.h"

/* The low bits of v as a two's complement number. */
static int64_t sext(uint64_t v, unsigned bits)
{
	uint64_t m = 1ULL << (bits - 1);

	v &= (1ULL << bits) - 1;
	return (int64_t)((v ^ m) - m);
}

enum tc_a64_class tc_a64_classify(uint32_t i, uint64_t pc, uint64_t *target)
{
	if ((i & 0x7c000000) == 0x14000000) {	/* B, BL */
		*target = pc + (uint64_t)(sext(i, 26) * 4);
		return TC_A64_BRANCH;
	}
	if ((i & 0xff000010) == 0x54000000 ||	/* B.cond */
	    (i & 0x7e000000) == 0x34000000) {	/* CBZ, CBNZ */
		*target = pc + (uint64_t)(sext(i >> 5, 19) * 4);
		return TC_A64_COND;
	}
	if ((i & 0x7e000000) == 0x36000000) {	/* TBZ, TBNZ */
		*target = pc + (uint64_t)(sext(i >> 5, 14) * 4);
		return TC_A64_COND;
	}
	if ((i & 0xffdffc1f) == 0xd61f0000 ||	/* BR, BLR */
	    (i & 0xfffffc1f) == 0xd65f0000 ||	/* RET */
	    i == 0xd69f03e0 ||			/* ERET */
	    (i & 0xfedff800) == 0xd61f0800 ||	/* BRAA(Z), BRAB(Z), BLRAA(Z), BLRAB(Z) */
	    (i & 0xfffffbff) == 0xd65f0bff ||	/* RETAA, RETAB */
	    (i & 0xfffffbff) == 0xd69f0bff)	/* ERETAA, ERETAB */
		return TC_A64_INDIRECT;
	if ((i & 0xfffff0ff) == 0xd50330df)
		return TC_A64_ISB;
	if ((i & 0xff000000) == 0xd4000000 ||	/* SVC, HVC, SMC, BRK, HLT, DCPS */
	    i == 0xd503203f || i == 0xd503205f || i == 0xd503207f ||	/* YIELD, WFE, WFI */
	    (i & 0xfff00000) == 0xd5100000 ||	/* MSR (register), e.g. TPIDR_EL0 */
	    (i & 0xfff8f01f) == 0xd500401f)	/* MSR (immediate) */
		return TC_A64_TB_END;
	return TC_A64_OTHER;
}

/* Encodings (Arm ARM, "A64 instruction set encoding"): unconditional branch (immediate)
 * 0b?00101 imm26, compare and branch 0b?011010 / test and branch 0b?011011 (imm19 / imm14
 * at bit 5), conditional branch 0b01010100 imm19 (bit 4 set: BC.cond), unconditional
 * branch (register) 0b1101011, barriers in the system instruction space (CRm, op2). */
void tc_a64_waypoint(uint32_t i, uint64_t pc, unsigned flags, struct tc_a64_wp_info *w)
{
	*w = (struct tc_a64_wp_info){ 0 };
	/* branch (register): BR/BLR, RET, ERET, then the v8.3 authenticated forms */
	if ((i & 0xffdffc1f) == 0xd61f0000) {
		w->wp = TC_A64_WP_INDIRECT;
		if (i & (1u << 21))
			w->link = 1, w->sub = TC_A64_SUB_LINK;
		return;
	}
	if ((i & 0xfffffc1f) == 0xd65f0000) {
		w->wp = TC_A64_WP_INDIRECT, w->sub = TC_A64_SUB_RET;
		return;
	}
	if (i == 0xd69f03e0) {
		w->wp = TC_A64_WP_INDIRECT, w->sub = TC_A64_SUB_ERET;
		return;
	}
	if (flags & TC_A64_F_V8_3) {
		if ((i & 0xffdff800) == 0xd71f0800 ||	/* BRAA, BRAB, BLRAA, BLRAB */
		    (i & 0xffdff81f) == 0xd61f081f) {	/* BRAAZ, BRABZ, BLRAAZ, BLRABZ */
			w->wp = TC_A64_WP_INDIRECT;
			if (i & (1u << 21))
				w->link = 1, w->sub = TC_A64_SUB_LINK;
			return;
		}
		if ((i & 0xfffffbff) == 0xd69f0bff) {	/* ERETAA, ERETAB */
			w->wp = TC_A64_WP_INDIRECT, w->sub = TC_A64_SUB_ERET;
			return;
		}
		if ((i & 0xfffffbff) == 0xd65f0bff) {	/* RETAA, RETAB */
			w->wp = TC_A64_WP_INDIRECT, w->sub = TC_A64_SUB_RET;
			return;
		}
	}
	/* direct branches */
	if ((i & 0x7c000000) == 0x34000000) {		/* CBZ, CBNZ, TBZ, TBNZ */
		w->wp = TC_A64_WP_DIRECT, w->cond = 1;
		if (i & (1u << 25))			/* test and branch: imm14 */
			w->target = pc + (uint64_t)(sext(i >> 5, 14) * 4);
		else
			w->target = pc + (uint64_t)(sext(i >> 5, 19) * 4);
		return;
	}
	if ((i & 0xff000000) == 0x54000000) {		/* B.cond, BC.cond */
		w->wp = TC_A64_WP_DIRECT, w->cond = 1;
		w->target = pc + (uint64_t)(sext(i >> 5, 19) * 4);
		return;
	}
	if ((i & 0x7c000000) == 0x14000000) {		/* B, BL */
		w->wp = TC_A64_WP_DIRECT;
		if (i & 0x80000000u)
			w->link = 1, w->sub = TC_A64_SUB_LINK;
		w->target = pc + (uint64_t)(sext(i, 26) * 4);
		return;
	}
	/* barriers: DSB (op2 100), DMB (101), ISB (110); CRm any */
	if ((i & 0xfffff09f) == 0xd503309f) {
		switch (i & 0x60) {
		case 0x40:
			w->wp = TC_A64_WP_ISB;
			return;
		case 0x00:
		case 0x20:
			if (flags & TC_A64_F_DSB_DMB)
				w->wp = TC_A64_WP_DSB_DMB;
			return;
		default:
			return;
		}
	}
	if (flags & TC_A64_F_WFI_WFE) {
		if ((i & 0xffffffdf) == 0xd503205f ||	/* WFE, WFI */
		    ((flags & TC_A64_F_AA64) && (i & 0xffffffc0) == 0xd5031000)) {	/* WFET, WFIT */
			w->wp = TC_A64_WP_WFI_WFE;
			return;
		}
	}
	if ((flags & TC_A64_F_AA64) && (i & 0xffffffe0) == 0xd5233060)	/* TSTART */
		w->wp = TC_A64_WP_TSTART;
}
