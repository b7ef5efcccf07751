/* Intel PT instruction-flow walk on libipt's query decoder (pt_qry_*), for the fast path
 * of pt_flow: the same blocks, events and query calls, in the same order, as libipt's block
 * decoder (end_on_call, end_on_jump, with tick events or without), so that the query
 * decoder's offsets, times and statuses are the block decoder's; but each basic block is
 * decoded (Zydis, lib/isa/x86.c) once and kept in a cache keyed by address space (cr3),
 * mode and address: instruction count, last instruction's class, size and direct target.
 *
 * The walk models the common flow: conditional, indirect and far branches, direct calls
 * and jumps, return compression, PSB+ status updates, TIP.PGE, FUP/TIP asynchronous
 * branches, OVF, CBR, tick, power and stop events. Anything else (a decode error of any
 * kind, memory without code, TSX, PTWRITE, synchronous TIP.PGD and paging events that bind
 * to an instruction, 16-bit code, ...) returns TC_PT_WALK_FALLBACK before any of it is given:
 * the caller then decodes with libipt's block decoder instead (see pt_flow.c). */
#ifndef TC_DECODERS_INTEL_PT_PT_WALK_H
#define TC_DECODERS_INTEL_PT_PT_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <intel-pt.h>

#include "lib/isa/x86.h"

/* Not a libipt status: the walk cannot go on as the block decoder would. */
#define TC_PT_WALK_FALLBACK (-30000)

/* Code bytes at addr in address space cr3 (as tc_pt_flow_ops.read); 0 if none. */
typedef size_t (*tc_pt_walk_read_fn)(void *ctx, uint64_t cr3, uint64_t addr, uint8_t *buf,
				     size_t len);
/* The libipt section (its iscache id) that holds ip in the block decoder's image, and its
 * bounds [*start, *end); -1 if none: the block decoder would read ip through its callback
 * (pt_flow then names the file to add, as for libipt). */
typedef int (*tc_pt_walk_section_fn)(void *ctx, uint64_t ip, uint64_t *start, uint64_t *end);

struct tc_pt_walk;
struct tc_pt_walk_cache;

/* The blocks, kept by the caller across buffers; forget them whenever what read returns
 * may have changed. With them, which instructions libipt's block cache (one per section,
 * kept as long as the section) has met: a block decoded the first time ends where it
 * meets one, without trace (a record's offset shows it). NULL if out of memory. */
struct tc_pt_walk_cache *tc_pt_walk_cache_new(void);
void tc_pt_walk_cache_forget(struct tc_pt_walk_cache *c);
void tc_pt_walk_cache_free(struct tc_pt_walk_cache *c);
/* A new era (each buffer's start): tc_pt_walk_cache_warm() leaves out what came after. */
void tc_pt_walk_cache_era(struct tc_pt_walk_cache *c);
/* Before libipt's block decoder takes over from the walk: fill libipt's block caches (of the
 * sections in iscache) with the instructions the walk's model has them hold from earlier
 * eras, by decoding a trace made for it (a PSB+ at each such instruction, then the packet
 * its run's last branch needs); its blocks then end where the reference's would. -1 if out
 * of memory. */
int tc_pt_walk_cache_warm(const struct tc_pt_walk_cache *c, const struct pt_config *base,
			  struct pt_image_section_cache *iscache);

/* For a trace cut at its PSBs (pt_session's segments), each piece walked on its own:
 * tc_pt_walk_cache_merge() adds src's marks to dst's (-1: out of memory); after
 * tc_pt_walk_cache_log(), every mark asked about and not found is noted, and
 * tc_pt_walk_cache_check() says whether truth (the marks a walk from the start would have
 * had) holds none of them, that is whether each answer would have been the same. */
int tc_pt_walk_cache_merge(struct tc_pt_walk_cache *dst, const struct tc_pt_walk_cache *src);
void tc_pt_walk_cache_log(struct tc_pt_walk_cache *c);
/* No more logging (what was logged forgotten). */
void tc_pt_walk_cache_unlog(struct tc_pt_walk_cache *c);
/* dst's marks become src's as they are now (-1: out of memory): src's table read, not
 * copied, so src (its thread) may go on adding marks while dst's walk (another thread)
 * reads; they are not dst's. After tc_pt_walk_cache_log(src), tc_pt_walk_cache_merge_new
 * adds the marks src made since the last call to dst's (-1: out of memory). */
int tc_pt_walk_cache_copy(struct tc_pt_walk_cache *dst, struct tc_pt_walk_cache *src);
int tc_pt_walk_cache_merge_new(struct tc_pt_walk_cache *dst, struct tc_pt_walk_cache *src);
/* As new (without its memory made again), but its blocks: they depend on the code read
 * alone (the address space it was told stays too). */
void tc_pt_walk_cache_reset(struct tc_pt_walk_cache *c);
/* As reset, the marks left as they are for tc_pt_walk_cache_copy() to replace: it must
 * come next. */
void tc_pt_walk_cache_reuse(struct tc_pt_walk_cache *c);
bool tc_pt_walk_cache_check(const struct tc_pt_walk_cache *spec,
			    const struct tc_pt_walk_cache *truth);

/* A walk over buf..buf+len (config as for the block decoder; begin/end and flags are
 * set here); x86 is the caller's Zydis decoder, used from this thread only. */
struct tc_pt_walk *tc_pt_walk_new(const struct pt_config *base, const uint8_t *buf, size_t len,
				  struct tc_pt_walk_cache *cache, struct tc_x86 *x86,
				  tc_pt_walk_read_fn read, tc_pt_walk_section_fn section, void *ctx);
void tc_pt_walk_free(struct tc_pt_walk *w);

/* As pt_blk_sync_forward, pt_blk_next, pt_blk_event and pt_blk_get_sync_offset (offset and
 * time: pt_qry_get_offset and pt_qry_time on tc_pt_walk_query). tc_pt_walk_next also gives
 * the last instruction's size and class (libipt's block leaves them out when its block cache
 * answers). */
int tc_pt_walk_sync_forward(struct tc_pt_walk *w);
int tc_pt_walk_next(struct tc_pt_walk *w, struct pt_block *b, unsigned *last_size,
		    enum pt_insn_class *last_class);
int tc_pt_walk_event(struct tc_pt_walk *w, struct pt_event *ev);
int tc_pt_walk_sync_offset(const struct tc_pt_walk *w, uint64_t *off);
/* As tc_pt_walk_sync_forward, on the PSB at buffer offset off (pt_qry_sync_set). */
int tc_pt_walk_sync_set(struct tc_pt_walk *w, uint64_t off);

/* What decides the walk's future, but its return stack (an empty one pops nothing: the
 * walk gives up) and libipt's query decoder beyond its offset and time: equal in two walks
 * over the same trace, they go on alike. libipt's time beyond what it tells is a function
 * of the packets since the last TSC (a TSC resets all of it but the CBR, told here), but
 * for the calibration that CYC packets use: without CYC, equal times go on alike too. */
struct tc_pt_walk_state {
	uint64_t ip, offset, tsc;
	uint32_t lost_mtc, lost_cyc, cbr;	/* libipt's time, as far as it tells */
	int mode, status;
	bool enabled, process_event, has_time, has_cbr;
	struct pt_event ev;	/* the event fetched, if process_event */
	uint64_t ev_tsc;	/* the last event's time: a tick comes where the time is another */
};
void tc_pt_walk_state(const struct tc_pt_walk *w, struct tc_pt_walk_state *st);
/* The query decoder under the walk, whose offset and time are the walk's. */
struct pt_query_decoder *tc_pt_walk_query(const struct tc_pt_walk *w);
/* Tick events as libipt's block decoder gives them with enable_tick_events (a timing
 * update at a branch's query), from the walk's start. */
void tc_pt_walk_ticks(struct tc_pt_walk *w);
/* The address space the walk reads code of (the caller's CR3, from paging events). */
void tc_pt_walk_set_cr3(struct tc_pt_walk *w, uint64_t cr3);

#endif
