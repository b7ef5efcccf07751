/* The one record type both decoders (CoreSight via OpenCSD, Intel PT via libipt) emit, so
 * that every output writer and report serves both. */
#ifndef TC_DECODERS_REC_H
#define TC_DECODERS_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tc_rec_type {
	TC_REC_RANGE,		/* instructions start..end (exclusive) executed */
	TC_REC_BRANCH,		/* perf convention: from 0 at trace start, to 0 at a gap */
	TC_REC_PACKET,		/* one trace packet (--packets) */
	TC_REC_CONTEXT,		/* context / thread change seen in the trace */
	TC_REC_EXCEPTION,
	TC_REC_EXCEPTION_RET,
	TC_REC_TRACE_ON,	/* trace (re)started: a discontinuity */
	TC_REC_NO_SYNC,		/* decoder lost or has not yet found sync */
	TC_REC_ADDR_NACC,	/* no memory image at this address */
	TC_REC_TIMESTAMP,
	TC_REC_EOT,		/* end of the trace stream */
	TC_REC_ERROR,		/* decode error; decoding resynchronises */
	TC_REC_LOST,		/* trace known to be missing (truncated AUX, no data) */
	TC_REC_OTHER,		/* any other element, by name */
	TC_REC_EVENT,		/* a recorded sample of a tracepoint: name, time, fields */
};

/* One field of an EVENT record, from the event's format (common_* fields left out). */
enum tc_field_kind { TC_FIELD_INT, TC_FIELD_UINT, TC_FIELD_STR, TC_FIELD_ARRAY };

struct tc_rec_field {
	const char *name;
	enum tc_field_kind kind;
	int64_t i;		/* INT */
	uint64_t u;		/* UINT */
	const char *s;		/* STR */
	const uint64_t *arr;	/* ARRAY: n unsigned elements */
	size_t n;
};

/* What the last instruction of a range is, the same for both decoders (OpenCSD's type and
 * subtype, libipt's class map onto it): what call-stack reconstruction needs. */
enum tc_insn_class {
	TC_INSN_OTHER,		/* not a branch, or unknown */
	TC_INSN_JUMP,		/* direct jump, conditional or not */
	TC_INSN_JUMP_IND,	/* indirect jump (not a return) */
	TC_INSN_CALL,		/* call: direct or indirect, with link */
	TC_INSN_RET,		/* function return */
	TC_INSN_SYSCALL,	/* SVC, SYSCALL: into the kernel */
	TC_INSN_EXC_RET,	/* ERET, SYSRET, IRET: out of an exception */
};

/* Instruction set of a range. */
enum tc_isa { TC_ISA_UNKNOWN, TC_ISA_A64, TC_ISA_A32, TC_ISA_T32, TC_ISA_X86_64, TC_ISA_X86_32 };

struct tc_rec {
	enum tc_rec_type type;
	int id;			/* CoreSight trace ID, -1 where there is none (PT) */
	int cpu;		/* -1 if unknown */
	int pid, tid;		/* -1 if unknown */
	uint64_t offset;	/* byte offset in the input (file or buffer) */
	uint64_t start, end;	/* RANGE: [start, end); BRANCH: from, to; ADDR_NACC: start;
				 * EVENT: start, the sample's ip (0 where not sampled) */
	uint32_t insns;		/* RANGE: instruction count */
	enum tc_isa isa;
	char last;		/* RANGE: 'E' last instruction executed, 'N' not executed */
	uint8_t last_type;	/* RANGE: enum tc_insn_class of the last instruction */
	uint8_t last_size;	/* RANGE: bytes of the last instruction (0 unknown) */
	bool last_taken;	/* RANGE: the last instruction is a branch and was taken */
	uint64_t value;		/* TIMESTAMP, EXCEPTION number, CONTEXT id */
	const char *name;	/* PACKET: packet name; OTHER: element name */
	const char *text;	/* ERROR/LOST/NO_SYNC: explanation (may be NULL); EVENT: the
				 * event's own print format applied (perf script's text) */
	/* Perf time (ns) when has_time: EVENT's sample time; Intel PT flow records' once the
	 * trace has told the time (TSC converted). */
	bool has_time;
	uint64_t time;
	const struct tc_rec_field *fields;
	size_t nfields;
};

const char *tc_rec_type_name(enum tc_rec_type t);
const char *tc_rec_isa_name(enum tc_isa isa);
const char *tc_rec_insn_class_name(enum tc_insn_class c);

#endif
