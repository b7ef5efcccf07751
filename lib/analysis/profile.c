#include "lib/analysis/profile.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"
#include "lib/util/hash.h"

/* A frame of a thread's stack as last counted. Totals are counted per frame, not per
 * range: a function's first frame on the stack (recursion counts once) adds the thread's
 * instructions from when it was entered to when it leaves. */
struct pframe {
	size_t fn;
	uint64_t since;		/* first: the thread's insns when entered; else UINT64_MAX */
};

struct pthr {
	int key, pid, tid, cpu;
	char *comm;
	uint64_t insns;
	struct pframe *stack;	/* the frames of the thread's last counted range */
	size_t depth, cstack;
};

struct fn {
	size_t thread;
	uint64_t addr;
	char *name, *dso;
	uint64_t total, calls;	/* total: of frames that left the stack (self: its hot entries) */
	unsigned on;		/* frames of it on its thread's stack */
};

struct hot {
	size_t fn;
	uint64_t start, end, insns;
};

/* Direct-mapped caches in front of the hash indexes, their keys kept in the slot so that a
 * hit reads one slot: (thread, addr) -> fn, and a range's (fn, start, end) -> hot entry.
 * idx1 is the index + 1 (0: empty). */
#define FN_CACHE 1024
#define HOT_CACHE 2048

struct fn_slot {
	uint64_t addr;
	size_t thread, idx1;
};

struct hot_slot {
	uint64_t start, end;
	size_t fn, idx1;
};

struct tc_profile {
	struct tc_profile_opts o;
	struct fn_slot fn_cache[FN_CACHE];
	struct hot_slot hot_cache[HOT_CACHE];
	bool filtered;		/* some ranges are not counted (tid, cpu, comm_is) */
	struct pthr *th;
	size_t nth, cth, last_th;
	struct pthr *cur;	/* th[last_th], with the tid and cpu of its last range */
	int cur_tid, cur_cpu;
	struct fn *fn;
	size_t nfn, cfn;
	struct hot *hot;
	size_t nhot, chot;
	struct tc_hash fn_h, hot_h;	/* over fn and hot */
	bool failed;
	bool slow;		/* failed or filtered: tc_profile_range takes the long way */
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

struct fn_key { size_t thread; uint64_t addr; };
struct hot_key { size_t fn; uint64_t start, end; };

static uint64_t fn_hash(size_t thread, uint64_t addr) { return mix(mix(0, thread), addr); }
static uint64_t hot_hash(size_t fn, uint64_t s, uint64_t e) { return mix(mix(mix(1, fn), s), e); }

static bool fn_eq(const void *arr, size_t i, const void *key)
{
	const struct fn *f = (const struct fn *)arr + i;
	const struct fn_key *k = key;

	return f->thread == k->thread && f->addr == k->addr;
}

static bool hot_eq(const void *arr, size_t i, const void *key)
{
	const struct hot *h = (const struct hot *)arr + i;
	const struct hot_key *k = key;

	return h->fn == k->fn && h->start == k->start && h->end == k->end;
}

struct tc_profile *tc_profile_new(const struct tc_profile_opts *o)
{
	struct tc_profile *p = calloc(1, sizeof(*p));

	if (p) {
		p->o = *o;
		p->filtered = o->tid >= 0 || o->cpu >= 0 || o->comm_is;
		p->slow = p->filtered;
	}
	return p;
}

void tc_profile_free(struct tc_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nth; i++) {
		free(p->th[i].comm);
		free(p->th[i].stack);
	}
	for (size_t i = 0; i < p->nfn; i++) {
		free(p->fn[i].name);
		free(p->fn[i].dso);
	}
	free(p->th);
	free(p->fn);
	free(p->hot);
	tc_hash_free(&p->fn_h);
	tc_hash_free(&p->hot_h);
	free(p);
}

bool tc_profile_failed(const struct tc_profile *p)
{
	return p->failed;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int thread_key(int tid, int cpu)
{
	return tid >= 0 ? tid : cpu >= 0 ? -2 - cpu : INT_MIN;	/* as callstack.c */
}

static struct pthr *get_thread(struct tc_profile *p, const struct tc_callstack_range *r,
			       size_t *idx)
{
	int key = thread_key(r->tid, r->cpu);
	struct pthr *t;
	size_t i;

	if (p->nth && p->th[p->last_th].key == key) {
		i = p->last_th;
		goto found;
	}
	for (i = 0; i < p->nth; i++) {
		if (p->th[i].key == key)
			goto found;
	}
	if (tc_grow((void **)&p->th, &p->cth, p->nth + 1, sizeof(*p->th)))
		return NULL;
	t = &p->th[p->nth];
	*t = (struct pthr){ .key = key, .pid = r->pid, .tid = r->tid, .cpu = r->cpu };
	if (p->o.comm)
		t->comm = dup_or_null(p->o.comm(p->o.comm_ctx, r->pid, r->tid));
	i = p->nth++;
found:
	*idx = p->last_th = i;
	p->cur = &p->th[i];
	p->cur_tid = r->tid;
	p->cur_cpu = r->cpu;
	return p->cur;
}

static inline struct fn_slot *fn_slot(struct tc_profile *p, size_t thread, uint64_t addr)
{
	return &p->fn_cache[(addr ^ (addr >> 12) ^ thread * 0x9e37) & (FN_CACHE - 1)];
}

/* get_fn where its cache misses. */
__attribute__((noinline)) static struct fn *get_fn_miss(struct tc_profile *p, size_t thread,
							 int pid, uint64_t addr, size_t *idx)
{
	struct fn_key k = { thread, addr };
	uint64_t h;
	struct fn_slot *c = fn_slot(p, thread, addr);
	struct fn *f;
	char hex[32];

	h = fn_hash(thread, addr);
	*idx = tc_hash_find(&p->fn_h, h, fn_eq, p->fn, &k);
	if (*idx != TC_HASH_NONE) {
		*c = (struct fn_slot){ addr, thread, *idx + 1 };
		return &p->fn[*idx];
	}
	if (tc_grow((void **)&p->fn, &p->cfn, p->nfn + 1, sizeof(*p->fn)))
		return NULL;
	f = &p->fn[p->nfn];
	*f = (struct fn){ .thread = thread, .addr = addr };
	f->name =
		strdup(tc_callstack_func_name(p->o.sym, p->o.sym_ctx, pid, addr, hex, sizeof(hex)));
	if (p->o.dso)
		f->dso = dup_or_null(p->o.dso(p->o.dso_ctx, pid, addr));
	if (!f->name || tc_hash_add(&p->fn_h, h, p->nfn))
		return NULL;
	*idx = p->nfn++;
	*c = (struct fn_slot){ addr, thread, p->nfn };
	return f;
}

/* The function at addr of thread (made if new; NULL on ENOMEM), its index in *idx: the cache
 * inline (once per frame entered). */
static inline struct fn *get_fn(struct tc_profile *p, size_t thread, int pid, uint64_t addr,
				size_t *idx)
{
	const struct fn_slot *c = fn_slot(p, thread, addr);

	if (c->idx1 && c->addr == addr && c->thread == thread) {
		*idx = c->idx1 - 1;
		return &p->fn[*idx];
	}
	return get_fn_miss(p, thread, pid, addr, idx);
}

static inline size_t hot_slot(uint64_t start, uint64_t end)
{
	return (start ^ (start >> 12) ^ (end << 1)) & (HOT_CACHE - 1);
}

__attribute__((noinline)) static int add_hot(struct tc_profile *p, size_t fn, const struct tc_rec *r, uint32_t insns)
{
	struct hot_key k = { fn, r->start, r->end };
	uint64_t h;
	/* a cheap slot: the cache is checked, not trusted */
	struct hot_slot *c = &p->hot_cache[hot_slot(r->start, r->end)];
	size_t i;

	if (c->idx1 && c->start == r->start && c->end == r->end && c->fn == fn) {
		p->hot[c->idx1 - 1].insns += insns;
		return 0;
	}
	h = hot_hash(fn, r->start, r->end);
	i = tc_hash_find(&p->hot_h, h, hot_eq, p->hot, &k);
	if (i != TC_HASH_NONE) {
		p->hot[i].insns += insns;
		*c = (struct hot_slot){ r->start, r->end, fn, i + 1 };
		return 0;
	}
	if (tc_grow((void **)&p->hot, &p->chot, p->nhot + 1, sizeof(*p->hot)) ||
	    tc_hash_add(&p->hot_h, h, p->nhot))
		return -1;
	p->hot[p->nhot++] = (struct hot){ fn, r->start, r->end, insns };
	*c = (struct hot_slot){ r->start, r->end, fn, p->nhot };
	return 0;
}

/* The thread's frames from keep up leave its stack: their totals close. */
static inline void leave(struct tc_profile *p, struct pthr *t, size_t keep)
{
	for (; t->depth > keep; t->depth--) {
		const struct pframe *fr = &t->stack[t->depth - 1];
		struct fn *f = &p->fn[fr->fn];

		f->on--;
		if (fr->since != UINT64_MAX)
			f->total += t->insns - fr->since;
	}
}

/* Frames of the range not on the thread's stack as last counted: the frames from
 * r->kept on were entered since the thread's previous range (if it was counted: with a
 * filter, compare), and may be new functions. */
/* Function func entered on t (room for it in t->stack): -1 on ENOMEM. */
static inline int push_frame(struct tc_profile *p, struct pthr *t, size_t ti, int pid,
			     uint64_t func)
{
	size_t fi;
	struct fn *f = get_fn(p, ti, pid, func, &fi);

	if (!f)
		return -1;
	t->stack[t->depth++] = (struct pframe){ fi, f->on++ ? UINT64_MAX : t->insns };
	return 0;
}

static int enter(struct tc_profile *p, struct pthr *t, size_t ti, const struct tc_callstack_range *r)
{
	size_t same = r->kept < t->depth ? r->kept : t->depth;

	if (p->filtered) {
		same = 0;
		while (same < t->depth && same < r->depth &&
		       p->fn[t->stack[same].fn].addr == r->func[same])
			same++;
	}
	leave(p, t, same);
	if (r->depth > t->cstack &&
	    tc_grow((void **)&t->stack, &t->cstack, r->depth, sizeof(*t->stack)))
		return -1;
	while (t->depth < r->depth)
		if (push_frame(p, t, ti, r->pid, r->func[t->depth]))
			return -1;
	return 0;
}

/* Whether the filters (tid, cpu, comm_is) let r be counted. */
static bool counted(const struct tc_profile *p, const struct tc_callstack_range *r)
{
	if ((p->o.tid >= 0 && r->tid != p->o.tid) || (p->o.cpu >= 0 && r->cpu != p->o.cpu))
		return false;
	if (p->o.comm_is) {
		const char *c = p->o.comm ? p->o.comm(p->o.comm_ctx, r->pid, r->tid) : NULL;

		if (!c || strcmp(c, p->o.comm_is))
			return false;
	}
	return true;
}

/* A range whose thread may not be the last one's, or with filters or after a failure: its
 * thread, or NULL when it is not counted (filtered out, out of memory). */
__attribute__((noinline)) static struct pthr *range_thread(struct tc_profile *p,
							    const struct tc_callstack_range *r)
{
	size_t ti;
	struct pthr *t;

	if (p->failed || (p->filtered && !counted(p, r)))
		return NULL;
	if (!(t = get_thread(p, r, &ti)))
		p->failed = p->slow = true;
	return t;
}

/* The thread's frames become r's: those left close, those entered (from r->kept) are
 * counted as entered. -1 on ENOMEM (the profile failed). */
__attribute__((noinline)) static int range_frames(struct tc_profile *p, struct pthr *t,
						  const struct tc_callstack_range *r)
{
	/* most often a call: one frame entered above the frames the thread had */
	if (!p->filtered && r->kept == t->depth && r->depth == t->depth + 1 &&
	    t->depth < t->cstack) {
		if (push_frame(p, t, p->last_th, r->pid, r->func[t->depth])) {
			p->failed = p->slow = true;
			return -1;
		}
		if (r->kind[r->kept] != TC_FRAME_ROOT)
			p->fn[t->stack[r->kept].fn].calls++;
		return 0;
	}
	/* or a return: frames left, none entered */
	if (!p->filtered && r->kept == r->depth && r->depth < t->depth) {
		leave(p, t, r->depth);
		return 0;
	}
	if (enter(p, t, p->last_th, r)) {
		p->failed = p->slow = true;
		return -1;
	}
	for (unsigned i = r->kept; i < r->depth; i++)
		if (r->kind[i] != TC_FRAME_ROOT)
			p->fn[t->stack[i].fn].calls++;
	return 0;
}

void tc_profile_range(void *prof, const struct tc_callstack_range *r)
{
	struct tc_profile *p = prof;
	const struct tc_rec *rec = r->rec;
	struct pthr *t = p->cur;
	const struct hot_slot *c;
	size_t fi;

	/* Most ranges: the last range's thread (p->cur), in the frames it left, through a
	 * block seen before (the hot cache). A function's self is the sum of its hot entries. */
	if (p->slow || !t || r->tid != p->cur_tid || r->cpu != p->cur_cpu) {
		if (!(t = range_thread(p, r)))
			return;
	}
	if ((p->filtered || r->kept != r->depth || t->depth != r->depth) && range_frames(p, t, r))
		return;
	t->pid = r->pid;
	t->cpu = r->cpu;
	t->insns += r->insns;
	fi = t->stack[r->depth - 1].fn;
	c = &p->hot_cache[hot_slot(rec->start, rec->end)];
	if (c->idx1 && c->start == rec->start && c->end == rec->end && c->fn == fi)
		p->hot[c->idx1 - 1].insns += r->insns;
	else if (add_hot(p, fi, rec, r->insns))
		p->failed = p->slow = true;
}

/* ---- tables ---- */

static int str_cmp(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

static int row_cmp(const void *pa, const void *pb, void *key)
{
	const struct tc_profile_row *a = pa, *b = pb;
	int c = 0;

	switch (*(const enum tc_profile_sort *)key) {
	case TC_PROFILE_BY_SELF: c = cmp_u64_desc(a->self, b->self); break;
	case TC_PROFILE_BY_TOTAL: c = cmp_u64_desc(a->total, b->total); break;
	case TC_PROFILE_BY_CALLS: c = cmp_u64_desc(a->calls, b->calls); break;
	case TC_PROFILE_BY_NAME: break;
	}
	if (!c)
		c = strcmp(a->name, b->name);
	if (!c)
		c = str_cmp(a->dso, b->dso);
	return c ? c : (a->addr > b->addr) - (a->addr < b->addr);
}

static void add_hot_row(struct tc_profile_row *row, const struct hot *h)
{
	unsigned i = TC_PROFILE_HOT;

	while (i > 0 && row->hot[i - 1].insns < h->insns)
		i--;
	if (i == TC_PROFILE_HOT)
		return;
	memmove(&row->hot[i + 1], &row->hot[i], (TC_PROFILE_HOT - 1 - i) * sizeof(row->hot[0]));
	row->hot[i] = (struct tc_profile_hot){ h->start, h->end, h->insns };
}

/* A hot entry of the table's rows: in the table of all threads, one address range of a row
 * is the sum over the threads whose functions the row merges (each thread's entry of it
 * alone would go in its place, and crowd the row's hottest list with the same range). */
struct hot_sum {
	size_t row, first;	/* first: the lowest index in p->hot (the order entries came in) */
	uint64_t start, end, insns;
};

static int hot_sum_by_range(const void *pa, const void *pb)
{
	const struct hot_sum *a = pa, *b = pb;

	if (a->row != b->row)
		return a->row < b->row ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return (a->first > b->first) - (a->first < b->first);
}

static int hot_sum_by_first(const void *pa, const void *pb)
{
	const struct hot_sum *a = pa, *b = pb;

	return (a->first > b->first) - (a->first < b->first);
}

/* The rows' hottest ranges, each range of a row summed over the entries that map to it,
 * offered in the order the entries came (ties keep it). -1 on ENOMEM. */
static int add_hot_rows(const struct tc_profile *p, struct tc_profile_row *rows,
			const size_t *row_of)
{
	struct hot_sum *h = malloc((p->nhot + 1) * sizeof(*h));
	size_t n = 0, k = 0;

	if (!h)
		return -1;
	for (size_t i = 0; i < p->nhot; i++)
		if (row_of[p->hot[i].fn] != SIZE_MAX)
			h[n++] = (struct hot_sum){ row_of[p->hot[i].fn], i, p->hot[i].start,
						   p->hot[i].end, p->hot[i].insns };
	qsort(h, n, sizeof(*h), hot_sum_by_range);
	for (size_t i = 0; i < n; i++) {
		if (k && h[k - 1].row == h[i].row && h[k - 1].start == h[i].start &&
		    h[k - 1].end == h[i].end)
			h[k - 1].insns += h[i].insns;	/* sorted: h[k - 1].first is the lower */
		else
			h[k++] = h[i];
	}
	qsort(h, k, sizeof(*h), hot_sum_by_first);
	for (size_t i = 0; i < k; i++)
		add_hot_row(&rows[h[i].row], &(struct hot){ 0, h[i].start, h[i].end, h[i].insns });
	free(h);
	return 0;
}

static int fn_order(const void *pa, const void *pb, void *prof)
{
	const struct tc_profile *p = prof;
	const struct fn *a = &p->fn[*(const size_t *)pa], *b = &p->fn[*(const size_t *)pb];
	int c = str_cmp(a->dso, b->dso);

	return c ? c : strcmp(a->name, b->name);
}

/* Rows of one thread (thread = SIZE_MAX: all threads, merged by dso and name). */
static int build_rows(const struct tc_profile *p, const struct tc_profile_view *v, size_t thread,
		      const uint64_t *open, const uint64_t *self, struct tc_profile_thread *out)
{
	size_t *idx = malloc((p->nfn + 1) * sizeof(*idx)), n = 0, *row_of;
	struct tc_profile_row *rows;

	row_of = malloc((p->nfn + 1) * sizeof(*row_of));
	rows = calloc(p->nfn + 1, sizeof(*rows));
	if (!idx || !row_of || !rows) {
		free(idx);
		free(row_of);
		free(rows);
		return -1;
	}
	for (size_t i = 0; i < p->nfn; i++) {
		if (thread == SIZE_MAX || p->fn[i].thread == thread)
			idx[n++] = i;
	}
	if (thread == SIZE_MAX)
		qsort_r(idx, n, sizeof(*idx), fn_order, (void *)p);
	out->n = 0;
	for (size_t i = 0; i < n; i++) {
		const struct fn *f = &p->fn[idx[i]];
		struct tc_profile_row *r = out->n ? &rows[out->n - 1] : NULL;

		if (!r || thread != SIZE_MAX || strcmp(r->name, f->name) ||
		    str_cmp(r->dso, f->dso)) {
			r = &rows[out->n++];
			*r = (struct tc_profile_row){ .name = f->name,
						      .dso = f->dso,
						      .addr = f->addr };
		}
		r->self += self[idx[i]];
		r->total += f->total + open[idx[i]];
		r->calls += f->calls;
		row_of[idx[i]] = (size_t)(r - rows);
	}
	for (size_t i = 0; i < p->nfn; i++) {
		if (thread != SIZE_MAX && p->fn[i].thread != thread)
			row_of[i] = SIZE_MAX;
	}
	if (add_hot_rows(p, rows, row_of)) {
		free(idx);
		free(row_of);
		free(rows);
		return -1;
	}
	out->funcs = 0;
	for (size_t i = 0; i < out->n; i++)
		out->funcs += rows[i].self > 0;
	/* dso filter, then sort and limit */
	if (v->dso) {
		size_t k = 0;

		for (size_t i = 0; i < out->n; i++) {
			if (rows[i].dso && !strcmp(rows[i].dso, v->dso))
				rows[k++] = rows[i];
		}
		out->n = k;
	}
	qsort_r(rows, out->n, sizeof(*rows), row_cmp, (void *)&v->sort);
	if (v->limit && out->n > v->limit)
		out->n = v->limit;
	out->rows = rows;
	free(idx);
	free(row_of);
	return 0;
}

int tc_profile_table(const struct tc_profile *p, const struct tc_profile_view *v,
		  struct tc_profile_table *t)
{
	size_t n = v->per_thread ? p->nth : 1;
	/* open: [0, nfn] the frames' totals still open; self: [nfn + 1, 2 nfn + 2) */
	uint64_t *open = calloc(2 * (p->nfn + 1), sizeof(*open)), *self = open + p->nfn + 1;
	uint64_t insns = 0;

	for (size_t i = 0; i < p->nth; i++)
		insns += p->th[i].insns;
	*t = (struct tc_profile_table){ .insns = insns };
	t->threads = calloc(n ? n : 1, sizeof(*t->threads));
	if (!t->threads || !open) {
		free(t->threads);
		t->threads = NULL;
		free(open);
		return -1;
	}
	/* every range counted its instructions in a hot entry of its function */
	for (size_t i = 0; i < p->nhot; i++)
		self[p->hot[i].fn] += p->hot[i].insns;
	/* the frames still on the stacks count up to now */
	for (size_t i = 0; i < p->nth; i++)
		for (size_t k = 0; k < p->th[i].depth; k++)
			if (p->th[i].stack[k].since != UINT64_MAX)
				open[p->th[i].stack[k].fn] += p->th[i].insns - p->th[i].stack[k].since;
	for (size_t i = 0; i < n; i++) {
		struct tc_profile_thread *o = &t->threads[i];

		if (v->per_thread)
			*o = (struct tc_profile_thread){ .pid = p->th[i].pid, .tid = p->th[i].tid,
						      .cpu = p->th[i].cpu, .comm = p->th[i].comm,
						      .insns = p->th[i].insns };
		else
			*o = (struct tc_profile_thread){ .pid = -1, .tid = -1, .cpu = -1,
						      .insns = insns };
		t->n = i + 1;
		if (build_rows(p, v, v->per_thread ? i : SIZE_MAX, open, self, o)) {
			tc_profile_table_free(t);
			free(open);
			return -1;
		}
	}
	free(open);
	return 0;
}

void tc_profile_table_free(struct tc_profile_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->threads[i].rows);
	free(t->threads);
	*t = (struct tc_profile_table){ .n = 0 };
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

void tc_profile_write_text(const struct tc_profile_table *t, FILE *f)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct tc_profile_thread *th = &t->threads[i];

		if (i)
			fputc('\n', f);
		if (th->tid >= 0)
			fprintf(f, "thread %d/%d", th->pid, th->tid);
		else if (th->cpu >= 0)
			fprintf(f, "cpu %d (thread unknown)", th->cpu);
		else
			fprintf(f, "all threads");
		if (th->comm)
			fprintf(f, " (%s)", th->comm);
		fprintf(f, ": %" PRIu64 " instructions, %zu functions executed\n", th->insns,
			th->funcs);
		fprintf(f, "%12s %7s %12s %7s %8s  %-s\n", "self", "self%", "total", "total%",
			"calls", "function");
		for (size_t k = 0; k < th->n; k++) {
			const struct tc_profile_row *r = &th->rows[k];

			fprintf(f, "%12" PRIu64 " %6.2f%% %12" PRIu64 " %6.2f%% %8" PRIu64 "  %s",
				r->self, pct(r->self, th->insns), r->total,
				pct(r->total, th->insns), r->calls, r->name);
			if (r->dso)
				fprintf(f, " [%s]", r->dso);
			if (r->hot[0].insns)
				fprintf(f, "  hottest 0x%" PRIx64 "-0x%" PRIx64 " (%" PRIu64 ")",
					r->hot[0].start, r->hot[0].end, r->hot[0].insns);
			fputc('\n', f);
		}
	}
}

void tc_profile_write_json(const struct tc_profile_table *t, struct tc_json *j)
{
	tc_json_obj_open(j);
	tc_json_kint(j, "insns", (long long)t->insns);
	tc_json_key(j, "threads");
	tc_json_arr_open(j);
	for (size_t i = 0; i < t->n; i++) {
		const struct tc_profile_thread *th = &t->threads[i];

		tc_json_obj_open(j);
		tc_json_kint(j, "pid", th->pid);
		tc_json_kint(j, "tid", th->tid);
		tc_json_kint(j, "cpu", th->cpu);
		tc_json_kstr(j, "comm", th->comm);
		tc_json_kint(j, "insns", (long long)th->insns);
		tc_json_kint(j, "functions", (long long)th->funcs);
		tc_json_key(j, "rows");
		tc_json_arr_open(j);
		for (size_t k = 0; k < th->n; k++) {
			const struct tc_profile_row *r = &th->rows[k];

			tc_json_obj_open(j);
			tc_json_kstr(j, "name", r->name);
			tc_json_kstr(j, "dso", r->dso);
			tc_json_khex(j, "addr", r->addr);
			tc_json_kint(j, "self", (long long)r->self);
			tc_json_kint(j, "total", (long long)r->total);
			tc_json_kint(j, "calls", (long long)r->calls);
			tc_json_key(j, "hot");
			tc_json_arr_open(j);
			for (unsigned h = 0; h < TC_PROFILE_HOT && r->hot[h].insns; h++) {
				tc_json_obj_open(j);
				tc_json_khex(j, "start", r->hot[h].start);
				tc_json_khex(j, "end", r->hot[h].end);
				tc_json_kint(j, "insns", (long long)r->hot[h].insns);
				tc_json_obj_close(j);
			}
			tc_json_arr_close(j);
			tc_json_obj_close(j);
		}
		tc_json_arr_close(j);
		tc_json_obj_close(j);
	}
	tc_json_arr_close(j);
	tc_json_obj_close(j);
}
