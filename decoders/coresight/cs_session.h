/* A CoreSight decode session: the frame demultiplexer (decoders/coresight/cs_frame.c) in front of one
 * OpenCSD decoder per trace ID (decoders/coresight/etm_ocsd.c). Fed with blocks of trace (a snapshot's
 * buffer, or perf AUX buffers with their file offsets), it routes each ID's bytes to its
 * decoder with the index OpenCSD would give them, and resets every decoder when the
 * formatter asks (4x FSYNC frame). Records go to one emit callback, memory comes through one
 * memory callback, both shared by all IDs. */
#ifndef TC_DECODERS_CORESIGHT_CS_SESSION_H
#define TC_DECODERS_CORESIGHT_CS_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "decoders/coresight/cs_frame.h"
#include "decoders/coresight/etm_ocsd.h"
#include "lib/util/diag.h"
#include "lib/util/err.h"

/* How a block of trace is laid out. */
enum tc_cs_session_format {
	TC_CS_SESSION_RAW, /* one source's bytes, no formatter (needs exactly one source) */
	TC_CS_SESSION_FRAMED, /* formatter frames from memory (ETB/ETF/ETR, perf AUX) */
	TC_CS_SESSION_TPIU, /* formatter frames with FSYNCs between them (TPIU, DSTREAM) */
};

struct tc_cs_session;

/* what: TC_ETM_PACKETS and/or TC_ETM_ELEMENTS, for every source. */
struct tc_cs_session *tc_cs_session_new(unsigned what, tc_etm_emit_fn emit, tc_etm_mem_fn mem,
					void *ctx, struct tc_err *e);
void tc_cs_session_free(struct tc_cs_session *s);

/* Decode cfg->trace_id with a decoder made from cfg. -1 (message names the ID) if the ID is
 * already taken or OpenCSD refuses the configuration. Data for IDs without a source is
 * counted, not decoded. */
int tc_cs_session_add_source(struct tc_cs_session *s, const struct tc_etm_cfg *cfg,
			     struct tc_err *e);

/* One contiguous block of trace whose first byte is at input offset base_offset (records
 * report offsets from there). A formatter frame cut off at the end of the block is dropped
 * (counted in the demux stats); decoder state carries over to the next block. */
void tc_cs_session_feed(struct tc_cs_session *s, const uint8_t *buf, size_t len,
			uint64_t base_offset, enum tc_cs_session_format fmt);
/* End of trace: every decoder flushes what it holds and emits EOT. */
void tc_cs_session_flush(struct tc_cs_session *s);
/* Discontinuity (e.g. the next AUX buffer does not follow on): every decoder resyncs. */
void tc_cs_session_reset(struct tc_cs_session *s, uint64_t offset);

/* Trace IDs decoded in parallel (--jobs; decoders/jobs.h), records in the one-thread order.
 * One parallel context serves the sessions that use it (their schedule is one), each set
 * with tc_cs_session_use_par before its first source. emit and note run in the caller's
 * thread, in order; lane_rec (may be NULL) in the thread decoding r's ID, as the decoder
 * gives r, before it is kept, for context records (TC_REC_CONTEXT) only: the thread the
 * memory callback, in that thread too, may need. The
 * memory callback may call tc_cs_session_par_note: text comes back, in order, to note. */
struct tc_cs_session_par;
struct tc_cs_session_par *tc_cs_session_par_new(unsigned jobs, tc_etm_emit_fn emit,
						void (*lane_rec)(void *ctx, const struct tc_rec *r),
						void (*note)(void *ctx, const char *text), void *ctx);
void tc_cs_session_par_free(struct tc_cs_session_par *p);
void tc_cs_session_use_par(struct tc_cs_session *s, struct tc_cs_session_par *p);
/* Emit every record queued so far (after the last feed and flush). -1 on ENOMEM. */
int tc_cs_session_par_drain(struct tc_cs_session_par *p);
void tc_cs_session_par_note(const char *text);
/* Records made into bytes on the lanes: emit then gets none. fmt gets each record, in the
 * thread decoding its ID, once its operations are decoded (out of the lock OpenCSD's calls
 * hold: lanes decode one at a time, but write at once); take gives the bytes made of a
 * step's records (fmt may call tc_cs_session_par_note too), not copied, in pieces: it is
 * called until it gives none (0 bytes, no block); put gets them
 * in the caller's thread, in the one-thread order, with the last record's offset and
 * take's block (decoders/jobs.h's tc_jobs_writer). */
void tc_cs_session_par_format(struct tc_cs_session_par *p,
			      void (*fmt)(void *ctx, const struct tc_rec *r),
			      size_t (*take)(void *ctx, uint8_t id, const char **bytes,
					     void **block),
			      void (*put)(void *ctx, const char *bytes, size_t n, uint64_t offset,
					  void *block));

/* Stats of the decoder for id, NULL if it has none. */
const struct tc_etm_ocsd_stats *tc_cs_session_stats(const struct tc_cs_session *s, uint8_t id);
/* Bytes seen for id (with or without a decoder). */
uint64_t tc_cs_session_id_bytes(const struct tc_cs_session *s, uint8_t id);
/* Sum of the decode errors of every source. */
uint64_t tc_cs_session_errors(const struct tc_cs_session *s);
/* The demultiplexer's counters and problems (NULL before the first framed block). */
const struct tc_cs_frame_stats *tc_cs_session_demux_stats(const struct tc_cs_session *s);
void tc_cs_session_demux_diag(const struct tc_cs_session *s, struct tc_diag *diag);
/* A warning per trace ID whose decoder was kept from packets that crash OpenCSD
 * (decoders/coresight/etm4_guard.h). */
void tc_cs_session_guard_diag(const struct tc_cs_session *s, struct tc_diag *diag);

#endif
