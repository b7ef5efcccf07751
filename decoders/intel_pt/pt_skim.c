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
 * - a PSB+ with MODE.Exec while tracing gives a status event bound to the FUP's IP: the
 *   flow goes on (with trace) until it is there before any other event counts;
 * - return compression: a TNT bit for a return takes libipt's 64-entry stack.
 * Where the blocks end does not change the ranges (pt_flow cuts a range only where the
 * flow does not go on to the next instruction, or after a transfer), so each block here is
 * a run of instructions to the first branch, cached by address. */

#define CACHE_SIZE (1u << 14)	/* entries, direct-mapped */
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
enum next { N_TNT, N_TIP, N_EOS, N_PGE, N_PGD, N_ABR /* FUP+TIP */, N_ADIS /* FUP+TIP.PGD */ };

#define GIVE_UP TC_PT_SKIM_GIVE_UP
#define STOP 1	/* the trace ended where the flow needed it */

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
	uint64_t nip, nfrom;	/* the next packet's IP; a FUP's */
	bool nsupp;		/* TIP.PGD without IP */
	bool synced, enabled;
	bool psb_pending;	/* a PSB+'s status event bound to psb_ip */
	uint64_t psb_ip;
	uint64_t ip;		/* the flow's next instruction */
	unsigned long steps;	/* instructions since a packet was read */
	struct tc_pt_insn_stack stack;

	/* the range being made (pt_flow's on_block) */
	bool in_range, have_last;
	uint64_t r_start, r_end, last, last_end;
	uint32_t r_insns;
	uint8_t last_class;
	struct tc_pt_skim_stats st;

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
		case 0xa3:
			if (n < 8) {
				o->truncated = true;
				return;
			}
			v = 0;
			for (int i = 7; i >= 2; i--)
				v = v << 8 | p[i];
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
	if (b == 0x99) {
		if (n < 2) {
			o->truncated = true;
			return;
		}
		if ((p[1] >> 5) != 0)	/* MODE.Exec only (not MODE.TSX) */
			return;
		o->kind = TC_PT_SKIM_MODE_EXEC;
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
	v = 0;
	for (unsigned i = nb; i > 0; i--)
		v = v << 8 | p[i];
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

static inline bool is_transfer(unsigned c)
{
	return c == ptic_call || c == ptic_return || c == ptic_jump || c == ptic_far_call ||
	       c == ptic_far_return || c == ptic_far_jump;
}

static void flush(struct tc_pt_skim *s)
{
	struct tc_pt_skim_range r = { .start = s->r_start, .end = s->r_end, .last_ip = s->last,
				      .offset = (uint64_t)(s->p - s->buf), .insns = s->r_insns,
				      .last_class = (enum pt_insn_class)s->last_class };

	s->in_range = false;
	s->ops->range(s->ops->ctx, &r);
}

static inline void flow_to(struct tc_pt_skim *s, uint64_t next)
{
	if (!s->have_last)
		return;
	if (is_transfer(s->last_class) || (s->last_class != ptic_other && next != s->last_end))
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

static inline void on_block(struct tc_pt_skim *s, uint64_t ip, uint32_t n, uint64_t last,
			    unsigned size, unsigned iclass)
{
	s->st.insns += n;
	if (s->in_range && (ip != s->r_end || is_transfer(s->last_class)))
		flush(s);
	flow_to(s, ip);
	if (!s->in_range) {
		s->in_range = true;
		s->r_start = ip;
		s->r_insns = 0;
	}
	s->r_end = last + size;
	s->r_insns += n;
	s->have_last = true;
	s->last = last;
	s->last_end = s->r_end;
	s->last_class = (uint8_t)iclass;
}

/* ---- packets as the flow needs them ---- */

/* A PSB+ (s->p at its PSB): the state it sets, and the event libipt makes of it. */
static int psb_plus(struct tc_pt_skim *s)
{
	struct tc_pt_skim_pkt k;
	bool fup = false, mode = false;
	uint64_t fip = 0;

	s->p += sizeof(psb_bytes);
	s->last_ip = 0;
	s->have_ip = false;
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
			mode = true;
			continue;
		case TC_PT_SKIM_FUP:
			if (k.suppressed || fup)
				return GIVE_UP;
			fup = true;
			fip = k.ip;
			continue;
		case TC_PT_SKIM_PSBEND:
			break;
		default:
			return GIVE_UP;
		}
		break;
	}
	if (!s->synced) {
		if (!mode)
			return GIVE_UP;	/* no mode yet: libipt cannot decode */
		s->synced = true;
		s->enabled = fup;
		s->ip = fip;
	} else if (s->enabled) {
		if (!fup || (mode && s->psb_pending))
			return GIVE_UP;
		if (mode) {
			s->psb_pending = true;
			s->psb_ip = fip;
		}
	} else if (fup) {
		return GIVE_UP;	/* libipt: tracing enabled by a status update */
	}
	return 0;
}

/* libipt reads on past the packet the next query takes: a packet it cannot decode there
 * fails that query already. Give up before the flow takes it (without IP compression's
 * state changed: the packet is read again). */
static int peek(struct tc_pt_skim *s)
{
	const uint8_t *p = s->p;
	uint64_t last_ip = s->last_ip;
	bool have_ip = s->have_ip;
	struct tc_pt_skim_pkt k;

	uint8_t b;
	unsigned ipb;

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
	switch (k.kind) {
	case TC_PT_SKIM_TNT:
	case TC_PT_SKIM_TIP:
	case TC_PT_SKIM_PGE:
	case TC_PT_SKIM_PGD:
	case TC_PT_SKIM_FUP:
	case TC_PT_SKIM_PSB:
		return 0;
	default:
		return GIVE_UP;
	}
}

/* To the next packet the flow needs (libipt's read-ahead); s->nxt says what it is. */
static int ahead(struct tc_pt_skim *s)
{
	struct tc_pt_skim_pkt k;

	s->steps = 0;
	for (;;) {
		if (s->p >= s->end) {
			s->nxt = N_EOS;
			return 0;
		}
		if (!(*s->p & 1) && *s->p > 0x02) {	/* TNT-8, as parse() takes it */
			unsigned pl = *s->p >> 1, nb = 31 - (unsigned)__builtin_clz(pl);

			s->tnt = (uint64_t)(pl & ((1u << nb) - 1)) << (64 - nb);
			s->ntnt = nb;
			s->nxt = N_TNT;
			s->p++;
			return peek(s);
		}
		parse(s->p, (size_t)(s->end - s->p), &s->last_ip, &s->have_ip, &k);
		switch (k.kind) {
		case TC_PT_SKIM_PAD:
			s->p++;
			continue;
		case TC_PT_SKIM_PSB:
			if (psb_plus(s))
				return GIVE_UP;
			continue;
		case TC_PT_SKIM_TNT:
			s->tnt = k.tnt;
			s->ntnt = k.ntnt;
			s->nxt = N_TNT;
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
			 * there libipt's sync and event binding read it otherwise. */
			if (k.truncated && s->enabled) {
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

/* The trace for the branch that ends a block (kind; its target if direct, fall: the next
 * instruction): 0, STOP where the trace ended, or GIVE_UP. */
static inline int query(struct tc_pt_skim *s, unsigned kind, uint64_t target, uint64_t fall)
{
	unsigned taken;

	switch (kind) {
	case TC_PT_INSN_COND:
		if (!s->ntnt)
			return s->nxt == N_EOS ? STOP : GIVE_UP;
		taken = (unsigned)(s->tnt >> 63);
		s->tnt <<= 1;
		s->ip = taken ? target : fall;
		return --s->ntnt ? 0 : ahead(s);
	case TC_PT_INSN_RET:
		if (s->ntnt) {
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
		s->ip = s->nip;
		return ahead(s);
	}
}

/* One instruction of the flow (while an event waits for an IP). mode: 0 with trace
 * (the status event of a PSB+), 1 to stop at an instruction that needs trace (*stopped
 * set: TIP.PGD), 2 to give up there (FUP). */
static int one(struct tc_pt_skim *s, int mode, bool *stopped)
{
	struct tc_pt_insn i;
	uint64_t ip = s->ip, fall;

	if (!decode(s, ip, &i) || ++s->steps > MAX_STEPS)
		return GIVE_UP;
	fall = ip + i.size;
	switch (i.kind) {
	case TC_PT_INSN_LINEAR:
		on_block(s, ip, 1, ip, i.size, i.iclass);
		s->ip = fall;
		return 0;
	case TC_PT_INSN_CALL:
		on_block(s, ip, 1, ip, i.size, i.iclass);
		if (i.push)
			tc_pt_insn_push(&s->stack, fall);
		s->ip = i.target;
		return 0;
	case TC_PT_INSN_JUMP:
		on_block(s, ip, 1, ip, i.size, i.iclass);
		s->ip = i.target;
		return 0;
	default:
		if (mode == 2)
			return GIVE_UP;
		on_block(s, ip, 1, ip, i.size, i.iclass);
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
			s->psb_pending = false;
			return 0;
		}
		return one(s, 0, &stopped);
	}
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
		if (s->in_range)
			flush(s);
		flow_to(s, at);
		s->st.branches++;
		if (s->nxt == N_ABR)
			s->ip = s->nip;
		else
			s->enabled = false;
		return ahead(s);
	default:
		return GIVE_UP;	/* TIP.PGE while tracing */
	}
}

int tc_pt_skim_run(struct tc_pt_skim *s, const struct pt_config *cfg, const uint8_t *buf,
		   size_t len, const struct tc_pt_skim_ops *ops, struct tc_pt_skim_stats *st)
{
	const struct entry *e;
	uint64_t last, fall;
	int rc;

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
	s->in_range = s->have_last = false;
	s->st = (struct tc_pt_skim_stats){ 0 };
	/* libipt's sync reads on past the PSB+ too: the caller's sync once that went well */
	if (ahead(s) || !s->synced)
		return GIVE_UP;
	ops->sync(ops->ctx, (uint64_t)(s->p0 - s->buf));
	for (;;) {
		if (!s->enabled) {
			if (s->nxt == N_EOS)
				break;
			if (s->nxt != N_PGE || s->ntnt)
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
			on_block(s, s->ip, e->ninsn, last, e->size, e->iclass);
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
		if (rc == STOP)
			break;
		if (rc)
			return GIVE_UP;
	}
	flow_stop(s);
	*st = s->st;
	return 0;
}
