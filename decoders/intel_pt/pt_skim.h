/* Intel PT flow without libipt, for records that go to analyses only (report): our own
 * packet parser for the common packets and a walk over cached basic blocks that takes TNT
 * bits and TIPs straight from the packets, making the RANGE records pt_flow makes (the same
 * boundaries, instruction counts, last instructions; the same statistics) but not their
 * exact trace offsets: each range gets the offset of the packet the parser is at, which
 * may differ from libipt's by a few packets (no consumer on that path reads more than "in
 * which AUXTRACE buffer").
 *
 * It models: PSB+ with MODE.Exec (64-bit), MODE.TSX, PIP, FUP and CBR, PSBEND, PAD, TNT-8,
 * TNT-64, TIP, TIP.PGE, TIP.PGD (with or without IP), FUP+TIP and FUP+TIP.PGD (asynchronous
 * branch, disable), PIP and MODE.TSX while tracing is off (events at once), MODE.TSX+FUP
 * while tracing (a transaction's begin or commit; an abort's FUP then FUP+TIP or
 * FUP+TIP.PGD), return compression (libipt's 64-entry stack), the binding of the events
 * libipt's block decoder makes of them (see pt_skim.c), and a buffer that ends inside a
 * packet while tracing (as perf cuts a queue's trace where the AUX ring was drained). Time:
 * TSC, TMA, MTC and CYC anywhere, CBR in a PSB+ after one of its events with an IP, kept as
 * libipt's query decoder keeps it (its pt_time and CYC calibration, to the tick) and told
 * (ops->time) where the exact path takes it: pt_qry_time's (the time of the packet libipt's
 * last query or event took) where a range ends, an event's own. The CR3 of a PIP is told
 * (ops->paging) where the exact path's paging event comes. Anything else gives up
 * (TC_PT_SKIM_GIVE_UP): any other packet (CBR elsewhere, OVF, PTWRITE, MODE.Exec outside
 * PSB+, power, VMCS, ...), a PIP while tracing outside PSB+ (it binds to a MOV CR3), two
 * PIPs in one PSB+, a PSB+'s MODE.TSX that says aborted, an abort with BDM64; 16- or
 * 32-bit code; a decode error of any kind; memory without code; a buffer without PSB, or
 * that ends inside a packet while tracing is off. The caller
 * then decodes the buffer again with the exact path, dropping the records already given
 * (they are the exact path's first ones). */
#ifndef TC_DECODERS_INTEL_PT_PT_SKIM_H
#define TC_DECODERS_INTEL_PT_PT_SKIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <intel-pt.h>

#include "lib/isa/x86.h"

#define TC_PT_SKIM_GIVE_UP (-1)
#define TC_PT_SKIM_NO_PSB 1	/* none in the buffer: nothing given */
#define TC_PT_SKIM_JOINED 2	/* ended at the join (tc_pt_skim_run) */

/* One range: [start, end), insns instructions, the last at last_ip of class last_class;
 * offset: where in the buffer the packet parser was. */
struct tc_pt_skim_range {
	uint64_t start, end, last_ip, offset;
	uint32_t insns;
	enum pt_insn_class last_class;
};

struct tc_pt_skim_ops {
	/* Code bytes at addr (as tc_pt_flow_ops.read, in the caller's address space). */
	size_t (*read)(void *ctx, uint64_t addr, uint8_t *buf, size_t len);
	/* The first PSB+ was read, skipped bytes after the buffer's start: the caller's thread
	 * and address space are due (no code read before it). */
	void (*sync)(void *ctx, uint64_t skipped);
	/* Ranges r[0..n), n >= 1, in order: each made before the next time told (time). */
	void (*range)(void *ctx, const struct tc_pt_skim_range *r, size_t n);
	/* The flow's time moves to tsc (pt_flow's set_time, where libipt's would): non-zero to
	 * give up (before anything changed). NULL: a buffer with time gives up. */
	int (*time)(void *ctx, uint64_t tsc);
	void *ctx;
	/* A PIP's event (libipt's paging or async paging) where the exact path takes it, after
	 * its time (time): the caller's CR3 is cr3 from here on (reads, its thread). Non-zero
	 * to give up. NULL: a PIP gives up. */
	int (*paging)(void *ctx, uint64_t cr3);
};

struct tc_pt_skim_stats {
	uint64_t insns, branches;	/* as tc_pt_flow_stats counts them */
};

struct tc_pt_skim;

/* x86: the caller's Zydis decoder (this thread only). NULL if out of memory. */
struct tc_pt_skim *tc_pt_skim_new(struct tc_x86 *x86);
void tc_pt_skim_free(struct tc_pt_skim *s);
/* What read returns may have changed: forget the blocks. */
void tc_pt_skim_forget(struct tc_pt_skim *s);

/* The range in flight where a run begins and ends (a stream cut into buffers: pt_flow.h's
 * tc_pt_flow_follow): its last instruction's too with have_last. */
struct tc_pt_skim_carry {
	bool in_range, have_last;
	struct tc_pt_skim_range r;
};

/* The buffer buf..buf+len (config: its errata and filter settings; begin/end unused), from
 * its first PSB to its end: 0, the ranges given and *st filled; TC_PT_SKIM_NO_PSB;
 * TC_PT_SKIM_GIVE_UP at the first thing not modelled (ranges may have been given: the exact
 * path's first ones). join (UINT64_MAX: none): the offset of a PSB whose status events, or
 * the first packet past it with trace off, end the run there: TC_PT_SKIM_JOINED, as 0
 * otherwise. *c: the range in flight the run starts with (it goes on from another's join),
 * and has at its end (none after a run to the buffer's end). */
int tc_pt_skim_run(struct tc_pt_skim *s, const struct pt_config *cfg, const uint8_t *buf,
		   size_t len, uint64_t join, struct tc_pt_skim_carry *c,
		   const struct tc_pt_skim_ops *ops, struct tc_pt_skim_stats *st);

/* The least and the greatest time (TSC) libipt's query decoder has in buf (config cfg,
 * from its start: a PSB) as it reads the packets, into *lo and *hi (each kept if less or
 * greater): every time a query or an event there can tell, and more; *mtcs: the most MTCs
 * after a TMA (before the next; kept if more). 0; -1 where it is not sure of them: a first PSB+ that
 * libipt would not synchronise on (cut, without a TSC, with a packet that has no place
 * there), a packet the parser does not model, a CYC, time libipt would fail. */
int tc_pt_skim_time_span(const struct pt_config *cfg, const uint8_t *buf, size_t len,
			 uint64_t *lo, uint64_t *hi, unsigned *mtcs);
/* The packet parser, for tests. Kinds of what it reads: */
enum tc_pt_skim_kind {
	TC_PT_SKIM_BAD,		/* not modelled, or not a whole packet */
	TC_PT_SKIM_PAD,
	TC_PT_SKIM_TNT,		/* tnt: bits, the first at bit 63; ntnt of them */
	TC_PT_SKIM_TIP,		/* ip; suppressed: no IP */
	TC_PT_SKIM_PGE,
	TC_PT_SKIM_PGD,
	TC_PT_SKIM_FUP,
	TC_PT_SKIM_PSB,
	TC_PT_SKIM_PSBEND,
	TC_PT_SKIM_MODE_EXEC,	/* mode: its payload byte */
	TC_PT_SKIM_TSC,		/* value: the TSC */
	TC_PT_SKIM_MTC,		/* value: the CTC byte */
	TC_PT_SKIM_TMA,		/* value: the CTC bits; fc */
	TC_PT_SKIM_CYC,		/* value: the cycles */
	TC_PT_SKIM_CBR,		/* value: the ratio */
	TC_PT_SKIM_MODE_TSX,	/* mode: its payload byte (bit 0 InTX, bit 1 TXAbort) */
	TC_PT_SKIM_PIP,		/* value: the CR3; mode: the NR bit */
};

struct tc_pt_skim_pkt {
	enum tc_pt_skim_kind kind;
	unsigned size;		/* bytes */
	uint64_t ip, tnt, value;
	unsigned ntnt;
	uint32_t fc;
	bool suppressed;
	bool truncated;		/* BAD: the bytes end inside a packet that could be whole */
	uint8_t mode;
};

/* The packet at p (n bytes left); IP packets update *last_ip (IP compression) and
 * *have_ip (false: a compressed IP has nothing to update: BAD). */
void tc_pt_skim_packet(const uint8_t *p, size_t n, uint64_t *last_ip, bool *have_ip,
		       struct tc_pt_skim_pkt *out);

#endif
