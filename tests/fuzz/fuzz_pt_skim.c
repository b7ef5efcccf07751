/* Differential libFuzzer target for the skim (decoders/intel_pt/pt_skim.c): pt_flow with
 * no_offsets (the records report's analyses get: ranges only, branches counted) against the
 * exact path it stands in for (the same without no_offsets: pt_walk.c and libipt's block
 * decoder, which fuzz_pt_diff checks against the reference) on the same trace. Every record but
 * its offset (which the skim makes only to the packet), field by field, and the statistics
 * must be the same; where the skim gives up, the exact path takes the buffer again, so its
 * records, errors, overflows, stops and resumes must come out alike too.
 *
 * Most mutated bytes have no PSB at their start (the skim gives up at once), so the input is
 * also read as a program that writes a trace (gen()): a PSB+ at a code address, then TNT-8,
 * TNT-64, TIPs with each IP compression, PSB+s (with or without FUP and MODE.Exec, with or
 * without MODE.TSX and PIP, as a real CPU's), TIP.PGD with and without IP, TIP.PGE, FUP+TIP,
 * FUP+TIP.PGD, PIPs, MODE.TSX (with a FUP, an abort's with a TIP or TIP.PGD), PADs, and
 * some raw bytes (OVF, MODE, anything); with bit 2 of the size, timing packets too (TSC, TMA, MTC, CYC (none with bit 4), CBR, in PSB+s
 * and between packets), with a CTC ratio, MTC frequency, nominal ratio and SKL168 from the
 * input's last bytes: records carry perf time (each range the flow's time at its end), and
 * a thread callback switches task at a perf time from the input (the skim goes on only
 * where it does not: due); its task also depends on the CR3 (PIPs: where the skim tells
 * pt_flow of them). The skim follows it, gives up where it must. The code is the
 * input's first 256
 * bytes (or less), mapped at 0x400000 from a file (libipt's block cache, as perf.data's
 * images are). Bit 0 of the size: the trace in pieces of 64 to 319 bytes, each a buffer
 * (the skim's cache and the fall-back's suppression across buffers), with bit 3 one stream
 * (the decode of each goes on into the next); bit 1: ranges in runs (emit_ranges). Any
 * difference calls abort(). Both traces also check tc_pt_skim_time_span (check_span). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoders/intel_pt/pt_flow.h"
#include "decoders/intel_pt/pt_skim.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_recs.h"
#include "tests/unit/pt_pieces.h"

#define BASE 0x400000ULL

struct run {
	const uint8_t *code;
	size_t ncode;
	const char *path;
	struct fuzz_recs recs;
	/* time: the CTC ratio, MTC frequency and nominal ratio from the input; a thread
	 * callback whose task changes at perf time switch_at (the skim goes on only where it
	 * does not: due) */
	struct pt_config cfg;
	uint64_t switch_at;
	int pid;
	uint64_t cr3;		/* the last the thread callback got */
};

static void on_rec(void *ctx, const struct tc_rec *rec)
{
	struct run *r = ctx;

	fuzz_recs_add(&r->recs, rec);
}

static void on_ranges(void *ctx, const struct tc_rec *rec, size_t n)
{
	for (size_t i = 0; i < n; i++)
		on_rec(ctx, &rec[i]);
}

static size_t rd(void *ctx, int cpu, uint64_t cr3, uint64_t addr, uint8_t *buf, size_t len)
{
	const struct run *r = ctx;
	size_t o, n;

	(void)cpu;
	(void)cr3;
	if (addr < BASE || addr - BASE >= r->ncode)
		return 0;
	o = (size_t)(addr - BASE);
	n = r->ncode - o < len ? r->ncode - o : len;
	memcpy(buf, r->code + o, n);
	return n;
}

static int span(void *ctx, int cpu, uint64_t cr3, uint64_t addr, struct tc_pt_flow_span *s)
{
	const struct run *r = ctx;

	(void)cpu;
	(void)cr3;
	if (addr < BASE || addr - BASE >= r->ncode)
		return -1;
	*s = (struct tc_pt_flow_span){ r->path, BASE, r->ncode, 0 };
	return 0;
}

static uint64_t space(void *ctx)
{
	(void)ctx;
	return 1;
}

static int task_at(const struct run *r, const struct tc_pt_flow_time *t, uint64_t cr3)
{
	int in = cr3 == TC_PT_FLOW_NO_CR3 ? 0 : 100 * (int)(cr3 >> 12 & 3);

	return (t->has_tsc && t->perf_time >= r->switch_at ? 7 : -1) + in;
}

static void thread(void *ctx, int cpu, uint64_t cr3, const struct tc_pt_flow_time *t, int *pid,
		   int *tid)
{
	struct run *r = ctx;

	(void)cpu;
	r->cr3 = cr3;
	r->pid = *pid = *tid = task_at(r, t, cr3);
}

static bool due(void *ctx, int cpu, const struct tc_pt_flow_time *t)
{
	const struct run *r = ctx;

	(void)cpu;
	return task_at(r, t, r->cr3) != r->pid;
}

static bool feed(struct tc_pt_flow *f, bool pieces, const uint8_t *t, size_t size)
{
	struct tc_err e;
	bool ok = true;

	if (pieces) {
		size_t piece = 64 + (size >> 2) % 256;
		/* (the flow asks for them until its last begin, here) */
		struct tc_pt_flow_buf *p = malloc((size / piece + 1) * sizeof(*p));
		struct pieces ps = { p, 0 };

		CHECK(p);
		for (size_t at = 0; at < size; at += piece)
			p[ps.n++] = (struct tc_pt_flow_buf){ t + at, size - at < piece ? size - at :
							     piece, 0x1000 + at };
		/* bit 3 of the size: one stream (pt_flow.h's tc_pt_flow_follow) */
		for (size_t i = 0; ok && i < ps.n; i++) {
			if (size & 8)
				tc_pt_flow_follow(f, p[i].len, next_piece, &ps, i);
			ok = tc_pt_flow_feed(f, p[i].buf, p[i].len, p[i].file_offset, &e) == 0;
		}
		free(p);
	} else {
		ok = tc_pt_flow_feed(f, t, size, 0x1000, &e) == 0;
	}
	return ok;
}

static bool decode(struct run *r, bool skim, bool pieces, bool runs, const uint8_t *t,
		   size_t size, struct tc_pt_flow_stats *st)
{
	struct tc_pt_flow_ops ops = { .read = rd, .emit = on_rec, .ctx = r,
				      .skip = 1u << TC_REC_BRANCH,
				      .no_offsets = skim,
				      .emit_ranges = runs ? on_ranges : NULL,
				      .thread = thread, .due = due };
	/* records carry perf time: each range the time the flow had at its end */
	const struct tc_pt_time_conv tc = { .time_shift = 1, .time_mult = 3, .time_zero = 100,
					    .valid = true };
	struct tc_err e;
	struct tc_pt_flow *f;
	bool ok;

	if (r->path) {
		ops.span = span;
		ops.space = space;
	}
	r->pid = -1;
	r->cr3 = TC_PT_FLOW_NO_CR3;
	f = tc_pt_flow_new(&r->cfg, &tc, 0, &ops, &e);
	CHECK(f);
	ok = feed(f, pieces, t, size);
	*st = *tc_pt_flow_stats(f);
	tc_pt_flow_free(f);
	return ok;
}

/* ---- a trace written from the input ---- */

struct gen {
	const uint8_t *d;
	size_t n, at;
	uint8_t *t;
	size_t len, cap;
	size_t ncode;
	bool timed;		/* timing packets too */
	bool nocyc;		/* ... but no CYC (perf's default: tc_pt_skim_time_span's case) */
	uint64_t tsc;
	uint8_t ctc;
};

static unsigned next(struct gen *g)
{
	return g->at < g->n ? g->d[g->at++] : 0;
}

static void emit(struct gen *g, const void *p, size_t len)
{
	if (g->len + len > g->cap) {
		g->cap = (g->cap + len) * 2;
		g->t = realloc(g->t, g->cap);
		CHECK(g->t);
	}
	memcpy(g->t + g->len, p, len);
	g->len += len;
}

static uint64_t code_ip(struct gen *g)
{
	return BASE + (g->ncode ? next(g) % g->ncode : 0);
}

/* An IP packet (opcode's low 5 bits) to ip, compressed as sel says. */
static void ip_packet(struct gen *g, uint8_t op, uint64_t ip, unsigned sel)
{
	static const uint8_t kinds[] = { 6, 1, 2, 3, 4, 6 };
	static const uint8_t bytes[] = { 0, 2, 4, 6, 6, 0, 8 };
	uint8_t b[9];
	unsigned k = kinds[sel % sizeof(kinds)];

	b[0] = (uint8_t)(op | k << 5);
	for (unsigned i = 0; i < bytes[k]; i++)
		b[1 + i] = (uint8_t)(ip >> (8 * i));
	emit(g, b, 1 + bytes[k]);
}

/* A timing packet (sel: which): TSC, MTC, TMA, CYC of 1 to 3 bytes, CBR. The TSC grows
 * (a few in a row of the same value, or back a little, too). */
static void timing(struct gen *g, unsigned sel)
{
	uint8_t b[8];
	unsigned v = next(g);

	switch (sel % 6) {
	case 0:
		g->tsc += v & 0x80 ? 0 : (uint64_t)v << (next(g) % 24);
		if ((v & 0x7f) == 1)
			g->tsc -= 5;
		b[0] = 0x19;
		for (int i = 0; i < 7; i++)
			b[1 + i] = (uint8_t)(g->tsc >> (8 * i));
		emit(g, b, 8);
		break;
	case 1:
		g->ctc += 1 + (v & 3);
		b[0] = 0x59;
		b[1] = (uint8_t)(v & 0x10 ? v : g->ctc);
		emit(g, b, 2);
		break;
	case 2:
		b[0] = 0x02;
		b[1] = 0x73;
		b[2] = (uint8_t)next(g);
		b[3] = (uint8_t)(v & 0x20 ? next(g) : g->ctc);
		b[4] = 0;
		b[5] = (uint8_t)next(g);
		b[6] = v & 1;
		emit(g, b, 7);
		break;
	case 3:
	case 4:
		if (g->nocyc) {
			timing(g, v & 1);	/* a TSC or an MTC instead */
			return;
		}
		b[0] = (uint8_t)(3 | (v & 0xfc));
		b[1] = (uint8_t)(next(g) & 0xfe);
		b[2] = (uint8_t)(next(g) & 0xfe);
		if (b[0] & 4 && v & 1)
			b[1] |= 1;
		emit(g, b, !(b[0] & 4) ? 1 : b[1] & 1 ? 3 : 2);
		break;
	default:
		b[0] = 0x02;
		b[1] = 0x03;
		b[2] = (uint8_t)(v % 64);
		b[3] = 0;
		emit(g, b, 4);
		break;
	}
}

static void mode_tsx(struct gen *g, uint8_t payload)
{
	const uint8_t b[2] = { 0x99, payload };

	emit(g, b, 2);
}

/* A PIP of one of four CR3s (NR 0). */
static void pip(struct gen *g)
{
	uint64_t pl = (0x1000ULL << (next(g) & 3)) >> 5 << 1;
	uint8_t b[8] = { 0x02, 0x43 };

	for (int i = 0; i < 6; i++)
		b[2 + i] = (uint8_t)(pl >> (8 * i));
	emit(g, b, 8);
}

static void psb_plus(struct gen *g, unsigned sel)
{
	static const uint8_t psb[16] = { 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
					 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82 };
	static const uint8_t mode64[2] = { 0x99, 0x01 }, psbend[2] = { 0x02, 0x23 };
	unsigned t = g->timed ? next(g) : 0;

	emit(g, psb, sizeof(psb));
	if (t & 1)	/* as perf's: TSC, TMA, then CBR; or one other */
		timing(g, 0);
	if (t & 2)
		timing(g, 2);
	if (t & 4)
		timing(g, t >> 5);
	if (sel & 4)	/* MODE.TSX: none or in a transaction (an abort's too, at times) */
		mode_tsx(g, (uint8_t)(sel >> 3 & 1 ? 0x21 : t & 0x40 ? 0x22 : 0x20));
	if (!(sel & 1))
		emit(g, mode64, sizeof(mode64));
	if (!(sel & 2))
		ip_packet(g, 0x1d, code_ip(g), 0);	/* FUP, the whole IP */
	if (sel & 8)
		pip(g);
	if (t & 8)
		timing(g, 5);
	if (t & 16)
		timing(g, t >> 5);
	emit(g, psbend, sizeof(psbend));
}

static void gen(struct gen *g)
{
	static const uint8_t tip_pgd_none = 0x01, pad = 0, ovf[2] = { 0x02, 0xf3 },
			     mode32[2] = { 0x99, 0x02 };

	psb_plus(g, next(g) & 14);
	while (g->at < g->n && g->len < 4096) {
		unsigned op = next(g), v;
		uint8_t b[8];

		if (g->timed && (op & 0x13) == 0x13) {
			timing(g, op >> 6);
			continue;
		}
		switch (op % 16) {
		case 0: case 1: case 2: case 3: case 4: case 5:
			v = next(g) & 0xfe;
			b[0] = (uint8_t)(v < 4 ? 4 : v);
			emit(g, b, 1);
			break;
		case 6:
			b[0] = 0x02;
			b[1] = 0xa3;
			for (int i = 2; i < 8; i++)
				b[i] = (uint8_t)next(g);
			if (!b[7])
				b[7] = 1;
			emit(g, b, 8);
			break;
		case 7: case 8:
			ip_packet(g, 0x0d, code_ip(g), op >> 4);	/* TIP */
			break;
		case 9:
			psb_plus(g, op >> 4);
			break;
		case 10:
			if (op & 0x10)
				emit(g, &tip_pgd_none, 1);
			else
				ip_packet(g, 0x01, code_ip(g), op >> 5);
			break;
		case 11:
			ip_packet(g, 0x11, code_ip(g), op >> 4);	/* TIP.PGE */
			break;
		case 12:
			ip_packet(g, 0x1d, code_ip(g), op >> 5);	/* FUP, then */
			if (op & 0x10)
				ip_packet(g, 0x0d, code_ip(g), 0);
			else
				ip_packet(g, 0x01, code_ip(g), 0);
			break;
		case 13:
			if (op & 0x10) {
				emit(g, &pad, 1);
			} else if (op & 0x20) {
				pip(g);
			} else {
				/* MODE.TSX (begin, commit, abort), then mostly its FUP; an abort's
				 * mostly a TIP or TIP.PGD after it */
				v = next(g);
				mode_tsx(g, (uint8_t)(0x20 | (v & 3)));
				if (v & 4)
					ip_packet(g, 0x1d, code_ip(g), v >> 5);
				if ((v & 2) && (v & 8))
					ip_packet(g, 0x0d, code_ip(g), v >> 5);
				else if ((v & 2) && (v & 16))
					ip_packet(g, 0x01, code_ip(g), v >> 5);
			}
			break;
		case 14:
			b[0] = (uint8_t)next(g);
			emit(g, b, 1);
			break;
		default:
			emit(g, op & 0x10 ? ovf : mode32, 2);
			break;
		}
	}
}

static char path[64];

static void remove_code(void)
{
	unlink(path);
}

/* tc_pt_skim_time_span against libipt's query decoder on t: where it is sure of a span,
 * every time the decoder has after each query (made blind: a conditional branch, else an
 * indirect one) and each event's time is in it (pt_segment.c orders queues by them). */
static void check_span(const struct pt_config *base, const uint8_t *t, size_t n)
{
	struct pt_config cfg = *base;
	struct pt_query_decoder *dec;
	struct pt_event ev;
	uint64_t lo = UINT64_MAX, hi = 0, ip, tsc;
	unsigned mtcs = 0;
	int st, taken;

	if (tc_pt_skim_time_span(base, t, n, &lo, &hi, &mtcs))
		return;
	CHECK(lo <= hi);
	cfg.begin = (uint8_t *)t;
	cfg.end = (uint8_t *)t + n;
	if (!(dec = pt_qry_alloc_decoder(&cfg)))
		return;
	/* it synchronises on the span's first PSB+ */
	st = pt_qry_sync_forward(dec, &ip);
	CHECK(st >= 0);
	while (st >= 0 && !(st & pts_eos)) {
		if (st & pts_event_pending) {
			st = pt_qry_event(dec, &ev, sizeof(ev));
			CHECK(st < 0 || !ev.has_tsc || (ev.tsc >= lo && ev.tsc <= hi));
		} else if ((st = pt_qry_cond_branch(dec, &taken)) == -pte_bad_query) {
			st = pt_qry_indirect_branch(dec, &ip);
		}
		if (st >= 0 && pt_qry_time(dec, &tsc, NULL, NULL) >= 0)
			CHECK(tsc >= lo && tsc <= hi);
	}
	pt_qry_free_decoder(dec);
}

/* The record of r that holds byte at, its fields in on_rec()'s order. */
static void compare(struct run *code, const uint8_t *t, size_t n, bool pieces, bool runs)
{
	struct run skim = *code, ref = *code;
	struct tc_pt_flow_stats ss, sr;
	bool oks, okr;

	oks = decode(&skim, true, pieces, runs, t, n, &ss);
	okr = decode(&ref, false, pieces, runs, t, n, &sr);
	CHECK(oks == okr);
	fuzz_recs_same("fuzz_pt_skim", "skim", &skim.recs, "exact path", &ref.recs);
	CHECK(!memcmp(&ss, &sr, sizeof(ss)));
	fuzz_recs_free(&skim.recs);
	fuzz_recs_free(&ref.recs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run code = { .code = data, .ncode = size < 256 ? size : 256 };
	struct gen g = { .d = data, .n = size, .ncode = code.ncode };
	uint8_t c = size ? data[size - 1] : 0, c2 = size > 1 ? data[size - 2] : 0;
	FILE *fp;

	fuzz_ctx[0] = 0;
	/* time's configuration from the input's last bytes: CPUID 0x15 (none in one of 8),
	 * MTC frequency, nominal ratio, SKL168 */
	pt_config_init(&code.cfg);
	if (c & 7) {
		code.cfg.cpuid_0x15_eax = 1 + (c >> 3 & 3);
		code.cfg.cpuid_0x15_ebx = 1 + (c2 & 0x3f);
	}
	code.cfg.mtc_freq = (uint8_t)(c2 >> 4 & 0xf);
	code.cfg.nom_freq = c & 0x20 ? (uint8_t)(c2 | 1) : 0;
	code.cfg.errata.skl168 = c >> 6 & 1;
	code.switch_at = c & 0x80 ? UINT64_MAX : 100 + ((uint64_t)c2 << 20);
	g.timed = size & 4;
	g.nocyc = size & 16;
	g.tsc = 0x1000;

	if (!path[0]) {
		snprintf(path, sizeof(path), "/tmp/fuzz_pt_skim.%d.code", (int)getpid());
		atexit(remove_code);
	}
	if (code.ncode && (fp = fopen(path, "wb"))) {
		if (fwrite(data, 1, code.ncode, fp) == code.ncode)
			code.path = path;
		fclose(fp);
	}
	compare(&code, data, size, size & 1, size & 2);
	gen(&g);
	if (getenv("FUZZ_PT_SKIM_DUMP") && (fp = fopen(getenv("FUZZ_PT_SKIM_DUMP"), "wb"))) {
		CHECK(fwrite(g.t, 1, g.len, fp) == g.len);
		fclose(fp);
	}
	compare(&code, g.t, g.len, size & 1, size & 2);
	snprintf(fuzz_ctx, sizeof(fuzz_ctx), "time span");
	check_span(&code.cfg, g.t, g.len);
	check_span(&code.cfg, data, size);
	free(g.t);
	return 0;
}
