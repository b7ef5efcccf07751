/* Synthetic record streams and a table symboliser for the analysis tests (lib/analysis/callstack.c
 * and what consumes it). Functions: main 0x1000, foo 0x2000, bar 0x3000, baz 0x4000,
 * kernel entry 0xf000, each 0x100 bytes; anything else is unknown. */
#ifndef TC_TESTS_UNIT_REC_STREAM_H
#define TC_TESTS_UNIT_REC_STREAM_H

#include <stdint.h>

#include "decoders/rec.h"

#define MAIN 0x1000
#define FOO 0x2000
#define BAR 0x3000
#define BAZ 0x4000
#define KERN 0xf000

struct stream {
	struct tc_rec r[512];
	int n;
	uint64_t insns;		/* sum over the RANGE records */
};

static const struct { uint64_t start; const char *name; } st_syms[] = {
	{ MAIN, "main" }, { FOO, "foo" }, { BAR, "bar" }, { BAZ, "baz" }, { KERN, "el1_svc" },
};

static inline int st_sym(void *ctx, int pid, uint64_t addr, const char **name, uint64_t *start)
{
	(void)ctx;
	(void)pid;
	for (unsigned i = 0; i < sizeof(st_syms) / sizeof(st_syms[0]); i++) {
		if (addr >= st_syms[i].start && addr < st_syms[i].start + 0x100) {
			*name = st_syms[i].name;
			*start = st_syms[i].start;
			return 0;
		}
	}
	return -1;
}

/* A range [s, e) of tid (pid 100, cpu = tid % 4 unless tid < 0) ending in class c. */
static inline void st_range_cpu(struct stream *st, int tid, int cpu, uint64_t s, uint64_t e,
				enum tc_insn_class c)
{
	struct tc_rec *r = &st->r[st->n++];

	*r = (struct tc_rec){ .type = TC_REC_RANGE, .id = -1, .cpu = cpu, .pid = tid < 0 ? -1 : 100,
			      .tid = tid, .offset = (uint64_t)st->n * 16, .start = s, .end = e,
			      .insns = (uint32_t)((e - s) / 4), .isa = TC_ISA_A64, .last = 'E',
			      .last_type = (uint8_t)c, .last_size = 4,
			      .last_taken = c != TC_INSN_OTHER };
	st->insns += r->insns;
}

static inline void st_range(struct stream *st, int tid, uint64_t s, uint64_t e,
			    enum tc_insn_class c)
{
	st_range_cpu(st, tid, tid < 0 ? 0 : tid % 4, s, e, c);
}

static inline void st_event(struct stream *st, enum tc_rec_type type, int tid, int cpu,
			    uint64_t value)
{
	st->r[st->n] = (struct tc_rec){ .type = type, .id = -1, .cpu = cpu,
					.pid = tid < 0 ? -1 : 100, .tid = tid,
					.offset = (uint64_t)st->n * 16, .value = value };
	st->n++;
}

/* main calls foo, foo calls bar twice (bar calls baz the second time), foo returns; then
 * main runs on: one thread (tid 1), 4-byte instructions. */
static inline void st_nested(struct stream *st, int tid)
{
	st_range(st, tid, MAIN + 0x00, MAIN + 0x10, TC_INSN_CALL);	/* 4 */
	st_range(st, tid, FOO + 0x00, FOO + 0x08, TC_INSN_CALL);	/* 2 */
	st_range(st, tid, BAR + 0x00, BAR + 0x20, TC_INSN_RET);		/* 8 */
	st_range(st, tid, FOO + 0x08, FOO + 0x10, TC_INSN_CALL);	/* 2 */
	st_range(st, tid, BAR + 0x00, BAR + 0x04, TC_INSN_CALL);	/* 1 */
	st_range(st, tid, BAZ + 0x00, BAZ + 0x40, TC_INSN_RET);		/* 16 */
	st_range(st, tid, BAR + 0x04, BAR + 0x08, TC_INSN_RET);		/* 1 */
	st_range(st, tid, FOO + 0x10, FOO + 0x18, TC_INSN_RET);		/* 2 */
	st_range(st, tid, MAIN + 0x10, MAIN + 0x30, TC_INSN_OTHER);	/* 8 */
}

#endif
