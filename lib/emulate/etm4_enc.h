/* ETMv4 instruction trace encoder: the recording side of an emulated ETM. It turns the executed
 * path of one PE (a sequence of blocks, each ending in a waypoint) into genuine ETMv4.0
 * packets, as a Cortex-A53's ETM configured with context ID tracing, no cycle counts, no
 * timestamps, no return stack and no speculation would emit them: A-sync, TRACE_INFO,
 * TRACE_ON, Address+Context, short/long/exact-match addresses, atoms, exceptions. */
#ifndef TC_LIB_EMULATE_ETM4_ENC_H
#define TC_LIB_EMULATE_ETM4_ENC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util/err.h"

/* How a block ends. A decoder walks the program image from a block's start to its first
 * waypoint (branch or ISB); the block's last instruction is that waypoint. */
enum tc_etm4_end {
	TC_ETM4_END_NONE,	/* no waypoint was executed (end of trace): nothing to emit */
	TC_ETM4_END_TAKEN,	/* direct branch taken, or ISB: E atom */
	TC_ETM4_END_NOT_TAKEN,	/* conditional direct branch not taken: N atom */
	TC_ETM4_END_INDIRECT,	/* indirect branch or return: E atom, then next as an address */
	TC_ETM4_END_EXCEPTION,	/* exception taken at exc_ret (preferred return address); the
				 * handler starts at next */
	TC_ETM4_END_CONTEXT,	/* context (CONTEXTIDR) changes to ctxid before next: no atom */
};

struct tc_etm4_enc_block {
	uint64_t start;		/* first instruction */
	uint64_t last;		/* the waypoint (informational; not traced) */
	uint64_t next;		/* next instruction executed after the block */
	enum tc_etm4_end end;
	uint32_t ctxid;		/* END_CONTEXT: the new CONTEXTIDR */
	uint16_t exc_type;	/* END_EXCEPTION: ETMv4 exception number (e.g. 2 = call) */
	uint64_t exc_ret;	/* END_EXCEPTION: preferred return address */
};

struct tc_etm4_cfg {
	uint32_t ctxid;		/* CONTEXTIDR at the start (the thread id) */
	unsigned el;		/* exception level of the traced code (0 for user space) */
	size_t sync_period;	/* A-sync + TRACE_INFO at least every this many bytes (0: 4096) */
	bool no_exact_match;	/* never use exact-match address packets */
	uint64_t start_ts;	/* nonzero: a timestamp right after the first TRACE_ON, before
				 * the address and context. For a trace ID that another PE context
				 * used before: the decoder ends that one's trace (its last range
				 * goes nowhere) while it still holds the old context, as perf
				 * acts on a context packet as soon as it decodes it */
};

/* The ETM registers a decoder needs, for snapshot inis and CS_ETM metadata. */
struct tc_etm4_regs {
	uint32_t configr, traceidr, authstatus;
	uint32_t idr0, idr1, idr2, idr8, idr9, idr10, idr11, idr12, idr13;
};

/* TRCCONFIGR with context ID tracing, and the ID registers of a Cortex-A53 (ETMv4.0,
 * 64-bit addresses, 32-bit CONTEXTIDR, 8-bit VMID, no speculation). */
void tc_etm4_enc_default_regs(struct tc_etm4_regs *r, uint8_t trace_id);

struct tc_etm4_enc_stats {
	uint64_t blocks, atoms_e, atoms_n, atom_packets;
	uint64_t addr_match, addr_short, addr_long32, addr_long64, addr_ctxt;
	uint64_t exceptions, syncs, trace_ons, timestamps;
	uint64_t bytes;
};

struct tc_etm4_enc;

struct tc_etm4_enc *tc_etm4_enc_new(const struct tc_etm4_cfg *cfg, struct tc_err *e);
void tc_etm4_enc_free(struct tc_etm4_enc *enc);

/* Encode one executed block. The first block (and any block whose start is not where the
 * previous one went: a gap, e.g. filtered code) starts with TRACE_ON and its address.
 * Returns 0, or -1 (ENOMEM) with e set. */
int tc_etm4_enc_block(struct tc_etm4_enc *enc, const struct tc_etm4_enc_block *b, struct tc_err *e);
/* The trace stopped (a pause, code out of the filter): the next block starts with TRACE_ON
 * even where the last one went. */
void tc_etm4_enc_gap(struct tc_etm4_enc *enc);
/* A timestamp packet (TRCCONFIGR.TS traces them) after the atoms held back: ts must not go
 * down. Ignored before the first block (a decoder is not synchronised yet). */
int tc_etm4_enc_timestamp(struct tc_etm4_enc *enc, uint64_t ts, struct tc_err *e);
/* Emit atoms still held back (call at the end of trace or before draining everything). */
int tc_etm4_enc_flush(struct tc_etm4_enc *enc, struct tc_err *e);

/* Bytes encoded so far and not yet drained. */
const uint8_t *tc_etm4_enc_data(const struct tc_etm4_enc *enc, size_t *len);
/* Forget the first n bytes of tc_etm4_enc_data (they were written to the sink). */
void tc_etm4_enc_drain(struct tc_etm4_enc *enc, size_t n);

const struct tc_etm4_enc_stats *tc_etm4_enc_stats(const struct tc_etm4_enc *enc);

#endif
