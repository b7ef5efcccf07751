#include "lib/isa/x86.h"

#include <capstone.h>
#include <pthread.h>
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
	csh h[2];		/* 32-bit, 64-bit */
	bool open[2];
	cs_insn *insn;
	struct memo *memo;
};

/* Capstone sets up its architecture tables on first use; once, before any thread does. */
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;
static bool x86_supported;

static void cs_init(void)
{
	x86_supported = cs_support(CS_ARCH_X86);
}

void tc_x86_free(struct tc_x86 *x)
{
	if (!x)
		return;
	if (x->insn)
		cs_free(x->insn, 1);
	for (int i = 0; i < 2; i++)
		if (x->open[i])
			cs_close(&x->h[i]);
	free(x->memo);
	free(x);
}

struct tc_x86 *tc_x86_new(void)
{
	struct tc_x86 *x;

	pthread_once(&cs_once, cs_init);
	if (!x86_supported || !(x = calloc(1, sizeof(*x))))
		return NULL;
	for (int i = 0; i < 2; i++) {
		if (cs_open(CS_ARCH_X86, i ? CS_MODE_64 : CS_MODE_32, &x->h[i]) != CS_ERR_OK) {
			tc_x86_free(x);
			return NULL;
		}
		x->open[i] = true;
	}
	x->insn = cs_malloc(x->h[1]);
	x->memo = calloc(MEMO, sizeof(*x->memo));
	if (!x->insn || !x->memo) {
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

/* Capstone's instruction (and its opcode byte, for direct or indirect) to a kind. */
static enum tc_x86_kind kind_of(unsigned id, unsigned op)
{
	switch (id) {
	case X86_INS_JAE: case X86_INS_JA: case X86_INS_JBE: case X86_INS_JB:
	case X86_INS_JCXZ: case X86_INS_JECXZ: case X86_INS_JE: case X86_INS_JGE:
	case X86_INS_JG: case X86_INS_JLE: case X86_INS_JL: case X86_INS_JNE:
	case X86_INS_JNO: case X86_INS_JNP: case X86_INS_JNS: case X86_INS_JO:
	case X86_INS_JP: case X86_INS_JRCXZ: case X86_INS_JS: case X86_INS_LOOP:
	case X86_INS_LOOPE: case X86_INS_LOOPNE:
		return TC_X86_JCC;
	case X86_INS_JMP:
		return op == 0xe9 || op == 0xeb ? TC_X86_JMP : TC_X86_IJMP;
	case X86_INS_CALL:
		return op == 0xe8 ? TC_X86_CALL : TC_X86_ICALL;
	case X86_INS_LJMP:
		return TC_X86_FAR_JMP;
	case X86_INS_LCALL:
		return TC_X86_FAR_CALL;
	case X86_INS_RET:
		return TC_X86_RET;
	case X86_INS_RETF: case X86_INS_RETFQ: case X86_INS_IRET: case X86_INS_IRETD:
	case X86_INS_IRETQ:
		return TC_X86_FAR_RET;
	case X86_INS_SYSCALL: case X86_INS_SYSENTER:
		return TC_X86_SYSCALL;
	case X86_INS_SYSRET: case X86_INS_SYSEXIT:
		return TC_X86_SYSRET;
	case X86_INS_INT3: case X86_INS_INT: case X86_INS_INT1:
		return TC_X86_INT;
	case X86_INS_INTO:
		return TC_X86_INTO;
	case X86_INS_UD2:
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
	const uint8_t *code = b;
	size_t size = n < MAX_LEN ? n : MAX_LEN, i = 0;
	uint64_t addr = 0;

	if (!n)
		return r;
	m = &x->memo[memo_slot(b, n, long_mode)];
	if (m->len && m->len <= n && m->long_mode == long_mode && !memcmp(m->bytes, b, m->len))
		return (struct tc_x86_insn){ m->kind, m->len, m->opcode };
	if (!cs_disasm_iter(x->h[long_mode], &code, &size, &addr, x->insn))
		return r;
	while (i < x->insn->size && legacy_prefix(b[i]))
		i++;
	if (long_mode && i < x->insn->size && (b[i] & 0xf0) == 0x40)
		i++;
	r.len = x->insn->size;
	r.opcode = (unsigned)i;
	r.kind = kind_of(x->insn->id, i < r.len ? b[i] : 0);
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
