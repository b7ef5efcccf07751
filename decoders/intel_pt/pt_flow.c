#include "decoders/intel_pt/pt_flow.h"

#include <errno.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/intel_pt/pt_insn.h"
#include "decoders/intel_pt/pt_skim.h"
#include "decoders/intel_pt/pt_walk.h"
#include "lib/isa/x86.h"
#include "lib/util/grow.h"

/* Sizes and classes of blocks' last instructions, by address (libipt's block decoder gives
 * neither once its block cache answers). Direct-mapped; emptied when the address space
 * changes. */
#define LEN_CACHE 4096
#define ISCACHE_LIMIT (256ULL << 20)	/* bytes of mapped sections and their block caches */

struct len_entry {
	uint64_t ip;
	uint8_t size, iclass, mode, valid;
};

struct tc_pt_flow {
	struct pt_config base;
	struct tc_pt_time_conv tc;
	struct tc_pt_flow_ops ops;
	int cpu;
	struct pt_image *image;
	/* Keeps sections mapped, with their decoded-block caches, while the flow moves between
	 * files: without it libipt unmaps a section (and frees its block cache, as large as the
	 * code) at every switch, and a trace that goes in and out of libc rebuilds libc's. */
	struct pt_image_section_cache *iscache;
	struct tc_pt_flow_stats st;

	/* Files mapped into image as libipt sections (it caches decoded blocks per section):
	 * a read that found none names the file here, added once libipt has returned. */
	struct tc_pt_flow_span pending;
	bool have_pending;
	uint64_t space;		/* ops.space when the sections were added */
	uint64_t failed_start;	/* a span libipt would not take: reads serve it */
	struct len_entry *lens;
	struct tc_x86 *x86;	/* Zydis, for the lengths and kinds libipt does not give */

	/* The fast path's own walk on libipt's query decoder (pt_walk.h), used instead of the
	 * block decoder for a buffer unless the reference is asked for (with tick events, the
	 * walk makes them as libipt would). Anything the walk does not model makes it give
	 * up: the buffer is then decoded again from its start by the block decoder, its first
	 * emitted records (the walk's, identical) not emitted again (suppress). */
	struct tc_pt_walk *walk;
	struct pt_query_decoder *wq;	/* the walk's query decoder: offsets and time */
	struct tc_pt_walk_cache *wcache;
	uint64_t walk_cr3;	/* the address space the walk was told */
	unsigned wsize;		/* the walk's last block: its last instruction's size, class */
	enum pt_insn_class wclass;
	uint64_t emitted, suppress;	/* records of this buffer made; to drop */
	uint64_t given;		/* records given to ops.emit(_ranges), all buffers */
	struct tc_pt_flow_sec *secs;	/* the sections in image, as the walk needs them */
	size_t nsecs, capsecs;
	uint64_t *smiss;	/* ops.segment: addresses the walk found in no section */
	size_t nsmiss, capsmiss;
	bool smiss_lost;
	bool secs_lost;
	/* The walk gave up once: libipt's block decoder from then on. Its block cache (which
	 * decides where blocks decoded the first time end, so records' offsets) then holds
	 * what it decoded itself, as the reference's would, only if the walk had decoded
	 * nothing before; else the walk's model of it would go wrong too. */
	bool walk_off;
	struct {		/* the context at the buffer's start, for the decode again */
		struct tc_pt_flow_stats st;
		int pid, tid;
		uint64_t cr3;
		struct tc_pt_flow_time time;
		size_t nsecs;
		uint64_t failed_start;
	} snap;

	/* A stream cut into buffers (tc_pt_flow_follow). Phase 0 decodes the buffer to the
	 * first event past its last PSB (join); phase 1 its tail from that PSB joined with the
	 * pieces (tail), to the first event past their first PSB (join again), where the next
	 * buffer's decode goes on (cont). */
	tc_pt_flow_next_fn next;	/* tc_pt_flow_follow's, for the next begin */
	void *next_ctx;
	size_t next_at;
	size_t nlen;
	struct {		/* ... taken by this buffer's */
		tc_pt_flow_next_fn fn;
		void *ctx;
		size_t at;
	} cn;
	bool nnxt;		/* this buffer has buffers after it */
	const uint8_t *obuf;	/* the buffer, its bytes that are trace, its file offset */
	size_t slen;
	uint64_t ofile;
	int phase;
	uint64_t join;		/* offset in d->buf of the PSB that ends this phase */
	uint64_t jbase;		/* phase 1: the buffer's offset of the tail's start */
	uint8_t *tail;
	size_t tail_cap;
	struct jmap { uint64_t at, file_offset; } *jmap;	/* the pieces in the tail */
	size_t njmap, capjmap;
	size_t len0;		/* d->buf's bytes at d->file_offset + offset; the rest: jmap */
	bool going_on;		/* this decode goes on from the one before */
	bool skip_buf;		/* this buffer was the tail's whole */
	bool tail_fresh;	/* the tail is the buffer whole, without PSB: not going on */
	bool cont;		/* the last buffer ended at a join: the PSB at file offset */
	uint64_t cont_file;	/* ... cont_file, where the next goes on */
	uint64_t cont_next;	/* this buffer's tail's join as a file offset (or UINT64_MAX) */
	uint64_t abs_lo, abs_hi;	/* file offsets of the pieces its tail took whole */
	struct carry {		/* the range in flight a decode that goes on starts with */
		bool in_range, have_last;
		uint64_t r_start, r_end, last_ip, last_end;
		uint32_t r_insns;
		enum tc_isa r_isa, last_isa;
		enum pt_insn_class last_class;
	} go;

	/* Per feed. dec is the decoder that goes on: main over the buffer itself, or side over a
	 * copy of a stretch of it behind a PSB+ written here (resume()). */
	struct pt_block_decoder *dec, *main, *side;
	const uint8_t *buf;
	uint64_t file_offset;
	size_t len;
	uint8_t *side_buf;
	size_t side_cap, side_hdr;	/* side_buf's size; its PSB+'s length */
	uint64_t side_base, side_end;	/* buffer offsets of the stretch copied after the PSB+ */
	size_t side_len;	/* bytes in side_buf */
	bool side_psb;		/* the copy ends with the PSB+ at side_end (see side_start) */
	/* After an error or a stop without code: the packets themselves, followed from the last
	 * PSB with the state that IP compression, time and the address space need, looking for
	 * the next packet that says where the flow is (resume()). */
	struct pt_packet_decoder *scan, *peek;
	bool scanning;		/* resume() is due (from scan_from on) */
	uint64_t scan_from;	/* the packets before this buffer offset only update the state */
	uint64_t scan_off;	/* records' offset while scanning; UINT64_MAX otherwise */
	bool scan_tsc_due;	/* a TSC read but held back by until: time to apply first */
	uint64_t scan_tsc;
	struct {
		uint64_t last_ip, fup_ip;
		bool in_psb;	/* between PSB and PSBEND */
		bool fup;	/* a FUP whose TIP or TIP.PGD has not come yet */
		bool ovf;	/* an OVF whose FUP (where trace resumed) has not come yet */
		enum pt_exec_mode mode;
		/* time: the last TSC, moved on by MTCs after a TMA (as the SDM describes) */
		bool have_tsc, have_tma;
		uint64_t now, tsc_base, fc, ctc_base, ctc;
		/* raw packets for the PSB+ of a side decoder */
		uint8_t pip[8], tsc[8], tma[7], cbr[4], mode_exec[2];
		uint8_t npip, ntsc, ntma, ncbr, nmode_exec;
	} sc;
	uint64_t last_sync;
	int status;		/* libipt's, where decoding resumes */
	/* Stepwise decoding (tc_pt_flow_run): the event or block that would have passed until is
	 * kept for the next run, with its perf time. */
	uint64_t until;
	enum { HELD_NONE, HELD_EVENT, HELD_BLOCK } held;
	uint64_t held_time;
	struct pt_event held_ev;
	struct pt_block held_blk;

	/* ops.no_offsets: pt_skim.h's flow, and the address space its blocks are of. */
	struct tc_pt_skim *skim;
	uint64_t skim_cr3;
	bool skim_off;		/* libipt may have decoded code not 64-bit: not any more */
	bool skim_fresh;	/* the skim has read no code of this buffer yet */
	/* libipt's caches as the reference's: not once the skim or the walk took a buffer
	 * (warming from the walk's marks is exact only for 64-bit code). Where a later buffer
	 * may have other code (other_modes), the flow hands over to the reference (redo). */
	bool foreign;		/* an earlier buffer was the skim's or the walk's */
	bool foreign_now;	/* this one */
	int modes;		/* other_modes of this buffer: -1 not asked yet */
	bool redo_due;		/* hand over at the next API call */
	struct kept {
		const uint8_t *buf;
		size_t len, slen;
		uint64_t off;
		tc_pt_flow_next_fn next;	/* its tc_pt_flow_follow (next NULL: none) */
		void *next_ctx;
		size_t next_at;
	} *kept;
	size_t nkept, capkept;	/* the buffers begun (they stay: pt_flow.h) */
	struct tc_pt_flow *ref;	/* the reference, decoding the queue again from its start */
	uint64_t ref_drop;	/* its records yet to leave out: given already */
	struct tc_err ref_err;
	/* Segments (ops.segment): the PSB to synchronise on, the offset past which a status
	 * update pauses, a pause after the next block; the state at the first block. */
	uint64_t sync_at, stop_at;
	bool step_block, want_first, gave_up, paused;
	bool time_watch;	/* first.time_used: a record before the time is set again */
	atomic_bool abort;	/* tc_pt_flow_abort: from another thread */
	struct tc_pt_flow_join first, after;	/* at begin_at's first block, at the pause's */
	struct tc_pt_flow_join *first_to;	/* which one want_first fills */

	/* Context, kept across buffers: the caller's thread, CR3 and time. */
	int pid, tid;
	uint64_t cr3;
	struct tc_pt_flow_time time;

	/* RANGE records go out from here: the fields no range changes are set once. */
	struct tc_rec rrec;
	/* With ops.emit_ranges: the run of RANGE records not yet given, in slots whose fields
	 * no range changes are set once (as rrec's). */
	struct tc_rec *run;
	size_t nrun;
	struct tc_rec *slot;	/* where the next range is made: run + nrun, else &rrec */
	/* The walk's query decoder offset where its time was last asked (UINT64_MAX: ask):
	 * its time moves only with packets read, that is with the offset. */
	uint64_t time_off;

	/* The range being built, and the last instruction of the flow. */
	bool in_range;
	uint64_t r_start, r_end;
	uint32_t r_insns;
	enum tc_isa r_isa;
	bool have_last;		/* last_* describe an instruction whose successor is due */
	uint64_t last_ip, last_end;
	enum pt_insn_class last_class;
	enum tc_isa last_isa;
};

static enum tc_insn_class insn_class(enum pt_insn_class c)
{
	switch (c) {
	case ptic_call: return TC_INSN_CALL;
	case ptic_return: return TC_INSN_RET;
	case ptic_jump: return TC_INSN_JUMP;
	case ptic_cond_jump: return TC_INSN_JUMP;
	case ptic_far_call: return TC_INSN_SYSCALL;
	case ptic_far_return: return TC_INSN_EXC_RET;
	case ptic_far_jump: return TC_INSN_JUMP_IND;
	default: return TC_INSN_OTHER;
	}
}

static enum tc_isa isa_of(enum pt_exec_mode m)
{
	switch (m) {
	case ptem_64bit:
		return TC_ISA_X86_64;
	case ptem_32bit:
	case ptem_16bit:
		return TC_ISA_X86_32;
	default:
		return TC_ISA_UNKNOWN;
	}
}

/* The buffer offset of the active decoder's offset off (within side's PSB+: where its
 * stretch starts). */
static uint64_t buf_offset(const struct tc_pt_flow *d, uint64_t off)
{
	if (d->dec && d->dec == d->side)
		return d->side_base + (off < d->side_hdr ? 0 : off - d->side_hdr);
	return off;
}

__attribute__((noinline)) static uint64_t tail_file_offset(const struct tc_pt_flow *d,
							    uint64_t off)
{
	size_t lo = 0, hi = d->njmap;	/* the last piece starting at or before off */

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->jmap[mid].at <= off)
			lo = mid;
		else
			hi = mid;
	}
	return d->njmap ? d->jmap[lo].file_offset + (off - d->jmap[lo].at) : d->file_offset + off;
}

/* The file offset of offset off in d->buf (the tail: its pieces' own). */
static inline uint64_t file_off(const struct tc_pt_flow *d, uint64_t off)
{
	if (__builtin_expect(off < d->len0, 1))
		return d->file_offset + off;
	return tail_file_offset(d, off);
}

static uint64_t cur_offset(struct tc_pt_flow *d)
{
	uint64_t off = 0;

	if (d->scan_off != UINT64_MAX)
		return file_off(d, d->scan_off);
	if (d->wq) {
		pt_qry_get_offset(d->wq, &off);
		return file_off(d, off);
	}
	if (d->dec)
		pt_blk_get_offset(d->dec, &off);
	return file_off(d, buf_offset(d, off));
}

/* A record with the flow's time: see take_first. */
static inline void time_used(struct tc_pt_flow *d)
{
	if (__builtin_expect(d->time_watch, 0)) {
		d->time_watch = false;
		d->first.time_used = true;
	}
}

/* The run of ranges goes out (before another record, the thread callback, a return). */
static inline void end_run(struct tc_pt_flow *d)
{
	if (d->nrun) {
		d->ops.emit_ranges(d->ops.ctx, d->run, d->nrun);
		d->given += d->nrun;
		d->nrun = 0;
		d->slot = d->run;
	}
}

/* Every record goes out here (see suppress); ranges are made in d->slot, put by put_range. */
static void put(struct tc_pt_flow *d, const struct tc_rec *r)
{
	time_used(d);
	d->emitted++;
	if (d->suppress) {
		d->suppress--;
		return;
	}
	d->given++;
	end_run(d);
	d->ops.emit(d->ops.ctx, r);
}

#define RUN_LEN 128	/* ranges per run at most */

/* k ranges made at d->slot into the run (at most the run's room left). */
static inline void put_run(struct tc_pt_flow *d, size_t k)
{
	time_used(d);
	d->emitted += k;
	d->slot += k;
	d->nrun += k;
	if (d->nrun == RUN_LEN)
		end_run(d);
}

/* The record made in d->slot goes out, as put. */
static inline void put_range(struct tc_pt_flow *d)
{
	if (d->run && !d->suppress) {
		put_run(d, 1);
		return;
	}
	time_used(d);
	d->emitted++;
	if (d->suppress) {
		d->suppress--;
		return;
	}
	d->given++;
	d->ops.emit(d->ops.ctx, &d->rrec);
}

/* Field by field: a compound literal zeroes the whole record first (rep stos), which was
 * the decoder's most expensive line with two records per block. */
static inline struct tc_rec new_rec(struct tc_pt_flow *d, enum tc_rec_type type)
{
	struct tc_rec r;

	r.type = type;
	r.id = -1;
	r.cpu = d->cpu;
	r.pid = d->pid;
	r.tid = d->tid;
	r.offset = cur_offset(d);
	r.start = r.end = 0;
	r.insns = 0;
	r.isa = TC_ISA_UNKNOWN;
	r.last = 0;
	r.last_type = 0;
	r.last_size = 0;
	r.last_taken = false;
	r.value = 0;
	r.name = r.text = NULL;
	r.has_time = d->time.has_tsc && d->tc.valid;
	r.time = d->time.perf_time;
	r.fields = NULL;
	r.nfields = 0;
	return r;
}

/* Does the caller want records of this type (ops.skip)? */
static inline bool wanted(const struct tc_pt_flow *d, enum tc_rec_type type)
{
	return !(d->ops.skip & (1u << type));
}

/* What reads return may have changed: drop the file sections and what was learnt from
 * them. */
static void check_space(struct tc_pt_flow *d)
{
	uint64_t now;

	if (!d->ops.space || (now = d->ops.space(d->ops.ctx)) == d->space)
		return;
	d->space = now;
	pt_image_remove_by_asid(d->image, NULL);
	tc_pt_walk_cache_forget(d->wcache);
	tc_pt_skim_forget(d->skim);
	d->nsecs = 0;
	if (d->lens)
		memset(d->lens, 0, LEN_CACHE * sizeof(*d->lens));
	d->have_pending = false;
	d->failed_start = UINT64_MAX;
}

static void ask_thread(struct tc_pt_flow *d)
{
	end_run(d);	/* its records are of the thread and address space before */
	if (d->ops.thread)
		d->ops.thread(d->ops.ctx, d->cpu, d->cr3, &d->time, &d->pid, &d->tid);
	check_space(d);
}

static void add_pending(struct tc_pt_flow *d)
{
	const struct tc_pt_flow_span *p = &d->pending;

	if (!d->have_pending)
		return;
	d->have_pending = false;
	int isid = pt_iscache_add_file(d->iscache, p->path, p->offset, p->len, p->start);

	if (isid < 0 || pt_image_add_cached(d->image, d->iscache, isid, NULL) < 0) {
		d->failed_start = p->start;
		return;
	}
	if (tc_grow((void **)&d->secs, &d->capsecs, d->nsecs + 1, sizeof(*d->secs))) {
		d->nsecs = 0;	/* the walk's model is lost: it gives up */
		d->secs_lost = true;
		return;
	}
	d->secs[d->nsecs++] = (struct tc_pt_flow_sec){ isid, p->start, p->start + p->len };
}

/* A new time; tell the caller when it moved on. */
__attribute__((noinline)) static void new_time(struct tc_pt_flow *d, uint64_t tsc)
{
	d->time_watch = false;
	d->time_off = UINT64_MAX;
	d->time.has_tsc = true;
	d->time.tsc = tsc;
	d->time.perf_time = tc_pt_config_tsc_to_perf_time(&d->tc, tsc);
	ask_thread(d);
	if (d->ops.timestamps) {
		struct tc_rec r = new_rec(d, TC_REC_TIMESTAMP);

		r.value = d->time.perf_time;
		put(d, &r);
	}
}

static inline void set_time(struct tc_pt_flow *d, uint64_t tsc)
{
	d->time_watch = false;
	if (!d->time.has_tsc || d->time.tsc != tsc)
		new_time(d, tsc);
}

/* The decoder's time: where its packet reading is, which may be ahead of the flow (with
 * tick events the flow's own time comes from them). */
static inline void decoder_time(struct tc_pt_flow *d)
{
	uint64_t tsc;

	if (d->wq) {
		if (pt_qry_time(d->wq, &tsc, NULL, NULL) >= 0)
			set_time(d, tsc);
		return;
	}
	if (d->dec && pt_blk_time(d->dec, &tsc, NULL, NULL) >= 0 &&
	    /* a side decoder's time starts from an older TSC than the flow may have reached */
	    !(d->dec == d->side && d->time.has_tsc && tsc < d->time.tsc))
		set_time(d, tsc);
}

static inline void update_time(struct tc_pt_flow *d)
{
	if (!d->ops.ticks)	/* with ticks, time comes with events only */
		decoder_time(d);
}

__attribute__((noinline)) static void make_branch(struct tc_pt_flow *d, uint64_t from,
						   uint64_t to, enum tc_isa isa)
{
	struct tc_rec r = new_rec(d, TC_REC_BRANCH);

	r.start = from;
	r.end = to;
	r.isa = isa;
	put(d, &r);
}

/* Counted always, made if wanted (report counts a branch per range and makes none). */
static inline void emit_branch(struct tc_pt_flow *d, uint64_t from, uint64_t to,
			       enum tc_isa isa)
{
	d->st.branches++;
	if (wanted(d, TC_REC_BRANCH))
		make_branch(d, from, to, isa);
}

static void emit_text_at(struct tc_pt_flow *d, enum tc_rec_type type, uint64_t off,
			 const char *text)
{
	struct tc_rec r = new_rec(d, type);

	r.offset = file_off(d, off);
	r.text = text;
	put(d, &r);
}

static void emit_text(struct tc_pt_flow *d, enum tc_rec_type type, const char *text)
{
	struct tc_rec r = new_rec(d, type);

	r.text = text;
	put(d, &r);
}

static void flush_range_at(struct tc_pt_flow *d, uint64_t offset);

static void flush_range(struct tc_pt_flow *d)
{
	if (d->in_range)
		flush_range_at(d, cur_offset(d));
}

/* A range's own fields in its record r (new_rec's less those every range has alike, set in
 * tc_pt_flow_new, and cpu, pid, tid, has_time, time: the flow's). */
static inline void range_fill(struct tc_rec *r, uint64_t offset, uint64_t start, uint64_t end,
			      uint32_t insns, enum tc_isa isa, uint64_t last_ip,
			      enum pt_insn_class last_class)
{
	r->offset = offset;
	r->start = start;
	r->end = end;
	r->insns = insns;
	r->isa = isa;
	r->last_type = (uint8_t)insn_class(last_class);
	r->last_size = last_ip >= start && last_ip < end ? (uint8_t)(end - last_ip) : 0;
	/* a range ends at a conditional jump only when it was taken (or the trace stops) */
	r->last_taken = tc_pt_insn_transfer(last_class) || last_class == ptic_cond_jump;
}

void tc_pt_flow_skim_rec(struct tc_rec *rec, uint64_t buf_offset, const struct tc_pt_skim_range *r)
{
	range_fill(rec, buf_offset + r->offset, r->start, r->end, r->insns, TC_ISA_X86_64, r->last_ip,
		   r->last_class);
}

/* A range's record out (counted, made if wanted): the flow's range in flight
 * (flush_range_at) or one the skim made (skim_range), from the values, not through the
 * flow's fields. */
static inline void range_out(struct tc_pt_flow *d, uint64_t offset, uint64_t start, uint64_t end,
			     uint32_t insns, enum tc_isa isa, uint64_t last_ip,
			     enum pt_insn_class last_class)
{
	struct tc_rec *r;

	d->st.ranges++;
	if (!wanted(d, TC_REC_RANGE))
		return;
	r = d->slot;
	r->cpu = d->cpu;
	r->pid = d->pid;
	r->tid = d->tid;
	r->has_time = d->time.has_tsc && d->tc.valid;
	r->time = d->time.perf_time;
	range_fill(r, offset, start, end, insns, isa, last_ip, last_class);
	put_range(d);
}

/* The range ends, its record at offset (cur_offset). */
static void flush_range_at(struct tc_pt_flow *d, uint64_t offset)
{
	d->in_range = false;
	range_out(d, offset, d->r_start, d->r_end, d->r_insns, d->r_isa, d->last_ip,
		  d->last_class);
}

/* The flow continues at next: the last instruction's branch, if it was taken. A not-taken
 * conditional branch falls through to last_end. */
static inline void flow_to(struct tc_pt_flow *d, uint64_t next)
{
	if (!d->have_last)
		return;
	if (tc_pt_insn_transfer(d->last_class) ||
	    (d->last_class != ptic_other && next != d->last_end))
		emit_branch(d, d->last_ip, next, d->last_isa);
	d->have_last = false;
}

/* The flow stops (trace end, error, overflow): perf's "to 0". */
static void flow_stop(struct tc_pt_flow *d)
{
	flush_range(d);
	if (d->have_last)
		emit_branch(d, d->last_ip, 0, d->last_isa);
	d->have_last = false;
}

/* Class of an instruction libipt did not classify (an indirect or far transfer, or the
 * end of a block cut short), from its bytes. */
static enum pt_insn_class classify_kind(enum tc_x86_kind k)
{
	switch (k) {
	case TC_X86_JCC: return ptic_cond_jump;
	case TC_X86_JMP: case TC_X86_IJMP: return ptic_jump;
	case TC_X86_CALL: case TC_X86_ICALL: return ptic_call;
	case TC_X86_RET: return ptic_return;
	case TC_X86_FAR_JMP: return ptic_far_jump;
	case TC_X86_FAR_CALL: case TC_X86_SYSCALL: case TC_X86_INT: case TC_X86_INTO:
		return ptic_far_call;
	case TC_X86_FAR_RET: case TC_X86_SYSRET: return ptic_far_return;
	default: return ptic_other;
	}
}

/* Size and class of the block's last instruction; false if its bytes cannot be read. */
static bool last_insn(struct tc_pt_flow *d, const struct pt_block *b, unsigned *size,
		      enum pt_insn_class *iclass)
{
	struct len_entry none = { 0 }, *c = &none;
	uint8_t buf[16];
	size_t n;

	if (d->walk) {
		*size = d->wsize;
		*iclass = d->wclass;
		return true;
	}
	/* the cache comes with the first block: a queue that never decodes one costs little
	 * (without memory for it, every length is read) */
	if (!d->lens && !d->ops.reference)
		d->lens = calloc(LEN_CACHE, sizeof(*d->lens));
	if (d->lens)
		c = &d->lens[(b->end_ip ^ b->end_ip >> 12) & (LEN_CACHE - 1)];

	if (b->truncated) {
		*size = b->size;
		*iclass = b->iclass != ptic_error ? b->iclass :
			  classify_kind(tc_x86_classify(d->x86, b->raw, b->size,
							b->mode == ptem_64bit).kind);
		return true;
	}
	if (!c->valid || c->ip != b->end_ip || c->mode != b->mode) {
		uint64_t cr3 = d->cr3;
		struct tc_x86_insn k;

		n = d->ops.read(d->ops.ctx, d->cpu, cr3, b->end_ip, buf, sizeof(buf));
		if (!n)
			return false;
		k = tc_x86_classify(d->x86, buf, n, b->mode == ptem_64bit);
		if (!(*size = k.len))
			return false;
		*c = (struct len_entry){ .ip = b->end_ip, .size = (uint8_t)*size,
			.iclass = (uint8_t)classify_kind(k.kind), .mode = (uint8_t)b->mode,
			.valid = 1 };
	}
	*size = c->size;
	*iclass = b->iclass != ptic_error ? b->iclass : (enum pt_insn_class)c->iclass;
	return true;
}

/* A block: instructions in sequence, only the last may branch (direct calls and jumps end
 * blocks too: end_on_call, end_on_jump). */
static void on_block(struct tc_pt_flow *d, const struct pt_block *b)
{
	enum tc_isa isa = isa_of(b->mode);
	enum pt_insn_class iclass;
	unsigned size;

	if (!last_insn(d, b, &size, &iclass)) {
		/* libipt decoded bytes we cannot: a range still covers its instructions */
		size = 1;
		iclass = b->iclass != ptic_error ? b->iclass : ptic_other;
	}
	d->st.insns += b->ninsn;
	if (d->in_range &&
	    (b->ip != d->r_end || tc_pt_insn_transfer(d->last_class) || isa != d->r_isa)) {
		if (d->wq && d->scan_off == UINT64_MAX) {
			/* update_time and flush_range on the walk: one offset for both */
			uint64_t off = 0, tsc;
			bool known = pt_qry_get_offset(d->wq, &off) >= 0;

			if (!d->ops.ticks && (!known || off != d->time_off)) {
				if (pt_qry_time(d->wq, &tsc, NULL, NULL) >= 0)
					set_time(d, tsc);	/* a new time: time_off unset */
				d->time_off = known ? off : UINT64_MAX;
			}
			flush_range_at(d, file_off(d, off));
		} else {
			update_time(d);
			flush_range(d);
		}
	}
	flow_to(d, b->ip);
	if (!d->in_range) {
		d->in_range = true;
		d->r_start = b->ip;
		d->r_insns = 0;
		d->r_isa = isa;
	}
	d->r_end = b->end_ip + size;
	d->r_insns += b->ninsn;
	d->have_last = true;
	d->last_ip = b->end_ip;
	d->last_end = d->r_end;
	d->last_class = iclass;
	d->last_isa = isa;
}

static void other(struct tc_pt_flow *d, const char *name, uint64_t value)
{
	struct tc_rec r;

	if (!d->ops.events)
		return;
	r = new_rec(d, TC_REC_OTHER);
	r.name = name;
	r.value = value;
	put(d, &r);
}

static void on_event(struct tc_pt_flow *d, const struct pt_event *ev)
{
	if (__builtin_expect(d->want_first, 0)) {
		switch (ev->type) {
		case ptev_exec_mode: case ptev_paging: case ptev_async_paging: case ptev_cbr:
		case ptev_mnt: case ptev_vmcs: case ptev_async_vmcs: case ptev_pwre:
		case ptev_pwrx: case ptev_exstop: case ptev_mwait:
			break;
		default:
			d->first_to->bad = true;
		}
	}
	/* The event's own time (the decoder may have read ahead): the caller's thread and
	 * address space follow it before any code is read. */
	if (ev->has_tsc)
		set_time(d, ev->tsc);
	switch (ev->type) {
	case ptev_enabled:
		flow_stop(d);
		emit_branch(d, 0, ev->variant.enabled.ip, TC_ISA_UNKNOWN);
		break;
	case ptev_disabled:
		/* perf's convention: a TIP.PGD with an IP is a branch out to that IP. */
		flush_range(d);
		if (d->have_last)
			emit_branch(d, d->last_ip, ev->ip_suppressed ? 0 : ev->variant.disabled.ip,
				    d->last_isa);
		d->have_last = false;
		break;
	case ptev_async_disabled:
		flush_range(d);
		flow_to(d, ev->variant.async_disabled.at);
		emit_branch(d, ev->variant.async_disabled.at, 0, d->last_isa);
		break;
	case ptev_async_branch:
		flush_range(d);
		flow_to(d, ev->variant.async_branch.from);
		emit_branch(d, ev->variant.async_branch.from,
			    ev->ip_suppressed ? 0 : ev->variant.async_branch.to, d->last_isa);
		break;
	case ptev_overflow:
		flow_stop(d);
		d->st.overflows++;
		emit_text(d, TC_REC_LOST, "trace overflow (OVF): the CPU dropped trace");
		if (!ev->ip_suppressed)
			emit_branch(d, 0, ev->variant.overflow.ip, TC_ISA_UNKNOWN);
		break;
	case ptev_paging:
		d->cr3 = ev->variant.paging.cr3;
		ask_thread(d);
		break;
	case ptev_async_paging:
		d->cr3 = ev->variant.async_paging.cr3;
		ask_thread(d);
		break;
	case ptev_stop:
		flow_stop(d);
		other(d, "stop", 0);
		break;
	case ptev_tsx:
		other(d, ev->variant.tsx.aborted ? "tsx.abort" : "tsx",
		      ev->variant.tsx.speculative);
		break;
	case ptev_vmcs:
		other(d, "vmcs", ev->variant.vmcs.base);
		break;
	case ptev_async_vmcs:
		other(d, "vmcs", ev->variant.async_vmcs.base);
		break;
	case ptev_exstop:
		other(d, "exstop", ev->variant.exstop.ip);
		break;
	case ptev_mwait:
		other(d, "mwait", ev->variant.mwait.hints);
		break;
	case ptev_pwre:
		other(d, "pwre", ev->variant.pwre.state);
		break;
	case ptev_pwrx:
		other(d, "pwrx", ev->variant.pwrx.deepest);
		break;
	case ptev_ptwrite:
		other(d, "ptwrite", ev->variant.ptwrite.payload);
		break;
	case ptev_cbr:
		other(d, "cbr", ev->variant.cbr.ratio);
		break;
	case ptev_mnt:
		other(d, "mnt", ev->variant.mnt.payload);
		break;
	default:
		/* exec_mode: each instruction carries its mode; tick: its time, set above */
		break;
	}
}

/* libipt's memory callback: bytes come from the caller. */
static int read_mem(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip,
		    void *ctx)
{
	struct tc_pt_flow *d = ctx;
	uint64_t cr3 = asid && asid->cr3 != pt_asid_no_cr3 ? asid->cr3 : TC_PT_FLOW_NO_CR3;
	struct tc_pt_flow_span *p = &d->pending;
	size_t n;

	/* No section here yet: name the file to map, if the caller knows one. */
	if (d->ops.span && !d->have_pending && !d->ops.span(d->ops.ctx, d->cpu, cr3, ip, p) &&
	    p->start != d->failed_start && ip >= p->start && ip - p->start < p->len)
		d->have_pending = true;
	n = d->ops.read(d->ops.ctx, d->cpu, cr3, ip, buf, size);
	if (!n)
		return -pte_nomap;
	return (int)(n < size ? n : size);
}

static void free_decoders(struct tc_pt_flow *d)
{
	if (d->main)
		pt_blk_free_decoder(d->main);
	if (d->side)
		pt_blk_free_decoder(d->side);
	if (d->scan)
		pt_pkt_free_decoder(d->scan);
	if (d->peek)
		pt_pkt_free_decoder(d->peek);
	tc_pt_walk_free(d->walk);
	d->walk = NULL;
	d->wq = NULL;
	d->time_off = UINT64_MAX;
	d->dec = d->main = d->side = NULL;
	d->scan = d->peek = NULL;
	d->scanning = false;
	d->scan_off = UINT64_MAX;
}

struct tc_pt_flow *tc_pt_flow_new(const struct pt_config *base, const struct tc_pt_time_conv *tc,
			  int cpu, const struct tc_pt_flow_ops *ops, struct tc_err *e)
{
	struct tc_pt_flow *d;

	if (!ops || !ops->read || !ops->emit) {
		tc_err_set(e, EINVAL, "Intel PT flow decoder needs read and emit callbacks");
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		tc_err_set(e, ENOMEM, "out of memory");
		return NULL;
	}
	if (base)
		d->base = *base;
	else
		pt_config_init(&d->base);
	if (tc)
		d->tc = *tc;
	d->ops = *ops;
	if (ops->reference)
		d->ops.skip = 0;	/* every record made, as before the fast path */
	d->cpu = cpu;
	d->pid = d->tid = -1;
	d->cr3 = TC_PT_FLOW_NO_CR3;
	d->failed_start = UINT64_MAX;
	d->scan_off = UINT64_MAX;
	d->time_off = UINT64_MAX;
	d->rrec = new_rec(d, TC_REC_RANGE);
	d->rrec.last = 'E';
	if (ops->emit_ranges) {
		if (!(d->run = malloc(RUN_LEN * sizeof(*d->run)))) {
			tc_err_set(e, ENOMEM, "out of memory");
			tc_pt_flow_free(d);
			return NULL;
		}
		for (size_t i = 0; i < RUN_LEN; i++)
			d->run[i] = d->rrec;
	}
	d->slot = d->run ? d->run : &d->rrec;
	d->image = pt_image_alloc("tracectl");
	d->iscache = ops->iscache ? ops->iscache : pt_iscache_alloc("tracectl");
	d->x86 = ops->x86 ? ops->x86 : tc_x86_new();
	d->sync_at = d->stop_at = UINT64_MAX;
	d->join = d->cont_next = UINT64_MAX;
	if (!d->image || !d->iscache || !d->x86 ||
	    (!ops->iscache && pt_iscache_set_limit(d->iscache, ISCACHE_LIMIT) < 0) ||
	    pt_image_set_callback(d->image, read_mem, d) < 0) {
		tc_err_set(e, ENOMEM, "cannot set up libipt's traced image");
		tc_pt_flow_free(d);
		return NULL;
	}
	return d;
}

void tc_pt_flow_free(struct tc_pt_flow *d)
{
	if (!d)
		return;
	free_decoders(d);
	free(d->side_buf);
	if (d->image)
		pt_image_free(d->image);
	tc_pt_walk_cache_free(d->wcache);
	tc_pt_skim_free(d->skim);
	free(d->secs);
	free(d->smiss);
	if (d->iscache && d->iscache != d->ops.iscache)
		pt_iscache_free(d->iscache);
	free(d->lens);
	free(d->run);
	if (d->x86 != d->ops.x86)
		tc_x86_free(d->x86);
	free(d->kept);
	free(d->tail);
	free(d->jmap);
	tc_pt_flow_free(d->ref);
	free(d);
}

const struct tc_pt_flow_stats *tc_pt_flow_stats(const struct tc_pt_flow *d)
{
	if (d->ref)
		return tc_pt_flow_stats(d->ref);
	return &d->st;
}

/* The decoder that goes on: the walk or libipt's block decoder. */
static int blk_sync_forward(struct tc_pt_flow *d)
{
	if (d->walk) {
		tc_pt_walk_set_cr3(d->walk, d->walk_cr3 = d->cr3);
		return tc_pt_walk_sync_set(d->walk, d->sync_at);
	}
	return pt_blk_sync_forward(d->dec);
}

static int blk_sync_offset(struct tc_pt_flow *d, uint64_t *off)
{
	return d->walk ? tc_pt_walk_sync_offset(d->walk, off) : pt_blk_get_sync_offset(d->dec, off);
}

static int blk_offset(struct tc_pt_flow *d, uint64_t *off)
{
	return d->wq ? pt_qry_get_offset(d->wq, off) : pt_blk_get_offset(d->dec, off);
}

static int blk_time(struct tc_pt_flow *d, uint64_t *tsc)
{
	return d->wq ? pt_qry_time(d->wq, tsc, NULL, NULL) : pt_blk_time(d->dec, tsc, NULL, NULL);
}

static int blk_next(struct tc_pt_flow *d, struct pt_block *b)
{
	if (d->walk) {
		if (d->cr3 != d->walk_cr3)
			tc_pt_walk_set_cr3(d->walk, d->walk_cr3 = d->cr3);
		return tc_pt_walk_next(d->walk, b, &d->wsize, &d->wclass);
	}
	return pt_blk_next(d->dec, b, sizeof(*b));
}

static int blk_event(struct tc_pt_flow *d, struct pt_event *ev)
{
	if (d->walk) {
		if (d->cr3 != d->walk_cr3)
			tc_pt_walk_set_cr3(d->walk, d->walk_cr3 = d->cr3);
		return tc_pt_walk_event(d->walk, ev);
	}
	return pt_blk_event(d->dec, ev, sizeof(*ev));
}

/* Find the next PSB at or after the decoder's position. Returns its libipt status, or a
 * negative error once there is none (the bytes to the end then count as unsynced). */
static int sync(struct tc_pt_flow *d, size_t len, uint64_t from, uint64_t *last_sync)
{
	char msg[160];
	uint64_t s;
	int ret;

	for (;;) {
		ret = blk_sync_forward(d);
		add_pending(d);
		if (ret == TC_PT_WALK_FALLBACK)
			return ret;
		if (ret >= 0 && blk_sync_offset(d, &s) >= 0 &&
		    (*last_sync == UINT64_MAX || s > *last_sync)) {
			d->st.syncs++;
			if (s > from && !(*last_sync == UINT64_MAX && d->going_on)) {
				d->st.unsynced_bytes += s - from;
				if (*last_sync == UINT64_MAX) {
					snprintf(msg, sizeof(msg), "%" PRIu64 " bytes before the "
						 "first PSB skipped", s - from);
					emit_text_at(d, TC_REC_NO_SYNC, from, msg);
				}
			}
			*last_sync = s;
			/* The PSB+ gave the time: the caller's side-band is due before code reads. */
			decoder_time(d);
			ask_thread(d);
			return ret;
		}
		if (ret >= 0 || ret == -pte_eos) {
			/* a PSB+ at the end of a buffer the tail goes on from: that synchronises */
			if (*last_sync == UINT64_MAX && d->join != UINT64_MAX && !d->phase)
				return -pte_eos;
			if (*last_sync == UINT64_MAX) {
				snprintf(msg, sizeof(msg), "no PSB in %zu bytes of trace", len);
				emit_text_at(d, TC_REC_NO_SYNC, 0, msg);
			}
			d->st.unsynced_bytes += len > from ? len - from : 0;
			return ret >= 0 ? -pte_eos : ret;
		}
		/* The PSB+ itself was bad: say so, and look further if libipt moved on. */
		{
			struct tc_rec r = new_rec(d, TC_REC_ERROR);
			uint64_t off = 0;

			snprintf(msg, sizeof(msg), "sync: %s", pt_errstr(pt_errcode(ret)));
			r.text = msg;
			put(d, &r);
			d->st.errors++;
			if (blk_offset(d, &off) < 0 ||
			    (*last_sync != UINT64_MAX && off <= *last_sync) || off <= from) {
				d->st.unsynced_bytes += len > from ? len - from : 0;
				return ret;
			}
			d->st.unsynced_bytes += off - from;
			from = off;
		}
	}
}

/* Direct jumps need no trace, so an image with a jump cycle (or one that does not match the
 * trace) would keep libipt executing forever on the same packet. No real flow runs this many
 * instructions without a conditional or indirect branch consuming trace. */
#define MAX_INSNS_PER_OFFSET 100000
#define ST_ENDLESS (-10000)
#define ST_PAUSE (-10001)
#define ST_HANDOVER (-10002)
#define ST_JOINED (-10003)

/* A status update read past the phase's join PSB (tc_pt_flow_follow): that PSB+'s, where
 * the flow is at its IP, as a decode from the PSB starts; the decode that goes on from
 * there takes it. (Other events may come with the decoder past it: tick events of timing
 * packets before it, read ahead. The phase's bytes end with that PSB+: with trace off
 * there, nothing past it is decoded, and the phase ends at their end.) */
static bool past_join(struct tc_pt_flow *d)
{
	uint64_t off;

	if ((!d->wq && !d->dec) || blk_offset(d, &off) < 0)
		return false;
	return (d->wq ? off : buf_offset(d, off)) > d->join;
}

/* Would this perf time pass the run's until? Then keep the event or block for the next run
 * (perf time of a TSC value: after the caller's until, nothing of it may come out yet). */
static bool passes_until(struct tc_pt_flow *d, bool has_tsc, uint64_t tsc)
{
	if (d->until == UINT64_MAX || !has_tsc)
		return false;
	d->held_time = tc_pt_config_tsc_to_perf_time(&d->tc, tsc);
	return d->held_time > d->until;
}

/* A status update read past stop_at: the next segment's PSB+ (see tc_pt_flow_stop_at). */
static bool past_stop(struct tc_pt_flow *d)
{
	uint64_t off;

	if (!d->wq || !d->held_ev.status_update || pt_qry_get_offset(d->wq, &off) < 0 ||
	    off + d->jbase <= d->stop_at)
		return false;
	d->stop_at = UINT64_MAX;
	d->want_first = true;	/* the state at the next block, for the join */
	d->first_to = &d->after;
	d->after.done = d->after.bad = false;
	return true;
}

static void take_first(struct tc_pt_flow *d)
{
	struct tc_pt_flow_join *j = d->first_to;

	d->want_first = false;
	/* A segment's flow took its time at its PSB+, the flow before it at the status
	 * update there or at this block (its range in flight ended), the decoder maybe
	 * further on (an MTC after PSBEND): the segment's now the decoder's, its side-band
	 * checked to there (ops.thread). The next range's end or event sets the time again
	 * whatever it was (time_off: the range's end keeps it only where the decoder has not
	 * moved on): the join takes a time before the decoder's for the flow before it,
	 * unless a record came first (time_used). With ticks the events' time is all there
	 * is, the segment's as the flow's before it. */
	if (j == &d->first && d->wq && !d->ops.ticks) {
		decoder_time(d);
		d->time_watch = true;
		j->time_used = false;
	}
	j->done = true;
	j->in_range = d->in_range;
	j->have_last = d->have_last;
	j->r_start = d->r_start;
	j->r_end = d->r_end;
	j->r_insns = d->r_insns;
	j->r_isa = d->r_isa;
	j->last_ip = d->last_ip;
	j->last_end = d->last_end;
	j->last_class = d->last_class;
	j->last_isa = d->last_isa;
	j->pid = d->pid;
	j->tid = d->tid;
	j->cr3 = d->cr3;
	j->has_tsc = d->time.has_tsc;
	j->tsc = d->time.tsc;
	j->ticks = d->ops.ticks;
	j->emitted = d->emitted;
	j->st = d->st;
	j->walk = d->walk != NULL;
	if (d->walk)
		tc_pt_walk_state(d->walk, &j->w);
}

static void take_block(struct tc_pt_flow *d, const struct pt_block *b, uint64_t *at,
		       enum pt_exec_mode *mode, unsigned long *same)
{
	/* On errors libipt gives the block up to there: the flow stopped after its last
	 * instruction, or at its start when it is empty. */
	*mode = b->mode;
	if (b->ninsn) {
		on_block(d, b);
		*same += b->ninsn;
		*at = d->r_end;
	} else {
		*at = b->ip;
	}
}

/* The walk's ST_ENDLESS check without an offset query at every block (a tenth of its
 * cost): n counts the run's instructions; low is a lower bound of n where the current
 * offset began (exact where queries at consecutive blocks saw it change). While n - low <=
 * MAX_INSNS_PER_OFFSET / 2 the block decoder's check, which counts from there, cannot
 * fire: no query. Past that a query at every block; the check fires once n - low passes
 * MAX_INSNS_PER_OFFSET, at or before the block where the block decoder's would (rarely
 * where it would not): the walk gives up there and the block decoder checks exactly. */
struct walk_check {
	unsigned long low, qn;	/* lower bound; n at the last query */
	uint64_t qoff;		/* the offset at the last query */
	uint64_t top, qtop;	/* blocks: now, at the last query */
	bool have_q;
};

static bool walk_endless(struct tc_pt_flow *d, struct walk_check *c, unsigned long n)
{
	uint64_t off;

	c->top++;
	if (n - c->low <= MAX_INSNS_PER_OFFSET / 2)
		return false;
	if (pt_qry_get_offset(d->wq, &off) < 0)
		off = c->qoff;	/* as the block decoder's check: no change seen */
	if (!c->have_q || off != c->qoff) {
		/* changed at this block, or (queries skipped) after the last query */
		if (c->have_q && c->qtop + 1 == c->top)
			c->low = n;
		else if (c->have_q && c->qn > c->low)
			c->low = c->qn;
		c->qoff = off;
	}
	c->have_q = true;
	c->qtop = c->top;
	c->qn = n;
	return n - c->low > MAX_INSNS_PER_OFFSET;
}

/* Decode from the current sync point until an error, the end of the buffer, or a time past
 * d->until. Returns libipt's final (negative) status, ST_ENDLESS or ST_PAUSE (d->status and
 * d->held say where to resume); *at is where the flow stopped (the next instruction's IP; for
 * ST_ENDLESS one in the loop) and *mode its mode. */
static int decode_run(struct tc_pt_flow *d, int status, uint64_t *at, enum pt_exec_mode *mode)
{
	uint64_t off, last_off = UINT64_MAX, tsc;
	unsigned long same = 0;
	struct walk_check wc;
	bool stop;

	*at = 0;
	*mode = ptem_unknown;
	if (d->held == HELD_EVENT)
		on_event(d, &d->held_ev);
	else if (d->held == HELD_BLOCK)
		take_block(d, &d->held_blk, at, mode, &same);
	d->held = HELD_NONE;
	/* the walk counts on in same; the offset begins at the first block */
	wc = (struct walk_check){ .low = same };
	while (status >= 0) {
		if (__builtin_expect(d->ops.segment, 0) &&
		    atomic_load_explicit(&d->abort, memory_order_relaxed))
			return TC_PT_WALK_FALLBACK;	/* run() gives up */
		if (d->wq) {
			if (walk_endless(d, &wc, same)) {
				*at = d->last_ip;
				return ST_ENDLESS;
			}
		} else if (blk_offset(d, &off) == 0 && off != last_off) {
			last_off = off;
			same = 0;
		} else if (same > MAX_INSNS_PER_OFFSET) {
			*at = d->last_ip;	/* in the loop */
			return ST_ENDLESS;
		}
		while (status & pts_event_pending) {
			status = blk_event(d, &d->held_ev);
			add_pending(d);
			if (status < 0)
				return status;
			if (__builtin_expect(d->join != UINT64_MAX, 0) && d->held_ev.status_update &&
			    past_join(d))
				return ST_JOINED;
			/* the side decoder at the PSB+ its copy ends with: the main decoder goes on
			 * from that PSB (and gives its status events) */
			if (d->dec && d->dec == d->side && d->side_psb &&
			    d->held_ev.status_update &&
			    pt_blk_get_offset(d->dec, &off) == 0 && off >= d->side_len)
				return ST_HANDOVER;
			/* both asked: a stop at the status update a time pause holds (the lanes'
			 * tail) would not be asked again when it is taken */
			stop = d->stop_at != UINT64_MAX && past_stop(d);
			if (passes_until(d, d->held_ev.has_tsc, d->held_ev.tsc) || stop) {
				d->held = HELD_EVENT;
				d->status = status;
				return ST_PAUSE;
			}
			on_event(d, &d->held_ev);
		}
		status = blk_next(d, &d->held_blk);
		add_pending(d);
		if (d->held_blk.ninsn && d->until != UINT64_MAX && !d->ops.ticks &&
		    blk_time(d, &tsc) >= 0 && passes_until(d, true, tsc)) {
			d->held = HELD_BLOCK;
			d->status = status;
			return ST_PAUSE;
		}
		take_block(d, &d->held_blk, at, mode, &same);
		if (__builtin_expect(d->want_first, 0) && d->held_blk.ninsn) {
			take_first(d);
			if (d->step_block && status >= 0) {
				d->step_block = false;
				d->status = status;
				return ST_PAUSE;
			}
		}
	}
	return status;
}

/* Resuming after an error or a stop without code, as perf does: not at the next PSB but at
 * the next packet that says where the flow is. The packets are followed from the last PSB
 * (IP compression makes an IP relative to the last one, whatever the flow did), so every
 * TIP's IP is known, not only the uncompressed ones perf waits for:
 * - TIP, TIP.PGE: the flow is at its IP (from 0, or from a FUP's IP: an asynchronous branch);
 * - FUP then TIP.PGD: the flow stopped at the FUP's IP; FUP after OVF: trace resumed there;
 * - PSB: the main decoder synchronises there.
 * Each branch found is emitted; where its target has code, a side decoder takes over: libipt
 * synchronises only on a PSB, so it gets a copy of the stretch up to the next PSB behind a
 * PSB+ written here (the last PIP, TSC, TMA, CBR and MODE.Exec seen, and a FUP with the
 * IP). Its end hands over to the main decoder at that PSB, with the flow going on. */

static void scan_reset(struct tc_pt_flow *d)
{
	memset(&d->sc, 0, sizeof(d->sc));
	d->sc.mode = ptem_64bit;
}

static uint64_t packet_ip(uint64_t last, const struct pt_packet_ip *p)
{
	switch (p->ipc) {
	case pt_ipc_update_16:
		return (last & ~0xffffULL) | (p->ip & 0xffffULL);
	case pt_ipc_update_32:
		return (last & ~0xffffffffULL) | (p->ip & 0xffffffffULL);
	case pt_ipc_update_48:
		return (last & ~0xffffffffffffULL) | (p->ip & 0xffffffffffffULL);
	case pt_ipc_sext_48:
		return (p->ip & (1ULL << 47)) ? p->ip | ~0xffffffffffffULL : p->ip & 0xffffffffffffULL;
	default:
		return p->ip;
	}
}

static void keep_raw(struct tc_pt_flow *d, uint8_t *dst, size_t cap, uint8_t *n, uint64_t at,
		     int size)
{
	if (size <= 0 || (size_t)size > cap || at + (size_t)size > d->len)
		return;
	memcpy(dst, d->buf + at, (size_t)size);
	*n = (uint8_t)size;
}

/* The next packet, applied to the state IP compression, time and the address space need;
 * its size, or libipt's error. *at is its buffer offset. */
static int scan_next(struct tc_pt_flow *d, struct pt_packet *p, uint64_t *at)
{
	int size;

	if (pt_pkt_get_offset(d->scan, at) < 0)
		return -pte_nosync;
	size = pt_pkt_next(d->scan, p, sizeof(*p));
	if (size < 0)
		return size;
	switch (p->type) {
	case ppt_psb:
		scan_reset(d);
		d->sc.in_psb = true;
		break;
	case ppt_psbend:
		d->sc.in_psb = false;
		break;
	case ppt_fup:
	case ppt_tip:
	case ppt_tip_pge:
	case ppt_tip_pgd:
		if (p->payload.ip.ipc != pt_ipc_suppressed)
			d->sc.last_ip = packet_ip(d->sc.last_ip, &p->payload.ip);
		break;
	case ppt_mode:
		if (p->payload.mode.leaf == pt_mol_exec) {
			d->sc.mode = pt_get_exec_mode(&p->payload.mode.bits.exec);
			keep_raw(d, d->sc.mode_exec, sizeof(d->sc.mode_exec), &d->sc.nmode_exec, *at,
				 size);
		}
		break;
	case ppt_pip:
		keep_raw(d, d->sc.pip, sizeof(d->sc.pip), &d->sc.npip, *at, size);
		break;
	case ppt_tsc:
		keep_raw(d, d->sc.tsc, sizeof(d->sc.tsc), &d->sc.ntsc, *at, size);
		d->sc.have_tsc = true;
		d->sc.have_tma = false;
		d->sc.now = d->sc.tsc_base = p->payload.tsc.tsc;
		break;
	case ppt_tma:
		keep_raw(d, d->sc.tma, sizeof(d->sc.tma), &d->sc.ntma, *at, size);
		if (d->sc.have_tsc) {
			d->sc.have_tma = true;
			d->sc.ctc_base = d->sc.ctc = p->payload.tma.ctc;
			d->sc.fc = p->payload.tma.fc;
		}
		break;
	case ppt_mtc:
		/* the CTC's bits mtc_freq..mtc_freq+7; the TSC at the TMA's CTC is the TSC
		 * packet's less the fast counter; CTC to TSC by CPUID 0x15's EBX/EAX */
		if (d->sc.have_tma && d->base.cpuid_0x15_eax && d->base.mtc_freq < 40) {
			uint64_t mask = (1ULL << (d->base.mtc_freq + 8)) - 1;
			uint64_t to = (uint64_t)p->payload.mtc.ctc << d->base.mtc_freq;
			uint64_t t;

			d->sc.ctc += (to - (d->sc.ctc & mask)) & mask;
			t = d->sc.tsc_base - d->sc.fc + (d->sc.ctc - d->sc.ctc_base) *
			    d->base.cpuid_0x15_ebx / d->base.cpuid_0x15_eax;
			if (t > d->sc.now)
				d->sc.now = t;
		}
		break;
	case ppt_cbr:
		keep_raw(d, d->sc.cbr, sizeof(d->sc.cbr), &d->sc.ncbr, *at, size);
		break;
	default:
		break;
	}
	return size;
}

static const uint8_t psb_bytes[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
				       0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };

static struct pt_block_decoder *new_decoder(struct tc_pt_flow *d, const uint8_t *buf, size_t len)
{
	struct pt_config cfg = d->base;
	struct pt_block_decoder *dec;

	/* libipt never writes through begin/end; its config just isn't const. */
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	cfg.flags.variant.block.end_on_call = 1;
	cfg.flags.variant.block.end_on_jump = 1;
	cfg.flags.variant.block.enable_tick_events = d->ops.ticks;
	dec = pt_blk_alloc_decoder(&cfg);
	if (dec && pt_blk_set_image(dec, d->image) < 0) {
		pt_blk_free_decoder(dec);
		dec = NULL;
	}
	return dec;
}

/* Where the PSB+ at buffer offset at ends (past its PSBEND); at itself if it cannot be read. */
static uint64_t psb_plus_end(struct tc_pt_flow *d, uint64_t at)
{
	struct pt_packet p;
	uint64_t off;

	if (!d->peek || pt_pkt_sync_set(d->peek, at) < 0)
		return at;
	while (pt_pkt_next(d->peek, &p, sizeof(p)) >= 0) {
		if (p.type == ppt_psbend)
			return pt_pkt_get_offset(d->peek, &off) < 0 ? at : off;
		if (p.type == ppt_invalid || p.type == ppt_tnt_8 || p.type == ppt_tnt_64 ||
		    p.type == ppt_tip)
			break;
	}
	return at;
}

/* A side decoder from buffer offset from (just after the packet that gave ip) to the next
 * PSB, starting at ip. The copy takes in that PSB+ too: libipt, as over the whole buffer,
 * then ends the flow's last block at the PSB+'s IP to give its status events, where
 * decode_run hands over to the main decoder; without it, the side decoder would go on past
 * that IP, through code that needs no trace, to where its trace ends. Its libipt status,
 * or a negative error (then the scan goes on). */
static int side_start(struct tc_pt_flow *d, uint64_t from, uint64_t ip)
{
	const uint8_t *psb = from < d->len ? memmem(d->buf + from, d->len - from, psb_bytes,
						    sizeof(psb_bytes)) : NULL;
	uint64_t end = psb ? (uint64_t)(psb - d->buf) : d->len;
	uint64_t copy_end = psb ? psb_plus_end(d, end) : d->len;
	size_t need = sizeof(psb_bytes) + sizeof(d->sc.pip) + sizeof(d->sc.tsc) +
		      sizeof(d->sc.tma) + sizeof(d->sc.cbr) + sizeof(d->sc.mode_exec) + 9 + 2 +
		      (copy_end - from), n = 0;
	uint8_t *b;
	int ret;

	if (need > d->side_cap) {
		b = realloc(d->side_buf, need);
		if (!b)
			return -pte_nomem;
		d->side_buf = b;
		d->side_cap = need;
	}
	b = d->side_buf;
	memcpy(b, psb_bytes, sizeof(psb_bytes));
	n = sizeof(psb_bytes);
#define PUT(f) (memcpy(b + n, d->sc.f, d->sc.n##f), n += d->sc.n##f)
	PUT(pip);
	PUT(tsc);
	PUT(tma);
	PUT(cbr);
	PUT(mode_exec);
#undef PUT
	b[n++] = 0xdd;	/* FUP, IPBytes 110: the whole 8-byte IP */
	for (int i = 0; i < 8; i++)
		b[n++] = (uint8_t)(ip >> (8 * i));
	b[n++] = 0x02;	/* PSBEND */
	b[n++] = 0x23;
	d->side_hdr = n;
	memcpy(b + n, d->buf + from, copy_end - from);
	n += copy_end - from;
	d->side_len = n;
	d->side_psb = copy_end > end;

	if (d->side)
		pt_blk_free_decoder(d->side);
	d->side = new_decoder(d, b, n);
	if (!d->side) {
		d->dec = d->main;
		return -pte_nomem;
	}
	d->dec = d->side;
	d->side_base = from;
	d->side_end = end;
	ret = pt_blk_sync_forward(d->side);
	add_pending(d);
	if (ret < 0) {
		d->dec = d->main;
		return ret;
	}
	decoder_time(d);
	ask_thread(d);
	return ret;
}

/* The main decoder on the PSB at buffer offset at. */
static int sync_main(struct tc_pt_flow *d, uint64_t at)
{
	int ret;

	d->dec = d->main;
	ret = pt_blk_sync_set(d->main, at);
	add_pending(d);
	if (ret < 0)
		return ret;
	d->last_sync = at;
	d->st.syncs++;
	decoder_time(d);
	ask_thread(d);
	return ret;
}

static bool has_code(struct tc_pt_flow *d, uint64_t ip)
{
	uint8_t b;

	return d->ops.read(d->ops.ctx, d->cpu, d->cr3, ip, &b, 1) > 0;
}

static void scan_error(struct tc_pt_flow *d, const char *what, int err)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "%s: %s", what, pt_errstr(pt_errcode(err)));
	emit_text(d, TC_REC_ERROR, msg);
	d->st.errors++;
}

/* A branch found in the packets: from (0: unknown) to ip, where the flow goes on. Where ip has
 * code, a side decoder takes over at buffer offset next (the packets after the one that gave
 * ip): 0 and d->status set; else negative, and the scan goes on. */
static int goto_target(struct tc_pt_flow *d, uint64_t from, uint64_t ip, uint64_t next)
{
	int ret;

	emit_branch(d, from, ip, isa_of(d->sc.mode));
	if (!has_code(d, ip)) {
		struct tc_rec r = new_rec(d, TC_REC_ADDR_NACC);

		/* not a new stop: the caller counts where the flow went */
		r.start = ip;
		r.isa = isa_of(d->sc.mode);
		r.value = 1;
		r.text = "no image at this address";
		put(d, &r);
		return -1;
	}
	ret = side_start(d, next, ip);
	if (ret < 0) {
		scan_error(d, "resume", ret);
		return -1;
	}
	d->scan_off = UINT64_MAX;
	d->scanning = false;
	d->status = ret;
	return 0;
}

/* Follow the packets from d->scan_from for where the flow goes on (see above). Sets d->status
 * to the status of the decoder that takes over, or a negative one when the buffer ends first;
 * ST_PAUSE when a TSC passes until (the scan resumes at the next run). */
static int resume(struct tc_pt_flow *d)
{
	struct pt_packet p;
	uint64_t at, from;
	int size, ret;

	if (d->scan_tsc_due) {
		d->scan_tsc_due = false;
		set_time(d, d->scan_tsc);
	}
	for (;;) {
		size = scan_next(d, &p, &at);
		d->scan_off = at;
		if (size < 0) {
			if (size == -pte_eos)
				break;
			/* a packet libipt cannot read: the next PSB, as before */
			scan_error(d, "packet", size);
			if (pt_pkt_sync_forward(d->scan) < 0 || pt_pkt_get_sync_offset(d->scan, &at) < 0)
				break;
			d->scan_from = at;
			continue;
		}
		if (p.type == ppt_psb && at >= d->join) {
			/* the phase ends here (tc_pt_flow_follow), even where the decoder went
			 * past it (a bad PSB+): the decode from it goes on */
			d->scan_off = UINT64_MAX;
			d->scanning = false;
			d->dec = d->main;
			d->status = -pte_eos;
			return -pte_eos;
		}
		if (at < d->scan_from) {
			if (p.type != ppt_psb && p.type != ppt_ovf)
				continue;
			/* a PSB or OVF the decoder went past: state only */
			if (p.type == ppt_ovf)
				d->sc.fup = false;
			continue;
		}
		switch (p.type) {
		case ppt_psb:
			ret = sync_main(d, at);
			if (ret >= 0) {
				d->scan_off = UINT64_MAX;
				d->scanning = false;
				d->status = ret;
				/* the decoder reads the PSB+ itself: the scan starts past it */
				return ret;
			}
			scan_error(d, "sync", ret);
			break;
		case ppt_ovf:
			d->st.overflows++;
			emit_text(d, TC_REC_LOST, "trace overflow (OVF): the CPU dropped trace");
			d->sc.ovf = true;
			d->sc.fup = false;
			break;
		case ppt_tnt_8:
		case ppt_tnt_64:
			/* a FUP with no TIP (MODE.TSX, PTWRITE, ...): the flow is at its IP, and
			 * this TNT is its own */
			if (d->sc.fup) {
				d->sc.fup = false;
				if (goto_target(d, 0, d->sc.fup_ip, at) >= 0)
					return d->status;
			}
			break;
		case ppt_pip:
			if (!d->sc.in_psb) {
				d->cr3 = p.payload.pip.cr3;
				ask_thread(d);
			}
			break;
		case ppt_tsc:
		case ppt_mtc:
			if (!d->sc.have_tsc || (d->time.has_tsc && d->sc.now <= d->time.tsc))
				break;
			if (passes_until(d, true, d->sc.now)) {
				d->scan_tsc_due = true;
				d->scan_tsc = d->sc.now;
				return ST_PAUSE;
			}
			set_time(d, d->sc.now);
			break;
		case ppt_tip_pgd:
			if (d->sc.fup)
				emit_branch(d, d->sc.fup_ip, 0, isa_of(d->sc.mode));
			d->sc.fup = false;
			break;
		case ppt_fup:
			if (d->sc.in_psb || p.payload.ip.ipc == pt_ipc_suppressed)
				break;
			if (d->sc.ovf) {
				d->sc.ovf = false;
				if (goto_target(d, 0, d->sc.last_ip, at + (uint64_t)size) >= 0)
					return d->status;
				break;
			}
			/* a FUP before this one had no TIP: the flow was at its IP */
			if (d->sc.fup && goto_target(d, 0, d->sc.fup_ip, at) >= 0)
				return d->status;
			d->sc.fup = true;
			d->sc.fup_ip = d->sc.last_ip;
			break;
		case ppt_tip:
		case ppt_tip_pge:
			if (p.payload.ip.ipc == pt_ipc_suppressed) {
				d->sc.fup = false;
				break;
			}
			from = p.type == ppt_tip && d->sc.fup ? d->sc.fup_ip : 0;
			d->sc.fup = false;
			if (goto_target(d, from, d->sc.last_ip, at + (uint64_t)size) >= 0)
				return d->status;
			break;
		default:
			break;
		}
	}
	/* The buffer ended before the flow could go on. */
	d->scan_off = UINT64_MAX;
	d->scanning = false;
	d->dec = d->main;
	d->status = -pte_eos;
	return -pte_eos;
}

/* After a stop at buffer offset off: the scan is due from there. */
static void start_scan(struct tc_pt_flow *d, uint64_t off)
{
	d->scanning = true;
	d->scan_from = off;
	if (!d->scan)
		d->status = -pte_eos;	/* never synchronised */
}

/* The walk's reads: the caller's, on this queue's CPU. */
static size_t walk_read(void *ctx, uint64_t cr3, uint64_t addr, uint8_t *buf, size_t len)
{
	struct tc_pt_flow *d = ctx;

	return d->ops.read(d->ops.ctx, d->cpu, cr3, addr, buf, len);
}

static int begin(struct tc_pt_flow *d, const uint8_t *buf, size_t len, uint64_t file_offset,
		 bool walk, struct tc_err *e);

/* A new decode: no range in flight, unless it goes on from the one before (its join). */
static void restart_range(struct tc_pt_flow *d)
{
	const struct carry *c = &d->go;

	if (!d->going_on) {
		d->in_range = d->have_last = false;
		return;
	}
	d->in_range = c->in_range;
	d->have_last = c->have_last;
	d->r_start = c->r_start;
	d->r_end = c->r_end;
	d->r_insns = c->r_insns;
	d->r_isa = c->r_isa;
	d->last_ip = c->last_ip;
	d->last_end = c->last_end;
	d->last_class = c->last_class;
	d->last_isa = c->last_isa;
}

/* The range in flight where a decode ends at its join: the next starts with it. */
static void keep_range(struct tc_pt_flow *d)
{
	d->go = (struct carry){ .in_range = d->in_range, .have_last = d->have_last,
		.r_start = d->r_start, .r_end = d->r_end, .last_ip = d->last_ip,
		.last_end = d->last_end, .r_insns = d->r_insns, .r_isa = d->r_isa,
		.last_isa = d->last_isa, .last_class = d->last_class };
}

/* The walk's view of libipt's image: the section at ip, else the file a read there would
 * name (read_mem). */
static int walk_section(void *ctx, uint64_t ip, uint64_t *start, uint64_t *end)
{
	struct tc_pt_flow *d = ctx;
	struct tc_pt_flow_span *p = &d->pending;

	for (size_t i = d->nsecs; i-- > 0;) {
		if (ip >= d->secs[i].start && ip < d->secs[i].end) {
			*start = d->secs[i].start;
			*end = d->secs[i].end;
			return d->secs[i].isid;
		}
	}
	if (d->ops.segment && !d->smiss_lost) {
		if (tc_grow((void **)&d->smiss, &d->capsmiss, d->nsmiss + 1, sizeof(*d->smiss)))
			d->smiss_lost = true;
		else
			d->smiss[d->nsmiss++] = ip;
	}
	if (d->ops.span && !d->have_pending && !d->ops.span(d->ops.ctx, d->cpu, d->cr3, ip, p) &&
	    p->start != d->failed_start && ip >= p->start && ip - p->start < p->len)
		d->have_pending = true;
	return -1;
}

/* Might libipt decode code of buf in a mode other than 64-bit? Its block cache gives a
 * block in the mode it was first decoded in, whatever the decoder's mode now (unknown after
 * a PSB+ without MODE.Exec, or 32-bit): there the records depend on which buffers libipt
 * decoded before. Conservative, by packets: a MODE.Exec other than 64-bit, or a packet that
 * moves the flow (FUP, TIP*, TNT) after a PSB with no 64-bit MODE.Exec since (real trace has
 * one in every PSB+ while tracing, and before each TIP.PGE). */
static bool other_modes(const struct tc_pt_flow *d, const uint8_t *buf, size_t len)
{
	struct pt_config cfg = d->base;
	struct pt_packet_decoder *pk;
	struct pt_packet p;
	bool in_psb = false, fup = false, m64 = false, odd = false;
	int st;

	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	if (!(pk = pt_pkt_alloc_decoder(&cfg)))
		return true;
	st = pt_pkt_sync_forward(pk);
	while (st >= 0 && !odd) {
		st = pt_pkt_next(pk, &p, sizeof(p));
		if (st < 0) {
			if (st == -pte_eos)
				break;
			in_psb = fup = m64 = false;	/* libipt synchronises again */
			st = pt_pkt_sync_forward(pk);
			continue;
		}
		switch (p.type) {
		case ppt_psb:
			in_psb = true;
			fup = m64 = false;
			break;
		case ppt_psbend:
			in_psb = false;
			odd = fup && !m64;
			break;
		case ppt_mode:
			if (p.payload.mode.leaf != pt_mol_exec)
				break;
			m64 = p.payload.mode.bits.exec.csl && !p.payload.mode.bits.exec.csd;
			odd = !m64;
			break;
		case ppt_fup:
			if (in_psb) {
				fup = true;
				break;
			}
			/* fall through */
		case ppt_tip: case ppt_tip_pge: case ppt_tip_pgd: case ppt_tnt_8: case ppt_tnt_64:
			odd = !m64;
			break;
		default:
			break;
		}
	}
	pt_pkt_free_decoder(pk);
	return odd;
}

/* libipt decodes this buffer (d->buf): if it may have code not 64-bit, only libipt's own
 * caches know what it gives from here on. The skim and the walk are off for good; and if
 * libipt's caches are not as the reference's (an earlier buffer skimmed or walked:
 * foreign), the flow hands over (redo_due: true). */
static bool other_code(struct tc_pt_flow *d)
{
	if (d->modes < 0)
		d->modes = other_modes(d, d->buf, d->len);
	if (!d->modes)
		return false;
	d->skim_off = d->walk_off = true;
	if (d->foreign && d->kept)
		d->redo_due = true;
	return d->redo_due;
}

/* The walk gave up: the buffer again from its start with libipt's block decoder, in the
 * context it started in; the records the walk made (the same: it gives up before it would
 * differ) are not emitted twice. */
static int fall_back(struct tc_pt_flow *d)
{
	struct tc_err e;

	end_run(d);	/* the walk's records, in the context they were made in */
	d->walk_off = true;
	if (other_code(d)) {
		free_decoders(d);
		return 0;
	}
	d->suppress += d->emitted;	/* and what is left of the skim's (skim_buffer) */
	/* libipt's block caches as the reference's would be at the buffer's start */
	if (d->wcache)
		tc_pt_walk_cache_warm(d->wcache, &d->base, d->iscache);
	d->st = d->snap.st;
	d->pid = d->snap.pid;
	d->tid = d->snap.tid;
	d->cr3 = d->snap.cr3;
	d->time = d->snap.time;
	/* libipt's image as it was at the start: the sections the walk added go */
	if (d->nsecs != d->snap.nsecs) {
		pt_image_remove_by_asid(d->image, NULL);
		d->nsecs = 0;
		for (size_t i = 0; i < d->snap.nsecs; i++)
			if (pt_image_add_cached(d->image, d->iscache, d->secs[i].isid, NULL) >= 0)
				d->secs[d->nsecs++] = d->secs[i];
	}
	d->have_pending = false;
	d->failed_start = d->snap.failed_start;
	return begin(d, d->buf, d->len, d->file_offset, false, &e);
}

/* pt_skim.h's flow over the buffer, where its records go to analyses only: 0 if it
 * decoded all of it; else the exact path decodes it again, its first records (the skim's,
 * the same) not emitted twice, in the context the buffer started in. */
static size_t skim_read(void *ctx, uint64_t addr, uint8_t *buf, size_t len)
{
	struct tc_pt_flow *d = ctx;

	d->skim_fresh = false;
	return d->ops.read(d->ops.ctx, d->cpu, d->cr3, addr, buf, len);
}

/* The thread callback, as ask_thread; the skim's blocks go with the address space. */
static void skim_ask_thread(struct tc_pt_flow *d)
{
	ask_thread(d);
	if (d->cr3 != d->skim_cr3) {
		d->skim_cr3 = d->cr3;
		tc_pt_skim_forget(d->skim);
	}
}

/* Once the skim has read code of the buffer, the caller's thread callback at time t must
 * change nothing (ops.due) that a decode again from the buffer's start could not undo
 * (before, that decode makes the same change at the same point: its first PSB+'s time,
 * the side-band from before the trace): true where the skim must give up. */
static bool skim_due(struct tc_pt_flow *d, const struct tc_pt_flow_time *t)
{
	return d->ops.thread && !d->skim_fresh && (!d->ops.due || d->ops.due(d->ops.ctx, d->cpu, t));
}

static void skim_sync(void *ctx, uint64_t skipped)
{
	struct tc_pt_flow *d = ctx;
	char msg[160];

	d->st.syncs++;	/* as sync() */
	if (skipped && !d->going_on) {
		d->st.unsynced_bytes += skipped;
		snprintf(msg, sizeof(msg), "%" PRIu64 " bytes before the first PSB skipped", skipped);
		emit_text_at(d, TC_REC_NO_SYNC, 0, msg);
	}
	skim_ask_thread(d);
}

/* The skim's ranges, as range_out of each (the flow's own range fields stay as they are: a
 * skimmed buffer ends with none in flight, and one the skim gives up on is decoded again
 * from its start). Every range of report comes here: most often straight into the run,
 * with what the flow has alike for all of them read once. */
static void skim_range(void *ctx, const struct tc_pt_skim_range *r, size_t n)
{
	struct tc_pt_flow *d = ctx;
	const uint64_t base = d->file_offset, time = d->time.perf_time;
	const int cpu = d->cpu, pid = d->pid, tid = d->tid;
	const bool has_time = d->time.has_tsc && d->tc.valid;

	if (d->suppress || !d->run || !wanted(d, TC_REC_RANGE)) {
		for (size_t i = 0; i < n; i++)
			range_out(d, base + r[i].offset, r[i].start, r[i].end, r[i].insns,
				  TC_ISA_X86_64, r[i].last_ip, r[i].last_class);
		return;
	}
	if (d->ops.skim_ranges) {	/* as put_run would, the records made by the caller */
		struct tc_rec b = d->rrec;

		end_run(d);
		b.cpu = cpu;
		b.pid = pid;
		b.tid = tid;
		b.has_time = has_time;
		b.time = time;
		b.offset = base;
		time_used(d);
		d->st.ranges += n;
		d->emitted += n;
		d->given += n;
		d->ops.skim_ranges(d->ops.ctx, &b, r, n);
		return;
	}
	while (n) {
		/* k ranges into the run: it ends at its length */
		size_t k = RUN_LEN - d->nrun < n ? RUN_LEN - d->nrun : n;
		struct tc_rec *slot = d->slot;

		for (size_t i = 0; i < k; i++) {
			slot[i].cpu = cpu;
			slot[i].pid = pid;
			slot[i].tid = tid;
			slot[i].has_time = has_time;
			slot[i].time = time;
			range_fill(&slot[i], base + r[i].offset, r[i].start, r[i].end, r[i].insns,
				   TC_ISA_X86_64, r[i].last_ip, r[i].last_class);
		}
		d->st.ranges += k;
		put_run(d, k);
		r += k;
		n -= k;
	}
}

/* The time moves on where the exact path's would (set_time), where skim_due allows. */
static int skim_time(void *ctx, uint64_t tsc)
{
	struct tc_pt_flow *d = ctx;
	struct tc_pt_flow_time t = { true, tsc, 0 };

	if (d->time.has_tsc && d->time.tsc == tsc)
		return 0;
	if (d->ops.thread && !d->skim_fresh) {
		t.perf_time = tc_pt_config_tsc_to_perf_time(&d->tc, tsc);
		if (skim_due(d, &t))
			return -1;
	}
	new_time(d, tsc);
	return 0;
}

/* A PIP's event where the exact path's comes (on_event's paging, async paging): the CR3
 * the reads and the thread callback get from here on, and that callback now, as there, at
 * the time told already (skim_time), where skim_due allows; what it makes of the CR3 a
 * decode again from the buffer's start makes again. */
static int skim_paging(void *ctx, uint64_t cr3)
{
	struct tc_pt_flow *d = ctx;

	if (skim_due(d, &d->time))
		return -1;
	d->cr3 = cr3;
	skim_ask_thread(d);
	return 0;
}

static int skim_buffer(struct tc_pt_flow *d, const uint8_t *buf, size_t len,
		       uint64_t file_offset)
{
	const struct tc_pt_skim_ops ops = { skim_read, skim_sync, skim_range, skim_time, d,
					    skim_paging };
	struct tc_pt_flow_stats st = d->st;
	struct tc_pt_flow_time time = d->time;
	struct tc_pt_skim_stats ss;
	uint64_t cr3 = d->cr3;
	int pid = d->pid, tid = d->tid, rc;

	if (!d->ops.no_offsets || d->skim_off || d->ops.reference || d->ops.ticks || d->ops.timestamps ||
	    d->ops.events || wanted(d, TC_REC_BRANCH))
		return -1;
	struct tc_pt_skim_carry c = { 0 };

	if (!d->skim && !(d->skim = tc_pt_skim_new(d->x86)))
		return -1;
	d->file_offset = file_offset;
	d->len = len;
	restart_range(d);
	if (d->in_range || d->have_last) {	/* the skim's flow is 64-bit only */
		if (d->r_isa != TC_ISA_X86_64 || d->last_isa != TC_ISA_X86_64)
			return -1;
		c = (struct tc_pt_skim_carry){ .in_range = d->in_range, .have_last = d->have_last,
			.r = { .start = d->r_start, .end = d->r_end, .last_ip = d->last_ip,
			       .insns = d->r_insns, .last_class = d->last_class } };
	}
	d->skim_fresh = true;
	rc = tc_pt_skim_run(d->skim, &d->base, buf, len, d->join, &c, &ops, &ss);
	if (rc == TC_PT_SKIM_NO_PSB) {	/* as sync() */
		char msg[160];

		snprintf(msg, sizeof(msg), "no PSB in %zu bytes of trace", len);
		emit_text_at(d, TC_REC_NO_SYNC, 0, msg);
		d->st.unsynced_bytes += len;
		return 0;
	}
	if (!rc || rc == TC_PT_SKIM_JOINED) {
		d->st.insns += ss.insns;
		d->st.branches += ss.branches;
		d->foreign_now = true;
		/* the range in flight at its end (at a join: the next decode's) */
		d->in_range = c.in_range;
		d->have_last = c.have_last;
		d->r_start = c.r.start;
		d->r_end = d->last_end = c.r.end;
		d->r_insns = c.r.insns;
		d->last_ip = c.r.last_ip;
		d->last_class = c.r.last_class;
		d->r_isa = d->last_isa = TC_ISA_X86_64;
		return 0;
	}
	end_run(d);
	d->suppress += d->emitted;
	d->emitted = 0;
	d->st = st;
	d->pid = pid;
	d->tid = tid;
	d->cr3 = cr3;
	d->time = time;
	restart_range(d);
	return -1;
}

static int begin(struct tc_pt_flow *d, const uint8_t *buf, size_t len, uint64_t file_offset,
		 bool walk, struct tc_err *e)
{
	struct pt_config cfg = d->base;

	free_decoders(d);
	d->held = HELD_NONE;
	d->scan_tsc_due = false;
	d->emitted = 0;
	if (walk) {	/* a new buffer (not a fall-back's second try) */
		d->foreign |= d->foreign_now;
		d->foreign_now = false;
		d->modes = -1;
	}
	if (!len)
		return 0;
	d->buf = buf;
	d->len = len;	/* other_code's */
	if (walk && !skim_buffer(d, buf, len, file_offset))
		return 0;
	if (walk && !d->ops.reference && !d->wcache)
		d->wcache = tc_pt_walk_cache_new();
	if (walk && !d->ops.reference && d->wcache) {
		tc_pt_walk_cache_era(d->wcache);
		if (!d->secs_lost && !d->walk_off)
			d->walk = tc_pt_walk_new(&d->base, buf, len, d->wcache, d->x86, walk_read,
						 walk_section, d);
		if (d->walk && d->ops.ticks)
			tc_pt_walk_ticks(d->walk);
		d->wq = d->walk ? tc_pt_walk_query(d->walk) : NULL;
		d->foreign_now |= d->walk != NULL;
		d->snap.st = d->st;
		d->snap.pid = d->pid;
		d->snap.tid = d->tid;
		d->snap.cr3 = d->cr3;
		d->snap.time = d->time;
		d->snap.nsecs = d->nsecs;
		d->snap.failed_start = d->failed_start;
	}
	if (!d->walk && d->ops.segment) {
		d->gave_up = true;
		free_decoders(d);
		return 0;
	}
	if (!d->walk && walk && d->kept && other_code(d))	/* libipt's (walk_off) */
		return 0;
	if (!d->walk) {
		d->main = d->dec = new_decoder(d, buf, len);
		if (!d->dec)
			return tc_err_set(e, ENOMEM, "cannot set up libipt's block decoder");
	}
	d->file_offset = file_offset;
	d->len = len;
	/* A new buffer is a new decode: only the thread, CR3 and time carry over (and the
	 * range in flight where it goes on from the one before). */
	restart_range(d);
	d->last_sync = UINT64_MAX;
	d->status = sync(d, len, d->sync_at == UINT64_MAX ? 0 : d->sync_at, &d->last_sync);
	if (d->status == TC_PT_WALK_FALLBACK) {
		if (d->ops.segment) {
			d->gave_up = true;
			free_decoders(d);
			return 0;
		}
		return fall_back(d);
	}
	/* The packets are followed from the first PSB, for resume(). */
	if (d->last_sync != UINT64_MAX) {
		cfg.begin = (uint8_t *)buf;
		cfg.end = (uint8_t *)buf + len;
		d->scan = pt_pkt_alloc_decoder(&cfg);
		d->peek = pt_pkt_alloc_decoder(&cfg);
		if (d->scan && pt_pkt_sync_set(d->scan, d->last_sync) < 0) {
			pt_pkt_free_decoder(d->scan);
			d->scan = NULL;
		}
		scan_reset(d);
	}
	return 0;
}

/* ---- The hand-over to the reference (redo_due) ----
 * It decodes the buffers begun so far again from the first, with the caller's callbacks;
 * the records given already (the same: nothing before the buffer that hands over differs)
 * and those of the types the caller skips (the reference makes every type) left out. */

static void ref_emit(void *ctx, const struct tc_rec *r)
{
	struct tc_pt_flow *d = ctx;

	if (d->ops.skip & (1u << r->type))
		return;
	if (d->ref_drop) {
		d->ref_drop--;
		return;
	}
	d->ops.emit(d->ops.ctx, r);
}

static void ref_ranges(void *ctx, const struct tc_rec *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ref_emit(ctx, &r[i]);
}

static size_t ref_read(void *ctx, int cpu, uint64_t cr3, uint64_t addr, uint8_t *buf, size_t len)
{
	const struct tc_pt_flow *d = ctx;

	return d->ops.read(d->ops.ctx, cpu, cr3, addr, buf, len);
}

static void ref_thread(void *ctx, int cpu, uint64_t cr3, const struct tc_pt_flow_time *t,
		       int *pid, int *tid)
{
	const struct tc_pt_flow *d = ctx;

	d->ops.thread(d->ops.ctx, cpu, cr3, t, pid, tid);
}

static int ref_span(void *ctx, int cpu, uint64_t cr3, uint64_t addr, struct tc_pt_flow_span *s)
{
	const struct tc_pt_flow *d = ctx;

	return d->ops.span(d->ops.ctx, cpu, cr3, addr, s);
}

static uint64_t ref_space(void *ctx)
{
	const struct tc_pt_flow *d = ctx;

	return d->ops.space(d->ops.ctx);
}

/* The reference takes over, at the last buffer begun: the others decoded again, that one
 * begun. */
static int hand_over(struct tc_pt_flow *d, struct tc_err *e)
{
	struct tc_pt_flow_ops ops = d->ops;
	const struct kept *k = d->kept;
	size_t n = d->nkept;

	end_run(d);
	free_decoders(d);
	d->redo_due = false;
	ops.ctx = d;
	ops.emit = ref_emit;
	ops.emit_ranges = ref_ranges;
	ops.read = ref_read;
	ops.thread = d->ops.thread ? ref_thread : NULL;
	ops.span = d->ops.span ? ref_span : NULL;
	ops.space = d->ops.space ? ref_space : NULL;
	ops.due = NULL;
	ops.reference = true;
	ops.no_offsets = false;
	d->ref_drop = d->given;
	if (!(d->ref = tc_pt_flow_new(&d->base, &d->tc, d->cpu, &ops, e)))
		return -1;
	for (size_t i = 0; i + 1 < n; i++) {
		tc_pt_flow_follow(d->ref, k[i].slen, k[i].next, k[i].next_ctx, k[i].next_at);
		if (tc_pt_flow_feed(d->ref, k[i].buf, k[i].len, k[i].off, e))
			return -1;
	}
	tc_pt_flow_follow(d->ref, k[n - 1].slen, k[n - 1].next, k[n - 1].next_ctx,
			  k[n - 1].next_at);
	return tc_pt_flow_begin(d->ref, k[n - 1].buf, k[n - 1].len, k[n - 1].off, e);
}

static int start(struct tc_pt_flow *d, const uint8_t *buf, size_t len, uint64_t file_offset,
		 struct tc_err *e);

int tc_pt_flow_begin(struct tc_pt_flow *d, const uint8_t *buf, size_t len, uint64_t file_offset,
		 struct tc_err *e)
{
	int ret;

	if (d->ref) {
		tc_pt_flow_follow(d->ref, d->nlen, d->next, d->next_ctx, d->next_at);
		d->next = NULL;
		return tc_pt_flow_begin(d->ref, buf, len, file_offset, e);
	}
	d->suppress = 0;
	if (!d->ops.reference && !d->ops.segment) {
		if (tc_grow((void **)&d->kept, &d->capkept, d->nkept + 1, sizeof(*d->kept)))
			return tc_err_set(e, ENOMEM, "out of memory");
		d->kept[d->nkept++] = (struct kept){ buf, len, d->next ? d->nlen : len, file_offset,
						     d->next, d->next_ctx, d->next_at };
	}
	ret = start(d, buf, len, file_offset, e);
	if (!ret && d->redo_due)
		ret = hand_over(d, e);
	return ret;
}

static int run_phase(struct tc_pt_flow *d, uint64_t until)
{
	uint64_t off, at;
	enum pt_exec_mode mode;
	char msg[160];
	int status;

	d->until = until;
	for (;;) {
		if (d->scanning && d->scan && resume(d) == ST_PAUSE)
			return 1;
		d->scanning = false;
		/* A held block may come with libipt's error after it: take the block first. */
		if ((!d->dec && !d->walk) || (d->status < 0 && d->held == HELD_NONE))
			break;
		status = decode_run(d, d->status, &at, &mode);
		if (status == ST_PAUSE)
			return 1;
		if (status == ST_JOINED)	/* the flow goes on in the next decode */
			break;
		if (d->walk && status != -pte_eos) {
			/* an error, or what the walk does not model */
			if (d->ops.segment) {
				d->gave_up = true;
				break;
			}
			if (fall_back(d) < 0)
				break;
			continue;
		}
		if (status == ST_HANDOVER || status == -pte_eos) {
			/* a side decoder's stretch ends at a PSB: the flow goes on there */
			if (d->dec && d->dec == d->side && d->side_end < d->len) {
				start_scan(d, d->side_end);
				continue;
			}
			/* (the buffer's tail goes on from its last PSB: nothing past it was
			 * decoded, or an event there would have ended the phase) */
			if (d->join == UINT64_MAX || d->phase)
				flow_stop(d);
			break;
		}
		if (status == -pte_nomap) {
			struct tc_rec r;

			flush_range(d);
			flow_to(d, at);
			r = new_rec(d, TC_REC_ADDR_NACC);
			r.start = at;
			r.isa = isa_of(mode);
			r.text = "no image at this address";
			put(d, &r);
			d->st.nomap++;
		} else {
			flow_stop(d);
			if (status == ST_ENDLESS)
				snprintf(msg, sizeof(msg),
					 "%d instructions without trace at 0x%" PRIx64
					 ": a loop of direct jumps, or the image does not match",
					 MAX_INSNS_PER_OFFSET, at);
			else
				snprintf(msg, sizeof(msg), "%s", pt_errstr(pt_errcode(status)));
			emit_text(d, TC_REC_ERROR, msg);
			d->st.errors++;
		}
		off = 0;
		pt_blk_get_offset(d->dec, &off);
		start_scan(d, buf_offset(d, off));
	}
	free_decoders(d);
	return 0;
}

/* ---- A stream cut into buffers (tc_pt_flow_follow) ---- */

/* The last PSB in buf (UINT64_MAX: none). */
static uint64_t last_psb(const uint8_t *buf, size_t len)
{
	for (size_t i = len >= sizeof(psb_bytes) ? len - sizeof(psb_bytes) + 1 : 0; i-- > 0;)
		if (buf[i] == 0x02 && buf[i + 1] == 0x82 &&
		    !memcmp(buf + i, psb_bytes, sizeof(psb_bytes))) {
			/* libipt synchronises on where a longer run of its bytes starts */
			while (i >= 2 && buf[i - 2] == 0x02 && buf[i - 1] == 0x82)
				i -= 2;
			return i;
		}
	return UINT64_MAX;
}

/* The length of the PSB+ at p (to its PSBEND), n bytes there; 0 if it is not whole. */
static size_t psb_plus_len(const struct tc_pt_flow *d, const uint8_t *p, size_t n)
{
	struct pt_config cfg = d->base;
	struct pt_packet_decoder *pk;
	struct pt_packet k;
	uint64_t off = 0;
	size_t len = 0;

	cfg.begin = (uint8_t *)p;
	cfg.end = (uint8_t *)p + n;
	if (!(pk = pt_pkt_alloc_decoder(&cfg)))
		return 0;
	if (pt_pkt_sync_set(pk, 0) >= 0)
		while (pt_pkt_next(pk, &k, sizeof(k)) >= 0)
			if (k.type == ppt_psbend) {
				if (pt_pkt_get_offset(pk, &off) >= 0)
					len = (size_t)off;
				break;
			}
	pt_pkt_free_decoder(pk);
	return len;
}

#define PSB_STEP 256	/* bytes a PSB+ is read on by (it is a few dozen) */

/* bytes at the tail's end (d->njmap: its length); file_offset: piece's, UINT64_MAX none. */
static int tail_put(struct tc_pt_flow *d, size_t *at, const uint8_t *p, size_t n,
		    uint64_t file_offset)
{
	if (tc_grow((void **)&d->tail, &d->tail_cap, *at + n ? *at + n : 1, 1) ||
	    tc_grow((void **)&d->jmap, &d->capjmap, d->njmap + 1, sizeof(*d->jmap)))
		return -1;
	if (file_offset != UINT64_MAX)
		d->jmap[d->njmap++] = (struct jmap){ *at, file_offset };
	memcpy(d->tail + *at, p, n);
	*at += n;
	return 0;
}

/* Phase 1: the buffer's tail from its last PSB (d->join) joined with the pieces to the end
 * of the first PSB+ in them, decoded going on from the flow as phase 0 left it. Pieces
 * before the one with that PSB are taken whole; a PSB+ cut by its piece's end takes bytes
 * of those after it. */
static int begin_tail(struct tc_pt_flow *d, struct tc_err *e)
{
	const uint64_t from = d->join, file_offset = d->ofile + from;
	size_t n = d->slen - (size_t)from, total = 0, k;
	uint64_t jpsb = UINT64_MAX;
	const uint8_t *psb = NULL;
	struct tc_pt_flow_buf pk;

	d->njmap = 0;
	d->abs_lo = d->abs_hi = 0;
	if (tail_put(d, &total, d->obuf + from, n, UINT64_MAX))
		return tc_err_set(e, ENOMEM, "out of memory");
	for (k = 0; !psb && total - n < TC_PT_FLOW_FOLLOW_MAX &&
		    d->cn.fn(d->cn.ctx, d->cn.at, k, &pk); k++) {
		const struct tc_pt_flow_buf *p = &pk;
		size_t c = p->len;

		psb = p->len ? memmem(p->buf, p->len, psb_bytes, sizeof(psb_bytes)) : NULL;
		if (psb) {
			jpsb = total + (uint64_t)(psb - p->buf);
			d->cont_next = p->file_offset + (uint64_t)(psb - p->buf);
			c = (size_t)(psb - p->buf);	/* its PSB+ below */
		} else {	/* taken whole: its begin decodes nothing */
			if (!d->abs_hi)
				d->abs_lo = p->file_offset;
			d->abs_hi = p->file_offset + 1;
		}
		if (tail_put(d, &total, p->buf, c, p->file_offset))
			return tc_err_set(e, ENOMEM, "out of memory");
	}
	if (psb) {
		/* the PSB+ (to PSBEND), read on in steps, into the pieces after if need be */
		size_t pl = 0, at = (size_t)(psb - pk.buf);

		for (k--; !pl && d->cn.fn(d->cn.ctx, d->cn.at, k, &pk); k++, at = 0) {
			const struct tc_pt_flow_buf *p = &pk;

			while (at < p->len && !pl) {
				size_t c = p->len - at < PSB_STEP ? p->len - at : PSB_STEP;

				if (tail_put(d, &total, p->buf + at, c,
					     at ? UINT64_MAX : p->file_offset))
					return tc_err_set(e, ENOMEM, "out of memory");
				at += c;
				pl = psb_plus_len(d, d->tail + jpsb, total - (size_t)jpsb);
			}
		}
		if (pl)
			total = (size_t)jpsb + pl;
	} else {
		d->cont_next = UINT64_MAX;
	}
	keep_range(d);
	d->going_on = !d->tail_fresh;
	d->tail_fresh = false;
	d->phase = 1;
	d->jbase = from;
	d->join = jpsb;
	d->len0 = n;
	return begin(d, d->tail, total, file_offset, true, e);
}

/* A buffer begins (tc_pt_flow_begin, _begin_at): where the tail before took it whole,
 * nothing; where it holds the PSB the last one's tail ended at, the decode goes on from
 * there; its pieces make it end at its last PSB. */
static int start(struct tc_pt_flow *d, const uint8_t *buf, size_t len, uint64_t file_offset,
		 struct tc_err *e)
{
	size_t plen;

	d->phase = 0;
	d->jbase = 0;
	d->njmap = 0;
	d->len0 = len;
	d->going_on = false;
	d->obuf = buf;
	d->ofile = file_offset;
	d->cn.fn = d->next;
	d->cn.ctx = d->next_ctx;
	d->cn.at = d->next_at;
	d->next = NULL;
	d->nnxt = d->cn.fn && d->cn.fn(d->cn.ctx, d->cn.at, 0, &(struct tc_pt_flow_buf){ 0 });
	d->slen = d->nnxt && d->nlen < len ? d->nlen : len;
	d->skip_buf = d->abs_hi && file_offset >= d->abs_lo && file_offset < d->abs_hi;
	if (d->cont && !len)
		d->skip_buf = true;	/* nothing between: the stream goes on after it */
	if (d->skip_buf) {
		d->nnxt = false;
		d->join = UINT64_MAX;
		free_decoders(d);
		return 0;
	}
	if (d->cont) {
		d->cont = false;
		if (d->sync_at == UINT64_MAX && file_offset <= d->cont_file &&
		    d->cont_file - file_offset < len) {
			d->going_on = true;
			keep_range(d);
		} else {
			flow_stop(d);	/* the stream ends here after all */
		}
	}
	d->abs_lo = d->abs_hi = 0;
	d->join = UINT64_MAX;
	if (!d->nnxt)
		return begin(d, buf, len, file_offset, true, e);
	/* This decode ends with its last whole PSB+ (a decoder that ran on past it would go
	 * on through code that needs no trace, to where its trace ends); where the buffer has
	 * none, the tail starts at its first PSB; without PSB nothing synchronises. */
	d->join = last_psb(buf, d->slen);
	plen = d->join == UINT64_MAX ? 0 :
	       psb_plus_len(d, buf + d->join, d->slen - (size_t)d->join);
	if (d->join != UINT64_MAX && !plen) {
		uint64_t before = last_psb(buf, (size_t)d->join);

		if (before != UINT64_MAX &&
		    (plen = psb_plus_len(d, buf + before, d->slen - (size_t)before)))
			d->join = before;
	}
	if (d->join == UINT64_MAX) {
		/* none whole: one may begin at its end, and the tail from its start find it */
		d->join = 0;
		d->tail_fresh = true;
		free_decoders(d);
		return 0;
	}
	if (!plen) {	/* its first PSB, whose PSB+ the pieces end */
		d->join = (uint64_t)((const uint8_t *)memmem(buf, d->slen, psb_bytes,
							     sizeof(psb_bytes)) - buf);
		free_decoders(d);
		return 0;
	}
	return begin(d, buf, (size_t)d->join + plen, file_offset, true, e);
}

static int run(struct tc_pt_flow *d, uint64_t until)
{
	struct tc_err e;
	int ret;

	if (d->skip_buf)
		return 0;
	for (;;) {
		ret = run_phase(d, until);
		if (ret || d->phase || !d->nnxt || d->gave_up || d->redo_due)
			break;
		if (begin_tail(d, &e)) {
			/* the stream ends here: a record says why */
			d->phase = 1;
			d->cont_next = UINT64_MAX;
			flow_stop(d);
			emit_text(d, TC_REC_ERROR, e.msg);
			d->st.errors++;
			break;
		}
		if (d->redo_due)
			break;
	}
	if (!ret && d->phase) {
		d->cont = d->cont_next != UINT64_MAX;
		d->cont_file = d->cont_next;
	}
	return ret;
}

void tc_pt_flow_follow(struct tc_pt_flow *d, size_t len, tc_pt_flow_next_fn next, void *ctx,
		       size_t at)
{
	d->next = next;
	d->next_ctx = ctx;
	d->next_at = at;
	d->nlen = len;
}

int tc_pt_flow_run(struct tc_pt_flow *d, uint64_t until)
{
	int ret;

	if (d->ref)
		return tc_pt_flow_run(d->ref, until);
	ret = run(d, until);
	if (d->redo_due) {
		if (hand_over(d, &d->ref_err))
			return -1;
		return tc_pt_flow_run(d->ref, until);
	}

	d->paused = ret == 1;
	end_run(d);	/* the caller goes on with what the records did (another queue) */
	return ret;
}

bool tc_pt_flow_next_time(const struct tc_pt_flow *d, uint64_t *t)
{
	if (d->ref)
		return tc_pt_flow_next_time(d->ref, t);
	if (d->held != HELD_NONE || d->scan_tsc_due) {
		*t = d->held_time;
		return true;
	}
	*t = d->time.perf_time;
	return d->time.has_tsc;
}

int tc_pt_flow_feed(struct tc_pt_flow *d, const uint8_t *buf, size_t len, uint64_t file_offset,
		struct tc_err *e)
{
	if (tc_pt_flow_begin(d, buf, len, file_offset, e))
		return -1;
	if (tc_pt_flow_run(d, UINT64_MAX) < 0) {
		*e = d->ref_err;	/* the hand-over failed (run: nothing else fails) */
		return -1;
	}
	return 0;
}

int tc_pt_flow_begin_at(struct tc_pt_flow *d, const uint8_t *buf, size_t len,
			uint64_t file_offset, uint64_t psb, struct tc_err *e)
{
	int ret;

	d->suppress = 0;
	d->sync_at = psb;
	d->want_first = psb != UINT64_MAX;
	d->first_to = &d->first;
	memset(&d->first, 0, sizeof(d->first));
	ret = start(d, buf, len, file_offset, e);
	d->sync_at = UINT64_MAX;
	return ret;
}

void tc_pt_flow_thread(const struct tc_pt_flow *d, int *pid, int *tid, uint64_t *cr3)
{
	*pid = d->pid;
	*tid = d->tid;
	*cr3 = d->cr3;
}

void tc_pt_flow_set_thread(struct tc_pt_flow *d, int pid, int tid)
{
	d->pid = pid;
	d->tid = tid;
}

void tc_pt_flow_stop_at(struct tc_pt_flow *d, uint64_t off)
{
	d->stop_at = off;
}

bool tc_pt_flow_stop_pending(const struct tc_pt_flow *d)
{
	return d->stop_at != UINT64_MAX;
}

uint64_t tc_pt_flow_offset(const struct tc_pt_flow *d)
{
	uint64_t off;

	if (!d->wq || d->jbase || d->walk_off || pt_qry_get_offset(d->wq, &off) < 0)
		return UINT64_MAX;
	return off;
}

struct pt_image_section_cache *tc_pt_flow_iscache(const struct tc_pt_flow *d)
{
	return d->iscache;
}

void tc_pt_flow_step_block(struct tc_pt_flow *d)
{
	d->step_block = true;
}

const struct tc_pt_flow_join *tc_pt_flow_first(const struct tc_pt_flow *d)
{
	return &d->first;
}

const struct tc_pt_flow_join *tc_pt_flow_after(const struct tc_pt_flow *d)
{
	return &d->after;
}

bool tc_pt_flow_join_same(const struct tc_pt_flow_join *a, const struct tc_pt_flow_join *b)
{
	const struct tc_pt_walk_state *x = &a->w, *y = &b->w;

	if (!a->done || !b->done || a->bad || !a->walk || !b->walk || a->emitted)
		return false;
	if (a->in_range != b->in_range || a->have_last != b->have_last || a->r_end != b->r_end ||
	    a->r_isa != b->r_isa || a->last_ip != b->last_ip || a->last_end != b->last_end ||
	    a->last_class != b->last_class || a->last_isa != b->last_isa || a->pid != b->pid ||
	    a->tid != b->tid || a->cr3 != b->cr3 || a->has_tsc != b->has_tsc)
		return false;
	/* With ticks the time comes with events, both flows' from those of the PSB+ (a tick
	 * follows a query: none comes before a first block), and a tick where the time is
	 * other than the last event's. Without, the segment's is the decoder's (take_first),
	 * the flow's there or before. */
	if (a->ticks != b->ticks)
		return false;
	if (a->ticks ? (a->has_tsc && a->tsc != b->tsc) || x->ev_tsc != y->ev_tsc :
		       a->has_tsc && (!x->has_time || a->tsc != x->tsc ||
				      (a->time_used ? b->tsc != a->tsc : b->tsc > a->tsc)))
		return false;
	if (x->ip != y->ip || x->offset != y->offset || x->mode != y->mode ||
	    x->status != y->status || x->enabled != y->enabled ||
	    x->process_event != y->process_event || x->has_time != y->has_time ||
	    (x->has_time && (x->tsc != y->tsc || x->lost_mtc != y->lost_mtc ||
			     x->lost_cyc != y->lost_cyc)) ||
	    x->has_cbr != y->has_cbr || (x->has_cbr && x->cbr != y->cbr))
		return false;
	return !x->process_event || !memcmp(&x->ev, &y->ev, sizeof(x->ev));
}

void tc_pt_flow_abort(struct tc_pt_flow *d)
{
	atomic_store_explicit(&d->abort, true, memory_order_relaxed);
}

bool tc_pt_flow_gave_up(const struct tc_pt_flow *d)
{
	return d->gave_up;
}

bool tc_pt_flow_paused(const struct tc_pt_flow *d)
{
	return d->paused;
}

struct tc_pt_walk_cache *tc_pt_flow_walk_cache(struct tc_pt_flow *d)
{
	if (!d->wcache)
		d->wcache = tc_pt_walk_cache_new();
	return d->wcache;
}

void tc_pt_flow_set_walk_cache(struct tc_pt_flow *d, struct tc_pt_walk_cache *c)
{
	tc_pt_walk_cache_free(d->wcache);
	d->wcache = c;
}

struct tc_pt_walk_cache *tc_pt_flow_take_walk_cache(struct tc_pt_flow *d)
{
	struct tc_pt_walk_cache *c = d->wcache;

	free_decoders(d);	/* the walk ends: nothing uses the cache after this */
	d->wcache = NULL;
	return c;
}

size_t tc_pt_flow_sections(const struct tc_pt_flow *d, const struct tc_pt_flow_sec **secs)
{
	*secs = d->secs;
	return d->nsecs;
}

int tc_pt_flow_add_sections(struct tc_pt_flow *d, const struct tc_pt_flow_sec *secs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t k;

		for (k = 0; k < d->nsecs && d->secs[k].isid != secs[i].isid; k++)
			;
		if (k < d->nsecs)
			continue;
		if (tc_grow((void **)&d->secs, &d->capsecs, d->nsecs + 1, sizeof(*d->secs)) ||
		    pt_image_add_cached(d->image, d->iscache, secs[i].isid, NULL) < 0)
			return -1;
		d->secs[d->nsecs++] = secs[i];
	}
	return 0;
}

size_t tc_pt_flow_section_misses(const struct tc_pt_flow *d, const uint64_t **ips)
{
	*ips = d->smiss;
	return d->smiss_lost ? SIZE_MAX : d->nsmiss;
}
