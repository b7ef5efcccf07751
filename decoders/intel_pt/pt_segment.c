#include "decoders/intel_pt/pt_session_priv.h"

#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decoders/intel_pt/pt_config.h"
#include "decoders/intel_pt/pt_flow.h"
#include "decoders/intel_pt/pt_skim.h"
#include "decoders/intel_pt/pt_walk.h"
#include "decoders/jobs.h"
#include "lib/images/images.h"
#include "lib/util/grow.h"

/* ---- --jobs: each queue's buffers cut at PSBs (segments), without time or one queue ----
 * Without time one thread decodes each queue whole, in turn; so do the segments: the
 * queues one after the other, each with marks and sections of its own (as one thread
 * gives each a flow of its own). Without time (no ticks, the fast walk: pt_flow's
 * ops.segment), a buffer is cut at PSBs
 * giving about SEG_OUT bytes of output each, and each segment decodes in a worker from its PSB alone,
 * formatting its records (the lanes), speculatively: the caller's thread joins them in
 * order, each against the flow that decoded the segment before it (the true one: it
 * paused at the first status update past the segment's PSB, with its event kept). That
 * flow goes on by one block (tc_pt_flow_step_block); the segment is taken if its state at
 * its first block is the true flow's there (the walk's IP, mode, status, event fetched,
 * query offset; the flow's last instruction and range end; no time), nothing before that
 * block made a record or touched the flow, it never gave up (an empty return stack popped
 * gives up: the true one could have popped a call from before the PSB), and no mark of
 * libipt's block cache it found missing was in the true set (the joined segments'
 * marks, pt_walk.h). Then only the range in flight differs: the segment's first range
 * record (kept back) gets the true range's start and its instructions, and the counts are
 * the true flow's to its first block and the segment's after. Where it differs only in
 * marks or sections the true set has more of (new code met by the segment before), it
 * and those in flight are made again with them (seg_respin), a few times at most.
 * Otherwise the segment is dropped and the true flow decodes it here, on to the next
 * one's PSB. A segment's walk cache (its blocks) and x86 decoder come from a pool (kits),
 * warm: the code read is the same for every segment of a process.
 * The flows share libipt's section cache (one isid per file section, for the marks) and
 * never use libipt's block decoder there: where the true flow's walk gives up, the queue
 * is decoded again from its start here, as with one thread, its first records (those
 * written already, the same) left out. Each segment flow reads code in a context of its
 * own (address spaces), one of a few lent in turn. Of every --jobs segments after a
 * queue's first, the caller's thread decodes one itself as the true flow (its turn:
 * seg_turn), from where the one before it was joined, its output straight out; the
 * workers (one fewer) decode the others. */
/* With time one queue is cut so too (one thread's trace, perf record's default for a
 * program), and so are several per-thread queues that come one after the other, in that
 * order (seg_in_time_order; one thread's decode, by time, runs each whole then, with
 * libipt's tick events, as the segments' flows do: the join compares the events' time):
 * libipt's time at a segment's first block is the PSB+'s TSC moved on by the
 * packets since, as the flow's before it (pt_walk.h, without CYC; the join compares);
 * side-band comes by time: each segment reads with what the true flow had applied when
 * it was made (its era), is not taken if it would apply more or the true flow has (it is
 * made again then: seg_respin), and the true flow applies it as one thread's does
 * (seg_thread). A later buffer's records before its first PSB have the time the one
 * before ended with: the true flow's to make. */
static const uint8_t psb_bytes[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
				       0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };

/* The buffer offset of the first PSB at or after at in b, UINT64_MAX if none. */
static uint64_t psb_next(const struct buf *b, uint64_t at)
{
	const uint8_t *p;

	if (at >= b->size ||
	    !(p = memmem(b->data + at, b->size - at, psb_bytes, sizeof(psb_bytes))))
		return UINT64_MAX;
	return (uint64_t)(p - b->data);
}

#define SEG_MIN (4u << 10)	/* trace bytes in a segment, at least */
#define SEG_MAX (1u << 20)
#define SEG_OUT (2u << 20)	/* output bytes of a segment, about */
#define RESPINS 3	/* times a segment is made again (seg_respin), at most */
#define SEG_BUDGET (16u << 20)	/* formatted bytes the segments hold unread, about */
#define SEG_FLIGHT_MIN 3	/* segments in flight, whatever their bytes: two workers busy
				 * while the oldest is joined */

struct seg_ctx {
	struct tc_pt_session *s;
	struct queue *q;
	struct tc_images *im;
	size_t sb_at;		/* the side-band in im (or to apply when it is made) */
	bool busy;
};

/* A writer: a lane's (its segments, one after the other in the order they are joined,
 * format there: its symbols' cache stays warm, and its blocks hold bytes in that order),
 * or the caller's thread's (the true flow's). */
struct seg_wr {
	void *w;
	bool wfail;
	unsigned nw;
	uint64_t woff;
	struct seg_ctx *c;	/* where its symbols come from now */
	uint64_t space;		/* what they are now (seg_wspace) */
} __attribute__((aligned(64)));	/* each thread's own cache lines: they are written per record */

/* What a segment's flow needs that costs to make and warms up with use: the walk's cache
 * (its blocks: the code read is the same for every segment of a queue) and the x86 decoder (its
 * memo). Lent to a segment's flow, back when the flow goes. */
struct seg_kit {
	struct tc_pt_walk_cache *wc;
	struct tc_x86 *x86;
	size_t era;		/* the side-band its blocks were read with */
};

struct segs;
struct seg {
	struct tc_pt_session *s;
	struct segs *ss;
	struct queue *q;
	struct seg_ctx *c;
	struct seg_wr *wr;
	struct tc_pt_flow *d;
	struct seg_kit kit;
	const struct buf *b;
	uint64_t from, to;	/* PSB (UINT64_MAX: the buffer's start), next segment's PSB */
	bool at_psb;
	int pid, tid;		/* !at_psb: the thread it began with (the true flow's, if taken) */
	struct tc_jobs_out *out;	/* in its task; NULL: bytes put at once */
	bool odd;		/* a record the segments do not make (ADDR_NACC) */
	/* With time: the side-band its reads see (era: how much of it); the true flow's
	 * moves on as one thread's would (truth), a speculative one's never does (era_odd:
	 * it would have, not taken). space: its flow's ops.space. */
	size_t era;
	bool truth, era_odd;
	uint64_t space;
	unsigned respun;	/* made again with the true set's marks (seg_respin) */
	uint64_t nrec, ncounted;
	bool held_done, have_held;
	struct tc_rec held;
	struct tc_pt_flow_stats base;
	bool failed;
	struct tc_err err;
	size_t lane;
	/* the tail's first true flow: the lanes' q->d, its records theirs (tc_pt_lanes_emit),
	 * its reads q's images, its side-band q's (sb_next); the lanes' again if not joined */
	bool borrowed;
	bool here;		/* no flow: the true flow's to decode */
	uint64_t ns;		/* a worker's time decoding it (seg_task), for the turns */
};

struct segs {
	struct tc_pt_session *s;
	/* contexts: [0] the caller's thread's (the true flow's), the others lent to tasks */
	struct seg_ctx *ctx;
	size_t nctx;
	struct seg_wr *wr;	/* [0] the caller's thread's, [1 + lane] the lanes' */
	size_t nwr;
	pthread_mutex_t mu;
	uint64_t wspace;	/* the writers' (their symbols): the queue's */
	size_t era, era0;	/* the true flow's side-band (struct seg), the queue's first */
	struct tc_images **old;	/* contexts' images let go of (seg_ctx_era), kept to the end */
	size_t nold, capold;
	struct pt_image_section_cache *iscache;
	bool own_iscache;
	struct tc_pt_walk_cache *master;
	struct tc_pt_flow_stats acc;
	uint64_t written;	/* records put */
	uint64_t drop;		/* the redo's records yet to leave out */
	struct seg_kit pool[32];	/* kits to lend again */
	size_t npool;
	uint64_t out_bytes, trace_bytes;	/* put, and the trace they came from */
	uint64_t rate;		/* output bytes per trace byte of the last segment read */
	struct tc_pt_flow_sec *secs;	/* libipt's file sections the true flow has */
	size_t nsecs, capsecs;
	bool lost;		/* out of memory: the queue is decoded again */
	/* the caller's turns (seg_turn): its share (decoders/jobs.h), how it follows the work */
	unsigned share, credit;
	unsigned joins, nwin;	/* workers' segments joined, and in the window */
	uint64_t win_at, win_wait, win_work;	/* the window's start, the caller's waits
						 * for output, the workers' decoding (ns) */
};

/* The sections d has that the true set lacks: added to it. */
static void seg_add_secs(struct segs *ss, const struct tc_pt_flow *d)
{
	const struct tc_pt_flow_sec *x;
	size_t n = tc_pt_flow_sections(d, &x);

	for (size_t i = 0; i < n; i++) {
		size_t k;

		for (k = 0; k < ss->nsecs && ss->secs[k].isid != x[i].isid; k++)
			;
		if (k < ss->nsecs)
			continue;
		if (tc_grow((void **)&ss->secs, &ss->capsecs, ss->nsecs + 1, sizeof(*ss->secs))) {
			ss->lost = true;
			return;
		}
		ss->secs[ss->nsecs++] = x[i];
	}
}

/* Did the speculative flow g find no section wherever the true flow had one of x (n)? */
static bool seg_secs_same(const struct tc_pt_flow *g, const struct tc_pt_flow_sec *x, size_t n)
{
	const uint64_t *ips;
	size_t nm = tc_pt_flow_section_misses(g, &ips);

	if (nm == SIZE_MAX)
		return false;
	for (size_t i = 0; i < nm; i++)
		for (size_t k = 0; k < n; k++)
			if (ips[i] >= x[k].start && ips[i] < x[k].end)
				return false;
	return true;
}

static struct tc_images *seg_images(struct seg_ctx *c)
{
	return c->im ? c->im : (c->im = tc_pt_session_images_new(c->s, c->sb_at));
}

/* Context c (its user's thread's) as a flow at era reads: the side-band before it applied,
 * the images made again if they had more (those kept to the end: writers' symbols may
 * point into them). -1: out of memory. */
static int seg_ctx_era(struct segs *ss, struct seg_ctx *c, size_t era)
{
	if (c->im && c->sb_at < era) {
		for (size_t i = c->sb_at; i < era; i++)
			tc_pt_session_apply_sb_to(c->s, c->im, &c->s->sb[i]);
	} else if (c->im && c->sb_at > era) {
		int ret;

		pthread_mutex_lock(&ss->mu);
		ret = tc_grow((void **)&ss->old, &ss->capold, ss->nold + 1, sizeof(*ss->old));
		if (!ret)
			ss->old[ss->nold++] = c->im;
		pthread_mutex_unlock(&ss->mu);
		if (ret)
			return -1;
		c->im = NULL;
	}
	c->sb_at = era;
	return 0;
}

/* The writers' space at era: a new queue or era, symbols found again. */
static uint64_t seg_wspace(const struct segs *ss, size_t era)
{
	return (ss->wspace << 32) + era;
}

static size_t seg_read(void *ctx, int cpu, uint64_t cr3, uint64_t addr, uint8_t *buf, size_t len)
{
	struct seg *g = ctx;
	struct tc_images *im = seg_images(g->c);

	(void)cpu;
	(void)cr3;
	return im ? tc_images_read(im, g->q->pid, addr, buf, len) : 0;
}

static int seg_span(void *ctx, int cpu, uint64_t cr3, uint64_t addr, struct tc_pt_flow_span *sp)
{
	struct seg *g = ctx;
	struct tc_images *im = seg_images(g->c);
	struct tc_images_span is;

	(void)cpu;
	(void)cr3;
	if (!im || tc_images_span(im, g->q->pid, addr, &is))
		return -1;
	*sp = (struct tc_pt_flow_span){ is.path, is.start, is.len, is.offset };
	return 0;
}

static uint64_t seg_space(void *ctx)
{
	const struct seg *g = ctx;

	return g->space;
}

/* With time (one per-thread queue), the side-band up to then applies, as in one thread
 * (pt_session.c's thread_cb): the true flow's reads see it from now on; a speculative
 * flow's era is the true one's when it was made, and it is not taken if it would apply
 * more (it stops). */
static void seg_thread(void *ctx, int cpu, uint64_t cr3, const struct tc_pt_flow_time *t,
		       int *pid, int *tid)
{
	struct seg *g = ctx;
	const struct tc_pt_session *s = g->s;
	size_t era;

	(void)cpu;
	(void)cr3;
	if (!s->pt.per_cpu_mmaps) {	/* without time only a per-thread queue knows */
		*pid = g->q->pid;
		*tid = g->q->tid;
	}
	if (!t->has_tsc || s->pt.timeless)
		return;
	era = tc_pt_session_sb_until(s, g->era, t->perf_time);
	if (era == g->era)
		return;
	if (!g->truth) {
		g->era_odd = true;
		tc_pt_flow_abort(g->d);
		return;
	}
	if (seg_ctx_era(g->ss, g->c, era))
		g->odd = true;	/* out of memory: decoded again */
	g->era = era;
	g->space++;	/* what the flow knew of the code goes, as in one thread */
	g->wr->space = seg_wspace(g->ss, era);
}

/* The writer's symbols, in its context. */
static int seg_sym(void *ctx, int pid, uint64_t addr, struct tc_images_sym *sym)
{
	struct seg_ctx *c = ((struct seg_wr *)ctx)->c;
	struct tc_images *im = seg_images(c);

	return im ? tc_images_symbol(im, pid < 0 ? c->q->pid : pid, addr, sym) : -1;
}

/* The bytes formatted since the last take: items of the task, or out at once. */
static void seg_take(struct seg *g)
{
	const struct tc_jobs_writer *lw = g->s->lw;
	struct seg_wr *c = g->wr;
	struct bytes_item b = { .kind = IT_BYTES, .offset = c->woff };

	c->nw = 0;
	if (!c->w)
		return;
	while ((b.n = lw->take(c->w, &b.bytes, &b.block)) || b.block) {
		if (!g->out) {
			lw->put(lw->ctx, b.bytes, b.n, b.offset, b.block);
			g->ss->out_bytes += b.n;
			continue;
		}
		if (tc_jobs_put(g->out, &b, sizeof(b)))
			continue;	/* lost: tc_jobs_failed says so */
		tc_jobs_charge(g->out, b.n);
	}
}

static void seg_write(struct seg *g, const struct tc_rec *r)
{
	const struct tc_jobs_writer *lw = g->s->lw;
	struct seg_wr *c = g->wr;

	if (!c->w) {
		if (c->wfail)
			return;
		if (!(c->w = lw->open(lw->ctx, seg_sym, c, &c->space))) {
			c->wfail = true;
			return;
		}
	}
	lw->write(c->w, r);
	c->woff = r->offset;
	g->nrec++;
	if (++c->nw >= TAKE_RECS)
		seg_take(g);
}

static void seg_emit(void *ctx, const struct tc_rec *r)
{
	struct seg *g = ctx;

	if (r->type == (g->s->o.branches ? TC_REC_RANGE : TC_REC_BRANCH))
		return;
	if (r->type == TC_REC_ADDR_NACC) {
		g->odd = true;	/* the block decoder's: never made here */
		return;
	}
	if (!g->held_done) {
		/* a segment from a PSB: its first range may join the one in flight there */
		g->held_done = true;
		if (r->type == TC_REC_RANGE) {
			g->held = *r;
			g->have_held = true;
			return;
		}
	}
	seg_write(g, r);
}

static uint64_t seg_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void seg_task(void *arg, struct tc_jobs_out *out)
{
	struct seg *g = arg;
	struct segs *ss = g->ss;
	struct mark m = { IT_END, 0, 0 };
	uint64_t t0 = seg_now();
	int r;

	/* a context no other task reads in now (as many as workers, and the caller's) */
	pthread_mutex_lock(&ss->mu);
	for (size_t i = 1; i < ss->nctx && !g->c; i++)
		if (!ss->ctx[i].busy) {
			g->c = &ss->ctx[i];
			g->c->busy = true;
		}
	pthread_mutex_unlock(&ss->mu);
	g->wr->c = g->c;
	if (!g->c) {
		g->failed = true;
		tc_err_set(&g->err, EINVAL, "Intel PT segments: no context free");
		tc_jobs_put(out, &m, sizeof(m));
		return;
	}
	g->wr->space = seg_wspace(ss, g->era);
	g->out = out;
	if (seg_ctx_era(ss, g->c, g->era)) {
		g->failed = true;
		tc_pt_session_nomem(&g->err);
	} else {
		/* (a following buffer's head is never a segment's: the buffer before's) */
		if (g->at_psb || !g->b->follows)
			tc_pt_session_follow(g->q, (size_t)(g->b - g->q->bufs), g->d);
		if (tc_pt_flow_begin_at(g->d, g->b->data, g->b->size, g->b->offset, g->from,
					&g->err)) {
			g->failed = true;
		} else {
			tc_pt_flow_stop_at(g->d, g->to);
			do
				r = tc_pt_flow_run(g->d, UINT64_MAX);
			while (r == 1 && !tc_pt_flow_paused(g->d));
		}
	}
	g->held_done = true;	/* from now on the true flow's, if taken */
	seg_take(g);
	g->out = NULL;
	pthread_mutex_lock(&ss->mu);
	g->c->busy = false;
	g->c = &ss->ctx[0];	/* as the true flow, in the caller's thread */
	g->wr = &ss->wr[0];
	pthread_mutex_unlock(&ss->mu);
	g->ns = seg_now() - t0;	/* read once the caller has the end mark */
	/* the last of g touched here: once the caller has the mark, g may be let go of */
	tc_jobs_put(out, &m, sizeof(m));
}

/* A segment's flow and writer go (its bytes put or dropped already). */
static void seg_free(struct segs *ss, struct seg *g)
{
	if (!g || g->borrowed || g->here) {
		free(g);
		return;
	}
	if (g->d)
		g->kit.wc = tc_pt_flow_take_walk_cache(g->d);
	g->kit.era = g->era;
	tc_pt_flow_free(g->d);	/* before its x86 decoder goes */
	if (g->kit.wc && g->kit.x86 && ss->npool < sizeof(ss->pool) / sizeof(ss->pool[0])) {
		ss->pool[ss->npool++] = g->kit;
	} else {
		tc_pt_walk_cache_free(g->kit.wc);
		tc_x86_free(g->kit.x86);
	}
	free(g);
}

/* Did g (a later buffer's first) begin with the thread and CR3 the true flow ended the buffer
 * before with? */
static bool seg_thread_same(const struct seg *g, const struct tc_pt_flow *truth)
{
	int pid, tid;
	uint64_t cr3;

	tc_pt_flow_thread(truth, &pid, &tid, &cr3);
	return pid == g->pid && tid == g->tid && cr3 == TC_PT_FLOW_NO_CR3;
}

static struct seg *seg_new(struct segs *ss, struct queue *q, const struct buf *b, uint64_t from,
			   uint64_t to, size_t nsecs, struct tc_err *e)
{
	struct tc_pt_session *s = ss->s;
	struct seg *g = calloc(1, sizeof(*g));
	struct tc_pt_flow_ops ops = { .read = seg_read, .emit = seg_emit, .thread = seg_thread,
		.span = seg_span, .space = seg_space, .ctx = g,
		.skip = 1u << (s->o.branches ? TC_REC_RANGE : TC_REC_BRANCH),
		.segment = true, .iscache = ss->iscache, .ticks = tc_pt_session_by_time(s) };
	struct tc_pt_walk_cache *wc;

	if (!g) {
		tc_pt_session_nomem(e);
		return NULL;
	}
	if (ss->npool) {
		g->kit = ss->pool[--ss->npool];
		tc_pt_walk_cache_reuse(g->kit.wc);	/* the marks: the true set's, below */
		if (g->kit.era != ss->era)
			tc_pt_walk_cache_forget(g->kit.wc);	/* its blocks: other code */
	} else if (!(g->kit.wc = tc_pt_walk_cache_new()) || !(g->kit.x86 = tc_x86_new())) {
		tc_pt_session_nomem(e);
		seg_free(ss, g);
		return NULL;
	}
	ops.x86 = g->kit.x86;
	g->s = s;
	g->ss = ss;
	g->q = q;
	g->b = b;
	g->from = from;
	g->to = to;
	g->at_psb = from != UINT64_MAX;
	g->held_done = !g->at_psb;
	g->era = ss->era;
	if ((g->d = tc_pt_flow_new(&s->pt.cfg, &s->pt.tc, q->cpu, &ops, e))) {
		tc_pt_flow_set_walk_cache(g->d, g->kit.wc);
		g->kit.wc = NULL;	/* the flow's until seg_free */
		/* a later buffer's: the thread carries over from the buffer before (records
		 * before its first PSB have it); without time, a per-thread queue's once the
		 * trace synchronised */
		g->pid = g->tid = -1;
		if (!g->at_psb && b != q->bufs && !s->pt.per_cpu_mmaps) {
			g->pid = q->pid;
			g->tid = q->tid;
		}
		tc_pt_flow_set_thread(g->d, g->pid, g->tid);
	}
	if (!g->d || !(wc = tc_pt_flow_walk_cache(g->d)) || tc_pt_walk_cache_copy(wc, ss->master)) {
		if (g->d)
			tc_pt_session_nomem(e);
		seg_free(ss, g);
		return NULL;
	}
	tc_pt_walk_cache_log(wc);
	if (tc_pt_flow_add_sections(g->d, ss->secs, nsecs)) {
		tc_pt_session_nomem(e);
		seg_free(ss, g);
		return NULL;
	}
	return g;
}

static void seg_add_stats(struct tc_pt_flow_stats *a, const struct tc_pt_flow_stats *x,
			  const struct tc_pt_flow_stats *base)
{
	a->insns += x->insns - base->insns;
	a->ranges += x->ranges - base->ranges;
	a->branches += x->branches - base->branches;
	a->errors += x->errors - base->errors;
	a->nomap += x->nomap - base->nomap;
	a->overflows += x->overflows - base->overflows;
	a->syncs += x->syncs - base->syncs;
	a->unsynced_bytes += x->unsynced_bytes - base->unsynced_bytes;
}

/* g's records put so far count as written. */
static void seg_count(struct segs *ss, struct seg *g)
{
	uint64_t n = g->nrec + (g->borrowed ? g->q->nrec : 0);

	ss->written += n - g->ncounted;
	g->ncounted = n;
}

/* A borrowed true flow's side-band, as its thread callback (pt_session.c's) left it: the
 * caller's thread's context and writer follow. */
static void seg_borrowed_era(struct segs *ss, struct seg *g)
{
	if (g->era == g->q->sb_next)
		return;
	g->era = g->q->sb_next;
	if (seg_ctx_era(ss, g->c, g->era))
		g->odd = true;	/* out of memory: decoded again */
	g->wr->space = seg_wspace(ss, g->era);
}

/* The true flow t's side-band is the segments' from now on: the sections of another era
 * are not the true set's (its flow let go of them, as one thread's does). */
static void seg_settle(struct segs *ss, const struct seg *t)
{
	if (ss->era != t->era) {
		ss->era = t->era;
		ss->nsecs = 0;
	}
}

/* The true flow g decodes here (its records out at once) until it pauses or ends. */
static void seg_run_here(struct segs *ss, struct seg *g)
{
	/* its marks are the true set's less those joined since it began: the true set */
	seg_settle(ss, g);	/* (its begin may have applied side-band) */
	if (tc_pt_walk_cache_copy(tc_pt_flow_walk_cache(g->d), ss->master) ||
	    tc_pt_flow_add_sections(g->d, ss->secs, ss->nsecs))
		g->odd = true;	/* out of memory: decoded again */
	g->out = NULL;
	while (tc_pt_flow_run(g->d, UINT64_MAX) == 1 && !tc_pt_flow_paused(g->d))
		;
	seg_take(g);
	if (g->borrowed) {
		tc_pt_lanes_take(g->q);	/* no task of its lane now: put at once */
		seg_borrowed_era(ss, g);
	}
	seg_count(ss, g);
	if (tc_pt_walk_cache_merge_new(ss->master, tc_pt_flow_walk_cache(g->d)))
		g->odd = true;
	seg_settle(ss, g);
	seg_add_secs(ss, g->d);
}

/* ... until it pauses at the PSB to (a segment's end): true where the queue must be decoded
 * again (its walk gave up, or it ran out of memory). */
static bool seg_run_to(struct segs *ss, struct seg *t, uint64_t to)
{
	tc_pt_flow_stop_at(t->d, to);
	seg_run_here(ss, t);
	return tc_pt_flow_gave_up(t->d) || t->odd;
}

/* The redo's records: those written already left out. */
static void redo_emit(void *ctx, const struct tc_rec *r)
{
	struct seg *g = ctx;
	struct segs *ss = g->ss;
	struct tc_pt_session *s = g->s;

	if (r->type == TC_REC_ADDR_NACC) {
		tc_pt_session_count_nacc(s, seg_images(g->c), g->q->pid, r);
		if (r->value)
			return;
	}
	if (r->type == (s->o.branches ? TC_REC_RANGE : TC_REC_BRANCH))
		return;
	if (ss->drop) {
		ss->drop--;
		return;
	}
	seg_write(g, r);
}

/* The queue again from its start, as one thread decodes it, the records written already
 * left out: its counts are the queue's. */
static int seg_redo(struct segs *ss, struct queue *q, struct tc_err *e)
{
	struct tc_pt_session *s = ss->s;
	struct seg g = { .s = s, .ss = ss, .q = q, .c = &ss->ctx[0], .wr = &ss->wr[0],
			 .held_done = true, .truth = true, .era = ss->era0 };
	struct tc_pt_flow_ops ops = { .read = seg_read, .emit = redo_emit, .thread = seg_thread,
		.span = seg_span, .space = seg_space, .ctx = &g,
		.skip = 1u << (s->o.branches ? TC_REC_RANGE : TC_REC_BRANCH),
		.ticks = tc_pt_session_by_time(s) };
	int ret = 0;

	ss->drop = ss->written;
	if (seg_ctx_era(ss, g.c, g.era))
		return tc_pt_session_nomem(e);
	g.wr->space = seg_wspace(ss, g.era);
	if (!(g.d = tc_pt_flow_new(&s->pt.cfg, &s->pt.tc, q->cpu, &ops, e)))
		return -1;
	for (size_t i = 0; i < q->nbufs && !ret; i++) {
		tc_pt_session_follow(q, i, g.d);
		ret = tc_pt_flow_feed(g.d, q->bufs[i].data, q->bufs[i].size, q->bufs[i].offset, e);
		seg_take(&g);
	}
	memset(&ss->acc, 0, sizeof(ss->acc));
	seg_add_stats(&ss->acc, tc_pt_flow_stats(g.d), &ss->acc);
	tc_pt_flow_free(g.d);
	return ret;
}

/* The items of g's task (its bytes, kept until the join decides), to its end. */
struct seg_items {
	struct bytes_item *b;
	size_t n, cap;
};

static int seg_collect(struct segs *ss, struct seg *g, struct seg_items *it)
{
	const void *p;
	size_t len;

	it->n = 0;
	while (tc_jobs_next(ss->s->par, g->lane, &p, &len) == 1) {
		if ((tc_jobs_tag(p) & IT_KIND) == IT_END)
			return 0;
		if ((tc_jobs_tag(p) & IT_KIND) != IT_BYTES)
			continue;
		if (tc_grow((void **)&it->b, &it->cap, it->n + 1, sizeof(*it->b)))
			return -1;
		memcpy(&it->b[it->n++], p, sizeof(*it->b));
	}
	return -1;
}

/* Out (or dropped: no bytes, the blocks let go of). */
static void seg_put_items(struct segs *ss, const struct seg_items *it, bool out)
{
	const struct tc_jobs_writer *lw = ss->s->lw;

	for (size_t i = 0; i < it->n; i++) {
		lw->put(lw->ctx, it->b[i].bytes, out ? it->b[i].n : 0, it->b[i].offset,
			it->b[i].block);
		if (out)
			ss->out_bytes += it->b[i].n;
	}
}

/* Turns: of the segments after a queue's first the caller's thread decodes some itself, as
 * the true flow (it would otherwise wait for the oldest to be joined), the workers the
 * others: --jobs threads decode, the output of the caller's straight out, the others'
 * held until joined (ptq.data's 4 queues: peak RSS 61 -> 42 MB, the time the same; each
 * held segment is a PSB interval's, 9 MB of JSON there).
 * The caller's share is one in --jobs to begin with, then follows how the threads fare:
 * over each TURN_WINDOW workers' segments joined, the time the caller waited for their
 * output against the time each worker idled (the window's span less its part of their
 * decoding; tc_jobs_share_step). Cores are seldom alike: this host's two vCPUs differed
 * by 1.2x to 1.6x for minutes (the host's other load), and a share of one in two then
 * kept the faster one waiting (pt.data --jobs 2: 2.32 s, 1.83 s so, --jobs 1 2.6 s; with
 * the workers on a core they shared with a busy loop, 4.0 s and 3.0 s). Not before
 * TURN_SETTLE joins: the first segments cost new memory, cold caches and the images'
 * symbols, not what the cores give later. */
#define TURN_WINDOW 8
#define TURN_SETTLE 16

static bool seg_turns(const struct tc_pt_session *s)
{
	return !s->o.segment_workers_only;
}

/* Is the segment from PSB from (UINT64_MAX: a buffer's start) the caller's? t: the true
 * flow, if any yet. */
static bool seg_turn(struct segs *ss, const struct seg *t, uint64_t from)
{
	if (!seg_turns(ss->s) || !t || from == UINT64_MAX)
		return false;
	if ((ss->credit += ss->share) < TC_JOBS_SHARE_ONE)
		return false;
	ss->credit -= TC_JOBS_SHARE_ONE;
	return true;
}

/* A worker's segment g was joined, its output read in waited ns: the caller's share
 * follows the window's balance (above). A queue's first (first: decoded alone, counted in
 * no window) begins a window. */
static void seg_turn_adapt(struct segs *ss, const struct seg *g, uint64_t waited, bool first)
{
	uint64_t now, span, work;

	if (!seg_turns(ss->s))
		return;
	now = seg_now();
	if (!first && ++ss->joins > TURN_SETTLE) {
		ss->win_wait += waited;
		ss->win_work += g->ns;
		if (++ss->nwin < TURN_WINDOW)
			return;
		span = now - ss->win_at;
		work = ss->win_work / (ss->s->o.jobs - 1);	/* (segments: --jobs 2 or more) */
		ss->share = tc_jobs_share_step(ss->share, ss->s->o.jobs, ss->win_wait,
					       span > work ? span - work : 0, span);
	}
	/* a window begins */
	ss->win_at = now;
	ss->win_wait = ss->win_work = 0;
	ss->nwin = 0;
}

/* Trace bytes in a segment: about SEG_OUT bytes of output, as far as the segments joined
 * tell, between SEG_MIN and SEG_MAX. */
static uint64_t seg_len(const struct segs *ss)
{
	uint64_t len;

	if (ss->s->o.segment_bytes)
		return ss->s->o.segment_bytes;
	if (ss->trace_bytes < SEG_MIN || !ss->out_bytes)
		return SEG_MIN;
	len = SEG_OUT / (ss->out_bytes / ss->trace_bytes + 1);
	return len < SEG_MIN ? SEG_MIN : len > SEG_MAX ? SEG_MAX : len;
}

static uint64_t seg_trace(const struct seg *g)
{
	return (g->to == UINT64_MAX ? g->b->size : g->to) - (g->from == UINT64_MAX ? 0 : g->from);
}

/* Output bytes per trace byte, about: the segments' so far, or the last one's if more
 * (the trace's start, the loader's code, gives less than a program's loop). */
static uint64_t seg_rate(const struct segs *ss)
{
	uint64_t avg = ss->trace_bytes ? ss->out_bytes / ss->trace_bytes + 1 : 0;

	return avg > ss->rate ? avg : ss->rate;
}

/* Is there room for one more segment in flight? The window's, and the budget's: a
 * segment's bytes are all held until it is joined (the jobs' budget counts them only until
 * the caller reads them, at the join), so the bytes of those in flight, about, are kept
 * within SEG_BUDGET whatever the workers (--jobs 4 holds no more than --jobs 2), but for
 * the first SEG_FLIGHT_MIN. */
static bool seg_room(const struct segs *ss, struct seg *const *fl, size_t head, size_t nfl,
		     size_t window)
{
	uint64_t trace = seg_len(ss);

	if (nfl >= window)
		return false;
	for (size_t k = 0; k < nfl; k++)
		trace += seg_trace(fl[(head + k) % window]);
	return nfl < SEG_FLIGHT_MIN || trace * seg_rate(ss) <= SEG_BUDGET;
}

/* The buffer offset of the next segment's PSB: the first at least len past at (the
 * previous one's, or the first PSB's), UINT64_MAX if none. Found as the segments are
 * submitted: the trace is read (into memory) only a window ahead. */
static uint64_t seg_cut(const struct segs *ss, const struct buf *b, uint64_t at, uint64_t len)
{
	if (at == UINT64_MAX) {
		if ((at = psb_next(b, 0)) == UINT64_MAX)
			return UINT64_MAX;
		/* with time the records before it have the time the buffer before ended
		 * with, and where it follows on they are the buffer before's (its tail): the
		 * true flow's to make (never taken), no more than them */
		if (at && (!ss->s->pt.timeless || b->follows) && b != ss->s->cur->bufs)
			return at;
	}
	return psb_next(b, at + len);
}

/* The segments in flight fl[head..] (n of them) were made with marks and sections the
 * true set has more of now (a segment before them found missing what the one before it
 * marked: the new code it met is theirs too, most likely): each is stopped at its next
 * block, its bytes dropped, and made again from its PSB with the true set as it is now;
 * the first with the sections the true flow had at its PSB (head_secs of them: those the
 * true flow added at its first block it had not there). -1 on a failure (*e). */
static int seg_respin(struct segs *ss, struct seg **fl, size_t head, size_t n, size_t window,
		      size_t head_secs, struct seg_items *it, struct tc_err *e)
{
	for (size_t k = 1; k < n; k++)
		if (!fl[(head + k) % window]->here)
			tc_pt_flow_abort(fl[(head + k) % window]->d);
	for (size_t k = 0; k < n; k++) {
		size_t i = (head + k) % window;
		struct seg *o = fl[i], *g;

		if (o->here)
			continue;	/* the true flow's still */

		/* the first was read to its end already */
		if (k && seg_collect(ss, o, it))
			return tc_pt_session_nomem(e);
		if (k)
			seg_put_items(ss, it, false);
		struct queue *q = o->q;
		const struct buf *b = o->b;
		uint64_t from = o->from, to = o->to;
		size_t lane = o->lane;
		unsigned respun = o->respun;

		/* its kit back first, to be made again with it: warm (its blocks, its memory) */
		seg_free(ss, o);
		fl[i] = NULL;	/* (dropped with those in flight: nothing to read) */
		if (!(g = seg_new(ss, q, b, from, to, k ? ss->nsecs : head_secs, e)))
			return -1;
		g->lane = lane;
		g->wr = &ss->wr[1 + g->lane];
		g->respun = respun + 1;
		fl[i] = g;
		if (tc_jobs_submit(ss->s->par, g->lane, seg_task, NULL, g))
			return tc_pt_session_nomem(e);	/* g goes with those in flight */
	}
	return 0;
}

/* One queue, its buffers in turn, each in segments. -1 only on a setup failure. With t0
 * (borrowed: the tail), from its PSB at0 of buffer bi0 on, that flow paused there: 1 if a
 * segment would not join it (nothing written but by it, all else dropped). */
static int seg_queue(struct segs *ss, struct queue *q, size_t window, struct seg *t0,
		     size_t bi0, uint64_t at0, struct tc_err *e)
{
	struct tc_pt_session *s = ss->s;
	struct seg **fl = NULL;	/* the segments in flight, in order */
	struct seg *t = t0;	/* the true flow: the last segment joined */
	struct seg_items it = { 0 };
	size_t lane = 0;
	bool redo = false, bail = false;
	int ret = 0;

	if (!(fl = calloc(window, sizeof(*fl))))
		return tc_pt_session_nomem(e);
	q->s = s;
	if (!s->pt.per_cpu_mmaps) {
		q->tid = q->key;
		q->pid = tc_pt_session_pid_of(s, q->key);
	}
	for (size_t bi = t0 ? bi0 : 0; bi < q->nbufs && !redo && !ret && !bail; bi++) {
		const struct buf *b = &q->bufs[bi];
		/* the next segment's start: 0 the buffer's, UINT64_MAX none */
		uint64_t cut = t0 && bi == bi0 ? at0 : 0;
		size_t head = 0, nfl = 0;
		bool more = true, first_joined = false;
		bool stepped = false;	/* the true flow is at the oldest's first block */
		size_t psb_secs = 0;	/* ... and had these of the true set's sections at its PSB */
		size_t psb_era = 0;

		q->behind.from = b->offset;
		while ((more || nfl) && !redo && !ret && !bail) {
			/* the trace before the true flow's segment is done with */
			if (t && t->b == b && t->from != UINT64_MAX)
				tc_perf_data_behind(s->pd, &q->behind, b->offset + t->from);
			/* submit while the window has room; only the buffer's first until it is
			 * joined: the segments after it would check their marks against the true
			 * set's, which it is most of early on (each found missing is a segment
			 * decoded again in order) */
			while (more && (first_joined ? seg_room(ss, fl, head, nfl, window) : !nfl)) {
				uint64_t from = cut ? cut : UINT64_MAX;
				uint64_t to = seg_cut(ss, b, from, seg_len(ss));
				struct seg *g;

				cut = to;
				more = to != UINT64_MAX;
				if (seg_turn(ss, t, from)) {
					/* the caller's turn: the true flow decodes it */
					if (!(g = calloc(1, sizeof(*g)))) {
						ret = tc_pt_session_nomem(e);
						break;
					}
					*g = (struct seg){ .s = s, .ss = ss, .q = q, .b = b, .from = from,
							   .to = to, .at_psb = true, .here = true };
					fl[(head + nfl++) % window] = g;
					continue;
				}
				if (!(g = seg_new(ss, q, b, from, to, ss->nsecs, e))) {
					ret = -1;
					break;
				}
				g->lane = lane++ % window;
				g->wr = &ss->wr[1 + g->lane];
				g->truth = !t;	/* the queue's first: true as it is */
				if (tc_jobs_submit(s->par, g->lane, seg_task, NULL, g)) {
					seg_free(ss, g);
					ret = tc_pt_session_nomem(e);
					break;
				}
				fl[(head + nfl++) % window] = g;
			}
			if (ret)
				break;
			/* join the oldest */
			struct seg *g = fl[head];
			bool take, lost;

			fl[head] = NULL;
			head = (head + 1) % window;
			nfl--;
			first_joined = true;
			if (!stepped)
				ss->trace_bytes += seg_trace(g);
			/* the caller's turn: the true flow decodes it here, its output straight
			 * out (none held) */
			if (g->here) {
				uint64_t to = g->to;

				s->st.segments_here++;
				seg_free(ss, g);
				if (!tc_pt_flow_paused(t->d))
					continue;	/* the true flow ended the buffer */
				redo = seg_run_to(ss, t, to);
				continue;
			}
			uint64_t t_join = seg_now();

			lost = seg_collect(ss, g, &it) != 0;
			if (!lost) {
				uint64_t n = 0;

				seg_turn_adapt(ss, g, seg_now() - t_join, !t);
				for (size_t i = 0; i < it.n; i++)
					n += it.b[i].n;
				ss->rate = n / (seg_trace(g) + 1) + 1;
			}
			if (lost || g->failed) {
				if (g->failed)
					*e = g->err;
				else
					tc_pt_session_nomem(e);
				seg_put_items(ss, &it, false);
				seg_free(ss, g);
				ret = -1;
				break;
			}
			if (!t) {
				/* the queue's first: true as it is */
				seg_put_items(ss, &it, true);
				seg_count(ss, g);
				t = g;
				memset(&t->base, 0, sizeof(t->base));
				/* its reads in the caller's thread from now on */
				ss->wr[0].space = seg_wspace(ss, g->era);
				seg_settle(ss, g);
				if (tc_pt_flow_gave_up(g->d) || g->odd || tc_pt_walk_cache_merge_new(
					    ss->master, tc_pt_flow_walk_cache(g->d)) ||
				    seg_ctx_era(ss, &ss->ctx[0], g->era))
					redo = true;
				seg_add_secs(ss, g->d);
				continue;
			}
			if (!g->at_psb) {
				/* a later buffer's first: the true flow ended the buffer before
				 * (with time, its time too: never taken, seg_cut) */
				const struct tc_pt_flow_sec *x;
				size_t nx;

				seg_settle(ss, t);
				tc_pt_flow_add_sections(t->d, ss->secs, ss->nsecs);
				nx = tc_pt_flow_sections(t->d, &x);
				take = !tc_pt_flow_gave_up(g->d) && !g->odd && s->pt.timeless &&
				       !b->follows &&
				       seg_thread_same(g, t->d) &&
				       tc_pt_walk_cache_check(tc_pt_flow_walk_cache(g->d), ss->master) &&
				       seg_secs_same(g->d, x, nx);
			} else if (!tc_pt_flow_paused(t->d)) {
				/* the true flow ended the buffer: nothing after it */
				seg_put_items(ss, &it, false);
				seg_free(ss, g);
				bail = t->borrowed;
				continue;
			} else {
				if (!stepped) {
					psb_secs = ss->nsecs;
					psb_era = ss->era;
					tc_pt_flow_step_block(t->d);
					seg_run_here(ss, t);
				}
				/* (side-band applied at the PSB+: its sections went there) */
				if (psb_era != ss->era)
					psb_secs = 0;
				stepped = false;
				if (tc_pt_flow_gave_up(t->d) || t->odd) {
					seg_put_items(ss, &it, false);
					seg_free(ss, g);
					redo = true;
					break;
				}
				take = tc_pt_flow_paused(t->d) && !tc_pt_flow_gave_up(g->d) &&
				       !g->odd && g->era == t->era &&
				       tc_pt_flow_join_same(tc_pt_flow_first(g->d),
							    tc_pt_flow_after(t->d)) &&
				       tc_pt_walk_cache_check(tc_pt_flow_walk_cache(g->d), ss->master) &&
				       seg_secs_same(g->d, ss->secs, psb_secs);
				if (!tc_pt_flow_paused(t->d)) {
					/* it ended at that block: the buffer is done */
					seg_put_items(ss, &it, false);
					seg_free(ss, g);
					bail = t->borrowed;
					continue;
				}
				if (!take && !t->borrowed && g->respun < RESPINS &&
				    ((!tc_pt_flow_gave_up(g->d) && !g->odd &&
				      tc_pt_flow_join_same(tc_pt_flow_first(g->d),
							   tc_pt_flow_after(t->d))) ||
				     (g->era_odd && g->era != t->era))) {
					/* only marks, sections or side-band the true set has more
					 * of: it and those in flight again, the true flow left where
					 * it is */
					seg_put_items(ss, &it, false);
					head = (head + window - 1) % window;
					fl[head] = g;
					nfl++;
					stepped = true;
					if (seg_respin(ss, fl, head, nfl, window, psb_secs, &it, e)) {
						ret = -1;
						break;
					}
					continue;
				}
			}
			/* the tail's first: only as it is (NACC counted by the lanes: a redo
			 * would count them again) */
			if (t->borrowed && (!take || q->nacc)) {
				seg_put_items(ss, &it, false);
				seg_free(ss, g);
				bail = true;
				continue;
			}
			if (take)
				s->st.segments++;
			else
				s->st.segments_redone++;
			if (take) {
				const struct tc_pt_flow_join *tf = tc_pt_flow_after(t->d);
				const struct tc_pt_flow_join *gf = tc_pt_flow_first(g->d);

				if (g->have_held) {
					/* the range in flight at the PSB goes on in it */
					g->held.start = tf->r_start;
					g->held.insns = g->held.insns - gf->r_insns + tf->r_insns;
					if (t->borrowed) {
						tc_pt_lanes_emit(q, &g->held);
						tc_pt_lanes_take(q);
					} else {
						seg_write(t, &g->held);
						seg_take(t);
					}
					seg_count(ss, t);
				}
				seg_put_items(ss, &it, true);
				seg_count(ss, g);
				seg_add_stats(&ss->acc, tc_pt_flow_stats(t->d), &t->base);
				seg_free(ss, t);
				t = g;
				t->truth = true;
				t->base = g->at_psb ? gf->st : (struct tc_pt_flow_stats){ 0 };
				if (tc_pt_walk_cache_merge_new(ss->master,
							       tc_pt_flow_walk_cache(g->d)))
					redo = true;
				seg_add_secs(ss, g->d);
				if (ss->lost)
					redo = true;
				continue;
			}
			/* dropped: the true flow decodes the segment here */
			seg_put_items(ss, &it, false);
			{
				uint64_t to = g->to;
				bool first = !g->at_psb;

				seg_free(ss, g);
				if (first) {
					struct tc_err e2;

					seg_add_stats(&ss->acc, tc_pt_flow_stats(t->d), &t->base);
					t->base = *tc_pt_flow_stats(t->d);
					tc_pt_session_follow(q, bi, t->d);
					if (tc_pt_flow_begin(t->d, b->data, b->size, b->offset, &e2)) {
						*e = e2;
						ret = -1;
						break;
					}
				}
				redo = seg_run_to(ss, t, to);
			}
		}
		/* what is left in flight: dropped */
		while (nfl) {
			struct seg *g = fl[head];

			fl[head] = NULL;
			head = (head + 1) % window;
			nfl--;
			if (g && !g->here && !seg_collect(ss, g, &it))
				seg_put_items(ss, &it, false);
			seg_free(ss, g);
		}
		if (!redo && !ret && !bail)
			tc_perf_data_release(s->pd, b->offset, b->size);
	}
	if (bail) {
		free(fl);
		free(it.b);
		return 1;
	}
	if (t) {
		seg_add_stats(&ss->acc, tc_pt_flow_stats(t->d), &t->base);
		seg_free(ss, t);
	}
	free(fl);
	free(it.b);
	if (!ret && redo) {
		s->st.queues_redone++;
		ret = seg_redo(ss, q, e);
	}
	return ret;
}

/* A span [lo, *hi] of libipt's times (tc_pt_skim_time_span, mtcs its most MTCs after a
 * TMA) made a bound for the flows' own times (seg_times says why): -1 where there is none. */
static int span_margin(const struct tc_pt_session *s, uint64_t lo, uint64_t *hi, unsigned mtcs)
{
	if (lo > *hi || (mtcs && s->pt.cfg.mtc_freq > 8))
		return -1;
	*hi = *hi < UINT64_MAX - mtcs - 16 ? *hi + mtcs + 16 : UINT64_MAX;
	return 0;
}

/* The least and the greatest perf time q's flows can have (tc_pt_skim_time_span of each
 * buffer: libipt's times, from a PSB at its start); -1 where that is not sure, or a buffer
 * goes on from the one before (its first bytes are another's packets). A flow's
 * own estimate of the time can be ahead of libipt's: after a decode error (pt_flow.c's
 * scan: the CTC since the TMA times the ratio at once, where libipt rounds down at each
 * MTC: by less than a TSC tick an MTC) and in a side decoder (a tick or so); with an MTC
 * frequency past 8 the TMA has too few of the CTC's bits for that bound. Its trace is let
 * go of after, read again as the decode goes. */
static int seg_times(const struct tc_pt_session *s, const struct queue *q, uint64_t *first,
		     uint64_t *last)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned mtcs = 0;

	for (size_t i = 0; i < q->nbufs; i++) {
		const struct buf *b = &q->bufs[i];
		bool ok = !b->follows &&
			  !tc_pt_skim_time_span(&s->pt.cfg, b->data, b->size, &lo, &hi, &mtcs);

		tc_perf_data_release(s->pd, b->offset, b->size);
		if (!ok)
			return -1;
	}
	if (span_margin(s, lo, &hi, mtcs))
		return -1;
	*first = tc_pt_config_tsc_to_perf_time(&s->pt.tc, lo);
	*last = tc_pt_config_tsc_to_perf_time(&s->pt.tc, hi);
	return 0;
}

/* Several per-thread queues with time, every time of each before all of the next one's
 * (by time, not index): one thread (decode_by_time) decodes each whole in that order, as
 * the segments do, with libipt's tick events (the flows' ops.ticks, the segments' too),
 * when what it does first, begin every queue (at time 0, in index order), makes no record:
 * their buffers begin with a PSB (seg_times). s->order then says that order. */
static bool seg_in_time_order(struct tc_pt_session *s)
{
	uint64_t *first = calloc(s->nq, sizeof(*first)), *last = calloc(s->nq, sizeof(*last));
	size_t *o = calloc(s->nq, sizeof(*o));
	bool ok = first && last && o;

	for (size_t i = 0; i < s->nq && ok; i++) {
		size_t k = i;

		if (seg_times(s, &s->q[i], &first[i], &last[i])) {
			ok = false;
			break;
		}
		/* by first time; one that overlaps another ends it (the rest unread) */
		for (; k && first[o[k - 1]] > first[i]; k--)
			o[k] = o[k - 1];
		o[k] = i;
		ok = (!k || last[o[k - 1]] < first[i]) && (k == i || last[i] < first[o[k + 1]]);
	}
	free(first);
	free(last);
	if (!ok) {
		free(o);
		o = NULL;
	}
	s->order = o;
	return ok;
}

/* Can the queues be cut at their PSBs (see above)? */
bool tc_pt_segment_usable(struct tc_pt_session *s)
{
	/* several queues too: one thread decodes each whole in turn, so a lane per queue
	 * (pt_lanes.c) holds a queue's formatted output while the one before is written,
	 * and stalls at the lanes' budget (4-queue emulated trace: --jobs 2 no faster than
	 * --jobs 1); cut at PSBs, each queue's segments come in that order */
	/* with time, one queue of a thread (perf record's default for one program), or
	 * such queues one after the other: side-band by time (seg_thread), the segments'
	 * time from their PSB+'s TSC, which CYC's calibration would not be (pt_walk.h) */
	bool timed = !s->pt.per_cpu_mmaps && !s->pt.cyc;
	size_t small = 0, follow = 0;

	free(s->order);
	s->order = NULL;

	/* a segment that ends a buffer goes on to the first PSB in the buffers after
	 * (tc_pt_flow_follow): where most are shorter than a segment, each such segment
	 * would decode a run of them (one thread decodes each once) */
	for (size_t i = 0; i < s->nq; i++)
		for (size_t j = 0; j < s->q[i].nbufs; j++)
			if (s->q[i].bufs[j].follows) {
				follow++;
				small += s->q[i].bufs[j].size < SEG_MIN;
			}
	if (!(s->o.jobs > 1 && s->nq >= 1 && (s->pt.timeless || timed) && !s->o.reference &&
	      small <= follow / 16 && s->o.writer && s->o.writer->usable(s->o.writer->ctx)))
		return false;
	/* (last: it reads the trace) */
	return s->pt.timeless || s->nq == 1 || seg_in_time_order(s);
}

/* The segments' machinery: contexts, writers, the true set, the jobs (s->par). iscache:
 * libipt's section cache to share, NULL for one of its own. */
static int segs_open(struct segs *ss, struct tc_pt_session *s,
		     struct pt_image_section_cache *iscache, size_t window, struct tc_err *e)
{
	*ss = (struct segs){ .s = s, .iscache = iscache, .own_iscache = !iscache };
	ss->nctx = (size_t)s->o.jobs + 1;
	ss->ctx = calloc(ss->nctx, sizeof(*ss->ctx));
	ss->nwr = window + 1;
	if ((ss->wr = aligned_alloc(64, ss->nwr * sizeof(*ss->wr))))
		memset(ss->wr, 0, ss->nwr * sizeof(*ss->wr));
	pthread_mutex_init(&ss->mu, NULL);
	if (ss->own_iscache)
		ss->iscache = pt_iscache_alloc("tracectl");
	ss->master = tc_pt_walk_cache_new();
	/* with turns, jobs - 1 workers: the caller's thread decodes too */
	s->par = tc_jobs_new(s->o.jobs + !seg_turns(s), window, SEG_BUDGET);
	if (!ss->ctx || !ss->wr || !ss->iscache || !ss->master || !s->par ||
	    (ss->own_iscache && pt_iscache_set_limit(ss->iscache, 256ULL << 20) < 0))
		return tc_pt_session_nomem(e);
	tc_jobs_no_help(s->par);
	ss->share = tc_jobs_share_first(s->o.jobs);
	return 0;
}

/* q's turn: its contexts (their images kept), writers, side-band from era0 (its first
 * PSB's) on, no marks, no sections. */
static void segs_start(struct segs *ss, struct queue *q, size_t era0)
{
	for (size_t c = 0; c < ss->nctx; c++)
		ss->ctx[c] = (struct seg_ctx){ .s = ss->s, .q = q, .im = ss->ctx[c].im,
					       .sb_at = ss->ctx[c].sb_at };
	ss->era0 = ss->era = era0;
	for (size_t c = 0; c < ss->nwr; c++)
		ss->wr[c].c = &ss->ctx[0];
	memset(&ss->acc, 0, sizeof(ss->acc));
	ss->written = 0;
	ss->s->cur = q;
	tc_pt_walk_cache_reset(ss->master);
	ss->nsecs = 0;
	ss->lost = false;
	/* the writers stay (each one's symbols' forms cost a few hundred KB to make
	 * again): a new space number starts a new era of them (the flows' stays: one
	 * that changes drops their sections) */
	ss->wspace++;
	ss->wr[0].space = seg_wspace(ss, ss->era);
}

/* q's segments done (ret their result): a writer that failed fails it; its counts, and
 * images found missing, each context's in turn. */
static int segs_end(struct segs *ss, int ret, struct tc_err *e)
{
	for (size_t c = 0; c < ss->nwr; c++)
		if (ss->wr[c].wfail && !ret)
			ret = tc_pt_session_nomem(e);
	if (!ret)
		tc_pt_session_add_flow_stats(ss->s, &ss->acc);
	for (size_t c = 0; c < ss->nctx; c++)
		tc_pt_session_add_missing_lines(ss->s, ss->ctx[c].im);
	return ret;
}

static void segs_close(struct segs *ss)
{
	struct tc_pt_session *s = ss->s;

	/* the bytes are all put: the writers go */
	for (size_t c = 0; ss->wr && c < ss->nwr; c++)
		if (ss->wr[c].w)
			s->lw->close(ss->wr[c].w);
	tc_jobs_free(s->par);
	s->par = NULL;
	for (size_t c = 0; ss->ctx && c < ss->nctx; c++)
		tc_images_free(ss->ctx[c].im);
	for (size_t i = 0; i < ss->nold; i++) {
		tc_pt_session_add_missing_lines(s, ss->old[i]);
		tc_images_free(ss->old[i]);
	}
	free(ss->old);
	free(ss->ctx);
	free(ss->wr);
	pthread_mutex_destroy(&ss->mu);
	tc_pt_walk_cache_free(ss->master);
	free(ss->secs);
	while (ss->npool) {
		tc_pt_walk_cache_free(ss->pool[--ss->npool].wc);
		tc_x86_free(ss->pool[ss->npool].x86);
	}
	if (ss->iscache && ss->own_iscache)
		pt_iscache_free(ss->iscache);
	s->gen++;
}

static size_t segs_window(const struct tc_pt_session *s)
{
	size_t window = (size_t)s->o.jobs + 2;

	return window > 16 ? 16 : window;
}

int tc_pt_segment_decode(struct tc_pt_session *s, const struct tc_perf_data_features *f,
			 struct tc_err *e)
{
	struct segs ss;
	size_t window = segs_window(s);
	int ret;

	s->f = f;
	s->lw = s->o.writer;
	ret = segs_open(&ss, s, NULL, window, e);
	for (size_t i = 0; i < s->nq && !ret; i++) {
		struct queue *q = &s->q[s->order ? s->order[i] : i];
		int pid = i ? s->q[s->order ? s->order[i - 1] : i - 1].pid : 0;
		/* without time all of the side-band applies; with time, what is due at its
		 * start, as one thread's (pt_session.c) */
		size_t era0 = tc_pt_session_sb_until(s, 0, s->pt.timeless ? UINT64_MAX : 0);

		/* by time (s->order), the side-band the queue before applied is due before
		 * this one's first PSB+, where its thread callback comes before any read
		 * (seg_times): the contexts' images hold, not made again for each queue */
		if (s->order && i && ss.era > era0)
			era0 = ss.era;
		/* each queue as one thread decodes it, with a flow of its own: no marks, no
		 * sections; the blocks kept only if its code is the one before's (the same
		 * process: every address space has all the side-band without time) */
		segs_start(&ss, q, era0);
		if (!s->pt.per_cpu_mmaps && tc_pt_session_pid_of(s, q->key) != pid)
			for (size_t k = 0; k < ss.npool; k++)
				tc_pt_walk_cache_forget(ss.pool[k].wc);
		ret = segs_end(&ss, seg_queue(&ss, q, window, NULL, 0, 0, e), e);
	}
	if (!ret && tc_jobs_failed(s->par))
		ret = tc_pt_session_nomem(e);
	segs_close(&ss);
	s->cur = NULL;
	s->lw = NULL;
	return ret;
}

/* ---- the tail: the last of several queues with time, cut at PSBs ----
 * With several queues by time (pt_lanes.c), once all but one are done the records left
 * are that queue's alone, in its order: its lane's flow stops at a PSB ahead (the cut)
 * and hands over, its lane idle, as the true flow of segments from there, which join it
 * as they join each other (the flows' libipt section cache is its: the marks and
 * sections are in the same ids). If the first would not join it, nothing but it wrote,
 * and its lane goes on. Per-thread queues without CYC (as seg_thread and the joins'
 * time need), none going on from the buffer before. */
bool tc_pt_segment_tail_usable(const struct tc_pt_session *s)
{
	return s->o.jobs > 1 && tc_pt_session_by_time(s) && !s->pt.per_cpu_mmaps && !s->pt.cyc &&
	       !s->o.reference && s->lw;
}

uint64_t tc_pt_segment_tail_cut(const struct buf *b, uint64_t off)
{
	return b->follows ? UINT64_MAX : psb_next(b, off);
}

/* The offset of the last PSB in buf (len bytes), UINT64_MAX if none: looked for from the
 * end back, a piece at a time. */
static uint64_t psb_last(const uint8_t *buf, size_t len)
{
	const size_t piece = 64u << 10;

	for (size_t end = len; end; end = end > piece ? end - piece : 0) {
		size_t from = end > piece ? end - piece : 0;
		size_t to = end + sizeof(psb_bytes) - 1 < len ? end + sizeof(psb_bytes) - 1 : len;
		const uint8_t *p, *last = NULL;

		for (p = buf + from; (p = memmem(p, (size_t)(buf + to - p), psb_bytes,
						 sizeof(psb_bytes))); p++)
			last = p;
		if (last)
			return (uint64_t)(last - buf);
	}
	return UINT64_MAX;
}

/* The least and greatest time (TSC) of b's [from, to), from a PSB there, with span_margin's
 * margin: -1 if not sure. */
static int span_of(const struct tc_pt_session *s, const struct buf *b, uint64_t from, uint64_t to,
		   uint64_t *lo, uint64_t *hi)
{
	unsigned mtcs = 0;

	*lo = UINT64_MAX;
	*hi = 0;
	if (tc_pt_skim_time_span(&s->pt.cfg, b->data + from, to - from, lo, hi, &mtcs))
		return -1;
	return span_margin(s, *lo, hi, mtcs);
}

int tc_pt_segment_tail_plan(const struct tc_pt_session *s, size_t *qi, size_t *bi, uint64_t *at)
{
	uint64_t best = 0, others = 0, lo, hi, *psb = NULL;
	size_t k = SIZE_MAX, n = 0, cap = 0;
	const struct buf *b;

	if (!tc_pt_segment_tail_usable(s))
		return -1;
	/* each queue's last time: its last buffer's from its last PSB (buffers in time order) */
	for (size_t i = 0; i < s->nq; i++) {
		const struct queue *q = &s->q[i];
		uint64_t off;

		if (!q->nbufs)
			continue;
		b = &q->bufs[q->nbufs - 1];
		off = b->follows ? UINT64_MAX : psb_last(b->data, b->size);
		if (off == UINT64_MAX || span_of(s, b, off, b->size, &lo, &hi))
			return -1;
		if (k == SIZE_MAX || hi > best) {
			others = k == SIZE_MAX ? 0 : best;
			best = hi;
			k = i;
		} else if (hi > others) {
			others = hi;
		}
	}
	if (k == SIZE_MAX)
		return -1;
	/* the first PSB of its last buffer whose interval before it is past the others' last
	 * times, from the end back (only the part alone is read) */
	b = &s->q[k].bufs[s->q[k].nbufs - 1];
	for (uint64_t o = psb_next(b, 0); o != UINT64_MAX; o = psb_next(b, o + sizeof(psb_bytes))) {
		if (tc_grow((void **)&psb, &cap, n + 1, sizeof(*psb))) {
			free(psb);
			return -1;
		}
		psb[n++] = o;
	}
	*at = UINT64_MAX;
	for (size_t j = n; j-- > 1 && !span_of(s, b, psb[j - 1], psb[j], &lo, &hi) && lo > others;)
		*at = psb[j];
	free(psb);
	if (*at == UINT64_MAX)
		return -1;
	*qi = k;
	*bi = s->q[k].nbufs - 1;
	return 0;
}

int tc_pt_segment_tail(struct tc_pt_session *s, struct queue *q, struct tc_err *e)
{
	struct tc_jobs *lanes = s->par;
	struct tc_pt_walk_cache *wc = tc_pt_flow_walk_cache(q->d);
	struct segs ss;
	struct seg *t;
	int ret;

	for (size_t i = q->wbuf; i < q->nbufs; i++)
		if (q->bufs[i].follows)
			return 0;
	if (!wc || !(t = calloc(1, sizeof(*t))))
		return tc_pt_session_nomem(e);
	ret = segs_open(&ss, s, tc_pt_flow_iscache(q->d), segs_window(s), e);
	if (!ret) {
		/* the queue's side-band from its start (a redo's), q->d's now */
		segs_start(&ss, q, tc_pt_session_sb_until(s, 0, 0));
		ss.era = q->sb_next;
		ss.wr[0].space = seg_wspace(&ss, ss.era);
		ss.written = q->nrec;
		*t = (struct seg){ .s = s, .ss = &ss, .q = q, .c = &ss.ctx[0], .wr = &ss.wr[0],
				   .d = q->d, .b = &q->bufs[q->wbuf], .from = q->cut_at,
				   .to = UINT64_MAX, .at_psb = true, .pid = -1, .tid = -1,
				   .era = ss.era, .truth = true, .held_done = true,
				   .ncounted = q->nrec, .borrowed = true };
		/* the true set: q->d's marks (its walk's cache logged from here on, for
		 * seg_run_here's merge) and sections */
		if (seg_ctx_era(&ss, &ss.ctx[0], ss.era) || tc_pt_walk_cache_copy(ss.master, wc))
			ret = tc_pt_session_nomem(e);
		tc_pt_walk_cache_log(wc);
		seg_add_secs(&ss, q->d);
		if (!ret && ss.lost)
			ret = tc_pt_session_nomem(e);
	}
	if (ret) {
		free(t);
	} else if ((ret = seg_queue(&ss, q, segs_window(s), t, q->wbuf, q->cut_at, e)) == 1) {
		free(t);	/* (else seg_queue let go of it) */
		tc_pt_walk_cache_unlog(wc);	/* the lanes' again */
	} else {
		ret = segs_end(&ss, ret, e);
	}
	if (!ret && tc_jobs_failed(s->par))
		ret = tc_pt_session_nomem(e);
	segs_close(&ss);
	s->par = lanes;
	s->cur = q;
	return ret == 0 ? 1 : ret == 1 ? 0 : -1;
}
