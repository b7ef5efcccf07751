/* x86 instruction facts from the bytes, by Zydis: the length of one instruction and the
 * kind of control transfer it is. libipt's block decoder gives where a block's last
 * instruction starts but not its size, which tells a taken conditional branch from a
 * fall-through and where a range ends; the emulated recorder, the flow decoder, --itrace=i
 * and AutoFDO need the kinds and lengths.
 *
 * A struct tc_x86 holds Zydis's decoders and a memo of instructions already decoded: one
 * per user and thread (it is not shared state; two threads need two). Zydis, not Capstone
 * (which the QEMU plugin keeps for its AArch64 details): its tables hold no pointers, where
 * Capstone's 77,375 relocations cost every command 7-10 ms at start-up. */
#ifndef TC_LIB_ISA_X86_H
#define TC_LIB_ISA_X86_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Control transfers; each user maps them to its own classes. */
enum tc_x86_kind {
	TC_X86_OTHER,
	TC_X86_JCC,		/* jcc (70-7F, 0F 80-8F), loop*, jcxz/jecxz/jrcxz (E0-E3) */
	TC_X86_JMP,		/* EB, E9 */
	TC_X86_CALL,		/* E8 */
	TC_X86_RET,		/* C3, C2 */
	TC_X86_IJMP,		/* FF /4 */
	TC_X86_ICALL,		/* FF /2 */
	TC_X86_FAR_JMP,		/* FF /5, EA */
	TC_X86_FAR_CALL,	/* FF /3, 9A */
	TC_X86_FAR_RET,		/* CA, CB, CF (iret) */
	TC_X86_SYSCALL,		/* 0F 05 syscall, 0F 34 sysenter */
	TC_X86_SYSRET,		/* 0F 07 sysret, 0F 35 sysexit */
	TC_X86_INT,		/* CC int3, CD int n */
	TC_X86_INTO,		/* CE (not in 64-bit code) */
	TC_X86_UD2,		/* 0F 0B */
};

struct tc_x86_insn {
	enum tc_x86_kind kind;
	unsigned len;		/* its size in bytes; 0: not decodable from the bytes given */
	unsigned opcode;	/* offset of the opcode: legacy prefixes and REX before it */
};

struct tc_x86;

/* NULL if out of memory. */
struct tc_x86 *tc_x86_new(void);
void tc_x86_free(struct tc_x86 *x);

/* Size in bytes of the instruction at b (n bytes readable), 0 if it needs more bytes than n
 * or is not decodable. long_mode: 64-bit code; else 32-bit. */
unsigned tc_x86_len(struct tc_x86 *x, const uint8_t *b, size_t n, bool long_mode);

/* Kind and size of the instruction at b (n bytes readable): TC_X86_OTHER and len 0 unless
 * it decodes. */
struct tc_x86_insn tc_x86_classify(struct tc_x86 *x, const uint8_t *b, size_t n,
				   bool long_mode);

#endif
