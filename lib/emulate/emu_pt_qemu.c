/* Intel PT without the hardware, at QEMU's speed: an x86-64 program runs under qemu-x86_64
 * with tracectl's plugin (lib/emulate/qemu_run.c), which hands over each guest thread's
 * executed blocks in order. Where one block's last instruction went is the next block's
 * start, so each transition is one step of lib/emulate/pt_stream.c, the encoder emu_pt.c's
 * ptrace stepping feeds too: a conditional branch gives a TNT bit, an indirect jump or call
 * a TIP, a return a TIP or a compressed TNT bit, a system call TIP.PGD and TIP.PGE where user
 * space resumes. QEMU runs a `rep` string instruction one iteration per block execution:
 * those repeats are one instruction.
 *
 * qemu-user on an x86-64 host keeps guest addresses as host addresses (guest_base 0), so the
 * guest's mappings are in /proc/QEMU_PID/maps beside qemu's own; the ones that hold executed
 * code are taken, with their real paths, when a block from an unknown one first runs; the
 * files the guest maps with PROT_EXEC later are the plugin's view of each mmap. A
 * guest fork forks qemu: the child is a process of its own (its own maps), followed as
 * perf's inherit does, with FORK and COMM records. */
#include "lib/emulate/emu.h"

#include <errno.h>
#include <intel-pt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lib/emulate/pt_stream.h"
#include "lib/emulate/qemu_run.h"
#include "lib/images/addr_filter.h"
#include "lib/isa/x86.h"
#include "lib/util/grow.h"

#define MAPS_TRIES 50	/* reads of /proc/PID/maps before code is taken as unmapped */

/* x86-64 system call numbers the side-band needs. */
#define SYS_MMAP 9
#define SYS_MPROTECT 10
#define SYS_CLONE 56
#define SYS_RT_SIGRETURN 15
/* What qemu-user's system calls return (to the plugin) when a signal came first: the call
 * did nothing, qemu moves the guest back to its syscall instruction and delivers the signal
 * there; the handler's rt_sigreturn returns to it, and the call is made again. qemu does so
 * with rt_sigreturn itself when a signal is pending (SA_NODEFER's, as a handler returns). */
#define QEMU_ERESTARTSYS 512

struct async;

struct qthr {
	struct tc_pt_stream_thr pt;	/* first: the stream's thread (tc_pt_stream_add) */
	struct tc_qp_desc prev;	/* the block executed last */
	bool has_prev;
	struct async *as;	/* a signal handler entered where prev's end is not known */
};

/* A signal delivered while the thread computed. qemu delivers signals between blocks: the
 * thread had run block prev whole and was about to run X, and ran the handler's block
 * instead; its rt_sigreturn resumes at X. Where prev's last instruction leads is not
 * always known (a conditional or indirect branch): then the handler's blocks wait here,
 * with the returns from nested handlers (sigret entries), until the block after the
 * handler's own rt_sigreturn tells X. */
struct async_ent {
	struct tc_qp_desc d;
	bool sigret;		/* not a block: an rt_sigreturn returned before the next */
};

struct async {
	struct tc_qp_desc prev, handler;
	struct tc_qp_desc last;	/* the last block kept */
	struct async_ent *v;
	size_t n, cap;
	unsigned depth;		/* nested handlers entered and not returned from */
	bool after_sigret;	/* the next block is where an rt_sigreturn resumed */
};

struct parent {
	pid_t tid, ptid;
};

struct emu {
	struct tc_pt_stream s;
	struct tc_qemu_run *run;
	unsigned known_proc;	/* the program of the last mapping found: */
	uint64_t known_lo, known_hi;	/* that mapping, a quick hit */
	struct tc_x86 *x86;	/* made when a block is first walked */
	struct parent *parents;	/* clone results: who made each thread */
	size_t nparents, capparents;
	struct qthr *last;	/* the thread of the last block: rings are drained in bursts */
	bool resolved;		/* o->filter has been resolved against the mappings */
	pid_t *gone;		/* processes that died: their maps are empty */
	size_t ngone, capgone;
	pid_t snap_pid;
	struct tc_maps snap;	/* its maps after its last executable mapping */
	struct tc_err filter_err;
	uint64_t handlers[16];	/* where signal handlers were entered asynchronously */
	unsigned nhandlers;
};

/* The guest's mappings and memory: its qemu process's, or tc_emu_opts' stand-in. */
static int maps_read(const struct emu *m, pid_t pid, struct tc_maps *out, struct tc_err *e)
{
	const struct tc_emu_guest *g = m->s.o->guest;

	return g ? g->maps(g->ctx, pid, out, e) : tc_addr_filter_maps_read(pid, out, e);
}

static ssize_t mem_read(const struct emu *m, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	const struct tc_emu_guest *g = m->s.o->guest;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	if (g)
		return (ssize_t)g->read(g->ctx, pid, addr, buf, len);
	return process_vm_readv(pid, &local, 1, &remote, 1, 0);
}

/* h is where a signal handler was entered (a block no path led to). */
static void handler_seen(struct emu *m, uint64_t h)
{
	for (unsigned i = 0; i < m->nhandlers; i++)
		if (m->handlers[i] == h)
			return;
	if (m->nhandlers < sizeof(m->handlers) / sizeof(m->handlers[0]))
		m->handlers[m->nhandlers++] = h;
}

static bool is_handler(const struct emu *m, uint64_t a)
{
	for (unsigned i = 0; i < m->nhandlers; i++)
		if (m->handlers[i] == a)
			return true;
	return false;
}

static uint64_t last_ip(const struct tc_qp_desc *d)
{
	return d->vaddr + d->size - d->last_size;
}

static int add_map(struct tc_pt_stream *s, unsigned proc, const struct tc_map *x,
		   struct tc_err *e)
{
	struct tc_maps *mine = &s->maps;
	struct tc_map *v = realloc(mine->v, (mine->n + 1) * sizeof(*v));

	if (!v)
		return tc_err_set(e, ENOMEM, "out of memory");
	mine->v = v;
	if (tc_grow((void **)&s->map_proc, &s->cap_map_proc, mine->n + 1, sizeof(unsigned)))
		return tc_err_set(e, ENOMEM, "out of memory");
	s->map_proc[mine->n] = proc;
	v[mine->n] = *x;
	/* qemu maps guest code without PROT_EXEC (it runs translations): the guest's is */
	v[mine->n].prot |= PROT_EXEC;
	if (!(v[mine->n].path = strdup(x->path)))
		return tc_err_set(e, ENOMEM, "out of memory");
	mine->n++;
	return 0;
}

static bool is_gone(const struct emu *m, pid_t pid)
{
	for (size_t i = 0; i < m->ngone; i++)
		if (m->gone[i] == pid)
			return true;
	return false;
}

/* The mapping of thread t's qemu process that holds guest address va joins the stream's
 * maps (the MMAP2 records, of t's program); then the filter is resolved again while it
 * cannot be. */
static int learn_map(struct emu *m, const struct qthr *t, uint64_t va, struct tc_err *e)
{
	pid_t pid = t->pt.pid;
	unsigned proc = t->pt.proc;
	struct tc_maps now = { 0 };
	const struct tc_map *hit = NULL;
	struct tc_maps *mine = &m->s.maps;
	int rc = -1;

	if (is_gone(m, pid))
		return 0;
	for (size_t i = mine->n; i-- > 0;)	/* the latest first: a mapping replaces */
		if (m->s.map_proc[i] == proc && va >= mine->v[i].start && va < mine->v[i].end) {
			m->known_proc = proc;
			m->known_lo = mine->v[i].start;
			m->known_hi = mine->v[i].end;
			return 0;
		}
	/* /proc/PID/maps is read in pieces, not at once: while the guest maps and protects
	 * (ld.so at work) a line can be missed, or seen between an unmap and its new map. */
	for (int tries = 0; tries < MAPS_TRIES && (!hit || !hit->path[0]) && (!tries || now.n) &&
	     (!tries || !m->s.o->guest);	/* a stand-in's maps are read whole */
	     tries++) {
		if (tries)
			usleep(1000);
		tc_addr_filter_maps_free(&now);
		if (maps_read(m, pid, &now, e)) {
			if (e && e->errnum != ENOENT && e->errnum != ESRCH)
				return -1;
			break;	/* reaped after a fatal signal: as empty maps */
		}
		hit = NULL;
		for (size_t i = 0; i < now.n && !hit; i++)
			if (va >= now.v[i].start && va < now.v[i].end)
				hit = &now.v[i];
	}
	if (!hit && !now.n) {
		/* qemu is gone (a fatal signal: no exit to wait in): the maps as they were at
		 * the last executable mapping */
		for (size_t i = 0; i < m->snap.n && !hit && m->snap_pid == pid; i++)
			if (va >= m->snap.v[i].start && va < m->snap.v[i].end)
				hit = &m->snap.v[i];
		if (!hit) {
			if (tc_grow((void **)&m->gone, &m->capgone, m->ngone + 1, sizeof(pid_t)))
				return tc_err_set(e, ENOMEM, "out of memory");
			m->gone[m->ngone++] = pid;
			rc = 0;
			goto out;
		}
	}
	if (!hit) {
		tc_err_set(e, ENOENT, "guest code at 0x%llx is not in qemu's mappings (guest "
			   "addresses are not host addresses?)", (unsigned long long)va);
		goto out;
	}
	if (add_map(&m->s, proc, hit, e))
		goto out;
	m->known_proc = proc;
	m->known_lo = hit->start;
	m->known_hi = hit->end;
	if (m->s.o->filter && !m->resolved) {
		struct tc_addr_filter f = { 0 };

		/* until every FILE of the filter has run code, it cannot be resolved */
		if (!tc_addr_filter_resolve(m->s.o->filter, mine, &f, &m->filter_err)) {
			tc_addr_filter_free(&m->s.f);
			m->s.f = f;
			m->resolved = true;
		} else {
			tc_addr_filter_free(&f);
		}
	}
	rc = 0;
out:
	tc_addr_filter_maps_free(&now);
	return rc;
}

static enum tc_x86_kind kind_of(const struct tc_qp_desc *d)
{
	switch (d->kind) {
	case TC_QP_COND: return TC_X86_JCC;
	case TC_QP_JUMP: return TC_X86_JMP;
	case TC_QP_CALL: return TC_X86_CALL;
	case TC_QP_IJUMP: return TC_X86_IJMP;
	case TC_QP_ICALL: return TC_X86_ICALL;
	case TC_QP_RET: return TC_X86_RET;
	case TC_QP_SYSCALL: return TC_X86_SYSCALL;
	default: return TC_X86_OTHER;
	}
}

/* Whether going from block d's last instruction to next is what that instruction does;
 * anything else is an asynchronous transfer (a signal handler), not emulated yet. */
static bool follows(const struct tc_qp_desc *d, uint64_t next)
{
	uint64_t ft = d->vaddr + d->size;

	switch (d->kind) {
	case TC_QP_OTHER: return next == ft;
	case TC_QP_COND: return next == ft || next == d->target;
	case TC_QP_JUMP: case TC_QP_CALL: return next == d->target;
	default: return true;
	}
}

/* A filter boundary inside [a, b]: the block must be followed instruction by instruction. */
static bool cut(const struct tc_addr_filter *f, uint64_t a, uint64_t b)
{
	for (size_t i = 0; i < f->n; i++)
		if ((f->v[i].start > a && f->v[i].start <= b) ||
		    (f->v[i].end > a && f->v[i].end <= b))
			return true;
	return false;
}

/* The instructions of block d before its last, one step each (a filter cuts it). */
static int walk(struct emu *m, struct qthr *t, const struct tc_qp_desc *d, struct tc_err *e)
{
	uint8_t code[8192];
	uint64_t ip = d->vaddr, end = last_ip(d);
	size_t n = d->size < sizeof(code) ? d->size : sizeof(code);

	if (!m->x86 && !(m->x86 = tc_x86_new()))
		return tc_err_set(e, ENOMEM, "cannot set up the x86 decoder (Zydis)");
	if (mem_read(m, t->pt.pid, d->vaddr, code, n) != (ssize_t)n)
		return tc_err_sys(e, errno, "reading guest code at 0x%llx",
				  (unsigned long long)d->vaddr);
	while (ip < end) {
		unsigned len = tc_x86_len(m->x86, code + (ip - d->vaddr), d->vaddr + n - ip, true);
		struct tc_pt_stream_step p = { .ip = ip, .next = ip + len, .kind = TC_X86_OTHER,
			.len = len, .in = t->pt.in, .next_in = tc_pt_stream_in(&m->s, ip + len) };

		if (!len || ip + len > end)
			return tc_err_set(e, EINVAL, "guest code at 0x%llx: no instruction ends at "
					  "the block's last one", (unsigned long long)ip);
		if (tc_pt_stream_encode(&m->s, &t->pt, &p, e))
			return -1;
		ip += len;
	}
	return 0;
}

/* t is at the start of block d: follow it to its last instruction. */
static int enter(struct emu *m, struct qthr *t, const struct tc_qp_desc *d, struct tc_err *e)
{
	uint64_t last = last_ip(d);

	if ((!m->s.all && cut(&m->s.f, d->vaddr, last)) ||
	    tc_emu_trigger_inside(&m->s.trig, d->vaddr, last))
		return walk(m, t, d, e);
	m->s.st->steps += d->n_insns - 1u;
	if (t->pt.in)
		m->s.st->insns += d->n_insns - 1u;
	t->pt.ip = last;
	return 0;
}

/* t's previous block handed control to next. */
static int transition(struct emu *m, struct qthr *t, uint64_t next, struct tc_err *e)
{
	const struct tc_qp_desc *d = &t->prev;
	struct tc_pt_stream_step p = { .ip = last_ip(d), .next = next, .len = d->last_size,
		.kind = kind_of(d), .in = t->pt.in, .next_in = tc_pt_stream_in(&m->s, next) };

	if (d->kind == TC_QP_UNKNOWN)
		return tc_err_set(e, EINVAL, "thread %d: the instruction at 0x%llx is not one "
				  "Capstone decodes", (int)t->pt.tid, (unsigned long long)p.ip);
	if (!follows(d, next))
		return tc_err_set(e, ENOTSUP, "thread %d: 0x%llx -> 0x%llx is no path of the "
				  "instruction (a signal handler?): asynchronous transfers are not "
				  "emulated yet", (int)t->pt.tid, (unsigned long long)p.ip,
				  (unsigned long long)next);
	if (p.kind == TC_X86_CALL || p.kind == TC_X86_ICALL)
		p.ret = p.ip + p.len;
	if (p.in && tc_pt_enc_psb_due(&t->pt.x, p.ip, e))
		return -1;
	return tc_pt_stream_encode(&m->s, &t->pt, &p, e);
}

static int on_block(void *arg, uint32_t tid, const struct tc_qp_desc *d, struct tc_err *e);

/* next follows block d: a path of its last instruction, or a rep's next iteration. */
static bool flows(const struct tc_qp_desc *d, uint64_t next)
{
	return ((d->flags & TC_QP_F_REP) && next == last_ip(d)) || follows(d, next);
}

/* A handler entered at h where t was to run x: hardware traces the interrupted place as
 * FUP x and TIP.PGD (the kernel's IP suppressed), the handler from TIP.PGE. t's previous
 * block first goes to x as it did, unless x is its own last instruction, a rep string
 * instruction interrupted between two iterations: it has not ended (it resumes at x, where
 * its next iteration then follows the handler's rt_sigreturn), as hardware shows an
 * interrupt there. */
static int async_enter(struct emu *m, struct qthr *t, uint64_t x, const struct tc_qp_desc *h,
		       struct tc_err *e)
{
	struct tc_pt_stream_step p = { .ip = x, .next = h->vaddr, .kind = TC_X86_SYSCALL,
		.in = tc_pt_stream_in(&m->s, x), .next_in = tc_pt_stream_in(&m->s, h->vaddr) };
	bool mid_rep = (t->prev.flags & TC_QP_F_REP) && x == last_ip(&t->prev);

	if (!mid_rep && transition(m, t, x, e))
		return -1;
	if (p.in && tc_pt_enc_ip(&t->pt.x, ppt_fup, x, e))
		return -1;
	if (tc_pt_stream_encode(&m->s, &t->pt, &p, e))
		return -1;
	m->s.st->steps--;	/* x did not run */
	if (p.in)
		m->s.st->insns--;
	t->prev = *h;
	return enter(m, t, h, e);
}

/* d does not follow t's previous block: a signal handler. */
static int async_begin(struct emu *m, struct qthr *t, const struct tc_qp_desc *d,
		       struct tc_err *e)
{
	const struct tc_qp_desc *p = &t->prev;

	handler_seen(m, d->vaddr);
	if (!(p->flags & TC_QP_F_REP) && p->kind == TC_QP_OTHER)
		return async_enter(m, t, p->vaddr + p->size, d, e);
	if (!(p->flags & TC_QP_F_REP) && (p->kind == TC_QP_JUMP || p->kind == TC_QP_CALL))
		return async_enter(m, t, p->target, d, e);
	if (!(t->as = calloc(1, sizeof(*t->as))))
		return tc_err_set(e, ENOMEM, "out of memory");
	t->as->prev = *p;
	t->as->handler = t->as->last = *d;
	return 0;
}

static int async_keep(struct async *a, const struct tc_qp_desc *d, bool sigret,
		      struct tc_err *e)
{
	if (tc_grow((void **)&a->v, &a->cap, a->n + 1, sizeof(*a->v)))
		return tc_err_set(e, ENOMEM, "out of memory");
	a->v[a->n++] = (struct async_ent){ d ? *d : (struct tc_qp_desc){ 0 }, sigret };
	return 0;
}

/* t's rt_sigreturn returned: the next block is where it resumed. */
static int async_sigret(struct qthr *t, struct tc_err *e)
{
	if (!t->as)
		return 0;
	t->as->after_sigret = true;
	return async_keep(t->as, NULL, true, e);
}

/* Block d of a thread whose handler's interrupted place is not known yet. */
static int async_block(struct emu *m, struct qthr *t, const struct tc_qp_desc *d,
		       struct tc_err *e)
{
	struct async *a = t->as;
	int rc = 0;

	if (a->after_sigret &&
	    (is_handler(m, d->vaddr) || (!a->depth && !flows(&a->prev, d->vaddr)))) {
		/* A signal delivered as the rt_sigreturn returned (one that came during the
		 * handler, SA_NODEFER's or another's): a handler again, at the same depth, before
		 * anything of the place returned to ran. Known as a handler entered before, or
		 * as no path of the interrupted instruction (a conditional branch goes to one of
		 * two places). Replayed, it follows the system call. */
		handler_seen(m, d->vaddr);
		a->after_sigret = false;
		a->last = *d;
		return async_keep(a, d, false, e);
	}
	if (a->after_sigret && !a->depth) {
		/* the handler returned to x = d: encode all it held, then d */
		t->as = NULL;
		rc = async_enter(m, t, d->vaddr, &a->handler, e);
		for (size_t i = 0; i < a->n && !rc; i++)
			rc = a->v[i].sigret ? async_sigret(t, e) :
				on_block(m, (uint32_t)t->pt.tid, &a->v[i].d, e);
		free(a->v);
		free(a);
		return rc ? rc : on_block(m, (uint32_t)t->pt.tid, d, e);
	}
	if (a->after_sigret)
		a->depth--;	/* a nested handler returned */
	else if (!flows(&a->last, d->vaddr) ||
		 (a->last.kind == TC_QP_SYSCALL && d->vaddr != a->last.vaddr + a->last.size) ||
		 /* a return goes anywhere, but not to a handler's start: a signal came as a
		  * handler returned to its restorer (that restorer then runs after this one) */
		 (a->last.kind == TC_QP_RET && is_handler(m, d->vaddr))) {
		a->depth++;	/* a nested handler (entered at a system call or not) */
		handler_seen(m, d->vaddr);
	}
	a->after_sigret = false;
	a->last = *d;
	return async_keep(a, d, false, e);
}

static int on_block(void *arg, uint32_t tid, const struct tc_qp_desc *d, struct tc_err *e)
{
	struct emu *m = arg;
	struct qthr *t = m->last;

	if ((!t || t->pt.tid != (pid_t)tid) &&
	    !(t = m->last = (struct qthr *)tc_pt_stream_find(&m->s, (pid_t)tid)))
		return tc_err_set(e, EPROTO, "a block of thread %u before its start", tid);
	if ((d->vaddr < m->known_lo || d->vaddr >= m->known_hi || t->pt.proc != m->known_proc) &&
	    learn_map(m, t, d->vaddr, e))
		return -1;
	/* -S: SIGUSR2 asked for a snapshot */
	if (m->s.o->snapshot_size && m->s.o->snap_req && *m->s.o->snap_req) {
		*m->s.o->snap_req = 0;
		if (tc_pt_stream_snapshot(&m->s, e))
			return -1;
	}
	/* triggers resolve as their files' mappings are learned */
	if (m->s.trig.unresolved && m->s.trig.maps_seen != m->s.maps.n &&
	    tc_emu_trigger_resolve(&m->s.trig, &m->s.maps, e))
		return -1;
	if (t->as)
		return async_block(m, t, d, e);
	if (!t->has_prev) {
		if (tc_pt_stream_start(&m->s, &t->pt, d->vaddr, e))
			return -1;
	} else if ((t->prev.flags & TC_QP_F_REP) && d->vaddr == last_ip(&t->prev)) {
		/* one more iteration of the same rep instruction */
		t->prev = *d;
		return 0;
	} else if (!flows(&t->prev, d->vaddr)) {
		return async_begin(m, t, d, e);
	} else if (transition(m, t, d->vaddr, e)) {
		return -1;
	}
	t->prev = *d;
	t->has_prev = true;
	return enter(m, t, d, e);
}

/* The program process pid runs now (as tc_pt_stream_thr's proc). */
static unsigned proc_of(const struct emu *m, pid_t pid)
{
	for (size_t i = m->s.nprocs; i-- > 0;)
		if (m->s.procs[i].pid == pid)
			return (unsigned)i + 1;
	return 0;
}

/* A fork child's first thread (a process of its own, named as its parent), or the first
 * of a program exec'd (named as its file, q->comm): a new program. */
static int new_proc(struct emu *m, const struct tc_qemu_run_thr *q, struct tc_err *e)
{
	struct tc_pt_stream_proc *p;
	unsigned parent = proc_of(m, (pid_t)q->ppid);

	if (!q->exec && proc_of(m, (pid_t)q->pid))
		return 0;
	if (tc_grow((void **)&m->s.procs, &m->s.capprocs, m->s.nprocs + 1, sizeof(*p)))
		return tc_err_set(e, ENOMEM, "out of memory");
	p = &m->s.procs[m->s.nprocs++];
	*p = (struct tc_pt_stream_proc){ (pid_t)q->pid, (pid_t)q->ppid, (pid_t)q->ptid,
		q->exec, "" };
	snprintf(p->comm, sizeof(p->comm), "%s", q->exec ? q->comm :
		 parent ? m->s.procs[parent - 1].comm : m->s.comm);
	return 0;
}

static int on_thread(void *arg, const struct tc_qemu_run_thr *q, bool start, struct tc_err *e)
{
	struct emu *m = arg;
	uint32_t tid = q->tid;
	struct qthr *t;

	if (start) {
		if (!m->s.n)
			m->s.pid = (pid_t)q->pid;
		else if (((pid_t)q->pid != m->s.pid || q->exec) && new_proc(m, q, e))
			return -1;
		if (!(t = (struct qthr *)tc_pt_stream_add(&m->s, (pid_t)tid, sizeof(*t), e)))
			return -1;
		t->pt.pid = (pid_t)q->pid;
		t->pt.proc = proc_of(m, (pid_t)q->pid);
		m->last = t;	/* an exec'd program's thread has its old stream's tid */
		if (q->ptid)
			t->pt.ptid = (pid_t)q->ptid;
		return 0;
	}
	if ((t = (struct qthr *)tc_pt_stream_find(&m->s, (pid_t)tid)) && t->as)
		return tc_err_set(e, ENOTSUP, "thread %d: a signal handler entered after 0x%llx "
				  "never returned by rt_sigreturn (a longjmp out of it?): where the "
				  "signal interrupted is not known", (int)tid,
				  (unsigned long long)last_ip(&t->as->prev));
	if (!t || !t->has_prev)
		return 0;
	if (t->prev.kind != TC_QP_SYSCALL) {
		/* Ended between blocks: by another thread's exec (the plugin stops the others
		 * there) or a fatal signal. As an interrupt shows on hardware: the trace stops
		 * before its last instruction (the block's start is what the thread was about
		 * to run: its instructions before the last are counted as run). */
		t->has_prev = false;
		if (!t->pt.in)
			return tc_pt_enc_flush_tnt(&t->pt.x, e);
		t->pt.ip = last_ip(&t->prev);
		return tc_pt_stream_stop(&m->s, &t->pt, e) || tc_pt_enc_flush_tnt(&t->pt.x, e)
			       ? -1 : 0;
	}
	/* its last instruction: exit or exit_group, a system call that does not return */
	m->s.st->steps++;
	if (t->pt.in) {
		m->s.st->insns++;
		if (t->prev.kind == TC_QP_SYSCALL) {
			struct tc_pt_stream_step p = { .ip = last_ip(&t->prev),
				.len = t->prev.last_size, .kind = TC_X86_SYSCALL, .in = true };

			m->s.st->steps--, m->s.st->insns--;	/* counted by the step */
			if (tc_pt_stream_encode(&m->s, &t->pt, &p, e))
				return -1;
		}
	}
	t->has_prev = false;
	return tc_pt_enc_flush_tnt(&t->pt.x, e);
}

/* The plugin saw the guest map a file with PROT_EXEC: its MMAP2, in the guest's order. */
static int on_mmap(void *arg, uint32_t tid, const struct tc_qemu_run_map *q, struct tc_err *e)
{
	struct emu *m = arg;
	struct qthr *t = (struct qthr *)tc_pt_stream_find(&m->s, (pid_t)tid);
	struct tc_map x = { .start = q->addr, .end = q->addr + ((q->len + 4095) & ~4095ULL),
		.pgoff = q->pgoff, .ino = q->ino, .maj = major(q->dev), .min = minor(q->dev),
		.prot = (int)q->prot, .path = (char *)q->path };

	if (!t)
		return 0;
	if (t->pt.proc == m->known_proc && x.start < m->known_hi && x.end > m->known_lo)
		m->known_hi = m->known_lo = 0;		/* the quick hit may be what it replaced */
	return add_map(&m->s, t->pt.proc, &x, e);
}

static int on_syscall(void *arg, uint32_t tid, const struct tc_qemu_run_sys *sys,
		      struct tc_err *e)
{
	struct emu *m = arg;

	/* an rt_sigreturn restarted has not returned: a handler comes next, nested, entered
	 * at the system call (as at any other restarted), which runs again after it */
	if (sys->num == SYS_RT_SIGRETURN && sys->ret != -QEMU_ERESTARTSYS) {
		struct qthr *t = (struct qthr *)tc_pt_stream_find(&m->s, (pid_t)tid);

		if (t && async_sigret(t, e))
			return -1;
	}
	/* New code: qemu's maps now, for when qemu dies (a fatal signal) before the blocks
	 * reach learn_map (the guest is ahead). */
	if ((sys->num == SYS_MMAP || sys->num == SYS_MPROTECT) && sys->ret >= 0 &&
	    (sys->args[2] & PROT_EXEC)) {
		struct tc_maps now = { 0 };
		struct tc_err ignore;

		struct tc_pt_stream_thr *t = tc_pt_stream_find(&m->s, (pid_t)tid);
		pid_t pid = t ? t->pid : m->s.pid;

		if (!maps_read(m, pid, &now, &ignore) && now.n) {
			tc_addr_filter_maps_free(&m->snap);
			m->snap = now;
			m->snap_pid = pid;
		} else {
			tc_addr_filter_maps_free(&now);
		}
	}
	/* a new thread's parent, for its FORK record */
	if (sys->num == SYS_CLONE && sys->ret > 0) {
		if (tc_grow((void **)&m->parents, &m->capparents, m->nparents + 1,
			    sizeof(*m->parents)))
			return tc_err_set(e, ENOMEM, "out of memory");
		m->parents[m->nparents++] = (struct parent){ (pid_t)sys->ret, (pid_t)tid };
	}
	return 0;
}

int tc_emu_pt_qemu_record(const struct tc_emu_opts *o, struct tc_emu_stats *st,
			  struct tc_err *e)
{
	static const struct tc_qemu_run_ops ops = { on_thread, on_block, on_syscall, on_mmap };
	struct tc_qemu_run_opts ro = { .qemu = o->qemu_x86 ? o->qemu_x86 : "qemu-x86_64",
		.argv = o->argv, .stop_req = o->stop_req };
	struct emu m = { 0 };
	char real[PATH_MAX];
	int rc = -1;

	memset(st, 0, sizeof(*st));
	if (tc_pt_stream_init(&m.s, o, st, e))
		return -1;
	m.s.all = !o->filter;
	if (!realpath(o->argv[0], real))
		return tc_err_sys(e, errno, "%s", o->argv[0]);
	snprintf(m.s.comm, sizeof(m.s.comm), "%s", strrchr(real, '/') + 1);
	if (o->truth && !(m.s.truth = fopen(o->truth, "w")))
		return tc_err_sys(e, errno, "%s", o->truth);
	if (o->guest ? o->guest->run(o->guest->ctx, &ops, &m, &st->status, e) :
	    tc_qemu_run_start(&m.run, &ro, e) || tc_qemu_run_loop(m.run, &ops, &m, &st->status, e))
		goto out;
	if (o->filter && !m.resolved) {
		*e = m.filter_err;
		goto out;
	}
	if (tc_emu_trigger_check(&m.s.trig, e))
		goto out;
	for (size_t i = 0; i < m.s.n; i++)
		for (size_t j = 0; j < m.nparents; j++)
			if (m.parents[j].tid == m.s.t[i]->tid)
				m.s.t[i]->ptid = m.parents[j].ptid;
	if (tc_emu_truth_close(&m.s.truth, o->truth, e))
		goto out;
	if (!m.s.n) {
		tc_err_set(e, ENOEXEC, "%s ran no code under qemu", real);
		goto out;
	}
	rc = tc_pt_stream_write(&m.s, e);
out:
	tc_qemu_run_free(m.run);
	tc_x86_free(m.x86);
	free(m.parents);
	free(m.gone);
	tc_addr_filter_maps_free(&m.snap);
	/* a run stopped inside a signal handler: the blocks it held (fuzz_emulate found) */
	for (size_t i = 0; i < m.s.n; i++) {
		struct qthr *t = (struct qthr *)m.s.t[i];

		if (t->as) {
			free(t->as->v);
			free(t->as);
		}
	}
	tc_pt_stream_fini(&m.s);
	return rc;
}
