/* Differential libFuzzer target: the fast ETMv4 decoder (decoders/coresight/etm4_walk.c)
 * against OpenCSD's own full decoder (TC_ETM_REFERENCE) on the same bytes, through the same
 * session (decoders/coresight/cs_session.c), with the same synthetic memory. Any difference
 * in the records (type, offset, addresses, counts, last instruction, values, texts) aborts.
 *
 * Input: as fuzz_etm.c's, ETMv4 only: a 16-byte header (byte 0: bit 7 framed, bits 3-5 the
 * trace ID 0x10 + n, bit 6 AArch64 v8.3+ rather than v8; bytes 1-15 vary ID and
 * configuration registers within what the fast decoder models), then trace bytes. Memory is
 * an A64 pattern of branches, calls, returns, conditional branches, barriers and plain
 * instructions derived from the address, with holes. Where the fast decoder meets what it
 * does not model (code that is not A64: a context packet's SF bit clear), OpenCSD's decoder
 * takes over (etm_ocsd.h), and the records must still be the reference's (the memory reads
 * then differ: the take-over reads again). Inputs are not compared where it could not take
 * over (a new decoder would differ, tc_etm4_walk_as_new: the fast one says what it met),
 * nor where OpenCSD's records depend on the heap (tc_etm4_walk_undefined, etm4_walk.h): a
 * walk into the last 4 bytes of the address space reads from before its read cache's page,
 * and a cancel or mispredict beyond the element stack (it reads m_unseen_spec_elem, never
 * set; under ASan 0xbebebebe: it goes on, where 0 gives its error and a reset) that the
 * guard did not name, which happens only after the decoder reset on an error that depends on
 * the traced code (a return stack overflow), which the guard's model cannot see. The guard
 * (etm4_guard.h) stops both decoders before the others: an exception committed before the
 * decoder ever had an address (or, at the last branch target, an ISA), which walked from
 * heap garbage, and a cancel or mispredict beyond the stack; such inputs compare (on the
 * corpus of stop 35, 25 of 2675 runs are left out, against 350 before). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/coresight/cs_session.h"
#include "decoders/coresight/etm_ocsd.h"
#include "tests/fuzz/fuzz_check.h"

#define HDR 16

struct out {
	char *buf;
	size_t len, cap;
	uint64_t calls;		/* memory reads asked for */
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len + n > o->cap) {
		size_t cap = (o->cap ? o->cap * 2 : 4096) + n;
		char *b = realloc(o->buf, cap);

		CHECK(b != NULL);
		o->buf = b;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static void on_rec(void *ctx, const struct tc_rec *r)
{
	struct out *o = ctx;
	char line[1024];
	int n = snprintf(line, sizeof(line),
			 "%d %d %d %llx %llx %llx %u %d %c %u %u %d %llx %s %s\n", (int)r->type,
			 r->id, r->cpu, (unsigned long long)r->offset,
			 (unsigned long long)r->start, (unsigned long long)r->end, r->insns,
			 (int)r->isa, r->last ? r->last : '-', r->last_type, r->last_size,
			 (int)r->last_taken, (unsigned long long)r->value,
			 r->name ? r->name : "-", r->text ? r->text : "-");

	put(o, line, n > 0 && (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* A64: B, BL, RET, B.ne, CBZ, NOP, BR x1, ADD, TBZ, BLR x2, ISB, ERET, B back, ADD, ADD, ADD */
static const uint32_t a64[16] = { 0x14000004, 0x94000010, 0xd65f03c0, 0x54000081,
				  0xb4000060, 0xd503201f, 0xd61f0020, 0x91000421,
				  0x36080040, 0xd63f0040, 0xd5033fdf, 0xd69f03e0,
				  0x17fffffc, 0x91000421, 0x91000421, 0x91000421 };

static size_t mem(void *ctx, const struct tc_etm_mem_ctx *m, uint64_t addr, uint8_t *buf,
		  size_t len)
{
	size_t n = 0;

	(void)m;
	((struct out *)ctx)->calls++;
	/* no memory in 64 KiB pages whose number ends in 7, nor past 0x...f0 of page 5, nor
	 * in the first 64 KiB (whose branches back past 0 would take OpenCSD's decoder to the
	 * last 4 bytes of the address space from code: etm4_guard.c's LAST_WORD, which the
	 * guard names only where an address packet takes it there) */
	if (((addr >> 16) & 0xf) == 7 || addr < 0x10000)
		return 0;
	while (n < len) {
		uint64_t a = addr + n;
		uint32_t w = a64[((a >> 2) * 2654435761u >> 7) & 15];
		size_t k = 4 - (a & 3);

		if (((a >> 16) & 0xf) == 7 || a < 0x10000)
			break;
		if (k > len - n)
			k = len - n;
		memcpy(buf + n, (const uint8_t *)&w + (a & 3), k);
		n += k;
	}
	return n;
}

static void config(const uint8_t *h, struct tc_etm_cfg *c, bool *framed)
{
	uint32_t r[4];

	memcpy(r, h + 1, sizeof(r) - 1);
	r[3] = h[13] | (uint32_t)h[14] << 8;
	memset(c, 0, sizeof(*c));
	c->proto = TC_ETM_PROTO_ETMV4;
	*framed = h[0] & 0x80;
	c->trace_id = 0x10 + (h[0] >> 3 & 7);
	c->cpu = h[15] & 3;
	c->arch = (h[0] >> 6 & 1) ? TC_ETM_ARCH_AA64 : TC_ETM_ARCH_V8;
	c->profile = TC_ETM_PROFILE_A;
	/* a Cortex-A53's ID registers, with fields the input may change */
	c->trcidr0 = 0x28000ea1 ^ (r[0] & 0x1f0e0fe0);
	c->trcidr1 = 0x4100f403 ^ (r[1] & 0x30);		/* 4.0 to 4.3 */
	c->trcidr2 = 0x00000488 ^ (r[1] >> 8 & 0x1fff) ^ (r[1] & 0x80000000u);
	c->trcidr8 = r[2] & 0xff;
	/* not the data, conditional or Q trace the fast decoder leaves to OpenCSD */
	c->trcconfigr = (0x000000c1 ^ (r[3] & 0x1ffd8)) & ~0x6706u;
	c->trctraceidr = c->trace_id;
	c->trcdevarch = 0x47704a13;
}

static bool run(const struct tc_etm_cfg *c, bool framed, unsigned what, const uint8_t *p,
		size_t len, struct out *o, bool *handed /* NULL: not asked */)
{
	struct tc_cs_session *css;
	struct tc_err e = { 0 };
	const struct tc_etm_ocsd_stats *st;
	bool modelled = true;
	enum tc_cs_session_format fmt = framed ? TC_CS_SESSION_FRAMED : TC_CS_SESSION_RAW;

	css = tc_cs_session_new(what, on_rec, mem, o, &e);
	CHECK(css != NULL);
	CHECK(tc_cs_session_add_source(css, c, &e) == 0);
	tc_cs_session_feed(css, p, len / 2, 0, fmt);
	tc_cs_session_reset(css, len / 2);
	tc_cs_session_feed(css, p + len / 2, len - len / 2, len / 2, fmt);
	tc_cs_session_flush(css);
	st = tc_cs_session_stats(css, c->trace_id);
	CHECK(st != NULL);
	CHECK(st->fast == !(what & TC_ETM_REFERENCE));
	if (handed)
		*handed = st->handovers != 0;
	if (st->fast && (st->unmodelled || st->ref_undefined))
		modelled = false;
	tc_cs_session_free(css);
	return modelled;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct tc_etm_cfg c;
	struct out fast = { 0 }, ref = { 0 };
	bool framed, handed = false;

	if (len < HDR)
		return 0;
	config(data, &c, &framed);
	snprintf(fuzz_ctx, sizeof(fuzz_ctx), "%s, trcconfigr %#x, maxspec %u",
		 framed ? "framed" : "raw", c.trcconfigr, c.trcidr8);
	if (run(&c, framed, TC_ETM_ELEMENTS, data + HDR, len - HDR, &fast, &handed)) {
		run(&c, framed, TC_ETM_ELEMENTS | TC_ETM_REFERENCE, data + HDR, len - HDR, &ref,
		    NULL);
		if (fast.len != ref.len || memcmp(fast.buf, ref.buf, fast.len)) {
			size_t i = 0;

			while (i < fast.len && i < ref.len && fast.buf[i] == ref.buf[i])
				i++;
			while (i > 0 && fast.buf[i - 1] != '\n')
				i--;
			fprintf(stderr, "fast:\n%.400s\nreference:\n%.400s\n", fast.buf + i,
				ref.buf + i);
		}
		CHECK(fast.len == ref.len && !memcmp(fast.buf, ref.buf, fast.len));
		/* the same reads of memory, so memory callbacks' side effects agree (a take-over
		 * reads the trace before it again) */
		CHECK(handed || fast.calls == ref.calls);
		if (getenv("FUZZ_ETM_HANDED") && handed)
			fprintf(stderr, "handed over\n");
	}
	free(fast.buf);
	free(ref.buf);
	return 0;
}
