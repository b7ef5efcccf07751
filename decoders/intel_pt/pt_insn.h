#ifndef TC_DECODERS_INTEL_PT_PT_INSN_H
#define TC_DECODERS_INTEL_PT_PT_INSN_H

/* An instruction as the walk (pt_walk.c) and the skim (pt_skim.c) follow it: what kind of
 * branch it is, the class libipt gives it, its direct target and whether a call puts its
 * return address on libipt's stack; that stack. Static inline: both decode every instruction
 * of a new run with it, and push and pop on every call and return. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <intel-pt.h>

#include "lib/isa/x86.h"

enum tc_pt_insn_kind {
	TC_PT_INSN_LINEAR,	/* no branch: the next instruction follows */
	TC_PT_INSN_COND,	/* conditional jump (target: taken) */
	TC_PT_INSN_CALL,	/* direct near call (target) */
	TC_PT_INSN_JUMP,	/* direct near jump (target) */
	TC_PT_INSN_RET,		/* near return */
	TC_PT_INSN_ICALL,	/* indirect near call (its return address always goes on the stack) */
	TC_PT_INSN_IND,		/* indirect near jump, far transfers */
};

struct tc_pt_insn {
	uint64_t ip, target;
	uint8_t size, kind, iclass;	/* kind: enum tc_pt_insn_kind; iclass: enum pt_insn_class */
	bool push;	/* a direct call whose return address goes on the stack (not call +0) */
};

/* Whether an instruction of class c (enum pt_insn_class) always transfers control: near and
 * far calls, returns and jumps (a conditional jump only when taken). */
static inline bool tc_pt_insn_transfer(unsigned c)
{
	return c == ptic_call || c == ptic_return || c == ptic_jump || c == ptic_far_call ||
	       c == ptic_far_return || c == ptic_far_jump;
}

/* libipt's return-address stack: 64 entries, the oldest dropped when full. */
#define TC_PT_INSN_RETSTACK 64

struct tc_pt_insn_stack {
	uint64_t ip[TC_PT_INSN_RETSTACK + 1];
	uint8_t top, bottom;	/* empty when equal; all zero: empty */
};

static inline void tc_pt_insn_push(struct tc_pt_insn_stack *st, uint64_t ip)
{
	st->ip[st->top] = ip;
	st->top = st->top == TC_PT_INSN_RETSTACK ? 0 : st->top + 1;
	if (st->bottom == st->top)
		st->bottom = st->bottom == TC_PT_INSN_RETSTACK ? 0 : st->bottom + 1;
}

/* false if the stack is empty */
static inline bool tc_pt_insn_pop(struct tc_pt_insn_stack *st, uint64_t *ip)
{
	if (st->top == st->bottom)
		return false;
	st->top = st->top ? st->top - 1 : TC_PT_INSN_RETSTACK;
	*ip = st->ip[st->top];
	return true;
}

/* n bytes at p (1, 2 or 4), little-endian, sign-extended. */
static inline int64_t tc_pt_insn_sext(const uint8_t *p, unsigned n)
{
	switch (n) {
	case 1: return (int8_t)p[0];
	case 2: return (int16_t)(p[0] | p[1] << 8);
	case 4: return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				 (uint32_t)p[3] << 24);
	default: return 0;
	}
}

/* The instruction at ip whose n bytes b lib/isa/x86.c classed as k; false if k does not fit
 * in b, is a mov to CR3 (a TIP.PGD may bind to it: not modelled) or a direct branch whose
 * displacement is not 1, 2 or 4 bytes. */
static inline bool tc_pt_insn_decode(const uint8_t *b, size_t n, struct tc_x86_insn k,
				     uint64_t ip, struct tc_pt_insn *i)
{
	unsigned at;

	if (!k.len || k.len > n)
		return false;
	if (k.opcode + 2 < k.len && b[k.opcode] == 0x0f && b[k.opcode + 1] == 0x22 &&
	    ((b[k.opcode + 2] >> 3) & 7) == 3)
		return false;
	i->ip = ip;
	i->size = (uint8_t)k.len;
	i->target = 0;
	i->push = false;
	at = k.opcode + 1;
	switch (k.kind) {
	case TC_X86_JCC:
		i->kind = TC_PT_INSN_COND;
		i->iclass = ptic_cond_jump;
		if (b[k.opcode] == 0x0f)
			at++;
		break;
	case TC_X86_JMP:
		i->kind = TC_PT_INSN_JUMP;
		i->iclass = ptic_jump;
		break;
	case TC_X86_CALL:
		i->kind = TC_PT_INSN_CALL;
		i->iclass = ptic_call;
		break;
	case TC_X86_RET:
		i->kind = TC_PT_INSN_RET;
		i->iclass = ptic_return;
		return true;
	case TC_X86_ICALL:
		i->kind = TC_PT_INSN_ICALL;
		i->iclass = ptic_call;
		return true;
	case TC_X86_IJMP:
		i->kind = TC_PT_INSN_IND;
		i->iclass = ptic_jump;
		return true;
	case TC_X86_FAR_JMP:
		i->kind = TC_PT_INSN_IND;
		i->iclass = ptic_far_jump;
		return true;
	case TC_X86_FAR_CALL: case TC_X86_SYSCALL: case TC_X86_INT: case TC_X86_INTO:
		i->kind = TC_PT_INSN_IND;
		i->iclass = ptic_far_call;
		return true;
	case TC_X86_FAR_RET: case TC_X86_SYSRET:
		i->kind = TC_PT_INSN_IND;
		i->iclass = ptic_far_return;
		return true;
	default:
		i->kind = TC_PT_INSN_LINEAR;
		i->iclass = ptic_other;
		return true;
	}
	/* direct: the displacement is what follows the opcode */
	if (at >= k.len || (k.len - at != 1 && k.len - at != 2 && k.len - at != 4))
		return false;
	{
		int64_t disp = tc_pt_insn_sext(b + at, k.len - at);

		i->target = ip + k.len + (uint64_t)disp;
		i->push = i->kind == TC_PT_INSN_CALL && disp != 0;
	}
	return true;
}

#endif
