/* Intel PT instruction-flow decoder on libipt's block decoder. One decoder per CPU
 * queue (perf's per-cpu AUXTRACE queues); the caller feeds it that queue's AUXTRACE buffers
 * in order, each with its file offset. Memory comes from the caller (MMAP2 side-band and ELF
 * images) through a read callback; threads too, through an optional callback.
 *
 * Records: TC_REC_RANGE for each run of sequentially executed instructions; TC_REC_BRANCH
 * for each taken branch, in perf's convention (from 0 where trace starts, to 0 where it
 * stops, overflows or cannot be followed); TC_REC_ADDR_NACC where there is no image (value
 * 0: the flow stopped there; value 1: while stopped, a branch found in the packets went there,
 * also without code: not a record to show, a count for the caller); TC_REC_LOST for
 * overflows; TC_REC_ERROR for decode errors; TC_REC_NO_SYNC for bytes skipped looking for a
 * PSB. After a stop or an error, decoding resumes at the next packet that tells where the flow
 * is (TIP, TIP.PGE, FUP after OVF; a FUP before a TIP gives the branch's source), each giving
 * a branch record, not at the next PSB. */
#ifndef TC_DECODERS_INTEL_PT_PT_FLOW_H
#define TC_DECODERS_INTEL_PT_PT_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <intel-pt.h>

#include "decoders/intel_pt/pt_config.h"
#include "decoders/intel_pt/pt_skim.h"
#include "decoders/intel_pt/pt_walk.h"
#include "decoders/rec.h"
#include "lib/util/err.h"

#define TC_PT_FLOW_NO_CR3	UINT64_MAX	/* no PIP seen yet */

struct tc_pt_flow_time {
	bool has_tsc;		/* false until a TSC packet (or without TSC tracing) */
	uint64_t tsc;
	uint64_t perf_time;	/* tsc converted as perf does; == tsc without conversion */
};

/* A file whose bytes from offset on are mapped at start..start+len. */
struct tc_pt_flow_span {
	const char *path;
	uint64_t start, len, offset;
};

struct tc_pt_flow_ops {
	/* Copy up to len bytes of the traced program at addr (address space cr3, or
	 * TC_PT_FLOW_NO_CR3) into buf; return the count, 0 if nothing is mapped there. Required. */
	size_t (*read)(void *ctx, int cpu, uint64_t cr3, uint64_t addr, uint8_t *buf,
		       size_t len);
	/* Gets every record; r and its strings are valid only during the call. Required. */
	void (*emit)(void *ctx, const struct tc_rec *r);
	/* Optional: RANGE records in runs r[0..n) instead of one emit each, in their order
	 * among emit's records. A run ends before any other record, before the thread callback
	 * (so a run is of one pid, tid and address space) and when tc_pt_flow_run returns. */
	void (*emit_ranges)(void *ctx, const struct tc_rec *r, size_t n);
	/* Optional, with emit_ranges and no_offsets: a run's ranges as pt_skim.h's flow gives
	 * them, instead of their RANGE records through emit_ranges (in the same place among
	 * the records): each is the record *base (its thread, time, and the buffer's offset)
	 * made r[i]'s by tc_pt_flow_skim_rec. For a caller that hands them to another thread:
	 * they are a third of a record's size. */
	void (*skim_ranges)(void *ctx, const struct tc_rec *base, const struct tc_pt_skim_range *r,
			    size_t n);
	/* Optional: which thread runs on cpu at this time (and cr3)? Called at each sync, PIP
	 * (CR3 change) and time change; *pid / *tid start as the current values (-1 unknown). */
	void (*thread)(void *ctx, int cpu, uint64_t cr3, const struct tc_pt_flow_time *t, int *pid,
		       int *tid);
	/* Optional, with thread: would thread at time t change the thread or what reads return
	 * (side-band due)? Without it, no_offsets' flow (pt_skim.h) leaves buffers with time to
	 * the exact path. */
	bool (*due)(void *ctx, int cpu, const struct tc_pt_flow_time *t);
	/* Optional: the file behind addr (0 and *s; -1 when only read serves). libipt maps
	 * it and caches decoded blocks of it: much faster than reads. */
	int (*span)(void *ctx, int cpu, uint64_t cr3, uint64_t addr, struct tc_pt_flow_span *s);
	/* Required with span: a value that changes whenever what read returns may change
	 * (side-band applied, another process); the mapped files are dropped then. Asked
	 * after each thread callback. */
	uint64_t (*space)(void *ctx);
	void *ctx;
	/* Record types the caller drops (bits 1 << enum tc_rec_type: RANGE or BRANCH): not
	 * made at all; the statistics still count them. */
	unsigned skip;
	bool timestamps;	/* emit TC_REC_TIMESTAMP (perf time) when time moves on */
	bool events;		/* emit TC_REC_OTHER for ptwrite, power, tsx, cbr, ... events */
	/* Time from libipt's tick events, in flow order (else from the decoder, which reads
	 * ahead): exact pauses for queues interleaved by time; costs an event per timing
	 * packet. */
	bool ticks;
	/* The oracle for the fast path (--decoder=reference): libipt's block decoder as it
	 * is (with its own block cache over mapped files) and none of ours: each block's last
	 * instruction read and decoded again, every record made (skip ignored). Not libipt
	 * without mapped files: its uncached path reads packets ahead differently, so some
	 * records' offsets differ (a few in ten thousand ranges of an emulated recording).
	 * The fast path is our own walk (pt_walk.h) on libipt's query decoder, ticks and
	 * all, with the block decoder (and our cache of blocks' last instructions) where the
	 * walk gives up (see pt_flow.c). */
	bool reference;
	/* The records go to analyses only, which never read their offsets: without ticks,
	 * timestamps, events or branches, a buffer may be decoded by pt_skim.h's flow (the
	 * same records and times, offsets only to the packet), the exact path taking over
	 * where it gives up (with time and a thread callback: where the skim has read code
	 * and due says the callback would change something). */
	bool no_offsets;
	/* A segment of a trace cut at its PSBs (pt_session's --jobs): never libipt's block
	 * decoder; where the walk gives up, decoding stops (tc_pt_flow_gave_up), the records
	 * made until then the walk's. iscache: libipt's section cache to add mapped files to
	 * (shared by the segments: one isid for one file section), NULL for the flow's own. */
	bool segment;
	struct pt_image_section_cache *iscache;
	/* The x86 decoder to use (the caller's, kept across flows; one thread at a time uses it):
	 * NULL, the flow's own. */
	struct tc_x86 *x86;
};

struct tc_pt_flow_stats {
	uint64_t insns, ranges, branches;
	uint64_t errors;	/* ERROR records, each followed by a resync */
	uint64_t nomap;		/* ADDR_NACC records (then a resync too) */
	uint64_t overflows;	/* LOST records for OVF */
	uint64_t syncs;		/* PSBs synchronised on */
	uint64_t unsynced_bytes;	/* skipped before a PSB */
};

struct tc_pt_flow;

/* The RANGE record of skim range r (ops.skim_ranges), its other fields left as they are; at
 * offset buf_offset + r->offset. */
void tc_pt_flow_skim_rec(struct tc_rec *rec, uint64_t buf_offset, const struct tc_pt_skim_range *r);

/* base: libipt configuration (tc_pt_setup.cfg; begin/end are ignored), NULL for "by the
 * spec"; tc: time conversion (NULL: none); cpu goes into every record. */
struct tc_pt_flow *tc_pt_flow_new(const struct pt_config *base, const struct tc_pt_time_conv *tc,
			  int cpu, const struct tc_pt_flow_ops *ops, struct tc_err *e);
void tc_pt_flow_free(struct tc_pt_flow *d);

/* A queue's trace is one stream that perf cuts into AUXTRACE buffers where it drained the
 * AUX ring, often inside a packet: a buffer whose trace the next ones continue (their AUX
 * offsets follow on) says so first, and its decode goes on into them to their first PSB,
 * where the decode of the buffer that holds it goes on (the range in flight kept, no stop,
 * its bytes before that PSB not skipped: the records are those of the stream whole). The
 * buffer is decoded to its last PSB+; from that PSB on, a copy of its tail joined with the
 * next buffers' bytes to the end of the first PSB+ in them (those without PSB are taken
 * whole, up to TC_PT_FLOW_FOLLOW_MAX bytes: their begin then decodes nothing).
 * tc_pt_flow_follow() comes before tc_pt_flow_begin(_at) or _feed, for that call only: len
 * is the buffer's bytes that are trace (perf pads each buffer to 8 bytes with zeros: the
 * next one's AUX offset says where the trace goes on); next(ctx, at, i, b) gives the ith
 * buffer after it (0: the next), with its len so too, and false past the last that
 * follows on. The flow asks for them while it decodes this buffer and, to decode it again
 * (the reference's hand-over), any time after: ctx and their bytes must stay as the
 * buffer's. at: the caller's, for next. (perf decodes a queue's buffers as one stream
 * likewise: it cuts none at a PSB.) */
#define TC_PT_FLOW_FOLLOW_MAX (4u << 20)
struct tc_pt_flow_buf {
	const uint8_t *buf;
	size_t len;
	uint64_t file_offset;
};
typedef bool (*tc_pt_flow_next_fn)(void *ctx, size_t at, size_t i, struct tc_pt_flow_buf *b);
void tc_pt_flow_follow(struct tc_pt_flow *d, size_t len, tc_pt_flow_next_fn next, void *ctx,
		       size_t at);

/* Decode one AUXTRACE buffer of this queue; record offsets are file_offset + offset in buf.
 * Each buffer is decoded from its first PSB (libipt needs the whole trace buffer up
 * front), or goes on from the one before (tc_pt_flow_follow). -1 only if libipt cannot be
 * set up; bad trace gives records.
 * The bytes of every buffer given must stay while the flow decodes: where a buffer has
 * code not 64-bit after buffers our own walk or skim took (libipt's block cache then
 * decides what the reference gives), the flow hands over to the reference, which decodes
 * the buffers given so far again (their records given already left out). */
int tc_pt_flow_feed(struct tc_pt_flow *d, const uint8_t *buf, size_t len, uint64_t file_offset,
		struct tc_err *e);

/* Stepwise, to interleave queues by time as perf does: tc_pt_flow_begin() takes one buffer (its
 * bytes must stay until the buffer is done) and synchronises on its first PSB; tc_pt_flow_run()
 * decodes until the next event or block would pass perf time until (1: paused there, more
 * to come) or the buffer is done (0). tc_pt_flow_next_time() gives the perf time decoding
 * resumes at (false while the trace has told no time). tc_pt_flow_feed() is tc_pt_flow_begin() and
 * tc_pt_flow_run() to the end. */
int tc_pt_flow_begin(struct tc_pt_flow *d, const uint8_t *buf, size_t len, uint64_t file_offset,
		 struct tc_err *e);
int tc_pt_flow_run(struct tc_pt_flow *d, uint64_t until);
bool tc_pt_flow_next_time(const struct tc_pt_flow *d, uint64_t *t);

const struct tc_pt_flow_stats *tc_pt_flow_stats(const struct tc_pt_flow *d);

/* ---- Segments (ops.segment): one buffer decoded in pieces cut at PSBs ----
 * tc_pt_flow_begin_at() is tc_pt_flow_begin() synchronised on the PSB at buffer offset psb
 * (UINT64_MAX: the first, as tc_pt_flow_begin). tc_pt_flow_stop_at(): tc_pt_flow_run() then
 * pauses (1) at the first status update read past buffer offset off (the PSB+ of the next
 * segment), the event kept. tc_pt_flow_step_block(): it pauses after the next block. The
 * state at the first block after either (or after begin_at) is kept for the join
 * (tc_pt_flow_first). */
struct tc_pt_flow_join {
	bool done;		/* a block was taken */
	bool bad;		/* before it, a record, or an event that touches the flow */
	bool in_range, have_last;
	uint64_t r_start, r_end, last_ip, last_end, cr3;
	uint32_t r_insns;
	int r_isa, last_class, last_isa, pid, tid;
	bool has_tsc, time_used, ticks;
	uint64_t tsc;
	uint64_t emitted;	/* records made until then */
	struct tc_pt_flow_stats st;
	bool walk;		/* the walk ran: w is its state */
	struct tc_pt_walk_state w;
};
int tc_pt_flow_begin_at(struct tc_pt_flow *d, const uint8_t *buf, size_t len,
			uint64_t file_offset, uint64_t psb, struct tc_err *e);
void tc_pt_flow_stop_at(struct tc_pt_flow *d, uint64_t off);
/* Is a stop still ahead (not yet paused at)? */
bool tc_pt_flow_stop_pending(const struct tc_pt_flow *d);
/* The buffer offset the walk's query decoder has read to (a stop set past it comes
 * later), UINT64_MAX where the walk is not what decodes (or in a following buffer's
 * tail). */
uint64_t tc_pt_flow_offset(const struct tc_pt_flow *d);
/* libipt's section cache the flow adds mapped files to (ops.iscache or its own): a
 * segment flow given it shares the flow's section ids, its walk cache's marks too. */
struct pt_image_section_cache *tc_pt_flow_iscache(const struct tc_pt_flow *d);
/* What carries over from one buffer to the next: the thread and CR3. A segment that begins
 * a later buffer starts with the thread it expects (tc_pt_flow_set_thread, before begin),
 * to be checked against the true flow's at the join. */
void tc_pt_flow_thread(const struct tc_pt_flow *d, int *pid, int *tid, uint64_t *cr3);
void tc_pt_flow_set_thread(struct tc_pt_flow *d, int pid, int tid);
void tc_pt_flow_step_block(struct tc_pt_flow *d);
const struct tc_pt_flow_join *tc_pt_flow_first(const struct tc_pt_flow *d);
/* ... and at the first block after the last pause at a stop (tc_pt_flow_stop_at). */
const struct tc_pt_flow_join *tc_pt_flow_after(const struct tc_pt_flow *d);
/* Do two states at the first block (a speculative segment's, the flow's before it) go on
 * alike, the range in flight aside? Their times too, where the caller sees to it that CYC
 * is off (pt_walk.h) and that their reads see the same side-band. */
bool tc_pt_flow_join_same(const struct tc_pt_flow_join *spec, const struct tc_pt_flow_join *truth);
bool tc_pt_flow_gave_up(const struct tc_pt_flow *d);
/* From another thread, while a segment's flow runs: it gives up at its next block or
 * event (its results are not wanted). */
void tc_pt_flow_abort(struct tc_pt_flow *d);
bool tc_pt_flow_paused(const struct tc_pt_flow *d);
/* The walk's cache (made if need be; NULL: out of memory). */
struct tc_pt_walk_cache *tc_pt_flow_walk_cache(struct tc_pt_flow *d);
/* The file sections in libipt's image (isids of ops.iscache), as the walk knows them;
 * tc_pt_flow_add_sections() adds those missing (-1: out of memory). A segment notes each
 * address it found in none (the walk then took the block decoder's uncached path):
 * tc_pt_flow_section_misses(). */
struct tc_pt_flow_sec {
	int isid;
	uint64_t start, end;
};
size_t tc_pt_flow_sections(const struct tc_pt_flow *d, const struct tc_pt_flow_sec **secs);
int tc_pt_flow_add_sections(struct tc_pt_flow *d, const struct tc_pt_flow_sec *secs, size_t n);
size_t tc_pt_flow_section_misses(const struct tc_pt_flow *d, const uint64_t **ips);
/* The walk's cache given (before a begin), taken back (a decode in progress ends: the
 * flow is then done with, but for tc_pt_flow_stats and freeing it). */
void tc_pt_flow_set_walk_cache(struct tc_pt_flow *d, struct tc_pt_walk_cache *c);
struct tc_pt_walk_cache *tc_pt_flow_take_walk_cache(struct tc_pt_flow *d);

#endif
