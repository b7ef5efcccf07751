/* Intel PT without the hardware: the program runs under ptrace, every thread single-stepped
 * (PTRACE_O_TRACECLONE follows new threads), and each step inside the address filter becomes
 * what Intel PT would have written for that thread: TNT bits, TIPs, TIP.PGE/PGD where the
 * path enters or leaves the filter, PSB+ periodically. One trace buffer per thread, written
 * as perf's per-thread mode would (an AUXTRACE queue per thread, cpu -1), with the real
 * side-band: COMM, MMAP2 of the executable mappings, FORK/EXIT of every thread.
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
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/emulate/emu_file.h"
#include "lib/emulate/pt_enc.h"
#include "lib/images/addr_filter.h"
#include "lib/images/elf.h"
#include "lib/isa/x86.h"
#include "lib/perfdata/perf_data.h"
#include "lib/perfdata/perf_write.h"
#include "lib/util/grow.h"

#define PT_PMU_TYPE 8
#define PT_CFG_TSC (1ULL << 10)
#define PT_CFG_NORETCOMP (1ULL << 11)

struct thr {
	pid_t tid, ptid;
	struct tc_pt_enc x;
	uint64_t ip;
	struct tc_x86_insn k;	/* the instruction at ip, when in */
	bool in, started, done;
	int sig;		/* to deliver with the next step */
};

/* One traced step of a thread, as the encoder takes it (and a repeat replays it). */
struct step {
	uint64_t ip, next;
	uint64_t ret;		/* the return address a traced call pushed */
	uint64_t sp;		/* after the step: with next, the state a cycle comes back to */
	uint64_t branches;	/* ground-truth lines once the step is encoded */
	enum tc_x86_kind kind;
	unsigned len;
	bool in, next_in;
};

struct emu {
	const struct tc_emu_opts *o;
	struct tc_emu_stats *st;
	pid_t pid;
	struct thr *t;
	size_t n, cap;
	struct tc_addr_filter f;
	struct tc_maps maps;
	FILE *truth;
	char real[PATH_MAX], comm[16];
	uint64_t entry;
	struct step *log;	/* repeat_bytes: the first thread's traced steps */
	size_t nlog, caplog;
};

static struct thr *find(struct emu *m, pid_t tid)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->t[i].tid == tid)
			return &m->t[i];
	return NULL;
}

static struct thr *add(struct emu *m, pid_t tid, struct tc_err *e)
{
	struct thr *t;

	if (tc_grow((void **)&m->t, &m->cap, m->n + 1, sizeof(*m->t))) {
		tc_err_set(e, ENOMEM, "out of memory");
		return NULL;
	}
	t = &m->t[m->n];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->ptid = m->pid;
	if (tc_pt_enc_init(&t->x, !m->o->no_retcomp, m->o->sync_period, e))
		return NULL;
	m->n++;
	m->st->threads++;
	return t;
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

static void truth(struct emu *m, const struct thr *t, uint64_t from, uint64_t to)
{
	m->st->branches++;
	if (!m->truth)
		return;
	if (!m->o->truth_no_tid)
		fprintf(m->truth, "%d ", (int)t->tid);
	fprintf(m->truth, "%llx %llx\n", (unsigned long long)from, (unsigned long long)to);
}

/* Tracing of t starts (or resumes) at ip. */
static int enable(struct emu *m, struct thr *t, uint64_t ip, struct tc_err *e)
{
	t->x.depth = 0;
	if (tc_pt_enc_ip(&t->x, ppt_tip_pge, ip, e))
		return -1;
	truth(m, t, 0, ip);
	return 0;
}

/* Before stepping t: what the instruction at its IP is, when it is traced. */
static int prepare(struct emu *m, struct thr *t, struct tc_err *e)
{
	uint8_t b[16];

	if (!t->in)
		return 0;
	if (t->sig)
		return tc_err_set(e, ENOTSUP, "signal %d arrives in traced code at 0x%llx (thread "
				  "%d): asynchronous events are not emulated", t->sig,
				  (unsigned long long)t->ip, (int)t->tid);
	if (tc_pt_enc_psb_due(&t->x, t->ip, e) || peek(t->tid, t->ip, b, sizeof(b), e))
		return -1;
	t->k = tc_x86_classify(b, sizeof(b));
	switch (t->k.kind) {
	case TC_X86_FAR_JMP: case TC_X86_FAR_CALL: case TC_X86_FAR_RET: case TC_X86_SYSCALL:
	case TC_X86_INT: case TC_X86_UD2:
		return tc_err_set(e, ENOTSUP, "far transfer (system call, interrupt) in traced "
				  "code at 0x%llx: not emulated; filter it out",
				  (unsigned long long)t->ip);
	case TC_X86_SYSRET: case TC_X86_INTO:
		t->k.kind = TC_X86_OTHER;	/* they fault in user space: the step tells */
		break;
	default:
		break;
	}
	(void)m;
	return 0;
}

/* Encode step s of t (t is at s->ip). */
static int encode(struct emu *m, struct thr *t, const struct step *s, struct tc_err *e)
{
	struct tc_pt_enc *x = &t->x;
	uint64_t ip = s->ip, next = s->next;
	enum tc_x86_kind k = s->kind;

	m->st->steps++;
	if (!s->in) {
		if (s->next_in && enable(m, t, next, e))
			return -1;
		goto out;
	}
	m->st->insns++;
	if (k == TC_X86_OTHER) {
		if (next <= ip || next - ip > 15)
			return tc_err_set(e, EINVAL, "0x%llx -> 0x%llx in thread %d: not a branch "
					  "to the classifier", (unsigned long long)ip,
					  (unsigned long long)next, (int)t->tid);
	} else if (k == TC_X86_JCC && s->next_in) {
		if (tc_pt_enc_tnt_bit(x, next != ip + s->len, e))
			return -1;
	} else if (!s->next_in) {
		/* Out of the filter region: TIP.PGD with the target, the stack forgotten. */
		if (k == TC_X86_JCC)
			return tc_err_set(e, ENOTSUP, "conditional branch out of the filter at "
					  "0x%llx", (unsigned long long)ip);
		if (tc_pt_enc_ip(x, ppt_tip_pgd, next, e))
			return -1;
		x->depth = 0;
	} else if (k == TC_X86_CALL || k == TC_X86_ICALL) {
		tc_pt_enc_push_ret(x, s->ret);
		if (k == TC_X86_ICALL && tc_pt_enc_ip(x, ppt_tip, next, e))
			return -1;
	} else if (k == TC_X86_RET && tc_pt_enc_pop_ret(x, next)) {
		if (tc_pt_enc_tnt_bit(x, true, e))
			return -1;
	} else if ((k == TC_X86_RET || k == TC_X86_IJMP) && tc_pt_enc_ip(x, ppt_tip, next, e)) {
		return -1;
	}
	if (k != TC_X86_OTHER && (k != TC_X86_JCC || next != ip + s->len))
		truth(m, t, ip, next);
out:
	t->ip = next;
	t->in = s->next_in;
	return 0;
}

/* t executed the instruction at t->ip and is now at next, its stack pointer sp. */
static int stepped(struct emu *m, struct thr *t, uint64_t next, uint64_t sp, struct tc_err *e)
{
	struct step s = { .ip = t->ip, .next = next, .sp = sp, .in = t->in,
		.kind = t->in ? t->k.kind : TC_X86_OTHER, .len = t->k.len,
		.next_in = tc_addr_filter_has(&m->f, next) };

	if (s.in && s.next_in && (s.kind == TC_X86_CALL || s.kind == TC_X86_ICALL)) {
		uint8_t r[8];

		if (peek(t->tid, sp, r, 8, e))
			return -1;
		memcpy(&s.ret, r, 8);
	}
	if (encode(m, t, &s, e))
		return -1;
	if (m->o->repeat_bytes && t->tid == m->pid && (s.in || s.next_in)) {
		if (tc_grow((void **)&m->log, &m->caplog, m->nlog + 1, sizeof(s)))
			return tc_err_set(e, ENOMEM, "out of memory for the steps to repeat");
		s.branches = m->st->branches;
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
		const struct step *s = &m->log[i];
		size_t h = (size_t)((s->next * 0x9e3779b97f4a7c15ULL) ^ s->sp) & (cap - 1);

		if (!s->next_in)
			continue;
		for (; first[h]; h = (h + 1) & (cap - 1)) {
			const struct step *f = &m->log[first[h] - 1];

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

static int replay_step(struct emu *m, struct thr *t, const struct step *s, struct tc_err *e)
{
	return (s->in && tc_pt_enc_psb_due(&t->x, s->ip, e)) || encode(m, t, s, e) ? -1 : 0;
}

/* Encode the first thread's path again with the cycle (a, b] repeated after b until the
 * trace has repeat_bytes. */
static int replay(struct emu *m, struct tc_err *e)
{
	struct thr *t = &m->t[0];
	struct tc_emu_stats *st = m->st;
	size_t a = 0, b = 0;

	if (m->n != 1)
		return tc_err_set(e, ENOTSUP, "repeating a cycle needs a single-threaded "
				  "program (%zu threads)", m->n);
	if (find_cycle(m, &a, &b, e))
		return -1;
	st->cycle_from = m->log[a].branches;
	st->cycle_to = m->log[b].branches;
	st->steps = st->insns = st->branches = 0;
	tc_pt_enc_fini(&t->x);
	if (tc_pt_enc_init(&t->x, !m->o->no_retcomp, m->o->sync_period, e))
		return -1;
	if (m->o->truth && !(m->truth = fopen(m->o->truth, "w")))
		return tc_err_sys(e, errno, "%s", m->o->truth);
	t->ip = m->entry;
	t->in = tc_addr_filter_has(&m->f, t->ip);
	if (tc_pt_enc_psb(&t->x, false, 0, e) || (t->in && enable(m, t, t->ip, e)))
		return -1;
	for (size_t i = 0; i < m->nlog; i++) {
		if (replay_step(m, t, &m->log[i], e))
			return -1;
		while (i == b && tc_pt_enc_offset(&t->x) < m->o->repeat_bytes) {
			for (size_t j = a + 1; j <= b; j++)
				if (replay_step(m, t, &m->log[j], e))
					return -1;
			st->repeats++;
		}
	}
	return tc_pt_enc_flush_tnt(&t->x, e);
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
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, (void *)(long)sig) && errno != ESRCH)
		return tc_err_sys(e, errno, "single-stepping thread %d", (int)t->tid);
	return 0;
}

static void finish(struct thr *t)
{
	t->done = true;
	tc_pt_enc_flush_tnt(&t->x, NULL);
}

/* Follow every thread until the whole program has exited. */
static int follow(struct emu *m, struct tc_err *e)
{
	unsigned live = 1;

	if (step(m, &m->t[0], e))
		return -1;
	while (live) {
		struct thr *t;
		uint64_t ip = 0, sp = 0;
		int st, sig;
		pid_t w = waitpid(-1, &st, __WALL);

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
			if (w == m->pid)
				m->st->status = st;
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
			c->ptid = w;
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
			t->ip = ip;
			t->in = tc_addr_filter_has(&m->f, ip);
			if (tc_pt_enc_psb(&t->x, false, 0, e) || (t->in && enable(m, t, ip, e)))
				return -1;
			if (sig != SIGSTOP)
				t->sig = sig;
		} else if (sig == SIGTRAP) {
			if (stepped(m, t, ip, sp, e))
				return -1;
		} else {
			/* A signal stop: the step may or may not have executed an instruction. */
			if (ip != t->ip && stepped(m, t, ip, sp, e))
				return -1;
			t->sig = sig;
		}
		if (step(m, t, e))
			return -1;
	}
	return 0;
}

static int build_id(struct tc_perf_write *w, const char *path, struct tc_err *e)
{
	struct tc_err ignore;
	struct tc_elf *elf = tc_elf_open(path, &ignore);
	int rc;

	if (!elf)
		return 0;
	/* The real build id, so perf uses the file itself rather than rejecting it. */
	rc = tc_emu_file_build_id(w, tc_elf_build_id(elf), path, e);
	tc_elf_close(elf);
	return rc;
}

static int write_perf(struct emu *m, struct tc_err *e)
{
	uint64_t priv[TC_IPT_PRIV_MAX] = { 0 }, *ids, time = 1;
	uint32_t pid = (uint32_t)m->pid;
	struct tc_perf_write_sid sid = { .pid = pid };
	struct utsname u;
	char host[256] = "localhost";
	struct tc_perf_write *w;
	size_t i;
	int rc = -1;

	if (!(ids = calloc(m->n, sizeof(*ids))))
		return tc_err_set(e, ENOMEM, "out of memory");
	for (i = 0; i < m->n; i++)
		ids[i] = i + 1;
	priv[TC_IPT_PMU_TYPE] = PT_PMU_TYPE;
	priv[TC_IPT_TSC_BIT] = PT_CFG_TSC;	/* not set in config: timeless decoding */
	priv[TC_IPT_NORETCOMP_BIT] = PT_CFG_NORETCOMP;
	priv[TC_IPT_TSC_CTC_D] = 1;
	gethostname(host, sizeof(host) - 1);
	if (uname(&u))
		strcpy(u.release, "6.1.0");
	if (tc_emu_file_open(&w, m->o, PT_PMU_TYPE, m->o->no_retcomp ? PT_CFG_NORETCOMP : 0, ids,
			     m->n, e)) {
		free(ids);
		return -1;
	}
	/* one id per thread: its AUX stream */
#define SID(i) (sid.id = (i) + 1, tc_emu_file_sid(&sid, (uint32_t)m->t[i].tid, &time))
	if (tc_perf_write_auxtrace_info_intel_pt(w, priv, m->f.perf, e) ||
	    tc_perf_write_comm(w, pid, pid, m->comm, true, SID(0), e))
		goto out;
	for (i = 0; i < m->maps.n; i++) {
		const struct tc_map *x = &m->maps.v[i];
		struct tc_perf_write_mmap2 mm = { .pid = pid, .tid = pid, .start = x->start,
			.len = x->end - x->start, .pgoff = x->pgoff, .maj = x->maj, .min = x->min,
			.ino = x->ino, .prot = (uint32_t)x->prot, .flags = MAP_PRIVATE,
			.filename = x->path };

		if ((x->prot & PROT_EXEC) && x->path[0] == '/' &&
		    tc_perf_write_mmap2(w, &mm, SID(0), e))
			goto out;
	}
	for (i = 1; i < m->n; i++) {
		const struct thr *t = &m->t[i];

		if (tc_perf_write_fork(w, false, pid, pid, (uint32_t)t->tid, (uint32_t)t->ptid,
				       time + 1, SID(i), e) ||
		    tc_perf_write_comm(w, pid, (uint32_t)t->tid, m->comm, false, SID(i), e))
			goto out;
	}
	for (i = 0; i < m->n; i++)
		if (tc_perf_write_itrace_start(w, pid, (uint32_t)m->t[i].tid, SID(i), e))
			goto out;
	for (i = 0; i < m->n; i++) {
		const struct thr *t = &m->t[i];
		uint64_t len = tc_pt_enc_offset(&t->x);

		m->st->bytes += len;
		if (tc_perf_write_auxtrace(w, t->x.buf, len, 0, i, (uint32_t)i, (uint32_t)t->tid,
				   (uint32_t)-1, e) ||
		    tc_perf_write_aux(w, 0, len, 0, SID(i), e))
			goto out;
	}
	for (i = m->n; i-- > 0;)
		if (tc_perf_write_fork(w, true, pid, pid, (uint32_t)m->t[i].tid,
				       (uint32_t)m->t[i].ptid, time + 1, SID(i), e))
			goto out;
#undef SID
	if (tc_emu_file_features(w, m->o, &(struct tc_emu_file_host){ host, u.release, "x86_64",
				 "GenuineIntel,6,78,3", 1 }, e))
		goto out;
	for (i = 0; i < m->maps.n; i++) {
		const struct tc_map *x = &m->maps.v[i];
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(m->maps.v[j].path, x->path) &&
			       (m->maps.v[j].prot & PROT_EXEC);
		if ((x->prot & PROT_EXEC) && x->path[0] == '/' && !seen && build_id(w, x->path, e))
			goto out;
	}
	rc = tc_perf_write_close(w, e);
	w = NULL;
out:
	if (w)
		tc_perf_write_abort(w);
	free(ids);
	return rc;
}

static void kill_all(struct emu *m)
{
	int st;

	kill(m->pid, SIGKILL);
	while (waitpid(-1, &st, __WALL) > 0 || errno == EINTR)
		;
}

int tc_emu_pt_record(const struct tc_emu_opts *o, struct tc_emu_stats *st, struct tc_err *e)
{
	struct emu m = { .o = o, .st = st };
	struct thr *t;
	uint64_t entry;
	int status, rc = -1;

	memset(st, 0, sizeof(*st));
	if (!realpath(o->argv[0], m.real))
		return tc_err_sys(e, errno, "%s", o->argv[0]);
	snprintf(m.comm, sizeof(m.comm), "%s", strrchr(m.real, '/') + 1);
	/* A repeat writes the ground truth as it encodes the path again. */
	if (o->truth && !o->repeat_bytes && !(m.truth = fopen(o->truth, "w")))
		return tc_err_sys(e, errno, "%s", o->truth);
	if ((m.pid = fork()) < 0) {
		tc_err_sys(e, errno, "fork");
		goto out;
	}
	if (!m.pid) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execv(m.real, o->argv);
		_exit(127);
	}
	if (waitpid(m.pid, &status, 0) < 0 || !WIFSTOPPED(status)) {
		tc_err_set(e, ECHILD, "%s did not start (wait status 0x%x)", m.real, status);
		goto out;
	}
	if (ptrace(PTRACE_SETOPTIONS, m.pid, NULL,
		   (void *)(PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE))) {
		tc_err_sys(e, errno, "ptrace options");
		goto kill;
	}
	/* The loader has mapped the executable, itself and nothing else yet; the libraries
	 * are there at the entry point. */
	if (!(entry = auxv_entry(m.pid, e)) || run_to(m.pid, entry, e) ||
	    tc_addr_filter_maps_read(m.pid, &m.maps, e))
		goto kill;
	if (o->filter ? tc_addr_filter_resolve(o->filter, &m.maps, &m.f, e) :
	    tc_addr_filter_file(m.real, &m.maps, &m.f, e))
		goto kill;
	if (!(t = add(&m, m.pid, e)))
		goto kill;
	t->started = true;
	t->ip = entry;
	t->in = tc_addr_filter_has(&m.f, entry);
	m.entry = entry;
	if (tc_pt_enc_psb(&t->x, false, 0, e) || (t->in && enable(&m, t, entry, e)) ||
	    follow(&m, e))
		goto kill;
	if (o->repeat_bytes && replay(&m, e))
		goto out;
	if (tc_emu_truth_close(&m.truth, o->truth, e))
		goto out;
	rc = write_perf(&m, e);
	goto out;
kill:
	kill_all(&m);
out:
	if (m.truth)
		fclose(m.truth);
	for (size_t i = 0; i < m.n; i++)
		tc_pt_enc_fini(&m.t[i].x);
	free(m.t);
	free(m.log);
	tc_addr_filter_free(&m.f);
	tc_addr_filter_maps_free(&m.maps);
	return rc;
}
