/* CoreSight Trace Formatter deformatter ("demux"): splits a formatted sink buffer (ETB, ETF,
 * ETR, TPIU) into per-trace-ID byte streams. Streaming: bytes may arrive in any chunking and a
 * frame may be split across tc_cs_frame_feed() calls. Bad input never stops it; it is counted and
 * noted in a bounded error list with stream offsets. Byte-exact with OpenCSD's deformatter. */
#ifndef TC_DECODERS_CORESIGHT_CS_FRAME_H
#define TC_DECODERS_CORESIGHT_CS_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "lib/util/diag.h"
#include "lib/util/err.h"

/* Input framing (exactly one of MEM_ALIGN or FSYNCS/HSYNCS). */
#define TC_CS_FRAME_MEM_ALIGN	0x01	/* ETB/ETF/ETR memory: 16-byte frames from offset 0 */
#define TC_CS_FRAME_FSYNCS 0x02 /* TPIU/DSTREAM: sync on FSYNC 0x7fffffff, skip them */
#define TC_CS_FRAME_HSYNCS 0x04 /* TPIU: also drop half-word syncs 0x7fff in frames */
/* With MEM_ALIGN: a frame of 4 FSYNCs (perf pads/separates AUX blocks so) resets the
 * current ID and calls the reset callback. */
#define TC_CS_FRAME_RESET_4X_FSYNC	0x08
/* Also deliver data of the null ID 0x00 and reserved IDs 0x70-0x7f (tests, dumps). */
#define TC_CS_FRAME_ALL_IDS		0x10

#define TC_CS_FRAME_FRAME_SIZE	16
#define TC_CS_FRAME_NO_ID		0xff	/* no ID seen yet (OpenCSD prints "????") */

/* Data for one trace ID: a run of bytes from one frame. frame_off is the input offset of the
 * frame, or of the ID byte when an ID change inside the frame began the run: the index
 * OpenCSD's deformatter gives the run (and so the packet offsets its decoders report).
 * One frame yields at most 15 data bytes, possibly for several IDs. */
typedef void (*tc_csf_data_fn)(void *ctx, uint8_t id, const uint8_t *data, size_t len,
			       uint64_t frame_off);
/* The stream asked for a reset (4x FSYNC frame): downstream decoders should resync. */
typedef void (*tc_csf_reset_fn)(void *ctx, uint64_t off);

enum tc_cs_frame_err_kind {
	TC_CS_FRAME_E_RESERVED_ID, /* ID change to 0x70-0x7f; off = the ID byte */
	TC_CS_FRAME_E_TRUNCATED, /* incomplete frame at flush; off = its start, len = bytes */
	TC_CS_FRAME_E_NO_SYNC, /* bytes skipped before the first FSYNC */
	TC_CS_FRAME_E_BAD_FSYNC, /* FSYNC inside a frame: partial frame dropped, resynced */
	TC_CS_FRAME_E_BAD_HSYNC, /* HSYNC without TC_CS_FRAME_HSYNCS: skipped */
	TC_CS_FRAME_E_RESET_PATTERN, /* MEM_ALIGN+RESET_4X: frame starts with FSYNC but is not 4 */
};

struct tc_cs_frame_err {
	uint64_t off;		/* input offset, counted from the first byte ever fed */
	uint32_t len;		/* bytes concerned, where it applies */
	uint8_t id;		/* for RESERVED_ID */
	enum tc_cs_frame_err_kind kind;
};

struct tc_cs_frame_stats {
	uint64_t frames;	/* complete frames unpacked */
	uint64_t id_bytes;	/* data bytes for IDs 0x01-0x6f */
	uint64_t null_bytes;	/* data bytes for ID 0x00 (padding) */
	uint64_t reserved_bytes;	/* data bytes for IDs 0x70-0x7f */
	uint64_t unknown_bytes;	/* data bytes before any ID was seen */
	uint64_t fsync_bytes, hsync_bytes;
	uint64_t unsynced_bytes;	/* skipped looking for the first FSYNC */
	uint64_t dropped_bytes;	/* partial frames thrown away */
	uint64_t resets;	/* 4x FSYNC resets */
	uint64_t errors;	/* all errors, also those past the list's limit */
};

#define TC_CS_FRAME_MAX_ERRS	64	/* errors kept in the list; later ones are only counted */

struct tc_cs_frame;

/* flags: TC_CS_FRAME_*; fn gets the data (required); reset_fn may be NULL. */
struct tc_cs_frame *tc_cs_frame_new(unsigned flags, tc_csf_data_fn fn, tc_csf_reset_fn reset_fn,
			  void *ctx, struct tc_err *e);
void tc_cs_frame_free(struct tc_cs_frame *d);

/* Push len bytes of the buffer, continuing where the last call stopped. */
void tc_cs_frame_feed(struct tc_cs_frame *d, const void *buf, size_t len);
/* End of a contiguous block: a partial frame (or held back sync bytes) is reported as
 * TRUNCATED and dropped; the next byte fed starts a new frame. The current ID is kept. */
void tc_cs_frame_flush(struct tc_cs_frame *d);
/* Forget the partial frame, the current ID and FSYNC lock, as at creation. Offsets, stats and
 * errors keep counting: the forgotten bytes count as dropped_bytes (no error), and bytes
 * skipped so far before an FSYNC are reported as NO_SYNC. */
void tc_cs_frame_reset(struct tc_cs_frame *d);

const struct tc_cs_frame_stats *tc_cs_frame_stats(const struct tc_cs_frame *d);
const struct tc_cs_frame_err *tc_cs_frame_errors(const struct tc_cs_frame *d, size_t *n);
/* One sentence describing e, for diagnostics. */
void tc_cs_frame_err_str(const struct tc_cs_frame_err *e, char *buf, size_t size);
/* Append every listed error (and a note if some were only counted) to diag. */
void tc_cs_frame_errors_to_diag(const struct tc_cs_frame *d, struct tc_diag *diag);

#endif
