/* Decoding an OpenCSD snapshot (lib/perfdata/snapshot.h): each trace source's decoder configuration
 * from its device ini, the cores' memory dumps as the decoders' memory, and a driver that
 * feeds one trace buffer through a decode session (decoders/coresight/cs_session.h), as OpenCSD's
 * trc_pkt_lister does with the same snapshot. */
#ifndef TC_DECODERS_CORESIGHT_CS_SNAPSHOT_H
#define TC_DECODERS_CORESIGHT_CS_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoders/coresight/cs_session.h"
#include "decoders/coresight/etm_ocsd.h"
#include "lib/perfdata/snapshot.h"
#include "lib/util/diag.h"

/* The decoder configuration of trace source src (by its type= and registers; arch and
 * profile from the type of the core it traces). -1 with a message for a source we cannot
 * decode (an ITM, an unknown type, a core source without its core). */
int tc_cs_snapshot_cfg(const struct tc_snapshot *ss, const struct tc_snapshot_device *src,
		 struct tc_etm_cfg *cfg, struct tc_err *e);

/* The memory dumps of every device, read once. Missing dump files are left out and noted. */
struct tc_cs_snapshot_mem;
struct tc_cs_snapshot_mem *tc_cs_snapshot_mem_open(const struct tc_snapshot *ss,
						   struct tc_diag *notes, struct tc_err *e);
void tc_cs_snapshot_mem_free(struct tc_cs_snapshot_mem *m);
/* Notes each dump that answered no read while some read found no dump. */
void tc_cs_snapshot_mem_diag(const struct tc_cs_snapshot_mem *m, struct tc_diag *notes);
/* A tc_etm_mem_fn over the dumps: ctx is the struct tc_cs_snapshot_mem. Address spaces are not
 * told apart (trc_pkt_lister maps the dumps of these snapshots for any space too). */
size_t tc_cs_snapshot_mem_read(void *ctx, const struct tc_etm_mem_ctx *mc, uint64_t addr,
			       uint8_t *buf, size_t len);

/* One trace buffer, how to decode it, and what came of it. */
struct tc_cs_snapshot_run {
	const char *buffer;		/* buffer name; NULL: the first, as trc_pkt_lister */
	unsigned what;			/* TC_ETM_PACKETS / TC_ETM_ELEMENTS */
	const bool *want_id;		/* [128]; NULL: every ID */
	tc_etm_emit_fn emit;
	void *emit_ctx;
	/* results */
	const struct tc_snapshot_buffer *buf;
	uint64_t errors;		/* decode errors over all sources */
	uint64_t packets, ranges, insns;
	unsigned sources;		/* decoders set up */
	struct tc_diag notes;		/* sources left out, missing dumps, demux problems */
};

/* Decode run->buffer of ss. -1 with a message if the buffer cannot be read or no source in
 * it can be decoded. Free run->notes afterwards. */
int tc_cs_snapshot_decode(const struct tc_snapshot *ss, struct tc_cs_snapshot_run *run,
			  struct tc_err *e);

#endif
