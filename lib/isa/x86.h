/* x86 instruction facts from the bytes: the length of one instruction (prefixes,
 * REX/VEX/EVEX, opcode maps, ModRM/SIB, displacement, immediate) and the kind of control
 * transfer it is. libipt's block decoder gives where a block's last instruction starts but
 * not its size, which tells a taken conditional branch from a fall-through and where a
 * range ends; the emulated recorder, the flow decoder and AutoFDO need the kinds. */
#ifndef TC_LIB_ISA_X86_H
#define TC_LIB_ISA_X86_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Size in bytes of the instruction at b (n bytes readable), 0 if it needs more bytes
 * than n or is not decodable. long_mode: 64-bit code; else 32-bit (16-bit code counts as
 * 32-bit with its operand- and address-size prefixes swapped: not handled). */
unsigned tc_x86_len(const unsigned char *b, size_t n, bool long_mode);

/* Control transfers by opcode; each user maps them to its own classes. */
enum tc_x86_kind {
	TC_X86_OTHER,
	TC_X86_JCC,		/* 70-7F, E0-E3 (loop, jrcxz), 0F 80-8F */
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
	TC_X86_INTO,		/* CE */
	TC_X86_UD2,		/* 0F 0B */
};

struct tc_x86_insn {
	enum tc_x86_kind kind;
	unsigned len;		/* known for TC_X86_JCC only */
	unsigned opcode;	/* offset of the opcode: legacy prefixes and REX before it */
};

/* Kind of the instruction at b (n bytes readable): TC_X86_OTHER unless the opcode and the
 * byte after it are readable. A REX byte is skipped in any mode. */
struct tc_x86_insn tc_x86_classify(const uint8_t *b, size_t n);

#endif
