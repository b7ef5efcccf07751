/* The worker pool and its ordered output; see jobs.h. One mutex guards the lanes' queues
 * and published output; a running task writes into a chunk of its own and publishes it
 * whole, so the lock is taken once per chunk, not per item.
 *
 * Each lane has a home thread (the caller's or a worker's) whose ready list it joins: a
 * lane's state (a decoder, its caches) stays in one core's caches while the threads keep
 * up. A thread with nothing of its own to run takes another's ready lane (the caller
 * when it waits for one), which then makes its home there. */
#include "decoders/jobs.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/blockpool.h"

#define CHUNK	(64 * 1024)	/* a pool's block, its header included */
#define SMALL_CHUNK 512
#define WAKE_CHUNKS 4
#define DEFAULT_BUDGET ((size_t)16 << 20)
#define ALIGN8(n) (((n) + 7) & ~(size_t)7)

struct chunk {
	struct chunk *next;
	size_t len, cap, rd;
	size_t cost;		/* bytes kept elsewhere its items stand for (tc_jobs_charge) */
	bool pooled;		/* a block of the pool's (else malloc's) */
	_Alignas(8) unsigned char data[];	/* items 8-byte aligned */
};

#define POOLED_CAP (CHUNK - sizeof(struct chunk))

struct task {
	struct task *next;
	tc_jobs_run_fn run;
	void (*done)(void *arg);
	void *arg;
};

struct tc_jobs_out {
	struct tc_jobs *j;
	size_t lane;
	struct chunk *cur;
	bool worker;		/* a worker thread's: waits when the budget is spent */
};

struct lane {
	struct task *head, *tail;	/* queued, not started */
	bool running, queued;		/* queued: in the ready list of its home */
	bool homed;			/* home set (at its first task) */
	unsigned home;			/* 0 the caller's thread, 1.. a worker's */
	struct lane *prev, *next;	/* the ready list */
	struct chunk *first, *last;	/* published, not yet read */
	size_t nfirst;			/* how many */
	struct chunk *spent;		/* the caller's: being read, freed once read out */
};

struct tc_jobs {
	pthread_mutex_t mu;
	pthread_cond_t work;		/* workers: a lane became ready, or stop */
	pthread_cond_t progress;	/* output published, a task ended, output read */
	pthread_t *th;
	unsigned nth;
	struct lane *lanes;
	size_t nlanes;
	/* lanes with a task to start, in turn: a list per home (nth + 1) */
	struct rq {
		struct lane *head, *tail;
	} *rq;
	unsigned nrq;			/* jobs: set before the workers start (nth grows) */
	unsigned homes;			/* lanes given a home so far (in turn) */
	size_t held, budget;		/* bytes published and not read */
	long wanted;			/* the lane the caller waits for, -1 none */
	unsigned budget_waiters;
	unsigned busy;			/* workers running a task */
	bool stop, failed, no_help;
	bool starving;			/* the caller waits for a task no worker is free for */
	/* chunks past a task's first, and those read out, taken again first: from huge-page
	 * chunks, kept (malloc's of 64 KiB, freed, went back to the kernel with the top of the
	 * heap: a page fault per 4 KiB when the next one was made) */
	struct tc_blockpool *pool;
};

static void rq_push(struct tc_jobs *j, struct lane *l)
{
	struct rq *q = &j->rq[l->home];

	l->queued = true;
	l->next = NULL;
	l->prev = q->tail;
	if (q->tail)
		q->tail->next = l;
	else
		q->head = l;
	q->tail = l;
}

static void rq_remove(struct tc_jobs *j, struct lane *l)
{
	struct rq *q = &j->rq[l->home];

	if (l->prev)
		l->prev->next = l->next;
	else
		q->head = l->next;
	if (l->next)
		l->next->prev = l->prev;
	else
		q->tail = l->prev;
	l->prev = l->next = NULL;
	l->queued = false;
}

/* A ready lane for thread self (0 the caller's) to run: its own first, else the first
 * of another's (lock held; NULL none). others: whether to look at others' at all. */
static struct lane *rq_pick(struct tc_jobs *j, unsigned self, bool others)
{
	if (j->rq[self].head || !others)
		return j->rq[self].head;
	for (unsigned i = 1; i < j->nrq; i++) {
		unsigned q = (self + i) % j->nrq;

		if (j->rq[q].head)
			return j->rq[q].head;
	}
	return NULL;
}

/* Take lane l's next task to run in thread self (lock held): l is running until
 * finish(), and its home is self from now on. */
static struct task *take(struct tc_jobs *j, struct lane *l, unsigned self)
{
	struct task *t = l->head;

	rq_remove(j, l);
	l->home = self;
	l->head = t->next;
	if (!l->head)
		l->tail = NULL;
	l->running = true;
	return t;
}

/* Ask for the line at a to be this core's to write, ahead of the stores: a chunk read out
 * by the caller's thread comes back with its lines in that core's cache, and stores that
 * wait for their lines hold up loads after them that need them (a record just built
 * before it is put: etm.data's lone ID, put_rec 2x slower). prefetchw, not a read's
 * prefetch, which leaves the line shared. A hint: never faults, may be past the end. */
static inline void prefetch_own(uintptr_t a)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__("prefetchw (%0)" : : "r"(a));
#else
	__builtin_prefetch((const void *)a, 1, 3);
#endif
}

static void free_chunk(struct tc_jobs *j, struct chunk *c)
{
	if (c && c->pooled)
		tc_blockpool_put(j->pool, c);
	else
		free(c);
}

/* Publish o's chunk (lock not held); a worker then waits while the budget is spent. */
static void publish(struct tc_jobs_out *o)
{
	struct tc_jobs *j = o->j;
	struct lane *l = &j->lanes[o->lane];
	struct chunk *c = o->cur;

	o->cur = NULL;
	if (!c)
		return;
	if (!c->len) {
		free_chunk(j, c);
		return;
	}
	pthread_mutex_lock(&j->mu);
	c->next = NULL;
	if (l->last)
		l->last->next = c;
	else
		l->first = c;
	l->last = c;
	l->nfirst++;
	j->held += c->cap + c->cost;	/* what it costs */
	/* the caller waiting for this lane wakes for a few chunks at once (or the task's
	 * end, run_task): one wake-up per WAKE_CHUNKS, not per chunk */
	if (j->wanted == (long)o->lane && l->nfirst >= WAKE_CHUNKS)
		pthread_cond_broadcast(&j->progress);
	/* past the budget a worker waits until the caller has read half of it: one sleep
	 * and one wake-up per half budget, not per chunk */
	if (o->worker && j->held > j->budget)
		while (j->held > j->budget / 2 && j->wanted != (long)o->lane && !j->starving &&
		       !j->stop) {
			j->budget_waiters++;
			pthread_cond_wait(&j->progress, &j->mu);
			j->budget_waiters--;
		}
	pthread_mutex_unlock(&j->mu);
}

void tc_jobs_out_nowait(struct tc_jobs_out *o)
{
	o->worker = false;
}

void *tc_jobs_alloc(struct tc_jobs_out *o, size_t len)
{
	size_t need = sizeof(size_t) + ALIGN8(len);
	struct chunk *c = o->cur;
	void *p;

	if (!c || c->len + need > c->cap) {
		/* a task's first chunk small: many tasks may each put little */
		bool pooled = c && need <= POOLED_CAP;
		size_t cap = !c ? SMALL_CHUNK : POOLED_CAP;

		if (cap < need)
			cap = need;
		publish(o);
		c = pooled ? tc_blockpool_get(o->j->pool) : malloc(sizeof(*c) + cap);
		if (!c) {
			pthread_mutex_lock(&o->j->mu);
			o->j->failed = true;
			pthread_mutex_unlock(&o->j->mu);
			return NULL;
		}
		*c = (struct chunk){ .cap = cap, .pooled = pooled };
		o->cur = c;
	}
	prefetch_own((uintptr_t)(c->data + c->len) + 1024);
	memcpy(c->data + c->len, &len, sizeof(len));
	p = c->data + c->len + sizeof(size_t);
	c->len += need;
	return p;
}

/* Make the item just allocated with tc_jobs_alloc(o, ...) len bytes long (not longer). */
static void trim_last(struct tc_jobs_out *o, void *item, size_t len)
{
	struct chunk *c = o->cur;
	size_t at = (size_t)((unsigned char *)item - c->data);

	memcpy(c->data + at - sizeof(size_t), &len, sizeof(len));
	c->len = at + ALIGN8(len);
}

/* The words of struct tc_rec the record codec carries: all but its pointers'. */
#define REC_WORDS (sizeof(struct tc_rec) / 8)
#define WORD_OF(f) (1u << (offsetof(struct tc_rec, f) / 8))
#define REC_SKIP (WORD_OF(name) | WORD_OF(text) | WORD_OF(fields) | WORD_OF(nfields))
#define HAS_NAME (1u << 30)
#define HAS_TEXT (1u << 31)

_Static_assert(sizeof(struct tc_rec) % 8 == 0 && REC_WORDS <= 30, "tc_rec in words");

void *tc_jobs_put_rec(struct tc_jobs_out *o, struct tc_rec *prev, const struct tc_rec *r,
		      uint32_t tag, size_t extra)
{
	size_t nl = r->name ? strlen(r->name) + 1 : 0, tl = r->text ? strlen(r->text) + 1 : 0;
	unsigned char *p = tc_jobs_alloc(o, 8 + REC_WORDS * 8 + nl + tl + extra), *w;
	const unsigned char *rw = (const unsigned char *)r;
	unsigned char *pw = (unsigned char *)prev;
	uint32_t mask = 0;

	if (!p)
		return NULL;
	w = p + 8;
	/* without a branch per word: each is written, and kept if it differs */
#pragma GCC unroll 16
	for (unsigned i = 0; i < REC_WORDS; i++) {
		uint64_t a, b, d;

		if (REC_SKIP & (1u << i))
			continue;
		memcpy(&a, rw + i * 8, 8);
		memcpy(&b, pw + i * 8, 8);
		memcpy(pw + i * 8, &a, 8);
		memcpy(w, &a, 8);
		d = a != b;
		w += d * 8;
		mask |= (uint32_t)d << i;
	}
	if (nl) {
		memcpy(w, r->name, nl);
		w += nl;
		mask |= HAS_NAME;
	}
	if (tl) {
		memcpy(w, r->text, tl);
		w += tl;
		mask |= HAS_TEXT;
	}
	memcpy(p, &tag, 4);
	memcpy(p + 4, &mask, 4);
	trim_last(o, p, (size_t)(w - p) + extra);
	return w;
}

uint32_t tc_jobs_tag(const void *item)
{
	uint32_t tag;

	memcpy(&tag, item, 4);
	return tag;
}

const void *tc_jobs_get_rec(const void *item, size_t len, struct tc_rec *prev,
			    size_t *extra_len)
{
	const unsigned char *p = item, *w = p + 8;
	unsigned char *pw = (unsigned char *)prev;
	uint32_t mask;

	memcpy(&mask, p + 4, 4);
	for (uint32_t m = mask & ~(HAS_NAME | HAS_TEXT); m; m &= m - 1) {
		memcpy(pw + (unsigned)__builtin_ctz(m) * 8, w, 8);
		w += 8;
	}
	prev->name = NULL;
	prev->text = NULL;
	if (mask & HAS_NAME) {
		prev->name = (const char *)w;
		w += strlen((const char *)w) + 1;
	}
	if (mask & HAS_TEXT) {
		prev->text = (const char *)w;
		w += strlen((const char *)w) + 1;
	}
	prev->fields = NULL;
	prev->nfields = 0;
	*extra_len = len - (size_t)(w - p);
	return w;
}

void tc_jobs_charge(struct tc_jobs_out *o, size_t n)
{
	if (!o->cur)
		return;
	o->cur->cost += n;
	/* a chunk of few items may stand for much: published past an eighth of the budget,
	 * so that the budget is checked before the task ends */
	if (o->cur->cost >= o->j->budget / 8)
		publish(o);
}

int tc_jobs_put(struct tc_jobs_out *o, const void *item, size_t len)
{
	void *p = tc_jobs_alloc(o, len);

	if (!p)
		return -1;
	if (len)
		memcpy(p, item, len);
	return 0;
}

/* Lock held: wake the caller's thread where what it waits for may have changed: the output
 * or end of lane ix, or the workers' business while no worker runs its lane (it may have to
 * let those waiting for the budget go on) or while it starves them (to end that). Not
 * otherwise: each wake-up is two context switches, and a running lane's output wakes it
 * anyway (publish, run_task). */
static void wake_caller(struct tc_jobs *j, long ix)
{
	if (j->wanted >= 0 &&
	    (j->wanted == ix || j->starving || !j->lanes[j->wanted].running))
		pthread_cond_broadcast(&j->progress);
}

/* Run task t of lane ix (lock not held), then mark the lane idle again (lock held after). */
static void run_task(struct tc_jobs *j, size_t ix, struct task *t, bool worker)
{
	struct tc_jobs_out o = { j, ix, NULL, worker };
	struct lane *l = &j->lanes[ix];

	t->run(t->arg, &o);
	publish(&o);
	if (t->done)
		t->done(t->arg);
	free(t);
	pthread_mutex_lock(&j->mu);
	l->running = false;
	if (l->head) {
		rq_push(j, l);
		pthread_cond_signal(&j->work);
	}
	wake_caller(j, (long)ix);
}

struct worker_arg {
	struct tc_jobs *j;
	unsigned self;
};

static void *worker(void *arg)
{
	struct tc_jobs *j = ((struct worker_arg *)arg)->j;
	unsigned self = ((struct worker_arg *)arg)->self;

	free(arg);
	pthread_mutex_lock(&j->mu);
	while (!j->stop) {
		struct lane *l = rq_pick(j, self, true);
		struct task *t;

		if (!l) {
			pthread_cond_wait(&j->work, &j->mu);
			continue;
		}
		t = take(j, l, self);
		j->busy++;
		wake_caller(j, -1);
		pthread_mutex_unlock(&j->mu);
		run_task(j, (size_t)(l - j->lanes), t, true);
		j->busy--;
	}
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

struct tc_jobs *tc_jobs_new(unsigned jobs, size_t nlanes, size_t budget)
{
	struct tc_jobs *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->lanes = calloc(nlanes ? nlanes : 1, sizeof(*j->lanes));
	j->nlanes = nlanes;
	j->budget = budget ? budget : DEFAULT_BUDGET;
	j->wanted = -1;
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->work, NULL);
	pthread_cond_init(&j->progress, NULL);
	j->nrq = jobs > 1 ? jobs : 1;
	if (!j->lanes || !(j->rq = calloc(j->nrq, sizeof(*j->rq))) ||
	    !(j->pool = tc_blockpool_new(CHUNK)))
		goto fail;
	if (jobs > 1) {
		if (!(j->th = calloc(jobs - 1, sizeof(*j->th))))
			goto fail;
		for (; j->nth < jobs - 1; j->nth++) {
			struct worker_arg *a = malloc(sizeof(*a));

			if (a)
				*a = (struct worker_arg){ j, j->nth + 1 };
			if (!a || pthread_create(&j->th[j->nth], NULL, worker, a)) {
				free(a);
				break;	/* fewer threads: still correct */
			}
		}
	}
	return j;
fail:
	tc_jobs_free(j);
	return NULL;
}

static void free_chunks(struct tc_jobs *j, struct chunk *c)
{
	while (c) {
		struct chunk *n = c->next;

		free_chunk(j, c);
		c = n;
	}
}

void tc_jobs_free(struct tc_jobs *j)
{
	if (!j)
		return;
	pthread_mutex_lock(&j->mu);
	j->stop = true;
	pthread_cond_broadcast(&j->work);
	pthread_cond_broadcast(&j->progress);
	pthread_mutex_unlock(&j->mu);
	for (unsigned i = 0; i < j->nth; i++)
		pthread_join(j->th[i], NULL);
	free(j->th);
	for (size_t i = 0; j->lanes && i < j->nlanes; i++) {
		struct lane *l = &j->lanes[i];

		while (l->head) {
			struct task *t = l->head;

			l->head = t->next;
			if (t->done)
				t->done(t->arg);
			free(t);
		}
		free_chunks(j, l->first);
		free_chunks(j, l->spent);
	}
	tc_blockpool_free(j->pool);
	free(j->lanes);
	free(j->rq);
	pthread_cond_destroy(&j->progress);
	pthread_cond_destroy(&j->work);
	pthread_mutex_destroy(&j->mu);
	free(j);
}

int tc_jobs_submit(struct tc_jobs *j, size_t lane, tc_jobs_run_fn run, void (*done)(void *arg),
		   void *arg)
{
	struct task *t = malloc(sizeof(*t));
	struct lane *l = &j->lanes[lane];

	if (!t) {
		if (done)
			done(arg);
		return -1;
	}
	*t = (struct task){ NULL, run, done, arg };
	pthread_mutex_lock(&j->mu);
	if (!l->homed && j->nth) {
		/* a lane's first task: its home, the threads in turn (a worker's if the
		 * caller's runs none) */
		l->homed = true;
		l->home = j->no_help ? 1 + j->homes++ % j->nth : j->homes++ % (j->nth + 1);
	}
	if (l->tail)
		l->tail->next = t;
	else
		l->head = t;
	l->tail = t;
	if (!l->running && !l->queued) {
		rq_push(j, l);
		pthread_cond_signal(&j->work);
	}
	pthread_mutex_unlock(&j->mu);
	return 0;
}

/* tc_jobs_next; nowait: -1 where it would wait or run another lane's task. */
static int next(struct tc_jobs *j, size_t lane, const void **item, size_t *len, bool nowait)
{
	struct lane *l = &j->lanes[lane];
	struct chunk *c = l->spent;

	/* the chunk being read is the caller's alone: no lock until it is read out */
	if (c && c->rd < c->len)
		goto have;
	pthread_mutex_lock(&j->mu);
	if (c) {
		j->held -= c->cap + c->cost;
		free_chunk(j, c);
		l->spent = NULL;
		if (j->budget_waiters && j->held <= j->budget / 2)
			pthread_cond_broadcast(&j->progress);
	}
	for (;;) {
		struct lane *o;

		if (j->starving && (l->running || l->first || !l->head))
			j->starving = false;
		if ((c = l->first)) {
			l->first = c->next;
			l->nfirst--;
			if (!l->first)
				l->last = NULL;
			c->next = NULL;
			l->spent = c;
			j->wanted = -1;
			pthread_mutex_unlock(&j->mu);
			goto have;
		}
		if (!l->running && !l->head) {
			j->wanted = -1;
			pthread_mutex_unlock(&j->mu);
			return 0;
		}
		/* the caller's thread runs a task: the one it waits for if it is the caller's
		 * own lane or no worker is free for it, else one of its own lanes' (or, every
		 * worker busy, another's) while the budget allows */
		o = NULL;
		if (!l->running && (!j->nth || (!j->no_help && (l->home == 0 || j->busy == j->nth))))
			o = l;
		if (nowait && !o) {
			/* wanted all the same: its worker must not wait for the budget */
			if (j->wanted != (long)lane) {
				j->wanted = (long)lane;
				if (j->budget_waiters)
					pthread_cond_broadcast(&j->progress);
			}
			pthread_mutex_unlock(&j->mu);
			return -1;
		}
		if (!nowait && !j->no_help && j->held < j->budget / 2 && (!o || o->home != 0)) {
			struct lane *own = rq_pick(j, 0, j->busy == j->nth && l->running);

			if (own)
				o = own;
		}
		if (o) {
			struct task *t = take(j, o, 0);

			j->wanted = -1;
			pthread_mutex_unlock(&j->mu);
			run_task(j, (size_t)(o - j->lanes), t, false);
			continue;
		}
		if (!l->running && j->busy == j->nth && !j->starving) {
			/* a worker must come free for it: those waiting for the budget go on */
			j->starving = true;
			pthread_cond_broadcast(&j->progress);
		}
		if (j->wanted != (long)lane) {
			j->wanted = (long)lane;
			if (j->budget_waiters)
				pthread_cond_broadcast(&j->progress);
		}
		pthread_cond_wait(&j->progress, &j->mu);
	}
have:
	memcpy(len, c->data + c->rd, sizeof(*len));
	*item = c->data + c->rd + sizeof(size_t);
	c->rd += sizeof(size_t) + ALIGN8(*len);
	return 1;
}

int tc_jobs_next(struct tc_jobs *j, size_t lane, const void **item, size_t *len)
{
	return next(j, lane, item, len, false);
}

int tc_jobs_poll(struct tc_jobs *j, size_t lane, const void **item, size_t *len)
{
	return next(j, lane, item, len, true);
}

void tc_jobs_no_help(struct tc_jobs *j)
{
	j->no_help = true;
}


bool tc_jobs_failed(struct tc_jobs *j)
{
	bool f;

	pthread_mutex_lock(&j->mu);
	f = j->failed;
	pthread_mutex_unlock(&j->mu);
	return f;
}

unsigned tc_jobs_share_first(unsigned jobs)
{
	return jobs > 1 ? (TC_JOBS_SHARE_ONE + jobs - 1) / jobs : TC_JOBS_SHARE_ONE;
}

unsigned tc_jobs_share_step(unsigned share, unsigned jobs, uint64_t waited, uint64_t idle,
			    uint64_t span)
{
	const unsigned base = tc_jobs_share_first(jobs);
	const unsigned lo = base / 4, hi = TC_JOBS_SHARE_ONE * 3 / 4 > base
						   ? TC_JOBS_SHARE_ONE * 3 / 4 : base;
	double d;

	if (!span)
		return share;
	/* > 0: the caller waited for the workers more than they idled */
	d = ((double)waited - (double)idle) / (double)span;
	d = share * (1 + d / 2);
	return d < lo ? lo : d > hi ? hi : (unsigned)d;
}
