#include "decoders/itrace.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lib/isa/x86.h"
#include "lib/util/grow.h"

/* perf's letters tracectl does not synthesize, with perf's meaning, for the refusal. */
static const struct {
	char c;
	const char *what;
} unsupported[] = {
	{ 'y', "cycle samples" },
	{ 'x', "transaction samples" },
	{ 'w', "ptwrite samples" },
	{ 'p', "power event samples" },
	{ 'o', "other event samples" },
	{ 'I', "interrupt samples" },
	{ 'E', "event trace samples" },
	{ 'd', "decoder debug log" },
	{ 'f', "filtering on a flag" },
	{ 'g', "call chains on samples" },
	{ 'G', "call chains on samples" },
	{ 'l', "last-branch entries on samples" },
	{ 'L', "last-branch entries on samples" },
	{ 's', "skipping events" },
	{ 'q', "quick decoding" },
	{ 'm', "memory access samples" },
	{ 't', "memory access samples" },
	{ 'A', "approximate IPC" },
	{ 'Z', "timeless decoding" },
	{ 'T', "timestamps" },
};

int tc_itrace_parse(const char *s, unsigned *kinds, struct tc_err *e)
{
	unsigned k = 0;

	if (!*s)
		return tc_err_set(e, 0, "--itrace needs letters: i (instructions), b (branches), "
				  "c (calls), r (returns), e (errors)");
	for (const char *p = s; *p; p++) {
		switch (*p) {
		case 'b': k |= TC_ITRACE_BRANCHES; continue;
		case 'c': k |= TC_ITRACE_CALLS; continue;
		case 'r': k |= TC_ITRACE_RETURNS; continue;
		case 'e': k |= TC_ITRACE_ERRORS; continue;
		case 'i': k |= TC_ITRACE_INSNS; continue;
		}
		if (*p >= '0' && *p <= '9')
			return tc_err_set(e, 0, "--itrace=%s: periods ('%c...') are not supported: "
					  "every branch, call or return is synthesized", s, *p);
		for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++)
			if (unsupported[i].c == *p)
				return tc_err_set(e, 0, "--itrace=%s: '%c' (%s) is not supported; "
						  "tracectl has i, b, c, r and e", s, *p,
						  unsupported[i].what);
		return tc_err_set(e, 0, "--itrace=%s: '%c' is not an --itrace letter (b branches, "
				  "c calls, r returns, e errors)", s, *p);
	}
	*kinds = k;
	return 0;
}

struct thread {
	int key;
	int depth;
	bool pending;		/* a call or return waits for its target */
	struct tc_rec at;	/* its record, target 0 */
};

struct tc_itrace {
	unsigned kinds;
	void (*emit)(void *ctx, const struct tc_rec *r);
	void *ctx;
	struct thread *th;
	size_t n, cap, last;
	bool nomem;
	size_t (*read)(void *ctx, int pid, uint64_t addr, void *buf, size_t len);
	void *read_ctx;
	struct tc_x86 *x86;	/* made at the first x86 instruction split */
};

void tc_itrace_read(struct tc_itrace *t,
		    size_t (*read)(void *ctx, int pid, uint64_t addr, void *buf, size_t len),
		    void *ctx)
{
	t->read = read;
	t->read_ctx = ctx;
}

/* The length of the instruction at addr, 0 where it cannot be told. */
static unsigned insn_len(struct tc_itrace *t, const struct tc_rec *r, uint64_t addr)
{
	unsigned char b[16];
	size_t n;

	switch (r->isa) {
	case TC_ISA_A64:
	case TC_ISA_A32:
		return 4;
	case TC_ISA_T32:
		if (!t->read || t->read(t->read_ctx, r->pid, addr, b, 2) < 2)
			return 0;
		return (unsigned)(b[1] >> 3) >= 0x1d ? 4 : 2;
	case TC_ISA_X86_64:
	case TC_ISA_X86_32:
		if (!t->read || (!t->x86 && !(t->x86 = tc_x86_new())))
			return 0;
		n = t->read(t->read_ctx, r->pid, addr, b, r->end - addr < sizeof(b) ?
			    (size_t)(r->end - addr) : sizeof(b));
		return n ? tc_x86_len(t->x86, b, n, r->isa == TC_ISA_X86_64) : 0;
	default:
		return 0;
	}
}

/* i: the range instruction by instruction. */
static void insns(struct tc_itrace *t, const struct tc_rec *r)
{
	struct tc_rec one = *r;
	uint64_t addr = r->start;
	uint32_t left = r->insns;

	while (left > 1 && addr < r->end) {
		unsigned len = insn_len(t, r, addr);

		if (!len || addr + len >= r->end)
			break;	/* the rest as it is */
		one.start = addr;
		one.end = addr + len;
		one.insns = 1;
		one.last = 'E';
		one.last_type = TC_INSN_OTHER;
		one.last_size = (uint8_t)len;
		one.last_taken = false;
		t->emit(t->ctx, &one);
		addr += len;
		left--;
	}
	one = *r;
	one.start = addr;
	one.insns = left;
	t->emit(t->ctx, &one);
}

struct tc_itrace *tc_itrace_new(unsigned kinds, void (*emit)(void *ctx, const struct tc_rec *r),
				void *ctx)
{
	struct tc_itrace *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->kinds = kinds;
	t->emit = emit;
	t->ctx = ctx;
	return t;
}

void tc_itrace_free(struct tc_itrace *t)
{
	if (!t)
		return;
	free(t->th);
	tc_x86_free(t->x86);
	free(t);
}

static int key_of(const struct tc_rec *r)
{
	return r->tid >= 0 ? r->tid : r->cpu >= 0 ? -2 - r->cpu : INT_MIN;
}

static struct thread *thread_of(struct tc_itrace *t, const struct tc_rec *r)
{
	int key = key_of(r);

	if (t->last < t->n && t->th[t->last].key == key)
		return &t->th[t->last];
	for (size_t i = 0; i < t->n; i++)
		if (t->th[i].key == key)
			return &t->th[t->last = i];
	if (tc_grow((void **)&t->th, &t->cap, t->n + 1, sizeof(*t->th))) {
		t->nomem = true;
		return NULL;
	}
	t->th[t->n] = (struct thread){ .key = key };
	return &t->th[t->last = t->n++];
}

/* The waiting call or return goes out, to target to. */
static void flush(struct tc_itrace *t, struct thread *th, uint64_t to)
{
	if (!th->pending)
		return;
	th->pending = false;
	th->at.end = to;
	if (th->at.last_type == TC_INSN_CALL) {
		th->at.value = (uint64_t)th->depth;
		th->depth++;
		if (t->kinds & TC_ITRACE_CALLS)
			t->emit(t->ctx, &th->at);
	} else {
		if (th->depth > 0)
			th->depth--;
		th->at.value = (uint64_t)th->depth;
		if (t->kinds & TC_ITRACE_RETURNS)
			t->emit(t->ctx, &th->at);
	}
}

static void on_range(struct tc_itrace *t, const struct tc_rec *r)
{
	struct thread *th = thread_of(t, r);

	if (!th)
		return;
	flush(t, th, r->start);
	if (r->last != 'E' || (r->last_type != TC_INSN_CALL && r->last_type != TC_INSN_RET))
		return;
	th->pending = true;
	th->at = (struct tc_rec){ .type = TC_REC_BRANCH, .id = r->id, .cpu = r->cpu,
				  .pid = r->pid, .tid = r->tid, .offset = r->offset,
				  .start = r->end - (r->last_size ? r->last_size : 1),
				  .isa = r->isa, .last_type = r->last_type, .last_taken = true,
				  .has_time = r->has_time, .time = r->time };
}

static bool is_error(enum tc_rec_type type)
{
	return type == TC_REC_ERROR || type == TC_REC_LOST || type == TC_REC_NO_SYNC ||
	       type == TC_REC_ADDR_NACC;
}

void tc_itrace_feed(void *ctx, const struct tc_rec *r)
{
	struct tc_itrace *t = ctx;
	struct thread *th;

	switch (r->type) {
	case TC_REC_RANGE:
		if (t->kinds & (TC_ITRACE_CALLS | TC_ITRACE_RETURNS))
			on_range(t, r);
		if (t->kinds & TC_ITRACE_INSNS)
			insns(t, r);
		return;
	case TC_REC_BRANCH:
		if (t->kinds & TC_ITRACE_BRANCHES)
			t->emit(t->ctx, r);
		return;
	case TC_REC_EVENT:
		t->emit(t->ctx, r);
		return;
	default:
		break;
	}
	/* a discontinuity: what waited has no target in the trace */
	if ((is_error(r->type) || r->type == TC_REC_TRACE_ON) && key_of(r) != INT_MIN &&
	    (th = thread_of(t, r)))
		flush(t, th, 0);
	if (is_error(r->type) && (t->kinds & TC_ITRACE_ERRORS))
		t->emit(t->ctx, r);
}

int tc_itrace_finish(struct tc_itrace *t)
{
	for (size_t i = 0; i < t->n; i++)
		flush(t, &t->th[i], 0);
	return t->nomem ? -1 : 0;
}
