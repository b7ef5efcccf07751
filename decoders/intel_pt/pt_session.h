/* Intel PT instruction-flow decode of a whole perf.data recording: the caller hands over
 * every record in file order; AUXTRACE buffers are queued per CPU (per-cpu mmaps) or per
 * thread, side-band (MMAP/MMAP2, COMM exec, FORK, SWITCH_CPU_WIDE, SWITCH, ITRACE_START)
 * is kept with its perf time. tc_pt_session_decode() then runs decoders/intel_pt/pt_flow over the queues; as
 * the trace's time (TSC converted to perf time) moves on, the queue's address
 * space (lib/images/images) and its running thread follow the side-band. With time, the queues
 * are interleaved by it as perf does (the one furthest behind runs until it passes the
 * next), so records of several CPUs come out in time order; without, one after the other. */
#ifndef TC_DECODERS_INTEL_PT_PT_SESSION_H
#define TC_DECODERS_INTEL_PT_PT_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoders/jobs.h"
#include "decoders/rec.h"
#include "lib/images/images.h"
#include "lib/perfdata/perf_data.h"
#include "lib/util/err.h"

struct tc_pt_session_opts {
	const char *symfs;		/* root for recorded paths, or NULL */
	const char *buildid_dir;	/* build-id cache, or NULL */
	struct tc_kernel *kernel;	/* kernel images (lib/images/kernel.h), or NULL */
	bool branches;			/* TC_REC_BRANCH records instead of TC_REC_RANGE */
	bool reference;			/* libipt's decoder without caches (pt_flow.h) */
	/* Threads (--jobs): above 1, with several queues and a usable writer, the queues
	 * decode in parallel, each formatting its records with the writer (decoders/jobs.h),
	 * and none is emitted; the bytes come out in the one-thread order. Without time (and
	 * not the reference) a single queue is cut at its PSBs into segments that decode in
	 * parallel, joined in order (see pt_lanes.c, pt_segment.c). Otherwise, with
	 * emit_ranges and no_offsets (analyses), a worker decodes and the records come to
	 * emit in the caller's thread (pt_pipe.c); else from one thread, whatever the number. The kernel's images
	 * must be unused with jobs (lib/images/kernel is shared). */
	unsigned jobs;
	const struct tc_jobs_writer *writer;	/* NULL: none */
	/* Trace bytes per segment of a queue cut at its PSBs (at least this many, to the next
	 * PSB); 0: about 2 MiB of the output each (tests set it). */
	unsigned segment_bytes;
	/* Segments: the caller's thread decodes none itself (one in --jobs otherwise, as the
	 * true flow: pt_segment.c's turns), each is decoded apart and joined (tests of the
	 * joins set it). */
	bool segment_workers_only;
	/* Gets every record; r is valid only during the call. Required. */
	void (*emit)(void *ctx, const struct tc_rec *r);
	/* Optional: runs of RANGE records instead (decoders/decoder.h emit_ranges; ctx as
	 * emit's). */
	void (*emit_ranges)(void *ctx, const struct tc_rec *r, size_t n);
	void *ctx;
	bool no_offsets;	/* records for analyses only (pt_flow.h) */
};

struct tc_pt_session_stats {
	uint64_t buffers, bytes;	/* AUXTRACE buffers queued */
	uint64_t queues;
	uint64_t insns, ranges, branches;
	uint64_t errors;	/* ERROR records (bad packets, decoder errors) */
	uint64_t nomap;		/* no_image records: decoding stopped for lack of code */
	uint64_t nomap_unmapped;	/* ... of them at addresses no mapping covers */
	uint64_t overflows;	/* LOST records for OVF */
	uint64_t syncs, unsynced_bytes;
	/* --jobs without time, a queue cut at its PSBs (pt_segment.c): segments taken as
	 * decoded apart, segments decoded again in order (their state at the join differed),
	 * queues decoded again from their start (the fast walk gave up). Not shown. */
	uint64_t segments, segments_redone, queues_redone;
	uint64_t segments_here;	/* ... decoded by the true flow in the caller's turn */
};

/* An image that was needed but not found, and how often decoding stopped in it. */
struct tc_pt_session_missing {
	const char *line;	/* "path (build id ...) (why)" from lib/images/images */
	uint64_t stops;
	uint64_t reached;	/* branches into it found while decoding was stopped */
};

struct tc_pt_session;

struct tc_pt_session *tc_pt_session_new(const struct tc_pt_session_opts *o, struct tc_err *e);
void tc_pt_session_free(struct tc_pt_session *s);

/* One record, in file order (pd for AUXTRACE_INFO's attr and cpuid). -1 on an unusable
 * Intel PT AUXTRACE_INFO or out of memory. Records of other traces are ignored. */
int tc_pt_session_record(struct tc_pt_session *s, const struct tc_perf_data *pd,
			 const struct tc_perf_data_record *r, struct tc_err *e);
/* True once an Intel PT AUXTRACE_INFO was seen. */
bool tc_pt_session_is_intel_pt(const struct tc_pt_session *s);

/* Decode every queue. pd gives the build-id feature (pipe mode: read to the end first).
 * -1 only if the decoder cannot be set up; bad trace gives records and counts. */
int tc_pt_session_decode(struct tc_pt_session *s, const struct tc_perf_data *pd, struct tc_err *e);

const struct tc_pt_session_stats *tc_pt_session_stats(const struct tc_pt_session *s);
/* A tc_symbolize_fn (lib/output/listing.h) for records while they are emitted: what maps
 * addr in the address space of the queue at work (pid -1: its thread's); for another pid
 * (an event's), the first queue's that maps it; ctx is the session. */
int tc_pt_session_symbolize(void *ctx, int pid, uint64_t addr, struct tc_images_sym *sym);
/* For analyses after decoding (lib/analysis/analysis.h's tc_sym_fn and dso callback); ctx is the
 * session, valid until tc_pt_session_free. */
int tc_pt_session_sym(void *ctx, int pid, uint64_t addr, const char **name, uint64_t *start);
const char *tc_pt_session_dso(void *ctx, int pid, uint64_t addr);
/* Where the session keeps a number that changes whenever what tc_pt_session_sym and _dso
 * answer may change (a queue's address spaces made or changed by side-band); names they
 * gave stay valid meanwhile. Valid until tc_pt_session_free. */
const uint64_t *tc_pt_session_space(const struct tc_pt_session *s);
/* The address spaces of the first queue that maps pid's addr, or NULL. */
struct tc_images *tc_pt_session_images_at(struct tc_pt_session *s, int pid, uint64_t addr);
/* Images needed but not found, over all queues, each once. Valid until tc_pt_session_free. */
size_t tc_pt_session_missing(const struct tc_pt_session *s,
			     const struct tc_pt_session_missing **list);

#endif
