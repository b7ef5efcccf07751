/* One trace ID decoded by OpenCSD's C API; see etm_ocsd.h. Each source gets its own
 * single-source decode tree (we demultiplex ourselves), so the tree's packet processor sees
 * exactly the bytes and indexes OpenCSD's own deformatter would have given it. */
#include "decoders/coresight/etm_ocsd.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <opencsd/c_api/opencsd_c_api.h>

#include "decoders/coresight/etm4_guard.h"
#include "decoders/coresight/etm4_walk.h"
#include "lib/isa/a64.h"
#include "lib/util/grow.h"

/* Decoders of several trace IDs may run in threads side by side (--jobs): a decoder's
 * memory shares no cache line with another's (its struct on lines of its own, a fence
 * after the library's objects); else a line one thread writes at every element and
 * another reads passes between their cores each time. */
#define LINE 64
#define FENCE 256

struct tc_etm_ocsd {
	_Alignas(LINE) struct tc_etm_cfg cfg;
	unsigned what;
	tc_etm_emit_fn emit;
	tc_etm_mem_fn mem;
	void *ctx;
	dcd_tree_handle_t tree;
	ocsd_trace_protocol_t proto;
	uint8_t csid;			/* the ID OpenCSD configured the decoder with */
	int bad_lo;			/* packet types of bytes that make no valid packet: */
	unsigned bad_n;			/* bad_lo and the bad_n - 1 after it (bad_range) */
	struct tc_etm_mem_ctx mctx;
	struct tc_etm_ocsd_stats st;
	uint64_t end_index;		/* index just past the last byte fed */
	int full;			/* a full decoder, not the packet processor alone */
	struct tc_etm4_guard *guard;	/* ETMv4/ETE: packets the full decoder must not see */
	struct tc_etm4_walk *walk;	/* the fast ETMv4 decoder, in place of OpenCSD's */
	struct tc_etm4_guard *iguard;	/* with walk: the guard's model on walk's own packets */
	bool hz;			/* iguard named a hazard: the tree stopped after it */
	uint64_t hz_idx;		/* where its packet began */
	const char *hz_why;
	/* The hand-over (etm_ocsd.h): with the fast decoder, the operations since it was made
	 * or last reset (keep_op, in order), the records given since and a
	 * hash of them, the counts and memory context then; handing: the fast decoder met what
	 * it does not model, and gives nothing more. */
	struct {
		uint8_t *b;
		size_t len, cap;
		uint64_t last;		/* the last operation's index */
		bool off;		/* past TC_ETM_OCSD_KEEP, or out of memory: no hand-over */
	} hist;
	bool handing;
	uint64_t given, hash;
	struct tc_etm_ocsd_stats st0;
	struct tc_etm_mem_ctx mctx0;
	uint64_t skip, rhash;		/* replaying: records left to leave out, their hash */
	uint64_t unmod_seen;		/* the walk's count of what it did not model */
	uint64_t unmod_said;		/* ... of those, said with an error record */
	char pkt_str[512];		/* packet name storage for the record being emitted */
	void *fence;			/* allocated last: the next decoder's memory after it */
};

static const char *const proto_names[] = {
	[TC_ETM_PROTO_ETMV3] = "ETMv3", [TC_ETM_PROTO_PTM] = "PTM", [TC_ETM_PROTO_ETMV4] = "ETMv4",
	[TC_ETM_PROTO_ETE] = "ETE", [TC_ETM_PROTO_STM] = "STM",
};

const char *tc_etm_ocsd_proto_name(enum tc_etm_proto p)
{
	return (unsigned)p < sizeof(proto_names) / sizeof(proto_names[0]) ? proto_names[p] : "?";
}

static struct tc_rec rec(const struct tc_etm_ocsd *d, enum tc_rec_type type, uint64_t off)
{
	struct tc_rec r;

	tc_etm_ocsd_rec_init(&r, type, d->cfg.trace_id, d->cfg.cpu, -1, -1, off);
	return r;
}

/* The memory context before any trace. */
static void mctx_init(struct tc_etm_ocsd *d)
{
	d->mctx = (struct tc_etm_mem_ctx){ .cpu = d->cfg.cpu, .trace_id = d->cfg.trace_id,
					   .context_id = -1, .vmid = -1, .el = -1, .secure = -1 };
}

/* What tells two records apart, mostly, mixed into h (the order counts): cheap, for every
 * record the fast decoder gives. */
static inline uint64_t rec_hash(uint64_t h, const struct tc_rec *r)
{
	return (h + (r->offset ^ r->start ^ r->end << 1 ^ r->value << 2 ^ (uint64_t)r->type << 58)) *
	       0x9e3779b97f4a7c15u;
}

static inline void give(struct tc_etm_ocsd *d, const struct tc_rec *r);
static void hist_start(struct tc_etm_ocsd *d);

/* The hand-over's replay gave other records than those given (the memory behind the
 * callback changed since: it cannot otherwise): said where its own begin. */
static void replay_differs(struct tc_etm_ocsd *d, uint64_t offset)
{
	struct tc_rec r = rec(d, TC_REC_ERROR, offset);

	d->skip = 0;
	d->st.errors++;
	r.text = "OpenCSD's decoder, taking over from the fast one (code that is not A64), "
		 "decoded the trace before this point otherwise: the records from here are its own";
	give(d, &r);
}

/* Every record goes out here: none once the fast decoder met what it does not model (until
 * OpenCSD's decoder took over), and of the takeover's replay none of those given already. */
static inline void give(struct tc_etm_ocsd *d, const struct tc_rec *r)
{
	if (__builtin_expect(d->handing, 0))
		return;
	if (__builtin_expect(d->skip != 0, 0)) {
		d->rhash = rec_hash(d->rhash, r);
		if (!--d->skip && d->rhash != d->hash)
			replay_differs(d, r->offset);
		return;
	}
	if (!d->hist.off) {
		d->given++;
		d->hash = rec_hash(d->hash, r);
	}
	d->emit(d->ctx, r);
}

/* ---- packets ---- */

/* Packet types the packet processors give for bytes that make no valid packet: each
 * protocol's run of them, set in d (a packet's type checked against it, not per protocol:
 * the monitor sees every packet). */
_Static_assert(ETM4_PKT_I_BAD_TRACEMODE - ETM4_PKT_I_BAD_SEQUENCE == 1 &&
	       ETM4_PKT_I_RESERVED - ETM4_PKT_I_BAD_SEQUENCE == 2 &&
	       ETM4_PKT_I_RESERVED_CFG - ETM4_PKT_I_BAD_SEQUENCE == 3, "ETMv4's in a run");
_Static_assert(ETM3_PKT_BAD_TRACEMODE - ETM3_PKT_BAD_SEQUENCE == 1 &&
	       ETM3_PKT_RESERVED - ETM3_PKT_BAD_SEQUENCE == 2, "ETMv3's in a run");
_Static_assert(PTM_PKT_RESERVED - PTM_PKT_BAD_SEQUENCE == 1, "PTM's in a run");
_Static_assert(STM_PKT_RESERVED - STM_PKT_BAD_SEQUENCE == 1, "STM's in a run");

static void bad_range(struct tc_etm_ocsd *d)
{
	switch (d->proto) {
	case OCSD_PROTOCOL_ETMV4I:
	case OCSD_PROTOCOL_ETE:
		d->bad_lo = ETM4_PKT_I_BAD_SEQUENCE;
		d->bad_n = 4;
		break;
	case OCSD_PROTOCOL_ETMV3:
		d->bad_lo = ETM3_PKT_BAD_SEQUENCE;
		d->bad_n = 3;
		break;
	case OCSD_PROTOCOL_PTM:
		d->bad_lo = PTM_PKT_BAD_SEQUENCE;
		d->bad_n = 2;
		break;
	case OCSD_PROTOCOL_STM:
		d->bad_lo = STM_PKT_BAD_SEQUENCE;
		d->bad_n = 2;
		break;
	default:
		d->bad_n = 0;
		break;
	}
}

/* OpenCSD's packet printers format values in one static buffer of the process's: lanes
 * that decode at once (cs_session.c's fast ones, and theirs with OpenCSD's lock) print
 * packets one at a time (ThreadSanitizer: trcPrintableElem::getValStr from two lanes). */
static pthread_mutex_t pkt_str_lock = PTHREAD_MUTEX_INITIALIZER;

/* The packet printer's text up to its " : " (ETMv4, PTM, ETMv3) or ":" (STM). */
static const char *pkt_name(struct tc_etm_ocsd *d, const void *pkt)
{
	ocsd_err_t err;
	char *p;

	d->pkt_str[0] = 0;
	pthread_mutex_lock(&pkt_str_lock);
	err = ocsd_pkt_str(d->proto, pkt, d->pkt_str, sizeof(d->pkt_str));
	pthread_mutex_unlock(&pkt_str_lock);
	if (err != OCSD_OK)
		return "?";
	p = strchr(d->pkt_str, ':');
	if (p)
		*p = 0;
	for (p = d->pkt_str + strlen(d->pkt_str); p > d->pkt_str && p[-1] == ' '; p--)
		p[-1] = 0;
	return d->pkt_str;
}

/* A packet listed, or a bad one (out of line: the monitor's every packet needs only the
 * count and the check, on_packet). */
static __attribute__((noinline)) void packet_out(struct tc_etm_ocsd *d, ocsd_trc_index_t idx,
						 const void *pkt, bool bad)
{
	struct tc_rec r = rec(d, TC_REC_PACKET, idx);

	r.name = pkt_name(d, pkt);
	if (d->what & TC_ETM_PACKETS)
		give(d, &r);
	if (bad) {
		char text[sizeof(d->pkt_str) + 16];

		snprintf(text, sizeof(text), "bad packet %s", r.name);
		d->st.errors++;
		r.type = TC_REC_ERROR;
		r.name = NULL;
		r.text = text;
		give(d, &r);
	}
}

static inline void on_packet(struct tc_etm_ocsd *d, ocsd_trc_index_t idx, const void *pkt)
{
	/* every protocol's packet struct starts with its type */
	bool bad = (unsigned)*(const int *)pkt - (unsigned)d->bad_lo < d->bad_n;

	d->st.packets++;
	if (__builtin_expect(bad || (d->what & TC_ETM_PACKETS), 0))
		packet_out(d, idx, pkt, bad);
}

static void pkt_mon(const void *ctx, const ocsd_datapath_op_t op, const ocsd_trc_index_t idx,
		    const void *pkt, const uint32_t size, const uint8_t *data)
{
	(void)size, (void)data;
	if (op == OCSD_OP_DATA && pkt)
		on_packet((struct tc_etm_ocsd *)ctx, idx, pkt);
}

static ocsd_datapath_resp_t pkt_sink(const void *ctx, const ocsd_datapath_op_t op,
				     const ocsd_trc_index_t idx, const void *pkt)
{
	if (op == OCSD_OP_DATA && pkt)
		on_packet((struct tc_etm_ocsd *)ctx, idx, pkt);
	return OCSD_RESP_CONT;
}

/* ---- generic elements ---- */

static enum tc_isa isa_of(ocsd_isa isa)
{
	switch (isa) {
	case ocsd_isa_aarch64: return TC_ISA_A64;
	case ocsd_isa_arm: return TC_ISA_A32;
	case ocsd_isa_thumb2: return TC_ISA_T32;
	default: return TC_ISA_UNKNOWN;
	}
}

static enum tc_insn_class class_of(ocsd_instr_type t, ocsd_instr_subtype s)
{
	if (t == OCSD_INSTR_BR)
		return s == OCSD_S_INSTR_BR_LINK ? TC_INSN_CALL : TC_INSN_JUMP;
	if (t != OCSD_INSTR_BR_INDIRECT)
		return TC_INSN_OTHER;
	switch (s) {
	case OCSD_S_INSTR_BR_LINK: return TC_INSN_CALL;
	case OCSD_S_INSTR_V8_RET:
	case OCSD_S_INSTR_V7_IMPLIED_RET: return TC_INSN_RET;
	case OCSD_S_INSTR_V8_ERET: return TC_INSN_EXC_RET;
	default: return TC_INSN_JUMP_IND;
	}
}

static const char *unsync_text(unsync_info_t u)
{
	switch (u) {
	case UNSYNC_INIT_DECODER: return "init-decoder";
	case UNSYNC_RESET_DECODER: return "reset-decoder";
	case UNSYNC_OVERFLOW: return "overflow";
	case UNSYNC_DISCARD: return "discard";
	case UNSYNC_BAD_PACKET: return "bad-packet";
	case UNSYNC_EOT: return "end-of-trace";
	default: return NULL;
	}
}

static const char *const other_names[] = {
	[OCSD_GEN_TRC_ELEM_UNKNOWN] = "UNKNOWN",
	[OCSD_GEN_TRC_ELEM_I_RANGE_NOPATH] = "I_RANGE_NOPATH",
	[OCSD_GEN_TRC_ELEM_ADDR_UNKNOWN] = "ADDR_UNKNOWN",
	[OCSD_GEN_TRC_ELEM_CYCLE_COUNT] = "CYCLE_COUNT",
	[OCSD_GEN_TRC_ELEM_EVENT] = "EVENT",
	[OCSD_GEN_TRC_ELEM_SWTRACE] = "SWTRACE",
	[OCSD_GEN_TRC_ELEM_SYNC_MARKER] = "SYNC_MARKER",
	[OCSD_GEN_TRC_ELEM_MEMTRANS] = "MEMTRANS",
	[OCSD_GEN_TRC_ELEM_CUSTOM] = "CUSTOM",
};

static void track_context(struct tc_etm_ocsd *d, const ocsd_pe_context *c)
{
	if (c->ctxt_id_valid)
		d->mctx.context_id = c->context_id;
	if (c->vmid_valid)
		d->mctx.vmid = c->vmid;
	if (c->el_valid)
		d->mctx.el = c->exception_level;
	d->mctx.secure = c->security_level == ocsd_sec_secure;
}

static ocsd_datapath_resp_t on_elem(const void *ctx, const ocsd_trc_index_t idx,
				    const uint8_t chan, const ocsd_generic_trace_elem *el)
{
	struct tc_etm_ocsd *d = (struct tc_etm_ocsd *)ctx;
	struct tc_rec r = rec(d, TC_REC_OTHER, idx);

	(void)chan;
	d->st.elements++;
	switch (el->elem_type) {
	case OCSD_GEN_TRC_ELEM_INSTR_RANGE:
		if (el->en_addr <= el->st_addr || !el->num_instr_range) {
			/* corrupt trace (an address that wrapped): no instructions to show */
			d->st.errors++;
			r.type = TC_REC_ERROR;
			r.start = el->st_addr;
			r.text = "instruction range without instructions (corrupt trace)";
			break;
		}
		r.type = TC_REC_RANGE;
		r.start = el->st_addr;
		r.end = el->en_addr;
		r.insns = el->num_instr_range;
		r.isa = isa_of(el->isa);
		r.last = el->last_instr_exec ? 'E' : 'N';
		r.last_type = (uint8_t)class_of(el->last_i_type, el->last_i_subtype);
		r.last_size = (uint8_t)el->last_instr_sz;
		r.last_taken = el->last_instr_exec && r.last_type != TC_INSN_OTHER;
		d->st.ranges++;
		d->st.insns += r.insns;
		break;
	case OCSD_GEN_TRC_ELEM_PE_CONTEXT:
		track_context(d, &el->context);
		if (!(d->what & TC_ETM_ELEMENTS))
			return OCSD_RESP_CONT;
		r.type = TC_REC_CONTEXT;
		r.value = el->context.ctxt_id_valid ? el->context.context_id : 0;
		r.isa = isa_of(el->isa);
		break;
	case OCSD_GEN_TRC_ELEM_EXCEPTION:
		r.type = TC_REC_EXCEPTION;
		r.value = el->exception_number;
		r.start = el->en_addr;	/* preferred return address, where given */
		break;
	case OCSD_GEN_TRC_ELEM_EXCEPTION_RET:
		r.type = TC_REC_EXCEPTION_RET;
		break;
	case OCSD_GEN_TRC_ELEM_TRACE_ON:
		r.type = TC_REC_TRACE_ON;
		r.text = el->trace_on_reason == TRACE_ON_OVERFLOW ? "overflow"
			 : el->trace_on_reason == TRACE_ON_EX_DEBUG ? "debug-exit" : NULL;
		break;
	case OCSD_GEN_TRC_ELEM_NO_SYNC:
		r.type = TC_REC_NO_SYNC;
		r.text = unsync_text(el->unsync_eot_info);
		d->st.no_sync++;
		break;
	case OCSD_GEN_TRC_ELEM_ADDR_NACC:
		r.type = TC_REC_ADDR_NACC;
		r.start = el->st_addr;
		d->st.addr_nacc++;
		break;
	case OCSD_GEN_TRC_ELEM_TIMESTAMP:
		r.type = TC_REC_TIMESTAMP;
		r.value = el->timestamp;
		break;
	case OCSD_GEN_TRC_ELEM_EO_TRACE:
		r.type = TC_REC_EOT;
		break;
	default:
		r.name = (unsigned)el->elem_type < sizeof(other_names) / sizeof(other_names[0]) &&
					 other_names[el->elem_type]
				 ? other_names[el->elem_type]
				 : "UNKNOWN";
		if (el->elem_type == OCSD_GEN_TRC_ELEM_SWTRACE || el->has_ts)
			r.value = el->timestamp;
		break;
	}
	if (d->what & TC_ETM_ELEMENTS)
		give(d, &r);
	return OCSD_RESP_CONT;
}

/* ---- the fast decoder's callbacks ---- */

static void walk_elem(void *ctx, uint64_t idx, const ocsd_generic_trace_elem *el)
{
	on_elem(ctx, idx, 0, el);
}

static uint32_t walk_mem(void *ctx, uint64_t addr, uint32_t n, uint8_t *buf)
{
	struct tc_etm_ocsd *d = ctx;

	return (uint32_t)d->mem(d->ctx, &d->mctx, addr, buf, n);
}

static void walk_err(void *ctx, uint64_t idx, const char *text)
{
	struct tc_etm_ocsd *d = ctx;
	struct tc_rec r = rec(d, TC_REC_ERROR, idx);
	uint64_t u = tc_etm4_walk_unmodelled(d->walk);

	if (u != d->unmod_seen) {
		/* what it does not model: OpenCSD's decoder takes over (hand_over), where it
		 * can */
		d->unmod_seen = u;
		if (!d->hist.off && tc_etm4_walk_as_new(d->walk)) {
			d->handing = true;
			return;
		}
		d->unmod_said++;
	}
	d->st.errors++;
	r.text = text;
	give(d, &r);
}

/* Packets for the fast decoder, with EOT, FLUSH and RESET, as OpenCSD's decoder gets them.
 * The packet monitor (pkt_mon) sees them first, as in front of OpenCSD's decoder: with a
 * monitor the packet processor also gives the bytes it skips while unsynchronised.
 * The guard's model (etm4_guard.h) reads the same packets here instead of in a tree of its
 * own: at a hazard the packet processor is told to wait, the packet unseen by the walk, and
 * feed_fast() does what tc_etm_ocsd_feed() does with a look-ahead tree (the cut, the error,
 * the reset). Every reset of this tree reaches here, and resets the model too. */
static ocsd_datapath_resp_t fast_sink(const void *ctx, const ocsd_datapath_op_t op,
				      const ocsd_trc_index_t idx, const void *pkt)
{
	struct tc_etm_ocsd *d = (struct tc_etm_ocsd *)ctx;

	if (op == OCSD_OP_DATA) {
		if (!pkt)
			return OCSD_RESP_CONT;
		if (d->iguard && tc_etm4_guard_packet(d->iguard, pkt, idx, &d->hz_why)) {
			d->hz = true;
			d->hz_idx = idx;
			d->st.packets--;	/* the monitor's count: the decoder never saw it */
			return OCSD_RESP_WAIT;
		}
	} else if (op == OCSD_OP_RESET && d->iguard) {
		tc_etm4_guard_reset(d->iguard);
	}
	/* out of memory (-1) the walk told with an error record, and reset itself: it
	 * resynchronises further on, as OpenCSD's decoder after an error */
	tc_etm4_walk_op(d->walk, op, idx, pkt);
	return OCSD_RESP_CONT;
}

/* ---- memory ---- */

static uint32_t mem_acc(const void *ctx, const ocsd_vaddr_t addr, const ocsd_mem_space_acc_t sp,
			const uint32_t n, uint8_t *buf)
{
	struct tc_etm_ocsd *d = (struct tc_etm_ocsd *)ctx;

	(void)sp;
	return (uint32_t)d->mem(d->ctx, &d->mctx, addr, buf, n);
}

/* ---- set-up ---- */

static ocsd_arch_version_t arch_of(enum tc_etm_arch a)
{
	switch (a) {
	case TC_ETM_ARCH_V7: return ARCH_V7;
	case TC_ETM_ARCH_V8: return ARCH_V8;
	case TC_ETM_ARCH_V8R3: return ARCH_V8r3;
	default: return ARCH_AA64;
	}
}

static ocsd_core_profile_t profile_of(enum tc_etm_profile p)
{
	return p == TC_ETM_PROFILE_R ? profile_CortexR
	       : p == TC_ETM_PROFILE_M ? profile_CortexM : profile_CortexA;
}

/* libopencsd 1.3.3's C API creates an "ETE" decoder but cannot attach a packet callback to
 * it (OCSD_ERR_NO_PROTOCOL). Its ETMv4 decoder handles ETE packets when TRCIDR1 gives
 * architecture 5, which is what the ETE decoder is: the ETMv4 one with TRCIDR1's version
 * field taken from TRCDEVARCH (ARCHVER, REVISION). */
static ocsd_err_t create_ete_as_etmv4(struct tc_etm_ocsd *d, dcd_tree_handle_t tree, int flags,
				      uint8_t *csid, ocsd_arch_version_t arch,
				      ocsd_core_profile_t prof)
{
	const struct tc_etm_cfg *c = &d->cfg;
	uint32_t ver = ((c->trcdevarch >> 12) & 0xf) << 8 | ((c->trcdevarch >> 16) & 0xf) << 4;
	ocsd_etmv4_cfg v = { .reg_idr0 = c->trcidr0, .reg_idr1 = (c->trcidr1 & ~0xff0u) | ver,
			     .reg_idr2 = c->trcidr2, .reg_idr8 = c->trcidr8,
			     .reg_configr = c->trcconfigr, .reg_traceidr = c->trctraceidr,
			     .arch_ver = arch, .core_prof = prof };

	d->proto = OCSD_PROTOCOL_ETMV4I;
	return ocsd_dt_create_decoder(tree, OCSD_BUILTIN_DCD_ETMV4I, flags, &v, csid);
}

static ocsd_err_t create_decoder(struct tc_etm_ocsd *d, dcd_tree_handle_t tree, int flags,
				 uint8_t *csid)
{
	const struct tc_etm_cfg *c = &d->cfg;
	ocsd_arch_version_t arch = arch_of(c->arch);
	ocsd_core_profile_t prof = profile_of(c->profile);

	switch (c->proto) {
	case TC_ETM_PROTO_ETMV3: {
		ocsd_etmv3_cfg v = { .reg_idr = c->etmidr, .reg_ctrl = c->etmcr,
				     .reg_ccer = c->etmccer, .reg_trc_id = c->etmtraceidr,
				     .arch_ver = arch, .core_prof = prof };

		d->proto = OCSD_PROTOCOL_ETMV3;
		return ocsd_dt_create_decoder(tree, OCSD_BUILTIN_DCD_ETMV3, flags, &v, csid);
	}
	case TC_ETM_PROTO_PTM: {
		ocsd_ptm_cfg v = { .reg_idr = c->etmidr, .reg_ctrl = c->etmcr,
				   .reg_ccer = c->etmccer, .reg_trc_id = c->etmtraceidr,
				   .arch_ver = arch, .core_prof = prof };

		d->proto = OCSD_PROTOCOL_PTM;
		return ocsd_dt_create_decoder(tree, OCSD_BUILTIN_DCD_PTM, flags, &v, csid);
	}
	case TC_ETM_PROTO_ETMV4: {
		ocsd_etmv4_cfg v = { .reg_idr0 = c->trcidr0, .reg_idr1 = c->trcidr1,
				     .reg_idr2 = c->trcidr2, .reg_idr8 = c->trcidr8,
				     .reg_idr9 = c->trcidr9, .reg_idr10 = c->trcidr10,
				     .reg_idr11 = c->trcidr11, .reg_idr12 = c->trcidr12,
				     .reg_idr13 = c->trcidr13, .reg_configr = c->trcconfigr,
				     .reg_traceidr = c->trctraceidr, .arch_ver = arch,
				     .core_prof = prof };

		d->proto = OCSD_PROTOCOL_ETMV4I;
		return ocsd_dt_create_decoder(tree, OCSD_BUILTIN_DCD_ETMV4I, flags, &v, csid);
	}
	case TC_ETM_PROTO_ETE:
		return create_ete_as_etmv4(d, tree, flags, csid, arch, prof);
	case TC_ETM_PROTO_STM: {
		ocsd_stm_cfg v = { .reg_tcsr = c->stmtcsr, .reg_feat1r = c->stmfeat1r,
				   .reg_feat3r = c->stmfeat3r, .reg_devid = c->stmdevid };

		d->proto = OCSD_PROTOCOL_STM;
		return ocsd_dt_create_decoder(tree, OCSD_BUILTIN_DCD_STM, flags, &v, csid);
	}
	}
	return OCSD_ERR_INVALID_PARAM_VAL;
}

/* The ETMv4 decoder's look-ahead (etm4_guard.h): the same configuration, packets only. */
static ocsd_err_t new_guard(struct tc_etm_ocsd *d)
{
	dcd_tree_handle_t tree = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
	uint8_t csid = 0;
	ocsd_err_t err;

	if (!tree)
		return OCSD_ERR_MEM;
	err = create_decoder(d, tree, OCSD_CREATE_FLG_PACKET_PROC, &csid);
	if (err) {
		ocsd_destroy_dcd_tree(tree);
		return err;
	}
	/* TRCIDR8 is MAXSPEC, the speculation depth beyond which P0 elements commit */
	d->guard = tc_etm4_guard_new(tree, csid, d->cfg.trcidr8);
	return d->guard ? OCSD_OK : OCSD_ERR_MEM;
}

/* Whether etm4_walk.c models this source: ETMv4 (not ETE), A profile, v8 (A64 code), and
 * none of data trace, conditional trace or Q elements (TRCCONFIGR). The configuration of
 * its walk goes to *w. */
static bool fast_config(const struct tc_etm_cfg *c, struct tc_etm4_walk_cfg *w)
{
	ocsd_arch_version_t arch = arch_of(c->arch);
	unsigned maj = (c->trcidr1 >> 8) & 0xf, full = (c->trcidr1 >> 4) & 0xff;

	if (c->proto != TC_ETM_PROTO_ETMV4 || c->profile != TC_ETM_PROFILE_A ||
	    !OCSD_IS_V8_ARCH(arch) || maj >= 5 || (c->trcconfigr & 0x6) ||
	    ((c->trcconfigr >> 8) & 0x7) || ((c->trcconfigr >> 13) & 0x3))
		return false;
	*w = (struct tc_etm4_walk_cfg){ .trace_id = c->trace_id, .cpu = c->cpu,
					.max_spec = c->trcidr8,
					.ret_stack = (c->trcconfigr >> 12) & 1,
					.cci = (c->trcconfigr >> 4) & 1 };
	if (arch >= ARCH_V8r3)
		w->a64_flags |= TC_A64_F_V8_3;
	if (arch >= ARCH_AA64)
		w->a64_flags |= TC_A64_F_AA64;
	if ((c->trcidr2 & 0x80000000u) && full >= 0x43)
		w->a64_flags |= TC_A64_F_WFI_WFE;
	return true;
}

/* d->tree (new) as OpenCSD's own decoder, or its packet processor alone (packets only). */
static ocsd_err_t setup_tree(struct tc_etm_ocsd *d)
{
	ocsd_err_t err = create_decoder(d, d->tree,
					d->full ? OCSD_CREATE_FLG_FULL_DECODER
						: OCSD_CREATE_FLG_PACKET_PROC,
					&d->csid);

	if (!err && d->full)
		err = ocsd_dt_set_gen_elem_outfn(d->tree, on_elem, d);
	if (!err)
		err = d->full ? ocsd_dt_attach_packet_callback(d->tree, d->csid,
							       OCSD_C_API_CB_PKT_MON,
							       (void *)pkt_mon, d)
			      : ocsd_dt_attach_packet_callback(d->tree, d->csid,
							       OCSD_C_API_CB_PKT_SINK,
							       (void *)pkt_sink, d);
	if (!err && d->full && d->mem)
		err = ocsd_dt_add_callback_mem_acc(d->tree, 0, ~(ocsd_vaddr_t)0,
						   OCSD_MEM_SPACE_ANY, mem_acc, d);
	if (!err && d->proto == OCSD_PROTOCOL_ETMV4I)
		err = new_guard(d);
	return err;
}

struct tc_etm_ocsd *tc_etm_ocsd_new(const struct tc_etm_cfg *cfg, unsigned what,
				    tc_etm_emit_fn emit, tc_etm_mem_fn mem, void *ctx,
				    struct tc_err *e)
{
	struct tc_etm_ocsd *d;
	ocsd_err_t err;
	/* Packets alone come from the packet processor alone: a packet listing must not depend
	 * on (or crash in) the instruction decoder, nor need the traced code. */
	int full = (what & TC_ETM_ELEMENTS) != 0;
	struct tc_etm4_walk_cfg wcfg;
	bool fast = full && mem && !(what & TC_ETM_REFERENCE) && fast_config(cfg, &wcfg);

	if (!emit || (!mem && (what & TC_ETM_ELEMENTS) && cfg->proto != TC_ETM_PROTO_STM)) {
		tc_err_set(e, 0, "trace ID 0x%02x: element decoding needs a memory callback",
			   cfg->trace_id);
		return NULL;
	}
	d = aligned_alloc(LINE, sizeof(*d));	/* a multiple of LINE, as its alignment */
	if (!d) {
		tc_err_sys(e, ENOMEM, "trace ID 0x%02x", cfg->trace_id);
		return NULL;
	}
	memset(d, 0, sizeof(*d));
	d->cfg = *cfg;
	d->full = full;
	d->what = what;
	d->emit = emit;
	d->mem = mem;
	d->ctx = ctx;
	mctx_init(d);
	d->tree = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
	if (!d->tree) {
		tc_err_set(e, 0, "trace ID 0x%02x: cannot create an OpenCSD decode tree",
			   cfg->trace_id);
		free(d);
		return NULL;
	}
	if (fast) {
		d->walk = tc_etm4_walk_new(&wcfg, walk_elem, walk_mem, walk_err, d, &d->mctx);
		d->st.fast = true;
		err = d->walk ? create_decoder(d, d->tree, OCSD_CREATE_FLG_PACKET_PROC, &d->csid)
			      : OCSD_ERR_MEM;
		if (!err)
			err = ocsd_dt_attach_packet_callback(d->tree, d->csid,
							     OCSD_C_API_CB_PKT_MON,
							     (void *)pkt_mon, d);
		if (!err)
			err = ocsd_dt_attach_packet_callback(d->tree, d->csid,
							     OCSD_C_API_CB_PKT_SINK,
							     (void *)fast_sink, d);
		if (!err)
			err = (d->iguard = tc_etm4_guard_new_inline(d->cfg.trcidr8)) ? OCSD_OK
										    : OCSD_ERR_MEM;
	} else {
		d->hist.off = true;
		err = setup_tree(d);
	}
	if (!err && !(d->fence = malloc(FENCE)))
		err = OCSD_ERR_MEM;
	if (err) {
		tc_err_set(e, 0, "trace ID 0x%02x: OpenCSD cannot set up a %s decoder (error %d)",
			   cfg->trace_id, tc_etm_ocsd_proto_name(cfg->proto), (int)err);
		tc_etm_ocsd_free(d);
		return NULL;
	}
	bad_range(d);
	if (d->walk)
		hist_start(d);
	return d;
}

void tc_etm_ocsd_free(struct tc_etm_ocsd *d)
{
	if (!d)
		return;
	if (d->tree)
		ocsd_destroy_dcd_tree(d->tree);
	tc_etm4_guard_free(d->guard);
	tc_etm4_guard_free(d->iguard);
	tc_etm4_walk_free(d->walk);
	free(d->hist.b);
	free(d->fence);
	free(d);
}

/* A fatal datapath response: say so, reset the tree and carry on after the bytes taken.
 * The text is the response's: the library's last error (ocsd_get_last_err, the only one its
 * C API gives) is the process's, and may be another tree's (the guard's look-ahead reads
 * these bytes first; another ID's decoder, in whatever order --jobs ran them) or one logged
 * before this failure, whose cause the library may log only as a warning, not kept. */
static const char *fatal_text(ocsd_datapath_resp_t resp)
{
	switch (resp) {
	case OCSD_RESP_FATAL_NOT_INIT: return "OpenCSD: fatal error (not initialised)";
	case OCSD_RESP_FATAL_INVALID_OP: return "OpenCSD: fatal error (invalid operation)";
	case OCSD_RESP_FATAL_INVALID_PARAM: return "OpenCSD: fatal error (invalid parameter)";
	case OCSD_RESP_FATAL_INVALID_DATA: return "OpenCSD: fatal error (invalid trace data)";
	case OCSD_RESP_FATAL_SYS_ERR: return "OpenCSD: fatal error (system error)";
	default: return "OpenCSD: fatal error";
	}
}

static void fatal(struct tc_etm_ocsd *d, uint64_t index, ocsd_datapath_resp_t resp)
{
	struct tc_rec r = rec(d, TC_REC_ERROR, index);

	r.text = fatal_text(resp);
	d->st.errors++;
	give(d, &r);
	ocsd_dt_process_data(d->tree, OCSD_OP_RESET, index, 0, NULL, NULL);
}

static void feed(struct tc_etm_ocsd *d, uint64_t index, const uint8_t *data, size_t len)
{
	size_t done = 0;

	while (done < len && !d->hz) {
		uint32_t n = 0,
			 want = len - done > UINT32_MAX ? UINT32_MAX : (uint32_t)(len - done);
		ocsd_datapath_resp_t resp = ocsd_dt_process_data(
			d->tree, OCSD_OP_DATA, index + done, want, data + done, &n);

		if (OCSD_DATA_RESP_IS_FATAL(resp)) {
			fatal(d, index + done + n, resp);
			n = n ? n : 1;	/* never stall on a byte the decoder refuses */
		} else if (OCSD_DATA_RESP_IS_WAIT(resp) && !d->hz) {
			/* Our callbacks never ask to wait; flush in case the library does. */
			ocsd_dt_process_data(d->tree, OCSD_OP_FLUSH, 0, 0, NULL, NULL);
		}
		done += n;
		if (!n && !OCSD_DATA_RESP_IS_WAIT(resp))
			break;
	}
}

/* A packet the decoder must not see: report it, and resync the decoder there. A packet
 * listing shows it too (nothing in it can crash) and goes on. */
static void guarded(struct tc_etm_ocsd *d, uint64_t index, const char *why)
{
	struct tc_rec r = rec(d, TC_REC_ERROR, index);
	char text[160];

	snprintf(text, sizeof(text), "%s%s", why,
		 d->full ? ": packet skipped, decoder resynchronised" : "");
	if (!d->st.guarded++) {
		d->st.guarded_first = index;
		d->st.guarded_why = why;
	}
	d->st.errors++;
	r.text = text;
	give(d, &r);
	if (d->full)
		ocsd_dt_process_data(d->tree, OCSD_OP_RESET, index, 0, NULL, NULL);
}

/* tc_etm_ocsd_feed() with the guard's model inline (fast_sink): feed until a hazard stops
 * the tree, then cut where its packet began (not before these bytes, as the look-ahead), say
 * so, reset, and feed again from the cut. */
static void feed_fast(struct tc_etm_ocsd *d, uint64_t index, const uint8_t *data, size_t len)
{
	size_t pos = 0;

	while (pos < len) {
		size_t cut;

		feed(d, index + pos, data + pos, len - pos);
		if (!d->hz)
			return;
		d->hz = false;
		cut = d->hz_idx > index + pos ? (size_t)(d->hz_idx - (index + pos)) : 0;
		if (cut > len - pos)
			cut = len - pos;	/* cannot happen: the packet began in these bytes */
		guarded(d, index + pos + cut, d->hz_why);
		if (!cut && pos)
			break;	/* cannot happen (a reset tree needs an ASYNC first) */
		pos += cut;
	}
}

/* The bytes to the tree: the fast decoder's, or OpenCSD's behind the guard's look-ahead. */
static void feed_tree(struct tc_etm_ocsd *d, uint64_t index, const uint8_t *data, size_t len)
{
	size_t pos = 0;
	int64_t start;
	const char *why;

	if (d->iguard) {
		feed_fast(d, index, data, len);
		return;
	}
	if (!d->guard) {
		feed(d, index, data, len);
		return;
	}
	/* The look-ahead reads first; the decoder gets the bytes before a hazard, is reset
	 * there and reads on from it unsynchronised (it skips to the next ASYNC), as does the
	 * look-ahead. A reset look-ahead needs a new ASYNC before its next hazard, so each
	 * round after the first cuts further on. */
	while (pos < len && tc_etm4_guard_scan(d->guard, data + pos, len - pos, &start, &why)) {
		size_t cut = start > 0 ? (size_t)start : 0;

		feed(d, index + pos, data + pos, cut);
		guarded(d, index + pos + cut, why);
		tc_etm4_guard_rewind(d->guard, cut);
		if (!cut && pos)
			break;	/* cannot happen (see above); never loop on it */
		pos += cut;
	}
	feed(d, index + pos, data + pos, len - pos);
}

static void reset_tree(struct tc_etm_ocsd *d, uint64_t index)
{
	ocsd_dt_process_data(d->tree, OCSD_OP_FLUSH, index, 0, NULL, NULL);
	ocsd_dt_process_data(d->tree, OCSD_OP_RESET, index, 0, NULL, NULL);
	if (d->guard)
		tc_etm4_guard_reset(d->guard);
}

static void finish_tree(struct tc_etm_ocsd *d)
{
	/* Elements flushed out by EOT report the index given with it: the end of the data. */
	ocsd_dt_process_data(d->tree, OCSD_OP_EOT, d->end_index, 0, NULL, NULL);
}

/* ---- the hand-over: OpenCSD's decoder where the fast one cannot follow ----
 * The fast decoder's records are OpenCSD's, record for record, up to where it meets what
 * it does not model (walk_err): from there it gives nothing (give), and once the
 * operation it was in is done, a new tree with OpenCSD's decoder decodes every operation
 * since the decoder was made or last reset (kept here, up to TC_ETM_OCSD_KEEP bytes; perf
 * resets at each AUX block), the reset first, with the counts and memory context as they
 * were then, the records given since left out (their hash checked: where the memory
 * changed since, or OpenCSD's decoder read what it kept across the reset, an error says
 * they differ), and goes on in place of the fast one. What else OpenCSD's decoder keeps
 * across a reset the walk says (tc_etm4_walk_as_new): where a new one would differ in
 * records to come, the fast decoder says what it met, as past the bytes kept. */
/* An operation kept: its kind and length (len << 2 | kind), then its index less the one
 * before it (zigzag), both as LEB128, then its bytes: the demultiplexer hands an ID's trace
 * over a frame's bytes at a time (some 15, their frames 16 apart), 2 bytes kept besides. */
enum op_kind { OP_FEED, OP_RESET, OP_FINISH };

#define OP_HDR_MAX 20		/* two LEB128 numbers of 64 bits at most */

static size_t leb_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	for (; v >= 0x80; v >>= 7)
		p[n++] = (uint8_t)(v | 0x80);
	p[n++] = (uint8_t)v;
	return n;
}

static uint64_t leb_get(const uint8_t **p)
{
	uint64_t v = 0;

	for (unsigned sh = 0;; sh += 7) {
		uint8_t b = *(*p)++;

		v |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80) || sh >= 63)
			return v;
	}
}

/* No hand-over until the next reset; the buffer kept for the next one's operations unless
 * free. */
static void hist_drop(struct tc_etm_ocsd *d, bool free_it)
{
	if (free_it) {
		free(d->hist.b);
		d->hist.b = NULL;
		d->hist.cap = 0;
	}
	d->hist.len = 0;
	d->hist.off = true;
}

/* The operations kept from here (the decoder made, or reset: first). */
static void hist_start(struct tc_etm_ocsd *d)
{
	d->hist.len = 0;
	d->hist.off = false;
	d->hist.last = 0;
	d->given = d->hash = 0;
	d->st0 = d->st;
	d->mctx0 = d->mctx;
	tc_etm4_walk_mark(d->walk);
}

/* Room for an operation of len bytes (else no hand-over until the next reset). */
static bool hist_room(struct tc_etm_ocsd *d, size_t len)
{
	if (len > TC_ETM_OCSD_KEEP || d->hist.len + OP_HDR_MAX + len > TC_ETM_OCSD_KEEP ||
	    tc_grow((void **)&d->hist.b, &d->hist.cap, d->hist.len + OP_HDR_MAX + len, 1)) {
		hist_drop(d, true);
		return false;
	}
	return true;
}

static inline void keep_op(struct tc_etm_ocsd *d, enum op_kind kind, uint64_t index,
			   const uint8_t *data, size_t len)
{
	uint64_t delta = index - d->hist.last;
	uint8_t *p;

	if (d->hist.off || (d->hist.len + OP_HDR_MAX + len > d->hist.cap && !hist_room(d, len)))
		return;
	p = d->hist.b + d->hist.len;
	p += leb_put(p, (uint64_t)len << 2 | kind);
	p += leb_put(p, delta << 1 ^ (uint64_t)((int64_t)delta >> 63));
	if (len)
		memcpy(p, data, len);
	d->hist.len = (size_t)(p + len - d->hist.b);
	d->hist.last = index;
}

static void replay(struct tc_etm_ocsd *d, const uint8_t *b, size_t len)
{
	const uint8_t *p = b, *end = b + len;
	uint64_t index = 0;

	while (p < end) {
		uint64_t k = leb_get(&p), z = leb_get(&p);
		size_t n = (size_t)(k >> 2);

		index += z >> 1 ^ (uint64_t)-(int64_t)(z & 1);
		if ((k & 3) == OP_FEED) {
			d->end_index = index + n;
			feed_tree(d, index, p, n);
			p += n;
		} else if ((k & 3) == OP_RESET) {
			reset_tree(d, index);
		} else {
			d->end_index = index;
			finish_tree(d);
		}
	}
}

static void hand_over(struct tc_etm_ocsd *d)
{
	dcd_tree_handle_t fast_tree = d->tree;
	struct tc_etm4_walk *walk = d->walk;
	struct tc_etm4_guard *iguard = d->iguard;
	const struct tc_etm_ocsd_stats st = *tc_etm_ocsd_stats(d);
	uint64_t end = d->end_index;
	ocsd_err_t err = OCSD_ERR_MEM;
	struct tc_rec r = rec(d, TC_REC_ERROR, end);
	uint8_t *b = d->hist.b;
	size_t len = d->hist.len;

	d->handing = false;
	d->hz = false;
	d->walk = NULL;
	d->iguard = NULL;
	d->hist.b = NULL;
	hist_drop(d, true);
	if ((d->tree = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0)))
		err = setup_tree(d);
	if (err) {
		/* the fast decoder goes on, and says what it met (the operation's records after
		 * it are lost) */
		if (d->tree)
			ocsd_destroy_dcd_tree(d->tree);
		tc_etm4_guard_free(d->guard);
		d->guard = NULL;
		d->tree = fast_tree;
		d->walk = walk;
		d->iguard = iguard;
		free(b);
		d->st.errors++;
		d->unmod_said++;
		r.text = "ETMv4 fast decoder: code that is not A64, and OpenCSD's decoder could "
			 "not take over for want of memory (use --decoder=reference)";
		give(d, &r);
		return;
	}
	ocsd_destroy_dcd_tree(fast_tree);
	tc_etm4_walk_free(walk);
	tc_etm4_guard_free(iguard);
	d->st = d->st0;
	d->st.bytes = st.bytes;
	d->st.handovers = 1;
	d->st.ref_undefined = st.ref_undefined;
	d->st.block_hits = st.block_hits;
	d->st.block_misses = st.block_misses;
	d->mctx = d->mctx0;
	d->skip = d->given;
	d->rhash = 0;
	replay(d, b, len);
	free(b);
	d->end_index = end;
	if (d->skip)	/* fewer records than given */
		replay_differs(d, end);
}

void tc_etm_ocsd_feed(struct tc_etm_ocsd *d, uint64_t index, const uint8_t *data, size_t len)
{
	d->st.bytes += len;
	d->end_index = index + len;
	keep_op(d, OP_FEED, index, data, len);
	feed_tree(d, index, data, len);
	if (d->handing)
		hand_over(d);
}

void tc_etm_ocsd_reset(struct tc_etm_ocsd *d, uint64_t index)
{
	keep_op(d, OP_RESET, index, NULL, 0);	/* its flush may meet it */
	reset_tree(d, index);
	if (d->handing)
		hand_over(d);
	if (!d->walk)
		return;
	hist_start(d);
	keep_op(d, OP_RESET, index, NULL, 0);
}

void tc_etm_ocsd_finish(struct tc_etm_ocsd *d)
{
	keep_op(d, OP_FINISH, d->end_index, NULL, 0);
	finish_tree(d);
	if (d->handing)
		hand_over(d);
}

void tc_etm_ocsd_mem_changed(struct tc_etm_ocsd *d)
{
	/* 1.3.3 keeps no opcode cache behind a callback accessor; re-adding it makes later
	 * versions (which do cache) forget what they held. */
	if (!d->mem)
		return;
	if (d->walk) {
		/* a replay would read the new memory where the records given read the old */
		if (d->hist.len)
			hist_drop(d, false);
		tc_etm4_walk_mem_changed(d->walk);
		return;
	}
	ocsd_dt_remove_mem_acc(d->tree, 0, OCSD_MEM_SPACE_ANY);
	ocsd_dt_add_callback_mem_acc(d->tree, 0, ~(ocsd_vaddr_t)0, OCSD_MEM_SPACE_ANY, mem_acc,
				     d);
}

const struct tc_etm_ocsd_stats *tc_etm_ocsd_stats(const struct tc_etm_ocsd *d)
{
	struct tc_etm_ocsd *m = (struct tc_etm_ocsd *)d;

	/* (also after a hand-over, whose counts start from those at the last reset) */
	m->st.unmodelled = d->unmod_said;
	if (d->walk) {
		m->st.ref_undefined = tc_etm4_walk_undefined(d->walk);
		tc_etm4_walk_cache_stats(d->walk, &m->st.block_hits, &m->st.block_misses);
	}
	return &d->st;
}
