/* The fast ETMv4 instruction-trace decoder: OpenCSD's ETMv4 packet processor gives the
 * packets (decoders/coresight/etm_ocsd.c), this module turns them into the records
 * OpenCSD's own full decoder (TrcPktDecodeEtmV4I, libopencsd 1.3.3) would give, element for
 * element: the same speculation stack (commit, cancel, mispredict, discard, overflow), the
 * same return stack, the same errors and resynchronisation, the same memory reads (an exact
 * model of OpenCSD's 12-page read cache, so the memory callback sees the same requests),
 * and the same instruction walk to each waypoint, but each walk's result (instruction
 * count, end, last instruction) comes from a cache of blocks keyed by the memory context and
 * start address instead of decoding every instruction of every range again.
 *
 * A64 only: etm_ocsd.c takes it for A-profile ETMv4 sources whose configuration it models
 * (no data trace, no conditional trace, no Q elements) and the reference decoder for the
 * rest. Code that is not A64 (an AArch32 context) it cannot follow: it says so with an error
 * record (counted in tc_etm4_walk_unmodelled). */
#ifndef TC_DECODERS_CORESIGHT_ETM4_WALK_H
#define TC_DECODERS_CORESIGHT_ETM4_WALK_H

#include <stdbool.h>
#include <stdint.h>

#include <opencsd/c_api/opencsd_c_api.h>

#include "decoders/coresight/etm_ocsd.h"

struct tc_etm4_walk_cfg {
	uint8_t trace_id;
	int cpu;
	uint32_t max_spec;		/* TRCIDR8.MAXSPEC */
	bool ret_stack;			/* TRCCONFIGR.RS */
	bool cci;			/* TRCCONFIGR.CCI: timestamps carry a cycle count */
	unsigned a64_flags;		/* TC_A64_F_* (lib/isa/a64.h) */
};

struct tc_etm4_walk;

/* Each generic element, as OpenCSD's decoder would hand it to its element sink. */
typedef void (*tc_etm4_walk_elem_fn)(void *ctx, uint64_t index, const ocsd_generic_trace_elem *el);
/* A read of target memory in the memory context *mctx (given at creation, kept up to date
 * by the element sink): OpenCSD's callback accessor. */
typedef uint32_t (*tc_etm4_walk_mem_fn)(void *ctx, uint64_t addr, uint32_t len, uint8_t *buf);
/* Something this module does not model happened at index (text says what). */
typedef void (*tc_etm4_walk_err_fn)(void *ctx, uint64_t index, const char *text);

/* NULL: no memory. */
struct tc_etm4_walk *tc_etm4_walk_new(const struct tc_etm4_walk_cfg *cfg,
				      tc_etm4_walk_elem_fn elem, tc_etm4_walk_mem_fn mem,
				      tc_etm4_walk_err_fn err, void *ctx,
				      const struct tc_etm_mem_ctx *mctx);
void tc_etm4_walk_free(struct tc_etm4_walk *w);

/* One datapath operation from the packet processor (OCSD_OP_DATA with its packet, EOT,
 * FLUSH, RESET), as the full decoder would get it. 0, or -1 when it ran out of memory: then
 * the error went out as an error record (err callback) at index, the elements of the cut
 * operation not yet given out were dropped, and the decoder was reset (it resynchronises
 * at the next ASYNC and TRACE_INFO, as after a bad packet). */
int tc_etm4_walk_op(struct tc_etm4_walk *w, ocsd_datapath_op_t op, uint64_t index,
		    const ocsd_etmv4_i_pkt *pkt);
/* The memory behind the callback changed. */
void tc_etm4_walk_mem_changed(struct tc_etm4_walk *w);

/* For a decoder that may have to be replaced (etm_ocsd.c's hand-over): mark where a new
 * OpenCSD decoder, reset (OCSD_OP_RESET) or made there, would start reading the same
 * operations; as_new is false where that one would have given, or would give, other
 * records than this one models for them: where OpenCSD's records since the mark were
 * undefined (tc_etm4_walk_undefined), and for what its decoder keeps across a reset that
 * the walk can see: its element objects' context ID (a context element since the mark
 * that did not update it showed the old one; one that did sets it for both), and its last
 * instruction's address and ISA (an address after the reset sets them before any atom is
 * walked; an exception before one read them: a new decoder's guard names it). The rest it
 * keeps: its other element fields (each record's type sets those it shows), and its memory
 * read cache (the reads, not the records). */
void tc_etm4_walk_mark(struct tc_etm4_walk *w);
bool tc_etm4_walk_as_new(const struct tc_etm4_walk *w);

/* Walks this module could not model (code that is not A64): each also an error record. */
uint64_t tc_etm4_walk_unmodelled(const struct tc_etm4_walk *w);
/* Operations cut short for want of memory (tc_etm4_walk_op's -1). */
uint64_t tc_etm4_walk_nomem(const struct tc_etm4_walk *w);
/* Where OpenCSD 1.3.3's records depend on what it never set: instructions in the last 4
 * bytes of the address space, which it reads from outside its read cache's page (we give no
 * memory there; the guard names an address packet that gives them, so only a direct
 * branch back past 0 gets there); a cancel or mispredict beyond its stack, which reads m_unseen_spec_elem,
 * where the guard (etm4_guard.h) did not stop before it: only after the decoder reset on an
 * error that depends on the traced code (we do as the library does when that is 0, its
 * error and reset). Real trace hardly gets there; corrupt trace can. (A commit that would
 * read its never-set instruction address or ISA, m_instr_info, the guard stops.) */
uint64_t tc_etm4_walk_undefined(const struct tc_etm4_walk *w);
/* Block cache hits and misses, for the curious. */
void tc_etm4_walk_cache_stats(const struct tc_etm4_walk *w, uint64_t *hits, uint64_t *misses);

#endif
