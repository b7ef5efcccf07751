/* Demux + per-ID decoder table; see cs_session.h. */
#include "decoders/coresight/cs_session.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include <pthread.h>
#include <string.h>

#include "decoders/coresight/cs_frame.h"
#include "decoders/jobs.h"
#include "lib/util/diag.h"
#include "lib/util/grow.h"

#define NIDS 128

/* ---- decoding trace IDs in parallel (tc_cs_session_par) ----
 * The demultiplexer runs in the caller's thread; what it would hand a decoder (bytes, a
 * reset, the end) becomes an operation queued on that ID's lane (decoders/jobs.h), batched,
 * and a step of the schedule: the one-thread order, one step per operation. A lane's
 * records are serialised with an end mark after each operation; the caller's thread reads
 * them back step by step and emits them, so records come out as with one thread. */
enum op_kind { OP_FEED, OP_RESET, OP_FINISH };

struct op {
	enum op_kind kind;
	struct tc_etm_ocsd *d;
	uint64_t index;
	size_t off, len;	/* FEED: bytes at batch data + off */
};

struct batch {
	struct tc_cs_session_par *p;
	struct op *ops;
	size_t nops, cops;
	uint8_t *data;
	size_t ndata, cdata;
};

enum item_kind { ITEM_REC, ITEM_END, ITEM_NOTE };	/* an item's first 4 bytes */

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
	struct step *steps;
	size_t head, nsteps, csteps;
	uint64_t unread;		/* bytes of the steps not yet emitted */
	bool nomem;
};

/* The output of the task running in this thread (NULL outside a task). */
static _Thread_local struct tc_jobs_out *cur_out;

/* OpenCSD's default error logger is one object for the process (its last error is what
 * etm_ocsd reads after a fatal response): decoders of two IDs must not log at once. */
static pthread_mutex_t ocsd_lock = PTHREAD_MUTEX_INITIALIZER;

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
	tc_cs_frame_free(s->csf);
	free(s);
}

/* ---- the parallel machinery ---- */

/* A decoder's record, in the thread decoding its ID: kept for the caller's thread. */
static void lane_emit(void *ctx, const struct tc_rec *r)
{
	struct lane_ctx *l = ctx;
	struct tc_cs_session_par *p = l->s->par;

	if (p->lane_rec)
		p->lane_rec(p->ctx, r);
	/* decoders give no fields (events are the session's) */
	if (cur_out)
		tc_jobs_put_rec(cur_out, &p->wprev[l->id].r, r, ITEM_REC, 0);
}

static void put_mark(uint32_t kind, const char *text)
{
	size_t n = text ? strlen(text) + 1 : 0;
	uint8_t *buf;

	if (!cur_out || !(buf = tc_jobs_alloc(cur_out, 4 + n)))
		return;
	memcpy(buf, &kind, 4);
	if (n)
		memcpy(buf + 4, text, n);
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

static void run_batch(void *arg, struct tc_jobs_out *out)
{
	struct batch *b = arg;

	cur_out = out;
	/* holding the lock it must not wait for the budget (the caller's thread may want
	 * the lock to run the task it waits for): the window bounds what it holds */
	tc_jobs_out_nowait(out);
	pthread_mutex_lock(&ocsd_lock);
	for (size_t i = 0; i < b->nops; i++) {
		const struct op *o = &b->ops[i];

		switch (o->kind) {
		case OP_FEED:
			tc_etm_ocsd_feed(o->d, o->index, b->data + o->off, o->len);
			break;
		case OP_RESET:
			tc_etm_ocsd_reset(o->d, o->index);
			break;
		case OP_FINISH:
			tc_etm_ocsd_finish(o->d);
			break;
		}
		put_mark(ITEM_END, NULL);
	}
	pthread_mutex_unlock(&ocsd_lock);
	cur_out = NULL;
}

static void free_batch(void *arg)
{
	struct batch *b = arg;

	free(b->ops);
	free(b->data);
	free(b);
}

static void submit(struct tc_cs_session_par *p, uint8_t id)
{
	struct batch *b = p->pend[id];

	if (!b)
		return;
	p->pend[id] = NULL;
	if (tc_jobs_submit(p->j, id, run_batch, free_batch, b))
		p->nomem = true;
}

/* Emit the next step's records (the caller's thread). */
static void emit_step(struct tc_cs_session_par *p)
{
	const struct step *st = &p->steps[p->head++];
	const void *it;
	size_t len;

	submit(p, st->lane);	/* its operation may still wait in the batch */
	p->unread -= st->bytes;
	while (tc_jobs_next(p->j, st->lane, &it, &len) == 1) {
		size_t xl;

		switch (tc_jobs_tag(it)) {
		case ITEM_END:
			return;
		case ITEM_NOTE:
			if (p->note)
				p->note(p->ctx, (const char *)it + 4);
			break;
		default:
			tc_jobs_get_rec(it, len, &p->prev[st->lane], &xl);
			p->emit(p->ctx, &p->prev[st->lane]);
			break;
		}
	}
	p->nomem = true;	/* an end mark lost: only for lack of memory */
}

#define BATCH_BYTES (32 * 1024)
#define BATCH_OPS 4096
#define WINDOW_BYTES (256u << 10)
#define WINDOW_STEPS (1u << 18)

/* Queue an operation for id's decoder d, as its next step. */
static void queue_op(struct tc_cs_session *s, uint8_t id, enum op_kind kind, uint64_t index,
		     const uint8_t *data, size_t len)
{
	struct tc_cs_session_par *p = s->par;
	struct batch *b = p->pend[id];

	if (!b && !(b = p->pend[id] = calloc(1, sizeof(*b)))) {
		p->nomem = true;
		return;
	}
	if (tc_grow((void **)&b->ops, &b->cops, b->nops + 1, sizeof(*b->ops)) ||
	    tc_grow((void **)&b->data, &b->cdata, b->ndata + len, 1) ||
	    tc_grow((void **)&p->steps, &p->csteps, p->nsteps + 1, sizeof(*p->steps))) {
		p->nomem = true;
		return;
	}
	b->ops[b->nops++] = (struct op){ kind, s->dec[id], index, b->ndata, len };
	if (len)
		memcpy(b->data + b->ndata, data, len);
	b->ndata += len;
	p->steps[p->nsteps++] = (struct step){ id, (uint32_t)len + 16 };
	p->unread += len + 16;
	if (b->ndata >= BATCH_BYTES || b->nops >= BATCH_OPS)
		submit(p, id);
	/* bounded: the oldest steps go out while the window is full */
	if (p->unread > WINDOW_BYTES || p->nsteps - p->head > WINDOW_STEPS) {
		while (p->head < p->nsteps && (p->unread > WINDOW_BYTES / 2 ||
					       p->nsteps - p->head > WINDOW_STEPS / 2))
			emit_step(p);
		memmove(p->steps, p->steps + p->head, (p->nsteps - p->head) * sizeof(*p->steps));
		p->nsteps -= p->head;
		p->head = 0;
	}
}

struct tc_cs_session_par *tc_cs_session_par_new(unsigned jobs, tc_etm_emit_fn emit,
						void (*lane_rec)(void *ctx, const struct tc_rec *r),
						void (*note)(void *ctx, const char *text), void *ctx)
{
	struct tc_cs_session_par *p = calloc(1, sizeof(*p));

	if (!p || !(p->j = tc_jobs_new(jobs, NIDS, 0))) {
		free(p);
		return NULL;
	}
	p->emit = emit;
	p->lane_rec = lane_rec;
	p->note = note;
	p->ctx = ctx;
	return p;
}

int tc_cs_session_par_drain(struct tc_cs_session_par *p)
{
	if (!p)
		return 0;
	for (unsigned id = 0; id < NIDS; id++)
		submit(p, (uint8_t)id);
	while (p->head < p->nsteps)
		emit_step(p);
	p->head = p->nsteps = 0;
	return p->nomem || tc_jobs_failed(p->j) ? -1 : 0;
}

void tc_cs_session_par_free(struct tc_cs_session_par *p)
{
	if (!p)
		return;
	tc_jobs_free(p->j);	/* first: its tasks use the batches */
	for (unsigned id = 0; id < NIDS; id++)
		if (p->pend[id])
			free_batch(p->pend[id]);
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
			if (s->par)
				queue_op(s, s->raw_id, OP_FEED, base_offset, buf, len);
			else
				tc_etm_ocsd_feed(s->dec[s->raw_id], base_offset, buf, len);
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
}

void tc_cs_session_flush(struct tc_cs_session *s)
{
	for (int i = 0; i < NIDS; i++)
		if (s->dec[i] && s->par)
			queue_op(s, (uint8_t)i, OP_FINISH, 0, NULL, 0);
		else if (s->dec[i])
			tc_etm_ocsd_finish(s->dec[i]);
}

void tc_cs_session_reset(struct tc_cs_session *s, uint64_t offset)
{
	for (int i = 0; i < NIDS; i++)
		if (s->dec[i] && s->par)
			queue_op(s, (uint8_t)i, OP_RESET, offset, NULL, 0);
		else if (s->dec[i])
			tc_etm_ocsd_reset(s->dec[i], offset);
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
				    "crashes on (corrupt trace), first at offset %" PRIu64
				    " (0x%" PRIx64 "), %s: %s", i, st->guarded,
				    st->guarded > 1 ? "s" : "", st->guarded_first, st->guarded_first,
				    st->guarded_why ? st->guarded_why : "?",
				    s->what & TC_ETM_ELEMENTS ? "skipped, the ID resynchronised"
							      : "listed");
	}
}
