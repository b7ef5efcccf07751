/* pt_skim: its packet parser on crafted packets (IP compression of every kind, TNT-8 and
 * TNT-64, PSB+ packets, what it leaves to libipt), and its flow on a crafted trace over
 * crafted code (ranges, instruction and branch counts, return compression, giving up). */
#include "tests/unit/tc_test.h"

#include "decoders/intel_pt/pt_skim.h"

/* A buffer on its own: no join, no range in flight. */
static int skim_run(struct tc_pt_skim *sk, const struct pt_config *cfg, const uint8_t *buf,
		    size_t len, const struct tc_pt_skim_ops *ops, struct tc_pt_skim_stats *st)
{
	struct tc_pt_skim_carry c = { 0 };

	return tc_pt_skim_run(sk, cfg, buf, len, UINT64_MAX, &c, ops, st);
}

static struct tc_pt_skim_pkt parse(const uint8_t *p, size_t n, uint64_t *last, bool *have)
{
	struct tc_pt_skim_pkt k;

	tc_pt_skim_packet(p, n, last, have, &k);
	return k;
}

TEST(packet_tnt)
{
	uint64_t last = 0;
	bool have = false;
	const uint8_t one0[] = { 0x04 }, one1[] = { 0x06 }, six[] = { 0xac };
	/* TNT-64: stop bit at bit 47, then 47 bits 1010101 1010...; payload little-endian */
	const uint8_t t64[] = { 0x02, 0xa3, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xd5 };
	struct tc_pt_skim_pkt k;

	k = parse(one0, 1, &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_TNT);
	CHECK_INT(k.ntnt, 1);
	CHECK_INT(k.tnt >> 63, 0);
	k = parse(one1, 1, &last, &have);
	CHECK_INT(k.ntnt, 1);
	CHECK_INT(k.tnt >> 63, 1);
	/* 0xac: payload 1010110, stop bit then 0,1,0,1,1,0 */
	k = parse(six, 1, &last, &have);
	CHECK_INT(k.ntnt, 6);
	CHECK_INT(k.tnt >> 58, 0x16);
	CHECK_INT(k.size, 1);
	k = parse(t64, sizeof(t64), &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_TNT);
	CHECK_INT(k.size, 8);
	CHECK_INT(k.ntnt, 47);
	CHECK(k.tnt == 0x55aaaaaaaaaaULL << 17);
	CHECK_INT(k.tnt >> 63, 1);
	k = parse(t64, 7, &last, &have);	/* cut short */
	CHECK_INT(k.kind, TC_PT_SKIM_BAD);
	CHECK(k.truncated);
	{
		const uint8_t empty[] = { 0x02, 0xa3, 1, 0, 0, 0, 0, 0 };	/* stop bit only */

		CHECK_INT(parse(empty, sizeof(empty), &last, &have).kind, TC_PT_SKIM_BAD);
	}
}

TEST(packet_ip_compression)
{
	uint64_t last = 0;
	bool have = false;
	const uint8_t upd16[] = { 0x2d, 0x34, 0x12 };
	const uint8_t full[] = { 0xcd, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 };
	const uint8_t upd32[] = { 0x4d, 0x04, 0x03, 0x02, 0x01 };
	const uint8_t sext_neg[] = { 0x6d, 0x00, 0x10, 0x00, 0x00, 0x00, 0x80 };
	const uint8_t sext_pos[] = { 0x71, 0x00, 0x10, 0x40, 0x00, 0x00, 0x00 };	/* PGE */
	const uint8_t upd48[] = { 0x9d, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01 };	/* FUP */
	const uint8_t supp[] = { 0x01 };	/* TIP.PGD, no IP */
	const uint8_t reserved5[] = { 0xad, 0, 0, 0, 0, 0, 0, 0, 0 };
	struct tc_pt_skim_pkt k;

	/* nothing to update yet: left to libipt */
	k = parse(upd16, sizeof(upd16), &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_BAD);
	CHECK(!have);
	k = parse(full, sizeof(full), &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_TIP);
	CHECK_INT(k.size, 9);
	CHECK(k.ip == 0x1122334455667788ULL && last == k.ip && have);
	k = parse(upd16, sizeof(upd16), &last, &have);
	CHECK(k.ip == 0x1122334455661234ULL);
	CHECK_INT(k.size, 3);
	k = parse(upd32, sizeof(upd32), &last, &have);
	CHECK(k.ip == 0x1122334401020304ULL);
	k = parse(sext_neg, sizeof(sext_neg), &last, &have);
	CHECK(k.ip == 0xffff800000001000ULL);
	k = parse(sext_pos, sizeof(sext_pos), &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_PGE);
	CHECK(k.ip == 0x401000ULL);
	k = parse(upd48, sizeof(upd48), &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_FUP);
	CHECK(k.ip == 0x010203040506ULL);	/* upper 16 bits of 0x401000: 0 */
	k = parse(supp, sizeof(supp), &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_PGD);
	CHECK(k.suppressed);
	CHECK(last == 0x010203040506ULL);	/* unchanged */
	CHECK_INT(parse(reserved5, sizeof(reserved5), &last, &have).kind, TC_PT_SKIM_BAD);
	k = parse(full, 5, &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_BAD);
	CHECK(k.truncated);
}

TEST(packet_psb_plus_and_others)
{
	uint64_t last = 0;
	bool have = false;
	uint8_t psb[16];
	const uint8_t psbend[] = { 0x02, 0x23 }, mode64[] = { 0x99, 0x01 }, tsx[] = { 0x99, 0x21 };
	/* PIP: NR set, CR3 0x3fd434000 (bits 51:5 in the payload's bits 47:1) */
	const uint8_t ovf[] = { 0x02, 0xf3 }, pip[] = { 0x02, 0x43, 0x01, 0x34, 0xd4, 0x3f, 0, 0 };
	const uint8_t leaf2[] = { 0x99, 0x40 };
	const uint8_t pad[] = { 0 };
	struct tc_pt_skim_pkt k;

	for (int i = 0; i < 16; i += 2) {
		psb[i] = 0x02;
		psb[i + 1] = 0x82;
	}
	k = parse(psb, sizeof(psb), &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_PSB);
	CHECK_INT(k.size, 16);
	k = parse(psb, 10, &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_BAD);
	CHECK(k.truncated);
	psb[9] = 0x83;
	CHECK_INT(parse(psb, sizeof(psb), &last, &have).kind, TC_PT_SKIM_BAD);
	CHECK_INT(parse(psbend, 2, &last, &have).kind, TC_PT_SKIM_PSBEND);
	k = parse(mode64, 2, &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_MODE_EXEC);
	CHECK_INT(k.mode, 0x01);
	k = parse(tsx, 2, &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_MODE_TSX);
	CHECK_INT(k.size, 2);
	CHECK_INT(k.mode, 0x21);
	CHECK_INT(parse(leaf2, 2, &last, &have).kind, TC_PT_SKIM_BAD);	/* libipt: bad */
	CHECK_INT(parse(ovf, 2, &last, &have).kind, TC_PT_SKIM_BAD);
	k = parse(pip, sizeof(pip), &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_PIP);
	CHECK_INT(k.size, 8);
	CHECK(k.value == 0x3fd434000ULL);
	CHECK_INT(k.mode, 1);
	k = parse(pip, 7, &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_BAD);
	CHECK(k.truncated);
	CHECK_INT(parse(pad, 1, &last, &have).kind, TC_PT_SKIM_PAD);
}

TEST(packet_timing)
{
	const uint8_t tsc[] = { 0x19, 1, 2, 3, 4, 5, 6, 7 }, cyc[] = { 0x03 },
		      cyc3[] = { 0x0f, 0x03, 0x04 }, mtc[] = { 0x59, 0xab },
		      tma[] = { 0x02, 0x73, 0x34, 0x12, 0, 0x05, 0x01 },
		      tma_bad[] = { 0x02, 0x73, 0x34, 0x12, 0, 0x05, 0x02 },
		      cbr[] = { 0x02, 0x03, 0x1d, 0 };
	uint64_t last = 0;
	bool have = false;
	struct tc_pt_skim_pkt k;

	k = parse(tsc, sizeof(tsc), &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_TSC);
	CHECK_INT(k.size, 8);
	CHECK(k.value == 0x07060504030201ULL);
	k = parse(tsc, 7, &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_BAD);
	CHECK(k.truncated);
	k = parse(cyc, 1, &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_CYC);
	CHECK_INT(k.size, 1);
	CHECK(k.value == 0);
	/* 0x0f: 1 in the first 5 bits, more; 0x03: 1 << 5, more; 0x04: 2 << 12, the last */
	k = parse(cyc3, 3, &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_CYC);
	CHECK_INT(k.size, 3);
	CHECK(k.value == (1 | 1 << 5 | 2 << 12));
	k = parse(cyc3, 2, &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_BAD);
	CHECK(k.truncated);
	k = parse(mtc, 2, &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_MTC);
	CHECK(k.value == 0xab);
	k = parse(tma, sizeof(tma), &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_TMA);
	CHECK_INT(k.size, 7);
	CHECK(k.value == 0x1234);
	CHECK_INT(k.fc, 0x105);
	CHECK_INT(parse(tma_bad, sizeof(tma_bad), &last, &have).kind, TC_PT_SKIM_BAD);
	k = parse(cbr, sizeof(cbr), &last, &have);
	CHECK_INT(k.kind, TC_PT_SKIM_CBR);
	CHECK(k.value == 0x1d);
}

/* 0x1000: nop; jnz 0x1000; call 0x100b; 0x1008: jmp *rax; 0x100a: nop; 0x100b: ret */
static const uint8_t code[] = { 0x90, 0x75, 0xfd, 0xe8, 0x03, 0x00, 0x00, 0x00,
				0xff, 0xe0, 0x90, 0xc3 };

struct seen {
	struct tc_pt_skim_range r[16];
	int n, syncs;
	uint64_t skipped;
	uint64_t base;		/* where code is (0: at 0x1000) */
};

static size_t rd(void *ctx, uint64_t addr, uint8_t *buf, size_t len)
{
	const struct seen *s = ctx;
	uint64_t base = s->base ? s->base : 0x1000;
	size_t o, n;

	if (addr < base || addr - base >= sizeof(code))
		return 0;
	o = (size_t)(addr - base);
	n = sizeof(code) - o < len ? sizeof(code) - o : len;
	memcpy(buf, code + o, n);
	return n;
}

static void on_sync(void *ctx, uint64_t skipped)
{
	struct seen *s = ctx;

	s->syncs++;
	s->skipped = skipped;
}

static void on_range(void *ctx, const struct tc_pt_skim_range *r, size_t n)
{
	struct seen *s = ctx;

	for (size_t i = 0; i < n; i++, s->n++)
		if (s->n < 16)
			s->r[s->n] = r[i];
}

static size_t psb_plus(uint8_t *b, uint64_t ip)
{
	size_t n = 0;

	for (int i = 0; i < 8; i++) {
		b[n++] = 0x02;
		b[n++] = 0x82;
	}
	b[n++] = 0x99;	/* MODE.Exec 64-bit */
	b[n++] = 0x01;
	b[n++] = 0xdd;	/* FUP, the whole IP */
	for (int i = 0; i < 8; i++)
		b[n++] = (uint8_t)(ip >> (8 * i));
	b[n++] = 0x02;	/* PSBEND */
	b[n++] = 0x23;
	return n;
}

TEST(flow_ranges)
{
	struct tc_x86 *x86 = tc_x86_new();
	struct tc_pt_skim *sk = tc_pt_skim_new(x86);
	struct seen s = { 0 };
	const struct tc_pt_skim_ops ops = { rd, on_sync, on_range, NULL, &s, NULL };
	struct tc_pt_skim_stats st = { 0 };
	struct pt_config cfg;
	uint8_t t[64];
	size_t n = 0;

	CHECK(sk != NULL);
	if (!sk)
		return;
	pt_config_init(&cfg);
	t[n++] = 0x00;	/* a byte before the PSB */
	n += psb_plus(t + n, 0x1000);
	t[n++] = 0x3a;	/* TNT-8: taken, taken, not taken, taken (the return) */
	t[n++] = 0x2d;	/* TIP, 16 bits: 0x1000 */
	t[n++] = 0x00;
	t[n++] = 0x10;
	CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), 0);
	CHECK_INT(s.syncs, 1);
	CHECK_INT(s.skipped, 1);
	CHECK_INT(s.n, 6);
	/* the loop twice, then through the call; the return; the jump; the loop again, its
	 * branch cut off by the trace's end */
	const uint64_t want[6][3] = { { 0x1000, 0x1003, 2 }, { 0x1000, 0x1003, 2 },
				      { 0x1000, 0x1008, 3 }, { 0x100b, 0x100c, 1 },
				      { 0x1008, 0x100a, 1 }, { 0x1000, 0x1003, 2 } };
	const enum pt_insn_class cls[6] = { ptic_cond_jump, ptic_cond_jump, ptic_call,
					    ptic_return, ptic_jump, ptic_cond_jump };

	for (int i = 0; i < 6 && i < s.n; i++) {
		CHECK(s.r[i].start == want[i][0] && s.r[i].end == want[i][1]);
		CHECK_INT(s.r[i].insns, want[i][2]);
		CHECK_INT(s.r[i].last_class, cls[i]);
	}
	CHECK(s.r[2].last_ip == 0x1003);
	CHECK_INT(st.insns, 11);
	CHECK_INT(st.branches, 6);

	/* an overflow: left to the exact path */
	s = (struct seen){ 0 };
	n = psb_plus(t, 0x1000);
	t[n++] = 0x02;
	t[n++] = 0xf3;
	CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), TC_PT_SKIM_GIVE_UP);
	/* a return with no call: left to the exact path (libipt's error) */
	s = (struct seen){ 0 };
	n = psb_plus(t, 0x100b);
	t[n++] = 0x06;
	CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), TC_PT_SKIM_GIVE_UP);
	/* no PSB */
	memset(t, 0, 40);
	CHECK_INT(skim_run(sk, &cfg, t, 40, &ops, &st), TC_PT_SKIM_NO_PSB);
	tc_pt_skim_free(sk);
	tc_x86_free(x86);
}

/* A PSB+ while tracing whose FUP is not where the flow is: libipt's block decoder goes on
 * with trace to the FUP's IP (here a TNT bit for the jnz, then the call to 0x100b). With a
 * CBR in that PSB+ its event is still queued there, so that first query fails (an event
 * pending): the skim gives up before the instruction, giving no range of that flow (it
 * gave [0x1000, 0x1008), timed after the PSB+, which the exact path makes before it). */
TEST(flow_psb_elsewhere_with_cbr)
{
	struct tc_x86 *x86 = tc_x86_new();
	struct tc_pt_skim *sk = tc_pt_skim_new(x86);
	const struct tc_pt_skim_ops ops = { rd, on_sync, on_range, NULL, NULL, NULL };
	struct tc_pt_skim_stats st = { 0 };
	struct pt_config cfg;
	uint8_t t[96];

	CHECK(sk != NULL);
	if (!sk)
		return;
	pt_config_init(&cfg);
	for (int cbr = 0; cbr < 2; cbr++) {
		struct seen s = { 0 };
		struct tc_pt_skim_ops o = ops;
		size_t n = psb_plus(t, 0x1000), m;

		o.ctx = &s;
		m = psb_plus(t + n, 0x100b);
		if (cbr) {
			/* a CBR (ratio 9) after MODE.Exec and FUP, then PSBEND again */
			const uint8_t tail[] = { 0x02, 0x03, 0x09, 0x00, 0x02, 0x23 };

			memcpy(t + n + m - 2, tail, sizeof(tail));
			m += sizeof(tail) - 2;
		}
		n += m;
		t[n++] = 0x04;	/* TNT-8: not taken */
		if (!cbr) {
			CHECK_INT(skim_run(sk, &cfg, t, n, &o, &st), 0);
			CHECK(s.n >= 1 && s.r[0].start == 0x1000 && s.r[0].end == 0x1008);
		} else {
			CHECK_INT(skim_run(sk, &cfg, t, n, &o, &st), TC_PT_SKIM_GIVE_UP);
			CHECK_INT(s.n, 0);
		}
	}
	tc_pt_skim_free(sk);
	tc_x86_free(x86);
}

/* More ranges than the skim gives at once, and TIPs of every IP compression the flow reads
 * ahead inline: each round the loop 120 times (20 TNT-8 of six taken bits), then through the
 * call, its return, and the jump's TIP to the loop again; the code (code[]) at an address
 * with every byte of its IP set and bit 47 too. */
#define HIGH 0xffffff9512341000ULL

TEST(flow_many_ranges_and_tips)
{
	static const uint8_t tips[5][9] = {
		{ 0x2d, 0x00, 0x10 },			/* 16 bits, the rest the last IP's */
		{ 0x4d, 0x00, 0x10, 0x34, 0x12 },	/* 32 bits */
		{ 0x6d, 0x00, 0x10, 0x34, 0x12, 0x95, 0xff },	/* 48, sign-extended */
		{ 0x8d, 0x00, 0x10, 0x34, 0x12, 0x95, 0xff },	/* 48, the rest the last IP's */
		{ 0xcd, 0x00, 0x10, 0x34, 0x12, 0x95, 0xff, 0xff, 0xff },	/* 64 */
	};
	static const unsigned tip_len[5] = { 3, 5, 7, 7, 9 };
	struct tc_x86 *x86 = tc_x86_new();
	struct tc_pt_skim *sk = tc_pt_skim_new(x86);
	struct seen s = { .base = HIGH };
	const struct tc_pt_skim_ops ops = { rd, on_sync, on_range, NULL, &s, NULL };
	struct tc_pt_skim_stats st = { 0 };
	struct pt_config cfg;
	uint8_t t[512];
	size_t n;

	CHECK(sk != NULL);
	if (!sk)
		return;
	pt_config_init(&cfg);
	n = psb_plus(t, HIGH);
	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < 20; i++)
			t[n++] = 0xfe;	/* TNT-8: six taken */
		t[n++] = 0x0a;	/* TNT-8: not taken, taken (the return) */
		memcpy(t + n, tips[round], tip_len[round]);
		n += tip_len[round];
	}
	CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), 0);
	/* 123 ranges a round, and the loop once more, its branch cut off by the trace's end */
	CHECK_INT(s.n, 5 * 123 + 1);
	CHECK(st.insns == 5 * (120 * 2 + 3 + 1 + 1) + 2);
	CHECK(st.branches == 5 * 123 + 1);
	for (int i = 0; i < 16 && i < s.n; i++)
		CHECK(s.r[i].start == HIGH && s.r[i].end == HIGH + 3 && s.r[i].insns == 2);
	/* a TIP whose compressed IP has no last IP to update: left to the exact path */
	s = (struct seen){ .base = HIGH };
	n = 0;
	for (int i = 0; i < 8; i++) {
		t[n++] = 0x02;
		t[n++] = 0x82;
	}
	t[n++] = 0x99;	/* MODE.Exec 64-bit, no FUP: tracing off */
	t[n++] = 0x01;
	t[n++] = 0x02;	/* PSBEND */
	t[n++] = 0x23;
	t[n++] = 0x2d;	/* TIP, 16 bits */
	t[n++] = 0x00;
	t[n++] = 0x10;
	CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), TC_PT_SKIM_GIVE_UP);
	CHECK_INT(s.n, 0);
	tc_pt_skim_free(sk);
	tc_x86_free(x86);
}

/* ---- time: TSC, TMA in PSB+, MTCs, as libipt's query decoder has it ---- */

struct timed {
	struct seen s;
	uint64_t times[8], at[16];	/* the times told; each range's */
	int ntimes;
	bool refuse;
};

static void on_range_timed(void *ctx, const struct tc_pt_skim_range *r, size_t n)
{
	struct timed *t = ctx;

	for (size_t i = 0; i < n; i++) {
		if (t->s.n < 16)
			t->at[t->s.n] = t->ntimes ? t->times[t->ntimes - 1] : 0;
		on_range(&t->s, &r[i], 1);
	}
}

static void on_sync_timed(void *ctx, uint64_t skipped)
{
	on_sync(&((struct timed *)ctx)->s, skipped);
}

static int on_time(void *ctx, uint64_t tsc)
{
	struct timed *t = ctx;

	if (t->refuse)
		return -1;
	if (t->ntimes < 8)
		t->times[t->ntimes++] = tsc;
	return 0;
}

/* A PSB+ with TSC tsc and TMA (CTC ctc, FC 0), as perf's (tsc 0: no TSC) */
static size_t psb_plus_timed(uint8_t *b, uint64_t ip, uint64_t tsc, unsigned ctc)
{
	size_t n = 0;

	for (int i = 0; i < 8; i++) {
		b[n++] = 0x02;
		b[n++] = 0x82;
	}
	if (tsc) {
		b[n++] = 0x19;
		for (int i = 0; i < 7; i++)
			b[n++] = (uint8_t)(tsc >> (8 * i));
	}
	b[n++] = 0x02;
	b[n++] = 0x73;
	b[n++] = (uint8_t)ctc;
	b[n++] = (uint8_t)(ctc >> 8);
	b[n++] = 0;
	b[n++] = 0;
	b[n++] = 0;
	{
		uint8_t rest[32];
		size_t m = psb_plus(rest, ip);

		memcpy(b + n, rest + 16, m - 16);	/* its MODE.Exec, FUP, PSBEND */
		n += m - 16;
	}
	return n;
}

TEST(flow_time)
{
	struct tc_x86 *x86 = tc_x86_new();
	struct tc_pt_skim *sk = tc_pt_skim_new(x86);
	struct timed tm = { 0 };
	const struct tc_pt_skim_ops ops = { rd, on_sync_timed, on_range_timed, on_time, &tm, NULL };
	struct tc_pt_skim_stats st = { 0 };
	struct pt_config cfg;
	uint8_t t[96];
	size_t n;

	CHECK(sk != NULL);
	if (!sk)
		return;
	pt_config_init(&cfg);
	cfg.cpuid_0x15_eax = 1;	/* TSC = 2 CTC */
	cfg.cpuid_0x15_ebx = 2;
	cfg.mtc_freq = 3;
	n = psb_plus_timed(t, 0x1000, 0x1000, 0x10);
	t[n++] = 0x06;	/* TNT-8: taken (the loop again) */
	t[n++] = 0x59;	/* MTC: CTC 0x18, 8 after the TMA's: TSC 0x1010 */
	t[n++] = 0x03;
	t[n++] = 0x04;	/* TNT-8: not taken; the call; its return needs trace: the end */
	CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), 0);
	CHECK_INT(tm.s.n, 3);
	/* the PSB+'s time at the sync; the second TNT's where the second range ends (the
	 * first ends at the first TNT's, told already); none at the trace's end */
	CHECK_INT(tm.ntimes, 2);
	CHECK(tm.times[0] == 0x1000);
	CHECK(tm.times[1] == 0x1010);
	CHECK(tm.at[0] == 0x1000 && tm.at[1] == 0x1010 && tm.at[2] == 0x1010);

	/* the caller refuses the time: the exact path's */
	tm = (struct timed){ .refuse = true };
	CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), TC_PT_SKIM_GIVE_UP);
	/* a TMA without a TSC: libipt's error */
	tm = (struct timed){ 0 };
	n = psb_plus_timed(t, 0x1000, 0, 0x10);
	t[n++] = 0x06;
	CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), TC_PT_SKIM_GIVE_UP);
	/* a time without ops->time: the exact path's */
	n = psb_plus_timed(t, 0x1000, 0x1000, 0x10);
	t[n++] = 0x06;
	{
		const struct tc_pt_skim_ops none = { rd, on_sync_timed, on_range_timed, NULL, &tm,
						     NULL };

		CHECK_INT(skim_run(sk, &cfg, t, n, &none, &st), TC_PT_SKIM_GIVE_UP);
	}
	tc_pt_skim_free(sk);
	tc_x86_free(x86);
}

/* The times a buffer tells (pt_segment.c orders per-thread queues by them): the PSB+'s
 * TSC, each MTC's after, a later PSB+'s TSC; TNT bits and IPs change nothing. */
TEST(time_span)
{
	struct pt_config cfg;
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned mtcs = 0;
	uint8_t t[160];
	size_t n, first;

	pt_config_init(&cfg);
	cfg.cpuid_0x15_eax = 1;	/* TSC = 2 CTC */
	cfg.cpuid_0x15_ebx = 2;
	cfg.mtc_freq = 3;
	n = first = psb_plus_timed(t, 0x1000, 0x1000, 0x10);
	t[n++] = 0x06;	/* TNT-8 */
	t[n++] = 0x59;	/* MTC: CTC 0x18, 8 after the TMA's: TSC 0x1010 */
	t[n++] = 0x03;
	t[n++] = 0x59;	/* MTC: CTC 0x20: TSC 0x1020 */
	t[n++] = 0x04;
	n += psb_plus_timed(t + n, 0x1000, 0x2000, 0x30);
	t[n++] = 0x59;	/* MTC: CTC 0x38: TSC 0x2010 */
	t[n++] = 0x07;
	CHECK_INT(tc_pt_skim_time_span(&cfg, t, n, &lo, &hi, &mtcs), 0);
	CHECK(lo == 0x1000);
	CHECK(hi == 0x2010);
	CHECK_INT(mtcs, 2);	/* after the first TMA */
	/* what was there is kept: a span over several buffers */
	lo = 0x800, hi = 0x3000, mtcs = 5;
	CHECK_INT(tc_pt_skim_time_span(&cfg, t, n, &lo, &hi, &mtcs), 0);
	CHECK(lo == 0x800 && hi == 0x3000);
	CHECK_INT(mtcs, 5);
	/* a packet cut by the end: as libipt, whose last query there fails */
	lo = UINT64_MAX, hi = 0;
	memset(t + n, 0x19, 3);	/* a TSC's first bytes */
	CHECK_INT(tc_pt_skim_time_span(&cfg, t, n + 3, &lo, &hi, &mtcs), 0);
	CHECK(lo == 0x1000 && hi == 0x2010);
	/* ... but cut inside the first PSB+, or a TNT in it: libipt does not synchronise */
	CHECK_INT(tc_pt_skim_time_span(&cfg, t, first - 3, &lo, &hi, &mtcs), -1);
	t[first - 2] = 0x06;	/* a TNT-8 where its PSBEND was, the PSBEND after */
	t[first - 1] = 0x02;
	t[first] = 0x23;
	CHECK_INT(tc_pt_skim_time_span(&cfg, t, first + 1, &lo, &hi, &mtcs), -1);
	/* the first PSB+ without a TSC */
	n = psb_plus_timed(t, 0x1000, 0, 0x10);
	CHECK_INT(tc_pt_skim_time_span(&cfg, t, n, &lo, &hi, &mtcs), -1);
	/* a packet the parser does not model (OVF) */
	n = psb_plus_timed(t, 0x1000, 0x1000, 0x10);
	t[n++] = 0x02;
	t[n++] = 0xf3;
	CHECK_INT(tc_pt_skim_time_span(&cfg, t, n, &lo, &hi, &mtcs), -1);
	/* a CYC (its calibration takes CBRs anywhere) */
	n = psb_plus_timed(t, 0x1000, 0x1000, 0x10);
	t[n++] = 0x03;	/* CYC: 0 cycles */
	CHECK_INT(tc_pt_skim_time_span(&cfg, t, n, &lo, &hi, &mtcs), -1);
}

/* ---- MODE.TSX and PIP (a real CPU's recording has both in every PSB+) ---- */

struct paged {
	struct seen s;
	uint64_t cr3[4];
	int at[4];		/* ranges given when told */
	int n;
	bool refuse;
};

static void on_sync_paged(void *ctx, uint64_t skipped)
{
	on_sync(&((struct paged *)ctx)->s, skipped);
}

static void on_range_paged(void *ctx, const struct tc_pt_skim_range *r, size_t n)
{
	on_range(&((struct paged *)ctx)->s, r, n);
}

static int on_paging(void *ctx, uint64_t cr3)
{
	struct paged *p = ctx;

	if (p->refuse)
		return -1;
	if (p->n < 4) {
		p->cr3[p->n] = cr3;
		p->at[p->n] = p->s.n;
	}
	p->n++;
	return 0;
}

static const struct tc_pt_skim_ops paged_ops = { rd, on_sync_paged, on_range_paged, NULL, NULL,
						 on_paging };

static size_t put_bytes(uint8_t *b, const uint8_t *p, size_t n)
{
	memcpy(b, p, n);
	return n;
}

/* A PIP of CR3 cr3 (NR 0). */
static size_t pip_packet(uint8_t *b, uint64_t cr3)
{
	uint64_t pl = cr3 >> 5 << 1;

	b[0] = 0x02;
	b[1] = 0x43;
	for (int i = 0; i < 6; i++)
		b[2 + i] = (uint8_t)(pl >> (8 * i));
	return 8;
}

/* An IP packet (opcode op: TIP 0x0d, TIP.PGE 0x11, FUP 0x1d), the whole 64-bit IP. */
static size_t ip_packet(uint8_t *b, uint8_t op, uint64_t ip)
{
	b[0] = (uint8_t)(op | 6 << 5);
	for (int i = 0; i < 8; i++)
		b[1 + i] = (uint8_t)(ip >> (8 * i));
	return 9;
}

/* A PSB+ as perf 4.14's on a real CPU: MODE.TSX (tsx, 0: none), MODE.Exec, FUP at ip (0:
 * none), PIP (cr3, 0: none), PSBEND. */
static size_t psb_plus_real(uint8_t *b, uint8_t tsx, uint64_t ip, uint64_t cr3)
{
	static const uint8_t mode64[] = { 0x99, 0x01 }, psbend[] = { 0x02, 0x23 };
	size_t n = 0;

	for (int i = 0; i < 8; i++) {
		b[n++] = 0x02;
		b[n++] = 0x82;
	}
	if (tsx) {
		b[n++] = 0x99;
		b[n++] = tsx;
	}
	n += put_bytes(b + n, mode64, 2);
	if (ip)
		n += ip_packet(b + n, 0x1d, ip);
	if (cr3)
		n += pip_packet(b + n, cr3);
	n += put_bytes(b + n, psbend, 2);
	return n;
}

/* The first PSB+ with MODE.TSX and PIP: their events come at the sync (the CR3 before any
 * code is read); the flow then as flow_ranges'. The exact path's on main (it gave up). */
TEST(flow_psb_tsx_pip_at_sync)
{
	struct tc_x86 *x86 = tc_x86_new();
	struct tc_pt_skim *sk = tc_pt_skim_new(x86);
	struct paged p = { 0 };
	struct tc_pt_skim_ops ops = paged_ops;
	struct tc_pt_skim_stats st = { 0 };
	struct pt_config cfg;
	uint8_t t[96];
	size_t n;

	CHECK(sk != NULL);
	if (!sk)
		return;
	ops.ctx = &p;
	pt_config_init(&cfg);
	n = psb_plus_real(t, 0x20, 0x1000, 0x3fd434000ULL);
	t[n++] = 0x3a;	/* as flow_ranges */
	t[n++] = 0x2d;
	t[n++] = 0x00;
	t[n++] = 0x10;
	CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), 0);
	CHECK_INT(p.s.syncs, 1);
	CHECK_INT(p.n, 1);
	CHECK(p.cr3[0] == 0x3fd434000ULL);
	CHECK_INT(p.at[0], 0);
	CHECK_INT(p.s.n, 6);
	CHECK_INT(st.insns, 11);
	CHECK_INT(st.branches, 6);
	/* the caller cannot take the CR3 there: the exact path's */
	p = (struct paged){ .refuse = true };
	CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), TC_PT_SKIM_GIVE_UP);
	/* no paging callback: the exact path's */
	p = (struct paged){ 0 };
	ops.paging = NULL;
	CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), TC_PT_SKIM_GIVE_UP);
	/* a PSB+'s MODE.TSX that says aborted: left to libipt */
	ops.paging = on_paging;
	n = psb_plus_real(t, 0x22, 0x1000, 0x3fd434000ULL);
	t[n++] = 0x04;
	CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), TC_PT_SKIM_GIVE_UP);
	tc_pt_skim_free(sk);
	tc_x86_free(x86);
}

/* A PSB+ while tracing whose FUP (0x100b) is past the jnz (a TNT bit) and the call: with
 * its PIP's event alone libipt goes there with trace, the CR3 told there; with
 * MODE.Exec's, MODE.TSX's and PIP's (a real CPU's PSB+) the one behind the first fails
 * that query (an event pending), and MODE.TSX's alone is gone to without trace: the exact
 * path's. */
TEST(flow_psb_tsx_pip_elsewhere)
{
	struct tc_x86 *x86 = tc_x86_new();
	struct tc_pt_skim *sk = tc_pt_skim_new(x86);
	struct tc_pt_skim_ops ops = paged_ops;
	struct tc_pt_skim_stats st = { 0 };
	struct pt_config cfg;
	uint8_t t[128];

	CHECK(sk != NULL);
	if (!sk)
		return;
	pt_config_init(&cfg);
	for (int kind = 0; kind < 3; kind++) {
		struct paged p = { 0 };
		size_t n = psb_plus(t, 0x1000), m = 0;
		static const uint8_t psbend[] = { 0x02, 0x23 };

		ops.ctx = &p;
		for (int i = 0; i < 8; i++) {
			t[n + m++] = 0x02;
			t[n + m++] = 0x82;
		}
		if (kind == 1) {
			t[n + m++] = 0x99;	/* MODE.TSX alone */
			t[n + m++] = 0x20;
		}
		if (kind == 2)
			m += psb_plus_real(t + n + m - 16, 0x20, 0, 0) - 16 - 2;
		m += ip_packet(t + n + m, 0x1d, 0x100b);
		if (kind != 1)
			m += pip_packet(t + n + m, 0x2000);
		m += put_bytes(t + n + m, psbend, 2);
		n += m;
		t[n++] = 0x04;	/* TNT-8: not taken */
		if (!kind) {
			CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), 0);
			/* [0x1000, 0x1008) still in flight at the CR3 (pt_flow cuts it at the
			 * next block, in the thread then: given after); the return's (its bit:
			 * the end) */
			CHECK_INT(p.s.n, 2);
			CHECK_INT(p.n, 1);
			CHECK(p.cr3[0] == 0x2000);
			CHECK_INT(p.at[0], 0);
			CHECK(p.s.r[0].start == 0x1000 && p.s.r[0].end == 0x1008);
			CHECK(p.s.r[1].start == 0x100b && p.s.r[1].end == 0x100c);
		} else {
			CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), TC_PT_SKIM_GIVE_UP);
			CHECK_INT(p.s.n, 0);
			CHECK_INT(p.n, 0);
		}
	}
	tc_pt_skim_free(sk);
	tc_x86_free(x86);
}

/* The flow to the return, TIP.PGD (bound to it), then with tracing off a PIP (CR3 0x2000:
 * told at once, after the two ranges before) or a MODE.TSX (an event at once: nothing for
 * the ranges), TIP.PGE at 0x1000 and the same flow again; a PIP while tracing binds to
 * the next MOV CR3: the exact path's. */
TEST(flow_pip_tsx_tracing_off)
{
	struct tc_x86 *x86 = tc_x86_new();
	struct tc_pt_skim *sk = tc_pt_skim_new(x86);
	struct tc_pt_skim_ops ops = paged_ops;
	struct tc_pt_skim_stats st = { 0 };
	struct pt_config cfg;
	uint8_t t[96];

	CHECK(sk != NULL);
	if (!sk)
		return;
	pt_config_init(&cfg);
	for (int kind = 0; kind < 3; kind++) {
		struct paged p = { 0 };
		size_t n = psb_plus(t, 0x1000);

		ops.ctx = &p;
		t[n++] = 0x04;	/* TNT-8: not taken; the call; the return needs trace */
		if (kind == 2) {
			n += pip_packet(t + n, 0x2000);	/* while tracing */
			CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), TC_PT_SKIM_GIVE_UP);
			CHECK_INT(p.n, 0);
			continue;
		}
		t[n++] = 0x01;	/* TIP.PGD, no IP */
		if (kind == 0) {
			n += pip_packet(t + n, 0x2000);
		} else {
			t[n++] = 0x99;	/* MODE.TSX: in a transaction */
			t[n++] = 0x21;
		}
		n += ip_packet(t + n, 0x11, 0x1000);
		t[n++] = 0x04;
		CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), 0);
		CHECK_INT(p.s.n, 4);
		for (int i = 0; i < 4 && i < p.s.n; i++)
			CHECK(p.s.r[i].start == (i & 1 ? 0x100b : 0x1000) &&
			      p.s.r[i].end == (i & 1 ? 0x100c : 0x1008));
		CHECK_INT(p.n, kind == 0);
		if (kind == 0)
			CHECK(p.cr3[0] == 0x2000 && p.at[0] == 2);
	}
	tc_pt_skim_free(sk);
	tc_x86_free(x86);
}

/* MODE.TSX while tracing binds to the FUP after it (0x100b, reached by the call without
 * trace): a begin goes on (the return's TNT bit, the jump's TIP to 0x100a); an abort's
 * FUP is an asynchronous branch's too, to the TIP after it (0x100a): the range cut at the
 * FUP's IP before the return. With BDM64 an abort is left to libipt. */
TEST(flow_tsx_tracing)
{
	struct tc_x86 *x86 = tc_x86_new();
	struct tc_pt_skim *sk = tc_pt_skim_new(x86);
	struct tc_pt_skim_ops ops = paged_ops;
	struct tc_pt_skim_stats st = { 0 };
	struct pt_config cfg;
	uint8_t t[96];

	CHECK(sk != NULL);
	if (!sk)
		return;
	pt_config_init(&cfg);
	for (int abort = 0; abort < 3; abort++) {
		struct paged p = { 0 };
		size_t n = psb_plus(t, 0x1000);

		ops.ctx = &p;
		cfg.errata.bdm64 = abort == 2;
		t[n++] = 0x04;	/* TNT-8: not taken */
		t[n++] = 0x99;
		t[n++] = abort ? 0x22 : 0x21;
		n += ip_packet(t + n, 0x1d, 0x100b);
		if (!abort)
			t[n++] = 0x06;	/* TNT-8: taken (the return to 0x1008) */
		n += ip_packet(t + n, 0x0d, 0x100a);
		if (abort == 2) {
			CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), TC_PT_SKIM_GIVE_UP);
			continue;
		}
		CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), 0);
		if (!abort) {
			CHECK_INT(p.s.n, 4);
			CHECK(p.s.r[1].start == 0x100b && p.s.r[1].end == 0x100c);
			CHECK(p.s.r[2].start == 0x1008 && p.s.r[2].end == 0x100a);
			CHECK(p.s.r[3].start == 0x100a && p.s.r[3].end == 0x100c &&
			      p.s.r[3].insns == 2);
			CHECK_INT(st.insns, 3 + 1 + 1 + 2);
		} else {
			CHECK_INT(p.s.n, 2);
			CHECK(p.s.r[0].start == 0x1000 && p.s.r[0].end == 0x1008);
			CHECK(p.s.r[1].start == 0x100a && p.s.r[1].end == 0x100c &&
			      p.s.r[1].insns == 2);
			CHECK_INT(st.insns, 3 + 2);
		}
	}
	tc_pt_skim_free(sk);
	tc_x86_free(x86);
}

/* A buffer cut after an extended opcode's first byte (perf cuts a queue's trace anywhere):
 * libipt's read-ahead cannot fetch it (-pte_eos) and the flow ends at the next query, as
 * at the buffer's end; while tracing is off (after TIP.PGD) it is left to libipt. */
TEST(flow_lone_ext_byte_at_end)
{
	struct tc_x86 *x86 = tc_x86_new();
	struct tc_pt_skim *sk = tc_pt_skim_new(x86);
	struct seen s = { 0 };
	const struct tc_pt_skim_ops ops = { rd, on_sync, on_range, NULL, &s, NULL };
	struct tc_pt_skim_stats st = { 0 };
	struct pt_config cfg;
	uint8_t t[64];
	size_t n;

	CHECK(sk != NULL);
	if (!sk)
		return;
	pt_config_init(&cfg);
	n = psb_plus(t, 0x1000);
	t[n++] = 0x3a;	/* as flow_ranges */
	t[n++] = 0x2d;
	t[n++] = 0x00;
	t[n++] = 0x10;
	t[n++] = 0x02;
	CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), 0);
	CHECK_INT(s.n, 6);
	CHECK_INT(st.insns, 11);
	CHECK_INT(st.branches, 6);
	s = (struct seen){ 0 };
	t[n - 1] = 0x01;	/* TIP.PGD, no IP: bound to the jnz */
	t[n++] = 0x02;
	CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), TC_PT_SKIM_GIVE_UP);
	tc_pt_skim_free(sk);
	tc_x86_free(x86);
}

/* A buffer cut inside a TIP: libipt fetches its opcode whole, so where the flow needs a
 * TNT bit next (the jnz) its query fails (a TIP where a TNT was due): the exact path's;
 * where it needs an IP (a return: libipt then asks for a TIP) the flow ends there, as at
 * the buffer's end. */
TEST(flow_cut_tip)
{
	struct tc_x86 *x86 = tc_x86_new();
	struct tc_pt_skim *sk = tc_pt_skim_new(x86);
	struct seen s = { 0 };
	const struct tc_pt_skim_ops ops = { rd, on_sync, on_range, NULL, &s, NULL };
	struct tc_pt_skim_stats st = { 0 };
	struct pt_config cfg;
	uint8_t t[64];
	size_t n;

	CHECK(sk != NULL);
	if (!sk)
		return;
	pt_config_init(&cfg);
	n = psb_plus(t, 0x1000);
	t[n++] = 0x2d;	/* TIP, 16 bits: one of them */
	t[n++] = 0x00;
	CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), TC_PT_SKIM_GIVE_UP);
	s = (struct seen){ 0 };
	n = psb_plus(t, 0x100b);
	t[n++] = 0x2d;
	t[n++] = 0x00;
	CHECK_INT(skim_run(sk, &cfg, t, n, &ops, &st), 0);
	CHECK_INT(s.n, 1);
	CHECK(s.r[0].start == 0x100b && s.r[0].end == 0x100c);
	tc_pt_skim_free(sk);
	tc_x86_free(x86);
}
