/* CoreSight ETMv4 without the hardware: an aarch64 program runs under qemu-aarch64 with
 * tracectl's plugin (lib/emulate/qemu_run), which hands over each guest thread's executed
 * translation blocks, in order, with its real thread id; they become per-thread blocks that
 * end in ETM waypoints (lib/emulate/qemu_exec). Every thread gets its own emulated ETM
 * (lib/emulate/etm4_enc) with its own trace ID and CONTEXTIDR = its thread id, and all of
 * them write into one formatted sink buffer (lib/emulate/cs_formatter), as several ETMs share
 * an ETR. The result is perf.data as perf writes a CPU-wide cs_etm session: CS_ETM
 * AUXTRACE_INFO v1 with one ETMv4 block per emulated ETM ("cpu"), the sink's buffer as one
 * AUXTRACE of cpu 0, and timestamps in the trace (ETM_OPT_TS), without which perf decodes
 * one shared thread state for all trace IDs and cannot separate interleaved threads. The
 * timestamps count the instructions of all threads as tracectl reads them, so they rise.
 * Static programs only: a dynamic one runs the host's aarch64 ld.so and libc, whose images
 * the decoder would need too. */
#include "lib/emulate/emu.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/emulate/cs_formatter.h"
#include "lib/emulate/emu_file.h"
#include "lib/emulate/etm4_enc.h"
#include "lib/emulate/qemu_exec.h"
#include "lib/images/addr_filter.h"
#include "lib/images/elf.h"
#include "lib/perfdata/perf_data.h"
#include "lib/perfdata/perf_write.h"
#include "lib/emulate/qemu_run.h"
#include "lib/util/grow.h"

#define CS_PMU_TYPE 9
#define CS_ETM_OPT_CTXTID (1ULL << 14)	/* perf's ETM_OPT_CTXTID config bit */
#define CS_ETM_OPT_TS (1ULL << 28)	/* perf's ETM_OPT_TS: trace has timestamps */
#define ETM4_CFG_TS (1U << 11)		/* TRCCONFIGR.TS */
#define FIRST_TRACE_ID 0x10
#define MAX_ETMS (0x70 - FIRST_TRACE_ID)
#define TS_EVERY 256			/* blocks between timestamps of a running thread */
#define TS_BASE (1ULL << 32)		/* timestamps start here (perf subtracts counts) */

struct emu;

/* One guest thread: its emulated ETM and the perf-convention branch state. */
struct vcpu {
	struct emu *m;
	unsigned etm;		/* its ETM: trace ID FIRST_TRACE_ID + etm */
	unsigned since_ts;	/* blocks since its last timestamp */
	bool retired;		/* its thread has exited: its trace is complete */
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
	struct vcpu *last;		/* the thread of the previous block */
	uint64_t clock;			/* instructions executed by all threads */
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

/* A guest thread's first block: its ETM. */
static struct vcpu *etm_new(struct emu *m, uint32_t tid, struct tc_err *e)
{
	struct tc_etm4_cfg cfg = { .sync_period = m->o->sync_period, .ctxid = tid };
	struct vcpu *c;

	if (m->nv == MAX_ETMS) {
		tc_err_set(e, E2BIG, "more than %d threads (trace IDs 0x10-0x6f)", MAX_ETMS);
		return NULL;
	}
	if (!(c = calloc(1, sizeof(*c)))) {
		tc_err_set(e, ENOMEM, "out of memory");
		return NULL;
	}
	c->m = m;
	c->etm = m->nv;
	c->tid = tid;
	m->v[m->nv++] = c;
	m->st->threads++;
	if (!(c->enc = tc_etm4_enc_new(&cfg, e)) ||
	    !(c->q = tc_qemu_exec_new(read_code, on_block, c, e)))
		return NULL;
	return c;
}

static struct vcpu *etm_of(struct emu *m, uint32_t tid)
{
	if (m->last && m->last->tid == tid && !m->last->retired)
		return m->last;
	for (unsigned i = m->nv; i-- > 0;)
		if (m->v[i]->tid == tid && !m->v[i]->retired)
			return m->v[i];
	return NULL;
}

static int on_thread(void *arg, uint32_t tid, bool start, struct tc_err *e)
{
	struct emu *m = arg;
	struct vcpu *c;

	if (start) {
		if (!m->nv)
			m->pid = (pid_t)tid;	/* the first thread: the process */
		return etm_new(m, tid, e) ? 0 : -1;
	}
	if (!(c = etm_of(m, tid)))
		return 0;
	if (m->last == c)
		m->last = NULL;
	c->retired = true;
	return retire(c, e);
}

static int on_tb(void *arg, uint32_t tid, const struct tc_qp_desc *d, struct tc_err *e)
{
	struct emu *m = arg;
	struct vcpu *c = etm_of(m, tid);

	if (!c)
		return tc_err_set(e, EPROTO, "a block of thread %u before its start", tid);
	/* The previous thread stops here for now: time stamps its trace so far. */
	if (m->last && m->last != c && (stamp(m->last, e) || drain(m->last, e)))
		return -1;
	m->last = c;
	return tc_qemu_exec_tb(c->q, d->vaddr, e) || drain(c, e) ? -1 : 0;
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

/* Run qemu-aarch64 with tracectl's plugin and feed every thread's blocks. */
static int run(struct emu *m, struct tc_err *e)
{
	static const struct tc_qemu_run_ops ops = { on_thread, on_tb, NULL };
	struct tc_qemu_run_opts ro = { .qemu = m->o->qemu ? m->o->qemu : "qemu-aarch64",
		.argv = m->o->argv, .stop_req = m->o->stop_req };
	struct tc_qemu_run *r;
	int rc;

	if (tc_qemu_run_start(&r, &ro, e))
		return -1;
	rc = tc_qemu_run_loop(r, &ops, m, &m->st->status, e);
	tc_qemu_run_free(r);
	if (rc)
		return -1;
	if (!m->nv)
		return tc_err_set(e, EINVAL, "%s ran no code under %s", m->real, ro.qemu);
	for (unsigned i = 0; i < m->nv; i++)
		if (!m->v[i]->retired && (m->v[i]->retired = true, retire(m->v[i], e)))
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
		const struct tc_perf_write_sid *fs = SID(t);

		/* the fork's time is its sample id's (see pt_stream.c) */
		if (tc_perf_write_fork(w, false, pid, pid, t, pid, fs->time, fs, e) ||
		    tc_perf_write_comm(w, pid, t, comm, false, SID(t), e))
			goto fail;
	}
	if (tc_perf_write_itrace_start(w, pid, pid, SID(pid), e) ||
	    tc_perf_write_auxtrace(w, buf, len, 0, 0, 0, (uint32_t)-1, 0, e) ||
	    tc_perf_write_aux(w, 0, len, 0, SID(pid), e))
		goto fail;
	for (unsigned i = m->nv; i-- > 0;) {
		uint32_t t = m->v[i]->tid;
		const struct tc_perf_write_sid *fs = SID(t);

		if (tc_perf_write_fork(w, true, pid, pid, t, pid, fs->time, fs, e))
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
	tc_cs_formatter_free(m.fmt);
	tc_addr_filter_free(&m.f);
	tc_addr_filter_maps_free(&m.maps);
	if (m.elf)
		tc_elf_close(m.elf);
	return rc;
}
