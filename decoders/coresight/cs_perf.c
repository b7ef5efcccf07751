#include "decoders/coresight/cs_perf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/coresight/cs_branches.h"
#include "decoders/coresight/cs_meta.h"
#include "decoders/coresight/cs_session.h"
#include "lib/images/images.h"
#include "lib/util/diag.h"
#include "lib/util/grow.h"

struct buf {
	const uint8_t *data;	/* the reader's (u.auxtrace.kept), else our copy */
	uint64_t size, aux_off, file_off;
	int cpu;
	bool owned;
};

struct aux {
	int cpu;
	uint64_t off, size, file_off;
	bool raw;
};

struct tid_pid {
	int tid, pid;
};

struct cpu_thread {
	int pid, tid;			/* from ITRACE_START, -1 none */
};

/* Side-band that builds address spaces, kept to build a lane's own (tc_cs_perf_opts.jobs). */
struct sbop {
	uint32_t type;		/* PERF_RECORD_MMAP (MMAP2 alike), COMM (exec), FORK */
	int32_t pid, ppid;
	uint64_t start, len, pgoff;
	char *filename;
	uint8_t bid[20];
	size_t bid_len;
};

/* What the thread decoding one ID keeps with --jobs: the thread its trace runs in (as
 * id_state's, for memory reads) and address spaces of its own, so that no two threads
 * share one (lib/images is not thread-safe). Written per record by its thread: on cache
 * lines of its own (two threads writing one line pass it to and fro at every record). */
struct lane {
	_Alignas(64) int pid, tid;
	struct tc_images *im;	/* memory reads (the decoding side) */
	size_t nmissing;	/* of im's, passed on as notes */
	/* o.writer's (tc_cs_perf_decode chose it): the ID's records formatted here, on the
	 * decoding thread or (a trace ID decoded alone) the caller's, while the next batch
	 * decodes: what formatting uses is its own, on lines of its own */
	_Alignas(64) struct tc_cs_perf *s;
	struct tc_images *sym_im;	/* symbols: images of their own (lib/images is not
					 * thread-safe, and im may be in use meanwhile) */
	size_t nsym_missing;	/* of sym_im's, passed on as notes */
	bool sym_used;		/* sym_im was used since its missing images were looked at
				 * (only its calls find images missing: not per record) */
	void *w;		/* the lane's writer, opened on its first record */
	/* s->writer's write, kept here: s's lines are written by the caller's thread */
	void (*write)(void *w, const struct tc_rec *r);
	bool failed;		/* it could not be opened: records lost (out of memory) */
	int cur_pid;		/* of the record being written, for lane_sym */
	uint64_t space;		/* the lane's images never change while records are made */
	struct tc_cs_perf_stats st;	/* its records' counts, added to s->st at the end */
};

/* What the trace of one ID says about its thread, and its branch state (with --jobs
 * written by the thread decoding the ID: on cache lines of its own). */
struct id_state {
	_Alignas(64) int pid, tid;
	struct tc_cs_branches csb;
};

struct tc_cs_perf {
	struct tc_cs_perf_opts o;
	bool is_cs;
	struct tc_cs_meta meta;
	bool have_meta;
	struct tc_images *im;
	struct buf *bufs;
	size_t nbufs, cbufs;
	struct aux *auxs;
	size_t nauxs, cauxs;
	struct tid_pid *tids;
	size_t ntids, ctids;
	struct cpu_thread *cpus;
	size_t ncpus;
	struct id_state ids[TC_CS_MAX_IDS];
	struct tc_cs_session *framed;		/* shared sink buffers */
	struct tc_cs_session **raw;		/* per CPU, for unformatted (TRBE) buffers */
	size_t nraw;
	int cur_pid;			/* of the record being emitted, for the symboliser */
	const struct tc_perf_data *pd;	/* while decoding: the input, to let go of trace */
	struct tc_perf_data_behind behind;	/* the block being decoded, let go behind */
	/* --jobs: IDs decoded in parallel; the images needed but not found, in the order
	 * one thread would have noted them (its own reads and lookups, and the lanes') */
	struct tc_cs_session_par *par;
	const struct tc_jobs_writer *writer;	/* o.writer when usable: records made on lanes */
	bool writer_failed;
	struct sbop *sbops;
	size_t nsbops, csbops;
	struct lane lanes[TC_CS_MAX_IDS];
	const struct tc_perf_data_features *f;
	char **missing;
	size_t nmissing, cmissing, im_missing_seen;
	struct tc_cs_perf_stats st;
	struct tc_diag notes;
};

static int nomem(struct tc_err *e)
{
	return tc_err_set(e, ENOMEM, "out of memory");
}

struct tc_cs_perf *tc_cs_perf_new(const struct tc_cs_perf_opts *o, struct tc_err *e)
{
	/* aligned as its lanes and ids are (calloc's memory is less) */
	struct tc_cs_perf *s = aligned_alloc(_Alignof(struct tc_cs_perf),
					     sizeof(struct tc_cs_perf));
	struct tc_images_opts io = { .symfs = o->symfs, .buildid_dir = o->buildid_dir,
				     .kernel = o->kernel };

	if (s)
		memset(s, 0, sizeof(*s));
	if (!s || !(s->im = tc_images_new(&io))) {
		free(s);
		nomem(e);
		return NULL;
	}
	s->o = *o;
	for (size_t i = 0; i < TC_CS_MAX_IDS; i++) {
		s->lanes[i].pid = s->lanes[i].tid = -1;
		s->ids[i].pid = s->ids[i].tid = -1;
		tc_csb_init(&s->ids[i].csb);
	}
	return s;
}

void tc_cs_perf_free(struct tc_cs_perf *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nbufs; i++)
		if (s->bufs[i].owned)
			free((void *)s->bufs[i].data);
	free(s->bufs);
	free(s->auxs);
	free(s->tids);
	free(s->cpus);
	tc_cs_session_par_free(s->par);	/* first: its threads use the sessions */
	tc_cs_session_free(s->framed);
	for (size_t i = 0; i < s->nraw; i++)
		tc_cs_session_free(s->raw[i]);
	free(s->raw);
	for (size_t i = 0; i < s->nsbops; i++)
		free(s->sbops[i].filename);
	free(s->sbops);
	for (size_t i = 0; i < TC_CS_MAX_IDS; i++) {
		if (s->lanes[i].w)
			s->writer->close(s->lanes[i].w);
		tc_images_free(s->lanes[i].im);
		tc_images_free(s->lanes[i].sym_im);
	}
	for (size_t i = 0; i < s->nmissing; i++)
		free(s->missing[i]);
	free(s->missing);
	if (s->have_meta)
		tc_cs_meta_free(&s->meta);
	tc_images_free(s->im);
	tc_diag_free(&s->notes);
	free(s);
}

bool tc_cs_perf_is_cs_etm(const struct tc_cs_perf *s)
{
	return s->is_cs;
}

const struct tc_cs_perf_stats *tc_cs_perf_stats(const struct tc_cs_perf *s)
{
	return &s->st;
}

static int set_tid(struct tc_cs_perf *s, int pid, int tid, struct tc_err *e)
{
	for (size_t i = 0; i < s->ntids; i++)
		if (s->tids[i].tid == tid) {
			s->tids[i].pid = pid;
			return 0;
		}
	if (tc_grow((void **)&s->tids, &s->ctids, s->ntids + 1, sizeof(*s->tids)))
		return nomem(e);
	s->tids[s->ntids++] = (struct tid_pid){ tid, pid };
	return 0;
}

static int pid_of(const struct tc_cs_perf *s, int tid)
{
	for (size_t i = 0; i < s->ntids; i++)
		if (s->tids[i].tid == tid)
			return s->tids[i].pid;
	return tid;	/* a thread we saw no COMM for: perf assumes a process leader too */
}

static int set_cpu_thread(struct tc_cs_perf *s, uint32_t cpu, int pid, int tid, struct tc_err *e)
{
	if (cpu >= 4096)
		return 0;	/* no machine has that many; ignore rather than allocate */
	if (cpu >= s->ncpus) {
		struct cpu_thread *c = realloc(s->cpus, (cpu + 1) * sizeof(*c));

		if (!c)
			return nomem(e);
		for (size_t i = s->ncpus; i <= cpu; i++)
			c[i] = (struct cpu_thread){ -1, -1 };
		s->cpus = c;
		s->ncpus = cpu + 1;
	}
	s->cpus[cpu] = (struct cpu_thread){ pid, tid };
	return 0;
}

static int add_buffer(struct tc_cs_perf *s, const struct tc_perf_data_record *r, struct tc_err *e)
{
	struct buf *b;

	if (tc_grow((void **)&s->bufs, &s->cbufs, s->nbufs + 1, sizeof(*s->bufs)))
		return nomem(e);
	b = &s->bufs[s->nbufs];
	*b = (struct buf){ .size = r->u.auxtrace.size, .aux_off = r->u.auxtrace.offset,
			   .file_off = r->offset + r->size, .cpu = (int)r->u.auxtrace.cpu };
	/* the reader's pointer lives until the next record unless kept: else a copy */
	if (r->u.auxtrace.kept) {
		b->data = r->u.auxtrace.data;
	} else if (b->size) {
		uint8_t *copy = malloc((size_t)b->size);

		if (!copy)
			return nomem(e);
		memcpy(copy, r->u.auxtrace.data, (size_t)b->size);
		b->data = copy;
		b->owned = true;
	}
	s->nbufs++;
	s->st.buffers++;
	s->st.bytes += b->size;
	return 0;
}

static int add_sbop(struct tc_cs_perf *s, const struct sbop *op, struct tc_err *e)
{
	struct sbop *b;

	if (s->o.jobs <= 1)
		return 0;
	if (tc_grow((void **)&s->sbops, &s->csbops, s->nsbops + 1, sizeof(*s->sbops)))
		return nomem(e);
	b = &s->sbops[s->nsbops];
	*b = *op;
	if (op->filename && !(b->filename = strdup(op->filename)))
		return nomem(e);
	s->nsbops++;
	return 0;
}

int tc_cs_perf_record(struct tc_cs_perf *s, const struct tc_perf_data_record *r, struct tc_err *e)
{
	int pid;

	switch (r->type) {
	case TC_PERF_DATA_AUXTRACE_INFO:
		if (r->u.auxtrace_info.type != TC_AUXTRACE_CS_ETM)
			return 0;
		if (!r->u.auxtrace_info.cs_etm)
			return tc_err_set(e, 0, "CS_ETM AUXTRACE_INFO at offset 0x%" PRIx64
					  " could not be parsed", r->offset);
		if (s->have_meta)
			tc_cs_meta_free(&s->meta);
		if (tc_cs_meta_init(&s->meta, r->u.auxtrace_info.cs_etm, e)) {
			s->have_meta = false;
			return -1;
		}
		s->have_meta = s->is_cs = true;
		return 0;
	case TC_PERF_DATA_AUXTRACE:
		return s->is_cs ? add_buffer(s, r, e) : 0;
	case PERF_RECORD_AUX:
		if (tc_grow((void **)&s->auxs, &s->cauxs, s->nauxs + 1, sizeof(*s->auxs)))
			return nomem(e);
		s->auxs[s->nauxs++] = (struct aux){
			.cpu = r->sid.has_cpu ? (int)r->sid.cpu : -1, .off = r->u.aux.aux_offset,
			.size = r->u.aux.aux_size, .file_off = r->offset,
			.raw = r->u.aux.format == 1 };
		return 0;
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		if (s->have_meta && r->sid.has_cpu &&
		    tc_cs_meta_set_id(&s->meta, r->sid.cpu,
				      (uint8_t)TC_CS_HW_ID_TRACE_ID(r->u.hw_id.hw_id)))
			tc_diag_add(&s->notes, "AUX_OUTPUT_HW_ID at offset 0x%" PRIx64
				    " names cpu %u, which the CS_ETM metadata does not describe",
				    r->offset, r->sid.cpu);
		return 0;
	case PERF_RECORD_ITRACE_START:
		if (!r->sid.has_cpu)
			return 0;
		return set_cpu_thread(s, r->sid.cpu, (int)r->u.itrace_start.pid,
				      (int)r->u.itrace_start.tid, e);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		pid = (int)r->u.mmap.pid;
		tc_images_map(s->im, pid, r->u.mmap.start, r->u.mmap.len, r->u.mmap.pgoff,
			      r->u.mmap.filename,
			      r->u.mmap.has_build_id ? r->u.mmap.build_id : NULL,
			      r->u.mmap.has_build_id ? r->u.mmap.build_id_size : 0);
		{
			struct sbop op = { .type = PERF_RECORD_MMAP, .pid = pid,
					   .start = r->u.mmap.start, .len = r->u.mmap.len,
					   .pgoff = r->u.mmap.pgoff,
					   .filename = (char *)r->u.mmap.filename };

			if (r->u.mmap.has_build_id && r->u.mmap.build_id_size <= 20) {
				op.bid_len = r->u.mmap.build_id_size;
				memcpy(op.bid, r->u.mmap.build_id, op.bid_len);
			}
			return add_sbop(s, &op, e);
		}
	case PERF_RECORD_COMM:
		if (r->u.comm.exec) {
			tc_images_exec(s->im, (int)r->u.comm.pid);
			if (add_sbop(s, &(struct sbop){ .type = PERF_RECORD_COMM,
							 .pid = (int32_t)r->u.comm.pid }, e))
				return -1;
		}
		return set_tid(s, (int)r->u.comm.pid, (int)r->u.comm.tid, e);
	case PERF_RECORD_FORK:
		if (r->u.fork.pid != r->u.fork.ppid) {
			tc_images_fork(s->im, (int)r->u.fork.ppid, (int)r->u.fork.pid);
			if (add_sbop(s, &(struct sbop){ .type = PERF_RECORD_FORK,
							 .pid = (int32_t)r->u.fork.pid,
							 .ppid = (int32_t)r->u.fork.ppid }, e))
				return -1;
		}
		return set_tid(s, (int)r->u.fork.pid, (int)r->u.fork.tid, e);
	}
	return 0;
}

/* The thread an ID's trace runs in: its last context ID, else its CPU's ITRACE_START. */
static void thread_of(const struct tc_cs_perf *s, int id, int cpu, int *pid, int *tid)
{
	const struct id_state *st = &s->ids[id & (TC_CS_MAX_IDS - 1)];

	if (st->tid >= 0) {
		*pid = st->pid;
		*tid = st->tid;
	} else if (cpu >= 0 && (size_t)cpu < s->ncpus) {
		*pid = s->cpus[cpu].pid;
		*tid = s->cpus[cpu].tid;
	} else {
		*pid = *tid = -1;
	}
}

/* Address spaces of a lane's own: the side-band replayed into *im, as s->im has it (NULL:
 * no memory). */
static struct tc_images *replay_images(struct tc_cs_perf *s, struct tc_images **im)
{
	struct tc_images_opts io = { .symfs = s->o.symfs, .buildid_dir = s->o.buildid_dir,
				     .kernel = s->o.kernel };

	if (*im || !(*im = tc_images_new(&io)))
		return *im;
	for (size_t i = 0; i < s->nsbops; i++) {
		const struct sbop *b = &s->sbops[i];

		if (b->type == PERF_RECORD_MMAP)
			tc_images_map(*im, b->pid, b->start, b->len, b->pgoff, b->filename,
				      b->bid_len ? b->bid : NULL, b->bid_len);
		else if (b->type == PERF_RECORD_COMM)
			tc_images_exec(*im, b->pid);
		else
			tc_images_fork(*im, b->ppid, b->pid);
	}
	/* after the mappings, as s->im had them (tc_cs_perf_decode): a mapping made once the
	 * build-id table is known takes its build ID, and an image found missing then says
	 * so (with --jobs the missing-image lines differed from one thread's) */
	if (s->f)
		tc_images_add_build_ids(*im, s->f->build_ids, s->f->nr_build_ids);
	return *im;
}

/* The decoding side's (memory reads). */
static struct tc_images *lane_images(struct tc_cs_perf *s, struct lane *l)
{
	return replay_images(s, &l->im);
}

/* mem_cb with --jobs, in the thread decoding the ID: its lane's thread and images; an
 * image found missing goes back as a note, in order. */
static size_t lane_mem(struct tc_cs_perf *s, const struct tc_etm_mem_ctx *m, uint64_t addr,
		       uint8_t *buf, size_t len)
{
	struct lane *l = &s->lanes[m->trace_id & (TC_CS_MAX_IDS - 1)];
	struct tc_images *im = lane_images(s, l);
	const char *const *miss;
	int pid, tid;
	size_t n;

	if (m->context_id > 0) {
		tid = (int)m->context_id;
		pid = pid_of(s, tid);
	} else if (l->tid >= 0) {
		pid = l->pid;
		tid = l->tid;
	} else if (m->cpu >= 0 && (size_t)m->cpu < s->ncpus) {
		pid = s->cpus[m->cpu].pid;
		tid = s->cpus[m->cpu].tid;
	} else {
		pid = tid = -1;
	}
	(void)tid;
	if (!im)
		return 0;
	n = tc_images_read(im, pid, addr, buf, len);
	if (tc_images_missing(im, &miss) > l->nmissing)
		for (; l->nmissing < tc_images_missing(im, &miss); l->nmissing++)
			tc_cs_session_par_note(miss[l->nmissing]);
	return n;
}

/* With --jobs, the thread decoding r's ID follows its thread as emit_cb does (r a context
 * record). */
static void lane_rec(void *ctx, const struct tc_rec *r)
{
	struct tc_cs_perf *s = ctx;
	struct lane *l = &s->lanes[r->id & (TC_CS_MAX_IDS - 1)];

	if (s->o.want_id && !s->o.want_id[r->id & (TC_CS_MAX_IDS - 1)])
		return;
	if (r->type == TC_REC_CONTEXT && r->value) {
		l->tid = (int)r->value;
		l->pid = pid_of(s, l->tid);
	}
}

/* The images found missing, in one thread's order: s->im's since last time, then text. */
static void sync_missing(struct tc_cs_perf *s, const char *text)
{
	const char *const *miss;
	size_t n = tc_images_missing(s->im, &miss);

	for (size_t i = 0; i < n - s->im_missing_seen + (text != NULL); i++) {
		const char *line = s->im_missing_seen + i < n ? miss[s->im_missing_seen + i] : text;
		bool have = false;

		for (size_t k = 0; k < s->nmissing && !have; k++)
			have = !strcmp(s->missing[k], line);
		if (have || tc_grow((void **)&s->missing, &s->cmissing, s->nmissing + 1,
				    sizeof(*s->missing)))
			continue;
		if ((s->missing[s->nmissing] = strdup(line)))
			s->nmissing++;
	}
	s->im_missing_seen = n;
}

static void note_cb(void *ctx, const char *text)
{
	sync_missing(ctx, text);
}

static size_t mem_cb(void *ctx, const struct tc_etm_mem_ctx *m, uint64_t addr, uint8_t *buf,
		     size_t len)
{
	struct tc_cs_perf *s = ctx;
	int pid, tid;

	if (s->par)
		return lane_mem(s, m, addr, buf, len);

	if (m->context_id > 0) {
		tid = (int)m->context_id;
		pid = pid_of(s, tid);
	} else {
		thread_of(s, m->trace_id, m->cpu, &pid, &tid);
	}
	return tc_images_read(s->im, pid, addr, buf, len);
}

static void out(struct tc_cs_perf *s, const struct tc_rec *r)
{
	s->cur_pid = r->pid;
	s->o.emit(s->o.ctx, r);
	/* per record: the call only when an image went missing (it does nothing else; the
	 * call itself was a twentieth of report -j's caller thread with --jobs 2) */
	if (s->par) {
		const char *const *miss;

		if (tc_images_missing(s->im, &miss) != s->im_missing_seen)
			sync_missing(s, NULL);
	}
}

/* A record made on a lane (o.writer): written there; images its symbols found missing go
 * back as notes, in order. */
static void lane_out(struct lane *l, const struct tc_rec *r)
{
	const char *const *miss;

	l->cur_pid = r->pid;
	l->write(l->w, r);
	if (!l->sym_used)
		return;
	l->sym_used = false;
	if (l->sym_im && tc_images_missing(l->sym_im, &miss) > l->nsym_missing)
		for (; l->nsym_missing < tc_images_missing(l->sym_im, &miss); l->nsym_missing++)
			tc_cs_session_par_note(miss[l->nsym_missing]);
}

/* Where a decoder's record goes after emit_cb's work: the caller's thread (l NULL) or the
 * lane's writer. */
struct sink {
	struct tc_cs_perf *s;
	struct tc_cs_perf_stats *st;
	struct lane *l;
};

static inline void sink_out(struct sink *k, const struct tc_rec *r)
{
	if (k->l)
		lane_out(k->l, r);
	else
		out(k->s, r);
}

static void out_branch(void *ctx, const struct tc_rec *r)
{
	struct sink *k = ctx;

	k->st->branches++;
	sink_out(k, r);
}

/* A decoder's record: counted, its thread set, turned into branches (--branches). */
static inline __attribute__((always_inline)) void convert(struct sink *k,
							  const struct tc_rec *in)
{
	struct tc_cs_perf *s = k->s;
	unsigned id = (unsigned)in->id & (TC_CS_MAX_IDS - 1);
	struct id_state *st = &s->ids[id];
	enum tc_rec_type type = in->type;
	int pid, tid;

	if (s->o.want_id && !s->o.want_id[id])
		return;
	/* every CPU has a decoder; those whose ETM wrote nothing need not say so (EOT comes
	 * at the end, once every byte was counted: the same answer on a lane) */
	if (type == TC_REC_EOT && s->framed && !tc_cs_session_id_bytes(s->framed, (uint8_t)in->id))
		return;
	if (type == TC_REC_CONTEXT && in->value) {
		st->tid = (int)in->value;
		st->pid = pid_of(s, st->tid);
	}
	thread_of(s, in->id, in->cpu, &pid, &tid);
	switch (type) {
	case TC_REC_PACKET:
		k->st->packets++;
		break;
	case TC_REC_RANGE:
		k->st->ranges++;
		k->st->insns += in->insns;
		break;
	case TC_REC_ERROR:
		k->st->errors++;
		break;
	case TC_REC_ADDR_NACC:
		k->st->nomap++;
		break;
	default:
		break;
	}
	if (s->o.branches) {
		tc_cs_branches_feed_as(&st->csb, in, pid, tid, out_branch, k);
		if (type != TC_REC_ERROR && type != TC_REC_ADDR_NACC && type != TC_REC_LOST)
			return;
	}
	/* the record as it came, in this thread (copied only here: most records of a
	 * --branches run end above) */
	struct tc_rec r = *in;

	r.pid = pid;
	r.tid = tid;
	sink_out(k, &r);
}

static void emit_cb(void *ctx, const struct tc_rec *in)
{
	struct tc_cs_perf *s = ctx;
	struct sink k = { s, &s->st, NULL };

	tc_perf_data_behind(s->pd, &s->behind, in->offset);
	convert(&k, in);
}

/* The lane's symbols: its own address spaces, as tc_cs_perf_symbolize's. */
static int lane_sym(void *ctx, int pid, uint64_t addr, struct tc_images_sym *sym)
{
	struct lane *l = ctx;
	struct tc_images *im = replay_images(l->s, &l->sym_im);

	l->sym_used = true;
	return im ? tc_images_symbol(im, pid >= 0 ? pid : l->cur_pid, addr, sym) : -1;
}

/* o.writer: r of a lane, in its thread, as emit_cb would have it, then written there. */
static void lane_fmt(void *ctx, const struct tc_rec *in)
{
	struct tc_cs_perf *s = ctx;
	struct lane *l = &s->lanes[in->id & (TC_CS_MAX_IDS - 1)];
	struct sink k = { s, &l->st, l };

	if (!l->w) {
		if (l->failed)
			return;
		l->s = s;
		replay_images(s, &l->sym_im);
		l->sym_used = true;
		l->write = s->writer->write;
		if (!(l->w = s->writer->open(s->writer->ctx, lane_sym, l, &l->space))) {
			l->failed = true;
			return;
		}
	}
	convert(&k, in);
}

static size_t lane_take(void *ctx, uint8_t id, const char **bytes, void **block)
{
	struct tc_cs_perf *s = ctx;
	struct lane *l = &s->lanes[id & (TC_CS_MAX_IDS - 1)];

	*bytes = NULL;
	*block = NULL;
	return l->w ? s->writer->take(l->w, bytes, block) : 0;
}

/* A lane's bytes, in the caller's thread, in order. */
static void lane_put(void *ctx, const char *bytes, size_t n, uint64_t offset, void *block)
{
	struct tc_cs_perf *s = ctx;

	tc_perf_data_behind(s->pd, &s->behind, offset);
	s->writer->put(s->writer->ctx, bytes, n, offset, block);
}

/* After the last record: the lanes' counts join s->st, their writers go. */
static void lanes_done(struct tc_cs_perf *s)
{
	for (size_t i = 0; i < TC_CS_MAX_IDS; i++) {
		struct lane *l = &s->lanes[i];

		s->st.packets += l->st.packets;
		s->st.ranges += l->st.ranges;
		s->st.insns += l->st.insns;
		s->st.errors += l->st.errors;
		s->st.nomap += l->st.nomap;
		s->st.branches += l->st.branches;
		s->writer_failed |= l->failed;
		memset(&l->st, 0, sizeof(l->st));
		if (l->w)
			s->writer->close(l->w);
		l->w = NULL;
	}
}

static struct tc_cs_session *new_session(struct tc_cs_perf *s, int only_cpu, struct tc_err *e)
{
	unsigned what = (s->o.packets ? TC_ETM_PACKETS : TC_ETM_ELEMENTS) | (s->o.reference ? TC_ETM_REFERENCE : 0);
	struct tc_cs_session *css = tc_cs_session_new(what, emit_cb, mem_cb, s, e);

	if (!css)
		return NULL;
	if (s->par)
		tc_cs_session_use_par(css, s->par);
	for (size_t i = 0; i < s->meta.ncfgs; i++) {
		const struct tc_etm_cfg *c = &s->meta.cfgs[i];

		if (only_cpu >= 0 && c->cpu != only_cpu)
			continue;
		if (tc_cs_meta_cfg(&s->meta, c->trace_id) != c)
			continue;	/* an ID never assigned (v2) or given to another CPU */
		if (tc_cs_session_add_source(css, c, e)) {
			tc_cs_session_free(css);
			return NULL;
		}
	}
	return css;
}

static bool meta_has_cpu(const struct tc_cs_perf *s, int cpu)
{
	for (size_t i = 0; i < s->meta.ncfgs; i++)
		if (s->meta.cfgs[i].cpu == (cpu < 0 ? 0 : cpu))
			return true;
	return false;
}

static struct tc_cs_session *raw_session(struct tc_cs_perf *s, int cpu, struct tc_err *e)
{
	if (cpu < 0)
		cpu = 0;
	if ((size_t)cpu >= s->nraw) {
		struct tc_cs_session **v = realloc(s->raw, (cpu + 1) * sizeof(*v));

		if (!v)
			return nomem(e), NULL;
		memset(v + s->nraw, 0, (cpu + 1 - s->nraw) * sizeof(*v));
		s->raw = v;
		s->nraw = (size_t)cpu + 1;
	}
	if (!s->raw[cpu])
		s->raw[cpu] = new_session(s, cpu, e);
	return s->raw[cpu];
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool holds(const struct buf *b, const struct aux *a)
{
	return (a->cpu < 0 || b->cpu < 0 || a->cpu == b->cpu) && a->off >= b->aux_off &&
	       a->off - b->aux_off < b->size;
}

/* An AUX record no buffer holds (a corrupt aux_offset) loses its block boundary: say so. */
static void stray_auxs(struct tc_cs_perf *s)
{
	const struct aux *first = NULL;
	size_t n = 0;

	if (!s->nbufs)
		return;		/* no trace at all is noted on its own */
	for (size_t i = 0; i < s->nauxs; i++) {
		bool held = false;

		if (!s->auxs[i].size)
			continue;
		for (size_t k = 0; k < s->nbufs && !held; k++)
			held = holds(&s->bufs[k], &s->auxs[i]);
		if (!held && !n++)
			first = &s->auxs[i];
	}
	if (n)
		tc_diag_add(&s->notes, "%zu AUX record%s (the first at offset 0x%" PRIx64
			    ", AUX offset 0x%" PRIx64 ") lie%s in no AUXTRACE buffer: %s trace "
			    "block boundar%s not known", n, n > 1 ? "s" : "", first->file_off,
			    first->off, n > 1 ? "" : "s", n > 1 ? "their" : "its",
			    n > 1 ? "ies are" : "y is");
}

/* Decode one AUXTRACE buffer, cut where the kernel's AUX blocks begin: perf decodes each
 * block on its own, since the sink may have wrapped or been refilled in between. */
static int decode_buf(struct tc_cs_perf *s, const struct buf *b, struct tc_err *e)
{
	uint64_t *cuts = NULL, start = 0;
	size_t ncuts = 0;
	bool raw = false;
	struct tc_cs_session *css;

	for (size_t i = 0; i < s->nauxs; i++) {
		const struct aux *a = &s->auxs[i];

		if (!holds(b, a))
			continue;
		raw |= a->raw;
		if (a->off == b->aux_off)
			continue;
		uint64_t *c = realloc(cuts, (ncuts + 1) * sizeof(*c));

		if (!c)
			return free(cuts), nomem(e);
		cuts = c;
		cuts[ncuts++] = a->off - b->aux_off;
	}
	if (ncuts)	/* qsort(NULL, 0) is undefined (UBSan) */
		qsort(cuts, ncuts, sizeof(*cuts), cmp_u64);
	if (raw && !meta_has_cpu(s, b->cpu)) {
		/* a session per CPU: only for the CPUs the metadata declares */
		tc_diag_add(&s->notes, "AUXTRACE buffer at offset 0x%" PRIx64 " is on cpu %d, "
			    "which the CS_ETM metadata does not describe: not decoded",
			    b->file_off, b->cpu);
		free(cuts);
		return 0;
	}
	css = raw ? raw_session(s, b->cpu, e) : s->framed;
	if (!css) {
		free(cuts);
		return -1;
	}
	for (size_t i = 0; i <= ncuts; i++) {
		uint64_t end = i < ncuts ? cuts[i] : b->size;

		if (end <= start)
			continue;
		tc_cs_session_reset(css, b->file_off + start);
		s->behind.from = b->file_off + start;
		tc_cs_session_feed(css, b->data + start, (size_t)(end - start), b->file_off + start,
			    raw ? TC_CS_SESSION_RAW : TC_CS_SESSION_FRAMED);
		tc_perf_data_release(s->pd, b->file_off + start, end - start);
		s->st.blocks++;
		start = end;
	}
	free(cuts);
	return 0;
}

int tc_cs_perf_decode(struct tc_cs_perf *s, const struct tc_perf_data *pd, struct tc_err *e)
{
	const struct tc_perf_data_features *f = tc_perf_data_features(pd);

	if (!s->have_meta)
		return 0;
	s->pd = pd;
	tc_images_add_build_ids(s->im, f->build_ids, f->nr_build_ids);
	s->f = f;
	if (s->o.jobs > 1 &&
	    !(s->par = tc_cs_session_par_new(s->o.jobs, emit_cb, lane_rec, note_cb, s)))
		return nomem(e);
	if (s->par && s->o.writer && s->o.writer->usable(s->o.writer->ctx)) {
		s->writer = s->o.writer;
		tc_cs_session_par_format(s->par, lane_fmt, lane_take, lane_put);
	}
	if (!(s->framed = new_session(s, -1, e)))
		return -1;
	for (size_t i = 0; i < s->nbufs; i++)
		if (decode_buf(s, &s->bufs[i], e))
			return -1;
	stray_auxs(s);
	tc_cs_session_flush(s->framed);
	for (size_t i = 0; i < s->nraw; i++)
		if (s->raw[i])
			tc_cs_session_flush(s->raw[i]);
	if (tc_cs_session_par_drain(s->par))
		return nomem(e);
	if (s->writer) {
		lanes_done(s);
		if (s->writer_failed)
			return nomem(e);
	}
	for (unsigned id = 0; id < TC_CS_MAX_IDS; id++) {
		uint64_t n = tc_cs_session_id_bytes(s->framed, (uint8_t)id);

		if (n && !tc_cs_session_stats(s->framed, (uint8_t)id) && id != 0) {
			s->st.unknown_id_bytes += n;
			tc_diag_add(&s->notes,
				    "%" PRIu64 " bytes of trace ID 0x%02x, which no CPU in "
				    "the CS_ETM metadata uses: not decoded",
				    n, id);
		}
	}
	if (tc_cs_session_demux_stats(s->framed)) {
		s->st.demux_errors = tc_cs_session_demux_stats(s->framed)->errors;
		tc_cs_session_demux_diag(s->framed, &s->notes);
	}
	tc_cs_session_guard_diag(s->framed, &s->notes);
	for (size_t i = 0; i < s->nraw; i++)
		if (s->raw[i])
			tc_cs_session_guard_diag(s->raw[i], &s->notes);
	s->pd = NULL;
	return 0;
}

void tc_cs_perf_diag(const struct tc_cs_perf *s, struct tc_diag *diag)
{
	const char *const *miss;
	size_t n = tc_images_missing(s->im, &miss);

	if (s->par) {
		sync_missing((struct tc_cs_perf *)s, NULL);
		miss = (const char *const *)s->missing;
		n = s->nmissing;
	}
	for (size_t i = 0; i < s->notes.n; i++)
		tc_diag_add(diag, "%s", s->notes.msgs[i].text);
	if (s->o.packets)
		return;	/* packets need no code: a missing image only stops element decode */
	for (size_t i = 0; i < n; i++)
		tc_diag_add(diag, "image not found: %s (use --symfs DIR)", miss[i]);
}

int tc_cs_perf_symbolize(void *ctx, int pid, uint64_t addr, struct tc_images_sym *sym)
{
	struct tc_cs_perf *s = ctx;

	return tc_images_symbol(s->im, pid >= 0 ? pid : s->cur_pid, addr, sym);
}

struct tc_images *tc_cs_perf_images(struct tc_cs_perf *s)
{
	return s->im;
}
