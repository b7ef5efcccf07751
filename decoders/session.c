/* The decode session: snapshot directory or perf.data, through the decoder the file's
 * AUXTRACE_INFO names, plus the account of AUX data every perf.data gets: trace announced
 * but missing, truncated, lost.
 *
 * Side-band (MMAP/MMAP2, COMM, FORK) is read here once, in file order, and handed to the
 * decoder record by record, as it came: when it is applied is the decoder's, and its
 * output depends on that (one address space built before decoding, or one per queue that
 * follows the trace's time; see decoders/decoder.h). What the session itself keeps from
 * it is the thread names, for the analyses. */
#include "decoders/session.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decoders/coresight/cs_snapshot.h"
#include "decoders/decoders.h"
#include "decoders/events.h"
#include "lib/images/buildid_cache.h"
#include "lib/perfdata/perf_data.h"
#include "lib/perfdata/snapshot.h"
#include "lib/util/diag.h"
#include "lib/util/grow.h"

/* A thread's name from a time on (COMM, or the parent's at FORK), in file order. */
struct comm {
	int tid;
	int ptid;		/* FORK: the parent, whose name at time this is; else -1 */
	uint64_t time;		/* perf time, 0 where the record has none */
	uint64_t offset;	/* of the COMM or FORK: at equal times file order decides */
	char *name;		/* NULL for a FORK */
};

/* A format's decoder: every format's until the file's AUXTRACE_INFO picks one. */
struct cand {
	const struct tc_decoder_ops *ops;
	void *dec;
};

struct tc_session {
	struct tc_session_opts o;
	void (*emit)(void *ctx, const struct tc_rec *r);
	void *ctx;
	char *buildid_dir;
	struct tc_kernel *kernel;	/* the decoders' kernel images */
	char *dir_data, *dir_kcore;	/* a perf.data directory's data and kcore_dir */
	struct cand *cands;
	size_t ncands;
	struct cand *dec;		/* the one picked, or NULL */
	struct tc_events *ev;		/* tracepoint samples */
	struct tc_perf_data *pd;	/* the input, while it is read */
	const struct tc_session_progress *p;
	unsigned at_calls;		/* p->at hears of every 256th record */
	bool ev_wait;			/* tracepoint samples wait (tc_events_waiting) */
	bool nomem;			/* the events ran out of memory while emitting */
	struct comm *comms;
	size_t ncomms, ccomms;
	struct tc_jobs_writer writer;	/* o.writer's, with progress and the events' check */
	/* what the file holds */
	uint32_t aux_type;		/* the last AUXTRACE_INFO's type, 0 none */
	uint64_t aux_recs, aux_bytes, aux_truncated, aux_partial, aux_collision, aux_empty;
	uint64_t auxtrace_recs, auxtrace_bytes, lost_recs, lost_events;
	uint64_t lost_samples_recs, lost_samples;	/* the kernel's counts (perf record's) */
	uint64_t first_aux_offset;
	uint64_t compressed_recs, first_compressed;	/* perf record -z: zstd, not read */
};

static const struct tc_session_progress no_progress;

struct tc_session *tc_session_new(const struct tc_session_opts *o,
				  void (*emit)(void *ctx, const struct tc_rec *r), void *ctx)
{
	struct tc_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->o = *o;
	s->emit = emit;
	s->ctx = ctx;
	s->p = &no_progress;
	return s;
}

static void free_cands(struct tc_session *s, const struct cand *keep)
{
	for (size_t i = 0; i < s->ncands; i++)
		if (&s->cands[i] != keep && s->cands[i].dec) {
			s->cands[i].ops->free(s->cands[i].dec);
			s->cands[i].dec = NULL;
		}
}

void tc_session_free(struct tc_session *s)
{
	if (!s)
		return;
	free_cands(s, NULL);
	free(s->cands);
	tc_kernel_free(s->kernel);
	free(s->dir_data);
	free(s->dir_kcore);
	tc_events_free(s->ev);
	for (size_t i = 0; i < s->ncomms; i++)
		free(s->comms[i].name);
	free(s->comms);
	free(s->buildid_dir);
	free(s);
}

int tc_session_symbolize(void *ctx, int pid, uint64_t addr, struct tc_images_sym *sym)
{
	struct tc_session *s = ctx;

	return s->dec ? s->dec->ops->symbolize(s->dec->dec, pid, addr, sym) : -1;
}

int tc_session_sym(void *ctx, int pid, uint64_t addr, const char **name, uint64_t *start)
{
	struct tc_session *s = ctx;

	return s->dec ? s->dec->ops->sym(s->dec->dec, pid, addr, name, start) : -1;
}

const char *tc_session_dso(void *ctx, int pid, uint64_t addr)
{
	struct tc_session *s = ctx;

	return s->dec ? s->dec->ops->dso(s->dec->dec, pid, addr) : NULL;
}

const uint64_t *tc_session_space(void *ctx)
{
	struct tc_session *s = ctx;

	return s->dec && s->dec->ops->space ? s->dec->ops->space(s->dec->dec) : NULL;
}

/* The address spaces that map addr, from the decoder at work. */
static struct tc_images *images_at(struct tc_session *s, int pid, uint64_t addr)
{
	return s->dec ? s->dec->ops->images_at(s->dec->dec, pid, addr) : NULL;
}

int tc_session_file(void *ctx, int pid, uint64_t addr, struct tc_images_file *f)
{
	struct tc_images *im = images_at(ctx, pid, addr);

	return im ? tc_images_file(im, pid, addr, f) : -1;
}

size_t tc_session_read(void *ctx, int pid, uint64_t addr, void *buf, size_t len)
{
	struct tc_images *im = images_at(ctx, pid, addr);

	return im ? tc_images_read(im, pid, addr, buf, len) : 0;
}

/* tid's name at time: the one from the latest time at or before it (records in the file
 * need not be in time order; at the same time, one that comes before offset in the file, as
 * perf orders them), else its earliest; the latest of all where !timed. A FORK's name is
 * the parent's at the fork, looked up now: the parent's COMM may come later in the file
 * (each CPU's ring is written in turn). depth bounds chains of forks (hostile files). */
static const char *comm_of(const struct tc_session *s, int tid, bool timed, uint64_t time,
			   uint64_t offset, int depth)
{
	const struct comm *first = NULL, *best = NULL;

	for (size_t i = 0; tid >= 0 && i < s->ncomms; i++) {
		const struct comm *c = &s->comms[i];

		if (c->tid != tid)
			continue;
		if (!first || c->time < first->time)
			first = c;
		if ((!timed || c->time < time || (c->time == time && c->offset < offset)) &&
		    (!best || c->time >= best->time))
			best = c;
	}
	if (!best)
		best = first;
	if (best && !best->name)
		return depth < 64 && best->ptid != tid ?
			comm_of(s, best->ptid, true, best->time, best->offset, depth + 1) : NULL;
	return best ? best->name : NULL;
}

/* The thread's, else its process's (a thread without COMM or FORK of its own). */
static const char *comm_at(const struct tc_session *s, int pid, int tid, bool timed,
			   uint64_t time, uint64_t offset)
{
	const char *n = comm_of(s, tid, timed, time, offset, 0);

	return n || pid == tid ? n : comm_of(s, pid, timed, time, offset, 0);
}

const char *tc_session_comm(void *ctx, int pid, int tid)
{
	return comm_at(ctx, pid, tid, false, 0, 0);
}

const char *tc_session_comm_rec(void *ctx, const struct tc_rec *r)
{
	return comm_at(ctx, r->pid, r->tid, r->has_time, r->time, r->offset);
}

/* name NULL: a FORK from ptid. */
static int add_comm(struct tc_session *s, int tid, int ptid, uint64_t time, uint64_t offset,
		    const char *name, struct tc_err *e)
{
	char *copy = name ? strdup(name) : NULL;

	if ((name && !copy) ||
	    tc_grow((void **)&s->comms, &s->ccomms, s->ncomms + 1, sizeof(*s->comms))) {
		free(copy);
		return tc_err_set(e, 0, "out of memory");
	}
	s->comms[s->ncomms++] = (struct comm){ tid, ptid, time, offset, copy };
	return 0;
}

/* A new thread or process has its parent's name until it sets its own. */
static int on_fork(struct tc_session *s, const struct tc_perf_data_record *r, struct tc_err *e)
{
	if (r->u.fork.tid == r->u.fork.ptid)
		return 0;
	return add_comm(s, (int)r->u.fork.tid, (int)r->u.fork.ptid, r->u.fork.time, r->offset,
			NULL, e);
}

/* The decoders' records pass here on their way to the command: progress, and the
 * tracepoint samples from before them in time (a record with perf time) or in the file. */
static void emit_progress(void *ctx, const struct tc_rec *r)
{
	struct tc_session *s = ctx;
	int rc;

	/* sampled: decoding runs sequentially inside a buffer, every 256th record is enough */
	if (!(++s->at_calls & 255) && s->p->at)
		s->p->at(s->p->ctx, r->offset);
	if (s->ev_wait) {	/* most recordings have none: no call per record */
		if (r->has_time)
			rc = tc_events_flush_time(s->ev, s->pd, r->time);
		else
			rc = tc_events_flush(s->ev, s->pd, r->offset);
		if (rc)
			s->nomem = true;	/* reported once the decoder returns */
		s->ev_wait = tc_events_waiting(s->ev);
	}
	s->emit(s->ctx, r);
}

/* A run of RANGE records (decoders/decoder.h emit_ranges): progress as emit_progress tells
 * it, for the same records; tracepoint samples waiting to be interleaved take the records
 * one by one. */
static void emit_progress_ranges(void *ctx, const struct tc_rec *r, size_t n)
{
	struct tc_session *s = ctx;

	if (s->ev_wait) {
		for (size_t i = 0; i < n; i++)
			emit_progress(ctx, &r[i]);
		return;
	}
	if (s->p->at)	/* the records emit_progress would tell: every 256th */
		for (size_t i = 255 - (s->at_calls & 255); i < n; i += 256)
			s->p->at(s->p->ctx, r[i].offset);
	s->at_calls += (unsigned)n;
	s->o.emit_ranges(s->ctx, r, n);
}

/* The command's writer on the decoding threads, where nothing waits to be interleaved
 * with the records: tracepoint samples go among them by time, in the caller's thread. */
static bool writer_usable(void *ctx)
{
	struct tc_session *s = ctx;

	return !s->ev_wait && s->o.writer->usable(s->o.writer->ctx);
}

static void *writer_open(void *ctx, int (*sym)(void *sym_ctx, int pid, uint64_t addr,
					       struct tc_images_sym *s),
			 void *sym_ctx, const uint64_t *space)
{
	struct tc_session *s = ctx;

	return s->o.writer->open(s->o.writer->ctx, sym, sym_ctx, space);
}

/* A lane's bytes, in order: progress as emit_progress tells it. */
static void writer_put(void *ctx, const char *bytes, size_t n, uint64_t offset, void *block)
{
	struct tc_session *s = ctx;

	/* the first too: a short trace may come in fewer than 16 pieces */
	if (!(s->at_calls++ & 15) && s->p->at)
		s->p->at(s->p->ctx, offset);
	s->o.writer->put(s->o.writer->ctx, bytes, n, offset, block);
}

/* A decoder for every format: which one the file needs shows at its AUXTRACE_INFO, and
 * until then each sees the records (side-band may come first). */
static int new_cands(struct tc_session *s, struct tc_err *e)
{
	size_t n;
	const struct tc_decoder_ops *const *all = tc_decoders_all(&n);
	struct tc_decoder_opts o = { .symfs = s->o.symfs,
				     .buildid_dir = s->buildid_dir = tc_buildid_cache_dir(),
				     .kernel = s->kernel,
				     .packets = s->o.packets,
				     .branches = s->o.branches,
				     /* the kernel's images are one object for every address
				      * space (lib/images/kernel): not for several threads */
				     .jobs = s->o.kernel.vmlinux || s->o.kernel.kallsyms ||
						     s->o.kernel.kcore ? 1 : s->o.jobs,
				     .reference = s->o.reference,
				     .no_offsets = s->o.no_offsets,
				     .writer = s->o.writer ? &s->writer : NULL,
				     .want_id = s->o.any_id ? s->o.want_id : NULL,
				     .emit = emit_progress,
				     .emit_ranges = s->o.emit_ranges ? emit_progress_ranges : NULL,
				     .ctx = s };

	if (s->o.writer) {
		s->writer = *s->o.writer;
		s->writer.usable = writer_usable;
		s->writer.open = writer_open;
		s->writer.put = writer_put;
		s->writer.ctx = s;
	}
	if (!s->kernel && !(o.kernel = s->kernel = tc_kernel_open(&s->o.kernel, e)))
		return -1;
	if (!(s->cands = calloc(n, sizeof(*s->cands))))
		return tc_err_set(e, 0, "out of memory");
	s->ncands = n;
	for (size_t i = 0; i < n; i++) {
		s->cands[i].ops = all[i];
		if (!(s->cands[i].dec = all[i]->new(&o, e)))
			return -1;
	}
	return 0;
}

/* The file names its trace format: that decoder stays, the others go. */
static void on_auxtrace_info(struct tc_session *s, const struct tc_perf_data_record *r)
{
	const struct tc_decoder_ops *ops;

	s->aux_type = r->u.auxtrace_info.type;
	if (s->dec || !(ops = tc_decoders_find(s->aux_type)))
		return;
	for (size_t i = 0; i < s->ncands; i++)
		if (s->cands[i].ops == ops)
			s->dec = &s->cands[i];
	free_cands(s, s->dec);
}

static void on_aux(struct tc_session *s, const struct tc_perf_data_record *r)
{
	if (!s->aux_recs++)
		s->first_aux_offset = r->offset;
	s->aux_bytes += r->u.aux.aux_size;
	s->aux_truncated += r->u.aux.truncated;
	s->aux_partial += r->u.aux.partial;
	s->aux_collision += r->u.aux.collision;
	s->aux_empty += r->u.aux.truncated && !r->u.aux.aux_size;
}

/* What the session keeps of a record: the account of AUX data and the thread names. */
static int account(struct tc_session *s, const struct tc_perf_data_record *r, struct tc_err *e)
{
	switch (r->type) {
	case TC_PERF_DATA_AUXTRACE_INFO:
		on_auxtrace_info(s, r);
		break;
	case TC_PERF_DATA_AUXTRACE:
		if (s->p->buffer)
			s->p->buffer(s->p->ctx, r->offset + r->size, r->u.auxtrace.size);
		s->auxtrace_recs++;
		s->auxtrace_bytes += r->u.auxtrace.size;
		break;
	case PERF_RECORD_AUX:
		on_aux(s, r);
		break;
	case PERF_RECORD_COMM:
		return add_comm(s, (int)r->u.comm.tid, -1, r->sid.has_time ? r->sid.time : 0,
				r->offset, r->u.comm.comm, e);
	case PERF_RECORD_FORK:
		return on_fork(s, r, e);
	case PERF_RECORD_LOST:
		s->lost_recs++;
		s->lost_events += r->u.lost.lost;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		s->lost_samples_recs++;
		s->lost_samples += r->u.lost.lost;
		break;
	case TC_PERF_DATA_COMPRESSED:
	case TC_PERF_DATA_COMPRESSED2:
		if (!s->compressed_recs++)
			s->first_compressed = r->offset;
		break;
	}
	return 0;
}

static int nomem(struct tc_session *s, struct tc_err *e)
{
	return s->nomem ? tc_err_set(e, 0, "out of memory") : 0;
}

static int read_all(struct tc_session *s, struct tc_err *e)
{
	struct tc_perf_data_record r;
	int n;

	while ((n = tc_perf_data_next(s->pd, &r, e)) > 0) {
		if (account(s, &r, e))
			return -1;
		for (size_t i = 0; i < s->ncands; i++) {
			struct cand *c = &s->cands[i];

			if (c->dec && c->ops->process(c->dec, s->pd, &r, e))
				return -1;
		}
		if (tc_events_record(s->ev, s->pd, &r, e) || nomem(s, e))
			return -1;
		s->ev_wait = tc_events_waiting(s->ev);
		if (s->p->stop && s->p->stop(s->p->ctx))
			break;	/* the command reports it */
	}
	return n < 0 ? -1 : 0;
}

/* Trace the kernel announced (AUX records) but that the file does not hold, and data lost
 * on the way. */
static int report_missing(struct tc_session *s, struct tc_diag *m)
{
	const char *in = s->o.input;
	const struct tc_diag *w = tc_perf_data_warnings(s->pd);
	int problems = 0;

	for (size_t i = 0; i < w->n; i++, problems++)
		tc_diag_add(m, "%s", w->msgs[i].text);
	if (s->aux_bytes && !s->auxtrace_recs) {
		struct tc_rec lost = { .type = TC_REC_LOST, .id = -1, .cpu = -1, .pid = -1,
				       .tid = -1, .offset = s->first_aux_offset,
				       .text = "AUX records announce trace but the file holds "
					       "no AUXTRACE data" };

		if (!s->o.record)	/* --show-events lists records, not trace */
			s->emit(s->ctx, &lost);
		tc_diag_add(m, "%s: %" PRIu64 " AUX records announce %" PRIu64
			    " bytes of trace, but the file holds no AUXTRACE data: the trace is "
			    "missing", in, s->aux_recs, s->aux_bytes);
		problems++;
	}
	if (s->aux_truncated || s->aux_partial || s->aux_collision) {
		tc_diag_add(m, "%s: AUX records flagged truncated %" PRIu64 " (%"
			    PRIu64 " of them empty), partial %" PRIu64 ", collision %" PRIu64, in,
			    s->aux_truncated, s->aux_empty, s->aux_partial, s->aux_collision);
		problems++;
	}
	if (s->lost_recs) {
		tc_diag_add(m, "%s: %" PRIu64 " LOST records (%" PRIu64
			    " events lost)", in, s->lost_recs, s->lost_events);
		problems++;
	}
	if (s->compressed_recs) {
		tc_diag_add(m, "%s: %" PRIu64 " COMPRESSED records from offset 0x%"
			    PRIx64 " (perf record -z): tracectl does not decompress zstd, so the "
			    "records inside them are not decoded; record without -z", in,
			    s->compressed_recs, s->first_compressed);
		problems++;
	}
	if (s->lost_samples) {
		tc_diag_add(m, "%s: %" PRIu64 " records lost by the kernel's count"
			    " (%" PRIu64 " LOST_SAMPLES records)", in, s->lost_samples,
			    s->lost_samples_recs);
		problems++;
	}
	return problems;
}

static void progress_end(struct tc_session *s)
{
	if (s->p->end)
		s->p->end(s->p->ctx);
}

/* Read, then let the decoder decode what it queued and report; the tracepoint samples
 * left and the account of AUX data follow. */
static int decode(struct tc_session *s, struct tc_diag *m, struct tc_err *e)
{
	int rc, problems = 0;

	if (new_cands(s, e))
		return -1;
	if (!(s->ev = tc_events_new(s->emit, s->ctx)))
		return tc_err_set(e, 0, "out of memory");
	if (read_all(s, e))
		return -1;
	if (s->dec) {
		rc = s->dec->ops->finish(s->dec->dec, s->pd, s->o.input, m, e);
		if (rc < 0 || nomem(s, e))
			return -1;
		problems += rc;
	} else if (s->auxtrace_recs && !s->aux_type) {
		/* packets too: listing none and saying nothing would look like an empty trace */
		return tc_err_set(e, 0, "%s: AUX trace (%" PRIu64 " AUXTRACE records) but no "
				  "AUXTRACE_INFO record saying what kind: cannot decode",
				  s->o.input, s->auxtrace_recs);
	} else if (s->auxtrace_recs) {
		return tc_err_set(e, 0, "%s: AUX trace of unknown kind (AUXTRACE_INFO type %u): "
				  "cannot decode", s->o.input, s->aux_type);
	}
	progress_end(s);
	if (tc_events_flush(s->ev, s->pd, UINT64_MAX))
		return tc_err_set(e, 0, "out of memory");
	problems += tc_events_finish(s->ev, s->o.input, m);
	problems += report_missing(s, m);
	return problems;
}

/* --show-events: the records, one by one, and the account of what was lost. */
static int list_records(struct tc_session *s, struct tc_diag *m, struct tc_err *e)
{
	struct tc_perf_data_record r;
	int n;

	while ((n = tc_perf_data_next(s->pd, &r, e)) > 0) {
		if (account(s, &r, e))
			return -1;
		s->o.record(s->o.record_ctx, &r);
		if (!(++s->at_calls & 255) && s->p->at)
			s->p->at(s->p->ctx, r.offset);
		if (s->p->stop && s->p->stop(s->p->ctx))
			break;	/* the command reports it */
	}
	if (n < 0)
		return -1;
	progress_end(s);
	tc_diag_status(m, "tracectl decode: %" PRIu64 " AUX records, %" PRIu64 " AUXTRACE "
		       "records (%" PRIu64 " bytes of trace), %" PRIu64 " LOST records",
		       s->aux_recs, s->auxtrace_recs, s->auxtrace_bytes, s->lost_recs);
	return report_missing(s, m);
}

/* A perf.data directory (perf record --kcore writes one): its "data" is the recording, and
 * its kcore_dir (kcore, kallsyms) the kernel's images unless --kcore was given, as perf
 * uses them. */
static void perf_data_dir(struct tc_session *s)
{
	struct stat st;
	size_t n = strlen(s->o.input) + 16;

	if (s->dir_data || stat(s->o.input, &st) || !S_ISDIR(st.st_mode) ||
	    !(s->dir_data = malloc(n)) ||
	    !(s->dir_kcore = malloc(n)))
		return;
	snprintf(s->dir_data, n, "%s/data", s->o.input);
	snprintf(s->dir_kcore, n, "%s/kcore_dir", s->o.input);
	if (stat(s->dir_data, &st) || !S_ISREG(st.st_mode))
		return;
	s->o.input = s->dir_data;
	if (!s->o.kernel.kcore && !stat(s->dir_kcore, &st) && S_ISDIR(st.st_mode))
		s->o.kernel.kcore = s->dir_kcore;
}

static int run_perf_data(struct tc_session *s, struct tc_diag *m, struct tc_err *e)
{
	int rc;

	perf_data_dir(s);
	if (tc_perf_data_open(&s->pd, s->o.input, e))
		return -1;
	if (s->p->begin)
		s->p->begin(s->p->ctx);
	rc = s->o.record ? list_records(s, m, e) : decode(s, m, e);
	if (rc < 0)
		progress_end(s);
	tc_perf_data_close(s->pd);
	s->pd = NULL;
	return rc;
}

/* An OpenCSD / DS-5 snapshot directory: one trace buffer decoded (the first by default,
 * as trc_pkt_lister does), as instruction ranges and other elements, or as packets. */
static int run_snapshot(struct tc_session *s, struct tc_diag *m, struct tc_err *e)
{
	const struct tc_session_opts *a = &s->o;
	struct tc_snapshot *ss;
	struct tc_cs_snapshot_run run = { .buffer = a->buffer, .what = (a->packets ? TC_ETM_PACKETS
									 : TC_ETM_ELEMENTS) | (a->reference ? TC_ETM_REFERENCE : 0),
				 .want_id = a->any_id ? a->want_id : NULL, .emit = s->emit,
				 .emit_ctx = s->ctx };
	int rc, warned;

	if (a->branches)
		return tc_err_set(e, 0, "--branches is for perf.data recordings, not snapshot "
				  "directories");
	if (tc_snapshot_open(&ss, a->input, e))
		return -1;
	rc = tc_cs_snapshot_decode(ss, &run, e);
	/* each note is a problem with the input (a memory dump left out, a truncated frame,
	 * a source that cannot be decoded): exit 3, as for perf.data */
	warned = run.notes.n > 0;
	for (size_t i = 0; i < run.notes.n; i++)
		tc_diag_add(m, "%s", run.notes.msgs[i].text);
	tc_diag_free(&run.notes);
	if (rc) {
		tc_snapshot_free(ss);
		return -1;
	}
	if (run.errors)
		tc_diag_add(m, "%s: %" PRIu64 " decode errors (decoding "
			    "resynchronised after each)", a->input, run.errors);
	tc_diag_status(m, "tracectl decode: buffer %s (%s), %u sources, %" PRIu64
		       " packets, %" PRIu64 " ranges, %" PRIu64 " instructions, %" PRIu64 " errors",
		       run.buf->name, run.buf->format, run.sources, run.packets, run.ranges,
		       run.insns, run.errors);
	tc_snapshot_free(ss);
	return run.errors || warned ? 1 : 0;
}

int tc_session_run(struct tc_session *s, const struct tc_session_progress *p,
		   struct tc_diag *m, struct tc_err *e)
{
	int rc;

	s->p = p ? p : &no_progress;
	if (tc_snapshot_is(s->o.input) && s->o.record)
		rc = tc_err_set(e, 0, "%s: a snapshot directory has no perf.data records to show",
				s->o.input);
	else if (tc_snapshot_is(s->o.input))
		rc = run_snapshot(s, m, e);
	else
		rc = run_perf_data(s, m, e);
	s->p = &no_progress;	/* p is the caller's, for this call only */
	return rc;
}
