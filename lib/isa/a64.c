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
