/* CoreSight ETMv4 without the hardware: an aarch64 program runs under qemu-user, whose exec
 * log (`-d exec,nochain`: one line per executed translation block, tagged with the vCPU index
 * qemu gives each guest thread) becomes per-thread blocks (lib/emulate/qemu_exec). Every thread gets
 * its own emulated ETM (lib/emulate/etm4_enc) with its own trace ID and CONTEXTIDR = its thread id,
 * and all of them write into one formatted sink buffer (lib/emulate/cs_formatter), as several ETMs
 * share an ETR. The result is perf.data as perf writes a CPU-wide cs_etm session: CS_ETM
 * AUXTRACE_INFO v1 with one ETMv4 block per emulated ETM ("cpu"), the sink's buffer as one
 * AUXTRACE of cpu 0, and timestamps in the trace (ETM_OPT_TS), without which perf decodes
 * one shared thread state for all trace IDs and cannot separate interleaved threads. The
 * timestamps count the instructions of all threads, so perf orders them as they ran.
 * Static programs only: a dynamic one runs the host's aarch64 ld.so and libc, whose images
 * the decoder would need too. */
#include "lib/emulate/emu.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/emulate/cs_formatter.h"
#include "lib/emulate/emu_file.h"
#include "lib/emulate/etm4_enc.h"
#include "lib/emulate/qemu_exec.h"
#include "lib/images/addr_filter.h"
#include "lib/images/elf.h"
#include "lib/perfdata/perf_data.h"
#include "lib/perfdata/perf_write.h"
#include "lib/util/grow.h"

#define CS_PMU_TYPE 9
#define CS_ETM_OPT_CTXTID (1ULL << 14)	/* perf's ETM_OPT_CTXTID config bit */
#define CS_ETM_OPT_TS (1ULL << 28)	/* perf's ETM_OPT_TS: trace has timestamps */
#define ETM4_CFG_TS (1U << 11)		/* TRCCONFIGR.TS */
#define FIRST_TRACE_ID 0x10
#define MAX_ETMS (0x70 - FIRST_TRACE_ID)
#define MAX_VCPUS 256
#define TS_EVERY 256			/* blocks between timestamps of a running thread */
#define TS_BASE (1ULL << 32)		/* timestamps start here (perf subtracts counts) */

struct emu;

/* One guest thread: its emulated ETM and the perf-convention branch state. */
struct vcpu {
	struct emu *m;
	unsigned idx;		/* the qemu vCPU it ran on */
	unsigned etm;		/* its ETM: trace ID FIRST_TRACE_ID + etm */
	unsigned since_ts;	/* blocks since its last timestamp */
	bool real_tid;		/* tid found in /proc (else made up) */
	uint32_t tid;
	struct tc_qemu_exec *q;
	struct tc_etm4_enc *enc;
	bool in_range;		/* the last block was traced */
	bool started;		/* a traced block was seen */
	uint64_t prev_last;
	bool prev_taken;
};

struct emu {
	const struct tc_emu_opts *o;
	struct tc_emu_stats *st;
	pid_t pid;
	struct tc_elf *elf;
	struct tc_maps maps;	/* the executable's segments, as mapped */
	struct tc_addr_filter f;
	struct tc_cs_formatter *fmt;
	struct vcpu *v[MAX_ETMS];	/* every thread's ETM, in order of appearance */
	unsigned nv;
	struct vcpu *cur[MAX_VCPUS];	/* the thread on each vCPU now */
	struct vcpu *last;		/* the thread of the previous log line */
	uint64_t clock;			/* instructions executed by all threads */
	pid_t known[64];	/* qemu's own threads, never a guest thread */
	size_t nknown;
	pid_t *gtids;		/* guest threads seen in /proc, in order of creation */
	size_t ngtids, capgtids;
	unsigned lines;
	FILE *truth;
	char real[PATH_MAX];
};

static size_t read_code(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct vcpu *c = ctx;

	return tc_elf_read_vaddr(c->m->elf, addr, buf, len);
}

static void truth(struct vcpu *c, uint64_t from, uint64_t to)
{
	c->m->st->branches++;
	if (!c->m->truth)
		return;
	if (!c->m->o->truth_no_tid)
		fprintf(c->m->truth, "%u ", c->tid);
	fprintf(c->m->truth, "%llx %llx\n", (unsigned long long)from, (unsigned long long)to);
}

/* A timestamp after the instructions it covers, as an ETM emits them; perf orders the
 * threads' trace by them. */
static int stamp(struct vcpu *c, struct tc_err *e)
{
	c->since_ts = 0;
	return tc_etm4_enc_timestamp(c->enc, TS_BASE + c->m->clock, e);
}

/* A block the thread executed: traced when it starts inside the filter. The truth is in
 * perf's convention for CoreSight: FROM TO where a taken branch joins two traced blocks,
 * 0 TO where tracing (re)starts, FROM 0 where it stopped before a gap (written when it
 * resumes: perf has no branch out at the end of the trace). */
static int on_block(void *ctx, const struct tc_etm4_enc_block *b, struct tc_err *e)
{
	struct vcpu *c = ctx;
	struct emu *m = c->m;
	bool resumed;
	uint64_t n;

	if (b->end == TC_ETM4_END_NONE)
		return 0;	/* no waypoint executed: nothing a real ETM would emit yet */
	n = (b->last - b->start) / 4 + 1;
	m->st->steps += n;
	m->clock += n;
	if (!tc_addr_filter_has(&m->f, b->start)) {
		c->in_range = false;
		return 0;
	}
	m->st->insns += n;
	resumed = !c->in_range;
	if (resumed) {
		/* Out of the last range when the trace resumes: none at the end of trace. */
		if (c->started)
			truth(c, c->prev_last, 0);
		truth(c, 0, b->start);
	}
	else if (c->prev_taken)
		truth(c, c->prev_last, b->start);
	c->in_range = c->started = true;
	c->prev_last = b->last;
	c->prev_taken = b->end == TC_ETM4_END_TAKEN || b->end == TC_ETM4_END_INDIRECT;
	if (tc_etm4_enc_block(c->enc, b, e))
		return -1;
	/* A timestamp follows TRACE_ON as on an ETM: perf takes a trace ID's packets after a
	 * discontinuity only once a timestamp dates them. */
	if (resumed || ++c->since_ts >= TS_EVERY)
		return stamp(c, e);
	return 0;
}

static int drain(struct vcpu *c, struct tc_err *e)
{
	size_t n;
	const uint8_t *d = tc_etm4_enc_data(c->enc, &n);

	if (n && tc_cs_formatter_write(c->m->fmt, (uint8_t)(FIRST_TRACE_ID + c->etm), d, n, e))
		return -1;
	tc_etm4_enc_drain(c->enc, n);
	return 0;
}

static bool is_known(const struct emu *m, pid_t t)
{
	for (size_t i = 0; i < m->nknown; i++)
		if (m->known[i] == t)
			return true;
	for (size_t i = 0; i < m->ngtids; i++)
		if (m->gtids[i] == t)
			return true;
	return false;
}

static int cmp_pid(const void *a, const void *b)
{
	return (*(const pid_t *)a > *(const pid_t *)b) - (*(const pid_t *)a < *(const pid_t *)b);
}

/* qemu-user runs each guest thread on a host thread with the same id; the exec log names
 * only the vCPU. The threads in /proc are collected as they appear, in order of creation
 * (ids ascend); those there before the guest ran are qemu's own. The k-th guest thread to
 * show up in the log is taken to be the k-th created. */
static void poll_tasks(struct emu *m, bool qemu_own)
{
	char path[64];
	struct dirent *d;
	pid_t fresh[64];
	size_t n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)m->pid);
	if (!(dir = opendir(path)))
		return;
	while ((d = readdir(dir)) && n < 64) {
		pid_t t = (pid_t)atoi(d->d_name);

		if (t > 0 && t != m->pid && !is_known(m, t))
			fresh[n++] = t;
	}
	closedir(dir);
	qsort(fresh, n, sizeof(fresh[0]), cmp_pid);
	for (size_t i = 0; i < n; i++) {
		if (qemu_own) {
			if (m->nknown < sizeof(m->known) / sizeof(m->known[0]))
				m->known[m->nknown++] = fresh[i];
			continue;
		}
		if (tc_grow((void **)&m->gtids, &m->capgtids, m->ngtids + 1, sizeof(*m->gtids)))
			return;
		m->gtids[m->ngtids++] = fresh[i];
	}
}

static bool alive(const struct emu *m, uint32_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%u", (int)m->pid, tid);
	return access(path, F_OK) == 0;
}

/* The thread's trace ends: its last block, atoms and a timestamp go to the sink. Two:
 * perf 6.1 leaves out the last range before a thread's final timestamp (t55 checks the
 * last branch is there); the repeated value changes nothing else. */
static int retire(struct vcpu *c, struct tc_err *e)
{
	return tc_qemu_exec_end(c->q, e) || tc_etm4_enc_flush(c->enc, e) || stamp(c, e) ||
			       stamp(c, e) || drain(c, e)
		       ? -1
		       : 0;
}

/* qemu reuses a vCPU index once its thread has exited. A new thread starts after the
 * system call that created it: a TB after an SVC that the vCPU's previous TB did not hold
 * (its thread ended in another system call), and the thread known to run there is gone. */
static bool new_thread_on(struct emu *m, struct vcpu *c, uint64_t pc)
{
	uint32_t insn;

	if (pc < 4 || tc_elf_read_vaddr(m->elf, pc - 4, &insn, 4) != 4 ||
	    insn != 0xd4000001 /* svc #0 */)
		return false;
	if (tc_qemu_exec_last_tb_ends_at(c->q, pc - 4))
		return false;	/* the SVC ended its own previous TB */
	/* qemu frees the index before the old host thread has left /proc; on a loaded
	 * machine that can take a while (test_emu_etm's rare "3 threads of 4": 2 runs in 60
	 * with three CPU hogs on 2 cores when this waited 200 ms), so give it up to 1 s. */
	for (int i = 0; i < 1000 && c->real_tid && alive(m, c->tid); i++)
		usleep(1000);
	return !c->real_tid || !alive(m, c->tid);
}

static struct vcpu *vcpu(struct emu *m, unsigned idx, uint64_t pc, struct tc_err *e)
{
	struct tc_etm4_cfg cfg = { .sync_period = m->o->sync_period };
	struct vcpu *c;

	if (idx >= MAX_VCPUS) {
		tc_err_set(e, E2BIG, "vCPU index %u: more than %d at once", idx, MAX_VCPUS);
		return NULL;
	}
	if ((c = m->cur[idx])) {
		if (!new_thread_on(m, c, pc))
			return c;
		if (retire(c, e))
			return NULL;
	}
	if (m->nv == MAX_ETMS) {
		tc_err_set(e, E2BIG, "more than %d threads (trace IDs 0x10-0x6f)", MAX_ETMS);
		return NULL;
	}
	if (!(c = calloc(1, sizeof(*c)))) {
		tc_err_set(e, ENOMEM, "out of memory");
		return NULL;
	}
	c->m = m;
	c->idx = idx;
	c->etm = m->nv;
	c->real_tid = true;
	m->v[m->nv++] = c;
	m->cur[idx] = c;
	if (c->etm == 0) {
		c->tid = (uint32_t)m->pid;
		poll_tasks(m, true);
	} else {
		if (m->ngtids < c->etm)
			poll_tasks(m, false);
		/* Not found (gone before it was seen): an id of its own, used consistently. */
		c->real_tid = m->ngtids >= c->etm;
		c->tid = c->real_tid ? (uint32_t)m->gtids[c->etm - 1] :
			(uint32_t)(m->pid + 100000 + c->etm);
	}
	cfg.ctxid = c->tid;
	m->st->threads++;
	if (!(c->enc = tc_etm4_enc_new(&cfg, e)) ||
	    !(c->q = tc_qemu_exec_new(read_code, on_block, c, e)))
		return NULL;
	return c;
}

/* The executable's PT_LOAD segments as the mappings a process would have. */
static int elf_maps(struct emu *m, struct tc_err *e)
{
	size_t n;
	const struct tc_elf_seg *s = tc_elf_segments(m->elf, &n);

	if (!(m->maps.v = calloc(n ? n : 1, sizeof(*m->maps.v))))
		return tc_err_set(e, ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct tc_map *x = &m->maps.v[m->maps.n];

		if (!s[i].filesz)
			continue;
		*x = (struct tc_map){ .start = s[i].vaddr, .end = s[i].vaddr + s[i].filesz,
				      .pgoff = s[i].offset, .prot = PROT_READ |
				      (s[i].exec ? PROT_EXEC : 0), .path = strdup(m->real) };
		if (!x->path)
			return tc_err_set(e, ENOMEM, "out of memory");
		m->maps.n++;
	}
	return 0;
}

static int check_static(const char *path, struct tc_err *e)
{
	Elf64_Ehdr h;
	Elf64_Phdr p;
	int fd = open(path, O_RDONLY), rc = 0;

	if (fd < 0)
		return tc_err_sys(e, errno, "%s", path);
	if (pread(fd, &h, sizeof(h), 0) != sizeof(h))
		rc = tc_err_set(e, EINVAL, "%s: not an ELF file", path);
	for (unsigned i = 0; !rc && i < h.e_phnum; i++) {
		if (pread(fd, &p, sizeof(p), (off_t)(h.e_phoff + (uint64_t)i * h.e_phentsize)) !=
		    sizeof(p))
			rc = tc_err_set(e, EINVAL, "%s: truncated program headers", path);
		else if (p.p_type == PT_INTERP)
			rc = tc_err_set(e, ENOTSUP, "%s is dynamically linked: emulated ETM traces "
					"static aarch64 programs (a dynamic one would need its "
					"ld.so and libraries as images too); link it with -static",
					path);
	}
	if (!rc && h.e_type != ET_EXEC)
		rc = tc_err_set(e, ENOTSUP, "%s is position-independent: emulated ETM traces "
				"static non-PIE aarch64 programs (-static -no-pie)", path);
	close(fd);
	return rc;
}

/* Run qemu-aarch64 with its exec log on a pipe (fd 3 of qemu) and feed every line. */
static int run(struct emu *m, struct tc_err *e)
{
	const char *qemu = m->o->qemu ? m->o->qemu : "qemu-aarch64";
	size_t argc = 0, cap = 0;
	char *line = NULL;
	int pfd[2], st, rc = 0;
	char **args;
	FILE *log;

	while (m->o->argv[argc])
		argc++;
	if (!(args = calloc(argc + 6, sizeof(*args))))
		return tc_err_set(e, ENOMEM, "out of memory");
	args[0] = (char *)qemu;
	args[1] = "-d";
	args[2] = "exec,nochain";
	args[3] = "-D";
	args[4] = "/proc/self/fd/3";
	args[5] = m->real;
	for (size_t i = 1; i < argc; i++)
		args[5 + i] = m->o->argv[i];
	if (pipe(pfd)) {
		free(args);
		return tc_err_sys(e, errno, "pipe");
	}
	if ((m->pid = fork()) < 0) {
		free(args);
		return tc_err_sys(e, errno, "fork");
	}
	if (!m->pid) {
		close(pfd[0]);
		if (dup2(pfd[1], 3) < 0)
			_exit(126);
		if (pfd[1] != 3)
			close(pfd[1]);
		execvp(qemu, args);
		_exit(127);
	}
	free(args);
	close(pfd[1]);
	/* A small pipe keeps qemu close behind the reader: a new thread's id is then still in
	 * /proc when its first line arrives. */
	fcntl(pfd[0], F_SETPIPE_SZ, 4096);
	if (!(log = fdopen(pfd[0], "r"))) {
		close(pfd[0]);
		rc = tc_err_sys(e, errno, "reading qemu's log");
	}
	while (!rc && getline(&line, &cap, log) > 0) {
		const char *p = strstr(line, "Trace ");
		unsigned idx;
		uint64_t pc;
		struct vcpu *c;

		if (!p || !tc_qemu_exec_parse_line(p, &idx, &pc))
			continue;
		if (m->nv && !(++m->lines & 15))
			poll_tasks(m, false);
		if (!(c = vcpu(m, idx, pc, e)))
			rc = -1;
		/* The previous thread stops here for now: time stamps its trace so far. */
		else if (m->last && m->last != c && (stamp(m->last, e) || drain(m->last, e)))
			rc = -1;
		else if (tc_qemu_exec_tb(c->q, pc, e) || drain(c, e))
			rc = -1;
		m->last = c;
	}
	free(line);
	if (log)
		fclose(log);
	if (rc)
		kill(m->pid, SIGKILL);
	if (waitpid(m->pid, &st, 0) < 0)
		return rc ? rc : tc_err_sys(e, errno, "waitpid");
	m->st->status = st;
	if (rc)
		return rc;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127 && !m->nv)
		return tc_err_set(e, ENOENT, "cannot run %s (Debian: apt install qemu-user)", qemu);
	if (!m->nv)
		return tc_err_set(e, EINVAL, "%s wrote no exec log for %s", qemu, m->real);
	for (unsigned i = 0; i < MAX_VCPUS; i++)
		if (m->cur[i] && retire(m->cur[i], e))
			return -1;
	return tc_cs_formatter_flush(m->fmt, e);
}

static int write_perf(struct emu *m, struct tc_err *e)
{
	struct tc_perf_write_etmv4 cpus[MAX_ETMS];
	uint64_t id = 1, time = 1;
	uint32_t pid = (uint32_t)m->pid;
	struct tc_perf_write_sid sid = { .pid = pid, .id = 1 };	/* cpu 0: the sink's buffer */
	const char *comm = strrchr(m->real, '/') + 1;
	const uint8_t *buf;
	size_t len, nc = 0;
	struct tc_perf_write *w;

	for (unsigned i = 0; i < m->nv; i++) {
		struct tc_etm4_regs r;

		tc_etm4_enc_default_regs(&r, (uint8_t)(FIRST_TRACE_ID + i));
		cpus[nc++] = (struct tc_perf_write_etmv4){ .cpu = i,
							   .trcconfigr = r.configr | ETM4_CFG_TS,
							   .trctraceidr = r.traceidr,
							   .trcidr0 = r.idr0,
							   .trcidr1 = r.idr1,
							   .trcidr2 = r.idr2,
							   .trcidr8 = r.idr8,
							   .trcauthstatus = r.authstatus };
	}
	buf = tc_cs_formatter_data(m->fmt, &len);
	m->st->bytes = len;
#define SID(tid) tc_emu_file_sid(&sid, (tid), &time)
	if (tc_emu_file_open(&w, m->o, CS_PMU_TYPE, CS_ETM_OPT_CTXTID | CS_ETM_OPT_TS, &id, 1, e))
		return -1;
	if (tc_perf_write_auxtrace_info_cs_etm(w, CS_PMU_TYPE, 0, cpus, nc, e) ||
	    tc_perf_write_comm(w, pid, pid, comm, true, SID(pid), e))
		goto fail;
	for (size_t i = 0; i < m->maps.n; i++) {
		const struct tc_map *x = &m->maps.v[i];
		uint64_t s = x->start & ~0xfffULL;
		struct tc_perf_write_mmap2 mm = { .pid = pid, .tid = pid, .start = s,
			.len = ((x->end + 0xfff) & ~0xfffULL) - s, .pgoff = x->pgoff & ~0xfffULL,
			.prot = (uint32_t)x->prot, .flags = MAP_PRIVATE, .filename = m->real };

		if ((x->prot & PROT_EXEC) &&
		    tc_perf_write_mmap2(w, &mm, SID(pid), e))
			goto fail;
	}
	for (unsigned i = 1; i < m->nv; i++) {
		uint32_t t = m->v[i]->tid;

		if (tc_perf_write_fork(w, false, pid, pid, t, pid, time, SID(t), e) ||
		    tc_perf_write_comm(w, pid, t, comm, false, SID(t), e))
			goto fail;
	}
	if (tc_perf_write_itrace_start(w, pid, pid, SID(pid), e) ||
	    tc_perf_write_auxtrace(w, buf, len, 0, 0, 0, (uint32_t)-1, 0, e) ||
	    tc_perf_write_aux(w, 0, len, 0, SID(pid), e))
		goto fail;
	for (unsigned i = m->nv; i-- > 0;) {
		uint32_t t = m->v[i]->tid;

		if (tc_perf_write_fork(w, true, pid, pid, t, pid, time, SID(t), e))
			goto fail;
	}
#undef SID
	if (tc_emu_file_features(w, m->o, &(struct tc_emu_file_host){ "emulated", "6.1.0",
				 "aarch64", "0x00000000410fd034", (uint32_t)m->nv }, e) ||
	    tc_emu_file_build_id(w, tc_elf_build_id(m->elf), m->real, e))
		goto fail;
	return tc_perf_write_close(w, e);
fail:
	tc_perf_write_abort(w);
	return -1;
}

int tc_emu_etm_record(const struct tc_emu_opts *o, struct tc_emu_stats *st, struct tc_err *e)
{
	struct emu m = { .o = o, .st = st };
	int rc = -1;

	memset(st, 0, sizeof(*st));
	if (!realpath(o->argv[0], m.real))
		return tc_err_sys(e, errno, "%s", o->argv[0]);
	if (check_static(m.real, e) || !(m.elf = tc_elf_open(m.real, e)))
		return -1;
	if (elf_maps(&m, e) ||
	    (o->filter ? tc_addr_filter_resolve(o->filter, &m.maps, &m.f, e) :
	     tc_addr_filter_file(m.real, &m.maps, &m.f, e)) ||
	    !(m.fmt = tc_cs_formatter_new(e)))
		goto out;
	if (o->truth && !(m.truth = fopen(o->truth, "w"))) {
		tc_err_sys(e, errno, "%s", o->truth);
		goto out;
	}
	if (run(&m, e))
		goto out;
	if (tc_emu_truth_close(&m.truth, o->truth, e))
		goto out;
	rc = write_perf(&m, e);
out:
	if (m.truth)
		fclose(m.truth);
	for (unsigned i = 0; i < m.nv; i++) {
		tc_qemu_exec_free(m.v[i]->q);
		tc_etm4_enc_free(m.v[i]->enc);
		free(m.v[i]);
	}
	free(m.gtids);
	tc_cs_formatter_free(m.fmt);
	tc_addr_filter_free(&m.f);
	tc_addr_filter_maps_free(&m.maps);
	if (m.elf)
		tc_elf_close(m.elf);
	return rc;
}
