/* One CoreSight trace source (one trace ID) decoded by OpenCSD's C API: ETMv3, PTM, ETMv4, ETE
 * and STM. Fed with that ID's bytes from our own demultiplexer (decoders/coresight/cs_frame.c), so each
 * source has its own single-source OpenCSD tree. Emits struct tc_rec: packets (with the name
 * OpenCSD's packet printer gives the type) and/or generic elements (ranges, context,
 * exceptions, ...). Memory for instruction following comes through a callback. */
#ifndef TC_DECODERS_CORESIGHT_ETM_OCSD_H
#define TC_DECODERS_CORESIGHT_ETM_OCSD_H

#include <stddef.h>
#include <stdint.h>

#include "decoders/rec.h"
#include "lib/util/err.h"

enum tc_etm_proto { TC_ETM_PROTO_ETMV3, TC_ETM_PROTO_PTM, TC_ETM_PROTO_ETMV4, TC_ETM_PROTO_ETE,
		    TC_ETM_PROTO_STM };

/* Architecture / profile of the traced core, as OpenCSD wants them. */
enum tc_etm_arch { TC_ETM_ARCH_V7, TC_ETM_ARCH_V8, TC_ETM_ARCH_V8R3, TC_ETM_ARCH_AA64 };
enum tc_etm_profile { TC_ETM_PROFILE_A, TC_ETM_PROFILE_R, TC_ETM_PROFILE_M };

/* Register values of one trace source; fields a protocol does not use stay 0. */
struct tc_etm_cfg {
	enum tc_etm_proto proto;
	enum tc_etm_arch arch;
	enum tc_etm_profile profile;
	uint8_t trace_id;
	int cpu;			/* -1 if unknown; copied into every record */
	/* ETMv3 / PTM */
	uint32_t etmidr, etmcr, etmccer, etmtraceidr;
	/* ETMv4 / ETE */
	uint32_t trcidr0, trcidr1, trcidr2, trcidr8, trcidr9, trcidr10, trcidr11, trcidr12,
		 trcidr13, trcconfigr, trctraceidr, trcdevarch;
	/* STM */
	uint32_t stmtcsr, stmfeat1r, stmfeat3r, stmdevid;
};

/* What to emit. */
#define TC_ETM_PACKETS	0x01	/* TC_REC_PACKET for every packet */
#define TC_ETM_ELEMENTS	0x02	/* generic elements: RANGE, CONTEXT, EXCEPTION, ... */
/* Elements from OpenCSD's own full decoder (--decoder=reference). Without it, ETMv4 sources
 * whose configuration decoders/coresight/etm4_walk.c models (A-profile v8, no data,
 * conditional or Q trace) are decoded by that fast decoder over OpenCSD's packet processor,
 * with the same records; every other source by OpenCSD's full decoder. Where the fast
 * decoder meets what it does not model (code that is not A64: AArch32), OpenCSD's decoder
 * takes over: it decodes the ID's trace again since the decoder was made or last reset
 * (kept for this, up to TC_ETM_OCSD_KEEP bytes), the records given already left out, and
 * goes on from there. Past that, the fast decoder says what it met with an error record. */
#define TC_ETM_REFERENCE 0x04
/* Bytes of each ID's trace kept for a hand-over, since its decoder was made or reset
 * (operations and their indexes included). */
#define TC_ETM_OCSD_KEEP (8u << 20)

/* Memory state an instruction fetch happens in, for the callback. */
struct tc_etm_mem_ctx {
	int cpu;
	uint8_t trace_id;
	int64_t context_id;		/* last CONTEXTIDR seen, -1 none */
	int64_t vmid;			/* -1 none */
	int el;				/* exception level, -1 unknown */
	int secure;			/* 1 secure, 0 non-secure, -1 unknown */
};

/* Copy up to len bytes at addr into buf; return how many (0: no image there). */
typedef size_t (*tc_etm_mem_fn)(void *ctx, const struct tc_etm_mem_ctx *m, uint64_t addr,
				uint8_t *buf, size_t len);
typedef void (*tc_etm_emit_fn)(void *ctx, const struct tc_rec *r);

struct tc_etm_ocsd_stats {
	uint64_t bytes, packets, elements, ranges, insns;
	uint64_t errors;		/* bad packets / decode errors (each also emitted) */
	uint64_t no_sync, addr_nacc;
	uint64_t guarded;		/* packets kept from OpenCSD (etm4_guard.h), in errors */
	uint64_t guarded_first;		/* offset of the first */
	const char *guarded_why;	/* what the first was (a static string) */
	bool fast;			/* decoded by etm4_walk.c, not OpenCSD's decoder */
	uint64_t unmodelled;		/* fast: things it could not follow (each an error) */
	/* fast: 1 once OpenCSD's decoder took over where the fast one met what it does not
	 * model (code that is not A64), 0 before; the records are OpenCSD's all along */
	uint64_t handovers;
	uint64_t ref_undefined;		/* fast: where OpenCSD's behaviour is undefined
					 * (etm4_walk.h); the fast decoder resyncs */
	uint64_t block_hits, block_misses;	/* fast: walks from the block cache or not */
};

struct tc_etm_ocsd;

/* mem may be NULL with TC_ETM_PACKETS only. -1 with a message naming the ID on failure. */
struct tc_etm_ocsd *tc_etm_ocsd_new(const struct tc_etm_cfg *cfg, unsigned what,
				    tc_etm_emit_fn emit, tc_etm_mem_fn mem, void *ctx,
				    struct tc_err *e);
void tc_etm_ocsd_free(struct tc_etm_ocsd *d);

/* Bytes of this ID's stream; index is the input offset the packets starting in them report
 * (for a formatted buffer the offset of their frame, as OpenCSD's own deformatter does). */
void tc_etm_ocsd_feed(struct tc_etm_ocsd *d, uint64_t index, const uint8_t *data, size_t len);
/* Discontinuity in the input (AUX buffer boundary, 4x FSYNC reset): flush and resync. */
void tc_etm_ocsd_reset(struct tc_etm_ocsd *d, uint64_t index);
/* End of trace: flush what is pending (emits EOT). */
void tc_etm_ocsd_finish(struct tc_etm_ocsd *d);
/* The memory behind the callback changed (new mapping): drop cached opcodes. */
void tc_etm_ocsd_mem_changed(struct tc_etm_ocsd *d);

const struct tc_etm_ocsd_stats *tc_etm_ocsd_stats(const struct tc_etm_ocsd *d);
const char *tc_etm_ocsd_proto_name(enum tc_etm_proto p);

/* *r as (struct tc_rec){ .type, .id, .cpu, .pid, .tid, .offset } would be, the rest zero,
 * field by field: per element, GCC clears that 120-byte literal with `rep stos`, whose
 * start-up costs more than the stores. */
static inline void tc_etm_ocsd_rec_init(struct tc_rec *r, enum tc_rec_type type, int id,
					int cpu, int pid, int tid, uint64_t offset)
{
	_Static_assert(sizeof(struct tc_rec) == 120,
		       "struct tc_rec changed: set the new field here too");
	r->type = type;
	r->id = id;
	r->cpu = cpu;
	r->pid = pid;
	r->tid = tid;
	r->offset = offset;
	r->start = r->end = 0;
	r->insns = 0;
	r->isa = TC_ISA_UNKNOWN;
	r->last = 0;
	r->last_type = r->last_size = 0;
	r->last_taken = false;
	r->value = 0;
	r->name = r->text = NULL;
	r->has_time = false;
	r->time = 0;
	r->fields = NULL;
	r->nfields = 0;
}

#endif
