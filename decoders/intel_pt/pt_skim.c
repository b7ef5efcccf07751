#include "decoders/intel_pt/pt_skim.h"

#include "decoders/intel_pt/pt_insn.h"

#include <stdlib.h>
#include <string.h>

/* The flow follows what libipt's block decoder (with pt_flow's on_block over its blocks)
 * makes of the same packets; where that depends on the order of libipt's queries and
 * events, the order is the walk's (pt_walk.c, a model of it):
 * - libipt reads ahead after each query: an event packet behind the last TNT bit or TIP
 *   used is pending at the next block, before any more code; so is the parser here (ahead);
 * - TIP.PGD binds to its IP (the flow goes on without trace until there) or, without an
 *   IP, to the next instruction that needs trace (that one is in the flow);
 * - FUP+TIP, FUP+TIP.PGD bind to the FUP's IP, reached without trace;
 * - a PSB+ while tracing gives a status event for each MODE.Exec, MODE.TSX, PIP and CBR,
 *   queued in packet order, each bound to the FUP's IP (CBR's to none): the flow goes on
 *   until it is there before any other event counts, with trace only if the first is
 *   MODE.Exec's or PIP's and no other is queued behind it (a query fails while one is;
 *   MODE.TSX's is gone to without trace);
 * - while tracing is off, a PIP or MODE.TSX is an event at once, at its packet's time;
 *   while tracing, MODE.TSX binds to the FUP after it (gone to without trace, its time
 *   the MODE.TSX's), and an abort's FUP is then an asynchronous branch's too (FUP+TIP,
 *   FUP+TIP.PGD); a PIP binds to the next MOV CR3 (not modelled);
 * - return compression: a TNT bit for a return takes libipt's 64-entry stack.
 * Where the blocks end does not change the ranges (pt_flow cuts a range only where the
 * flow does not go on to the next instruction, or after a transfer), so each block here is
 * a run of instructions to the first branch, cached by address. */

#define CACHE_SIZE (1u << 14)	/* entries, direct-mapped */
#define BATCH 64		/* ranges given at once (ops->range) */
#define MAX_LINEAR 1024		/* instructions in one entry without a branch */
/* Instructions without a packet read: pt_flow's check (a loop of direct jumps, or an
 * image that does not match) fires at 100000 on one offset; give up well before. */
#define MAX_STEPS 50000

struct entry {
	uint64_t ip, target;
	uint32_t gen, last;	/* last: the last instruction's offset from ip */
	uint32_t ninsn;
	uint8_t kind, size, iclass;
	bool push;
};

/* What the packets say next, once the TNT bits read are used. */
enum next { N_TNT, N_TIP, N_EOS, N_PGE, N_PGD, N_ABR /* FUP+TIP */, N_ADIS /* FUP+TIP.PGD */,
	    N_TSX /* MODE.TSX+FUP */ };

#define GIVE_UP TC_PT_SKIM_GIVE_UP
#define STOP 1	/* the trace ended where the flow needed it */
#define JOINED 2	/* at the run's join (tc_pt_skim_run) */

/* libipt's time (pt_time.c: TSC, then TMA and MTC, CYC) and its CYC calibration (pt_tcal):
 * the same arithmetic, so that times are libipt's to the tick. */
struct ptime {
	uint64_t tsc, base, fc;
	uint32_t ctc, ctc_cyc, lost_cyc;
	bool have_tsc, have_tma, have_mtc;
};

struct tcal {
	uint64_t fcr, min_fcr, max_fcr, tsc, cyc_tsc, cyc_mtc;
	uint32_t ctc;
	bool have_mtc, check_skl168;
};

struct tc_pt_skim {
	struct tc_x86 *x86;
	uint32_t gen;

	/* per run */
	const struct tc_pt_skim_ops *ops;
	const struct pt_config *cfg;
	const uint8_t *buf, *p, *end;
	const uint8_t *p0;	/* the first PSB */
	uint64_t last_ip;	/* IP compression */
	bool have_ip;
	uint64_t tnt;		/* bits left, the next at bit 63 */
	unsigned ntnt;
	enum next nxt;
	bool eos_tip;		/* N_EOS: the buffer ends inside a TIP (see ahead_slow) */
	uint64_t nip, nfrom;	/* the next packet's IP; a FUP's */
	bool nsupp;		/* TIP.PGD without IP */
	bool synced, enabled;
	bool psb_pending;	/* a PSB+'s status events bound to psb_ip */
	bool psb_notrace;	/* libipt fails a query before psb_ip (see above) */
	bool psb_pip;		/* a PIP's among them: CR3 psb_cr3 */
	uint64_t psb_ip, psb_cr3;
	uint64_t psb_off;	/* where that PSB is in the buffer */
	uint64_t join;		/* tc_pt_skim_run's */
	bool sync_pip;		/* the first PSB+'s PIP: CR3 sync_cr3 */
	uint64_t sync_cr3;
	/* N_TSX: the MODE.TSX's time, and for an abort what follows its FUP (N_ABR, N_ADIS) */
	bool tsx_have, tsx_abort;
	uint64_t tsx_tsc;
	enum next tsx_then;
	uint64_t ip;		/* the flow's next instruction */
	unsigned long steps;	/* instructions since a packet was read */
	struct tc_pt_insn_stack stack;

	/* time (ops->time set): the query decoder's, as packets are read; qtsc: at the packet
	 * s->nxt (or the TNT bits) was read from; last: libipt's last_time (that of the
	 * packet its last query or event took), what pt_qry_time gives */
	struct ptime tm;
	struct tcal tcal;
	bool qhave, fresh;	/* fresh: no bit of the TNT bits taken yet */
	uint64_t qtsc;
	bool last_have;
	uint64_t last_tsc;
	bool psb_have;		/* the pending PSB+ status event's time */
	uint64_t psb_tsc;
	bool sync_have, sync_done;	/* the first PSB+'s time; the caller's sync made */
	uint64_t sync_tsc;
	bool told_have;		/* the time last told (ops->time) */
	uint64_t told_tsc;

	/* the range being made (pt_flow's on_block) */
	bool in_range, have_last;
	struct tc_pt_skim_range r;	/* its last instruction's end, address and class too */
	struct tc_pt_skim_stats st;
	/* the ranges made and not given yet: given before the time moves, and at the end */
	struct tc_pt_skim_range batch[BATCH];
	unsigned nbatch;

	struct entry e[CACHE_SIZE];
};

static const uint8_t psb_bytes[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
				       0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };

struct tc_pt_skim *tc_pt_skim_new(struct tc_x86 *x86)
{
	struct tc_pt_skim *s;

	if (!x86 || !(s = calloc(1, sizeof(*s))))
		return NULL;
	s->x86 = x86;
	s->gen = 1;
	return s;
}

void tc_pt_skim_free(struct tc_pt_skim *s)
{
	free(s);
}

void tc_pt_skim_forget(struct tc_pt_skim *s)
{
	if (!s)
		return;
	if (++s->gen == 0) {
		memset(s->e, 0, sizeof(s->e));
		s->gen = 1;
	}
}

/* ---- packets ---- */

static const uint8_t ip_bytes[8] = { 0, 2, 4, 6, 6, 0, 8, 0 };

/* Bytes p[lo..hi) as a little-endian number (payloads of IPs, TSC, PIP, long TNT). */
static inline uint64_t le(const uint8_t *p, int lo, int hi)
{
	uint64_t v = 0;

	while (hi-- > lo)
		v = v << 8 | p[hi];
	return v;
}

static inline __attribute__((always_inline)) void parse(const uint8_t *p, size_t n,
							 uint64_t *last_ip, bool *have_ip,
							 struct tc_pt_skim_pkt *o)
{
	uint8_t b = p[0];
	unsigned ipb, nb;
	uint64_t v, ip;

	o->kind = TC_PT_SKIM_BAD;
	o->size = 1;
	o->suppressed = false;
	o->truncated = false;
	if (b == 0) {
		o->kind = TC_PT_SKIM_PAD;
		return;
	}
	if (!(b & 1)) {
		if (b != 0x02) {
			/* TNT-8: the highest set bit of b >> 1 stops the bits, the first below it */
			unsigned pl = b >> 1;

			nb = 31 - (unsigned)__builtin_clz(pl);
			o->kind = TC_PT_SKIM_TNT;
			o->ntnt = nb;
			o->tnt = (uint64_t)(pl & ((1u << nb) - 1)) << (64 - nb);
			return;
		}
		if (n < 2) {
			o->truncated = true;
			return;
		}
		switch (p[1]) {
		case 0x82:
			if (n < sizeof(psb_bytes)) {
				o->truncated = !memcmp(p, psb_bytes, n);
				return;
			}
			if (memcmp(p, psb_bytes, sizeof(psb_bytes)))
				return;
			o->kind = TC_PT_SKIM_PSB;
			o->size = sizeof(psb_bytes);
			return;
		case 0x23:
			o->kind = TC_PT_SKIM_PSBEND;
			o->size = 2;
			return;
		case 0x73:	/* TMA: CTC 16 bits, a zero byte, FC 9 bits */
			if (n < 7) {
				o->truncated = true;
				return;
			}
			if (p[4] || (p[6] & 0xfe))
				return;	/* libipt: a bad packet */
			o->kind = TC_PT_SKIM_TMA;
			o->size = 7;
			o->value = (uint64_t)p[2] | (uint64_t)p[3] << 8;
			o->fc = (uint32_t)p[5] | (uint32_t)(p[6] & 1) << 8;
			return;
		case 0x43:	/* PIP: 6 bytes, NR in bit 0, CR3 bits 51:5 above it */
			if (n < 8) {
				o->truncated = true;
				return;
			}
			v = le(p, 2, 8);
			o->kind = TC_PT_SKIM_PIP;
			o->size = 8;
			o->mode = v & 1;
			o->value = v >> 1 << 5;
			return;
		case 0x03:	/* CBR */
			if (n < 4) {
				o->truncated = true;
				return;
			}
			o->kind = TC_PT_SKIM_CBR;
			o->size = 4;
			o->value = p[2];
			return;
		case 0xa3:
			if (n < 8) {
				o->truncated = true;
				return;
			}
			v = le(p, 2, 8);
			if (!v || !(nb = 63 - (unsigned)__builtin_clzll(v)))
				return;	/* no stop bit, or no bits: left to libipt */
			o->kind = TC_PT_SKIM_TNT;
			o->size = 8;
			o->ntnt = nb;
			o->tnt = (v & ((1ULL << nb) - 1)) << (64 - nb);
			return;
		default:
			return;
		}
	}
	if ((b & 3) == 3) {	/* CYC: 5 bits, then 7 a byte while the last bit says more */
		unsigned shl = 5;
		bool more = b & 4;
		size_t i = 1;

		v = b >> 3;
		while (more) {
			if (i >= n) {
				o->truncated = true;
				return;
			}
			more = p[i] & 1;
			v |= (uint64_t)(p[i] >> 1) << shl;
			i++;
			shl += 7;
			if (shl > 64)
				return;	/* libipt: a bad packet */
		}
		o->kind = TC_PT_SKIM_CYC;
		o->size = (unsigned)i;
		o->value = v;
		return;
	}
	if (b == 0x19) {	/* TSC: 7 bytes */
		if (n < 8) {
			o->truncated = true;
			return;
		}
		v = le(p, 1, 8);
		o->kind = TC_PT_SKIM_TSC;
		o->size = 8;
		o->value = v;
		return;
	}
	if (b == 0x59) {	/* MTC */
		if (n < 2) {
			o->truncated = true;
			return;
		}
		o->kind = TC_PT_SKIM_MTC;
		o->size = 2;
		o->value = p[1];
		return;
	}
	if (b == 0x99) {
		if (n < 2) {
			o->truncated = true;
			return;
		}
		/* the leaf in bits 7:5: 0 MODE.Exec, 1 MODE.TSX, others libipt's bad packet */
		if ((p[1] >> 5) > 1)
			return;
		o->kind = p[1] >> 5 ? TC_PT_SKIM_MODE_TSX : TC_PT_SKIM_MODE_EXEC;
		o->size = 2;
		o->mode = p[1];
		return;
	}
	switch (b & 0x1f) {
	case 0x0d: o->kind = TC_PT_SKIM_TIP; break;
	case 0x11: o->kind = TC_PT_SKIM_PGE; break;
	case 0x01: o->kind = TC_PT_SKIM_PGD; break;
	case 0x1d: o->kind = TC_PT_SKIM_FUP; break;
	default: return;
	}
	ipb = b >> 5;
	nb = ip_bytes[ipb];
	if ((ipb && !nb) || n < 1 + (size_t)nb) {
		o->truncated = ipb && nb;
		o->kind = TC_PT_SKIM_BAD;
		return;
	}
	v = le(p, 1, 1 + nb);
	o->size = 1 + nb;
	switch (ipb) {
	case 0:
		o->suppressed = true;
		o->ip = 0;
		return;
	case 1:
		ip = (*last_ip & ~0xffffULL) | v;
		break;
	case 2:
		ip = (*last_ip & ~0xffffffffULL) | v;
		break;
	case 3:
		ip = v & (1ULL << 47) ? v | ~0xffffffffffffULL : v;
		break;
	case 4:
		ip = (*last_ip & ~0xffffffffffffULL) | v;
		break;
	default:
		ip = v;
		break;
	}
	if ((ipb == 1 || ipb == 2 || ipb == 4) && !*have_ip) {
		o->kind = TC_PT_SKIM_BAD;	/* nothing to update: libipt's answer */
		return;
	}
	*last_ip = o->ip = ip;
	*have_ip = true;
}

void tc_pt_skim_packet(const uint8_t *p, size_t n, uint64_t *last_ip, bool *have_ip,
		       struct tc_pt_skim_pkt *o)
{
	parse(p, n, last_ip, have_ip, o);
}

/* ---- time, as libipt's query decoder keeps it ----
 * Each function returns 0 or GIVE_UP where libipt's would fail (its query or event then
 * fails too); a configuration without the CTC ratio fails only the sums that need it, which
 * libipt ignores (the state changed until then stays). */

#define BAD_CONFIG 1
#define FCR_SHIFT 8	/* libipt's fixed-point CYC-to-fast-counter ratio */

/* CTC ticks from last to now (one wrap of the CTC bits MTCs carry corrected). */
static int ctc_delta(const struct pt_config *c, uint32_t now, uint32_t last, uint32_t *d)
{
	if (now < last) {
		now += 1u << (c->mtc_freq + 8);
		if (now < last)
			return GIVE_UP;
	}
	*d = now - last;
	return 0;
}

/* CTC ticks to TSC (fast counter) ticks, by CPUID 0x15's ratio. */
static int ctc_to_fc(const struct pt_config *c, uint64_t ctc, uint64_t *fc)
{
	if (!c->cpuid_0x15_eax || !c->cpuid_0x15_ebx)
		return BAD_CONFIG;
	*fc = ctc * c->cpuid_0x15_ebx / c->cpuid_0x15_eax;
	return 0;
}

static void set_fcr(struct tcal *t, uint64_t fcr)
{
	t->fcr = fcr;
	if (fcr < t->min_fcr)
		t->min_fcr = fcr;
	if (fcr > t->max_fcr)
		t->max_fcr = fcr;
}

static void time_reset(struct tc_pt_skim *s)
{
	s->tm = (struct ptime){ 0 };
	s->tcal = (struct tcal){ .min_fcr = UINT64_MAX };
	s->qhave = s->last_have = s->psb_have = s->fresh = false;
}

static int on_tsc(struct tc_pt_skim *s, uint64_t tsc, bool header)
{
	struct tcal *t = &s->tcal;
	uint64_t last = t->tsc, cyc = t->cyc_tsc, now = tsc, d;

	t->tsc = tsc;
	t->cyc_tsc = 0;
	/* calibration from the cycles between two TSCs of PSB+s, unless MTCs give it */
	if (header && last && cyc && !t->have_mtc) {
		if (now < last) {
			now += 1ULL << 56;
			if (now < last)
				return GIVE_UP;
		}
		d = now - last;
		if (d >> (64 - FCR_SHIFT))
			return GIVE_UP;
		set_fcr(t, (d << FCR_SHIFT) / cyc);
	}
	s->tm = (struct ptime){ .have_tsc = true, .tsc = tsc, .base = tsc };
	return 0;
}

/* CBR in PSB+ (outside it is an event the skim leaves to libipt). */
static int on_cbr(struct tc_pt_skim *s, uint64_t ratio)
{
	if (!ratio)
		return GIVE_UP;
	if (s->cfg->nom_freq)
		set_fcr(&s->tcal, ((uint64_t)s->cfg->nom_freq << FCR_SHIFT) / ratio);
	return 0;
}

static int on_tma(struct tc_pt_skim *s, uint32_t ctc, uint32_t fc)
{
	struct ptime *m = &s->tm;
	unsigned hi = s->cfg->mtc_freq + 8u;

	if (!m->have_tsc || m->have_tma || m->have_mtc)
		return GIVE_UP;
	m->have_tma = true;
	m->base -= fc;
	m->fc += fc;
	if (hi <= 16)	/* the TMA has all the CTC bits an MTC has: it counts as one */
		m->have_mtc = true;
	m->ctc = m->ctc_cyc = ctc & ((1u << hi) - 1);
	return 0;
}

static int tcal_mtc(struct tc_pt_skim *s, uint32_t ctc)
{
	const struct pt_config *c = s->cfg;
	struct tcal *t = &s->tcal;
	uint32_t last = t->ctc, d;
	uint64_t cyc = t->cyc_mtc, fc, fcr;
	bool check = t->check_skl168;
	int rc;

	t->check_skl168 = false;
	if (!t->have_mtc) {
		t->cyc_mtc = 0;
		t->ctc = ctc;
		t->have_mtc = true;
		return 0;
	}
	if (!cyc)
		return 0;	/* the cycles of the next period count with these */
	t->cyc_mtc = 0;
	t->ctc = ctc;
	if (ctc_delta(c, ctc, last, &d))
		return GIVE_UP;
	if ((rc = ctc_to_fc(c, d, &fc)))
		return 0;	/* BAD_CONFIG: ignored */
	if (fc >> (64 - FCR_SHIFT))
		return GIVE_UP;
	fcr = (fc << FCR_SHIFT) / cyc;
	/* SKL168: the first MTC after a PSB does not calibrate if an MTC or a CYC wrap
	 * may have been lost */
	if (check) {
		if ((1u << c->mtc_freq) < d)
			return 0;
		if (c->mtc_freq < 10 && t->min_fcr <= t->max_fcr &&
		    ((t->fcr * (cyc + 0xf00)) >> FCR_SHIFT) < fc)
			return 0;
	}
	set_fcr(t, fcr);
	return 0;
}

static int on_mtc(struct tc_pt_skim *s, uint32_t payload)
{
	const struct pt_config *c = s->cfg;
	struct ptime *m = &s->tm;
	uint32_t ctc = payload << c->mtc_freq, last, d;
	bool had_mtc = m->have_mtc;
	uint64_t fc;

	if (tcal_mtc(s, ctc))
		return GIVE_UP;
	if (m->have_tsc && !m->have_tma)
		return 0;	/* MTCs between a TSC and its TMA do not count */
	last = m->ctc;
	if (m->fc || m->lost_cyc || !had_mtc)
		m->ctc_cyc = ctc;
	m->have_mtc = true;
	m->fc = 0;
	m->ctc = ctc;
	m->lost_cyc = 0;
	if (!had_mtc) {
		uint32_t lo = ctc & 0xffff, hi = ctc & ~0xffffu;

		if (!m->have_tma)
			return 0;	/* the first MTC only starts the count */
		if (last & ~0xffffu)
			return GIVE_UP;
		/* the TMA's CTC bits above its 16, estimated from this MTC's */
		if (lo < last) {
			hi -= 1u << 16;
			hi &= 0xffu << c->mtc_freq;
		}
		last |= hi;
	}
	if (ctc_delta(c, ctc, last, &d))
		return GIVE_UP;
	if (ctc_to_fc(c, d, &fc))
		return 0;
	m->tsc = m->base = m->base + fc;
	return 0;
}

static int on_cyc(struct tc_pt_skim *s, uint64_t cyc)
{
	struct tcal *t = &s->tcal;
	struct ptime *m = &s->tm;
	uint64_t fcr, fc;

	t->cyc_mtc += cyc;
	t->cyc_tsc += cyc;
	fcr = t->min_fcr <= t->max_fcr ? t->fcr : 0;
	if (!fcr) {
		m->lost_cyc++;
		return 0;
	}
	if (!m->fc && m->ctc != m->ctc_cyc) {
		/* the cycles since the MTC period the count began in: those before this
		 * period's MTC are in its time already */
		uint32_t d;
		uint64_t old;

		if (ctc_delta(s->cfg, m->ctc, m->ctc_cyc, &d))
			return GIVE_UP;
		if (ctc_to_fc(s->cfg, d, &fc))
			return 0;
		old = (fc << FCR_SHIFT) / fcr;
		cyc = cyc < old ? 0 : cyc - old;
	}
	m->fc += (cyc * fcr) >> FCR_SHIFT;
	m->tsc = m->base + m->fc;
	return 0;
}

/* A timing packet k (header: in PSB+); GIVE_UP where libipt fails, or its kind is not one. */
static int timing(struct tc_pt_skim *s, const struct tc_pt_skim_pkt *k, bool header)
{
	if (s->cfg->mtc_freq > 15)
		return GIVE_UP;	/* not a frequency IA32_RTIT_CTL can hold */
	switch (k->kind) {
	case TC_PT_SKIM_TSC:
		return on_tsc(s, k->value, header);
	case TC_PT_SKIM_MTC:
		return on_mtc(s, (uint32_t)k->value);
	case TC_PT_SKIM_TMA:
		return on_tma(s, (uint32_t)k->value, k->fc);
	case TC_PT_SKIM_CYC:
		/* SKD007: a 2-byte CYC that may be an OVF's first byte */
		if (s->cfg->errata.skd007 && k->size == 2 && (k->value & ~0x1fULL) == 0x20)
			return GIVE_UP;
		return on_cyc(s, k->value);
	default:
		return GIVE_UP;
	}
}

static inline bool is_timing(enum tc_pt_skim_kind k)
{
	return k == TC_PT_SKIM_TSC || k == TC_PT_SKIM_MTC || k == TC_PT_SKIM_TMA ||
	       k == TC_PT_SKIM_CYC;
}

/* The ranges made so far to the caller. */
static void give(struct tc_pt_skim *s)
{
	if (s->nbatch) {
		s->ops->range(s->ops->ctx, s->batch, s->nbatch);
		s->nbatch = 0;
	}
}

/* The flow's time moves to that of a query or event (pt_flow's set_time): the ranges before
 * have the time before. */
static inline int tell_time(struct tc_pt_skim *s, bool have, uint64_t tsc)
{
	if (!have || (s->told_have && s->told_tsc == tsc))
		return 0;
	s->told_have = true;
	s->told_tsc = tsc;
	give(s);
	return s->ops->time ? s->ops->time(s->ops->ctx, tsc) : GIVE_UP;
}

/* libipt's query or event took the packet s->nxt was read from: its time is pt_qry_time's. */
static inline void took(struct tc_pt_skim *s)
{
	s->last_have = s->qhave;
	s->last_tsc = s->qtsc;
}

/* A PIP's event: the ranges before are of the space before. */
static int paging(struct tc_pt_skim *s, uint64_t cr3)
{
	give(s);
	return s->ops->paging ? s->ops->paging(s->ops->ctx, cr3) : GIVE_UP;
}

/* ---- code ---- */

/* One 64-bit instruction at ip (as pt_walk.c decodes it); false if it cannot be read or
 * decoded, or is a mov to CR3 (an event may bind to it). */
static bool decode(struct tc_pt_skim *s, uint64_t ip, struct tc_pt_insn *i)
{
	uint8_t b[16];
	size_t n = s->ops->read(s->ops->ctx, ip, b, sizeof(b));
	struct tc_x86_insn k;

	if (!n)
		return false;
	k = tc_x86_classify(s->x86, b, n, true);
	if (!k.len || k.len > n)
		return false;
	/* what libipt may class otherwise than lib/isa/x86.c: int1 is a far call; the VMX,
	 * SVM and UIRET forms of group 7 (0F 01 C1-C4, D4, D8-DF, EC) left to libipt (not
	 * XGETBV, RDTSCP, ...) */
	if (k.kind == TC_X86_OTHER && b[k.opcode] == 0xf1)
		k.kind = TC_X86_INT;
	if (k.kind == TC_X86_OTHER && k.opcode + 2 < n && b[k.opcode] == 0x0f &&
	    b[k.opcode + 1] == 0x01) {
		uint8_t m = b[k.opcode + 2];

		if ((m >= 0xc1 && m <= 0xc4) || m == 0xd4 || (m >= 0xd8 && m <= 0xdf) ||
		    m == 0xec)
			return false;
	}
	return tc_pt_insn_decode(b, n, k, ip, i);
}

/* The run of instructions from ip to its first branch; NULL if its first instruction
 * cannot be decoded. */
static const struct entry *lookup(struct tc_pt_skim *s, uint64_t ip)
{
	struct entry *e = &s->e[(ip >> 1 ^ ip >> 15) & (CACHE_SIZE - 1)];
	struct tc_pt_insn i;
	uint64_t at = ip;
	unsigned n = 0;

	if (e->gen == s->gen && e->ip == ip)
		return e;
	e->gen = 0;
	for (;;) {
		if (!decode(s, at, &i)) {
			if (!n)
				return NULL;
			break;	/* the next run starts there, and fails */
		}
		n++;
		e->last = (uint32_t)(at - ip);
		e->size = i.size;
		e->kind = i.kind;
		e->iclass = i.iclass;
		e->target = i.target;
		e->push = i.push;
		if (i.kind != TC_PT_INSN_LINEAR || n == MAX_LINEAR)
			break;
		at += i.size;
	}
	e->ip = ip;
	e->ninsn = n;
	e->gen = s->gen;
	return e;
}

/* ---- the flow (pt_flow.c's on_block, flow_to, flush_range, flow_stop) ---- */

static inline void flush(struct tc_pt_skim *s)
{
	s->r.offset = (uint64_t)(s->p - s->buf);
	s->in_range = false;
	s->batch[s->nbatch] = s->r;
	if (++s->nbatch == BATCH)
		give(s);
}

static inline void flow_to(struct tc_pt_skim *s, uint64_t next)
{
	if (!s->have_last)
		return;
	if (tc_pt_insn_transfer(s->r.last_class) ||
	    (s->r.last_class != ptic_other && next != s->r.end))
		s->st.branches++;
	s->have_last = false;
}

static void flow_stop(struct tc_pt_skim *s)
{
	if (s->in_range)
		flush(s);
	if (s->have_last)
		s->st.branches++;
	s->have_last = false;
}

/* once per block: inline */
static inline __attribute__((always_inline)) int on_block(struct tc_pt_skim *s, uint64_t ip,
							   uint32_t n, uint64_t last,
							   unsigned size, unsigned iclass)
{
	s->st.insns += n;
	if (s->in_range && (ip != s->r.end || tc_pt_insn_transfer(s->r.last_class))) {
		/* pt_flow takes pt_qry_time's where a range ends */
		if (s->last_have && tell_time(s, true, s->last_tsc))
			return GIVE_UP;
		flush(s);
	}
	flow_to(s, ip);
	if (!s->in_range) {
		s->in_range = true;
		s->r.start = ip;
		s->r.insns = 0;
	}
	s->r.end = last + size;
	s->r.insns += n;
	s->have_last = true;
	s->r.last_ip = last;
	s->r.last_class = (enum pt_insn_class)iclass;
	return 0;
}

/* ---- packets as the flow needs them ---- */

/* A PSB+ (s->p at its PSB): the state it sets, and the event libipt makes of it. dry: its
 * packets only read (the time too: the caller keeps its own). */
static int psb_plus(struct tc_pt_skim *s, bool dry)
{
	struct tc_pt_skim_pkt k;
	bool fup = false, mode = false, cbr = false, pip = false;
	bool trace = false;	/* its first event is MODE.Exec's or PIP's (gone to with trace) */
	unsigned nev = 0;	/* its status events */
	uint64_t fip = 0, cr3 = 0;
	const uint64_t at = (uint64_t)(s->p - s->buf);

	s->p += sizeof(psb_bytes);
	s->last_ip = 0;
	s->have_ip = false;
	if (s->cfg->errata.skl168)
		s->tcal.check_skl168 = true;
	for (;;) {
		if (s->p >= s->end)
			return GIVE_UP;
		parse(s->p, (size_t)(s->end - s->p), &s->last_ip, &s->have_ip, &k);
		s->p += k.size;
		switch (k.kind) {
		case TC_PT_SKIM_PAD:
			continue;
		case TC_PT_SKIM_MODE_EXEC:
			if (k.mode != 0x01)	/* 64-bit (CS.L), nothing else */
				return GIVE_UP;
			trace |= !nev++;
			mode = true;
			continue;
		case TC_PT_SKIM_MODE_TSX:
			/* a status (the transaction's state: pt_flow makes nothing of it); one
			 * that says aborted left to libipt (BDM64) */
			if (k.mode & 2)
				return GIVE_UP;
			nev++;
			continue;
		case TC_PT_SKIM_PIP:
			if (pip)
				return GIVE_UP;
			trace |= !nev++;
			pip = true;
			cr3 = k.value;
			continue;
		case TC_PT_SKIM_FUP:
			if (k.suppressed || fup)
				return GIVE_UP;
			fup = true;
			fip = k.ip;
			continue;
		case TC_PT_SKIM_TSC:
		case TC_PT_SKIM_MTC:
		case TC_PT_SKIM_TMA:
		case TC_PT_SKIM_CYC:
			if (timing(s, &k, true))
				return GIVE_UP;
			continue;
		case TC_PT_SKIM_CBR:
			/* its event (a status update without IP) after one with an IP only: it
			 * then comes where that one binds, with the same time */
			if (!nev || cbr || on_cbr(s, k.value))
				return GIVE_UP;
			cbr = true;
			nev++;
			continue;
		case TC_PT_SKIM_PSBEND:
			break;
		default:
			return GIVE_UP;
		}
		break;
	}
	if (dry)
		return 0;
	/* the time of the PSB+'s status events */
	s->psb_have = s->tm.have_tsc;
	s->psb_tsc = s->tm.tsc;
	if (!s->synced) {
		if (!mode)
			return GIVE_UP;	/* no mode yet: libipt cannot decode */
		s->synced = true;
		s->enabled = fup;
		s->ip = fip;
		/* its events' time: tc_pt_skim_run, after the caller's sync */
		s->sync_have = s->psb_have;
		s->sync_tsc = s->psb_tsc;
		s->sync_pip = pip;
		s->sync_cr3 = cr3;
	} else if (s->enabled) {
		if (!fup || (nev && s->psb_pending))
			return GIVE_UP;
		if (nev) {
			s->psb_pending = true;
			s->psb_notrace = nev > 1 || !trace;
			s->psb_pip = pip;
			s->psb_cr3 = cr3;
			s->psb_ip = fip;
			s->psb_off = at;
			/* libipt fetches the event now (the TNT bits are used up): its time is
			 * pt_qry_time's on; pt_flow's at the event, where it binds (slow) */
			s->last_have = s->psb_have;
			s->last_tsc = s->psb_tsc;
		}
	} else if (fup) {
		return GIVE_UP;	/* libipt: tracing enabled by a status update */
	} else if (nev) {
		/* while tracing is off its events come at once (not before the caller's sync) */
		if (!s->sync_done)
			return GIVE_UP;
		s->last_have = s->psb_have;
		s->last_tsc = s->psb_tsc;
		if (tell_time(s, s->psb_have, s->psb_tsc) || (pip && paging(s, cr3)))
			return GIVE_UP;
	}
	return 0;
}

/* libipt's read-ahead decodes a PSB+ (its header's packets, time) at once: one that fails
 * there fails the query before. p: its PSB. */
static int psb_dry(struct tc_pt_skim *s, const uint8_t *p)
{
	const uint8_t *at = s->p;
	uint64_t last_ip = s->last_ip;
	bool have_ip = s->have_ip;
	struct ptime tm = s->tm;
	struct tcal tcal = s->tcal;
	int rc;

	s->p = p;
	rc = psb_plus(s, true);
	s->p = at;
	s->last_ip = last_ip;
	s->have_ip = have_ip;
	s->tm = tm;
	s->tcal = tcal;
	return rc;
}

/* libipt reads on past the packet the next query takes: a packet it cannot decode there
 * fails that query already. Give up before the flow takes it (without IP compression's
 * state changed: the packet is read again). peek() below takes the common packets. */
__attribute__((noinline)) static int peek_slow(struct tc_pt_skim *s)
{
	const uint8_t *p;
	uint64_t last_ip = s->last_ip;
	bool have_ip = s->have_ip;
	struct tc_pt_skim_pkt k;

	uint8_t b;
	unsigned ipb;

again:
	p = s->p;
	while (p < s->end && !*p)
		p++;
	if (p >= s->end)
		return 0;
	/* the common packets first, as parse() takes them */
	b = *p;
	if (!(b & 1) && b != 0x02)
		return 0;	/* TNT-8 */
	if ((b & 0x1f) == 0x0d) {	/* TIP */
		ipb = b >> 5;
		if (ipb && ip_bytes[ipb] && (size_t)(s->end - p) < 1 + (size_t)ip_bytes[ipb])
			return s->enabled ? 0 : GIVE_UP;	/* the buffer ends in it: ahead() */
		if ((ipb && !ip_bytes[ipb]) || (size_t)(s->end - p) < 1 + (size_t)ip_bytes[ipb] ||
		    (!have_ip && (ipb == 1 || ipb == 2 || ipb == 4)))
			return GIVE_UP;
		return 0;
	}
	parse(p, (size_t)(s->end - p), &last_ip, &have_ip, &k);
	if (k.truncated && s->enabled)
		return 0;	/* the buffer ends in it: ahead() */
	if (is_timing(k.kind)) {
		/* libipt's read-ahead applies it (a failure fails the query): so here */
		if (timing(s, &k, false))
			return GIVE_UP;
		s->p = p + k.size;
		goto again;
	}
	switch (k.kind) {
	case TC_PT_SKIM_TNT:
	case TC_PT_SKIM_TIP:
	case TC_PT_SKIM_PGE:
	case TC_PT_SKIM_PGD:
	case TC_PT_SKIM_FUP:
	case TC_PT_SKIM_MODE_TSX:	/* events: libipt's read-ahead stops there */
	case TC_PT_SKIM_PIP:
		return 0;
	case TC_PT_SKIM_PSB:
		return psb_dry(s, p);
	default:
		return GIVE_UP;
	}
}

/* The common packets next (a TNT-8, a TIP with a whole IP to update) as peek_slow takes
 * them, inline: once per packet. */
static inline int peek(struct tc_pt_skim *s)
{
	const uint8_t *p = s->p;

	if (p < s->end) {
		uint8_t b = *p;
		unsigned ipb = b >> 5;

		if (!(b & 1) && b > 0x02)
			return 0;	/* TNT-8 */
		if ((b & 0x1f) == 0x0d && ip_bytes[ipb] && (size_t)(s->end - p) > ip_bytes[ipb] &&
		    (s->have_ip || ipb == 3 || ipb == 6))
			return 0;	/* TIP */
	}
	return peek_slow(s);
}

/* Do the n bytes at p (a packet cut short) begin a packet a query takes: a TIP or a
 * TNT-64? Or a lone extended opcode byte: libipt's read-ahead cannot tell which packet
 * it is (its fetch says -pte_eos, as at the buffer's end). */
static bool query_packet(const uint8_t *p, size_t n)
{
	return (p[0] & 0x1f) == 0x0d || (n >= 2 && p[0] == 0x02 && p[1] == 0xa3) ||
	       (n == 1 && p[0] == 0x02);
}

/* MODE.TSX k at s->p while tracing: its event binds to the FUP after it (timing packets
 * between applied); an abort's FUP is then an asynchronous branch's too, to the TIP or
 * TIP.PGD right after it. s->nxt N_TSX, s->p past what it took. */
static int tsx_fup(struct tc_pt_skim *s, const struct tc_pt_skim_pkt *m)
{
	struct tc_pt_skim_pkt k;

	s->tsx_have = s->qhave;	/* the event's time: the MODE.TSX's */
	s->tsx_tsc = s->qtsc;
	s->tsx_abort = m->mode & 2;
	if (s->tsx_abort && s->cfg->errata.bdm64)
		return GIVE_UP;
	s->p += m->size;
	for (;;) {
		if (s->p >= s->end)
			return GIVE_UP;
		parse(s->p, (size_t)(s->end - s->p), &s->last_ip, &s->have_ip, &k);
		if (k.kind == TC_PT_SKIM_PAD) {
			s->p++;
			continue;
		}
		if (!is_timing(k.kind))
			break;
		if (timing(s, &k, false))
			return GIVE_UP;
		s->p += k.size;
	}
	if (k.kind != TC_PT_SKIM_FUP || k.suppressed)
		return GIVE_UP;
	/* libipt's last time: the FUP's, where the event was made */
	s->qhave = s->tm.have_tsc;
	s->qtsc = s->tm.tsc;
	s->nfrom = k.ip;
	s->p += k.size;
	s->nxt = N_TSX;
	if (s->tsx_abort) {
		while (s->p < s->end && !*s->p)
			s->p++;
		if (s->p >= s->end)
			return GIVE_UP;
		parse(s->p, (size_t)(s->end - s->p), &s->last_ip, &s->have_ip, &k);
		if (k.kind == TC_PT_SKIM_TIP && !k.suppressed) {
			s->tsx_then = N_ABR;
			s->nip = k.ip;
		} else if (k.kind == TC_PT_SKIM_PGD) {
			s->tsx_then = N_ADIS;
			s->nsupp = k.suppressed;
		} else {
			return GIVE_UP;
		}
		s->p += k.size;
	}
	return peek(s);
}

/* To the next packet the flow needs (libipt's read-ahead); s->nxt says what it is.
 * ahead() below takes the common packets. */
__attribute__((noinline)) static int ahead_slow(struct tc_pt_skim *s)
{
	struct tc_pt_skim_pkt k;

	s->steps = 0;
	for (;;) {
		if (s->p >= s->end) {
			s->eos_tip = false;
			s->nxt = N_EOS;
			return 0;
		}
		if (!(*s->p & 1) && *s->p > 0x02) {	/* TNT-8, as parse() takes it */
			unsigned pl = *s->p >> 1, nb = 31 - (unsigned)__builtin_clz(pl);

			s->tnt = (uint64_t)(pl & ((1u << nb) - 1)) << (64 - nb);
			s->ntnt = nb;
			s->nxt = N_TNT;
			s->fresh = true;
			s->qhave = s->tm.have_tsc;
			s->qtsc = s->tm.tsc;
			s->p++;
			return peek(s);
		}
		parse(s->p, (size_t)(s->end - s->p), &s->last_ip, &s->have_ip, &k);
		/* the time at the packet (a query's, an event's) */
		s->qhave = s->tm.have_tsc;
		s->qtsc = s->tm.tsc;
		switch (k.kind) {
		case TC_PT_SKIM_PAD:
			s->p++;
			continue;
		case TC_PT_SKIM_TSC:
		case TC_PT_SKIM_MTC:
		case TC_PT_SKIM_TMA:
		case TC_PT_SKIM_CYC:
			if (timing(s, &k, false))
				return GIVE_UP;
			s->p += k.size;
			continue;
		case TC_PT_SKIM_PSB:
			if (psb_plus(s, false))
				return GIVE_UP;
			continue;
		case TC_PT_SKIM_MODE_TSX:
		case TC_PT_SKIM_PIP:
			/* while tracing MODE.TSX binds to the FUP after it, a PIP to the next MOV
			 * CR3 (or, after a FUP, to its TIP: left to libipt); while tracing is off
			 * each is an event at once (not before the caller's sync) */
			if (s->enabled && k.kind == TC_PT_SKIM_MODE_TSX)
				return tsx_fup(s, &k);
			if (s->enabled || !s->sync_done)
				return GIVE_UP;
			took(s);
			if (tell_time(s, s->qhave, s->qtsc) ||
			    (k.kind == TC_PT_SKIM_PIP && paging(s, k.value)))
				return GIVE_UP;
			s->p += k.size;
			continue;
		case TC_PT_SKIM_TNT:
			s->tnt = k.tnt;
			s->ntnt = k.ntnt;
			s->nxt = N_TNT;
			s->fresh = true;
			break;
		case TC_PT_SKIM_TIP:
		case TC_PT_SKIM_PGE:
			if (k.suppressed)
				return GIVE_UP;
			s->nip = k.ip;
			s->nxt = k.kind == TC_PT_SKIM_TIP ? N_TIP : N_PGE;
			break;
		case TC_PT_SKIM_PGD:
			s->nip = k.ip;
			s->nsupp = k.suppressed;
			s->nxt = N_PGD;
			break;
		case TC_PT_SKIM_FUP:
			if (k.suppressed)
				return GIVE_UP;
			s->nfrom = k.ip;
			s->p += k.size;
			while (s->p < s->end && !*s->p)
				s->p++;
			if (s->p >= s->end)
				return GIVE_UP;
			tc_pt_skim_packet(s->p, (size_t)(s->end - s->p), &s->last_ip, &s->have_ip,
					  &k);
			if (k.kind == TC_PT_SKIM_TIP && !k.suppressed) {
				s->nxt = N_ABR;
				s->nip = k.ip;
			} else if (k.kind == TC_PT_SKIM_PGD) {
				s->nxt = N_ADIS;
				s->nsupp = k.suppressed;
			} else {
				return GIVE_UP;
			}
			break;
		default:
			/* The buffer ends inside this packet: while tracing, the flow ends as at
			 * the buffer's end (libipt's packet decoder says -pte_eos for both; as
			 * fuzz_pt_skim checks on traces cut anywhere). Not while tracing is off:
			 * there libipt's sync and event binding read it otherwise. Only a packet
			 * a query takes (TIP, TNT-64): an event's (TIP.PGD, FUP, MODE...) is
			 * fetched as soon as it is read ahead, so libipt fails there, before the
			 * instructions up to where it binds. A TIP's opcode is fetched whole,
			 * though: a conditional branch's query fails there (a TIP where a TNT
			 * was due: eos_tip). */
			if (k.truncated && s->enabled && query_packet(s->p, (size_t)(s->end - s->p))) {
				s->eos_tip = (*s->p & 0x1f) == 0x0d;
				s->p = s->end;
				s->nxt = N_EOS;
				return 0;
			}
			return GIVE_UP;
		}
		s->p += k.size;
		return peek(s);
	}
}

/* The IP bytes of an IP packet (nb: 2, 4, 6 or 8) at p + 1, little-endian. */
static inline uint64_t ip_payload(const uint8_t *p, unsigned nb)
{
	uint64_t v = (uint64_t)p[1] | (uint64_t)p[2] << 8;

	if (nb > 2)
		v |= (uint64_t)p[3] << 16 | (uint64_t)p[4] << 24;
	if (nb > 4)
		v |= (uint64_t)p[5] << 32 | (uint64_t)p[6] << 40;
	if (nb > 6)
		v |= (uint64_t)p[7] << 48 | (uint64_t)p[8] << 56;
	return v;
}

/* ahead_slow's TNT-8 and its TIP with a whole IP to update (what parse() makes of it),
 * inline: once per packet. */
static inline int ahead(struct tc_pt_skim *s)
{
	const uint8_t *p = s->p;
	uint64_t v, ip;

	if (p < s->end) {
		uint8_t b = *p;
		unsigned ipb = b >> 5, nb = ip_bytes[ipb];

		if (!(b & 1) && b > 0x02) {
			unsigned pl = b >> 1, n = 31 - (unsigned)__builtin_clz(pl);

			s->steps = 0;
			s->tnt = (uint64_t)(pl & ((1u << n) - 1)) << (64 - n);
			s->ntnt = n;
			s->nxt = N_TNT;
			s->fresh = true;
			s->qhave = s->tm.have_tsc;
			s->qtsc = s->tm.tsc;
			s->p = p + 1;
			return peek(s);
		}
		if ((b & 0x1f) == 0x0d && nb && (size_t)(s->end - p) > nb &&
		    (s->have_ip || ipb == 3 || ipb == 6)) {
			v = ip_payload(p, nb);
			switch (ipb) {
			case 1: ip = (s->last_ip & ~0xffffULL) | v; break;
			case 2: ip = (s->last_ip & ~0xffffffffULL) | v; break;
			case 3: ip = v & (1ULL << 47) ? v | ~0xffffffffffffULL : v; break;
			case 4: ip = (s->last_ip & ~0xffffffffffffULL) | v; break;
			default: ip = v; break;
			}
			s->steps = 0;
			s->last_ip = s->nip = ip;
			s->have_ip = true;
			s->nxt = N_TIP;
			s->qhave = s->tm.have_tsc;
			s->qtsc = s->tm.tsc;
			s->p = p + 1 + nb;
			return peek(s);
		}
	}
	return ahead_slow(s);
}

/* The trace for the branch that ends a block (kind; its target if direct, fall: the next
 * instruction): 0, STOP where the trace ended, or GIVE_UP. */
static inline int query(struct tc_pt_skim *s, unsigned kind, uint64_t target, uint64_t fall)
{
	unsigned taken;

	switch (kind) {
	case TC_PT_INSN_COND:
		if (!s->ntnt)
			return s->nxt == N_EOS && !s->eos_tip ? STOP : GIVE_UP;
		if (s->fresh) {	/* libipt takes the TNT packet at its first bit */
			s->fresh = false;
			took(s);
		}
		taken = (unsigned)(s->tnt >> 63);
		s->tnt <<= 1;
		s->ip = taken ? target : fall;
		return --s->ntnt ? 0 : ahead(s);
	case TC_PT_INSN_RET:
		if (s->ntnt) {
			if (s->fresh) {
				s->fresh = false;
				took(s);
			}
			taken = (unsigned)(s->tnt >> 63);
			s->tnt <<= 1;
			if (!taken || !tc_pt_insn_pop(&s->stack, &s->ip))
				return GIVE_UP;
			return --s->ntnt ? 0 : ahead(s);
		}
		/* fall through */
	default:
		if (s->ntnt)
			return GIVE_UP;	/* libipt: a TIP asked for with TNT bits left */
		if (s->nxt != N_TIP)
			return s->nxt == N_EOS ? STOP : GIVE_UP;
		took(s);
		s->ip = s->nip;
		return ahead(s);
	}
}

/* One instruction of the flow (while an event waits for an IP). mode: 0 with trace
 * (the status event of a PSB+), 1 to stop at an instruction that needs trace (*stopped
 * set: TIP.PGD), 2 to give up there (FUP; a PSB+ with CBR). */
static int one(struct tc_pt_skim *s, int mode, bool *stopped)
{
	struct tc_pt_insn i;
	uint64_t ip = s->ip, fall;

	if (!decode(s, ip, &i) || ++s->steps > MAX_STEPS)
		return GIVE_UP;
	fall = ip + i.size;
	switch (i.kind) {
	case TC_PT_INSN_LINEAR:
		if (on_block(s, ip, 1, ip, i.size, i.iclass))
			return GIVE_UP;
		s->ip = fall;
		return 0;
	case TC_PT_INSN_CALL:
		if (on_block(s, ip, 1, ip, i.size, i.iclass))
			return GIVE_UP;
		if (i.push)
			tc_pt_insn_push(&s->stack, fall);
		s->ip = i.target;
		return 0;
	case TC_PT_INSN_JUMP:
		if (on_block(s, ip, 1, ip, i.size, i.iclass))
			return GIVE_UP;
		s->ip = i.target;
		return 0;
	default:
		if (mode == 2)
			return GIVE_UP;
		if (on_block(s, ip, 1, ip, i.size, i.iclass))
			return GIVE_UP;
		if (i.kind == TC_PT_INSN_ICALL)
			tc_pt_insn_push(&s->stack, fall);
		if (mode == 1) {
			*stopped = true;
			return 0;
		}
		return query(s, i.kind, i.target, fall);
	}
}

/* An event waits (a PSB+'s status, TIP.PGD, FUP+TIP, FUP+TIP.PGD): the flow to where it
 * binds, then the event as pt_flow's on_event makes it. */
static int slow(struct tc_pt_skim *s)
{
	bool stopped = false;
	uint64_t at;
	int rc;

	if (s->psb_pending) {
		if (s->ip == s->psb_ip) {
			if (s->psb_off >= s->join)
				return JOINED;	/* the flow at its IP: where a decode from it starts */
			s->psb_pending = false;
			if (tell_time(s, s->psb_have, s->psb_tsc))
				return GIVE_UP;
			return s->psb_pip ? paging(s, s->psb_cr3) : 0;
		}
		/* libipt fetches the events one at a time: with another still queued, the
		 * flow to the first's IP fails its first query (an event pending) */
		return one(s, s->psb_notrace ? 2 : 0, &stopped);
	}
	/* libipt fetches the event before the flow goes to where it binds */
	took(s);
	switch (s->nxt) {
	case N_PGD:
		if (s->nsupp && s->cfg->addr_filter.config.addr_cfg && s->cfg->errata.skl014)
			return GIVE_UP;
		while (s->nsupp || s->ip != s->nip) {
			if ((rc = one(s, 1, &stopped)))
				return rc;
			if (stopped)
				break;
		}
		if (tell_time(s, s->qhave, s->qtsc))
			return GIVE_UP;
		if (s->in_range)
			flush(s);
		if (s->have_last)
			s->st.branches++;
		s->have_last = false;
		s->enabled = false;
		return ahead(s);
	case N_ABR:
	case N_ADIS:
		if (s->nxt == N_ADIS && s->cfg->errata.skd022)
			return GIVE_UP;
		at = s->nfrom;
		while (s->ip != at)
			if ((rc = one(s, 2, &stopped)))
				return rc;
		if (tell_time(s, s->qhave, s->qtsc))
			return GIVE_UP;
		if (s->in_range)
			flush(s);
		flow_to(s, at);
		s->st.branches++;
		if (s->nxt == N_ABR)
			s->ip = s->nip;
		else
			s->enabled = false;
		return ahead(s);
	case N_TSX:
		while (s->ip != s->nfrom)
			if ((rc = one(s, 2, &stopped)))
				return rc;
		if (tell_time(s, s->tsx_have, s->tsx_tsc))
			return GIVE_UP;
		if (!s->tsx_abort)
			return ahead(s);
		/* the FUP again: the asynchronous branch's, bound here at once */
		s->nxt = s->tsx_then;
		return slow(s);
	default:
		return GIVE_UP;	/* TIP.PGE while tracing */
	}
}

static int run(struct tc_pt_skim *s, const struct pt_config *cfg, const uint8_t *buf,
	       size_t len, uint64_t join, struct tc_pt_skim_carry *c,
	       const struct tc_pt_skim_ops *ops, struct tc_pt_skim_stats *st)
{
	const struct entry *e;
	uint64_t last, fall;
	int rc = 0;

	const uint8_t *psb = memmem(buf, len, psb_bytes, sizeof(psb_bytes));

	/* libipt synchronises on the first PSB, and on a longer run of its bytes on where the
	 * run starts: left to it */
	if (!psb)
		return TC_PT_SKIM_NO_PSB;
	if (psb - buf >= 2 && psb[-2] == 0x02 && psb[-1] == 0x82)
		return GIVE_UP;
	s->ops = ops;
	s->cfg = cfg;
	s->buf = buf;
	s->p = s->p0 = psb;
	s->end = buf + len;
	s->last_ip = 0;
	s->have_ip = false;
	s->tnt = 0;
	s->ntnt = 0;
	s->synced = s->enabled = s->psb_pending = false;
	s->stack.top = s->stack.bottom = 0;
	s->in_range = c->in_range;
	s->have_last = c->have_last;
	s->r = c->r;
	s->join = join;
	s->nbatch = 0;
	s->st = (struct tc_pt_skim_stats){ 0 };
	time_reset(s);
	s->told_have = s->sync_done = false;
	/* libipt's sync reads on past the PSB+ too: the caller's sync once that went well */
	if (ahead(s) || !s->synced)
		return GIVE_UP;
	ops->sync(ops->ctx, (uint64_t)(s->p0 - s->buf));
	s->sync_done = true;
	if ((uint64_t)(s->p0 - s->buf) >= join) {
		/* at the join already: the decode that goes on from it takes its events (as
		 * the exact path, which fetches them after its sync) */
		*c = (struct tc_pt_skim_carry){ s->in_range, s->have_last, s->r };
		*st = s->st;
		return TC_PT_SKIM_JOINED;
	}
	/* the first PSB+'s status events come at once */
	s->last_have = s->sync_have;
	s->last_tsc = s->sync_tsc;
	if (tell_time(s, s->sync_have, s->sync_tsc) || (s->sync_pip && paging(s, s->sync_cr3)))
		return GIVE_UP;
	for (;;) {
		if (!s->enabled) {
			if (s->nxt == N_EOS)
				break;
			if ((uint64_t)(s->p - s->buf) > join) {	/* past it with trace off */
				rc = JOINED;
				break;
			}
			if (s->nxt != N_PGE || s->ntnt)
				return GIVE_UP;
			took(s);
			if (tell_time(s, s->qhave, s->qtsc))
				return GIVE_UP;
			flow_stop(s);
			s->st.branches++;
			s->enabled = true;
			s->ip = s->nip;
			if (ahead(s))
				return GIVE_UP;
			continue;
		}
		if (s->psb_pending || (!s->ntnt && s->nxt >= N_PGE)) {
			rc = slow(s);
		} else {
			if (!(e = lookup(s, s->ip)) || (s->steps += e->ninsn) > MAX_STEPS)
				return GIVE_UP;
			last = e->ip + e->last;
			fall = last + e->size;
			if (on_block(s, s->ip, e->ninsn, last, e->size, e->iclass))
				return GIVE_UP;
			switch (e->kind) {
			case TC_PT_INSN_LINEAR:
				s->ip = fall;
				continue;
			case TC_PT_INSN_CALL:
				if (e->push)
					tc_pt_insn_push(&s->stack, fall);
				s->ip = e->target;
				continue;
			case TC_PT_INSN_JUMP:
				s->ip = e->target;
				continue;
			case TC_PT_INSN_ICALL:
				tc_pt_insn_push(&s->stack, fall);
				break;
			default:
				break;
			}
			rc = query(s, e->kind, e->target, fall);
		}
		if (rc == STOP || rc == JOINED)
			break;
		if (rc)
			return GIVE_UP;
	}
	if (rc != JOINED)
		flow_stop(s);
	c->in_range = s->in_range;
	c->have_last = s->have_last;
	c->r = s->r;
	*st = s->st;
	return rc == JOINED ? TC_PT_SKIM_JOINED : 0;
}

int tc_pt_skim_run(struct tc_pt_skim *s, const struct pt_config *cfg, const uint8_t *buf,
		   size_t len, uint64_t join, struct tc_pt_skim_carry *c,
		   const struct tc_pt_skim_ops *ops, struct tc_pt_skim_stats *st)
{
	int rc = run(s, cfg, buf, len, join, c, ops, st);

	give(s);	/* the ranges made, also those before a give-up (the exact path's) */
	return rc;
}

int tc_pt_skim_time_span(const struct pt_config *cfg, const uint8_t *buf, size_t len,
			 uint64_t *lo, uint64_t *hi, unsigned *mtcs)
{
	struct tc_pt_skim *s = calloc(1, sizeof(*s));	/* its time alone: pages untouched */
	const uint8_t *p = buf, *end = buf + len;
	struct tc_pt_skim_pkt k;
	/* what the first PSB+ may hold, as libipt takes it to synchronise */
	const unsigned header = 1u << TC_PT_SKIM_PAD | 1u << TC_PT_SKIM_PSB |
		1u << TC_PT_SKIM_PSBEND | 1u << TC_PT_SKIM_TSC | 1u << TC_PT_SKIM_TMA |
		1u << TC_PT_SKIM_CBR | 1u << TC_PT_SKIM_MODE_EXEC | 1u << TC_PT_SKIM_MODE_TSX |
		1u << TC_PT_SKIM_PIP | 1u << TC_PT_SKIM_FUP;
	uint64_t ip = 0;
	bool have_ip, synced = false;
	unsigned nmtc = 0;
	int rc = 0;

	if (!s)
		return -1;
	s->cfg = cfg;
	time_reset(s);
	while (p < end && !rc) {
		have_ip = true;		/* IPs do not matter here */
		parse(p, (size_t)(end - p), &ip, &have_ip, &k);
		if (k.kind == TC_PT_SKIM_BAD) {
			/* a packet cut by the buffer's end: libipt's last query there fails;
			 * inside the first PSB+ it does not synchronise */
			rc = k.truncated && synced ? 0 : -1;
			break;
		}
		/* the first PSB+: a PSB first, its packets alone after */
		if (!synced && ((p == buf) != (k.kind == TC_PT_SKIM_PSB) ||
				!(header >> k.kind & 1))) {
			rc = -1;
			break;
		}
		p += k.size;
		switch (k.kind) {
		case TC_PT_SKIM_PSBEND:
			if (!synced)	/* its time from there on: a TSC in it */
				rc = s->tm.have_tsc ? 0 : -1;
			synced = true;
			break;
		case TC_PT_SKIM_CYC:
			/* (its calibration is the CBRs' too, which libipt takes anywhere) */
			rc = -1;
			break;
		case TC_PT_SKIM_TSC: case TC_PT_SKIM_MTC: case TC_PT_SKIM_TMA:
			/* (in or out of a PSB+, SKL168: only CYC's calibration, refused) */
			if (timing(s, &k, false)) {
				rc = -1;
				break;
			}
			if (k.kind == TC_PT_SKIM_TMA)
				nmtc = 0;
			else if (k.kind == TC_PT_SKIM_MTC && ++nmtc > *mtcs)
				*mtcs = nmtc;
			if (s->tm.have_tsc) {
				*lo = s->tm.tsc < *lo ? s->tm.tsc : *lo;
				*hi = s->tm.tsc > *hi ? s->tm.tsc : *hi;
			}
			break;
		default:
			break;
		}
	}
	free(s);
	return rc || !synced ? -1 : 0;
}
