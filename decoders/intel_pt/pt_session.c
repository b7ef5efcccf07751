#include "decoders/intel_pt/pt_session.h"

#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/intel_pt/pt_config.h"
#include "decoders/intel_pt/pt_flow.h"
#include "decoders/intel_pt/pt_walk.h"
#include "decoders/jobs.h"
#include "decoders/time_heap.h"
#include "lib/images/images.h"
#include "lib/util/grow.h"

#include "decoders/intel_pt/pt_session_priv.h"

struct tc_pt_session *tc_pt_session_new(const struct tc_pt_session_opts *o, struct tc_err *e)
{
	struct tc_pt_session *s;

	if (!o || !o->emit) {
		tc_err_set(e, EINVAL, "Intel PT session needs an emit callback");
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		tc_err_sys(e, ENOMEM, "Intel PT session");
		return NULL;
	}
	s->o = *o;
	return s;
}

void tc_pt_session_free(struct tc_pt_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nq; i++) {
		for (size_t j = 0; j < s->q[i].nbufs; j++)
			if (s->q[i].bufs[j].owned)
				free((void *)s->q[i].bufs[j].data);
		free(s->q[i].bufs);
		tc_images_free(s->q[i].im);
	}
	for (size_t i = 0; i < s->nsb; i++)
		free(s->sb[i].filename);
	for (size_t i = 0; i < s->nmiss; i++) {
		free(s->miss[i].line);
		free(s->miss[i].dso);
	}
	free(s->miss);
	free(s->list);
	free(s->q);
	free(s->order);
	free(s->sb);
	free(s->sw);
	free(s->tp);
	free(s);
}

bool tc_pt_session_is_intel_pt(const struct tc_pt_session *s)
{
	return s->intel_pt;
}

const struct tc_pt_session_stats *tc_pt_session_stats(const struct tc_pt_session *s)
{
	return &s->st;
}

static uint64_t time_of(const struct tc_perf_data_record *r)
{
	/* Without sample_id_all there is no time: such side-band counts from the start. */
	return r->sid.has_time ? r->sid.time : 0;
}

int tc_pt_session_nomem(struct tc_err *e)
{
	return tc_err_sys(e, ENOMEM, "Intel PT session");
}

static int add_sb(struct tc_pt_session *s, const struct tc_perf_data_record *r, struct tc_err *e)
{
	struct sb *b;

	if (tc_grow((void **)&s->sb, &s->capsb, s->nsb + 1, sizeof(*s->sb)))
		return tc_pt_session_nomem(e);
	b = &s->sb[s->nsb];
	memset(b, 0, sizeof(*b));
	b->time = time_of(r);
	b->seq = s->seq++;
	b->type = r->type;
	switch (r->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		b->pid = (int32_t)r->u.mmap.pid;
		b->start = r->u.mmap.start;
		b->len = r->u.mmap.len;
		b->pgoff = r->u.mmap.pgoff;
		if (r->u.mmap.has_build_id && r->u.mmap.build_id_size <= 20) {
			b->bid_len = r->u.mmap.build_id_size;
			memcpy(b->bid, r->u.mmap.build_id, b->bid_len);
		}
		if (!(b->filename = strdup(r->u.mmap.filename ? r->u.mmap.filename : "")))
			return tc_pt_session_nomem(e);
		break;
	case PERF_RECORD_COMM:
		b->pid = (int32_t)r->u.comm.pid;
		break;
	case PERF_RECORD_FORK:
		b->pid = (int32_t)r->u.fork.pid;
		b->ppid = (int32_t)r->u.fork.ppid;
		break;
	}
	s->nsb++;
	return 0;
}

static int add_sw(struct tc_pt_session *s, uint64_t time, int cpu, int pid, int tid,
		  struct tc_err *e)
{
	if (tc_grow((void **)&s->sw, &s->capsw, s->nsw + 1, sizeof(*s->sw)))
		return tc_pt_session_nomem(e);
	s->sw[s->nsw++] = (struct sw){ time, s->seq++, cpu, pid, tid };
	return 0;
}

static int add_tid(struct tc_pt_session *s, uint32_t pid, uint32_t tid, struct tc_err *e)
{
	for (size_t i = 0; i < s->ntp; i++)
		if (s->tp[i].tid == (int)tid) {
			s->tp[i].pid = (int)pid;
			return 0;
		}
	if (tc_grow((void **)&s->tp, &s->captp, s->ntp + 1, sizeof(*s->tp)))
		return tc_pt_session_nomem(e);
	s->tp[s->ntp++] = (struct tid_pid){ (int)tid, (int)pid };
	return 0;
}

size_t tc_pt_session_sb_until(const struct tc_pt_session *s, size_t from, uint64_t now)
{
	while (from < s->nsb && s->sb[from].time <= now)
		from++;
	return from;
}

int tc_pt_session_pid_of(const struct tc_pt_session *s, int tid)
{
	for (size_t i = 0; i < s->ntp; i++)
		if (s->tp[i].tid == tid)
			return s->tp[i].pid;
	return tid;	/* a process's first thread */
}

static struct queue *get_queue(struct tc_pt_session *s, int key, int cpu)
{
	struct queue *q;

	/* buffers come in runs of one queue: the last one first */
	if (s->nq && s->q[s->nq - 1].key == key)
		return &s->q[s->nq - 1];
	for (size_t i = 0; i < s->nq; i++)
		if (s->q[i].key == key)
			return &s->q[i];
	if (tc_grow((void **)&s->q, &s->capq, s->nq + 1, sizeof(*s->q)))
		return NULL;
	q = &s->q[s->nq++];
	memset(q, 0, sizeof(*q));
	q->key = key;
	q->cpu = cpu;
	q->pid = q->tid = -1;
	return q;
}

/* CPUs a recording can have: its nrcpus feature's, else the kernel's NR_CPUS bound. A
 * pipe's features are not the recording's (perf inject writes its own host's). */
static bool header_cpus(const struct tc_perf_data *pd)
{
	const struct tc_perf_data_features *f = tc_perf_data_features(pd);

	return !tc_perf_data_is_pipe(pd) && f->has_nrcpus && f->nr_cpus_avail;
}

static uint32_t max_cpus(const struct tc_perf_data *pd)
{
	return header_cpus(pd) ? tc_perf_data_features(pd)->nr_cpus_avail : TC_PT_MAX_CPUS;
}

/* The bytes of q's buffer i that are trace: without perf's padding where one follows. */
static size_t trace_len(const struct queue *q, size_t i)
{
	return i + 1 < q->nbufs && q->bufs[i + 1].follows ?
	       (size_t)(q->bufs[i + 1].aux - q->bufs[i].aux) : q->bufs[i].size;
}

/* tc_pt_flow_follow's next: the kth buffer after buffer at, while they follow on. */
static bool next_buf(void *ctx, size_t at, size_t k, struct tc_pt_flow_buf *b)
{
	const struct queue *q = ctx;
	size_t j = at + 1 + k;

	if (j >= q->nbufs || !q->bufs[j].follows)
		return false;
	*b = (struct tc_pt_flow_buf){ q->bufs[j].data, trace_len(q, j), q->bufs[j].offset };
	return true;
}

void tc_pt_session_follow(struct queue *q, size_t i, struct tc_pt_flow *d)
{
	tc_pt_flow_follow(d, trace_len(q, i), next_buf, q, i);
}

static int add_buffer(struct tc_pt_session *s, const struct tc_perf_data_record *r,
		      struct tc_err *e)
{
	int cpu = (int)r->u.auxtrace.cpu, tid = (int)r->u.auxtrace.tid;
	struct queue *q = s->pt.per_cpu_mmaps ? get_queue(s, cpu, cpu) : get_queue(s, tid, cpu);
	struct buf *b;

	if (!q || tc_grow((void **)&q->bufs, &q->capbufs, q->nbufs + 1, sizeof(*q->bufs)))
		return tc_pt_session_nomem(e);
	b = &q->bufs[q->nbufs];
	b->offset = r->offset + r->size;
	b->size = (size_t)r->u.auxtrace.size;
	b->owned = !r->u.auxtrace.kept;
	b->aux = r->u.auxtrace.offset;
	/* perf drained the AUX ring there: the trace goes on in this buffer (no bytes lost
	 * between, as the AUX offsets say; perf pads a buffer to 8 bytes with zeros that are
	 * not the trace's) */
	b->follows = q->nbufs && b->aux >= b[-1].aux && b->aux <= b[-1].aux + b[-1].size &&
		     b[-1].aux + b[-1].size - b->aux < 8;
	if (r->u.auxtrace.kept) {
		b->data = r->u.auxtrace.data;	/* mapped: read when decoded, then let go */
	} else {
		uint8_t *copy = malloc(b->size ? b->size : 1);

		if (!copy)
			return tc_pt_session_nomem(e);
		memcpy(copy, r->u.auxtrace.data, b->size);
		b->data = copy;
	}
	q->nbufs++;
	s->st.buffers++;
	s->st.bytes += b->size;
	return 0;
}

int tc_pt_session_record(struct tc_pt_session *s, const struct tc_perf_data *pd,
			 const struct tc_perf_data_record *r, struct tc_err *e)
{
	const struct tc_perf_data_sample_id *sid = &r->sid;

	switch (r->type) {
	case TC_PERF_DATA_AUXTRACE_INFO:
		if (r->u.auxtrace_info.type != TC_AUXTRACE_INTEL_PT)
			return 0;
		if (!r->u.auxtrace_info.intel_pt)
			return tc_err_set(e, EINVAL, "%s: Intel PT AUXTRACE_INFO at offset 0x%llx "
					  "could not be parsed", tc_perf_data_name(pd),
					  (unsigned long long)r->offset);
		if (tc_pt_config_from_perf_data(&s->pt, pd, r->u.auxtrace_info.intel_pt, e))
			return -1;
		s->pt.filter = NULL;	/* points into the record */
		s->info = *r->u.auxtrace_info.intel_pt;
		s->info.filter = NULL;
		s->info.filter_owned = NULL;
		s->intel_pt = true;
		return 0;
	case TC_PERF_DATA_AUXTRACE:
		if (!s->intel_pt)
			return 0;
		/* a CPU number, or -1 (per-thread); the queues and records take it as an int */
		if (r->u.auxtrace.cpu > INT_MAX && r->u.auxtrace.cpu != UINT32_MAX)
			return tc_err_set(e, EINVAL, "%s: AUXTRACE record at offset 0x%llx: cpu %u "
					  "is not a CPU number", tc_perf_data_name(pd),
					  (unsigned long long)r->offset, r->u.auxtrace.cpu);
		/* a queue per CPU: no more of them than the header says the machine had */
		if (s->pt.per_cpu_mmaps && r->u.auxtrace.cpu != UINT32_MAX &&
		    r->u.auxtrace.cpu >= max_cpus(pd))
			return tc_err_set(e, EINVAL, "%s: AUXTRACE record at offset 0x%llx: "
					  "cpu %u, but %s %u CPUs", tc_perf_data_name(pd),
					  (unsigned long long)r->offset, r->u.auxtrace.cpu,
					  header_cpus(pd) ? "the header's nrcpus feature gives"
						  : "a machine has at most",
					  max_cpus(pd));
		return add_buffer(s, r, e);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (r->u.mmap.pid != UINT32_MAX && add_tid(s, r->u.mmap.pid, r->u.mmap.tid, e))
			return -1;
		return add_sb(s, r, e);
	case PERF_RECORD_COMM:
		if (add_tid(s, r->u.comm.pid, r->u.comm.tid, e))
			return -1;
		return r->u.comm.exec ? add_sb(s, r, e) : 0;
	case PERF_RECORD_FORK:
		if (add_tid(s, r->u.fork.pid, r->u.fork.tid, e))
			return -1;
		/* A new thread shares its process's address space; only a new process copies. */
		return r->u.fork.pid != r->u.fork.ppid ? add_sb(s, r, e) : 0;
	case PERF_RECORD_ITRACE_START:
		if (add_tid(s, r->u.itrace_start.pid, r->u.itrace_start.tid, e))
			return -1;
		return sid->has_cpu ? add_sw(s, time_of(r), (int)sid->cpu,
					     (int)r->u.itrace_start.pid,
					     (int)r->u.itrace_start.tid, e) : 0;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (!sid->has_cpu)
			return 0;
		/* Switch-out names the next task; switch-in is the incoming task's own. */
		if (r->u.sw.out)
			return add_sw(s, time_of(r), (int)sid->cpu, (int)r->u.sw.next_prev_pid,
				      (int)r->u.sw.next_prev_tid, e);
		return sid->has_tid ? add_sw(s, time_of(r), (int)sid->cpu, (int)sid->pid,
					     (int)sid->tid, e) : 0;
	case PERF_RECORD_SWITCH:
		/* Only the switch-in says who runs next. */
		if (r->u.sw.out || !sid->has_cpu || !sid->has_tid)
			return 0;
		return add_sw(s, time_of(r), (int)sid->cpu, (int)sid->pid, (int)sid->tid, e);
	}
	return 0;
}

static int cmp_sb(const void *a, const void *b)
{
	const struct sb *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_sw(const void *a, const void *b)
{
	const struct sw *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Side-band record b into q's address spaces. */
static void apply_sb(struct queue *q, const struct sb *b)
{
	/* the counter is of what records emitted to the caller see: under --jobs the lanes
	 * format them (their writers follow q->space) and the caller's thread reads it */
	if (!q->s->par && !q->s->pipe)
		q->s->gen++;
	tc_pt_session_apply_sb_to(q->s, q->im, b);
}

void tc_pt_session_apply_sb_to(const struct tc_pt_session *s, struct tc_images *im,
			       const struct sb *b)
{
	switch (b->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		tc_images_map(im, b->pid, b->start, b->len, b->pgoff, b->filename,
			      b->bid_len ? b->bid : NULL, b->bid_len);
		break;
	case PERF_RECORD_COMM:
		/* Without time all of it applies at once, the trace before an exec
		 * included: its mappings stay, as perf's timeless decoding keeps them. */
		if (!s->pt.timeless)
			tc_images_exec(im, b->pid);
		break;
	case PERF_RECORD_FORK:
		tc_images_fork(im, b->ppid, b->pid);
		break;
	}
}

/* q's address spaces, made now if its decoder has not needed them yet, with q's
 * side-band up to sb_next (NULL: out of memory, read as no code). */
/* An ADDR_NACC record counted: a stop or a branch target without code, in a file found
 * missing (its lines) or in no file. */
void tc_pt_session_count_nacc(struct tc_pt_session *s, struct tc_images *im, int pid,
			      const struct tc_rec *r)
{
	struct tc_images_sym sym;
	struct missing *m;

	if (!im || tc_images_symbol(im, pid, r->start, &sym) || !sym.dso) {
		if (!r->value)
			s->st.nomap_unmapped++;
	} else if ((m = tc_pt_session_miss_for(s, sym.dso))) {
		if (r->value)
			m->reached++;
		else
			m->stops++;
	}
}

struct tc_images *tc_pt_session_images_new(const struct tc_pt_session *s, size_t n)
{
	struct tc_images_opts io = { .symfs = s->o.symfs, .buildid_dir = s->o.buildid_dir,
				     .kernel = s->o.kernel };
	struct tc_images *im = tc_images_new(&io);

	if (!im)
		return NULL;
	if (s->f)
		tc_images_add_build_ids(im, s->f->build_ids, s->f->nr_build_ids);
	for (size_t i = 0; i < n; i++)
		tc_pt_session_apply_sb_to(s, im, &s->sb[i]);
	return im;
}

struct tc_images *tc_pt_session_images(struct queue *q)
{
	struct tc_pt_session *s = q->s;

	if (q->im)
		return q->im;
	if (s->pipe)
		tc_pt_pipe_images(q);	/* the caller's thread makes its own */
	else if (!s->par)
		s->gen++;
	return q->im = tc_pt_session_images_new(s, q->sb_next);
}

/* Apply address-space side-band up to perf time now (all of it: UINT64_MAX); without
 * images yet, only note how far (tc_pt_session_images() applies it). */
static void advance_images(struct queue *q, uint64_t now)
{
	struct tc_pt_session *s = q->s;
	size_t to = tc_pt_session_sb_until(s, q->sb_next, now);

	for (; q->sb_next < to; q->sb_next++) {
		q->space++;
		if (s->pipe)
			tc_pt_pipe_sb(q);
		if (q->im)
			apply_sb(q, &s->sb[q->sb_next]);
	}
}

static size_t read_cb(void *ctx, int cpu, uint64_t cr3, uint64_t addr, uint8_t *buf, size_t len)
{
	struct queue *q = ctx;

	struct tc_images *im = tc_pt_session_images(q);

	(void)cpu;
	(void)cr3;
	return im ? tc_images_read(im, q->pid, addr, buf, len) : 0;
}

static int span_cb(void *ctx, int cpu, uint64_t cr3, uint64_t addr, struct tc_pt_flow_span *sp)
{
	struct queue *q = ctx;
	struct tc_images *im = tc_pt_session_images(q);
	struct tc_images_span is;

	(void)cpu;
	(void)cr3;
	if (!im || tc_images_span(im, q->pid, addr, &is))
		return -1;
	*sp = (struct tc_pt_flow_span){ is.path, is.start, is.len, is.offset };
	return 0;
}

static uint64_t space_cb(void *ctx)
{
	const struct queue *q = ctx;

	return q->space;
}

/* The queue's switches up to perf time t: the index just past the last of them. */
static size_t switches_until(const struct tc_pt_session *s, const struct queue *q, uint64_t t)
{
	size_t lo = q->sw_lo, hi = q->sw_hi;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->sw[mid].time <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Time known: the side-band up to then applies, and the cpu runs the task last switched
 * in. Without time only a per-thread queue knows its thread. */
static void thread_cb(void *ctx, int cpu, uint64_t cr3, const struct tc_pt_flow_time *t, int *pid,
		      int *tid)
{
	struct queue *q = ctx;
	struct tc_pt_session *s = q->s;
	size_t lo;

	(void)cpu;
	(void)cr3;
	if (!s->pt.per_cpu_mmaps) {
		*pid = q->pid;
		*tid = q->tid;
	}
	if (!t->has_tsc || s->pt.timeless)
		return;
	advance_images(q, t->perf_time);
	if (!s->pt.per_cpu_mmaps)
		return;
	lo = switches_until(s, q, t->perf_time);
	if (*pid != (lo > q->sw_lo ? s->sw[lo - 1].pid : -1))
		q->space++;
	if (lo > q->sw_lo) {
		q->pid = *pid = s->sw[lo - 1].pid;
		q->tid = *tid = s->sw[lo - 1].tid;
	} else {
		q->pid = *pid = -1;
		q->tid = *tid = -1;
	}
}

/* Would thread_cb at time t change anything: side-band to apply, another task switched in? */
static bool due_cb(void *ctx, int cpu, const struct tc_pt_flow_time *t)
{
	const struct queue *q = ctx;
	const struct tc_pt_session *s = q->s;
	size_t lo;

	(void)cpu;
	if (!t->has_tsc || s->pt.timeless)
		return false;
	if (q->sb_next < s->nsb && s->sb[q->sb_next].time <= t->perf_time)
		return true;
	if (!s->pt.per_cpu_mmaps)
		return false;
	lo = switches_until(s, q, t->perf_time);
	if (lo > q->sw_lo)
		return s->sw[lo - 1].pid != q->pid || s->sw[lo - 1].tid != q->tid;
	return q->pid != -1 || q->tid != -1;
}

struct missing *tc_pt_session_miss_for(struct tc_pt_session *s, const char *dso)
{
	for (size_t i = 0; i < s->nmiss; i++)
		if (!strcmp(s->miss[i].dso, dso))
			return &s->miss[i];
	if (tc_grow((void **)&s->miss, &s->capmiss, s->nmiss + 1, sizeof(*s->miss)))
		return NULL;
	s->miss[s->nmiss] = (struct missing){ NULL, strdup(dso), 0, 0 };
	if (!s->miss[s->nmiss].dso)
		return NULL;
	return &s->miss[s->nmiss++];
}

/* emit_cb's records other than the common ones: --jobs, stops without code. Not inlined:
 * emit_cb's common case stays a few instructions and a tail call. */
__attribute__((noinline)) static void emit_rare(struct queue *q, const struct tc_rec *r)
{
	struct tc_pt_session *s = q->s;

	if (s->par) {
		tc_pt_lanes_emit(q, r);
		return;
	}
	if (r->type == TC_REC_ADDR_NACC) {
		tc_pt_session_count_nacc(s, tc_pt_session_images(q), q->pid, r);
		if (r->value)
			return;	/* a branch target without code, not a stop (pt_flow.h) */
	}
	if (r->type == (s->o.branches ? TC_REC_RANGE : TC_REC_BRANCH))
		return;
	if (s->pipe) {
		tc_pt_pipe_rec(q, r);
		return;
	}
	tc_pt_session_note_emitter(s, q, q->pid);
	s->o.emit(s->o.ctx, r);
}

static void emit_cb(void *ctx, const struct tc_rec *r)
{
	struct queue *q = ctx;
	struct tc_pt_session *s = q->s;

	tc_perf_data_behind(s->pd, &q->behind, r->offset);
	if (s->par || s->pipe || r->type == TC_REC_ADDR_NACC) {
		emit_rare(q, r);
	} else if (r->type != (s->o.branches ? TC_REC_RANGE : TC_REC_BRANCH)) {
		tc_pt_session_note_emitter(s, q, q->pid);
		s->o.emit(s->o.ctx, r);
	}
}

/* A run of RANGE records from q's flow (pt_flow.h emit_ranges): one queue, pid and address
 * space, as emit_cb would pass them one by one. */
static void emit_ranges_cb(void *ctx, const struct tc_rec *r, size_t n)
{
	struct queue *q = ctx;
	struct tc_pt_session *s = q->s;

	if (s->par || s->o.branches) {	/* --jobs; ranges made for the reference only */
		for (size_t i = 0; i < n; i++)
			emit_cb(ctx, &r[i]);
		return;
	}
	tc_perf_data_behind(s->pd, &q->behind, r[n - 1].offset);
	if (s->pipe) {
		tc_pt_pipe_run(q, r, n);
		return;
	}
	tc_pt_session_note_emitter(s, q, q->pid);
	s->o.emit_ranges(s->o.ctx, r, n);
}

/* The skim's ranges of q's flow, to the caller's thread (pt_pipe.c). */
static void skim_ranges_cb(void *ctx, const struct tc_rec *base, const struct tc_pt_skim_range *r,
			   size_t n)
{
	struct queue *q = ctx;

	tc_perf_data_behind(q->s->pd, &q->behind, base->offset + r[n - 1].offset);
	tc_pt_pipe_skim(q, base, r, n);
}

static void add_missing(struct tc_pt_session *s, const char *const *lines, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct missing *m = NULL;

		for (size_t j = 0; j < s->nmiss && !m; j++) {
			size_t l = strlen(s->miss[j].dso);

			/* lines are "path (build id ...)": match on the path */
			if (!strncmp(lines[i], s->miss[j].dso, l) &&
			    (lines[i][l] == ' ' || !lines[i][l]))
				m = &s->miss[j];
		}
		if (m && m->line)
			continue;
		if (!m && !(m = tc_pt_session_miss_for(s, lines[i])))
			return;
		m->line = strdup(lines[i]);
	}
}

void tc_pt_session_add_missing_lines(struct tc_pt_session *s, struct tc_images *im)
{
	const char *const *lines;
	size_t n = im ? tc_images_missing(im, &lines) : 0;

	add_missing(s, lines, n);
}

/* The queue's address spaces, its CPU's switches and its decoder. */
int tc_pt_session_open_queue(struct tc_pt_session *s, struct queue *q,
			     const struct tc_perf_data_features *f, struct tc_err *e)
{
	struct tc_pt_flow_ops ops = { .read = read_cb, .emit = emit_cb,
		.emit_ranges = s->o.emit_ranges ? emit_ranges_cb : NULL,
		.skim_ranges = s->pipe && !s->o.branches ? skim_ranges_cb : NULL, .thread = thread_cb,
		.due = due_cb,
		.span = span_cb, .space = space_cb, .ctx = q,
		.skip = 1u << (s->o.branches ? TC_REC_RANGE : TC_REC_BRANCH),
		.ticks = tc_pt_session_by_time(s), .reference = s->o.reference,
		.no_offsets = s->o.no_offsets && !s->par };

	q->s = s;
	if (s->f != f)
		s->f = f;	/* tc_pt_session_images() takes the build ids from there */
	/* This cpu's switches. */
	q->sw_lo = q->sw_hi = 0;
	if (s->pt.per_cpu_mmaps) {
		while (q->sw_lo < s->nsw && s->sw[q->sw_lo].cpu < q->cpu)
			q->sw_lo++;
		q->sw_hi = q->sw_lo;
		while (q->sw_hi < s->nsw && s->sw[q->sw_hi].cpu == q->cpu)
			q->sw_hi++;
	} else {
		q->tid = q->key;
		q->pid = tc_pt_session_pid_of(s, q->key);
	}
	/* Without time nothing orders side-band against trace: take all of it. */
	if (s->pt.timeless)
		advance_images(q, UINT64_MAX);
	else
		advance_images(q, 0);
	q->d = tc_pt_flow_new(&s->pt.cfg, &s->pt.tc, q->cpu, &ops, e);
	return q->d ? 0 : -1;
}

void tc_pt_session_add_flow_stats(struct tc_pt_session *s, const struct tc_pt_flow_stats *st)
{
	s->st.insns += st->insns;
	s->st.ranges += st->ranges;
	s->st.branches += st->branches;
	s->st.errors += st->errors;
	s->st.nomap += st->nomap;
	s->st.overflows += st->overflows;
	s->st.syncs += st->syncs;
	s->st.unsynced_bytes += st->unsynced_bytes;
}

/* Its decoder goes when its trace is done; its images stay (symbols, after). */
void tc_pt_session_close_queue(struct tc_pt_session *s, struct queue *q)
{
	if (s->par) {
		if (!q->wopen || q->ended)
			return;
		q->ended = true;
		tc_pt_session_add_flow_stats(s, &q->fst);
		/* its last bytes are put: the lane is done with its writer and images */
		if (q->w)
			s->lw->close(q->w);
		q->w = NULL;
		tc_pt_session_add_missing_lines(s, q->im);
		return;
	}
	if (!q->d)
		return;
	tc_pt_session_add_flow_stats(s, tc_pt_flow_stats(q->d));
	tc_pt_flow_free(q->d);
	q->d = NULL;
	tc_pt_session_add_missing_lines(s, q->im);
}

/* Without time: each queue on its own, buffer after buffer (perf's timeless decoding). */
static int decode_in_turn(struct tc_pt_session *s, struct queue *q,
			  const struct tc_perf_data_features *f, struct tc_err *e)
{
	s->cur = q;
	if (tc_pt_session_open_queue(s, q, f, e))
		return -1;
	for (size_t i = 0; i < q->nbufs; i++) {
		q->behind.from = q->bufs[i].offset;
		tc_pt_session_follow(q, i, q->d);
		if (tc_pt_flow_feed(q->d, q->bufs[i].data, q->bufs[i].size, q->bufs[i].offset, e))
			return -1;
		tc_perf_data_release(s->pd, q->bufs[i].offset, q->bufs[i].size);
	}
	tc_pt_session_close_queue(s, q);
	return 0;
}

/* With time, as perf orders its queues: the queue furthest behind runs until its trace
 * passes the next one's time. */
static int decode_by_time(struct tc_pt_session *s, const struct tc_perf_data_features *f,
			  struct tc_err *e)
{
	struct tc_time_heap h;
	int ret = 0;

	if (tc_time_heap_start(&h, s->nq))
		return tc_pt_session_nomem(e);
	while (h.n && !ret) {
		struct queue *q = &s->q[tc_time_heap_top(&h)];

		s->cur = q;
		if (!q->begun) {
			if (q->next_buf == q->nbufs) {
				tc_pt_session_close_queue(s, q);
				tc_time_heap_pop(&h);
				continue;
			}
			/* a decoder only while the queue has trace to give */
			if (!q->d && tc_pt_session_open_queue(s, q, f, e)) {
				ret = -1;
				break;
			}
			q->behind.from = q->bufs[q->next_buf].offset;
			tc_pt_session_follow(q, q->next_buf, q->d);
			ret = tc_pt_flow_begin(q->d, q->bufs[q->next_buf].data,
					       q->bufs[q->next_buf].size,
					       q->bufs[q->next_buf].offset, e);
			q->next_buf++;
			q->begun = true;
		} else if (tc_pt_flow_run(q->d, tc_time_heap_next(&h)) == 0) {
			q->begun = false;
			tc_perf_data_release(s->pd, q->bufs[q->next_buf - 1].offset,
					     q->bufs[q->next_buf - 1].size);
		}
		tc_time_heap_update_top(&h, tc_pt_session_resumes_at(q));
	}
	tc_time_heap_free(&h);
	return ret;
}

/* Before workers run (--jobs): the side-band once here first, so that the kernel's images
 * (one object for every address space) take the recording's reference now and the
 * workers' address spaces, given the same, only read it. */
static void prime_images(struct tc_pt_session *s)
{
	struct tc_images_opts io = { .symfs = s->o.symfs, .buildid_dir = s->o.buildid_dir,
				     .kernel = s->o.kernel };
	struct tc_images *prime = tc_images_new(&io);

	for (size_t i = 0; prime && i < s->nsb; i++)
		if (s->sb[i].type == PERF_RECORD_MMAP || s->sb[i].type == PERF_RECORD_MMAP2)
			tc_images_map(prime, s->sb[i].pid, s->sb[i].start, s->sb[i].len,
				      s->sb[i].pgoff, s->sb[i].filename, NULL, 0);
	tc_images_free(prime);
}

int tc_pt_session_decode(struct tc_pt_session *s, const struct tc_perf_data *pd, struct tc_err *e)
{
	const struct tc_perf_data_features *f = pd ? tc_perf_data_features(pd) : NULL;
	int ret = 0;

	if (!s->intel_pt)
		return tc_err_set(e, EINVAL, "no Intel PT AUXTRACE_INFO in the input");
	/* In pipe mode the cpuid feature (libipt's errata) may come after AUXTRACE_INFO. */
	if (pd && tc_pt_config_from_perf_data(&s->pt, pd, &s->info, e))
		return -1;
	s->pd = pd;
	s->pt.filter = NULL;
	if (s->nsb)	/* qsort wants an array, even of none */
		qsort(s->sb, s->nsb, sizeof(*s->sb), cmp_sb);
	if (s->nsw)
		qsort(s->sw, s->nsw, sizeof(*s->sw), cmp_sw);
	s->st.queues = s->nq;
	if (tc_pt_segment_usable(s)) {
		prime_images(s);
		ret = tc_pt_segment_decode(s, f, e);
		s->pd = NULL;
		return ret;
	}
	/* Several queues with time whose records the lanes can format (pt_lanes.c; without
	 * time the segments above); one queue has no other to decode beside it and decodes
	 * here (through a lane it cost twice the CPU of one thread on a 52 MB trace, as slow
	 * in wall time). */
	if (s->o.jobs > 1 && s->nq > 1 && s->o.writer && s->o.writer->usable(s->o.writer->ctx)) {
		prime_images(s);
		/* this thread has only the lanes' bytes to write out: --jobs N threads decode
		 * and format (N workers) */
		s->lw = s->o.writer;
		if (!(s->par = tc_jobs_new(s->o.jobs + 1, s->nq, LANE_BUDGET)))
			return tc_pt_session_nomem(e);
		tc_jobs_no_help(s->par);	/* a task without time runs a whole buffer */
		ret = tc_pt_lanes_decode(s, f, e);
		if (!ret && tc_jobs_failed(s->par))
			ret = tc_pt_session_nomem(e);	/* an item lost */
		tc_jobs_free(s->par);	/* the workers are done: the fields are the caller's */
		s->par = NULL;
		s->cur = NULL;
		for (size_t i = 0; i < s->nq; i++) {
			struct queue *q = &s->q[i];

			if (q->d) {
				tc_pt_flow_free(q->d);
				q->d = NULL;
			}
			if (q->w)	/* not closed: decoding failed */
				s->lw->close(q->w);
			q->w = NULL;
			if (q->wfail && !ret)
				ret = tc_pt_session_nomem(e);
		}
		s->lw = NULL;
		s->gen++;
		return ret;
	}
	/* records to the caller's thread (analyses): decoded in a worker (pt_pipe.c) */
	ret = tc_pt_pipe_usable(s) ? tc_pt_pipe_decode(s, f, e) : tc_pt_session_decode_here(s, f, e);
	s->pd = NULL;
	return ret;
}

int tc_pt_session_decode_here(struct tc_pt_session *s, const struct tc_perf_data_features *f,
			      struct tc_err *e)
{
	int ret = 0;

	if (tc_pt_session_by_time(s))
		ret = decode_by_time(s, f, e);
	for (size_t i = 0; i < s->nq && !ret && !tc_pt_session_by_time(s); i++)
		ret = decode_in_turn(s, &s->q[i], f, e);
	for (size_t i = 0; i < s->nq; i++)
		if (s->q[i].d)
			tc_pt_session_close_queue(s, &s->q[i]);
	return ret;
}

/* Queue i's address spaces (the caller's thread's, while a worker decodes: pt_pipe.c). */
static struct tc_images *qim(struct tc_pt_session *s, size_t i)
{
	return s->pipe ? tc_pt_pipe_view(s, i, false) : s->q[i].im;
}

int tc_pt_session_symbolize(void *ctx, int pid, uint64_t addr, struct tc_images_sym *sym)
{
	struct tc_pt_session *s = ctx;
	struct tc_images *im;

	if (s->pipe) {	/* the emitting queue and pid as the caller's thread has them */
		int cpid;
		const struct queue *cur = tc_pt_pipe_cur(s, &cpid);

		if (cur && (pid < 0 || pid == cpid)) {
			im = tc_pt_pipe_view(s, (size_t)(cur - s->q), true);
			return im ? tc_images_symbol(im, cpid, addr, sym) : -1;
		}
	}
	if (!s->pipe && s->cur && (pid < 0 || pid == s->cur->pid))
		return tc_pt_session_images(s->cur) ?
			tc_images_symbol(s->cur->im, s->cur->pid, addr, sym) : -1;
	im = pid >= 0 ? tc_pt_session_images_at(s, pid, addr) : NULL;
	return im ? tc_images_symbol(im, pid, addr, sym) : -1;
}

struct tc_images *tc_pt_session_images_at(struct tc_pt_session *s, int pid, uint64_t addr)
{
	struct tc_images_sym sym;

	for (size_t i = 0; i < s->nq; i++)
		if (qim(s, i) && !tc_images_symbol(qim(s, i), pid, addr, &sym))
			return qim(s, i);
	return NULL;
}

int tc_pt_session_sym(void *ctx, int pid, uint64_t addr, const char **name, uint64_t *start)
{
	struct tc_pt_session *s = ctx;
	struct tc_images_sym sym;

	/* each queue has its own address spaces; any that maps pid's addr will do */
	for (size_t i = 0; i < s->nq; i++)
		if (qim(s, i) && !tc_images_symbol(qim(s, i), pid, addr, &sym) && sym.sym) {
			*name = sym.sym;
			*start = addr - sym.sym_off;
			return 0;
		}
	return -1;
}

const uint64_t *tc_pt_session_space(const struct tc_pt_session *s)
{
	return &s->gen;
}

const char *tc_pt_session_dso(void *ctx, int pid, uint64_t addr)
{
	struct tc_pt_session *s = ctx;
	struct tc_images_sym sym;

	for (size_t i = 0; i < s->nq; i++)
		if (qim(s, i) && !tc_images_symbol(qim(s, i), pid, addr, &sym) && sym.dso)
			return sym.dso;
	return NULL;
}

size_t tc_pt_session_missing(const struct tc_pt_session *s,
			     const struct tc_pt_session_missing **list)
{
	struct tc_pt_session *m = (struct tc_pt_session *)s;	/* the list is built on demand */
	size_t n = 0;

	free(m->list);
	m->list = calloc(s->nmiss ? s->nmiss : 1, sizeof(*m->list));
	if (!m->list) {
		*list = NULL;
		return 0;
	}
	for (size_t i = 0; i < s->nmiss; i++)
		if (s->miss[i].line)
			m->list[n++] =
				(struct tc_pt_session_missing){ s->miss[i].line, s->miss[i].stops,
								s->miss[i].reached };
	*list = m->list;
	return n;
}
