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

/* Side-band that changes address spaces, in perf time order. */
struct sb {
	uint64_t time, seq;
	uint32_t type;		/* PERF_RECORD_MMAP(2), COMM (exec), FORK */
	int32_t pid, ppid;
	uint64_t start, len, pgoff;
	char *filename;
	uint8_t bid[20], bid_len;
};

/* From this perf time on, pid/tid runs on cpu. */
struct sw {
	uint64_t time, seq;
	int cpu, pid, tid;
};

#define TC_PT_MAX_CPUS 8192	/* Linux's largest NR_CPUS */

struct buf {
	uint64_t offset;	/* file offset of the trace bytes */
	const uint8_t *data;	/* the reader's (u.auxtrace.kept), else our copy */
	size_t size;
	bool owned;
};

struct queue {
	struct tc_pt_session *s;
	int key;		/* cpu, or tid for per-thread buffers */
	int cpu;
	struct buf *bufs;
	size_t nbufs, capbufs;
	/* Its address spaces: made when its decoder first reads code (tc_images_new and the
	 * side-band up to sb_next applied then), so that a queue whose trace reads none (a
	 * crafted file's thousands of CPUs, each a PSB) costs a few hundred bytes, not a copy
	 * of the side-band. */
	struct tc_images *im;
	size_t sb_next;		/* side-band applied (or due, without im) up to here */
	size_t sw_lo, sw_hi;	/* this cpu's part of s->sw */
	int pid, tid;
	uint64_t space;		/* changes with what reads see: side-band applied, pid */
	struct tc_pt_flow *d;
	struct tc_perf_data_behind behind;	/* trace decoded is let go of (bounded memory) */
	/* --jobs (s->par): the fields above are the decoding thread's, with these: */
	struct tc_jobs_out *out;
	size_t wbuf, wput;
	bool wopen, wbegun, wdone, failed;
	struct tc_pt_flow_stats fst;
	struct tc_err err;
	/* the queue's records formatted here (s->lw), handed over every TAKE_RECS of them */
	void *w;
	bool wfail;		/* its writer could not be opened (out of memory) */
	unsigned nw;		/* records written since the last take */
	uint64_t woff;		/* the offset of the last record written */
	/* apart (no cache line shared with the decoding thread's fields): the caller's */
	char pad0[64];
	size_t next_buf;	/* decode_by_time, merge_by_time: the buffer to begin next */
	bool begun;
	bool ended;
	bool mdone;		/* the caller's thread has read its end */
	char pad1[64];
};

struct tid_pid {
	int tid, pid;
};

struct missing {
	char *line, *dso;
	uint64_t stops, reached;
};

struct tc_pt_session {
	struct tc_pt_session_opts o;
	bool intel_pt;
	struct tc_intel_pt_info info;	/* words only: set up again at decode time */
	struct tc_pt_setup pt;
	struct queue *q;
	size_t nq, capq;
	struct sb *sb;
	size_t nsb, capsb;
	struct sw *sw;
	size_t nsw, capsw;
	struct tid_pid *tp;
	size_t ntp, captp;
	uint64_t seq;
	struct queue *cur;	/* the queue being decoded */
	struct tc_pt_session_stats st;
	struct missing *miss;	/* dso "" collects stops at unmapped addresses */
	size_t nmiss, capmiss;
	struct tc_pt_session_missing *list;
	const struct tc_perf_data_features *f;	/* at decode time: build ids for images */
	uint64_t gen;		/* changes with any queue's address spaces (tc_pt_session_space)
				 * and the emitting queue or its pid (note_emitter) */
	const struct queue *eq;	/* the queue and pid of the last record emitted */
	int epid;
	const struct tc_perf_data *pd;	/* at decode time: the input, to let go of trace */
	struct tc_jobs *par;	/* --jobs: queues decode in worker threads */
	const struct tc_jobs_writer *lw;	/* o.writer when usable: formatted on the lanes */
};

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

static int nomem(struct tc_err *e)
{
	return tc_err_sys(e, ENOMEM, "Intel PT session");
}

static int add_sb(struct tc_pt_session *s, const struct tc_perf_data_record *r, struct tc_err *e)
{
	struct sb *b;

	if (tc_grow((void **)&s->sb, &s->capsb, s->nsb + 1, sizeof(*s->sb)))
		return nomem(e);
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
			return nomem(e);
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
		return nomem(e);
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
		return nomem(e);
	s->tp[s->ntp++] = (struct tid_pid){ (int)tid, (int)pid };
	return 0;
}

static int pid_of(const struct tc_pt_session *s, int tid)
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

static int add_buffer(struct tc_pt_session *s, const struct tc_perf_data_record *r,
		      struct tc_err *e)
{
	int cpu = (int)r->u.auxtrace.cpu, tid = (int)r->u.auxtrace.tid;
	struct queue *q = s->pt.per_cpu_mmaps ? get_queue(s, cpu, cpu) : get_queue(s, tid, cpu);
	struct buf *b;

	if (!q || tc_grow((void **)&q->bufs, &q->capbufs, q->nbufs + 1, sizeof(*q->bufs)))
		return nomem(e);
	b = &q->bufs[q->nbufs];
	b->offset = r->offset + r->size;
	b->size = (size_t)r->u.auxtrace.size;
	b->owned = !r->u.auxtrace.kept;
	if (r->u.auxtrace.kept) {
		b->data = r->u.auxtrace.data;	/* mapped: read when decoded, then let go */
	} else {
		uint8_t *copy = malloc(b->size ? b->size : 1);

		if (!copy)
			return nomem(e);
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

static void apply_sb_to(const struct tc_pt_session *s, struct tc_images *im, const struct sb *b);

/* Side-band record b into q's address spaces. */
static void apply_sb(struct queue *q, const struct sb *b)
{
	/* the counter is of what records emitted to the caller see: under --jobs the lanes
	 * format them (their writers follow q->space) and the caller's thread reads it */
	if (!q->s->par)
		q->s->gen++;
	apply_sb_to(q->s, q->im, b);
}

static void apply_sb_to(const struct tc_pt_session *s, struct tc_images *im, const struct sb *b)
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
static struct tc_images *images(struct queue *q)
{
	struct tc_pt_session *s = q->s;
	struct tc_images_opts io = { .symfs = s->o.symfs, .buildid_dir = s->o.buildid_dir,
				     .kernel = s->o.kernel };

	if (q->im)
		return q->im;
	if (!s->par)
		s->gen++;
	if (!(q->im = tc_images_new(&io)))
		return NULL;
	if (s->f)
		tc_images_add_build_ids(q->im, s->f->build_ids, s->f->nr_build_ids);
	for (size_t i = 0; i < q->sb_next; i++)
		apply_sb(q, &s->sb[i]);
	return q->im;
}

/* Apply address-space side-band up to perf time now (all of it: UINT64_MAX); without
 * images yet, only note how far (images() applies it). */
static void advance_images(struct queue *q, uint64_t now)
{
	struct tc_pt_session *s = q->s;

	for (; q->sb_next < s->nsb && s->sb[q->sb_next].time <= now; q->sb_next++) {
		q->space++;
		if (q->im)
			apply_sb(q, &s->sb[q->sb_next]);
	}
}

static size_t read_cb(void *ctx, int cpu, uint64_t cr3, uint64_t addr, uint8_t *buf, size_t len)
{
	struct queue *q = ctx;

	struct tc_images *im = images(q);

	(void)cpu;
	(void)cr3;
	return im ? tc_images_read(im, q->pid, addr, buf, len) : 0;
}

static int span_cb(void *ctx, int cpu, uint64_t cr3, uint64_t addr, struct tc_pt_flow_span *sp)
{
	struct queue *q = ctx;
	struct tc_images *im = images(q);
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

/* Time known: the side-band up to then applies, and the cpu runs the task last switched
 * in. Without time only a per-thread queue knows its thread. */
static void thread_cb(void *ctx, int cpu, uint64_t cr3, const struct tc_pt_flow_time *t, int *pid,
		      int *tid)
{
	struct queue *q = ctx;
	struct tc_pt_session *s = q->s;
	size_t lo = q->sw_lo, hi = q->sw_hi;

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
	/* Last switch at or before now. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->sw[mid].time <= t->perf_time)
			lo = mid + 1;
		else
			hi = mid;
	}
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

static struct missing *miss_for(struct tc_pt_session *s, const char *dso)
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

static void emit_par(struct queue *q, const struct tc_rec *r);

/* A record of q's, in pid's address space, is to be emitted: the records' symbols
 * (tc_pt_session_symbolize) come from the emitting queue's address spaces and pid, so the
 * space number moves when either is another than the last record's: a cache of answers
 * by pid and address (the record writer's) holds while it stays. */
static inline void note_emitter(struct tc_pt_session *s, const struct queue *q, int pid)
{
	if (__builtin_expect(q != s->eq || pid != s->epid, 0)) {
		s->eq = q;
		s->epid = pid;
		s->gen++;
	}
}

/* emit_cb's records other than the common ones: --jobs, stops without code. Not inlined:
 * emit_cb's common case stays a few instructions and a tail call. */
__attribute__((noinline)) static void emit_rare(struct queue *q, const struct tc_rec *r)
{
	struct tc_pt_session *s = q->s;

	if (s->par) {
		emit_par(q, r);
		return;
	}
	if (r->type == TC_REC_ADDR_NACC) {
		struct tc_images_sym sym;
		struct missing *m;

		if (!images(q) || tc_images_symbol(q->im, q->pid, r->start, &sym) || !sym.dso) {
			if (!r->value)
				s->st.nomap_unmapped++;
		} else if ((m = miss_for(s, sym.dso))) {
			if (r->value)
				m->reached++;
			else
				m->stops++;
		}
		if (r->value)
			return;	/* a branch target without code, not a stop (pt_flow.h) */
	}
	if (r->type == (s->o.branches ? TC_REC_RANGE : TC_REC_BRANCH))
		return;
	note_emitter(s, q, q->pid);
	s->o.emit(s->o.ctx, r);
}

static void emit_cb(void *ctx, const struct tc_rec *r)
{
	struct queue *q = ctx;
	struct tc_pt_session *s = q->s;

	tc_perf_data_behind(s->pd, &q->behind, r->offset);
	if (s->par || r->type == TC_REC_ADDR_NACC) {
		emit_rare(q, r);
	} else if (r->type != (s->o.branches ? TC_REC_RANGE : TC_REC_BRANCH)) {
		note_emitter(s, q, q->pid);
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
	note_emitter(s, q, q->pid);
	s->o.emit_ranges(s->o.ctx, r, n);
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
		if (!m && !(m = miss_for(s, lines[i])))
			return;
		m->line = strdup(lines[i]);
	}
}

static void add_missing_lines(struct tc_pt_session *s, struct tc_images *im)
{
	const char *const *lines;
	size_t n = im ? tc_images_missing(im, &lines) : 0;

	add_missing(s, lines, n);
}

/* Are the queues interleaved by time (decode_by_time)? */
static bool by_time(const struct tc_pt_session *s)
{
	return !s->pt.timeless && s->nq > 1;
}

/* The queue's address spaces, its CPU's switches and its decoder. */
static int open_queue(struct tc_pt_session *s, struct queue *q,
		      const struct tc_perf_data_features *f, struct tc_err *e)
{
	struct tc_pt_flow_ops ops = { .read = read_cb, .emit = emit_cb,
		.emit_ranges = s->o.emit_ranges ? emit_ranges_cb : NULL, .thread = thread_cb,
		.span = span_cb, .space = space_cb, .ctx = q,
		.skip = 1u << (s->o.branches ? TC_REC_RANGE : TC_REC_BRANCH),
		.ticks = by_time(s), .reference = s->o.reference,
		.no_offsets = s->o.no_offsets && !s->par };

	q->s = s;
	if (s->f != f)
		s->f = f;	/* images() takes the build ids from there */
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
		q->pid = pid_of(s, q->key);
	}
	/* Without time nothing orders side-band against trace: take all of it. */
	if (s->pt.timeless)
		advance_images(q, UINT64_MAX);
	else
		advance_images(q, 0);
	q->d = tc_pt_flow_new(&s->pt.cfg, &s->pt.tc, q->cpu, &ops, e);
	return q->d ? 0 : -1;
}

static void add_flow_stats(struct tc_pt_session *s, const struct tc_pt_flow_stats *st)
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
static void close_queue(struct tc_pt_session *s, struct queue *q)
{
	if (s->par) {
		if (!q->wopen || q->ended)
			return;
		q->ended = true;
		add_flow_stats(s, &q->fst);
		/* its last bytes are put: the lane is done with its writer and images */
		if (q->w)
			s->lw->close(q->w);
		q->w = NULL;
		add_missing_lines(s, q->im);
		return;
	}
	if (!q->d)
		return;
	add_flow_stats(s, tc_pt_flow_stats(q->d));
	tc_pt_flow_free(q->d);
	q->d = NULL;
	add_missing_lines(s, q->im);
}

/* Without time: each queue on its own, buffer after buffer (perf's timeless decoding). */
static int decode_in_turn(struct tc_pt_session *s, struct queue *q,
			  const struct tc_perf_data_features *f, struct tc_err *e)
{
	s->cur = q;
	if (open_queue(s, q, f, e))
		return -1;
	for (size_t i = 0; i < q->nbufs; i++) {
		q->behind.from = q->bufs[i].offset;
		if (tc_pt_flow_feed(q->d, q->bufs[i].data, q->bufs[i].size, q->bufs[i].offset, e))
			return -1;
		tc_perf_data_release(s->pd, q->bufs[i].offset, q->bufs[i].size);
	}
	close_queue(s, q);
	return 0;
}

/* The perf time q resumes at; 0 while its trace has told none (it runs first). */
static uint64_t resumes_at(const struct queue *q)
{
	uint64_t t;

	return tc_pt_flow_next_time(q->d, &t) ? t : 0;
}

/* With time, as perf orders its queues: the queue furthest behind runs until its trace
 * passes the next one's time. */
static int decode_by_time(struct tc_pt_session *s, const struct tc_perf_data_features *f,
			  struct tc_err *e)
{
	struct tc_time_heap h;
	int ret = 0;

	if (tc_time_heap_init(&h, s->nq))
		return nomem(e);
	for (size_t i = 0; i < s->nq; i++)
		tc_time_heap_push(&h, i, 0);
	while (h.n && !ret) {
		struct queue *q = &s->q[tc_time_heap_top(&h)];

		s->cur = q;
		if (!q->begun) {
			if (q->next_buf == q->nbufs) {
				close_queue(s, q);
				tc_time_heap_pop(&h);
				continue;
			}
			/* a decoder only while the queue has trace to give */
			if (!q->d && open_queue(s, q, f, e)) {
				ret = -1;
				break;
			}
			q->behind.from = q->bufs[q->next_buf].offset;
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
		tc_time_heap_update_top(&h, resumes_at(q));
	}
	tc_time_heap_free(&h);
	return ret;
}

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
 * Records that must come to the caller's thread (analyses, filters, -F, events) decode
 * in it: handing them over serialised (as before) cost more than it saved, twice the CPU
 * of one thread and never faster on two cores (report -j of a 4-queue trace: 0.42 s CPU
 * with one thread, 0.87 s with --jobs 2 and 1.0 s with --jobs 4).
 *
 * Without time a queue is cut at its PSBs instead (decode_segments below): what one thread
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
 * With time (or the reference decoder), libipt's block decoder and its own block cache
 * decode, in order: a queue is not cut. */
enum item_kind { IT_BEGIN = 1, IT_STEP, IT_END, IT_TASK_END, IT_BYTES, IT_NACC };

#define IT_KIND 0xffu
#define IT_QUIET (1u << 8)	/* ADDR_NACC to count, not a stop */
#define IT_FOUND (1u << 9)	/* ADDR_NACC in an image: its dso follows */

/* BEGIN, STEP, END, TASK_END */
struct mark {
	uint32_t kind;
	int32_t ret;
	uint64_t t;
};

#define TASK_BYTES (4u << 20)	/* a task's output before it hands over at a step */
#define TAKE_RECS 64		/* records formatted between takes: fewer than a block holds */
#define LANE_BUDGET (4u << 20)	/* formatted bytes the lanes hold unread, about */

struct bytes_item {
	uint32_t kind;		/* IT_BYTES */
	uint32_t pad;
	const char *bytes;
	size_t n;
	void *block;
	uint64_t offset;
};

/* The bytes formatted since the last take, to the caller's thread: an item per piece
 * (take gives them until it gives nothing). */
static void lane_take(struct queue *q)
{
	const struct tc_jobs_writer *lw = q->s->lw;
	struct bytes_item b = { .kind = IT_BYTES, .offset = q->woff };

	q->nw = 0;
	if (!q->w)
		return;
	while ((b.n = lw->take(q->w, &b.bytes, &b.block)) || b.block) {
		if (tc_jobs_put(q->out, &b, sizeof(b)))
			continue;	/* lost: tc_jobs_failed says so */
		tc_jobs_charge(q->out, b.n);
		q->wput += b.n;
	}
}

static void put_mark(struct queue *q, enum item_kind kind, int ret)
{
	struct mark m = { kind, ret, kind == IT_BEGIN || kind == IT_STEP ? resumes_at(q) : 0 };

	/* the bytes before it (after the end none: the writer is the caller's then) */
	if (kind != IT_TASK_END || !q->wdone)
		lane_take(q);
	tc_jobs_put(q->out, &m, sizeof(m));
}

/* The writer's symbols: tc_pt_session_symbolize's answer for the queue at work. A record's
 * pid is the queue's thread's or -1 (pt_flow takes it from thread_cb), except one the flow
 * restored when falling back to libipt's decoder (the walk runs without time here, where
 * thread_cb leaves the pid as it is): that one's own address space. */
static int lane_sym(void *ctx, int pid, uint64_t addr, struct tc_images_sym *sym)
{
	struct queue *q = ctx;
	struct tc_images *im = images(q);

	if (!im)
		return -1;
	return tc_images_symbol(im, pid < 0 ? q->pid : pid, addr, sym);
}

/* emit_cb in the decoding thread: what emit_rare and the command's writer do. */
static void emit_par(struct queue *q, const struct tc_rec *r)
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

		if (images(q) && !tc_images_symbol(q->im, q->pid, r->start, &sym) && sym.dso) {
			dso = sym.dso;
			dl = strlen(dso) + 1;
			tag |= IT_FOUND;
		}
		if ((p = tc_jobs_alloc(q->out, 4 + dl))) {
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
	q->woff = r->offset;
	if (++q->nw >= TAKE_RECS)
		lane_take(q);
}

/* A task: the queue's decoding from where the last one stopped, until its output passes
 * TASK_BYTES at a step or the queue is done. */
static void run_task(void *arg, struct tc_jobs_out *out)
{
	struct queue *q = arg;
	struct tc_pt_session *s = q->s;
	const struct buf *b;
	int r;

	q->out = out;
	q->wput = 0;
	if (!q->wopen) {
		q->wopen = true;
		if (open_queue(s, q, s->f, &q->err)) {
			q->failed = true;
			q->wbuf = q->nbufs;
		}
	}
	while (q->wbuf < q->nbufs && q->wput < TASK_BYTES) {
		b = &q->bufs[q->wbuf];
		if (!q->wbegun) {
			if (tc_pt_flow_begin(q->d, b->data, b->size, b->offset, &q->err)) {
				q->failed = true;
				q->wbuf = q->nbufs;
				break;
			}
			q->wbegun = true;
			if (by_time(s)) {
				put_mark(q, IT_BEGIN, 0);
				continue;
			}
		}
		/* one thread feeds a queue without time to the end of each buffer */
		r = tc_pt_flow_run(q->d, by_time(s) ? resumes_at(q) : UINT64_MAX);
		if (by_time(s))
			put_mark(q, IT_STEP, r);
		if (r == 0) {
			q->wbegun = false;
			q->wbuf++;
		}
	}
	if (q->wbuf == q->nbufs && !q->wdone) {
		q->wdone = true;
		if (q->d) {
			q->fst = *tc_pt_flow_stats(q->d);
			tc_pt_flow_free(q->d);
			q->d = NULL;
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
	case IT_NACC: {
		struct missing *ms;

		if (!(tag & IT_FOUND)) {
			if (!(tag & IT_QUIET))
				s->st.nomap_unmapped++;
		} else if ((ms = miss_for(s, (const char *)p + 4))) {
			if (tag & IT_QUIET)
				ms->reached++;
			else
				ms->stops++;
		}
		return IT_NACC;
	}
	case IT_END:
		q->mdone = true;
		break;
	case IT_TASK_END:
		if (!q->mdone && submit(s, q))	/* two tasks ahead, while there is work */
			return -1;
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
		if (k == IT_BEGIN || k == IT_STEP || k == IT_END)
			return k;
	return -1;
}

static int queue_failed(struct queue *q, struct tc_err *e)
{
	*e = q->err;
	return -1;
}

/* decode_by_time over the marks. */
static int merge_by_time(struct tc_pt_session *s, struct tc_err *e)
{
	struct tc_time_heap h;
	struct mark it;
	int ret = 0, k;

	if (tc_time_heap_init(&h, s->nq))
		return nomem(e);
	for (size_t i = 0; i < s->nq; i++)
		tc_time_heap_push(&h, i, 0);
	while (h.n && !ret) {
		struct queue *q = &s->q[tc_time_heap_top(&h)];
		uint64_t key = 0, until;

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
				close_queue(s, q);
				tc_time_heap_pop(&h);
				continue;
			}
			if ((k = next_mark(s, q, &it)) != IT_BEGIN) {
				ret = q->failed ? queue_failed(q, e) : nomem(e);
				break;
			}
			key = it.t;
			q->next_buf++;
			q->begun = true;
		} else {
			until = tc_time_heap_next(&h);
			for (;;) {
				if (next_mark(s, q, &it) != IT_STEP) {
					ret = nomem(e);
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
		tc_time_heap_update_top(&h, key);
	}
	tc_time_heap_free(&h);
	return ret;
}

static int decode_par(struct tc_pt_session *s, const struct tc_perf_data_features *f,
		      struct tc_err *e)
{
	struct mark it;
	int k;

	s->f = f;
	for (size_t i = 0; i < s->nq; i++) {
		s->q[i].s = s;
		if (submit(s, &s->q[i]) || submit(s, &s->q[i]))
			return nomem(e);
	}
	if (by_time(s))
		return merge_by_time(s, e);
	for (size_t i = 0; i < s->nq; i++) {
		struct queue *q = &s->q[i];

		s->cur = q;
		while ((k = next_mark(s, q, &it)) >= 0 && k != IT_END)
			;
		if (q->failed)
			return queue_failed(q, e);
		if (k != IT_END)
			return nomem(e);
		close_queue(s, q);
	}
	return 0;
}

/* ---- --jobs on one queue: its buffers cut at PSBs (segments) ----
 * Without time (no ticks, the fast walk: pt_flow's ops.segment), a buffer is cut at PSBs
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
 * the true flow's to its first block and the segment's after. Otherwise the segment is
 * dropped and the true flow decodes it here, on to the next one's PSB.
 * The flows share libipt's section cache (one isid per file section, for the marks) and
 * never use libipt's block decoder there: where the true flow's walk gives up, the queue
 * is decoded again from its start here, as with one thread, its first records (those
 * written already, the same) left out. Each segment flow reads code in a context of its
 * own (address spaces), one of a few lent in turn. */
static const uint8_t psb_bytes[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
				       0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };

#define SEG_MIN (4u << 10)	/* trace bytes in a segment, at least */
#define SEG_MAX (1u << 20)
#define SEG_OUT (2u << 20)	/* output bytes of a segment, about */
#define SEG_BUDGET (8u << 20)	/* formatted bytes the segments hold unread, about */

struct seg_ctx {
	struct tc_pt_session *s;
	struct queue *q;
	struct tc_images *im;
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
};

struct segs;
struct seg {
	struct tc_pt_session *s;
	struct segs *ss;
	struct queue *q;
	struct seg_ctx *c;
	struct seg_wr *wr;
	struct tc_pt_flow *d;
	const struct buf *b;
	uint64_t from, to;	/* PSB (UINT64_MAX: the buffer's start), next segment's PSB */
	bool at_psb;
	struct tc_jobs_out *out;	/* in its task; NULL: bytes put at once */
	bool odd;		/* a record the segments do not make (ADDR_NACC) */
	uint64_t nrec, ncounted;
	bool held_done, have_held;
	struct tc_rec held;
	struct tc_pt_flow_stats base;
	bool failed;
	struct tc_err err;
	size_t lane;
};

struct segs {
	struct tc_pt_session *s;
	/* contexts: [0] the caller's thread's (the true flow's), the others lent to tasks */
	struct seg_ctx *ctx;
	size_t nctx;
	struct seg_wr *wr;	/* [0] the caller's thread's, [1 + lane] the lanes' */
	size_t nwr;
	pthread_mutex_t mu;
	uint64_t space;		/* what reads see never changes without time */
	struct pt_image_section_cache *iscache;
	struct tc_pt_walk_cache *master;
	struct tc_pt_flow_stats acc;
	uint64_t written;	/* records put */
	uint64_t drop;		/* the redo's records yet to leave out */
	struct tc_pt_walk_cache *pool[32];	/* walk caches to use again */
	size_t npool;
	uint64_t out_bytes, trace_bytes;	/* put, and the trace they came from */
	struct tc_pt_flow_sec *secs;	/* libipt's file sections the true flow has */
	size_t nsecs, capsecs;
	bool lost;		/* out of memory: the queue is decoded again */
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

/* Did the speculative flow g find no section wherever the true flow t had one? */
static bool seg_secs_same(const struct tc_pt_flow *g, const struct tc_pt_flow *t)
{
	const struct tc_pt_flow_sec *x;
	const uint64_t *ips;
	size_t nm = tc_pt_flow_section_misses(g, &ips), n = tc_pt_flow_sections(t, &x);

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
	struct tc_pt_session *s = c->s;
	struct tc_images_opts io = { .symfs = s->o.symfs, .buildid_dir = s->o.buildid_dir,
				     .kernel = s->o.kernel };

	if (c->im)
		return c->im;
	if (!(c->im = tc_images_new(&io)))
		return NULL;
	if (s->f)
		tc_images_add_build_ids(c->im, s->f->build_ids, s->f->nr_build_ids);
	for (size_t i = 0; i < s->nsb; i++)
		apply_sb_to(s, c->im, &s->sb[i]);
	return c->im;
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

	return g->ss->space;
}

static void seg_thread(void *ctx, int cpu, uint64_t cr3, const struct tc_pt_flow_time *t,
		       int *pid, int *tid)
{
	struct seg *g = ctx;

	(void)cpu;
	(void)cr3;
	(void)t;
	if (!g->s->pt.per_cpu_mmaps) {	/* without time only a per-thread queue knows */
		*pid = g->q->pid;
		*tid = g->q->tid;
	}
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
		if (!(c->w = lw->open(lw->ctx, seg_sym, c, &g->ss->space))) {
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

static void seg_task(void *arg, struct tc_jobs_out *out)
{
	struct seg *g = arg;
	struct segs *ss = g->ss;
	struct mark m = { IT_END, 0, 0 };
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
	g->out = out;
	if (tc_pt_flow_begin_at(g->d, g->b->data, g->b->size, g->b->offset, g->from, &g->err)) {
		g->failed = true;
	} else {
		tc_pt_flow_stop_at(g->d, g->to);
		do
			r = tc_pt_flow_run(g->d, UINT64_MAX);
		while (r == 1 && !tc_pt_flow_paused(g->d));
	}
	g->held_done = true;	/* from now on the true flow's, if taken */
	seg_take(g);
	g->out = NULL;
	pthread_mutex_lock(&ss->mu);
	g->c->busy = false;
	g->c = &ss->ctx[0];	/* as the true flow, in the caller's thread */
	g->wr = &ss->wr[0];
	pthread_mutex_unlock(&ss->mu);
	tc_jobs_put(out, &m, sizeof(m));
	g->out = NULL;
}

/* A segment's flow and writer go (its bytes put or dropped already). */
static void seg_free(struct segs *ss, struct seg *g)
{
	if (!g)
		return;
	if (g->d) {
		struct tc_pt_walk_cache *c = tc_pt_flow_take_walk_cache(g->d);

		if (c && ss->npool < sizeof(ss->pool) / sizeof(ss->pool[0]))
			ss->pool[ss->npool++] = c;
		else
			tc_pt_walk_cache_free(c);
	}
	tc_pt_flow_free(g->d);
	free(g);
}

static struct seg *seg_new(struct segs *ss, struct queue *q, const struct buf *b, uint64_t from,
			   uint64_t to, struct tc_err *e)
{
	struct tc_pt_session *s = ss->s;
	struct seg *g = calloc(1, sizeof(*g));
	struct tc_pt_flow_ops ops = { .read = seg_read, .emit = seg_emit, .thread = seg_thread,
		.span = seg_span, .space = seg_space, .ctx = g,
		.skip = 1u << (s->o.branches ? TC_REC_RANGE : TC_REC_BRANCH),
		.segment = true, .iscache = ss->iscache };
	struct tc_pt_walk_cache *wc;

	if (!g) {
		nomem(e);
		return NULL;
	}
	g->s = s;
	g->ss = ss;
	g->q = q;
	g->b = b;
	g->from = from;
	g->to = to;
	g->at_psb = from != UINT64_MAX;
	g->held_done = !g->at_psb;
	if ((g->d = tc_pt_flow_new(&s->pt.cfg, &s->pt.tc, q->cpu, &ops, e)) && ss->npool) {
		wc = ss->pool[--ss->npool];
		tc_pt_walk_cache_reset(wc);
		tc_pt_flow_set_walk_cache(g->d, wc);
	}
	if (!g->d || !(wc = tc_pt_flow_walk_cache(g->d)) || tc_pt_walk_cache_copy(wc, ss->master)) {
		if (g->d)
			nomem(e);
		seg_free(ss, g);
		return NULL;
	}
	tc_pt_walk_cache_log(wc);
	if (tc_pt_flow_add_sections(g->d, ss->secs, ss->nsecs)) {
		nomem(e);
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
	ss->written += g->nrec - g->ncounted;
	g->ncounted = g->nrec;
}

/* The true flow g decodes here (its records out at once) until it pauses or ends. */
static void seg_run_here(struct segs *ss, struct seg *g)
{
	/* its marks are the true set's less those joined since it began: the true set */
	if (tc_pt_walk_cache_copy(tc_pt_flow_walk_cache(g->d), ss->master) ||
	    tc_pt_flow_add_sections(g->d, ss->secs, ss->nsecs))
		g->odd = true;	/* out of memory: decoded again */
	g->out = NULL;
	while (tc_pt_flow_run(g->d, UINT64_MAX) == 1 && !tc_pt_flow_paused(g->d))
		;
	seg_take(g);
	seg_count(ss, g);
	if (tc_pt_walk_cache_merge_new(ss->master, tc_pt_flow_walk_cache(g->d)))
		g->odd = true;
	seg_add_secs(ss, g->d);
}

/* The redo's records: those written already left out. */
static void redo_emit(void *ctx, const struct tc_rec *r)
{
	struct seg *g = ctx;
	struct segs *ss = g->ss;
	struct tc_pt_session *s = g->s;

	if (r->type == TC_REC_ADDR_NACC) {
		struct tc_images_sym sym;
		struct tc_images *im = seg_images(g->c);
		struct missing *m;

		if (!im || tc_images_symbol(im, g->q->pid, r->start, &sym) || !sym.dso) {
			if (!r->value)
				s->st.nomap_unmapped++;
		} else if ((m = miss_for(s, sym.dso))) {
			if (r->value)
				m->reached++;
			else
				m->stops++;
		}
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
			 .held_done = true };
	struct tc_pt_flow_ops ops = { .read = seg_read, .emit = redo_emit, .thread = seg_thread,
		.span = seg_span, .space = seg_space, .ctx = &g,
		.skip = 1u << (s->o.branches ? TC_REC_RANGE : TC_REC_BRANCH) };
	int ret = 0;

	ss->drop = ss->written;
	if (!(g.d = tc_pt_flow_new(&s->pt.cfg, &s->pt.tc, q->cpu, &ops, e)))
		return -1;
	for (size_t i = 0; i < q->nbufs && !ret; i++) {
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

/* The buffer offset of the next segment's PSB: the first at least len past at (the
 * previous one's, or the first PSB's), UINT64_MAX if none. Found as the segments are
 * submitted: the trace is read (into memory) only a window ahead. */
static uint64_t seg_cut(const struct buf *b, uint64_t at, uint64_t len)
{
	const uint8_t *p;

	if (at == UINT64_MAX) {
		p = b->size ? memmem(b->data, b->size, psb_bytes, sizeof(psb_bytes)) : NULL;
		if (!p)
			return UINT64_MAX;
		at = (uint64_t)(p - b->data);
	}
	at += len;
	if (at >= b->size || !(p = memmem(b->data + at, b->size - at, psb_bytes,
					    sizeof(psb_bytes))))
		return UINT64_MAX;
	return (uint64_t)(p - b->data);
}

/* One queue, its buffers in turn, each in segments. -1 only on a setup failure. */
static int seg_queue(struct segs *ss, struct queue *q, size_t window, struct tc_err *e)
{
	struct tc_pt_session *s = ss->s;
	struct seg **fl = NULL;	/* the segments in flight, in order */
	struct seg *t = NULL;	/* the true flow: the last segment joined */
	struct seg_items it = { 0 };
	size_t lane = 0;
	bool redo = false;
	int ret = 0;

	if (!(fl = calloc(window, sizeof(*fl))))
		return nomem(e);
	q->s = s;
	if (!s->pt.per_cpu_mmaps) {
		q->tid = q->key;
		q->pid = pid_of(s, q->key);
	}
	for (size_t bi = 0; bi < q->nbufs && !redo && !ret; bi++) {
		const struct buf *b = &q->bufs[bi];
		uint64_t cut = 0;	/* the next segment's start: 0 the buffer's, UINT64_MAX none */
		size_t head = 0, nfl = 0;
		bool more = true;

		q->behind.from = b->offset;
		while ((more || nfl) && !redo && !ret) {
			/* the trace before the true flow's segment is done with */
			if (t && t->b == b && t->from != UINT64_MAX)
				tc_perf_data_behind(s->pd, &q->behind, b->offset + t->from);
			/* submit while the window has room */
			while (more && nfl < window) {
				uint64_t from = cut ? cut : UINT64_MAX;
				uint64_t to = seg_cut(b, from, seg_len(ss));
				struct seg *g = seg_new(ss, q, b, from, to, e);

				cut = to;
				more = to != UINT64_MAX;
				if (!g) {
					ret = -1;
					break;
				}
				g->lane = lane++ % window;
				g->wr = &ss->wr[1 + g->lane];
				if (tc_jobs_submit(s->par, g->lane, seg_task, NULL, g)) {
					seg_free(ss, g);
					ret = nomem(e);
					break;
				}
				fl[(head + nfl++) % window] = g;
			}
			if (ret)
				break;
			/* join the oldest */
			struct seg *g = fl[head];
			bool take;

			fl[head] = NULL;
			head = (head + 1) % window;
			nfl--;
			ss->trace_bytes += (g->to == UINT64_MAX ? b->size : g->to) -
					   (g->from == UINT64_MAX ? 0 : g->from);
			if (seg_collect(ss, g, &it) || g->failed) {
				if (g->failed)
					*e = g->err;
				else
					nomem(e);
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
				if (tc_pt_flow_gave_up(g->d) || g->odd || tc_pt_walk_cache_merge_new(
					    ss->master, tc_pt_flow_walk_cache(g->d)))
					redo = true;
				seg_add_secs(ss, g->d);
				continue;
			}
			if (!g->at_psb) {
				/* a later buffer's first: the true flow ended the buffer before */
				tc_pt_flow_add_sections(t->d, ss->secs, ss->nsecs);
				take = !tc_pt_flow_gave_up(g->d) && !g->odd &&
				       tc_pt_walk_cache_check(tc_pt_flow_walk_cache(g->d), ss->master) &&
				       seg_secs_same(g->d, t->d);
			} else if (!tc_pt_flow_paused(t->d)) {
				/* the true flow ended the buffer: nothing after it */
				seg_put_items(ss, &it, false);
				seg_free(ss, g);
				continue;
			} else {
				tc_pt_flow_step_block(t->d);
				seg_run_here(ss, t);
				if (tc_pt_flow_gave_up(t->d) || t->odd) {
					seg_put_items(ss, &it, false);
					seg_free(ss, g);
					redo = true;
					break;
				}
				take = tc_pt_flow_paused(t->d) && !tc_pt_flow_gave_up(g->d) &&
				       !g->odd &&
				       tc_pt_flow_join_same(tc_pt_flow_first(g->d),
							    tc_pt_flow_after(t->d)) &&
				       tc_pt_walk_cache_check(tc_pt_flow_walk_cache(g->d), ss->master) &&
				       seg_secs_same(g->d, t->d);
				if (!tc_pt_flow_paused(t->d)) {
					/* it ended at that block: the buffer is done */
					seg_put_items(ss, &it, false);
					seg_free(ss, g);
					continue;
				}
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
					seg_write(t, &g->held);
					seg_take(t);
					seg_count(ss, t);
				}
				seg_put_items(ss, &it, true);
				seg_count(ss, g);
				seg_add_stats(&ss->acc, tc_pt_flow_stats(t->d), &t->base);
				seg_free(ss, t);
				t = g;
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
					if (tc_pt_flow_begin(t->d, b->data, b->size, b->offset, &e2)) {
						*e = e2;
						ret = -1;
						break;
					}
				}
				tc_pt_flow_stop_at(t->d, to);
				seg_run_here(ss, t);
				if (tc_pt_flow_gave_up(t->d) || t->odd)
					redo = true;
			}
		}
		/* what is left in flight: dropped */
		while (nfl) {
			struct seg *g = fl[head];

			fl[head] = NULL;
			head = (head + 1) % window;
			nfl--;
			if (!seg_collect(ss, g, &it))
				seg_put_items(ss, &it, false);
			seg_free(ss, g);
		}
		if (!redo && !ret)
			tc_perf_data_release(s->pd, b->offset, b->size);
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

/* Can the queues be cut at their PSBs (see above)? */
static bool seg_usable(const struct tc_pt_session *s)
{
	/* one queue: several decode side by side already (decode_par); cut in turn, each
	 * queue's segments cost more in the caller's thread (joins, marks) than they gained
	 * on a 4-queue emulated trace (0.56 s against 0.47 s with --jobs 2) */
	return s->o.jobs > 1 && s->nq == 1 && s->pt.timeless && !s->o.reference && s->o.writer &&
	       s->o.writer->usable(s->o.writer->ctx);
}

static int decode_segments(struct tc_pt_session *s, const struct tc_perf_data_features *f,
			   struct tc_err *e)
{
	struct segs ss = { .s = s };
	size_t window = (size_t)s->o.jobs + 2;
	int ret = 0;


	if (window > 16)
		window = 16;
	s->f = f;
	s->lw = s->o.writer;
	ss.nctx = (size_t)s->o.jobs + 1;
	ss.ctx = calloc(ss.nctx, sizeof(*ss.ctx));
	ss.nwr = window + 1;
	ss.wr = calloc(ss.nwr, sizeof(*ss.wr));
	pthread_mutex_init(&ss.mu, NULL);
	ss.iscache = pt_iscache_alloc("tracectl");
	ss.master = tc_pt_walk_cache_new();
	s->par = tc_jobs_new(s->o.jobs + 1, window, SEG_BUDGET);
	if (!ss.ctx || !ss.wr || !ss.iscache || !ss.master || !s->par ||
	    pt_iscache_set_limit(ss.iscache, 256ULL << 20) < 0) {
		ret = nomem(e);
		goto out;
	}
	tc_jobs_no_help(s->par);
	for (size_t i = 0; i < s->nq && !ret; i++) {
		struct queue *q = &s->q[i];

		for (size_t c = 0; c < ss.nctx; c++)
			ss.ctx[c] = (struct seg_ctx){ .s = s, .q = q, .im = ss.ctx[c].im };
		for (size_t c = 0; c < ss.nwr; c++)
			ss.wr[c].c = &ss.ctx[0];
		memset(&ss.acc, 0, sizeof(ss.acc));
		ss.written = 0;
		s->cur = q;
		ret = seg_queue(&ss, q, window, e);
		/* the queue's bytes are all put: its writers go */
		for (size_t c = 0; c < ss.nwr; c++) {
			if (ss.wr[c].w)
				s->lw->close(ss.wr[c].w);
			if (ss.wr[c].wfail && !ret)
				ret = nomem(e);
			ss.wr[c] = (struct seg_wr){ .c = &ss.ctx[0] };
		}
		if (!ret)
			add_flow_stats(s, &ss.acc);
		/* images found missing: each context's, in turn */
		for (size_t c = 0; c < ss.nctx; c++)
			add_missing_lines(s, ss.ctx[c].im);
	}
	if (!ret && tc_jobs_failed(s->par))
		ret = nomem(e);
out:
	tc_jobs_free(s->par);
	s->par = NULL;
	s->cur = NULL;
	s->lw = NULL;
	for (size_t c = 0; ss.ctx && c < ss.nctx; c++)
		tc_images_free(ss.ctx[c].im);
	free(ss.ctx);
	free(ss.wr);
	pthread_mutex_destroy(&ss.mu);
	tc_pt_walk_cache_free(ss.master);
	free(ss.secs);
	while (ss.npool)
		tc_pt_walk_cache_free(ss.pool[--ss.npool]);
	if (ss.iscache)
		pt_iscache_free(ss.iscache);
	s->gen++;
	return ret;
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
	if (seg_usable(s)) {
		struct tc_images_opts io = { .symfs = s->o.symfs, .buildid_dir = s->o.buildid_dir,
					     .kernel = s->o.kernel };
		struct tc_images *prime = tc_images_new(&io);

		/* the kernel's images take the recording's reference here (see below) */
		for (size_t i = 0; prime && i < s->nsb; i++)
			if (s->sb[i].type == PERF_RECORD_MMAP || s->sb[i].type == PERF_RECORD_MMAP2)
				tc_images_map(prime, s->sb[i].pid, s->sb[i].start, s->sb[i].len,
					      s->sb[i].pgoff, s->sb[i].filename, NULL, 0);
		tc_images_free(prime);
		ret = decode_segments(s, f, e);
		s->pd = NULL;
		return ret;
	}
	/* Several queues whose records the lanes can format (see "--jobs" above); one queue
	 * has no other to decode beside it and decodes here (through a lane it cost twice
	 * the CPU of one thread on a 52 MB trace, as slow in wall time). */
	if (s->o.jobs > 1 && s->nq > 1 && s->o.writer && s->o.writer->usable(s->o.writer->ctx)) {
		/* The side-band once here first: the kernel's images (one object for every
		 * address space) take the recording's reference now, so that the workers'
		 * address spaces, given the same, only read it. */
		struct tc_images_opts io = { .symfs = s->o.symfs, .buildid_dir = s->o.buildid_dir,
					     .kernel = s->o.kernel };
		struct tc_images *prime = tc_images_new(&io);

		for (size_t i = 0; prime && i < s->nsb; i++)
			if (s->sb[i].type == PERF_RECORD_MMAP || s->sb[i].type == PERF_RECORD_MMAP2)
				tc_images_map(prime, s->sb[i].pid, s->sb[i].start, s->sb[i].len,
					      s->sb[i].pgoff, s->sb[i].filename, NULL, 0);
		tc_images_free(prime);
		/* this thread has only the lanes' bytes to write out: --jobs N threads decode
		 * and format (N workers) */
		s->lw = s->o.writer;
		if (!(s->par = tc_jobs_new(s->o.jobs + 1, s->nq, LANE_BUDGET)))
			return nomem(e);
		tc_jobs_no_help(s->par);	/* a task without time runs a whole buffer */
		ret = decode_par(s, f, e);
		if (!ret && tc_jobs_failed(s->par))
			ret = nomem(e);	/* an item lost */
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
				ret = nomem(e);
		}
		s->lw = NULL;
		s->gen++;
		return ret;
	}
	if (by_time(s))
		ret = decode_by_time(s, f, e);
	for (size_t i = 0; i < s->nq && !ret && !by_time(s); i++)
		ret = decode_in_turn(s, &s->q[i], f, e);
	for (size_t i = 0; i < s->nq; i++)
		if (s->q[i].d)
			close_queue(s, &s->q[i]);
	s->pd = NULL;
	return ret;
}

/* Queue i's address spaces. */
static struct tc_images *qim(const struct tc_pt_session *s, size_t i)
{
	return s->q[i].im;
}

int tc_pt_session_symbolize(void *ctx, int pid, uint64_t addr, struct tc_images_sym *sym)
{
	struct tc_pt_session *s = ctx;
	struct tc_images *im;

	if (s->cur && (pid < 0 || pid == s->cur->pid))
		return images(s->cur) ? tc_images_symbol(s->cur->im, s->cur->pid, addr, sym) : -1;
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
