#include "decoders/intel_pt/pt_session_priv.h"

#include <stddef.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/intel_pt/pt_config.h"
#include "decoders/intel_pt/pt_flow.h"
#include "decoders/jobs.h"
#include "decoders/time_heap.h"
#include "lib/images/images.h"

/* ---- --jobs: each queue decodes and formats its records in a worker thread ----
 * (decoders/jobs.h) Used when the command's records go to one writer that can run there
 * (struct tc_jobs_writer: decode's listing alone): each queue's records are formatted in
 * its decoding thread as the caller's thread would format them with one thread, symbols
 * from the queue's address spaces and thread as they are when the record is made
 * (tc_pt_session_symbolize's answer), images found missing in the same address spaces, so
 * in the same order. The bytes go to the caller's thread by reference (IT_BYTES), taken
 * before every mark and every TAKE_RECS records, and count in the lanes' budget until
 * read; a stop without code tells the caller's thread what to count (IT_NACC), in order.
 * Marks say where one thread's loop would have looked at the queue's time (after
 * tc_pt_flow_begin, after each tc_pt_flow_run): the worker runs in the smallest steps
 * (until the time it resumes at), and the caller's thread replays the time heap over the
 * marks, writing the bytes out as it passes them, so the queues' records interleave as
 * with one thread.
 *
 * Records that must come to the caller's thread (filters, -F, events) decode in it:
 * handing them over serialised (as before) cost more than it saved, twice the CPU of one
 * thread and never faster on two cores (report -j of a 4-queue trace: 0.42 s CPU with one
 * thread, 0.87 s with --jobs 2 and 1.0 s with --jobs 4). Analyses' ranges go over in a
 * few bytes each (pt_pipe.c: a worker decodes, the caller's thread analyses).
 *
 * Without time the queues are cut at their PSBs instead (pt_segment.c; one queue has
 * nothing to decode beside it, and several come whole one after the other, so a lane per
 * queue would hold each queue's output until the ones before it are written): what one thread
 * carries across a PSB is more than the PSB+ restores, so each segment, decoded from its
 * PSB alone, is checked against the flow before it at the join and decoded again in order
 * where it would differ:
 * - the model of libipt's block cache (pt_walk.c's marks): where a block ends early depends
 *   on every instruction decoded before, in order (record offsets after the cut depend on
 *   the decode before it): the marks a segment found missing must be missing in the true
 *   set too;
 * - a fall-back to libipt's decoder (pt_flow.c fall_back) redoes the buffer from its
 *   start: the segments never fall back; where the true flow's walk gives up, the queue is
 *   decoded again from its start with one thread's path, the records written left out;
 * - the return stack (libipt's is kept across PSBs; our emulated encoder, pt_enc.c,
 *   empties its own at a PSB, hardware need not): a segment that pops an empty stack
 *   gives up, and is decoded again in order;
 * - the range in flight at the cut and the status counts: joined, summed.
 * Several queues with time decode here, each whole in its lane (the walk making libipt's
 * tick events, pt_walk.h, for the pauses at each other queue's time), as do several
 * queues with the reference decoder: a queue is not cut (unless per-thread queues come
 * one after the other in time: pt_segment.c, in that order). The tail: the part of the
 * last per-thread queue that comes after every other queue's trace (by the trace's time
 * spans, before the lanes start; else from where its lane is once it is the last left)
 * has only its own records to give, in order: its lane's flow stops at a PSB there (the
 * cut, IT_CUT), and once the merge has the others done, the rest decodes in segments
 * from that flow (pt_segment.c's tail), or, where the first would not join it, the lane
 * goes on. */
/* The bytes formatted since the last take, to the caller's thread: an item per piece
 * (take gives them until it gives nothing). */
void tc_pt_lanes_take(struct queue *q)
{
	const struct tc_jobs_writer *lw = q->s->lw;
	struct bytes_item b = { .kind = IT_BYTES, .offset = q->woff };

	q->nw = 0;
	if (!q->w)
		return;
	while ((b.n = lw->take(q->w, &b.bytes, &b.block)) || b.block) {
		if (!q->out) {
			lw->put(lw->ctx, b.bytes, b.n, b.offset, b.block);
			continue;
		}
		if (tc_jobs_put(q->out, &b, sizeof(b)))
			continue;	/* lost: tc_jobs_failed says so */
		tc_jobs_charge(q->out, b.n);
		q->wput += b.n;
	}
}

static void put_mark(struct queue *q, enum item_kind kind, int ret)
{
	struct mark m = { kind, ret,
			  kind == IT_BEGIN || kind == IT_STEP || kind == IT_CUT ?
				  tc_pt_session_resumes_at(q) : 0 };

	/* the bytes before it (after the end none: the writer is the caller's then) */
	if (kind != IT_TASK_END || !q->wdone)
		tc_pt_lanes_take(q);
	tc_jobs_put(q->out, &m, sizeof(m));
}

/* The writer's symbols: tc_pt_session_symbolize's answer for the queue at work. A record's
 * pid is the queue's thread's or -1 (pt_flow takes it from thread_cb), except one the flow
 * restored when falling back to libipt's decoder (the walk runs without time here, where
 * thread_cb leaves the pid as it is): that one's own address space. */
static int lane_sym(void *ctx, int pid, uint64_t addr, struct tc_images_sym *sym)
{
	struct queue *q = ctx;
	struct tc_images *im = tc_pt_session_images(q);

	if (!im)
		return -1;
	return tc_images_symbol(im, pid < 0 ? q->pid : pid, addr, sym);
}

/* An ADDR_NACC (IT_NACC's tag, the dso after it if IT_FOUND), in the caller's thread. */
static void count_nacc(struct tc_pt_session *s, uint32_t tag, const char *dso)
{
	struct missing *ms;

	if (!(tag & IT_FOUND)) {
		if (!(tag & IT_QUIET))
			s->st.nomap_unmapped++;
	} else if ((ms = tc_pt_session_miss_for(s, dso))) {
		if (tag & IT_QUIET)
			ms->reached++;
		else
			ms->stops++;
	}
}

/* emit_cb in the decoding thread: what emit_rare and the command's writer do. */
void tc_pt_lanes_emit(struct queue *q, const struct tc_rec *r)
{
	struct tc_pt_session *s = q->s;

	if (r->type == (s->o.branches ? TC_REC_RANGE : TC_REC_BRANCH))
		return;
	if (r->type == TC_REC_ADDR_NACC) {
		struct tc_images_sym sym;
		const char *dso = NULL;
		size_t dl = 0;
		uint32_t tag = IT_NACC | (r->value ? IT_QUIET : 0);
		uint8_t *p;

		if (tc_pt_session_images(q) && !tc_images_symbol(q->im, q->pid, r->start, &sym) &&
		    sym.dso) {
			dso = sym.dso;
			dl = strlen(dso) + 1;
			tag |= IT_FOUND;
		}
		q->nacc++;
		if (!q->out) {
			count_nacc(s, tag, dso);	/* the caller's thread (the tail) */
		} else if ((p = tc_jobs_alloc(q->out, 4 + dl))) {
			memcpy(p, &tag, 4);
			if (dl)
				memcpy(p + 4, dso, dl);
		}
		if (r->value)
			return;	/* a branch target without code, not a stop (pt_flow.h) */
	}
	if (!q->w) {
		if (q->wfail)
			return;
		if (!(q->w = s->lw->open(s->lw->ctx, lane_sym, q, &q->space))) {
			q->wfail = true;
			return;
		}
	}
	s->lw->write(q->w, r);
	q->nrec++;
	q->woff = r->offset;
	if (++q->nw >= TAKE_RECS)
		tc_pt_lanes_take(q);
}

/* A task: the queue's decoding from where the last one stopped, until its output passes
 * TASK_BYTES at a step or the queue is done. */
static void run_task(void *arg, struct tc_jobs_out *out)
{
	struct queue *q = arg;
	struct tc_pt_session *s = q->s;
	const struct buf *b;
	bool last;
	int r;

	q->out = out;
	q->wput = 0;
	if (!q->wopen) {
		q->wopen = true;
		if (tc_pt_session_open_queue(s, q, s->f, &q->err)) {
			q->failed = true;
			q->wbuf = q->nbufs;
		}
	}
	while (q->wbuf < q->nbufs && q->wput < TASK_BYTES && !q->cut_hit) {
		b = &q->bufs[q->wbuf];
		if (!q->wbegun) {
			tc_pt_session_follow(q, q->wbuf, q->d);
			if (tc_pt_flow_begin(q->d, b->data, b->size, b->offset, &q->err)) {
				q->failed = true;
				q->wbuf = q->nbufs;
				break;
			}
			q->wbegun = true;
			if (tc_pt_session_by_time(s)) {
				put_mark(q, IT_BEGIN, 0);
				continue;
			}
		}
		/* the tail (pt_segment.c): its flow stops at the PSB the plan says, or, the last
		 * queue left (needing no steps), at a PSB ahead in the buffer (UINT64_MAX: none);
		 * the rest of it may be cut there */
		if (q->wbuf == q->plan_buf && !q->cut_at) {
			q->plan_buf = SIZE_MAX;
			if (tc_pt_flow_offset(q->d) < q->plan_at)
				tc_pt_flow_stop_at(q->d, (q->cut_at = q->plan_at));
		}
		last = __atomic_load_n(&q->cut_req, __ATOMIC_ACQUIRE);
		if (last && !q->cut_at &&
		    (q->cut_at = tc_pt_segment_tail_cut(b, tc_pt_flow_offset(q->d))) != UINT64_MAX)
			tc_pt_flow_stop_at(q->d, q->cut_at);
		/* one thread feeds a queue without time to the end of each buffer */
		r = tc_pt_flow_run(q->d, tc_pt_session_by_time(s) && !last ?
						 tc_pt_session_resumes_at(q) : UINT64_MAX);
		if (q->cut_at && q->cut_at != UINT64_MAX && r == 1 &&
		    !tc_pt_flow_stop_pending(q->d)) {
			q->cut_hit = true;
			put_mark(q, IT_CUT, 1);
			break;
		}
		if (tc_pt_session_by_time(s))
			put_mark(q, IT_STEP, r);
		if (r == 0) {
			q->wbegun = false;
			q->wbuf++;
			tc_pt_flow_stop_at(q->d, UINT64_MAX);	/* a cut not reached */
			q->cut_at = 0;
		}
	}
	if (q->wbuf == q->nbufs && !q->wdone) {
		q->wdone = true;
		if (q->d) {
			q->fst = *tc_pt_flow_stats(q->d);
			tc_pt_flow_free(q->d);
			q->d = NULL;
		}
		/* the writer let go of here, not when the caller's thread reaches the queue:
		 * with many short queues every one would keep its writer until then */
		if (q->w && s->lw->finish) {
			s->lw->finish(q->w);
			tc_pt_lanes_take(q);
			s->lw->close(q->w);
			q->w = NULL;
		}
		put_mark(q, IT_END, 0);
	}
	put_mark(q, IT_TASK_END, 0);
	q->out = NULL;
}

static int submit(struct tc_pt_session *s, struct queue *q)
{
	return tc_jobs_submit(s->par, (size_t)(q - s->q), run_task, NULL, q);
}

/* One item of q in the caller's thread: its context applied, a record emitted, a mark
 * read into *m. Returns its kind, -1 when the queue has nothing more submitted. */
static int take_item(struct tc_pt_session *s, struct queue *q, struct mark *m)
{
	const void *p;
	size_t len;
	uint32_t tag;

	if (tc_jobs_next(s->par, (size_t)(q - s->q), &p, &len) != 1)
		return -1;
	tag = tc_jobs_tag(p);
	switch (tag & IT_KIND) {
	case IT_BYTES: {
		struct bytes_item b;

		memcpy(&b, p, sizeof(b));
		s->lw->put(s->lw->ctx, b.bytes, b.n, b.offset, b.block);
		return IT_BYTES;
	}
	case IT_NACC:
		count_nacc(s, tag, (const char *)p + 4);
		return IT_NACC;
	case IT_END:
		q->mdone = true;
		break;
	case IT_TASK_END:
		/* two tasks ahead, while there is work (none past a cut till it is decided) */
		if (!q->mdone && !q->mcut && submit(s, q))
			return -1;
		break;
	case IT_CUT:
		q->mcut = true;
		break;
	}
	memcpy(m, p, sizeof(*m));
	return (int)m->kind;
}

/* Items of q up to a mark (not a task's end); -1 when there are no more. */
static int next_mark(struct tc_pt_session *s, struct queue *q, struct mark *it)
{
	int k;

	while ((k = take_item(s, q, it)) >= 0)
		if (k == IT_BEGIN || k == IT_STEP || k == IT_END || k == IT_CUT)
			return k;
	return -1;
}

static int queue_failed(struct queue *q, struct tc_err *e)
{
	*e = q->err;
	return -1;
}

/* q stopped at its cut (IT_CUT read): if it is the last queue left (tail), the rest of it
 * in segments (pt_segment.c's tail, from q->d there, its lane idle), or (not alone, or
 * where that would not be one thread's) its lane goes on. 1: done, its trace all decoded;
 * 0: the lane goes on, q->d paused in its buffer; 2: ... q->d past its buffer's end. */
static int lanes_cut(struct tc_pt_session *s, struct queue *q, bool tail, struct tc_err *e)
{
	struct mark m;
	int r = 0;

	/* its tasks to their end (submitted: the one that cut, the next one) */
	while (take_item(s, q, &m) >= 0)
		;
	if (q->failed)
		return queue_failed(q, e);
	if (tail) {
		/* its images' missing files before the segments' (as when it is closed) */
		tc_pt_session_add_missing_lines(s, q->im);
		/* (a redo, from the queue's start, counts every ADDR_NACC again) */
		if (!q->nacc && (r = tc_pt_segment_tail(s, q, e)) < 0)
			return -1;
		__atomic_store_n(&q->cut_req, 0, __ATOMIC_RELAXED);	/* one try */
	}
	q->cut_hit = q->mcut = false;
	q->cut_at = 0;
	if (r == 1) {
		tc_pt_flow_free(q->d);
		q->d = NULL;
		memset(&q->fst, 0, sizeof(q->fst));	/* the segments' counts have it */
		q->wbuf = q->nbufs;
		q->wdone = q->mdone = true;
		tc_pt_session_close_queue(s, q);
		return 1;
	}
	/* where q->d is now: in its buffer, or past it (as a step that ended it) */
	r = 0;
	if (!tc_pt_flow_paused(q->d)) {
		q->wbegun = false;
		q->wbuf++;
		r = 2;
	}
	if (submit(s, q) || submit(s, q))
		return tc_pt_session_nomem(e);
	return r;
}

/* decode_by_time over the marks. */
static int merge_by_time(struct tc_pt_session *s, struct tc_err *e)
{
	struct tc_time_heap h;
	struct mark it;
	int ret = 0, k;

	if (tc_time_heap_start(&h, s->nq))
		return tc_pt_session_nomem(e);
	while (h.n && !ret) {
		struct queue *q = &s->q[tc_time_heap_top(&h)];
		uint64_t key = q->mkey, until;

		s->cur = q;
		if (!q->begun) {
			if (q->next_buf == q->nbufs) {
				/* the items up to its end */
				while ((k = next_mark(s, q, &it)) >= 0 && k != IT_END)
					;
				if (q->failed) {
					ret = queue_failed(q, e);
					break;
				}
				tc_pt_session_close_queue(s, q);
				tc_time_heap_pop(&h);
				/* the last one left: its lane may give the rest of it to
				 * segments (lanes_cut) */
				if (h.n == 1 && tc_pt_segment_tail_usable(s))
					__atomic_store_n(&s->q[tc_time_heap_top(&h)].cut_req, 1,
							 __ATOMIC_RELEASE);
				continue;
			}
			if ((k = next_mark(s, q, &it)) != IT_BEGIN) {
				ret = q->failed ? queue_failed(q, e) : tc_pt_session_nomem(e);
				break;
			}
			key = it.t;
			q->next_buf++;
			q->begun = true;
		} else {
			until = tc_time_heap_next(&h);
			for (;;) {
				/* at its cut: now first, alone or not (the plan's guess was early) */
				k = q->mcut ? IT_CUT : next_mark(s, q, &it);
				if (k == IT_CUT && !q->mcut_wait && h.n > 1) {
					/* others to come before it: it waits at its cut */
					q->mcut_wait = true;
					key = it.t;
					break;
				}
				if (k == IT_CUT) {
					q->mcut_wait = false;
					if ((k = lanes_cut(s, q, h.n == 1, e)) < 0) {
						ret = -1;
						break;
					}
					if (k == 0)
						continue;
					/* its buffer ended (2), or all of it (1: no more items) */
					q->begun = false;
					if (k == 1)
						q->next_buf = q->nbufs;
					break;
				}
				if (k != IT_STEP) {
					ret = tc_pt_session_nomem(e);
					break;
				}
				key = it.t;
				if (it.ret == 0) {
					q->begun = false;
					break;
				}
				if (it.t > until)
					break;
			}
		}
		q->mkey = key;
		tc_time_heap_update_top(&h, key);
	}
	tc_time_heap_free(&h);
	return ret;
}

int tc_pt_lanes_decode(struct tc_pt_session *s, const struct tc_perf_data_features *f,
		       struct tc_err *e)
{
	struct mark it;
	size_t qi, bi;
	uint64_t at;
	int k;

	s->f = f;
	for (size_t i = 0; i < s->nq; i++)
		s->q[i].plan_buf = SIZE_MAX;
	if (tc_pt_session_by_time(s) && !tc_pt_segment_tail_plan(s, &qi, &bi, &at)) {
		s->q[qi].plan_buf = bi;
		s->q[qi].plan_at = at;
	}
	for (size_t i = 0; i < s->nq; i++) {
		s->q[i].s = s;
		if (submit(s, &s->q[i]) || submit(s, &s->q[i]))
			return tc_pt_session_nomem(e);
	}
	if (tc_pt_session_by_time(s))
		return merge_by_time(s, e);
	for (size_t i = 0; i < s->nq; i++) {
		struct queue *q = &s->q[i];

		s->cur = q;
		while ((k = next_mark(s, q, &it)) >= 0 && k != IT_END)
			;
		if (q->failed)
			return queue_failed(q, e);
		if (k != IT_END)
			return tc_pt_session_nomem(e);
		tc_pt_session_close_queue(s, q);
	}
	return 0;
}
