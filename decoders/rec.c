#include "decoders/rec.h"

static const char *const type_names[] = {
	[TC_REC_RANGE] = "range",
	[TC_REC_BRANCH] = "branch",
	[TC_REC_PACKET] = "packet",
	[TC_REC_CONTEXT] = "context",
	[TC_REC_EXCEPTION] = "exception",
	[TC_REC_EXCEPTION_RET] = "exception_return",
	[TC_REC_TRACE_ON] = "trace_on",
	[TC_REC_NO_SYNC] = "no_sync",
	[TC_REC_ADDR_NACC] = "no_image",
	[TC_REC_TIMESTAMP] = "timestamp",
	[TC_REC_EOT] = "end",
	[TC_REC_ERROR] = "error",
	[TC_REC_LOST] = "lost",
	[TC_REC_OTHER] = "other",
	[TC_REC_EVENT] = "event",
};

const char *tc_rec_type_name(enum tc_rec_type t)
{
	if ((unsigned)t < sizeof(type_names) / sizeof(type_names[0]) && type_names[t])
		return type_names[t];
	return "unknown";
}

const char *tc_rec_isa_name(enum tc_isa isa)
{
	static const char *const n[] = { "?", "A64", "A32", "T32", "x86_64", "x86" };

	return (unsigned)isa < sizeof(n) / sizeof(n[0]) ? n[isa] : "?";
}

const char *tc_rec_insn_class_name(enum tc_insn_class c)
{
	static const char *const n[] = { "other", "jump", "jump_ind", "call", "ret", "syscall",
					 "exc_ret" };

	return (unsigned)c < sizeof(n) / sizeof(n[0]) ? n[c] : "other";
}
