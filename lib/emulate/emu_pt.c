/* Intel PT without the hardware, the slow way (record --emulator ptrace): the program runs
 * under ptrace, every thread single-stepped (PTRACE_O_TRACECLONE follows new threads), and
 * each step is handed to lib/emulate/pt_stream.c, which writes what Intel PT would have
 * written for that thread (TNT bits, TIPs, TIP.PGE/PGD where the path enters or leaves the
 * filter, PSB+ periodically) and the perf.data with the real side-band (COMM, MMAP2 of the
 * executable mappings, FORK/EXIT of every thread). Tracing starts at the program's entry;
 * by default only its own code is traced.
 * With repeat_bytes, the steps are kept and encoded afresh with one cycle of the path
 * repeated: a trace of any size from a few seconds of single-stepping (benchmarks). */
#include "lib/emulate/emu.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <intel-pt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/emulate/pt_stream.h"
#include "lib/images/addr_filter.h"
#include "lib/isa/x86.h"
#include "lib/util/grow.h"

struct thr {
	struct tc_pt_stream_thr pt;	/* first: the stream's thread (tc_pt_stream_add) */
	struct tc_x86_insn k;	/* the instruction at pt.ip, when in */
	bool started, done;
	int sig;		/* to deliver with the next step */
};

struct emu {
	struct tc_pt_stream s;	/* the threads' traces, the filter, the maps, the truth */
	char real[PATH_MAX];
	uint64_t entry;
	struct tc_pt_stream_step *log;	/* repeat_bytes: the first thread's traced steps */
	size_t nlog, caplog;
	struct tc_x86 *x86;	/* made at the first traced step */
};

static struct thr *find(struct emu *m, pid_t tid)
{
	return (struct thr *)tc_pt_stream_find(&m->s, tid);
}

static struct thr *add(struct emu *m, pid_t tid, struct tc_err *e)
{
	return (struct thr *)tc_pt_stream_add(&m->s, tid, sizeof(struct thr), e);
}

static int regs(pid_t tid, uint64_t *ip, uint64_t *sp, struct tc_err *e)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, tid, NULL, &r))
		return tc_err_sys(e, errno, "ptrace GETREGS of thread %d", (int)tid);
	*ip = r.rip;
	if (sp)
		*sp = r.rsp;
	return 0;
}

static int peek(pid_t tid, uint64_t addr, uint8_t *out, size_t len, struct tc_err *e)
{
	for (size_t i = 0; i < len; i += 8) {
		long w;

		errno = 0;
		w = ptrace(PTRACE_PEEKTEXT, tid, (void *)(addr + i), NULL);
		if (errno)
			return tc_err_sys(e, errno, "reading 0x%llx of thread %d",
					  (unsigned long long)(addr + i), (int)tid);
		memcpy(out + i, &w, len - i < 8 ? len - i : 8);
	}
	return 0;
}

/* Before stepping t: what the instruction at its IP is, when it is traced. */
static int prepare(struct emu *m, struct thr *t, struct tc_err *e)
{
	uint8_t b[16];

	if (!t->pt.in)
		return 0;
	if (t->sig)
		return tc_err_set(e, ENOTSUP, "signal %d arrives in traced code at 0x%llx (thread "
				  "%d): asynchronous events are not emulated", t->sig,
				  (unsigned long long)t->pt.ip, (int)t->pt.tid);
	if (tc_pt_enc_psb_due(&t->pt.x, t->pt.ip, e) || peek(t->pt.tid, t->pt.ip, b, sizeof(b), e))
		return -1;
	if (!m->x86 && !(m->x86 = tc_x86_new()))
		return tc_err_set(e, ENOMEM, "cannot set up the x86 decoder (Zydis)");
	t->k = tc_x86_classify(m->x86, b, sizeof(b), true);
	switch (t->k.kind) {
	case TC_X86_FAR_JMP: case TC_X86_FAR_CALL: case TC_X86_FAR_RET: case TC_X86_SYSCALL:
	case TC_X86_INT: case TC_X86_UD2:
		return tc_err_set(e, ENOTSUP, "far transfer (system call, interrupt) in traced "
				  "code at 0x%llx: not emulated; filter it out",
				  (unsigned long long)t->pt.ip);
	case TC_X86_SYSRET: case TC_X86_INTO:
		t->k.kind = TC_X86_OTHER;	/* they fault in user space: the step tells */
		break;
	default:
		break;
	}
	return 0;
}

/* t executed the instruction at t->pt.ip and is now at next, its stack pointer sp. */
static int stepped(struct emu *m, struct thr *t, uint64_t next, uint64_t sp, struct tc_err *e)
{
	struct tc_pt_stream_step s = { .ip = t->pt.ip, .next = next, .sp = sp, .in = t->pt.in,
		.kind = t->pt.in ? t->k.kind : TC_X86_OTHER, .len = t->k.len,
		.next_in = tc_pt_stream_in(&m->s, next) };

	if (s.in && s.next_in && (s.kind == TC_X86_CALL || s.kind == TC_X86_ICALL)) {
		uint8_t r[8];

		if (peek(t->pt.tid, sp, r, 8, e))
			return -1;
		memcpy(&s.ret, r, 8);
	}
	if (tc_pt_stream_encode(&m->s, &t->pt, &s, e))
		return -1;
	if (m->s.o->repeat_bytes && t->pt.tid == m->s.pid && (s.in || s.next_in)) {
		if (tc_grow((void **)&m->log, &m->caplog, m->nlog + 1, sizeof(s)))
			return tc_err_set(e, ENOMEM, "out of memory for the steps to repeat");
		s.branches = m->s.st->branches;
		m->log[m->nlog++] = s;
	}
	return 0;
}

/* Fewest branches in the cycle a repeat picks: enough to hold a loop's mix of branches. */
#define CYCLE_MIN_BRANCHES 100

/* The first cycle in the log: steps (*a, *b] where the state after *b (IP and stack
 * pointer, in the filter) is the one after *a, with CYCLE_MIN_BRANCHES or more branches.
 * Returning to the same IP with the same stack is one more turn of a loop, so the path
 * stays one the program could take however often the cycle repeats. */
static int find_cycle(const struct emu *m, size_t *a, size_t *b, struct tc_err *e)
{
	size_t cap = 16, *first;	/* open addressing: log index + 1, 0 when free */
	int rc = -1;

	while (cap < 2 * m->nlog)
		cap *= 2;
	if (!(first = calloc(cap, sizeof(*first))))
		return tc_err_set(e, ENOMEM, "out of memory");
	for (size_t i = 0; i < m->nlog && rc; i++) {
		const struct tc_pt_stream_step *s = &m->log[i];
		size_t h = (size_t)((s->next * 0x9e3779b97f4a7c15ULL) ^ s->sp) & (cap - 1);

		if (!s->next_in)
			continue;
		for (; first[h]; h = (h + 1) & (cap - 1)) {
			const struct tc_pt_stream_step *f = &m->log[first[h] - 1];

			if (f->next == s->next && f->sp == s->sp)
				break;
		}
		if (!first[h]) {
			first[h] = i + 1;
		} else if (s->branches - m->log[first[h] - 1].branches >= CYCLE_MIN_BRANCHES) {
			*a = first[h] - 1;
			*b = i;
			rc = 0;
		}
	}
	free(first);
	if (rc)
		tc_err_set(e, ENOENT, "no cycle of %d or more branches in the path (the same IP "
			   "with the same stack pointer again) to repeat", CYCLE_MIN_BRANCHES);
	return rc;
}

static int replay_step(struct emu *m, struct thr *t, const struct tc_pt_stream_step *s,
		       struct tc_err *e)
{
	return (s->in && tc_pt_enc_psb_due(&t->pt.x, s->ip, e)) ||
	       tc_pt_stream_encode(&m->s, &t->pt, s, e) ? -1 : 0;
}

/* Encode the first thread's path again with the cycle (a, b] repeated after b until the
 * trace has repeat_bytes. */
static int replay(struct emu *m, struct tc_err *e)
{
	struct thr *t = (struct thr *)m->s.t[0];
	struct tc_emu_stats *st = m->s.st;
	size_t a = 0, b = 0;

	if (m->s.n != 1)
		return tc_err_set(e, ENOTSUP, "repeating a cycle needs a single-threaded "
				  "program (%zu threads)", m->s.n);
	if (find_cycle(m, &a, &b, e))
		return -1;
	st->cycle_from = m->log[a].branches;
	st->cycle_to = m->log[b].branches;
	st->steps = st->insns = st->branches = 0;
	tc_pt_enc_fini(&t->pt.x);
	if (tc_pt_enc_init(&t->pt.x, !m->s.o->no_retcomp, m->s.o->sync_period, e))
		return -1;
	if (m->s.o->truth && !(m->s.truth = fopen(m->s.o->truth, "w")))
		return tc_err_sys(e, errno, "%s", m->s.o->truth);
	if (tc_pt_stream_start(&m->s, &t->pt, m->entry, e))
		return -1;
	for (size_t i = 0; i < m->nlog; i++) {
		if (replay_step(m, t, &m->log[i], e))
			return -1;
		while (i == b && tc_pt_enc_offset(&t->pt.x) < m->s.o->repeat_bytes) {
			for (size_t j = a + 1; j <= b; j++)
				if (replay_step(m, t, &m->log[j], e))
					return -1;
			st->repeats++;
		}
	}
	return tc_pt_enc_flush_tnt(&t->pt.x, e);
}

static uint64_t auxv_entry(pid_t pid, struct tc_err *e)
{
	char path[64];
	uint64_t v[2];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	if ((fd = open(path, O_RDONLY)) < 0)
		return tc_err_sys(e, errno, "%s", path), 0;
	while (read(fd, v, sizeof(v)) == sizeof(v) && v[0] != AT_NULL)
		if (v[0] == AT_ENTRY) {
			close(fd);
			return v[1];
		}
	close(fd);
	tc_err_set(e, EINVAL, "%s: no AT_ENTRY", path);
	return 0;
}

/* Let the tracee run untraced (the dynamic loader) up to addr, with a temporary int3. */
static int run_to(pid_t pid, uint64_t addr, struct tc_err *e)
{
	struct user_regs_struct r;
	long orig, bp;
	int st;

	errno = 0;
	orig = ptrace(PTRACE_PEEKTEXT, pid, (void *)addr, NULL);
	if (errno)
		return tc_err_sys(e, errno, "reading the entry point");
	bp = (orig & ~0xffL) | 0xcc;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)addr, (void *)bp) ||
	    ptrace(PTRACE_CONT, pid, NULL, NULL))
		return tc_err_sys(e, errno, "breakpoint at the entry point");
	if (waitpid(pid, &st, 0) < 0 || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP)
		return tc_err_set(e, ECHILD, "the program did not reach its entry point 0x%llx "
				  "(wait status 0x%x)", (unsigned long long)addr, st);
	if (ptrace(PTRACE_POKETEXT, pid, (void *)addr, (void *)orig) ||
	    ptrace(PTRACE_GETREGS, pid, NULL, &r))
		return tc_err_sys(e, errno, "breakpoint at the entry point");
	r.rip = addr;
	if (ptrace(PTRACE_SETREGS, pid, NULL, &r))
		return tc_err_sys(e, errno, "breakpoint at the entry point");
	return 0;
}

static int step(struct emu *m, struct thr *t, struct tc_err *e)
{
	int sig = t->sig;

	if (prepare(m, t, e))
		return -1;
	t->sig = 0;
	if (ptrace(PTRACE_SINGLESTEP, t->pt.tid, NULL, (void *)(long)sig) && errno != ESRCH)
		return tc_err_sys(e, errno, "single-stepping thread %d", (int)t->pt.tid);
	return 0;
}

static void finish(struct thr *t)
{
	t->done = true;
	tc_pt_enc_flush_tnt(&t->pt.x, NULL);
}

static void kill_all(struct emu *m)
{
	int st;

	kill(m->s.pid, SIGKILL);
	while (waitpid(-1, &st, __WALL) > 0 || errno == EINTR)
		;
}

/* Follow every thread until the whole program has exited, or a stop is asked for. */
static int follow(struct emu *m, struct tc_err *e)
{
	unsigned live = 1;

	if (step(m, (struct thr *)m->s.t[0], e))
		return -1;
	while (live) {
		struct thr *t;
		uint64_t ip = 0, sp = 0;
		int st, sig;
		pid_t w;

		if (m->s.o->stop_req && *m->s.o->stop_req) {
			/* stopped: the program dies here, what was followed is kept */
			kill_all(m);
			for (size_t i = 0; i < m->s.n; i++)
				if (!((struct thr *)m->s.t[i])->done)
					finish((struct thr *)m->s.t[i]);
			m->s.st->status = SIGKILL;	/* a wait status: killed */
			return 0;
		}
		w = waitpid(-1, &st, __WALL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD)
				break;
			return tc_err_sys(e, errno, "waitpid");
		}
		if (!(t = find(m, w))) {
			/* A new thread can report before its creator's clone event. */
			if (!(t = add(m, w, e)))
				return -1;
			live++;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (!t->done) {
				finish(t);
				live--;
			}
			if (w == m->s.pid)
				m->s.st->status = st;
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		sig = WSTOPSIG(st);
		if (st >> 16 == PTRACE_EVENT_CLONE) {
			unsigned long nt;
			struct thr *c;

			if (ptrace(PTRACE_GETEVENTMSG, w, NULL, &nt))
				return tc_err_sys(e, errno, "clone event of thread %d", (int)w);
			if (!(c = find(m, (pid_t)nt))) {
				if (!(c = add(m, (pid_t)nt, e)))
					return -1;
				live++;
				t = find(m, w);	/* add may have moved the array */
			}
			c->pt.ptid = w;
			/* The clone system call completes with the next step. */
			if (ptrace(PTRACE_SINGLESTEP, w, NULL, NULL) && errno != ESRCH)
				return tc_err_sys(e, errno, "single-stepping thread %d", (int)w);
			continue;
		}
		if (st >> 16) {
			if (ptrace(PTRACE_SINGLESTEP, w, NULL, NULL) && errno != ESRCH)
				return tc_err_sys(e, errno, "single-stepping thread %d", (int)w);
			continue;
		}
		if (regs(w, &ip, &sp, e))
			return -1;
		if (!t->started) {
			/* A new thread's first stop (SIGSTOP from the attach): not delivered. */
			t->started = true;
			if (tc_pt_stream_start(&m->s, &t->pt, ip, e))
				return -1;
			if (sig != SIGSTOP)
				t->sig = sig;
		} else if (sig == SIGTRAP) {
			if (stepped(m, t, ip, sp, e))
				return -1;
		} else {
			/* A signal stop: the step may or may not have executed an instruction. */
			if (ip != t->pt.ip && stepped(m, t, ip, sp, e))
				return -1;
			t->sig = sig;
		}
		if (step(m, t, e))
			return -1;
	}
	return 0;
}

int tc_emu_pt_record(const struct tc_emu_opts *o, struct tc_emu_stats *st, struct tc_err *e)
{
	struct emu m = { 0 };
	struct thr *t;
	uint64_t entry;
	int status, rc = -1;

	memset(st, 0, sizeof(*st));
	if (o->start_paused || o->npause || o->nresume || o->snapshot_size)
		return tc_err_set(e, ENOTSUP, "--start-paused, --pause-on, --resume-on and -S "
				  "are emulated under qemu (--emulator qemu), not ptrace");
	if (tc_pt_stream_init(&m.s, o, st, e))
		return -1;
	if (!realpath(o->argv[0], m.real))
		return tc_err_sys(e, errno, "%s", o->argv[0]);
	snprintf(m.s.comm, sizeof(m.s.comm), "%s", strrchr(m.real, '/') + 1);
	/* A repeat writes the ground truth as it encodes the path again. */
	if (o->truth && !o->repeat_bytes && !(m.s.truth = fopen(o->truth, "w")))
		return tc_err_sys(e, errno, "%s", o->truth);
	if ((m.s.pid = fork()) < 0) {
		tc_err_sys(e, errno, "fork");
		goto out;
	}
	if (!m.s.pid) {
		signal(SIGXFSZ, SIG_DFL);	/* record ignores it for its own writes */
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execv(m.real, o->argv);
		_exit(127);
	}
	if (waitpid(m.s.pid, &status, 0) < 0 || !WIFSTOPPED(status)) {
		tc_err_set(e, ECHILD, "%s did not start (wait status 0x%x)", m.real, status);
		goto out;
	}
	if (ptrace(PTRACE_SETOPTIONS, m.s.pid, NULL,
		   (void *)(PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE))) {
		tc_err_sys(e, errno, "ptrace options");
		goto kill;
	}
	/* The loader has mapped the executable, itself and nothing else yet; the libraries
	 * are there at the entry point. */
	if (!(entry = auxv_entry(m.s.pid, e)) || run_to(m.s.pid, entry, e) ||
	    tc_addr_filter_maps_read(m.s.pid, &m.s.maps, e))
		goto kill;
	if (o->filter ? tc_addr_filter_resolve(o->filter, &m.s.maps, &m.s.f, e) :
	    tc_addr_filter_file(m.real, &m.s.maps, &m.s.f, e))
		goto kill;
	if (!(t = add(&m, m.s.pid, e)))
		goto kill;
	t->started = true;
	m.entry = entry;
	if (tc_pt_stream_start(&m.s, &t->pt, entry, e) || follow(&m, e))
		goto kill;
	if (o->repeat_bytes && replay(&m, e))
		goto out;
	if (tc_emu_truth_close(&m.s.truth, o->truth, e))
		goto out;
	rc = tc_pt_stream_write(&m.s, e);
	goto out;
kill:
	kill_all(&m);
out:
	tc_pt_stream_fini(&m.s);
	free(m.log);
	tc_x86_free(m.x86);
	return rc;
}
