#include "decoders/intel_pt/pt_walk.h"

#include "decoders/intel_pt/pt_insn.h"

#include "lib/util/grow.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The order of everything below follows libipt 2.0's block decoder (pt_block_decoder.c):
 * which query it makes at which instruction, when it fetches an event and whether the event
 * binds to the current IP decide the query decoder's offset at each record. Where its
 * cached and uncached paths differ (an indirect branch whose IP is suppressed), or where
 * an event binds to an instruction, the walk gives up (TC_PT_WALK_FALLBACK). */

#define FB TC_PT_WALK_FALLBACK
#define CACHE_SIZE (1u << 14)	/* entries, direct-mapped: 512 KiB, more is slower (cache misses) */
#define MAX_LINEAR 1024		/* instructions in one entry without a branch */

/* A run of instructions from ip to end_ip, the last one a branch (or cut at MAX_LINEAR). */
struct entry {
	uint64_t ip, target;
	uint32_t gen;
	uint16_t last;		/* the last instruction's offset from ip (< MAX_LINEAR * 15) */
	uint16_t ninsn;
	uint8_t mode, kind, size, iclass;
	bool push;
	/* == the cache's kgen: libipt's block cache has the run (its block is the whole run),
	 * as far as the marks held since they were last replaced tell */
	uint16_t known;
};

_Static_assert(sizeof(struct entry) == 32, "an entry in half a cache line");
_Static_assert(MAX_LINEAR * 15 <= UINT16_MAX, "an entry's last fits");

/* Instructions libipt's block cache has an entry for, by section: open addressing. A
 * table may be read by other threads while its cache adds to it (the segments' snapshots
 * of the true set, tc_pt_walk_cache_copy): a slot is only ever filled, its isid last
 * (release; readers acquire), and never emptied while it is shared (refs > 1); a table
 * that grows is left to its readers, freed by the last. */
struct mark {
	uint64_t ip;
	int32_t isid;	/* 0: empty slot */
	uint32_t era;	/* the cache's era when it was made */
	uint32_t ver;	/* the cache's version when it was made (snapshots see their own) */
	uint8_t mode;
};

struct marks {
	size_t refs;	/* the cache's, and each snapshot's (atomic) */
	size_t cap;	/* a power of two */
	struct mark m[];
};

#define MARKS_MIN 1024u	/* slots of a new table; a cache's own kept when cleared, at most */

struct nokey {
	uint64_t ip;
	int32_t isid;
	uint8_t mode;
};

struct tc_pt_walk_cache {
	uint32_t gen, era;
	uint16_t kgen;		/* entries' known answers hold while it stays (never 0) */
	uint64_t cr3;		/* the address space of the blocks held */
	struct marks *marks;	/* its own (NULL: none yet) */
	size_t nmarks;
	uint32_t ver;		/* stamped on its marks; a snapshot taken of them moves it on */
	/* a snapshot (tc_pt_walk_cache_copy): another cache's marks of version base_ver or
	 * older are this one's too (those it makes are its own) */
	struct marks *base;
	uint32_t base_ver;
	/* tc_pt_walk_cache_log: the marks asked about and not found (a speculative walk's
	 * answers that a fuller set could change) */
	bool log, log_lost;
	struct nokey *nos;
	size_t nnos, capnos;
	struct nokey *adds;	/* with log: the marks made since the last merge_new */
	size_t nadds, capadds;
	bool adds_lost;
	struct entry e[CACHE_SIZE];
};

struct tc_pt_walk {
	struct pt_query_decoder *q;
	struct tc_pt_walk_cache *cache;
	struct tc_x86 *x86;
	tc_pt_walk_read_fn read;
	tc_pt_walk_section_fn section;
	void *ctx;
	uint64_t cr3;		/* the address space code is read from */

	/* the block decoder's state */
	uint64_t ip;
	enum pt_exec_mode mode;
	int status;
	bool enabled, process_event;
	bool ticks;		/* enable_tick_events */
	struct pt_event ev;
	struct tc_pt_insn_stack stack;

	/* a new run's instructions libipt caches only if its last query succeeds */
	uint64_t defer[MAX_LINEAR];
	unsigned ndefer;
	int defer_isid;
};

struct tc_pt_walk_cache *tc_pt_walk_cache_new(void)
{
	struct tc_pt_walk_cache *c = calloc(1, sizeof(*c));

	if (c)
		c->gen = c->kgen = 1;
	return c;
}

/* The marks were replaced, not only added to: the entries' known answers go (the blocks
 * stay: they depend on the code alone). */
static void forget_known(struct tc_pt_walk_cache *c)
{
	if (++c->kgen == 0) {
		for (size_t i = 0; i < CACHE_SIZE; i++)
			c->e[i].known = 0;
		c->kgen = 1;
	}
}

void tc_pt_walk_cache_forget(struct tc_pt_walk_cache *c)
{
	if (!c)
		return;
	if (++c->gen == 0) {
		memset(c->e, 0, sizeof(c->e));
		c->gen = 1;
	}
}

static void marks_drop(struct marks *t)
{
	if (t && __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(t);
}

void tc_pt_walk_cache_free(struct tc_pt_walk_cache *c)
{
	if (c) {
		marks_drop(c->marks);
		marks_drop(c->base);
		free(c->nos);
		free(c->adds);
	}
	free(c);
}

static size_t mark_slot(const struct marks *t, int isid, uint64_t ip)
{
	uint64_t h = (ip ^ (uint64_t)isid << 40) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 20) & (t->cap - 1);
}

static int32_t slot_isid(const struct mark *m)
{
	return __atomic_load_n(&m->isid, __ATOMIC_ACQUIRE);
}

/* Is (isid, ip) in t, made at version ver or before? (A key is in a table once.) */
static bool find_in(const struct marks *t, int isid, uint64_t ip, uint32_t ver)
{
	int32_t id;

	if (!t)
		return false;
	for (size_t i = mark_slot(t, isid, ip); (id = slot_isid(&t->m[i]));
	     i = (i + 1) & (t->cap - 1))
		if (id == isid && t->m[i].ip == ip)
			return t->m[i].ver <= ver;
	return false;
}

static bool find_mark(const struct tc_pt_walk_cache *c, int isid, uint64_t ip)
{
	return find_in(c->marks, isid, ip, UINT32_MAX) ||
	       (c->base && find_in(c->base, isid, ip, c->base_ver));
}

/* The marks c holds, its own then its snapshot's: *it from 0 on; NULL after the last. */
static const struct mark *next_mark(const struct tc_pt_walk_cache *c, size_t *it)
{
	size_t own = c->marks ? c->marks->cap : 0, all = own + (c->base ? c->base->cap : 0);

	for (; *it < all; ++*it) {
		const struct mark *m = *it < own ? &c->marks->m[*it] : &c->base->m[*it - own];

		if (slot_isid(m) && (*it < own || m->ver <= c->base_ver)) {
			++*it;
			return m;
		}
	}
	return NULL;
}

/* Its own marks go (a table shared or grown big is let go of, a new one made when
 * needed: clearing it would cost more than a mark made anew). */
static void clear_own(struct tc_pt_walk_cache *c)
{
	struct marks *t = c->marks;

	if (t && (t->cap > MARKS_MIN || __atomic_load_n(&t->refs, __ATOMIC_ACQUIRE) > 1)) {
		marks_drop(t);
		c->marks = NULL;
	} else if (t && c->nmarks) {
		memset(t->m, 0, t->cap * sizeof(*t->m));
	}
	c->nmarks = 0;
}

__attribute__((noinline)) static void log_no(struct tc_pt_walk_cache *c, int isid, uint64_t ip)
{
	if (c->log_lost)
		return;
	if (tc_grow((void **)&c->nos, &c->capnos, c->nnos + 1, sizeof(*c->nos))) {
		c->log_lost = true;
		return;
	}
	c->nos[c->nnos++] = (struct nokey){ ip, isid, 0 };
}

static bool marked(struct tc_pt_walk_cache *c, int isid, uint64_t ip)
{
	if (find_mark(c, isid, ip))
		return true;
	if (__builtin_expect(c->log, 0))
		log_no(c, isid, ip);
	return false;
}

/* false if out of memory */
static bool mark(struct tc_pt_walk_cache *c, int isid, uint64_t ip, enum pt_exec_mode mode)
{
	struct marks *t = c->marks;
	struct mark *m;
	size_t i;

	if (c->base && find_in(c->base, isid, ip, c->base_ver))
		return true;
	if (!t || (c->nmarks + 1) * 2 > t->cap) {
		size_t cap = t ? t->cap * 2 : MARKS_MIN;
		struct marks *n = calloc(1, sizeof(*n) + cap * sizeof(*n->m));

		if (!n)
			return false;
		n->refs = 1;
		n->cap = cap;
		for (size_t j = 0; t && j < t->cap; j++) {
			if (!t->m[j].isid)
				continue;
			for (i = mark_slot(n, t->m[j].isid, t->m[j].ip); n->m[i].isid;
			     i = (i + 1) & (cap - 1))
				;
			n->m[i] = t->m[j];
		}
		/* the snapshots taken hold the old one */
		marks_drop(t);
		c->marks = t = n;
	}
	for (i = mark_slot(t, isid, ip); t->m[i].isid; i = (i + 1) & (t->cap - 1))
		if (t->m[i].isid == isid && t->m[i].ip == ip)
			return true;
	m = &t->m[i];
	m->ip = ip;
	m->era = c->era;
	m->ver = c->ver;
	m->mode = (uint8_t)mode;
	__atomic_store_n(&m->isid, isid, __ATOMIC_RELEASE);	/* readers see it whole */
	c->nmarks++;
	if (c->log && !c->adds_lost) {
		if (tc_grow((void **)&c->adds, &c->capadds, c->nadds + 1, sizeof(*c->adds)))
			c->adds_lost = true;
		else
			c->adds[c->nadds++] = (struct nokey){ ip, isid, (uint8_t)mode };
	}
	return true;
}

/* The instructions model() left unmarked until the run's last query succeeded. */
static bool mark_deferred(struct tc_pt_walk *w)
{
	for (unsigned k = 0; k < w->ndefer; k++)
		if (!mark(w->cache, w->defer_isid, w->defer[k], w->mode))
			return false;
	w->ndefer = 0;
	return true;
}

void tc_pt_walk_cache_era(struct tc_pt_walk_cache *c)
{
	c->era++;
}

int tc_pt_walk_cache_merge(struct tc_pt_walk_cache *dst, const struct tc_pt_walk_cache *src)
{
	const struct mark *m;
	size_t it = 0;

	while ((m = next_mark(src, &it)))
		if (!mark(dst, m->isid, m->ip, (enum pt_exec_mode)m->mode))
			return -1;
	return 0;
}

/* Not a copy (segments take one each, the true flow one per join: it cost a memcpy of
 * the whole table each, and the page faults of a new one): dst reads src's table, the
 * marks of src's version now; src's later marks are newer. */
int tc_pt_walk_cache_copy(struct tc_pt_walk_cache *dst, struct tc_pt_walk_cache *src)
{
	struct marks *b = src->base ? src->base : src->marks;

	if (dst == src)
		return 0;
	clear_own(dst);
	if (b)
		__atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
	marks_drop(dst->base);
	dst->base = b;
	/* (a version a snapshot: 4G of them would take 16 TB of trace cut at PSBs) */
	dst->base_ver = src->base ? src->base_ver : src->ver++;
	forget_known(dst);
	/* src a snapshot itself: its own marks are dst's own */
	for (size_t i = 0; src->base && src->marks && i < src->marks->cap; i++) {
		const struct mark *m = &src->marks->m[i];

		if (m->isid && !mark(dst, m->isid, m->ip, (enum pt_exec_mode)m->mode))
			return -1;
	}
	return 0;
}

int tc_pt_walk_cache_merge_new(struct tc_pt_walk_cache *dst, struct tc_pt_walk_cache *src)
{
	if (src->adds_lost)
		return tc_pt_walk_cache_merge(dst, src);
	for (size_t i = 0; i < src->nadds; i++)
		if (!mark(dst, src->adds[i].isid, src->adds[i].ip,
			  (enum pt_exec_mode)src->adds[i].mode))
			return -1;
	src->nadds = 0;
	return 0;
}

void tc_pt_walk_cache_log(struct tc_pt_walk_cache *c)
{
	c->log = true;
	c->nnos = 0;
	c->log_lost = false;
}

void tc_pt_walk_cache_unlog(struct tc_pt_walk_cache *c)
{
	c->log = false;
	c->nnos = c->nadds = 0;
	c->log_lost = c->adds_lost = false;
}

bool tc_pt_walk_cache_check(const struct tc_pt_walk_cache *spec,
			    const struct tc_pt_walk_cache *truth)
{
	if (spec->log_lost)
		return false;
	for (size_t i = 0; i < spec->nnos; i++)
		if (find_mark(truth, spec->nos[i].isid, spec->nos[i].ip))
			return false;
	return true;
}

static size_t put_psb_fup(uint8_t *b, uint64_t ip, uint8_t mode)
{
	size_t n = 0;

	for (int i = 0; i < 8; i++) {
		b[n++] = 0x02;
		b[n++] = 0x82;
	}
	b[n++] = 0x99;		/* MODE.Exec: CS.L for 64-bit, CS.D for 32-bit */
	b[n++] = mode == ptem_64bit ? 0x01 : 0x02;
	b[n++] = 0xdd;		/* FUP, the whole 8-byte IP */
	for (int i = 0; i < 8; i++)
		b[n++] = (uint8_t)(ip >> (8 * i));
	b[n++] = 0x02;		/* PSBEND */
	b[n++] = 0x23;
	return n;
}

int tc_pt_walk_cache_warm(const struct tc_pt_walk_cache *c, const struct pt_config *base,
			  struct pt_image_section_cache *iscache)
{
	enum { GROUP = 16 + 2 + 9 + 2 + 9 };
	struct pt_image *img = NULL;
	struct pt_block_decoder *dec = NULL;
	struct pt_config cfg = *base;
	uint64_t *offs = NULL;
	uint8_t *buf = NULL;
	int *isids = NULL;
	size_t n = 0, k = 0, nm = 0, nisids = 0, capisids = 0, it = 0;
	const struct mark *m;
	int ret = -1;

	while ((m = next_mark(c, &it)))
		nm += m->era != c->era;
	if (!nm)
		return 0;
	img = pt_image_alloc("tracectl-warm");
	buf = malloc(nm * 2 * GROUP);
	offs = malloc(nm * 2 * sizeof(*offs));
	if (!img || !buf || !offs)
		goto out;
	for (it = 0; (m = next_mark(c, &it));) {
		size_t j;

		if (m->era == c->era)
			continue;
		/* its section, once (marks of this era are skipped: not their sections) */
		for (j = 0; j < nisids && isids[j] != m->isid; j++)
			;
		if (j == nisids) {
			if (tc_grow((void **)&isids, &capisids, nisids + 1, sizeof(*isids)) ||
			    pt_image_add_cached(img, iscache, m->isid, NULL) < 0)
				goto out;
			isids[nisids++] = m->isid;
		}
		/* a branch that needs trace ends the run: a TIP for a return or an indirect
		 * one, a TNT for a conditional one (the other try fails after the block cache
		 * has its last instruction, and before its others: the second try adds them) */
		offs[k++] = n;
		n += put_psb_fup(buf + n, m->ip, m->mode);
		buf[n++] = 0xcd;	/* TIP, the whole 8-byte IP */
		for (int b = 0; b < 8; b++)
			buf[n++] = (uint8_t)(m->ip >> (8 * b));
		offs[k++] = n;
		n += put_psb_fup(buf + n, m->ip, m->mode);
		buf[n++] = 0x04;	/* TNT-8: one branch, not taken */
	}
	cfg.begin = buf;
	cfg.end = buf + n;
	cfg.flags.variant.block.end_on_call = 1;
	cfg.flags.variant.block.end_on_jump = 1;
	dec = pt_blk_alloc_decoder(&cfg);
	if (!dec || pt_blk_set_image(dec, img) < 0)
		goto out;
	for (size_t i = 0; i < k; i++) {
		struct pt_event ev;
		struct pt_block b;
		int st = pt_blk_sync_set(dec, offs[i]);

		while (st >= 0 && (st & pts_event_pending))
			st = pt_blk_event(dec, &ev, sizeof(ev));
		if (st >= 0)
			pt_blk_next(dec, &b, sizeof(b));
	}
	ret = 0;
out:
	if (dec)
		pt_blk_free_decoder(dec);
	if (img)
		pt_image_free(img);
	free(buf);
	free(offs);
	free(isids);
	return ret;
}

struct tc_pt_walk *tc_pt_walk_new(const struct pt_config *base, const uint8_t *buf, size_t len,
				  struct tc_pt_walk_cache *cache, struct tc_x86 *x86,
				  tc_pt_walk_read_fn read, tc_pt_walk_section_fn section, void *ctx)
{
	struct tc_pt_walk *w;
	struct pt_config cfg = *base;

	if (!cache || !x86)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	/* the block decoder's query decoder: the same configuration without flags */
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	memset(&cfg.flags, 0, sizeof(cfg.flags));
	w->q = pt_qry_alloc_decoder(&cfg);
	if (!w->q) {
		free(w);
		return NULL;
	}
	w->cache = cache;
	w->x86 = x86;
	w->read = read;
	w->section = section;
	w->ctx = ctx;
	return w;
}

void tc_pt_walk_free(struct tc_pt_walk *w)
{
	if (!w)
		return;
	pt_qry_free_decoder(w->q);
	free(w);
}

void tc_pt_walk_ticks(struct tc_pt_walk *w)
{
	w->ticks = true;
}

void tc_pt_walk_set_cr3(struct tc_pt_walk *w, uint64_t cr3)
{
	w->cr3 = cr3;
	if (cr3 != w->cache->cr3) {
		w->cache->cr3 = cr3;
		tc_pt_walk_cache_forget(w->cache);
	}
}

struct pt_query_decoder *tc_pt_walk_query(const struct tc_pt_walk *w)
{
	return w->q;
}

void tc_pt_walk_state(const struct tc_pt_walk *w, struct tc_pt_walk_state *st)
{
	memset(st, 0, sizeof(*st));
	st->ip = w->ip;
	st->mode = w->mode;
	st->status = w->status;
	st->enabled = w->enabled;
	st->process_event = w->process_event;
	if (w->process_event)
		st->ev = w->ev;
	st->ev_tsc = w->ev.tsc;
	if (pt_qry_get_offset(w->q, &st->offset) < 0)
		st->offset = UINT64_MAX;
	st->has_time = pt_qry_time(w->q, &st->tsc, &st->lost_mtc, &st->lost_cyc) >= 0;
	st->has_cbr = pt_qry_core_bus_ratio(w->q, &st->cbr) >= 0;
}

int tc_pt_walk_sync_offset(const struct tc_pt_walk *w, uint64_t *off)
{
	return pt_qry_get_sync_offset(w->q, off);
}

/* One instruction at ip; false if its bytes cannot be read or decoded (libipt would stop
 * with an error there: the caller falls back). */
static bool decode(struct tc_pt_walk *w, uint64_t ip, enum pt_exec_mode mode,
		   struct tc_pt_insn *i)
{
	uint8_t b[16];
	size_t n;

	if (mode != ptem_64bit && mode != ptem_32bit)
		return false;
	n = w->read(w->ctx, w->cr3, ip, b, sizeof(b));
	if (!n)
		return false;
	return tc_pt_insn_decode(b, n, tc_x86_classify(w->x86, b, n, mode == ptem_64bit), ip,
				 i);
}

/* The cached run from ip: NULL if its first instruction cannot be decoded. */
static const struct entry *lookup(struct tc_pt_walk *w, uint64_t ip, enum pt_exec_mode mode)
{
	struct tc_pt_walk_cache *c = w->cache;
	struct entry *e = &c->e[(ip >> 1 ^ ip >> 15) & (CACHE_SIZE - 1)];
	struct tc_pt_insn i;
	uint64_t at = ip;
	unsigned n = 0;

	if (e->gen == c->gen && e->ip == ip && e->mode == (uint8_t)mode)
		return e;
	/* nothing else reads the cache: entries of another address space are forgotten */
	e->gen = 0;
	e->known = 0;
	for (;;) {
		if (!decode(w, at, mode, &i)) {
			if (!n)
				return NULL;
			/* ends before it: the next run starts there, and fails */
			break;
		}
		n++;
		e->last = (uint16_t)(i.ip - ip);
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
	e->mode = (uint8_t)mode;
	e->ninsn = (uint16_t)n;
	e->gen = c->gen;
	return e;
}

static int blk_status(const struct tc_pt_walk *w, int flags)
{
	if (!w->enabled)
		flags |= pts_ip_suppressed;
	if ((w->status & pts_eos) && !w->process_event)
		flags |= pts_eos;
	return flags;
}

/* A query's failure: the end of the trace is libipt's answer too; anything else is an error
 * the walk does not reproduce. */
static int failed(int status)
{
	return status == -pte_eos ? status : FB;
}

static int fetch_event(struct tc_pt_walk *w)
{
	int status;

	if (w->process_event)
		return 1;
	if (!(w->status & pts_event_pending))
		return 0;
	status = pt_qry_event(w->q, &w->ev, sizeof(w->ev));
	if (status < 0)
		return FB;
	w->process_event = true;
	w->status = status;
	return 1;
}

/* Events that bind to the IP the flow is at now, after a block or an event. */
static int trailing_event(struct tc_pt_walk *w)
{
	const struct pt_event *ev = &w->ev;
	int status = fetch_event(w);

	if (status <= 0)
		return status < 0 ? status : blk_status(w, 0);
	switch (ev->type) {
	case ptev_disabled:
		/* binds to an instruction only with one postponed: never here */
		break;
	case ptev_enabled:
	case ptev_overflow:
	case ptev_stop:
	case ptev_pwre:
	case ptev_pwrx:
	case ptev_cbr:
	case ptev_mnt:
	case ptev_tick:
		return blk_status(w, pts_event_pending);
	case ptev_async_disabled:
		if (w->ip != ev->variant.async_disabled.at)
			break;
		if (pt_qry_get_config(w->q)->errata.skd022)
			return FB;
		return blk_status(w, pts_event_pending);
	case ptev_async_branch:
		if (w->ip != ev->variant.async_branch.from)
			break;
		return blk_status(w, pts_event_pending);
	case ptev_paging:
	case ptev_vmcs:
		if (!w->enabled)
			return blk_status(w, pts_event_pending);
		break;
	case ptev_async_paging:
		if (!ev->ip_suppressed && w->ip != ev->variant.async_paging.ip)
			break;
		return blk_status(w, pts_event_pending);
	case ptev_async_vmcs:
		if (!ev->ip_suppressed && w->ip != ev->variant.async_vmcs.ip)
			break;
		return blk_status(w, pts_event_pending);
	case ptev_exec_mode:
		if (!ev->ip_suppressed && w->ip != ev->variant.exec_mode.ip)
			break;
		return blk_status(w, pts_event_pending);
	case ptev_exstop:
		if (!ev->ip_suppressed && w->enabled && w->ip != ev->variant.exstop.ip)
			break;
		return blk_status(w, pts_event_pending);
	case ptev_mwait:
		if (!ev->ip_suppressed && w->enabled && w->ip != ev->variant.mwait.ip)
			break;
		return blk_status(w, pts_event_pending);
	case ptev_ptwrite:
		if (!w->enabled)
			return blk_status(w, pts_event_pending);
		break;
	default:
		/* tsx (speculative state, BDM64) */
		return FB;
	}
	return blk_status(w, 0);
}

int tc_pt_walk_sync_forward(struct tc_pt_walk *w)
{
	return tc_pt_walk_sync_set(w, UINT64_MAX);
}

int tc_pt_walk_sync_set(struct tc_pt_walk *w, uint64_t off)
{
	int status;

	w->mode = ptem_unknown;
	w->ip = 0;
	w->status = 0;
	w->enabled = w->process_event = false;
	memset(&w->ev, 0, sizeof(w->ev));
	w->stack.top = w->stack.bottom = 0;
	status = off == UINT64_MAX ? pt_qry_sync_forward(w->q, &w->ip) :
		 pt_qry_sync_set(w->q, &w->ip, off);
	if (status < 0)
		return status;
	w->status = status;
	if (!(status & pts_ip_suppressed))
		w->enabled = true;
	return trailing_event(w);
}

/* One instruction into the block at the flow's IP; 0: the block is full. */
static int one_insn(struct tc_pt_walk *w, struct pt_block *b, struct tc_pt_insn *i)
{
	uint64_t start, end;

	if (b->ninsn == UINT16_MAX)
		return 0;
	w->section(w->ctx, w->ip, &start, &end);	/* the read names a file to add */
	if (!decode(w, w->ip, w->mode, i))
		return FB;
	if (i->push || i->kind == TC_PT_INSN_ICALL)
		tc_pt_insn_push(&w->stack, i->ip + i->size);
	b->iclass = (enum pt_insn_class)i->iclass;
	b->end_ip = i->ip;
	b->ninsn++;
	return 1;
}

/* To ip without trace: 1 there, 0 the block ended first, -pte_bad_query: trace needed at
 * *i (the flow's IP stays at it). */
static int to_ip(struct tc_pt_walk *w, struct pt_block *b, uint64_t ip,
		 struct tc_pt_insn *i)
{
	int status;

	for (;;) {
		if (w->ip == ip)
			return 1;
		status = one_insn(w, b, i);
		if (status <= 0)
			return status;
		switch (i->kind) {
		case TC_PT_INSN_LINEAR:
			w->ip += i->size;
			break;
		case TC_PT_INSN_CALL:
		case TC_PT_INSN_JUMP:
			w->ip = i->target;
			return w->ip == ip;
		default:
			return -pte_bad_query;
		}
	}
}

/* To the next instruction that needs trace (a synchronous disable binds there; one that
 * changes CR3 is not decoded at all): 0 the block ended first, -pte_bad_query: at *i. */
static int to_branch(struct tc_pt_walk *w, struct pt_block *b, struct tc_pt_insn *i)
{
	int status;

	for (;;) {
		status = one_insn(w, b, i);
		if (status <= 0)
			return status;
		switch (i->kind) {
		case TC_PT_INSN_LINEAR:
			w->ip += i->size;
			break;
		case TC_PT_INSN_CALL:
		case TC_PT_INSN_JUMP:
			w->ip = i->target;
			return 0;
		default:
			return -pte_bad_query;
		}
	}
}

/* After a branch's query, with tick events on: as libipt's block decoder, a tick event at
 * the branch (ip) where the query decoder's time is not the last event's, unless an event
 * is in progress already (its own time stands). */
static int tick(struct tc_pt_walk *w, uint64_t ip)
{
	uint64_t tsc = 0;
	uint32_t lost_mtc = 0, lost_cyc = 0;
	int status;

	if (!w->ticks || w->process_event)
		return 0;
	status = pt_qry_time(w->q, &tsc, &lost_mtc, &lost_cyc);
	if (status < 0 && status != -pte_no_time)
		return FB;
	if (tsc == w->ev.tsc)
		return 0;
	memset(&w->ev, 0, sizeof(w->ev));
	w->ev.type = ptev_tick;
	w->ev.variant.tick.ip = ip;
	w->ev.has_tsc = status != -pte_no_time;
	w->ev.tsc = tsc;
	w->ev.lost_mtc = lost_mtc;
	w->ev.lost_cyc = lost_cyc;
	w->process_event = true;
	return 0;
}

/* The branch at i with trace: the flow's next IP and the query's status. */
static int with_trace(struct tc_pt_walk *w, const struct tc_pt_insn *i)
{
	uint64_t ip;
	int status, taken;

	switch (i->kind) {
	case TC_PT_INSN_COND:
		status = pt_qry_cond_branch(w->q, &taken);
		if (status < 0)
			return failed(status);
		if (tick(w, i->ip) < 0)
			return FB;
		ip = taken ? i->target : i->ip + i->size;
		break;
	case TC_PT_INSN_RET:
		status = pt_qry_cond_branch(w->q, &taken);
		if (status >= 0) {
			if (tick(w, i->ip) < 0 || !taken || !tc_pt_insn_pop(&w->stack, &ip))
				return FB;
			break;
		}
		if (status != -pte_bad_query)
			return failed(status);
		/* fall through */
	case TC_PT_INSN_ICALL:
	case TC_PT_INSN_IND:
		status = pt_qry_indirect_branch(w->q, &ip);
		if (status < 0)
			return failed(status);
		if (tick(w, i->ip) < 0)
			return FB;
		/* libipt's uncached path fails here with -pte_noip, its cached one goes on */
		if (status & pts_ip_suppressed)
			return FB;
		break;
	default:
		return FB;
	}
	w->ip = ip;
	w->status = status;
	return 0;
}

/* To an event's ip, with trace for the last step if needed: 1 there, 0 not yet. */
static int to_ip_with_trace(struct tc_pt_walk *w, struct pt_block *b, uint64_t ip)
{
	struct tc_pt_insn i;
	int status = to_ip(w, b, ip, &i);

	if (status == -pte_bad_query) {
		status = with_trace(w, &i);
		if (status < 0)
			return status;
	}
	if (status < 0)
		return status;
	return w->ip == ip;
}

/* A pending event: to where it binds. */
static int proceed_event(struct tc_pt_walk *w, struct pt_block *b)
{
	const struct pt_event *ev = &w->ev;
	struct tc_pt_insn i;
	uint64_t at;
	int status;

	switch (ev->type) {
	case ptev_enabled:
	case ptev_overflow:
	case ptev_stop:
	case ptev_pwre:
	case ptev_pwrx:
	case ptev_cbr:
	case ptev_mnt:
	case ptev_tick:
		break;
	case ptev_async_disabled:
	case ptev_async_branch:
	case ptev_exstop:
	case ptev_mwait:
		if (ev->type == ptev_exstop || ev->type == ptev_mwait) {
			if (!w->enabled || ev->ip_suppressed)
				break;
			at = ev->type == ptev_exstop ? ev->variant.exstop.ip : ev->variant.mwait.ip;
		} else {
			at = ev->type == ptev_async_branch ? ev->variant.async_branch.from :
				ev->variant.async_disabled.at;
		}
		status = to_ip(w, b, at, &i);
		if (status <= 0)
			return status == 0 ? 0 : FB;
		if (ev->type == ptev_async_disabled && pt_qry_get_config(w->q)->errata.skd022)
			return FB;
		break;
	case ptev_paging:
	case ptev_vmcs:
	case ptev_ptwrite:
		if (!w->enabled)
			break;
		return FB;	/* binds to an instruction */
	case ptev_async_paging:
	case ptev_async_vmcs:
	case ptev_exec_mode:
		if (ev->ip_suppressed)
			break;
		at = ev->type == ptev_async_paging ? ev->variant.async_paging.ip :
		     ev->type == ptev_async_vmcs ? ev->variant.async_vmcs.ip :
		     ev->variant.exec_mode.ip;
		status = to_ip_with_trace(w, b, at);
		if (status <= 0)
			return status == 0 ? 0 : failed(status);
		break;
	case ptev_disabled:
		if (ev->ip_suppressed) {
			const struct pt_config *c = pt_qry_get_config(w->q);

			if (c->addr_filter.config.addr_cfg && c->errata.skl014)
				return FB;
			status = to_branch(w, b, &i);
		} else {
			status = to_ip(w, b, ev->variant.disabled.ip, &i);
		}
		if (status <= 0) {
			if (status != -pte_bad_query)
				return status == 0 ? 0 : FB;
			/* where tracing is expected to resume: after a call */
			w->ip = i.iclass == ptic_call || i.iclass == ptic_far_call ?
				i.ip + i.size : 0;
		}
		break;
	default:
		/* tsx */
		return FB;
	}
	return blk_status(w, pts_event_pending);
}

/* What libipt's block decoder does with the run e the first times: without a section for
 * it, the whole run (its uncached path, reading through the callback); with one whose block
 * cache has the run's start, the whole run too (e->known from then on); else it decodes
 * instruction after instruction and the block ends early, without trace, where the next
 * instruction is already cached. Its cache gets the instructions on the way back from that
 * descent: all of them when the block ends without a query, but only the last when the
 * last one's query fails (the end of a buffer): those are left to mark_deferred. 1: the
 * whole run; 0: the block ended early (b and the flow's IP say where); else the walk's
 * failure. */
static int model(struct tc_pt_walk *w, struct entry *e, struct pt_block *b, unsigned *last_size,
		 enum pt_insn_class *last_class)
{
	uint64_t start, end, at = e->ip;
	int isid = w->section(w->ctx, e->ip, &start, &end);
	struct tc_pt_insn i;
	unsigned n;

	w->ndefer = 0;
	if (isid < 0)
		return 1;
	if (e->ip + e->last + e->size > end)
		return FB;	/* a run out of its section: libipt ends the block there */
	if (marked(w->cache, isid, e->ip)) {
		e->known = w->cache->kgen;
		return 1;
	}
	for (n = 1; n < e->ninsn; n++) {
		w->defer[n - 1] = at;
		if (!decode(w, at, w->mode, &i))
			return FB;
		at += i.size;
		if (marked(w->cache, isid, at))
			break;
	}
	if (n < e->ninsn) {
		for (unsigned k = 0; k < n; k++)
			if (!mark(w->cache, isid, w->defer[k], w->mode))
				return FB;
		b->ninsn = (uint16_t)n;
		b->end_ip = i.ip;
		b->iclass = ptic_other;
		*last_size = i.size;
		*last_class = ptic_other;
		w->ip = at;
		return 0;
	}
	if (!mark(w->cache, isid, at, w->mode))
		return FB;
	w->ndefer = n - 1;
	w->defer_isid = isid;
	if (e->kind == TC_PT_INSN_CALL || e->kind == TC_PT_INSN_JUMP)
		return mark_deferred(w) ? 1 : FB;
	return 1;
}

/* No event pending: on from the flow's IP to the next branch that needs trace. */
static int proceed_no_event(struct tc_pt_walk *w, struct pt_block *b, unsigned *last_size,
			    enum pt_insn_class *last_class)
{
	struct entry *e = (struct entry *)lookup(w, w->ip, w->mode);
	struct tc_pt_insn i;
	int status;

	w->ndefer = 0;
	if (!e)
		return FB;
	if (e->kind == TC_PT_INSN_LINEAR)
		return FB;	/* over MAX_LINEAR instructions without a branch */
	if (e->known != w->cache->kgen) {
		status = model(w, e, b, last_size, last_class);
		if (status <= 0)
			return status;
	}
	b->ninsn = e->ninsn;
	b->end_ip = (e->ip + e->last);
	b->iclass = (enum pt_insn_class)e->iclass;
	*last_size = e->size;
	*last_class = (enum pt_insn_class)e->iclass;
	switch (e->kind) {
	case TC_PT_INSN_LINEAR:
		w->ip = (e->ip + e->last) + e->size;
		return 0;
	case TC_PT_INSN_CALL:
		if (e->push)
			tc_pt_insn_push(&w->stack, (e->ip + e->last) + e->size);
		w->ip = e->target;
		return 0;
	case TC_PT_INSN_JUMP:
		w->ip = e->target;
		return 0;
	case TC_PT_INSN_ICALL:
		tc_pt_insn_push(&w->stack, (e->ip + e->last) + e->size);
		break;
	default:
		break;
	}
	i.ip = (e->ip + e->last);
	i.size = e->size;
	i.kind = e->kind;
	i.target = e->target;
	status = with_trace(w, &i);
	if (status >= 0 && w->ndefer && !mark_deferred(w))
		return FB;
	w->ndefer = 0;
	return status;
}

int tc_pt_walk_next(struct tc_pt_walk *w, struct pt_block *b, unsigned *last_size,
		    enum pt_insn_class *last_class)
{
	int status;

	memset(b, 0, sizeof(*b));
	b->ip = w->ip;
	b->mode = w->mode;
	*last_size = 0;
	*last_class = ptic_other;
	status = fetch_event(w);
	if (status != 0) {
		if (status < 0)
			return status;
		status = proceed_event(w, b);
		/* blocks made on the way to an event: their last instruction */
		if (b->ninsn && status != TC_PT_WALK_FALLBACK) {
			struct tc_pt_insn i;

			if (!decode(w, b->end_ip, b->mode, &i))
				return FB;
			*last_size = i.size;
			*last_class = (enum pt_insn_class)i.iclass;
		}
		return status;
	}
	if (!w->enabled)
		return (w->status & pts_eos) ? -pte_eos : FB;
	status = proceed_no_event(w, b, last_size, last_class);
	if (status < 0)
		return status;
	return trailing_event(w);
}

int tc_pt_walk_event(struct tc_pt_walk *w, struct pt_event *uev)
{
	struct pt_event *ev = &w->ev;

	if (!w->process_event)
		return FB;
	switch (ev->type) {
	case ptev_enabled:
		if (ev->variant.enabled.ip == w->ip)
			ev->variant.enabled.resumed = 1;
		if (ev->status_update || ev->ip_suppressed || w->enabled)
			return FB;
		w->ip = ev->variant.enabled.ip;
		w->enabled = true;
		break;
	case ptev_async_disabled:
		if (w->ip != ev->variant.async_disabled.at)
			return FB;
		/* fall through */
	case ptev_disabled:
		if (ev->status_update || !w->enabled)
			return FB;
		w->enabled = false;
		break;
	case ptev_async_branch:
		if (w->ip != ev->variant.async_branch.from || ev->status_update || !w->enabled)
			return FB;
		w->ip = ev->variant.async_branch.to;
		break;
	case ptev_async_paging:
		if (!ev->ip_suppressed && w->ip != ev->variant.async_paging.ip)
			return FB;
		break;
	case ptev_paging:
		break;
	case ptev_async_vmcs:
		if (!ev->ip_suppressed && w->ip != ev->variant.async_vmcs.ip)
			return FB;
		break;
	case ptev_vmcs:
		break;
	case ptev_overflow:
		if (ev->status_update)
			return FB;
		if (ev->ip_suppressed) {
			w->enabled = false;
			w->ip = 0;
		} else {
			w->enabled = true;
			w->ip = ev->variant.overflow.ip;
		}
		break;
	case ptev_exec_mode:
		if (!ev->ip_suppressed && w->ip != ev->variant.exec_mode.ip)
			return FB;
		/* libipt's block cache gives a block in the mode it was first decoded in, the
		 * decoder's aside: other code is libipt's (pt_flow.c other_modes) */
		if (ev->variant.exec_mode.mode != ptem_64bit)
			return FB;
		if (ev->status_update && w->enabled && w->mode != ptem_unknown &&
		    w->mode != ev->variant.exec_mode.mode)
			return FB;
		w->mode = ev->variant.exec_mode.mode;
		break;
	case ptev_stop:
		if (ev->status_update || w->enabled)
			return FB;
		break;
	case ptev_exstop:
		if (!ev->ip_suppressed && w->enabled && w->ip != ev->variant.exstop.ip)
			return FB;
		break;
	case ptev_mwait:
		if (!ev->ip_suppressed && w->enabled && w->ip != ev->variant.mwait.ip)
			return FB;
		break;
	case ptev_pwre:
	case ptev_pwrx:
	case ptev_ptwrite:
	case ptev_cbr:
	case ptev_mnt:
	case ptev_tick:
		break;
	default:
		return FB;
	}
	w->process_event = false;
	*uev = *ev;
	return trailing_event(w);
}

void tc_pt_walk_cache_reset(struct tc_pt_walk_cache *c)
{
	forget_known(c);
	clear_own(c);
	marks_drop(c->base);
	c->base = NULL;
	c->nnos = 0;
	c->nadds = 0;
	c->log = c->log_lost = c->adds_lost = false;
}

void tc_pt_walk_cache_reuse(struct tc_pt_walk_cache *c)
{
	forget_known(c);
	c->nnos = 0;
	c->nadds = 0;
	c->log = c->log_lost = c->adds_lost = false;
}
