/* A look-ahead over one ETMv4/ETE trace ID's bytes that finds the packets which would crash
 * OpenCSD 1.3.3's ETMv4 instruction decoder, or make it walk from memory it never set,
 * before that decoder sees them.
 *
 * The facts behind it, three crashes and two reads of what was never set:
 * - TrcPktDecodeEtmV4I::mispredictAtom() walks the P0 element stack from the newest
 *   element, erasing address elements until it meets an atom. The erase
 *   (EtmV4P0Stack::erase_curr_from_front) drops the iterator std::deque::erase returns and
 *   keeps walking with the old one. When no atom is left to mispredict and the oldest
 *   element is an address, that iterator ends up past end(), and the next step reads a
 *   pointer beyond the deque: SIGSEGV. Real trace never mispredicts when nothing is
 *   speculative; one corrupt byte does (a Mispredict or Cancel header in place of another
 *   packet).
 * - commitElements() commits from the oldest element; at an exception element
 *   processException() pops it and reads the next one (past a context element) with
 *   std::deque::back() as the exception's address, never checking that the stack holds
 *   one. An exception committed before its address packet came (a Commit packet, or
 *   TRACE_INFO's speculation depth beyond MAXSPEC auto-committing at the next packet) reads
 *   past the deque: SIGSEGV. processQElement() has the same shape (Q without address).
 * - The decoder never initialises its instruction address and ISA (m_instr_info) and no
 *   reset sets them. processException() walks from that address to the exception's return
 *   address whatever m_need_addr says; before the decoder ever had an address, from heap
 *   garbage (under ASan 0xbebebebebebebebe: a failed read, a fatal response; with code
 *   everywhere a walk that may not end). A branch-target exception without context or IS
 *   bit reads the ISA; processQElement() walks its instruction count from the address.
 * - Its memory read cache (TrcMemAccCache::blockInCache) takes a read as in a page it holds
 *   where the page starts at or below the address and ends at or past the address plus the
 *   read's length: at the last 4 bytes of the address space that sum wraps to 0, any page
 *   answers, and the read copies from the address less that page's start: SIGSEGV. The
 *   decoder gets there from an address packet (a walk from below reads that page first).
 * - Nor does it ever set m_unseen_spec_elem: a cancel of more elements than its stack holds
 *   counts the rest off it, and a mispredict that finds no atom on the stack reads it to
 *   choose between its error and going on.
 *
 * So a packet-processor-only OpenCSD tree (which holds no element stack and cannot take
 * these paths) reads the same bytes first. A model of the element stack (kinds and atom
 * counts, the speculation depth with its auto-commit beyond TRCIDR8.MAXSPEC, replaying
 * commit, cancel, mispredict and discard, and the decoder's resets on errors the packets
 * decide) names the cancel beyond the stack, the mispredict that would find no atom, an
 * address packet giving the last 4 bytes of the address space, the
 * packet whose commit would reach an exception without its address, or one (or a Q
 * element) that reads what the decoder never set: whether it ever had an address and an
 * ISA is known from the elements committed since it was made (resets keep it; ETE's
 * transaction starts and source addresses, which the models do not follow, make it unknown:
 * then nothing is named). A Q element without its own address is named whatever came
 * before: processQElement() deletes it, its address and context, then reads its count and
 * index (and the context) from the freed memory. The caller stops the full decoder before
 * that packet and resets it.
 *
 * What the models cannot see: the decoder's errors that depend on the traced code (an
 * instruction walk that fails, a return stack overflow) reset it where the models go on;
 * after it resynchronises its stack is a newer part of the model's, and a cancel or
 * mispredict beyond its stack may go unnamed (the fast decoder counts those as undefined,
 * tc_etm4_walk_undefined). */
#ifndef TC_DECODERS_CORESIGHT_ETM4_GUARD_H
#define TC_DECODERS_CORESIGHT_ETM4_GUARD_H

#include <stddef.h>
#include <stdint.h>

#include <opencsd/c_api/opencsd_c_api.h>

struct tc_etm4_guard;

/* tree: a single-source tree holding an ETMv4I packet processor (no full decoder) with
 * trace ID csid; the guard owns it from here on, also on failure (NULL: no memory). */
struct tc_etm4_guard *tc_etm4_guard_new(dcd_tree_handle_t tree, uint8_t csid,
					uint32_t max_spec);
void tc_etm4_guard_free(struct tc_etm4_guard *g);

/* Read len bytes that follow the bytes read so far. 0 if none of their packets is a hazard;
 * 1 for the first hazard: *start is where its packet begins, relative to data (negative if
 * it began in earlier bytes), *why says what it is. After a hazard the caller feeds the
 * decoder up to a cut (at most *start), resets it, rewinds the guard to the cut and scans
 * again from there. */
int tc_etm4_guard_scan(struct tc_etm4_guard *g, const uint8_t *data, size_t len,
		       int64_t *start, const char **why);
/* Back to cut bytes after the start of the last scan, reset as below. */
void tc_etm4_guard_rewind(struct tc_etm4_guard *g, size_t cut);
/* The same model without a tree of its own, for a decoder that sees each packet before it
 * acts on it (the fast decoder, etm4_walk.h): the caller's packet processor gives it the
 * packets its sink gets, in order, and resets it (tc_etm4_guard_reset) whenever that packet
 * processor is reset. Scan and rewind are not for it. NULL: no memory. */
struct tc_etm4_guard *tc_etm4_guard_new_inline(uint32_t max_spec);
/* The next packet (starting at index idx): 1 if it is the first hazard since the last reset
 * (*why says what), the packet the decoder must not see; 0 otherwise. */
int tc_etm4_guard_packet(struct tc_etm4_guard *g, const ocsd_etmv4_i_pkt *p,
			 ocsd_trc_index_t idx, const char **why);
/* The decoder was reset: so is the look-ahead (waits for the next ASYNC). */
void tc_etm4_guard_reset(struct tc_etm4_guard *g);

#endif
