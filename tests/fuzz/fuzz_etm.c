/* libFuzzer target for the OpenCSD decode path (decoders/coresight/etm_ocsd.c, etm4_guard.c,
 * cs_session.c): raw trace bytes through one source's packet processor alone, then through
 * the full instruction decoder with synthetic memory.
 *
 * Input: a 16-byte header, then trace bytes. Header byte 0 picks the protocol (ETMv4, ETE,
 * ETMv3, PTM, STM) and the format (raw, or CoreSight frames with the trace ID); bytes 1-15
 * vary the ID registers that shape the packets (address sizes, cycle counts, return stack,
 * context and VMID sizes, MAXSPEC). Memory is an A64/A32 instruction pattern derived from
 * the address (a mix of branches, calls, returns, conditional branches and plain
 * instructions), so that every address decodes to something and ranges end in branches;
 * some addresses have no memory. A crash, leak, hang, or a record out of place is a
 * finding. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/coresight/cs_session.h"
#include "decoders/coresight/etm_ocsd.h"
#include "tests/fuzz/fuzz_check.h"

#define HDR 16

static volatile uint64_t sink;

/* The session's one context, for records and memory. */
struct seen {
	bool a64;
	unsigned what;
	uint8_t id;
	uint64_t n;
};

static void on_rec(void *ctx, const struct tc_rec *r)
{
	struct seen *s = ctx;

	CHECK(r->type <= TC_REC_EVENT);
	CHECK(r->id == s->id);
	if (r->type == TC_REC_PACKET) {
		CHECK(s->what & TC_ETM_PACKETS);
		CHECK(r->name && r->name[0]);
		sink += strlen(r->name);
	} else if (r->type == TC_REC_RANGE) {
		CHECK(s->what & TC_ETM_ELEMENTS);
		CHECK(r->end > r->start && r->insns > 0);
	}
	if (r->text)
		sink += strlen(r->text);
	s->n++;
}

/* A64 words: B, BL, RET, B.cond, CBZ, NOP, BR x1, ADD. */
static const uint32_t a64[8] = { 0x14000004, 0x94000010, 0xd65f03c0, 0x54000080,
				 0xb4000060, 0xd503201f, 0xd61f0020, 0x91000421 };
/* A32: B, BL, BX lr, BEQ, MOV, NOP, LDR pc, ADD. */
static const uint32_t a32[8] = { 0xea000004, 0xeb000010, 0xe12fff1e, 0x0a000002,
				 0xe1a00001, 0xe320f000, 0xe49df004, 0xe2800001 };

static size_t mem(void *ctx, const struct tc_etm_mem_ctx *m, uint64_t addr, uint8_t *buf,
		  size_t len)
{
	const uint32_t *pat = ((const struct seen *)ctx)->a64 ? a64 : a32;
	size_t n = 0;

	(void)m;
	/* a hole every 64 KiB page whose number ends in 7: no memory there */
	if (((addr >> 16) & 0xf) == 7)
		return 0;
	while (n < len) {
		uint64_t a = addr + n;
		uint32_t w = pat[((a >> 2) * 2654435761u >> 7) & 7];
		size_t k = 4 - (a & 3);

		if (k > len - n)
			k = len - n;
		memcpy(buf + n, (const uint8_t *)&w + (a & 3), k);
		n += k;
	}
	return n;
}

static void config(const uint8_t *h, struct tc_etm_cfg *c, bool *framed)
{
	static const enum tc_etm_proto protos[5] = { TC_ETM_PROTO_ETMV4, TC_ETM_PROTO_ETE,
		TC_ETM_PROTO_ETMV3, TC_ETM_PROTO_PTM, TC_ETM_PROTO_STM };
	uint32_t r[4];

	memcpy(r, h + 1, sizeof(r) - 1);	/* 12 bytes of register bits, the last word short */
	r[3] = h[13] | (uint32_t)h[14] << 8;
	memset(c, 0, sizeof(*c));
	c->proto = protos[(h[0] & 7) % 5];
	*framed = h[0] & 0x80;
	c->trace_id = 0x10 + (h[0] >> 3 & 7);
	c->cpu = h[15] & 3;
	c->arch = (h[0] >> 6 & 1) ? TC_ETM_ARCH_AA64 : TC_ETM_ARCH_V8;
	c->profile = TC_ETM_PROFILE_A;
	switch (c->proto) {
	case TC_ETM_PROTO_ETMV4:
	case TC_ETM_PROTO_ETE:
		/* a Cortex-A53's ID registers, with fields the input may change */
		c->trcidr0 = 0x28000ea1 ^ (r[0] & 0x1f0e0fe0);
		c->trcidr1 = (c->proto == TC_ETM_PROTO_ETE ? 0x4100f503 : 0x4100f403) ^
			     (r[1] & 0xf0);
		c->trcidr2 = 0x00000488 ^ (r[1] >> 8 & 0x1fff);
		c->trcidr8 = r[2] & 0xff;
		c->trcconfigr = 0x000000c1 ^ (r[3] & 0x1ffd8);
		c->trctraceidr = c->trace_id;
		c->trcdevarch = c->proto == TC_ETM_PROTO_ETE ? 0x47705a13 : 0x47704a13;
		break;
	case TC_ETM_PROTO_ETMV3:
	case TC_ETM_PROTO_PTM:
		c->arch = TC_ETM_ARCH_V7;
		c->etmidr = (c->proto == TC_ETM_PROTO_PTM ? 0x411cf300 : 0x4114f250) ^
			    (r[0] & 0xf0);
		c->etmcr = r[1] & 0x3ffffff;
		c->etmccer = r[2];
		c->etmtraceidr = c->trace_id;
		break;
	case TC_ETM_PROTO_STM:
		c->stmtcsr = 0x00a00005 ^ (r[0] & 0x30);
		c->stmfeat1r = r[1];
		c->stmfeat3r = r[2] & 0x7f;
		c->stmdevid = r[3];
		break;
	}
}

static void run(const struct tc_etm_cfg *c, bool framed, unsigned what, const uint8_t *p,
		size_t len)
{
	struct seen s = { .what = what, .id = c->trace_id,
			  .a64 = c->arch == TC_ETM_ARCH_AA64 || c->proto == TC_ETM_PROTO_ETE };
	struct tc_cs_session *css;
	struct tc_err e = { 0 };

	snprintf(fuzz_ctx, sizeof(fuzz_ctx), "proto %d, %s, what %u", (int)c->proto,
		 framed ? "framed" : "raw", what);
	css = tc_cs_session_new(what, on_rec, mem, &s, &e);
	CHECK(css != NULL);
	if (tc_cs_session_add_source(css, c, &e)) {
		CHECK(e.msg[0]);
		tc_cs_session_free(css);
		return;
	}
	/* in two halves, with a reset between, as perf.data's AUX blocks come */
	tc_cs_session_feed(css, p, len / 2, 0,
			   framed ? TC_CS_SESSION_FRAMED : TC_CS_SESSION_RAW);
	tc_cs_session_reset(css, len / 2);
	tc_cs_session_feed(css, p + len / 2, len - len / 2, len / 2,
			   framed ? TC_CS_SESSION_FRAMED : TC_CS_SESSION_RAW);
	tc_cs_session_flush(css);
	if (tc_cs_session_stats(css, c->trace_id))
		sink += tc_cs_session_stats(css, c->trace_id)->packets;
	tc_cs_session_free(css);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct tc_etm_cfg c;
	bool framed;

	if (len < HDR)
		return 0;
	config(data, &c, &framed);
	run(&c, framed, TC_ETM_PACKETS, data + HDR, len - HDR);
	run(&c, framed, TC_ETM_ELEMENTS, data + HDR, len - HDR);
	return 0;
}
