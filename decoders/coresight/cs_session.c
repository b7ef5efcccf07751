/* Demux + per-ID decoder table; see cs_session.h. */
#include "decoders/coresight/cs_session.h"

#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdlib.h>

#include <pthread.h>
#include <string.h>

#include <opencsd/c_api/opencsd_c_api.h>

#include "decoders/coresight/cs_frame.h"
#include "decoders/jobs.h"
#include "lib/util/diag.h"
#include "lib/util/grow.h"

#define NIDS 128

/* ---- decoding trace IDs in parallel (tc_cs_session_par) ----
 * The demultiplexer runs in the caller's thread; what it would hand a decoder (bytes, a
 * reset, the end) becomes an operation queued on that ID's lane (decoders/jobs.h), batched,
 * and part of a step of the schedule: the one-thread order, one step per run of an ID's
 * operations that no other ID's come between (the demultiplexer hands over a frame's bytes
 * at a time, some 15, and an ID's trace comes in runs of many frames), within one batch. A
 * lane's records are serialised with an end mark after each step's last operation; the
 * caller's thread reads them back step by step and emits them, so records come out as with
 * one thread. It emits as the window fills, and goes on demultiplexing rather than wait
 * for a step whose lane is still at work (up to twice the window: queue_op).
 *
 * With a formatter (tc_cs_session_par_format) a lane formats its records itself, unless its
 * ID is the only one the trace has had for a while (SOLO_BYTES): then the lane's batches are
 * split, the lane decodes and serialises its records and the caller's thread formats them as
 * it emits the step, while the lane decodes the next batch (one ID alone would otherwise
 * keep one thread busy and the others idle). The formatting state (the ID's writer, its
 * branch state, its symbols' images) is used by one thread at a time, in the one-thread
 * order: a split batch's records are formatted by the caller when it emits their step, and
 * a batch the lane formats is submitted only once every split step of its ID was emitted. */
enum op_kind { OP_FEED, OP_RESET, OP_FINISH };

/* 24 bytes: an ID's trace comes a frame's bytes at a time (some 15), an operation each,
 * and a batch of 32 KiB holds thousands (at 40 bytes, 5 times the data they stand for). */
struct op {
	struct tc_etm_ocsd *d;
	uint64_t index;
	uint32_t len;		/* FEED: bytes at batch data + the lens of the ops before */
	uint8_t kind;		/* enum op_kind */
	bool end;		/* the last of its step: the lane marks the end after it */
};

#define OP_LEN_MAX ((size_t)1 << 30)	/* a longer feed is queued in pieces */

struct batch {
	struct tc_cs_session_par *p;
	struct batch *next;		/* in the spares */
	uint8_t id;
	bool split;		/* records serialised, formatted by the caller's thread */
	struct op *ops;
	size_t nops, cops;
	uint8_t *data;
	size_t ndata, cdata;
};

/* an item's first 4 bytes; ITEM_PIECE: bytes of a step not its last (ITEM_BYTES);
 * ITEM_SHORT: records in short (put_rec) */
enum item_kind { ITEM_REC, ITEM_END, ITEM_NOTE, ITEM_BYTES, ITEM_PIECE, ITEM_SHORT };

/* With a formatter: what a lane's decode gave, kept while OpenCSD's lock is held and
 * written after it (records and notes in order, an end after each operation). */
enum kept_kind { KEPT_REC, KEPT_NOTE, KEPT_END };

struct kept {
	uint32_t kind, nlen, tlen, pad;	/* name and text bytes (with their NULs), 0 none */
	struct tc_rec r;		/* KEPT_REC, its pointers NULL */
};

struct keep {
	unsigned char *b;
	size_t len, cap;
	uint64_t last;			/* the last record's offset */
	bool nomem;
	char pad[64];
};

struct step {
	uint8_t lane;
	uint32_t bytes;
};

struct tc_cs_session_par {
	struct tc_jobs *j;
	tc_etm_emit_fn emit;		/* the caller's thread, in order */
	void (*lane_rec)(void *ctx, const struct tc_rec *r);	/* the decoding thread */
	void (*note)(void *ctx, const char *text);	/* the caller's thread, in order */
	void *ctx;
	struct batch *pend[NIDS];
	struct tc_rec prev[NIDS];	/* the last record read of each ID (tc_jobs_get_rec) */
	struct {			/* the last record put (tc_jobs_put_rec), by the thread */
		struct tc_rec r;	/* decoding the ID, on cache lines of its own */
		char pad[64];
	} wprev[NIDS];
	/* tc_cs_session_par_format */
	void (*fmt)(void *ctx, const struct tc_rec *r);
	size_t (*take)(void *ctx, uint8_t id, const char **bytes, void **block);
	void (*put)(void *ctx, const char *bytes, size_t n, uint64_t offset, void *block);
	struct keep keep[NIDS];		/* each the thread decoding the ID's */
	struct step *steps;
	size_t head, nsteps, csteps;
	uint64_t seq0;			/* steps that came before steps[0] */
	uint64_t last_step[NIDS];	/* of each ID its last step's (seq0 + index) */
	uint64_t split_end[NIDS];	/* 1 + the last step of a split batch of the ID */
	uint8_t solo_id;		/* the ID of the latest operations, */
	uint64_t solo_bytes;		/* how many bytes of them in a row */
	uint64_t unread;		/* bytes of the steps not yet emitted */
	uint64_t emit_at;		/* unread past it: steps go out */
	bool mid;			/* steps[head] is partly emitted */
	bool nomem;
	/* batches run, kept with their arrays for the next ones (a batch's arrays grown anew
	 * each time, and freed by another thread: the heap's top went back to the kernel and
	 * came again, a page fault per 4 KiB) */
	pthread_mutex_t spare_mu;
	struct batch *spare;
	unsigned nspare;
};

#define SPARE_MAX 64

/* The output of the task running in this thread (NULL outside a task). */
static _Thread_local struct tc_jobs_out *cur_out;
/* With a formatter, while the task decodes: where records and notes are kept. */
static _Thread_local struct keep *cur_keep;
/* The task decodes a split batch: records serialised, not formatted. */
static _Thread_local bool cur_split;
/* The caller's thread, formatting a split batch's records: notes go to it at once. */
static _Thread_local struct tc_cs_session_par *fmt_here;

/* OpenCSD's default error logger is one object for the process (its last error is what
 * etm_ocsd reads after a fatal response): decoders of two IDs must not log at once.
 * A decoder on OpenCSD's full decoder runs its lane's operations holding the lock. The
 * fast decoders (etm4_walk.c) use only OpenCSD's packet processor, which shares nothing
 * else; their lanes decode at once, and one takes the lock when the library logs: the
 * logger's output (a string callback, nothing printed) tells it, before the error is
 * kept; it holds the lock until its operation ends, past what etm_ocsd reads of it. */
static pthread_mutex_t ocsd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t errlog_once = PTHREAD_ONCE_INIT;
static bool errlog_ok;			/* the callback is set: fast lanes need no lock */
static _Thread_local bool errlog_held;	/* this thread took the lock when it logged */

static void errlog_cb(const void *ctx, const char *msg, const int len)
{
	(void)ctx;
	(void)msg;
	(void)len;
	if (!errlog_held) {
		pthread_mutex_lock(&ocsd_lock);
		errlog_held = true;
		/* from now on the task must not wait for the budget, as run_batch's locked
		 * path: the caller's thread may want the lock for the task it runs itself */
		if (cur_out)
			tc_jobs_out_nowait(cur_out);
	}
}

/* Also at the end of each entry point that may call the library in the caller's thread
 * (decoders made, fed, reset or finished there): where it logged there, outside a task,
 * nothing else would let go of the lock (a worker that logs, or a locked task the caller's
 * thread then runs, would wait for it for ever). */
static void errlog_release(void)
{
	if (errlog_held) {
		errlog_held = false;
		pthread_mutex_unlock(&ocsd_lock);
	}
}

/* The logger's output: our callback only (the library's default prints nothing; its
 * verbosity stays the default, errors). The callback object lives in a tree's data: a tree
 * of its own, kept for the process. */
static void errlog_setup(void)
{
	dcd_tree_handle_t t = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);

	errlog_ok = t != C_API_INVALID_TREE_HANDLE &&
		    ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 1) == OCSD_OK &&
		    ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_NONE, NULL) == OCSD_OK &&
		    ocsd_def_errlog_set_strprint_cb(t, NULL, errlog_cb) == OCSD_OK;
}

struct lane_ctx {
	struct tc_cs_session *s;
	uint8_t id;
};

struct tc_cs_session {
	unsigned what;
	struct tc_cs_session_par *par;		/* NULL: decoders run here, as fed */
	struct lane_ctx lanes[NIDS];
	tc_etm_emit_fn emit;
	tc_etm_mem_fn mem;
	void *ctx;
	struct tc_etm_ocsd *dec[NIDS];
	uint64_t id_bytes[NIDS];
	uint8_t raw_id;			/* the first source added: where RAW blocks go */
	int nsources;
	struct tc_cs_frame *csf;
	enum tc_cs_session_format csf_fmt;
	uint64_t fed;			/* bytes given to csf so far: its offsets count from 0 */
	uint64_t block_start, block_base;	/* csf offset and input offset of this block */
};

struct tc_cs_session *tc_cs_session_new(unsigned what, tc_etm_emit_fn emit, tc_etm_mem_fn mem,
					void *ctx, struct tc_err *e)
{
	struct tc_cs_session *s = calloc(1, sizeof(*s));

	if (!s) {
		tc_err_sys(e, ENOMEM, "decode session");
		return NULL;
	}
	s->what = what;
	s->emit = emit;
	s->mem = mem;
	s->ctx = ctx;
	return s;
}

void tc_cs_session_free(struct tc_cs_session *s)
{
	if (!s)
		return;
	for (int i = 0; i < NIDS; i++)
		tc_etm_ocsd_free(s->dec[i]);
	errlog_release();
	tc_cs_frame_free(s->csf);
	free(s);
}

/* ---- the parallel machinery ---- */

/* Append a kept entry of kind with r (or NULL) and texts name and text (or NULL). */
static void keep_add(struct keep *k, uint32_t kind, const struct tc_rec *r, const char *name,
		     const char *text)
{
	size_t nl = name ? strlen(name) + 1 : 0, tl = text ? strlen(text) + 1 : 0,
	       need = (sizeof(struct kept) + nl + tl + 7) & ~(size_t)7;
	struct kept *e;

	if (tc_grow((void **)&k->b, &k->cap, k->len + need, 1)) {
		k->nomem = true;
		return;
	}
	e = (struct kept *)(k->b + k->len);
	e->kind = kind;
	e->nlen = (uint32_t)nl;
	e->tlen = (uint32_t)tl;
	if (r) {
		e->r = *r;
		e->r.name = e->r.text = NULL;
	}
	if (nl)
		memcpy(e + 1, name, nl);
	if (tl)
		memcpy((char *)(e + 1) + nl, text, tl);
	k->len += need;
}

/* ---- records in short ----
 * A record that differs from its lane's previous one only in offset, start, end, insns,
 * isa and its last instruction (a range after a range, most of a trace) goes out as those
 * fields, many to an item (ITEM_SHORT), not as an item of tc_jobs_put_rec's apiece: that
 * costs some 300 instructions a record, written and read (a quarter of `report` with
 * --jobs 2, all of its records going through the caller's thread; the lane's time of a
 * trace ID decoded alone). Both sides set those fields of their previous record (the
 * writer's wprev, the reader's prev), as tc_jobs_put_rec and tc_jobs_get_rec keep them,
 * so the two codecs mix; the reader gets every field as tc_jobs_get_rec would give it.
 * Fields are read and written one by one, each as wide as it is: r was just written so
 * by the decoder, and a wider load of it (GCC's merged compares, or its `rep movs` for a
 * 40-byte memcpy) waits for those stores to reach the cache (a stall per record). */
struct short_rec {
	uint64_t offset, start, end;
	uint32_t insns;
	enum tc_isa isa;
	char last;
	uint8_t last_type, last_size;
	bool last_taken;
};

#define SHORT_MAX 64	/* records an item holds, at most */

/* The records of the running task not yet put (always put before any other item of it). */
static _Thread_local struct {
	uint32_t n;
	struct short_rec e[SHORT_MAX];
} shorts;

static void put_shorts(void)
{
	uint32_t kind = ITEM_SHORT;
	unsigned char *buf;

	if (!shorts.n)
		return;
	/* for lack of memory the records are lost: tc_jobs_alloc says so (tc_jobs_failed) */
	if (cur_out && (buf = tc_jobs_alloc(cur_out, 8 + (size_t)shorts.n * sizeof(*shorts.e)))) {
		memcpy(buf, &kind, 4);
		memcpy(buf + 4, &shorts.n, 4);
		memcpy(buf + 8, shorts.e, (size_t)shorts.n * sizeof(*shorts.e));
	}
	shorts.n = 0;
}

/* Which fields of s go to d (s and d records, or a short one). */
#define SHORT_FIELDS(d, s)                                                                   \
	do {                                                                                \
		(d)->offset = (s)->offset;                                                  \
		(d)->start = (s)->start;                                                    \
		(d)->end = (s)->end;                                                        \
		(d)->insns = (s)->insns;                                                    \
		(d)->isa = (s)->isa;                                                        \
		(d)->last = (s)->last;                                                      \
		(d)->last_type = (s)->last_type;                                            \
		(d)->last_size = (s)->last_size;                                            \
		(d)->last_taken = (s)->last_taken;                                          \
	} while (0)

/* Equal, one field at a time: an empty asm between the loads keeps GCC from merging two
 * compares of neighbouring fields into one wider load (see above). */
#define SAME(a, b)                                                                           \
	({                                                                                  \
		__typeof__((a) + 0) _x = (a);                                                  \
		__asm__("" : "+r"(_x));                                                     \
		_x == (b);                                                                  \
	})

/* r put for the caller's thread, prev the lane's previous record (the writer's). */
static void put_rec(struct tc_rec *prev, const struct tc_rec *r)
{
	if (SAME(r->type, prev->type) && SAME(r->id, prev->id) && SAME(r->cpu, prev->cpu) &&
	    SAME(r->pid, prev->pid) && SAME(r->tid, prev->tid) && !r->name && !r->text &&
	    SAME(r->value, prev->value) && SAME(r->has_time, prev->has_time) &&
	    SAME(r->time, prev->time) && !r->fields && !r->nfields) {
		struct short_rec *e = &shorts.e[shorts.n];

		SHORT_FIELDS(prev, r);
		SHORT_FIELDS(e, r);
		if (++shorts.n == SHORT_MAX)
			put_shorts();
		return;
	}
	put_shorts();
	tc_jobs_put_rec(cur_out, prev, r, ITEM_REC, 0);
}

/* lane_emit but for a record the lane formats (below). */
static __attribute__((noinline)) void lane_emit_other(struct lane_ctx *l,
						      struct tc_cs_session_par *p,
						      const struct tc_rec *r)
{
	if (r->type == TC_REC_CONTEXT && p->lane_rec)
		p->lane_rec(p->ctx, r);
	/* decoders give no fields (events are the session's) */
	if (cur_keep) {
		keep_add(cur_keep, KEPT_REC, r, r->name, r->text);
	} else if (p->fmt && !cur_split) {
		p->keep[l->id].last = r->offset;
		p->fmt(p->ctx, r);
	} else if (cur_out)
		put_rec(&p->wprev[l->id].r, r);
}

/* A decoder's record, in the thread decoding its ID: formatted there (most: a tail call,
 * no frame of its own), or kept for the caller's thread. */
static void lane_emit(void *ctx, const struct tc_rec *r)
{
	struct lane_ctx *l = ctx;
	struct tc_cs_session_par *p = l->s->par;

	if (__builtin_expect(p->fmt && !cur_split && !cur_keep && r->type != TC_REC_CONTEXT, 1)) {
		p->keep[l->id].last = r->offset;
		p->fmt(p->ctx, r);
		return;
	}
	lane_emit_other(l, p, r);
}

static void put_mark(uint32_t kind, const char *text)
{
	size_t n = text ? strlen(text) + 1 : 0;
	uint8_t *buf;

	if (cur_keep && kind == ITEM_NOTE) {
		keep_add(cur_keep, KEPT_NOTE, NULL, NULL, text);
		return;
	}
	if (fmt_here && kind == ITEM_NOTE) {
		if (fmt_here->note)
			fmt_here->note(fmt_here->ctx, text);
		return;
	}
	put_shorts();
	if (!cur_out || !(buf = tc_jobs_alloc(cur_out, 4 + n)))
		return;
	memcpy(buf, &kind, 4);
	if (n)
		memcpy(buf + 4, text, n);
}

/* An operation's bytes: its end mark, with the offset of its last record; the bytes stay
 * the writer's (block, if not NULL, goes with them to put). */
struct bytes_item {
	uint32_t kind, pad;
	uint64_t last;
	const char *b;
	size_t n;
	void *block;
};

static void put_bytes(struct tc_cs_session_par *p, uint8_t id, uint64_t last)
{
	struct bytes_item it = { .kind = ITEM_PIECE, .last = last }, next;

	put_shorts();
	/* take gives a step's bytes in pieces, then nothing: each piece an item, the last
	 * one (empty if the step made none) the step's end */
	it.n = p->take(p->ctx, id, &it.b, &it.block);
	for (;;) {
		next = (struct bytes_item){ .kind = ITEM_PIECE, .last = last };
		if (it.n || it.block)
			next.n = p->take(p->ctx, id, &next.b, &next.block);
		if (!next.n && !next.block)
			it.kind = ITEM_BYTES;
		if (!cur_out || tc_jobs_put(cur_out, &it, sizeof(it)))
			p->keep[id].nomem = true;	/* (the block, if any, is lost) */
		else
			tc_jobs_charge(cur_out, it.n);	/* text held: the budget bounds it */
		if (it.kind == ITEM_BYTES)
			return;
		it = next;
	}
}

/* What the lane's decode kept, written: records to fmt, an item of bytes per operation. */
static void write_kept(struct tc_cs_session_par *p, uint8_t id, struct keep *k)
{
	size_t at = 0;

	while (at < k->len) {
		struct kept *e = (struct kept *)(k->b + at);
		const char *name = e->nlen ? (const char *)(e + 1) : NULL,
			   *text = e->tlen ? (const char *)(e + 1) + e->nlen : NULL;
		at += (sizeof(*e) + e->nlen + e->tlen + 7) & ~(size_t)7;
		switch (e->kind) {
		case KEPT_REC:
			e->r.name = name;
			e->r.text = text;
			k->last = e->r.offset;
			p->fmt(p->ctx, &e->r);
			break;
		case KEPT_NOTE:
			put_mark(ITEM_NOTE, text);
			break;
		default:
			put_bytes(p, id, k->last);
			break;
		}
	}
	k->len = 0;
}

/* The decoder's ctx is its lane's: memory reads go on to the session's callback. */
static size_t lane_mem(void *ctx, const struct tc_etm_mem_ctx *m, uint64_t addr, uint8_t *buf,
		       size_t len)
{
	struct lane_ctx *l = ctx;

	return l->s->mem(l->s->ctx, m, addr, buf, len);
}

void tc_cs_session_par_note(const char *text)
{
	put_mark(ITEM_NOTE, text);
}

/* o, its bytes (FEED) at data. */
static void run_op(const struct op *o, const uint8_t *data)
{
	switch (o->kind) {
	case OP_FEED:
		tc_etm_ocsd_feed(o->d, o->index, data, o->len);
		break;
	case OP_RESET:
		tc_etm_ocsd_reset(o->d, o->index);
		break;
	case OP_FINISH:
		tc_etm_ocsd_finish(o->d);
		break;
	}
}

/* Fast decoders only: no lock unless the library logs (errlog_cb). One whose ID OpenCSD's
 * decoder took over (etm_ocsd.h) runs locked from its next batch; in the batch where it
 * took over, it shares with the others what the fast ones do: the logger, behind errlog_cb. */
static bool lock_free(const struct batch *b)
{
	if (!errlog_ok)
		return false;
	for (size_t i = 0; i < b->nops; i++) {
		const struct tc_etm_ocsd_stats *st = tc_etm_ocsd_stats(b->ops[i].d);

		if (!st->fast || st->handovers)
			return false;
	}
	return true;
}

static void run_batch(void *arg, struct tc_jobs_out *out)
{
	struct batch *b = arg;
	struct tc_cs_session_par *p = b->p;
	struct keep *k = &p->keep[b->id];

	/* the next operation's bytes; a batch of resets and ends alone has no data (NULL) */
	const uint8_t *at = b->data;

	cur_out = out;
	cur_split = b->split;
	if (lock_free(b)) {
		/* records are written as they come, each operation's bytes at its end */
		for (size_t i = 0; i < b->nops; i++) {
			run_op(&b->ops[i], at);
			if (b->ops[i].len)
				at += b->ops[i].len;
			errlog_release();
			if (!b->ops[i].end)
				continue;
			if (p->fmt && !b->split)
				put_bytes(p, b->id, k->last);
			else
				put_mark(ITEM_END, NULL);
		}
		put_shorts();
		cur_out = NULL;
		cur_split = false;
		return;
	}
	/* holding the lock it must not wait for the budget (the caller's thread may want
	 * the lock to run the task it waits for): the window bounds what it holds */
	tc_jobs_out_nowait(out);
	cur_keep = p->fmt && !b->split ? k : NULL;	/* written once the lock is let go of */
	pthread_mutex_lock(&ocsd_lock);
	errlog_held = true;	/* errlog_cb: already held */
	for (size_t i = 0; i < b->nops; i++) {
		run_op(&b->ops[i], at);
		if (b->ops[i].len)
			at += b->ops[i].len;
		if (!b->ops[i].end)
			continue;
		if (cur_keep)
			keep_add(k, KEPT_END, NULL, NULL, NULL);
		else
			put_mark(ITEM_END, NULL);
	}
	errlog_release();
	if (cur_keep) {
		cur_keep = NULL;
		write_kept(p, b->id, k);	/* k->nomem: read by drain, once tasks are done */
	}
	put_shorts();
	cur_out = NULL;
	cur_split = false;
}

static void drop_batch(struct batch *b)
{
	free(b->ops);
	free(b->data);
	free(b);
}

/* A batch is done with (in the thread that ran it): kept for another, or freed. */
static void free_batch(void *arg)
{
	struct batch *b = arg;
	struct tc_cs_session_par *p = b->p;

	pthread_mutex_lock(&p->spare_mu);
	if (p->nspare < SPARE_MAX) {
		b->next = p->spare;
		p->spare = b;
		p->nspare++;
		b = NULL;
	}
	pthread_mutex_unlock(&p->spare_mu);
	if (b)
		drop_batch(b);
}

/* An empty batch for id: a spare, else a new one. */
static struct batch *new_batch(struct tc_cs_session_par *p, uint8_t id)
{
	struct batch *b;

	pthread_mutex_lock(&p->spare_mu);
	if ((b = p->spare)) {
		p->spare = b->next;
		p->nspare--;
	}
	pthread_mutex_unlock(&p->spare_mu);
	if (!b && !(b = calloc(1, sizeof(*b))))
		return NULL;
	b->p = p;
	b->next = NULL;
	b->id = id;
	b->split = false;
	b->nops = b->ndata = 0;
	return b;
}

static bool emit_step(struct tc_cs_session_par *p, bool nowait);

/* An ID alone for this many bytes of trace (operations counted as queue_op does): its
 * batches split (the trace of an ID alone comes in hundreds of KiB, that of several IDs
 * alternates every few hundred bytes) */
#define SOLO_BYTES (32u << 10)

/* Submit id's pending batch. may_emit: steps may be emitted first (not from emit_step). */
static void submit(struct tc_cs_session_par *p, uint8_t id, bool may_emit)
{
	struct batch *b = p->pend[id];

	if (!b)
		return;
	p->pend[id] = NULL;
	if (b->nops)
		b->ops[b->nops - 1].end = true;	/* a step ends with its batch */
	if (p->fmt) {
		b->split = p->solo_id == id && p->solo_bytes >= SOLO_BYTES;
		/* formatted on the lane: not before the caller formatted the ID's split
		 * steps (emitting them now), else split too */
		if (!b->split && p->split_end[id] > p->seq0 + p->head) {
			if (may_emit)
				while (p->split_end[id] > p->seq0 + p->head && p->head < p->nsteps)
					emit_step(p, false);
			else
				b->split = true;
		}
		if (b->split)
			p->split_end[id] = p->last_step[id] + 1;
	}
	if (tc_jobs_submit(p->j, id, run_batch, free_batch, b))
		p->nomem = true;
}

/* A split step's formatted bytes, in the caller's thread: put as the lane would have. */
static void put_taken(struct tc_cs_session_par *p, uint8_t id)
{
	const char *bytes;
	void *block;
	size_t n;

	while ((n = p->take(p->ctx, id, &bytes, &block)) || block)
		p->put(p->ctx, bytes, n, p->keep[id].last, block);
}

/* The next step is all emitted. */
static bool step_done(struct tc_cs_session_par *p)
{
	p->unread -= p->steps[p->head++].bytes;
	p->mid = false;
	return true;
}

/* The lane's record just read (p->prev[lane]) to the caller's emit, or formatted here. */
static inline void deliver(struct tc_cs_session_par *p, uint8_t lane)
{
	if (p->fmt) {
		/* a split step's: formatted here, as the lane would have */
		p->keep[lane].last = p->prev[lane].offset;
		fmt_here = p;
		p->fmt(p->ctx, &p->prev[lane]);
		fmt_here = NULL;
	} else {
		p->emit(p->ctx, &p->prev[lane]);
	}
}

/* Emit the next step's records (the caller's thread): true once all are; with nowait,
 * false where its lane would be waited for (the step stays the next, perhaps partly
 * emitted: the next call goes on with it). */
static bool emit_step(struct tc_cs_session_par *p, bool nowait)
{
	const struct step *st = &p->steps[p->head];
	const void *it;
	size_t len;
	int got;

	/* its operation may still wait in the batch (submitted before the step counts as
	 * emitted: a split step of the lane's, this one, is not formatted yet) */
	if (!p->mid) {
		submit(p, st->lane, false);
		p->mid = true;
	}
	while ((got = nowait ? tc_jobs_poll(p->j, st->lane, &it, &len)
			     : tc_jobs_next(p->j, st->lane, &it, &len)) == 1) {
		size_t xl;

		switch (tc_jobs_tag(it)) {
		case ITEM_END:
			if (p->fmt)
				put_taken(p, st->lane);	/* a split step's */
			return step_done(p);
		case ITEM_PIECE:
		case ITEM_BYTES: {
			struct bytes_item bi;

			memcpy(&bi, it, sizeof(bi));
			if (bi.n || bi.block)
				p->put(p->ctx, bi.b, bi.n, bi.last, bi.block);
			if (bi.kind == ITEM_BYTES)
				return step_done(p);
			break;
		}
		case ITEM_NOTE:
			if (p->note)
				p->note(p->ctx, (const char *)it + 4);
			break;
		case ITEM_SHORT: {
			struct tc_rec *r = &p->prev[st->lane];
			const unsigned char *e = (const unsigned char *)it + 8;
			uint32_t n;

			memcpy(&n, (const unsigned char *)it + 4, 4);
			r->name = r->text = NULL;	/* as tc_jobs_get_rec leaves them */
			r->fields = NULL;
			r->nfields = 0;
			for (uint32_t i = 0; i < n; i++, e += sizeof(struct short_rec)) {
				struct short_rec sr;

				memcpy(&sr, e, sizeof(sr));	/* items are 8-byte aligned */
				SHORT_FIELDS(r, &sr);
				deliver(p, st->lane);
			}
			break;
		}
		default:
			tc_jobs_get_rec(it, len, &p->prev[st->lane], &xl);
			deliver(p, st->lane);
			break;
		}
	}
	if (got < 0)
		return false;
	p->nomem = true;	/* an end mark lost: only for lack of memory */
	return step_done(p);
}

#define BATCH_BYTES (32 * 1024)
#define BATCH_OPS 4096
#define WINDOW_BYTES (256u << 10)
#define WINDOW_STEPS (1u << 18)
/* With a formatter the lanes' output is text, some 150-300 bytes per byte of trace, held
 * until written: smaller batches and window (and the text counts against the lanes'
 * budget, put_bytes) */
static const size_t fmt_batch = 4 * 1024, fmt_window = 64u << 10;

/* Queue an operation for id's decoder d, as its next step. */
static void queue_op(struct tc_cs_session *s, uint8_t id, enum op_kind kind, uint64_t index,
		     const uint8_t *data, size_t len)
{
	struct tc_cs_session_par *p = s->par;
	struct batch *b = p->pend[id];

	if (!b && !(b = p->pend[id] = new_batch(p, id))) {
		p->nomem = true;
		return;
	}
	if (tc_grow((void **)&b->ops, &b->cops, b->nops + 1, sizeof(*b->ops)) ||
	    tc_grow((void **)&b->data, &b->cdata, b->ndata + len, 1) ||
	    tc_grow((void **)&p->steps, &p->csteps, p->nsteps + 1, sizeof(*p->steps))) {
		p->nomem = true;
		return;
	}
	/* the step still open (its last operation not ended: the last step, not emitted) is
	 * id's: this operation joins it; else that step ends and this one begins one */
	if (!b->nops || b->ops[b->nops - 1].end || p->head == p->nsteps ||
	    p->steps[p->nsteps - 1].lane != id) {
		if (p->head < p->nsteps) {
			struct batch *o = p->pend[p->steps[p->nsteps - 1].lane];

			if (o && o->nops)
				o->ops[o->nops - 1].end = true;
		}
		p->steps[p->nsteps++] = (struct step){ id, 0 };
	}
	p->last_step[id] = p->seq0 + p->nsteps - 1;
	if (p->solo_id == id) {
		p->solo_bytes += len + 16;
	} else {
		p->solo_id = id;
		p->solo_bytes = len + 16;
	}
	b->ops[b->nops++] = (struct op){ s->dec[id], index, (uint32_t)len, (uint8_t)kind, false };
	if (len)
		memcpy(b->data + b->ndata, data, len);
	b->ndata += len;
	p->steps[p->nsteps - 1].bytes += (uint32_t)len + 16;
	p->unread += len + 16;
	if (b->ndata >= (p->fmt ? fmt_batch : BATCH_BYTES) || b->nops >= BATCH_OPS)
		submit(p, id, true);
	/* bounded: the oldest steps go out while the window is full, an eighth of it at a
	 * time; a step whose lane a worker is still at is not waited for before the window
	 * is twice full: this thread goes on demultiplexing (for a while), so that the workers
	 * have batches to decode (emitting half the window at once, waiting and running
	 * lanes' tasks meanwhile, it left the worker idle 10-30% of etm.data's 4-ID part) */
	if (p->unread > p->emit_at || p->nsteps - p->head > WINDOW_STEPS) {
		size_t w = p->fmt ? fmt_window : WINDOW_BYTES;
		bool nowait = p->unread <= 2 * w && p->nsteps - p->head <= WINDOW_STEPS;

		p->emit_at = w;
		while (p->head < p->nsteps && (p->unread > w - w / 8 ||
					       p->nsteps - p->head > WINDOW_STEPS / 2))
			if (!emit_step(p, nowait)) {
				p->emit_at = p->unread + w / 16;
				break;
			}
		memmove(p->steps, p->steps + p->head, (p->nsteps - p->head) * sizeof(*p->steps));
		p->seq0 += p->head;
		p->nsteps -= p->head;
		p->head = 0;
	}
}

struct tc_cs_session_par *tc_cs_session_par_new(unsigned jobs, tc_etm_emit_fn emit,
						void (*lane_rec)(void *ctx, const struct tc_rec *r),
						void (*note)(void *ctx, const char *text), void *ctx)
{
	struct tc_cs_session_par *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	pthread_mutex_init(&p->spare_mu, NULL);
	if (!(p->j = tc_jobs_new(jobs, NIDS, 0))) {
		pthread_mutex_destroy(&p->spare_mu);
		free(p);
		return NULL;
	}
	pthread_once(&errlog_once, errlog_setup);
	p->emit = emit;
	p->lane_rec = lane_rec;
	p->note = note;
	p->ctx = ctx;
	p->emit_at = WINDOW_BYTES;
	return p;
}

int tc_cs_session_par_drain(struct tc_cs_session_par *p)
{
	if (!p)
		return 0;
	for (unsigned id = 0; id < NIDS; id++)
		submit(p, (uint8_t)id, false);
	while (p->head < p->nsteps)
		emit_step(p, false);
	p->seq0 += p->nsteps;
	p->head = p->nsteps = 0;
	for (unsigned id = 0; id < NIDS; id++)
		p->nomem |= p->keep[id].nomem;
	return p->nomem || tc_jobs_failed(p->j) ? -1 : 0;
}

void tc_cs_session_par_format(struct tc_cs_session_par *p,
			      void (*fmt)(void *ctx, const struct tc_rec *r),
			      size_t (*take)(void *ctx, uint8_t id, const char **bytes,
					     void **block),
			      void (*put)(void *ctx, const char *bytes, size_t n, uint64_t offset,
					  void *block))
{
	p->fmt = fmt;
	p->take = take;
	p->put = put;
	p->emit_at = fmt_window;
}

void tc_cs_session_par_free(struct tc_cs_session_par *p)
{
	if (!p)
		return;
	tc_jobs_free(p->j);	/* first: its tasks use the batches */
	for (unsigned id = 0; id < NIDS; id++)
		free(p->keep[id].b);
	for (unsigned id = 0; id < NIDS; id++)
		if (p->pend[id])
			drop_batch(p->pend[id]);
	while (p->spare) {
		struct batch *b = p->spare;

		p->spare = b->next;
		drop_batch(b);
	}
	pthread_mutex_destroy(&p->spare_mu);
	free(p->steps);
	free(p);
}

void tc_cs_session_use_par(struct tc_cs_session *s, struct tc_cs_session_par *p)
{
	s->par = p;
}

int tc_cs_session_add_source(struct tc_cs_session *s, const struct tc_etm_cfg *cfg,
			     struct tc_err *e)
{
	uint8_t id = cfg->trace_id;

	if (id >= NIDS || s->dec[id])
		return tc_err_set(e, 0, "trace ID 0x%02x: %s", id,
				  id >= NIDS ? "not a valid trace ID" : "two sources use it");
	s->lanes[id] = (struct lane_ctx){ s, id };
	if (s->par)
		s->dec[id] = tc_etm_ocsd_new(cfg, s->what, lane_emit, s->mem ? lane_mem : NULL,
					     &s->lanes[id], e);
	else
		s->dec[id] = tc_etm_ocsd_new(cfg, s->what, s->emit, s->mem, s->ctx, e);
	errlog_release();
	if (!s->dec[id])
		return -1;
	if (!s->nsources++)
		s->raw_id = id;
	return 0;
}

static void on_data(void *ctx, uint8_t id, const uint8_t *data, size_t len, uint64_t off)
{
	struct tc_cs_session *s = ctx;

	s->id_bytes[id] += len;
	if (s->dec[id] && s->par)
		queue_op(s, id, OP_FEED, s->block_base + (off - s->block_start), data, len);
	else if (s->dec[id])
		tc_etm_ocsd_feed(s->dec[id], s->block_base + (off - s->block_start), data, len);
}

static void on_reset(void *ctx, uint64_t off)
{
	struct tc_cs_session *s = ctx;

	tc_cs_session_reset(s, s->block_base + (off - s->block_start));
}

void tc_cs_session_feed(struct tc_cs_session *s, const uint8_t *buf, size_t len,
			uint64_t base_offset, enum tc_cs_session_format fmt)
{
	if (fmt == TC_CS_SESSION_RAW) {
		if (s->nsources) {
			s->id_bytes[s->raw_id] += len;
			if (!s->par) {
				tc_etm_ocsd_feed(s->dec[s->raw_id], base_offset, buf, len);
				errlog_release();
				return;
			}
			/* in pieces an operation's length holds (one piece in practice) */
			for (size_t at = 0, n; !at || at < len; at += n) {
				n = len - at < OP_LEN_MAX ? len - at : OP_LEN_MAX;
				queue_op(s, s->raw_id, OP_FEED, base_offset + at, buf + at, n);
				if (!n)
					break;
			}
		}
		return;
	}
	if (s->csf && s->csf_fmt != fmt) {
		tc_cs_frame_free(s->csf);
		s->csf = NULL;
	}
	if (!s->csf) {
		unsigned flags = fmt == TC_CS_SESSION_TPIU
					 ? TC_CS_FRAME_FSYNCS
					 : TC_CS_FRAME_MEM_ALIGN | TC_CS_FRAME_RESET_4X_FSYNC;

		s->csf = tc_cs_frame_new(flags, on_data, on_reset, s, NULL);
		if (!s->csf)
			return;	/* only fails on bad flags or no memory */
		s->csf_fmt = fmt;
		s->fed = 0;
	}
	s->block_start = s->fed;
	s->block_base = base_offset;
	tc_cs_frame_feed(s->csf, buf, len);
	tc_cs_frame_flush(s->csf);
	s->fed += len;
	errlog_release();
}

void tc_cs_session_flush(struct tc_cs_session *s)
{
	for (int i = 0; i < NIDS; i++)
		if (s->dec[i] && s->par)
			queue_op(s, (uint8_t)i, OP_FINISH, 0, NULL, 0);
		else if (s->dec[i])
			tc_etm_ocsd_finish(s->dec[i]);
	errlog_release();
}

void tc_cs_session_reset(struct tc_cs_session *s, uint64_t offset)
{
	for (int i = 0; i < NIDS; i++)
		if (s->dec[i] && s->par)
			queue_op(s, (uint8_t)i, OP_RESET, offset, NULL, 0);
		else if (s->dec[i])
			tc_etm_ocsd_reset(s->dec[i], offset);
	errlog_release();
}

const struct tc_etm_ocsd_stats *tc_cs_session_stats(const struct tc_cs_session *s, uint8_t id)
{
	return id < NIDS && s->dec[id] ? tc_etm_ocsd_stats(s->dec[id]) : NULL;
}

uint64_t tc_cs_session_id_bytes(const struct tc_cs_session *s, uint8_t id)
{
	return id < NIDS ? s->id_bytes[id] : 0;
}

uint64_t tc_cs_session_errors(const struct tc_cs_session *s)
{
	uint64_t n = 0;

	for (int i = 0; i < NIDS; i++)
		if (s->dec[i])
			n += tc_etm_ocsd_stats(s->dec[i])->errors;
	return n;
}

const struct tc_cs_frame_stats *tc_cs_session_demux_stats(const struct tc_cs_session *s)
{
	return s->csf ? tc_cs_frame_stats(s->csf) : NULL;
}

void tc_cs_session_demux_diag(const struct tc_cs_session *s, struct tc_diag *diag)
{
	if (s->csf)
		tc_cs_frame_errors_to_diag(s->csf, diag);
}

void tc_cs_session_guard_diag(const struct tc_cs_session *s, struct tc_diag *diag)
{
	for (int i = 0; i < NIDS; i++) {
		const struct tc_etm_ocsd_stats *st = s->dec[i] ? tc_etm_ocsd_stats(s->dec[i]) : NULL;

		if (st && st->guarded)
			tc_diag_add(diag, "trace ID 0x%02x: %" PRIu64 " packet%s OpenCSD 1.3.3 "
				    "mishandles (corrupt trace: a crash, or a walk from memory it "
				    "never set), first at offset %" PRIu64
				    " (0x%" PRIx64 "), %s: %s", i, st->guarded,
				    st->guarded > 1 ? "s" : "", st->guarded_first, st->guarded_first,
				    st->guarded_why ? st->guarded_why : "?",
				    s->what & TC_ETM_ELEMENTS ? "skipped, the ID resynchronised"
							      : "listed");
	}
}
