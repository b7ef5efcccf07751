/* Intel PT packet listing with libipt's packet decoder: one TC_REC_PACKET per packet of an
 * AUXTRACE buffer, named as libipt's ptdump names them. Decode errors become TC_REC_ERROR
 * records and decoding resumes at the next PSB. */
#ifndef TC_DECODERS_INTEL_PT_PT_PACKETS_H
#define TC_DECODERS_INTEL_PT_PT_PACKETS_H

#include <stddef.h>
#include <stdint.h>
#include <intel-pt.h>

#include "decoders/rec.h"
#include "lib/util/err.h"

/* Gets every record; r and its strings are valid only during the call. */
typedef void (*tc_ptp_emit_fn)(void *ctx, const struct tc_rec *r);

struct tc_pt_packets_stats {
	uint64_t packets;	/* PACKET records emitted */
	uint64_t errors;	/* ERROR records emitted (each followed by a resync) */
	uint64_t syncs;		/* PSBs synchronised on (the first one included) */
	uint64_t unsynced_bytes;	/* skipped before the first PSB or after an error */
};

/* ptdump's name of a packet: "psb", "tnt.8", "tip.pge", "mode.exec", "mode.tsx", ... */
const char *tc_pt_packets_name(const struct pt_packet *p);

/* List the packets of buf (len bytes). base: decoder configuration (its cpu and errata
 * matter; begin/end are ignored), NULL for "by the spec". Record offsets are
 * file_offset + offset in buf; cpu goes into every record. PACKET records carry the
 * packet's main payload in value (IP, TNT bits, TSC, CR3, ...) and ptdump's payload text in
 * text. Statistics add up into st (may be NULL). -1 only if libipt cannot be set up. */
int tc_pt_packets_decode(const struct pt_config *base, const uint8_t *buf, size_t len,
		  uint64_t file_offset, int cpu, tc_ptp_emit_fn emit, void *ctx,
		  struct tc_pt_packets_stats *st, struct tc_err *e);

#endif
