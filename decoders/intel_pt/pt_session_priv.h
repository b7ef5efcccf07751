/* The Intel PT session's internals, shared by its files (and included by no other):
 * pt_session.c (the session: queues, one thread's decoding, symbols), pt_lanes.c (--jobs:
 * each queue decodes and formats its records in a worker thread), pt_segment.c (--jobs
 * on one queue: its buffers cut at PSBs) and pt_pipe.c (--jobs for analyses: one worker
 * decodes, the caller's thread takes the records). */
#ifndef TC_DECODERS_INTEL_PT_PT_SESSION_PRIV_H
#define TC_DECODERS_INTEL_PT_PT_SESSION_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoders/intel_pt/pt_config.h"
#include "decoders/intel_pt/pt_flow.h"
#include "decoders/intel_pt/pt_session.h"
#include "decoders/jobs.h"
#include "decoders/rec.h"
#include "lib/images/images.h"
#include "lib/perfdata/perf_data.h"
#include "lib/util/err.h"

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
	bool follows;		/* its trace goes on from the buffer before's (AUX offsets) */
	uint64_t aux;		/* its AUX area offset */
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
	uint64_t nrec;		/* records written (a redo leaves them out: pt_segment.c) */
	uint64_t nacc;		/* ADDR_NACC records */
	/* the tail (pt_lanes.c): the PSB its flow stops at (0 none), and stopped there; the
	 * plan's (tc_pt_segment_tail_plan: plan_buf SIZE_MAX none) */
	uint64_t cut_at;
	bool cut_hit;
	size_t plan_buf;
	uint64_t plan_at;
	/* the caller's, read by the lane: the queue is the last (__atomic) */
	int cut_req;
	/* apart (no cache line shared with the decoding thread's fields): the caller's */
	char pad0[64];
	size_t next_buf;	/* decode_by_time, merge_by_time: the buffer to begin next */
	bool begun;
	bool ended;
	bool mdone;		/* the caller's thread has read its end */
	bool mcut;		/* ... its cut: its tasks after it are not submitted */
	bool mcut_wait;		/* ... with other queues to come first */
	uint64_t mkey;		/* its key in the time heap */
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
	size_t *order;		/* pt_segment.c: the queues by time, where they come one after
				 * the other (NULL: in turn) */
	const struct tc_jobs_writer *lw;	/* o.writer when usable: formatted on the lanes */
	struct tc_pt_pipe *pipe;	/* pt_pipe.c: records decoded in a worker */
};

/* pt_session.c */
int tc_pt_session_nomem(struct tc_err *e);
/* The queues decoded in this thread, as one thread does (pt_pipe.c's worker too). */
int tc_pt_session_decode_here(struct tc_pt_session *s, const struct tc_perf_data_features *f,
			      struct tc_err *e);
/* Tells d of the buffers after q's buffer i that its trace goes on into
 * (tc_pt_flow_follow), before that buffer begins. */
void tc_pt_session_follow(struct queue *q, size_t i, struct tc_pt_flow *d);
int tc_pt_session_pid_of(const struct tc_pt_session *s, int tid);
/* The side-band applied from index from on up to perf time now: the index past it (the
 * side-band is in time order; all of it: UINT64_MAX). */
size_t tc_pt_session_sb_until(const struct tc_pt_session *s, size_t from, uint64_t now);
void tc_pt_session_apply_sb_to(const struct tc_pt_session *s, struct tc_images *im,
			       const struct sb *b);
void tc_pt_session_count_nacc(struct tc_pt_session *s, struct tc_images *im, int pid,
			      const struct tc_rec *r);
struct tc_images *tc_pt_session_images(struct queue *q);
/* New address spaces: the recording's build ids, the side-band before index n applied
 * (NULL: out of memory). */
struct tc_images *tc_pt_session_images_new(const struct tc_pt_session *s, size_t n);
struct missing *tc_pt_session_miss_for(struct tc_pt_session *s, const char *dso);
void tc_pt_session_add_missing_lines(struct tc_pt_session *s, struct tc_images *im);
int tc_pt_session_open_queue(struct tc_pt_session *s, struct queue *q,
			     const struct tc_perf_data_features *f, struct tc_err *e);
void tc_pt_session_add_flow_stats(struct tc_pt_session *s, const struct tc_pt_flow_stats *st);
void tc_pt_session_close_queue(struct tc_pt_session *s, struct queue *q);

/* Are the queues interleaved by time (decode_by_time)? */
static inline bool tc_pt_session_by_time(const struct tc_pt_session *s)
{
	return !s->pt.timeless && s->nq > 1;
}

/* The perf time q resumes at; 0 while its trace has told none (it runs first). */
static inline uint64_t tc_pt_session_resumes_at(const struct queue *q)
{
	uint64_t t;

	return tc_pt_flow_next_time(q->d, &t) ? t : 0;
}

/* A record of q's, in pid's address space, is to be emitted: the records' symbols
 * (tc_pt_session_symbolize) come from the emitting queue's address spaces and pid, so the
 * space number moves when either is another than the last record's: a cache of answers
 * by pid and address (the record writer's) holds while it stays. */
static inline void tc_pt_session_note_emitter(struct tc_pt_session *s, const struct queue *q,
					      int pid)
{
	if (__builtin_expect(q != s->eq || pid != s->epid, 0)) {
		s->eq = q;
		s->epid = pid;
		s->gen++;
	}
}
/* pt_pipe.c: --jobs where the records go to the caller's thread (analyses) */
bool tc_pt_pipe_usable(const struct tc_pt_session *s);
int tc_pt_pipe_decode(struct tc_pt_session *s, const struct tc_perf_data_features *f,
		      struct tc_err *e);
/* The worker, as it decodes: q's records, a run of its ranges; side-band q->sb_next of q due
 * (advance_images, before the increment); q's images made. */
void tc_pt_pipe_rec(struct queue *q, const struct tc_rec *r);
void tc_pt_pipe_run(struct queue *q, const struct tc_rec *r, size_t n);
void tc_pt_pipe_skim(struct queue *q, const struct tc_rec *base, const struct tc_pt_skim_range *r,
		     size_t n);
void tc_pt_pipe_sb(struct queue *q);
void tc_pt_pipe_images(struct queue *q);
/* The caller's thread: queue qi's images as it has them (made now if make and not yet,
 * as tc_pt_session_images would), and the queue and pid of the record it emits. */
struct tc_images *tc_pt_pipe_view(struct tc_pt_session *s, size_t qi, bool make);
const struct queue *tc_pt_pipe_cur(const struct tc_pt_session *s, int *pid);
/* pt_lanes.c: the items a lane hands to the caller's thread (pt_segment.c's too) */
enum item_kind { IT_BEGIN = 1, IT_STEP, IT_END, IT_TASK_END, IT_BYTES, IT_NACC, IT_CUT };

#define IT_KIND 0xffu
#define IT_QUIET (1u << 8)	/* ADDR_NACC to count, not a stop */
#define IT_FOUND (1u << 9)	/* ADDR_NACC in an image: its dso follows */

/* BEGIN, STEP, END, TASK_END, CUT */
struct mark {
	uint32_t kind;
	int32_t ret;
	uint64_t t;
};

/* A task's output before it hands over at a step: with time, 4 queues on 2 workers go on in
 * turn, so it is what one queue runs ahead of the others (4 MiB: the workers waited 56-136
 * ms for the budget on ptqT.data, peak RSS 57 MB; 2 MiB: none, 42 MB, 5% faster) */
#define TASK_BYTES (2u << 20)
#define TAKE_RECS 64		/* records formatted between takes: fewer than a block holds */
#define LANE_BUDGET (16u << 20)	/* formatted bytes the lanes hold unread, about */

struct bytes_item {
	uint32_t kind;		/* IT_BYTES */
	uint32_t pad;
	const char *bytes;
	size_t n;
	void *block;
	uint64_t offset;
};

void tc_pt_lanes_emit(struct queue *q, const struct tc_rec *r);
/* q's bytes formatted since the last take: to its task's items, or (no task: the caller's
 * thread) put at once. */
void tc_pt_lanes_take(struct queue *q);
int tc_pt_lanes_decode(struct tc_pt_session *s, const struct tc_perf_data_features *f,
		       struct tc_err *e);

/* pt_segment.c: with several queues and time, it sets s->order */
bool tc_pt_segment_usable(struct tc_pt_session *s);
int tc_pt_segment_decode(struct tc_pt_session *s, const struct tc_perf_data_features *f,
			 struct tc_err *e);
/* The tail (pt_lanes.c): can the last queue left be cut at PSBs from its flow's stop on? */
bool tc_pt_segment_tail_usable(const struct tc_pt_session *s);
/* Before the lanes start: the queue whose trace ends last (*qi) and a PSB of it (buffer *bi,
 * offset *at) after which every time of its trace is past every other queue's last (its
 * time spans, pt_skim.h): its records from there on come after all the others' (where the
 * others are done by then: the merge sees). -1 where that is not sure. */
int tc_pt_segment_tail_plan(const struct tc_pt_session *s, size_t *qi, size_t *bi, uint64_t *at);
/* The first PSB in b at or after offset off (where its flow stops), UINT64_MAX if none. */
uint64_t tc_pt_segment_tail_cut(const struct buf *b, uint64_t off);
/* ... decoded so (its lane idle, its flow q->d paused at the PSB q->cut_at of buffer
 * q->wbuf): 1 done, to the queue's end; 0 not (nothing written but by q->d, in the caller's
 * thread, which has gone on by a block: paused, or its buffer ended); -1 failed (*e). */
int tc_pt_segment_tail(struct tc_pt_session *s, struct queue *q, struct tc_err *e);

#endif
