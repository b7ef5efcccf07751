#include "lib/isa/x86.h"

#include <stdint.h>

static bool legacy_prefix(unsigned c)
{
	return c == 0x66 || c == 0x67 || c == 0xf0 || c == 0xf2 || c == 0xf3 || c == 0x2e ||
	       c == 0x36 || c == 0x3e || c == 0x26 || c == 0x64 || c == 0x65;
}

/* One-byte opcode map: bit 0 ModRM follows; the rest the immediate. */
enum { M = 1, I8 = 2, I16 = 4, IZ = 8, IV = 16, MOFFS = 32, I16_8 = 64, BAD = 128 };

static uint8_t one_byte(unsigned op, bool long_mode)
{
	unsigned lo = op & 7;

	if (op < 0x40) {
		/* ALU block: r/m forms, AL/eAX immediate forms; the rest are prefixes or
		 * (outside 64-bit mode) push/pop segment, daa, ... */
		if (lo < 4)
			return M;
		if (lo == 4)
			return I8;
		if (lo == 5)
			return IZ;
		return 0;
	}
	if (op >= 0x50 && op <= 0x5f)
		return 0;
	if (op >= 0x70 && op <= 0x7f)
		return I8;
	if (op >= 0x80 && op <= 0x8f)
		return op == 0x81 ? M | IZ : op <= 0x83 ? M | I8 : M;
	if (op >= 0x90 && op <= 0x9f)
		return op == 0x9a ? (long_mode ? BAD : I16 | IZ) : 0;
	if (op >= 0xa0 && op <= 0xa3)
		return MOFFS;
	if (op == 0xa8)
		return I8;
	if (op == 0xa9)
		return IZ;
	if (op >= 0xa4 && op <= 0xaf)
		return 0;
	if (op >= 0xb0 && op <= 0xb7)
		return I8;
	if (op >= 0xb8 && op <= 0xbf)
		return IV;
	if (op >= 0xd8 && op <= 0xdf)	/* x87 */
		return M;
	switch (op) {
	case 0x40: case 0x41: case 0x42: case 0x43: case 0x44: case 0x45: case 0x46: case 0x47:
	case 0x48: case 0x49: case 0x4a: case 0x4b: case 0x4c: case 0x4d: case 0x4e: case 0x4f:
		return 0;	/* inc/dec outside 64-bit mode */
	case 0x60: case 0x61: return 0;
	case 0x62: case 0x63: return M;
	case 0x68: return IZ;
	case 0x69: return M | IZ;
	case 0x6a: return I8;
	case 0x6b: return M | I8;
	case 0x6c: case 0x6d: case 0x6e: case 0x6f: return 0;
	case 0xc0: case 0xc1: return M | I8;
	case 0xc2: return I16;
	case 0xc3: return 0;
	case 0xc4: case 0xc5: return M;	/* les/lds outside 64-bit mode */
	case 0xc6: return M | I8;
	case 0xc7: return M | IZ;
	case 0xc8: return I16_8;
	case 0xc9: return 0;
	case 0xca: return I16;
	case 0xcb: case 0xcc: return 0;
	case 0xcd: return I8;
	case 0xce: case 0xcf: return 0;
	case 0xd0: case 0xd1: case 0xd2: case 0xd3: return M;
	case 0xd4: case 0xd5: return I8;
	case 0xd6: case 0xd7: return 0;
	case 0xe0: case 0xe1: case 0xe2: case 0xe3: return I8;
	case 0xe4: case 0xe5: case 0xe6: case 0xe7: return I8;
	case 0xe8: case 0xe9: return IZ;
	case 0xea: return long_mode ? BAD : I16 | IZ;
	case 0xeb: return I8;
	case 0xec: case 0xed: case 0xee: case 0xef: return 0;
	case 0xf1: case 0xf4: case 0xf5: return 0;
	case 0xf6: case 0xf7: return M;	/* test's immediate depends on ModRM.reg */
	case 0xf8: case 0xf9: case 0xfa: case 0xfb: case 0xfc: case 0xfd: return 0;
	case 0xfe: case 0xff: return M;
	default: return BAD;
	}
}

/* Two-byte map (0F xx): which have no ModRM, which have an 8-bit immediate. */
static uint8_t two_byte(unsigned op)
{
	if (op >= 0x80 && op <= 0x8f)
		return IZ;	/* jcc rel32 */
	if ((op >= 0x70 && op <= 0x73) || op == 0xa4 || op == 0xac || op == 0xba ||
	    (op >= 0xc2 && op <= 0xc6) || op == 0x0f)
		return M | I8;
	if ((op >= 0xc8 && op <= 0xcf) || (op >= 0x30 && op <= 0x37) || op == 0x05 ||
	    op == 0x06 || op == 0x07 || op == 0x08 || op == 0x09 || op == 0x0b || op == 0x0e ||
	    op == 0x77 || op == 0xa0 || op == 0xa1 || op == 0xa2 || op == 0xa8 || op == 0xa9 ||
	    op == 0xaa)
		return 0;
	return M;
}

/* Bytes of ModRM, SIB and displacement at b (n readable); 0 if short. */
static unsigned modrm_len(const unsigned char *b, size_t n, bool addr16)
{
	unsigned mod, rm, len = 1;

	if (n < 1)
		return 0;
	mod = b[0] >> 6;
	rm = b[0] & 7;
	if (mod == 3)
		return 1;
	if (addr16) {
		if (mod == 0 && rm == 6)
			return 3;
		return 1 + (mod == 1 ? 1 : mod == 2 ? 2 : 0);
	}
	if (rm == 4) {
		if (n < 2)
			return 0;
		len++;
		if (mod == 0 && (b[1] & 7) == 5)
			len += 4;
	} else if (mod == 0 && rm == 5) {
		len += 4;	/* RIP-relative (64-bit) or absolute disp32 */
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return len;
}

unsigned tc_x86_len(const unsigned char *b, size_t n, bool long_mode)
{
	bool opsize = false, addrsize = false, rex_w = false, near_branch;
	unsigned i = 0, len, map = 0, op;
	bool two = false;
	uint8_t f;

	for (; i < n && i < 15; i++) {
		unsigned c = b[i];

		if (c == 0x66)
			opsize = true;
		else if (c == 0x67)
			addrsize = true;
		else if (!legacy_prefix(c))
			break;
	}
	if (long_mode && i < n && (b[i] & 0xf0) == 0x40) {
		rex_w = b[i] & 8;
		i++;
	}
	if (i >= n)
		return 0;
	op = b[i];
	/* VEX (C4/C5) and EVEX (62): always in 64-bit mode; elsewhere only when the next
	 * byte's top bits are 11 (otherwise les/lds/bound). */
	if ((op == 0xc4 || op == 0xc5 || op == 0x62) && i + 1 < n &&
	    (long_mode || (b[i + 1] & 0xc0) == 0xc0)) {
		unsigned pl = op == 0xc5 ? 1 : op == 0xc4 ? 2 : 3;

		if (i + 1 + pl >= n)
			return 0;
		map = op == 0xc5 ? 1 : b[i + 1] & (op == 0x62 ? 7 : 0x1f);
		if (op == 0xc4)
			rex_w = b[i + 2] & 0x80;
		i += 1 + pl;
		op = b[i++];
		if (map == 1 && op == 0x77)	/* vzeroupper/vzeroall: no ModRM */
			return i;
		if (!(len = modrm_len(b + i, n - i, !long_mode && addrsize)))
			return 0;
		i += len;
		if (map == 3 || (map == 1 && (two_byte(op) & I8)))
			i++;
		return i <= n && i <= 15 ? i : 0;
	}
	i++;
	if (op == 0x0f) {
		if (i >= n)
			return 0;
		two = true;
		op = b[i++];
		if (op == 0x38 || op == 0x3a) {
			map = op == 0x38 ? 2 : 3;
			if (i >= n)
				return 0;
			i++;
			f = map == 3 ? M | I8 : M;
		} else {
			f = two_byte(op);
		}
	} else {
		f = one_byte(op, long_mode);
		if (f & BAD)
			return 0;
		/* test r/m, imm (F6/F7 with ModRM.reg 0 or 1) */
		if ((op == 0xf6 || op == 0xf7) && i < n && ((b[i] >> 3) & 7) < 2)
			f |= op == 0xf6 ? I8 : IZ;
	}
	if (f & M) {
		if (!(len = modrm_len(b + i, n - i, !long_mode && addrsize)))
			return 0;
		i += len;
	}
	if (f & I8)
		i += 1;
	if (f & I16)
		i += 2;
	if (f & I16_8)
		i += 3;
	/* In 64-bit mode near branches keep rel32 whatever the operand size. */
	near_branch = map ? false : two ? op >= 0x80 && op <= 0x8f : op == 0xe8 || op == 0xe9;
	if (f & IZ)
		i += opsize && !(long_mode && near_branch) ? 2 : 4;
	if (f & IV)
		i += rex_w ? 8 : opsize ? 2 : 4;
	if (f & MOFFS)
		i += long_mode ? (addrsize ? 4 : 8) : (addrsize ? 2 : 4);
	return i <= n && i <= 15 ? i : 0;
}

struct tc_x86_insn tc_x86_classify(const uint8_t *b, size_t n)
{
	struct tc_x86_insn r = { TC_X86_OTHER, 0, 0 };
	size_t i = 0;

	while (i < n && i < 14 && legacy_prefix(b[i]))
		i++;
	if (i < n && (b[i] & 0xf0) == 0x40)
		i++;
	r.opcode = (unsigned)i;
	if (i + 1 >= n)
		return r;
	switch (b[i]) {
	case 0xff:
		switch ((b[i + 1] >> 3) & 7) {
		case 2: r.kind = TC_X86_ICALL; break;
		case 3: r.kind = TC_X86_FAR_CALL; break;
		case 4: r.kind = TC_X86_IJMP; break;
		case 5: r.kind = TC_X86_FAR_JMP; break;
		}
		break;
	case 0xe8: r.kind = TC_X86_CALL; break;
	case 0xe9: case 0xeb: r.kind = TC_X86_JMP; break;
	case 0xc2: case 0xc3: r.kind = TC_X86_RET; break;
	case 0xca: case 0xcb: case 0xcf: r.kind = TC_X86_FAR_RET; break;
	case 0xcc: case 0xcd: r.kind = TC_X86_INT; break;
	case 0xce: r.kind = TC_X86_INTO; break;
	case 0x9a: r.kind = TC_X86_FAR_CALL; break;
	case 0xea: r.kind = TC_X86_FAR_JMP; break;
	case 0x0f:
		if (b[i + 1] == 0x05 || b[i + 1] == 0x34) {
			r.kind = TC_X86_SYSCALL;
		} else if (b[i + 1] == 0x07 || b[i + 1] == 0x35) {
			r.kind = TC_X86_SYSRET;
		} else if (b[i + 1] == 0x0b) {
			r.kind = TC_X86_UD2;
		} else if (b[i + 1] >= 0x80 && b[i + 1] <= 0x8f) {
			r.kind = TC_X86_JCC;
			r.len = (unsigned)i + 6;
		}
		break;
	default:
		if ((b[i] >= 0x70 && b[i] <= 0x7f) || (b[i] >= 0xe0 && b[i] <= 0xe3)) {
			r.kind = TC_X86_JCC;
			r.len = (unsigned)i + 2;
		}
		break;
	}
	return r;
}
