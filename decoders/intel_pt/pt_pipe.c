#include "decoders/intel_pt/pt_session_priv.h"

#include <stdlib.h>
#include <string.h>

#include "decoders/jobs.h"
#include "lib/images/images.h"

/* ---- --jobs for records that go to analyses (report, diff: emit_ranges, no offsets) ----
 * An analysis takes the records in order (call stacks) in the caller's thread; so a worker
 * decodes the queues as one thread would (pt_session.c's loops, unchanged) and hands the
 * records over while the caller's thread feeds them on. Two stages, two threads at most:
 * on report of a 52 MB trace with one thread the decoding is ~55% of the time, the
 * analysis ~42%.
 *
 * What costs is the handing over, not the work on either side: a range's whole record is
 * 112 bytes, 40 bytes of it (its own fields) cost the two threads more than they saved
 * (each cache line crossing between the cores; report of that trace 0.95 s with one
 * thread, 0.89 s and 1.4 s of CPU with two). So a range goes over as a number (struct
 * pipe_tuple, below), its run's fields once (cut where its time changes), and the skim's
 * ranges (pt_flow.h's skim_ranges) before the flow makes records of them: the caller's
 * thread does (0.90 s against 0.66 s, 1.15 s of CPU). Other records go with the jobs'
 * record codec, exact.
 *
 * What the analyses ask back (symbols, DSOs, the space number) the caller's thread answers
 * from images of its own, one per queue, made and given side-band where the worker's are,
 * in the records' order: the worker tells each step (PIPE_SB, PIPE_IM) as it goes, and the
 * queue and pid of each record. The worker keeps to itself the queues' decoders, images,
 * counts and missing images, read once it is done; both only read the perf.data reader
 * (tc_perf_data_release is for threads). */

enum pipe_kind {
	PIPE_RUN = 0x7050,	/* struct pipe_run, its new tuples and its ranges' numbers */
	PIPE_REC,		/* a record (tc_jobs_put_rec), struct pipe_who after it */
	PIPE_SB,		/* struct pipe_mark: side-band index v of queue qi is due */
	PIPE_IM,		/* struct pipe_mark: queue qi's images were made */
	PIPE_END,		/* struct pipe_mark: v the decode's result */
};

struct pipe_mark {
	uint32_t kind, qi;
	int64_t v;
};

struct pipe_who {
	uint32_t qi;
	int32_t pid;
};

/* What tells one range from another of its run (start, end and the last instruction's
 * facts), 24 bytes; last_taken in isa's bit 7. The same few come again and again (a
 * program's blocks): both sides keep a table of them, direct-mapped by a hash, so that a
 * range goes over as its slot's number (4 bytes) where the slot holds it already, else
 * with it, which both put there. (A range's whole record is 112 bytes; handing 40 over
 * cost more than the analysis of it: each cache line crossing between the cores.) */
struct pipe_tuple {
	uint64_t start, end;
	uint32_t insns;
	uint8_t isa, last, last_type, last_size;
};

/* A run item: the header, m new tuples, n slot numbers (uint32_t; with PIPE_NEW: the next
 * of the new tuples is the slot's from now on). */
struct pipe_run {
	uint32_t kind, qi;
	int32_t pid;
	uint32_t n, m;
	struct tc_rec base;	/* the fields alike in each (not a tuple's); offset: the run's
				 * first (ranges to analyses only: no consumer reads more) */
};

#define PIPE_NEW (1u << 31)
#define PIPE_SLOT_BITS 16
#define PIPE_SLOTS (1u << PIPE_SLOT_BITS)	/* of each kind (records', the skim's): 1.5, 2 MiB */
#define PIPE_RUN_MAX 128	/* ranges an item holds at most */
#define PIPE_BUDGET (4u << 20)	/* bytes handed over unread before the worker waits */

struct tc_pt_pipe {
	struct tc_pt_session *s;
	const struct tc_perf_data_features *f;
	struct tc_jobs *j;
	/* the worker's */
	struct tc_jobs_out *out;
	struct tc_rec wprev;	/* the record codec's, as put */
	struct tc_err err;
	struct pipe_tuple *wslot;	/* PIPE_SLOTS, of records' ranges */
	struct tc_pt_skim_range *wskim;	/* PIPE_SLOTS, of the skim's (their offsets 0) */
	bool wnomem;
	uint32_t ids[PIPE_RUN_MAX];
	struct pipe_tuple fresh[PIPE_RUN_MAX];
	/* the caller's thread's (cache lines apart): what it answers symbols from */
	struct tc_rec rprev __attribute__((aligned(64)));	/* as read */
	struct tc_images **im;	/* per queue */
	size_t *sb_next;	/* per queue: its side-band due (struct queue's sb_next) */
	const struct queue *cur;	/* the queue and pid of the record emitted */
	int pid;
	bool nomem;
	struct pipe_tuple *rslot;	/* 2 * PIPE_SLOTS: wslot's, then wskim's as tuples */
	struct tc_rec base;	/* on_run's */
	uint32_t nset;
	struct tc_rec recs[PIPE_RUN_MAX];
};

bool tc_pt_pipe_usable(const struct tc_pt_session *s)
{
	return s->o.jobs > 1 && s->o.emit_ranges && s->o.no_offsets && s->nq;
}

/* ---- the worker ---- */

static void put_mark(struct tc_pt_pipe *p, uint32_t kind, size_t qi, int64_t v)
{
	struct pipe_mark m = { kind, (uint32_t)qi, v };

	tc_jobs_put(p->out, &m, sizeof(m));	/* lost: tc_jobs_failed says so */
}

void tc_pt_pipe_sb(struct queue *q)
{
	put_mark(q->s->pipe, PIPE_SB, (size_t)(q - q->s->q), (int64_t)q->sb_next);
}

void tc_pt_pipe_images(struct queue *q)
{
	put_mark(q->s->pipe, PIPE_IM, (size_t)(q - q->s->q), 0);
}

void tc_pt_pipe_rec(struct queue *q, const struct tc_rec *r)
{
	struct tc_pt_pipe *p = q->s->pipe;
	struct pipe_who w = { (uint32_t)(q - q->s->q), q->pid };
	void *at = tc_jobs_put_rec(p->out, &p->wprev, r, PIPE_REC, sizeof(w));

	if (at)	/* (after the record's strings: not aligned) */
		memcpy(at, &w, sizeof(w));
}

/* A run is of one queue, pid, tid and cpu (decoders/decoder.h emit_ranges), its records
 * RANGEs alike but in their tuples and offsets, and their time: cut where that differs. */
static inline bool run_differs(const struct tc_rec *b, const struct tc_rec *r)
{
	return r->time != b->time || r->has_time != b->has_time;
}

/* A range's tuple, and the fields of a record it gives. */
static inline struct pipe_tuple tuple_of(const struct tc_rec *r)
{
	return (struct pipe_tuple){ r->start, r->end, r->insns,
				    (uint8_t)(r->isa | (r->last_taken ? 0x80 : 0)),
				    (uint8_t)r->last, r->last_type, r->last_size };
}

static inline void tuple_put(struct tc_rec *r, const struct pipe_tuple *t)
{
	r->start = t->start;
	r->end = t->end;
	r->insns = t->insns;
	r->isa = (enum tc_isa)(t->isa & 0x7f);
	r->last_taken = t->isa & 0x80;
	r->last = (char)t->last;
	r->last_type = t->last_type;
	r->last_size = t->last_size;
}

/* The slot of a range from start to end (of PIPE_SLOTS). */
static inline uint32_t slot_of(uint64_t start, uint64_t end)
{
	return (uint32_t)(((start ^ (end - start) << 40) * 0x9e3779b97f4a7c15ull) >>
			  (64 - PIPE_SLOT_BITS));
}

/* The item of k ranges whose slots are p->ids, m new tuples p->fresh. */
static void put_run(struct tc_pt_pipe *p, struct queue *q, const struct tc_rec *base, size_t k,
		    uint32_t m)
{
	struct pipe_run *it = tc_jobs_alloc(p->out, sizeof(*it) + m * sizeof(struct pipe_tuple) +
						    k * sizeof(uint32_t));

	if (it) {
		unsigned char *at = (unsigned char *)(it + 1);

		*it = (struct pipe_run){ PIPE_RUN, (uint32_t)(q - q->s->q), q->pid, (uint32_t)k, m,
					 *base };
		memcpy(at, p->fresh, m * sizeof(struct pipe_tuple));
		memcpy(at + m * sizeof(struct pipe_tuple), p->ids, k * sizeof(uint32_t));
	}
}

void tc_pt_pipe_run(struct queue *q, const struct tc_rec *r, size_t n)
{
	struct tc_pt_pipe *p = q->s->pipe;

	/* (slots of start 0, end 0: none of a range, whose end is past its start) */
	if (!p->wslot && !(p->wslot = calloc(PIPE_SLOTS, sizeof(*p->wslot)))) {
		p->wnomem = true;
		return;
	}
	while (n) {
		size_t k = 1, max = n < PIPE_RUN_MAX ? n : PIPE_RUN_MAX;
		uint32_t m = 0;

		while (k < max && !run_differs(r, &r[k]))
			k++;
		for (size_t i = 0; i < k; i++) {
			struct pipe_tuple t = tuple_of(&r[i]);
			uint32_t h = slot_of(t.start, t.end);
			struct pipe_tuple *x = &p->wslot[h];

			if (x->start == t.start && x->end == t.end && x->insns == t.insns &&
			    !memcmp(&x->isa, &t.isa, 4)) {
				p->ids[i] = h;
				continue;
			}
			*x = t;
			p->fresh[m++] = t;
			p->ids[i] = h | PIPE_NEW;
		}
		put_run(p, q, r, k, m);
		r += k;
		n -= k;
	}
}

/* The skim's ranges (tc_pt_flow_ops.skim_ranges): looked up as they come, made into tuples
 * only when new (the caller's thread keeps them made). */
void tc_pt_pipe_skim(struct queue *q, const struct tc_rec *base, const struct tc_pt_skim_range *r,
		     size_t n)
{
	struct tc_pt_pipe *p = q->s->pipe;
	struct tc_rec b = *base;

	if (!p->wskim && !(p->wskim = calloc(PIPE_SLOTS, sizeof(*p->wskim)))) {
		p->wnomem = true;
		return;
	}
	b.offset += r->offset;	/* the run's first's */
	while (n) {
		size_t k = n < PIPE_RUN_MAX ? n : PIPE_RUN_MAX;
		uint32_t m = 0;

		for (size_t i = 0; i < k; i++) {
			uint32_t h = slot_of(r[i].start, r[i].end);
			struct tc_pt_skim_range *x = &p->wskim[h];
			struct tc_rec rec = b;

			if (x->start == r[i].start && x->end == r[i].end &&
			    x->last_ip == r[i].last_ip && x->insns == r[i].insns &&
			    x->last_class == r[i].last_class) {
				p->ids[i] = PIPE_SLOTS + h;
				continue;
			}
			*x = r[i];
			x->offset = 0;
			tc_pt_flow_skim_rec(&rec, 0, &r[i]);
			p->fresh[m++] = tuple_of(&rec);
			p->ids[i] = (PIPE_SLOTS + h) | PIPE_NEW;
		}
		put_run(p, q, &b, k, m);
		r += k;
		n -= k;
	}
}

static void pipe_task(void *arg, struct tc_jobs_out *out)
{
	struct tc_pt_pipe *p = arg;

	p->out = out;
	put_mark(p, PIPE_END, 0, tc_pt_session_decode_here(p->s, p->f, &p->err));
	p->out = NULL;
}

/* ---- the caller's thread ---- */

struct tc_images *tc_pt_pipe_view(struct tc_pt_session *s, size_t qi, bool make)
{
	struct tc_pt_pipe *p = s->pipe;

	if (p->im[qi] || !make)
		return p->im[qi];
	/* as tc_pt_session_images: the side-band due so far */
	s->gen++;
	if (!(p->im[qi] = tc_pt_session_images_new(s, p->sb_next[qi])))
		p->nomem = true;
	return p->im[qi];
}

const struct queue *tc_pt_pipe_cur(const struct tc_pt_session *s, int *pid)
{
	*pid = s->pipe->pid;
	return s->pipe->cur;
}

static void on_mark(struct tc_pt_pipe *p, const struct pipe_mark *m, int *ret)
{
	struct tc_pt_session *s = p->s;

	switch (m->kind) {
	case PIPE_SB:	/* as advance_images: one more due, applied where made */
		if (p->im[m->qi]) {
			s->gen++;
			tc_pt_session_apply_sb_to(s, p->im[m->qi], &s->sb[m->v]);
		}
		p->sb_next[m->qi] = (size_t)m->v + 1;
		break;
	case PIPE_IM:
		tc_pt_pipe_view(s, m->qi, true);
		break;
	case PIPE_END:
		*ret = (int)m->v;
		break;
	}
}

/* The records of a run item, as the worker's flow gave them: in p->recs, whose alike fields
 * are set again only where the base differs from the last item's (p->nset of them set). */
static void on_run(struct tc_pt_pipe *p, const struct pipe_run *it)
{
	struct tc_pt_session *s = p->s;
	struct tc_rec *rec = p->recs;
	const struct pipe_tuple *fresh = (const struct pipe_tuple *)(it + 1);
	const uint32_t *ids = (const uint32_t *)(fresh + it->m);
	struct tc_rec b = it->base;

	if (!p->rslot && !(p->rslot = malloc(2 * PIPE_SLOTS * sizeof(*p->rslot)))) {
		p->nomem = true;
		return;
	}
	/* what the tuples give zeroed, so that bases alike compare so */
	tuple_put(&b, &(struct pipe_tuple){ 0 });
	if (memcmp(&b, &p->base, sizeof(b))) {
		p->base = b;
		p->nset = 0;
	}
	for (; p->nset < it->n; p->nset++)
		rec[p->nset] = b;
	for (uint32_t i = 0; i < it->n; i++) {
		struct pipe_tuple *t = &p->rslot[ids[i] & ~PIPE_NEW];

		if (ids[i] & PIPE_NEW)
			*t = *fresh++;
		tuple_put(&rec[i], t);
	}
	p->cur = &s->q[it->qi];
	p->pid = it->pid;
	tc_pt_session_note_emitter(s, p->cur, it->pid);
	s->o.emit_ranges(s->o.ctx, rec, it->n);
}

static void on_rec(struct tc_pt_pipe *p, const void *item, size_t len)
{
	struct tc_pt_session *s = p->s;
	size_t extra;
	const void *w = tc_jobs_get_rec(item, len, &p->rprev, &extra);	/* (not aligned) */
	struct pipe_who who;

	memcpy(&who, w, sizeof(who));
	p->cur = &s->q[who.qi];
	p->pid = who.pid;
	tc_pt_session_note_emitter(s, p->cur, who.pid);
	s->o.emit(s->o.ctx, &p->rprev);
}

int tc_pt_pipe_decode(struct tc_pt_session *s, const struct tc_perf_data_features *f,
		      struct tc_err *e)
{
	struct tc_pt_pipe *p = calloc(1, sizeof(*p));
	const void *it;
	size_t len;
	int ret = 1, got;	/* 1: no end read (lost) */

	if (!p || !(p->im = calloc(s->nq, sizeof(*p->im))) ||
	    !(p->sb_next = calloc(s->nq, sizeof(*p->sb_next))) ||
	    !(p->j = tc_jobs_new(2, 1, PIPE_BUDGET))) {
		if (p) {
			free(p->im);
			free(p->sb_next);
		}
		free(p);
		return tc_pt_session_nomem(e);
	}
	p->s = s;
	p->f = f;
	/* the caller's thread never runs the decode itself: it would hold all of it */
	tc_jobs_no_help(p->j);
	s->f = f;	/* (its images take the build ids from there: set before the worker's) */
	s->pipe = p;
	if (tc_jobs_submit(p->j, 0, pipe_task, NULL, p)) {
		ret = tc_pt_session_nomem(e);
	} else {
		while ((got = tc_jobs_next(p->j, 0, &it, &len)) == 1) {
			switch (tc_jobs_tag(it)) {
			case PIPE_RUN:
				on_run(p, it);
				break;
			case PIPE_REC:
				on_rec(p, it, len);
				break;
			default:
				on_mark(p, it, &ret);
				break;
			}
		}
		if (ret == 1 || (!ret && (tc_jobs_failed(p->j) || p->nomem || p->wnomem)))
			ret = tc_pt_session_nomem(e);	/* an item lost */
		else if (ret)
			*e = p->err;
	}
	tc_jobs_free(p->j);
	/* the records' symbols point into the caller's images: they stay, the queues' own
	 * (the worker's, its missing images told already) go */
	for (size_t i = 0; i < s->nq; i++) {
		if (!p->im[i])
			continue;
		tc_pt_session_add_missing_lines(s, p->im[i]);
		tc_images_free(s->q[i].im);
		s->q[i].im = p->im[i];
	}
	s->pipe = NULL;	/* (s->cur: the worker's last, as one thread leaves it) */
	free(p->im);
	free(p->sb_next);
	free(p->wslot);
	free(p->wskim);
	free(p->rslot);
	free(p);
	s->gen++;
	return ret;
}
