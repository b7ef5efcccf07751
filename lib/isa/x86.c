#include "lib/isa/x86.h"

#include <Zydis/Zydis.h>
#include <stdlib.h>
#include <string.h>

/* Instructions decoded, by their first bytes: a hit needs the instruction's own bytes
 * equal (its decode depends on nothing else), so the memo is exact. */
#define MEMO 4096
#define MAX_LEN 15

struct memo {
	uint8_t bytes[MAX_LEN];
	uint8_t len;		/* 0: empty */
	uint8_t kind, opcode, long_mode;
};

struct tc_x86 {
	ZydisDecoder dec[2];	/* 32-bit, 64-bit */
	struct memo *memo;
};

void tc_x86_free(struct tc_x86 *x)
{
	if (!x)
		return;
	free(x->memo);
	free(x);
}

struct tc_x86 *tc_x86_new(void)
{
	struct tc_x86 *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	if (ZYAN_FAILED(ZydisDecoderInit(&x->dec[0], ZYDIS_MACHINE_MODE_LEGACY_32,
					 ZYDIS_STACK_WIDTH_32)) ||
	    ZYAN_FAILED(ZydisDecoderInit(&x->dec[1], ZYDIS_MACHINE_MODE_LONG_64,
					 ZYDIS_STACK_WIDTH_64)) ||
	    !(x->memo = calloc(MEMO, sizeof(*x->memo)))) {
		tc_x86_free(x);
		return NULL;
	}
	return x;
}

static bool legacy_prefix(unsigned c)
{
	return c == 0x66 || c == 0x67 || c == 0xf0 || c == 0xf2 || c == 0xf3 || c == 0x2e ||
	       c == 0x36 || c == 0x3e || c == 0x26 || c == 0x64 || c == 0x65;
}

/* Zydis's instruction (and its opcode byte, for direct or indirect) to a kind. Far
 * transfers are the near ones' mnemonics with a far branch type. */
static enum tc_x86_kind kind_of(const ZydisDecodedInstruction *in, unsigned op)
{
	bool far = in->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;

	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_JB: case ZYDIS_MNEMONIC_JBE: case ZYDIS_MNEMONIC_JCXZ:
	case ZYDIS_MNEMONIC_JECXZ: case ZYDIS_MNEMONIC_JL: case ZYDIS_MNEMONIC_JLE:
	case ZYDIS_MNEMONIC_JNB: case ZYDIS_MNEMONIC_JNBE: case ZYDIS_MNEMONIC_JNL:
	case ZYDIS_MNEMONIC_JNLE: case ZYDIS_MNEMONIC_JNO: case ZYDIS_MNEMONIC_JNP:
	case ZYDIS_MNEMONIC_JNS: case ZYDIS_MNEMONIC_JNZ: case ZYDIS_MNEMONIC_JO:
	case ZYDIS_MNEMONIC_JP: case ZYDIS_MNEMONIC_JRCXZ: case ZYDIS_MNEMONIC_JS:
	case ZYDIS_MNEMONIC_JZ: case ZYDIS_MNEMONIC_LOOP: case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE:
		return TC_X86_JCC;
	case ZYDIS_MNEMONIC_JMP:
		return far ? TC_X86_FAR_JMP : op == 0xe9 || op == 0xeb ? TC_X86_JMP : TC_X86_IJMP;
	case ZYDIS_MNEMONIC_CALL:
		return far ? TC_X86_FAR_CALL : op == 0xe8 ? TC_X86_CALL : TC_X86_ICALL;
	case ZYDIS_MNEMONIC_RET:
		return far ? TC_X86_FAR_RET : TC_X86_RET;
	case ZYDIS_MNEMONIC_IRET: case ZYDIS_MNEMONIC_IRETD: case ZYDIS_MNEMONIC_IRETQ:
		return TC_X86_FAR_RET;
	case ZYDIS_MNEMONIC_SYSCALL: case ZYDIS_MNEMONIC_SYSENTER:
		return TC_X86_SYSCALL;
	case ZYDIS_MNEMONIC_SYSRET: case ZYDIS_MNEMONIC_SYSEXIT:
		return TC_X86_SYSRET;
	case ZYDIS_MNEMONIC_INT3: case ZYDIS_MNEMONIC_INT: case ZYDIS_MNEMONIC_INT1:
		return TC_X86_INT;
	case ZYDIS_MNEMONIC_INTO:
		return TC_X86_INTO;
	case ZYDIS_MNEMONIC_UD2:
		return TC_X86_UD2;
	default:
		return TC_X86_OTHER;
	}
}

static unsigned memo_slot(const uint8_t *b, size_t n, bool long_mode)
{
	uint64_t k = 0;

	memcpy(&k, b, n < 8 ? n : 8);
	k = (k ^ long_mode) * 0x9e3779b97f4a7c15ULL;
	return (unsigned)(k >> 52) & (MEMO - 1);
}

struct tc_x86_insn tc_x86_classify(struct tc_x86 *x, const uint8_t *b, size_t n,
				   bool long_mode)
{
	struct tc_x86_insn r = { TC_X86_OTHER, 0, 0 };
	struct memo *m;
	ZydisDecodedInstruction in;
	size_t i = 0;

	if (!n)
		return r;
	m = &x->memo[memo_slot(b, n, long_mode)];
	if (m->len && m->len <= n && m->long_mode == long_mode && !memcmp(m->bytes, b, m->len))
		return (struct tc_x86_insn){ m->kind, m->len, m->opcode };
	if (ZYAN_FAILED(ZydisDecoderDecodeInstruction(&x->dec[long_mode], NULL, b,
						      n < MAX_LEN ? n : MAX_LEN, &in)))
		return r;
	while (i < in.length && legacy_prefix(b[i]))
		i++;
	if (long_mode && i < in.length && (b[i] & 0xf0) == 0x40)
		i++;
	r.len = in.length;
	r.opcode = (unsigned)i;
	r.kind = kind_of(&in, i < r.len ? b[i] : 0);
	memcpy(m->bytes, b, r.len);
	m->len = (uint8_t)r.len;
	m->kind = (uint8_t)r.kind;
	m->opcode = (uint8_t)r.opcode;
	m->long_mode = long_mode;
	return r;
}

unsigned tc_x86_len(struct tc_x86 *x, const uint8_t *b, size_t n, bool long_mode)
{
	return tc_x86_classify(x, b, n, long_mode).len;
}
