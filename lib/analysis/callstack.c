#include "lib/analysis/callstack.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"

/* What the last range's final instruction left to do once the next range shows where it
 * went. */
enum pending { P_NONE, P_CALL, P_RET, P_SYSCALL, P_EXC, P_EXC_RET };

struct thread {
	int key, pid, tid, cpu;
	uint64_t *func, *ret;
	uint8_t *kind;
	unsigned depth;
	size_t cap;
	unsigned low;		/* frames below this unchanged since the previous range */
	enum pending pending;
	uint64_t pending_ret;	/* P_CALL, P_SYSCALL, P_EXC: return address (0 unknown) */
	bool just_exc_ret;	/* an EXC_RET range already popped: skip EXCEPTION_RET */
};

/* A function start as sym gave it for pid's addr under space (the block cache). */
#define FUNC_SLOTS 1024		/* a power of two */

struct func_slot {
	uint64_t addr, space, start;
	int pid;		/* INT_MIN: empty */
	bool known;
};

struct tc_callstack {
	struct tc_callstack_ops ops;
	const uint64_t *space;		/* ops.space's number, once known */
	struct func_slot fc[FUNC_SLOTS];
	struct thread **th;
	size_t n, cap;
	struct thread *last;
	int last_tid, last_cpu;		/* of the record that found last */
	bool has_ts;
	uint64_t ts;
	struct tc_callstack_stats st;
};

struct tc_callstack *tc_callstack_new(const struct tc_callstack_ops *ops)
{
	struct tc_callstack *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return NULL;
	cs->ops = *ops;
	for (size_t i = 0; i < FUNC_SLOTS; i++)
		cs->fc[i].pid = INT_MIN;	/* no record's */
	return cs;
}

void tc_callstack_free(struct tc_callstack *cs)
{
	if (!cs)
		return;
	for (size_t i = 0; i < cs->n; i++) {
		free(cs->th[i]->func);
		free(cs->th[i]->ret);
		free(cs->th[i]->kind);
		free(cs->th[i]);
	}
	free(cs->th);
	free(cs);
}

const struct tc_callstack_stats *tc_callstack_stats(const struct tc_callstack *cs)
{
	return &cs->st;
}

const char *tc_callstack_func_name(tc_sym_fn sym, void *sym_ctx, int pid, uint64_t addr, char *buf,
			 size_t len)
{
	const char *name = NULL;
	uint64_t start;

	if (sym && !sym(sym_ctx, pid, addr, &name, &start) && name && *name)
		return name;
	snprintf(buf, len, "0x%" PRIx64, addr);
	return buf;
}

static int thread_key(int tid, int cpu)
{
	if (tid >= 0)
		return tid;
	if (cpu >= 0)
		return -2 - cpu;
	return INT_MIN;		/* neither known: one shared stack */
}

static struct thread *new_thread(struct tc_callstack *cs, int key)
{
	struct thread *t;

	for (size_t i = 0; i < cs->n; i++) {
		if (cs->th[i]->key == key)
			return cs->last = cs->th[i];
	}
	if (tc_grow((void **)&cs->th, &cs->cap, cs->n + 1, sizeof(*cs->th)))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->key = key;
	cs->th[cs->n++] = t;
	cs->st.threads = (unsigned)cs->n;
	return cs->last = t;
}

/* The thread of a record whose tid or cpu differs from the last one's. */
static struct thread *find_thread(struct tc_callstack *cs, const struct tc_rec *r)
{
	int key = thread_key(r->tid, r->cpu);
	struct thread *t = cs->last && cs->last->key == key ? cs->last : new_thread(cs, key);

	if (t) {
		cs->last_tid = r->tid;
		cs->last_cpu = r->cpu;
	}
	return t;
}

static inline struct thread *get_thread(struct tc_callstack *cs, const struct tc_rec *r)
{
	if (cs->last && r->tid == cs->last_tid && r->cpu == cs->last_cpu)
		return cs->last;	/* the same tid and cpu: the same key */
	return find_thread(cs, r);
}

static uint64_t func_ask(struct tc_callstack *cs, int pid, uint64_t addr, bool *known)
{
	const char *name;
	uint64_t start;

	*known = cs->ops.sym && !cs->ops.sym(cs->ops.sym_ctx, pid, addr, &name, &start);
	return *known ? start : addr;
}

/* A miss of func_of: asked, and kept where it can be. */
static uint64_t func_miss(struct tc_callstack *cs, int pid, uint64_t addr, bool *known)
{
	struct func_slot *s;
	uint64_t space;

	if (!cs->space && cs->ops.space && cs->ops.sym)
		cs->space = cs->ops.space(cs->ops.space_ctx);
	if (!cs->space || (space = *cs->space) == UINT64_MAX)
		return func_ask(cs, pid, addr, known);
	s = &cs->fc[(addr ^ (addr >> 10) ^ (uint64_t)(uint32_t)pid * 0x9e37) & (FUNC_SLOTS - 1)];
	s->start = func_ask(cs, pid, addr, &s->known);
	s->addr = addr;
	s->space = space;
	s->pid = pid;
	*known = s->known;
	return s->start;
}

/* The function holding pid's addr: the symboliser's start, else addr itself. Kept per
 * address while the space number stands (the decoders' blocks start at few addresses). */
static inline uint64_t func_of(struct tc_callstack *cs, int pid, uint64_t addr, bool *known)
{
	const struct func_slot *s =
		&cs->fc[(addr ^ (addr >> 10) ^ (uint64_t)(uint32_t)pid * 0x9e37) & (FUNC_SLOTS - 1)];

	if (cs->space && s->addr == addr && s->space == *cs->space && s->pid == pid) {
		*known = s->known;
		return s->start;
	}
	return func_miss(cs, pid, addr, known);
}

/* Room for one more frame (push): -1 on ENOMEM. */
__attribute__((noinline)) static int make_room(struct tc_callstack *cs, struct thread *t)
{
	if (t->depth == TC_CALLSTACK_MAX_DEPTH) {
		/* Runaway depth (unmatched calls): forget the oldest frame. */
		memmove(t->func, t->func + 1, (t->depth - 1) * sizeof(*t->func));
		memmove(t->ret, t->ret + 1, (t->depth - 1) * sizeof(*t->ret));
		memmove(t->kind, t->kind + 1, (t->depth - 1) * sizeof(*t->kind));
		t->depth--;
		t->low = 0;	/* every frame moved */
		cs->st.depth_drops++;
	}
	if (t->depth == t->cap) {
		/* three arrays of one capacity: each grows the same way from it */
		size_t cf = t->cap, cr = t->cap, ck = t->cap;

		if (tc_grow((void **)&t->func, &cf, t->depth + 1, sizeof(*t->func)) ||
		    tc_grow((void **)&t->ret, &cr, t->depth + 1, sizeof(*t->ret)) ||
		    tc_grow((void **)&t->kind, &ck, t->depth + 1, sizeof(*t->kind)))
			return -1;
		t->cap = ck;
	}
	return 0;
}

/* once per call: inline */
static inline int push(struct tc_callstack *cs, struct thread *t, uint64_t func, uint64_t ret,
		       enum tc_frame_kind kind)
{
	if ((t->depth == TC_CALLSTACK_MAX_DEPTH || t->depth == t->cap) && make_room(cs, t))
		return -1;
	t->func[t->depth] = func;
	t->ret[t->depth] = ret;
	t->kind[t->depth] = (uint8_t)kind;
	t->depth++;
	if (t->depth > cs->st.max_depth)
		cs->st.max_depth = t->depth;
	return 0;
}

/* Returned (or exception-returned) to code no frame expected: the trace began mid-stack. */
static void lost_bottom(struct tc_callstack *cs, struct thread *t)
{
	t->depth = t->low = 0;	/* the ROOT for the target is pushed by the caller */
	cs->st.unmatched++;
}

/* A return pops to the innermost frame it returns from: a call's whose return address is
 * target, or (exc) an exception's; with none, the stack's bottom was not traced. */
static inline void pop_to(struct tc_callstack *cs, struct thread *t, bool exc, uint64_t target)
{
	unsigned i;

	for (i = t->depth; i-- > 0;) {
		if (exc ? t->kind[i] == TC_FRAME_EXC
			: t->kind[i] != TC_FRAME_ROOT && t->ret[i] == target)
			break;
	}
	if (i < t->depth)
		t->depth = i;
	else
		lost_bottom(cs, t);
}

/* Apply the pending action now that execution continues at target, whose function is
 * *ftarget (NULL: not looked up yet). Inline: once per call and return. */
static inline __attribute__((always_inline)) int resolve(struct tc_callstack *cs, struct thread *t, uint64_t target,
		   const uint64_t *ftarget)
{
	enum pending p = t->pending;
	bool known;

	t->pending = P_NONE;
	switch (p) {
	case P_NONE:
		break;
	case P_CALL:
	case P_SYSCALL:
	case P_EXC:
		/* Continuing at the return address: the callee / handler was not traced. */
		if (t->pending_ret && target == t->pending_ret)
			break;
		if (!t->depth)
			break;	/* stack dropped meanwhile: the ROOT comes below */
		if (push(cs, t, ftarget ? *ftarget : func_of(cs, t->pid, target, &known),
			 t->pending_ret, p == P_CALL ? TC_FRAME_CALL : TC_FRAME_EXC))
			return -1;
		break;
	case P_RET:
	case P_EXC_RET:
		pop_to(cs, t, p == P_EXC_RET, target);
		break;
	}
	if (t->low > t->depth)
		t->low = t->depth;
	if (!t->depth)
		return push(cs, t, ftarget ? *ftarget : func_of(cs, t->pid, target, &known), 0,
			    TC_FRAME_ROOT);
	return 0;
}

/* One range of thread t (r's; t's pid, tid and cpu are r's), to the consumer through cr,
 * whose pid, tid, cpu, has_ts and ts are set. */
__attribute__((always_inline)) static inline int
range_of(struct tc_callstack *cs, struct thread *t, const struct tc_rec *r,
	 struct tc_callstack_range *cr)
{
	bool known;
	uint64_t f;

	t->just_exc_ret = false;
	f = func_of(cs, r->pid, r->start, &known);
	if ((t->pending != P_NONE || !t->depth) && resolve(cs, t, r->start, &f))
		return -1;
	/* A jump into another known function (tail call, PLT stub) moves the deepest frame. */
	if (known && t->func[t->depth - 1] != f) {
		t->func[t->depth - 1] = f;
		if (t->low > t->depth - 1)
			t->low = t->depth - 1;
	}

	cr->rec = r;
	cr->func = t->func;
	cr->kind = t->kind;
	cr->depth = t->depth;
	cr->kept = t->low < t->depth ? t->low : t->depth;
	cr->insns = r->insns;
	cr->insns_before = cs->st.insns;
	cs->ops.range(cs->ops.ctx, cr);
	t->low = t->depth;
	cs->st.ranges++;
	cs->st.insns += r->insns;

	if (r->last == 'N')
		return 0;	/* the last instruction did not execute: no branch */
	switch (r->last_type) {
	case TC_INSN_CALL:
		t->pending = P_CALL;
		t->pending_ret = r->end;
		cs->st.calls++;
		break;
	case TC_INSN_RET:
		t->pending = P_RET;
		cs->st.returns++;
		break;
	case TC_INSN_SYSCALL:
		t->pending = P_SYSCALL;
		t->pending_ret = r->end;
		cs->st.exceptions++;
		break;
	case TC_INSN_EXC_RET:
		t->pending = P_EXC_RET;
		t->just_exc_ret = true;
		cs->st.exc_returns++;
		break;
	default:
		break;
	}
	return 0;
}

/* The thread of r, with r's pid, tid and cpu, and cr for its ranges; NULL on ENOMEM. */
static inline struct thread *range_thread(struct tc_callstack *cs, const struct tc_rec *r,
					  struct tc_callstack_range *cr)
{
	struct thread *t = get_thread(cs, r);

	if (!t)
		return NULL;
	t->pid = r->pid;
	t->tid = r->tid;
	t->cpu = r->cpu;
	cr->pid = r->pid;
	cr->tid = r->tid;
	cr->cpu = r->cpu;
	cr->has_ts = cs->has_ts;
	cr->ts = cs->ts;
	return t;
}

static int on_range(struct tc_callstack *cs, const struct tc_rec *r)
{
	struct tc_callstack_range cr;
	struct thread *t = range_thread(cs, r, &cr);

	return t ? range_of(cs, t, r, &cr) : -1;
}

static int on_exception(struct tc_callstack *cs, const struct tc_rec *r)
{
	struct thread *t = get_thread(cs, r);

	if (!t)
		return -1;
	if (t->pending == P_SYSCALL)
		return 0;	/* the SVC's own exception: one frame for both */
	/* A known return address tells where an unresolved branch went. */
	if (r->start && t->pending != P_NONE && t->depth && resolve(cs, t, r->start, NULL))
		return -1;
	t->pending = P_EXC;
	t->pending_ret = r->start;
	cs->st.exceptions++;
	return 0;
}

static int on_exception_ret(struct tc_callstack *cs, const struct tc_rec *r)
{
	struct thread *t = get_thread(cs, r);

	if (!t)
		return -1;
	if (t->just_exc_ret)
		return 0;	/* the EXC_RET range already pops */
	t->pending = P_EXC_RET;
	t->just_exc_ret = true;
	cs->st.exc_returns++;
	return 0;
}

/* A discontinuity: drop the stacks of the threads it concerns. */
static void on_break(struct tc_callstack *cs, const struct tc_rec *r)
{
	for (size_t i = 0; i < cs->n; i++) {
		struct thread *t = cs->th[i];

		if (r->tid >= 0 ? t->tid != r->tid : r->cpu >= 0 && t->cpu != r->cpu)
			continue;
		if (!t->depth && t->pending == P_NONE)
			continue;
		t->depth = t->low = 0;
		t->pending = P_NONE;
		t->just_exc_ret = false;
		cs->st.breaks++;
		if (cs->ops.brk)
			cs->ops.brk(cs->ops.ctx, t->pid, t->tid, t->cpu, r);
	}
}

int tc_callstack_feed(struct tc_callstack *cs, const struct tc_rec *r)
{
	if (__builtin_expect(r->type == TC_REC_RANGE, 1))
		return on_range(cs, r);
	switch (r->type) {
	case TC_REC_EXCEPTION:
		return on_exception(cs, r);
	case TC_REC_EXCEPTION_RET:
		return on_exception_ret(cs, r);
	case TC_REC_TIMESTAMP:
		cs->has_ts = true;
		cs->ts = r->value;
		break;
	case TC_REC_TRACE_ON:
	case TC_REC_NO_SYNC:
	case TC_REC_ERROR:
	case TC_REC_LOST:
	case TC_REC_ADDR_NACC:
		on_break(cs, r);
		break;
	default:
		break;
	}
	return 0;
}

/* A decoder's run has one pid, tid and cpu (decoders/decoder.h emit_ranges): the thread is
 * found once for the ranges that share them; anything else goes one by one. */
int tc_callstack_feed_ranges(struct tc_callstack *cs, const struct tc_rec *r, size_t n)
{
	struct tc_callstack_range cr;
	struct thread *t;
	int rc = 0;

	for (size_t i = 0; i < n;) {
		const struct tc_rec *first = &r[i];

		if (first->type != TC_REC_RANGE) {
			rc |= tc_callstack_feed(cs, &r[i++]);
			continue;
		}
		if (!(t = range_thread(cs, first, &cr))) {
			rc = -1;
			i++;
			continue;
		}
		do
			rc |= range_of(cs, t, &r[i], &cr);
		while (++i < n && r[i].type == TC_REC_RANGE && r[i].pid == first->pid &&
		       r[i].tid == first->tid && r[i].cpu == first->cpu);
	}
	return rc;
}
