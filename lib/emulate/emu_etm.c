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
 * Static and dynamic programs, PIE or not: a dynamic one runs with Debian's aarch64 ld.so
 * and libraries (qemu's -L, /usr/aarch64-linux-gnu unless QEMU_LD_PREFIX says otherwise).
 * Code is read from the guest's memory (qemu's, at guest_base), the mappings that hold it
 * from /proc/PID/maps and the plugin's view of mmap, with their host paths; a static
 * non-PIE program's own code is read from its file. */
#include "lib/emulate/emu.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/emulate/cs_formatter.h"
#include "lib/emulate/emu_file.h"
#include "lib/emulate/emu_trigger.h"
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
#define FRAME 16			/* the formatter's frame: a sink keeps whole ones */

struct emu;

/* Snapshot mode: one snapshot of the sink, what is new since the last one (at most the
 * ring), from sink position pos. */
struct snap {
	uint64_t pos;
	size_t len;
	uint8_t *data;
};

/* One guest thread: its emulated ETM and the perf-convention branch state. */
struct vcpu {
	struct emu *m;
	unsigned etm;		/* its ETM: trace ID FIRST_TRACE_ID + etm (m->etm[etm] while
				 * it lives) */
	unsigned since_ts;	/* blocks since its last timestamp */
	bool retired;		/* its thread has exited: its trace is complete */
	uint32_t tid;
	pid_t pid;		/* its qemu process */
	uint32_t ppid, ptid;	/* a fork child's first thread: who forked it */
	bool exec;		/* the first thread of an exec'd program */
	char comm[16];		/* exec: the program's name */
	uint64_t guest_base;	/* of that process */
	bool own_elf;		/* the first program: a static non-PIE one is read from m->elf */
	struct tc_qemu_exec *q;
	struct tc_etm4_enc *enc;
	bool in_range;		/* the last block was traced */
	bool paused;		/* a pause trigger stopped its trace (until a resume one) */
	bool started;		/* a traced block was seen */
	uint64_t prev_last;
	bool prev_taken;
};

struct emu {
	const struct tc_emu_opts *o;
	struct tc_emu_stats *st;
	pid_t pid;
	struct tc_elf *elf;
	bool elf_code;		/* m->elf is a static non-PIE program: its code is read there */
	const char *ld_prefix;	/* qemu's -L: where the aarch64 ld.so and libraries are */
	struct tc_maps maps;	/* the guest's executable mappings (guest addresses) */
	uint64_t known_lo, known_hi;	/* the last one found, a quick hit */
	struct tc_addr_filter f;
	struct tc_emu_triggers trig;
	struct tc_cs_formatter *fmt;
	struct vcpu **v;		/* every thread, in order of appearance */
	size_t nv, capv;
	/* The ETMs (trace IDs FIRST_TRACE_ID + i) and the live thread each traces (NULL: free).
	 * A thread that exits leaves its ETM to the next new thread, as a CPU's ETM goes on to
	 * the next thread scheduled there: that one's trace starts with A-sync, TRACE_INFO and
	 * TRACE_ON with its own CONTEXTIDR, which is how a decoder tells the two apart. */
	struct vcpu *etm[MAX_ETMS];
	struct vcpu *was[MAX_ETMS];	/* the last thread each ETM traced */
	unsigned netms;			/* ETMs used so far */
	struct vcpu *last;		/* the thread of the previous block */
	uint64_t clock;			/* instructions executed by all threads */
	uint64_t ring;			/* -S: sink bytes kept, whole frames (0: all) */
	uint64_t base;			/* sink bytes dropped before the formatter's data */
	uint64_t snapped;		/* sink position the last snapshot reached */
	struct snap *snaps;
	size_t nsnaps, capsnaps;
	FILE *truth;
	char real[PATH_MAX];
};

static size_t read_code(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct vcpu *c = ctx;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)(addr + c->guest_base),
						      len };
	const struct tc_emu_guest *g = c->m->o->guest;
	ssize_t n;

	if (c->own_elf && c->m->elf_code)
		return tc_elf_read_vaddr(c->m->elf, addr, buf, len);
	if (g)	/* no files behind it either */
		return g->read(g->ctx, c->pid, addr + c->guest_base, buf, len);
	/* the process waits at its exit (and exec) until its blocks are read */
	if ((n = process_vm_readv(c->pid, &local, 1, &remote, 1, 0)) > 0)
		return (size_t)n;
	/* killed by a signal: what the file holds there */
	for (size_t i = c->m->maps.n; i-- > 0;) {
		const struct tc_map *x = &c->m->maps.v[i];
		int fd;

		if (addr < x->start || addr >= x->end || x->path[0] != '/')
			continue;
		if ((fd = open(x->path, O_RDONLY | O_CLOEXEC)) < 0)
			return 0;
		n = pread(fd, buf, len < x->end - addr ? len : x->end - addr,
			  (off_t)(x->pgoff + (addr - x->start)));
		close(fd);
		return n > 0 ? (size_t)n : 0;
	}
	return 0;
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

/* Where the triggers in block b leave c's trace: the first traced instruction of b, or 0
 * when none is. A resume makes the rest of the block traced from that instruction (TRACE_ON
 * and its address); a pause stops the trace at the block's start, the last waypoint before
 * it: an ETM shows executed instructions only up to a waypoint, and the ones before the
 * pause in this block have none. */
static uint64_t triggered(struct vcpu *c, const struct tc_etm4_enc_block *b)
{
	uint64_t from = c->paused ? 0 : b->start;

	if (!c->m->trig.n || (!tc_emu_trigger_at(&c->m->trig, b->start) &&
			      !tc_emu_trigger_inside(&c->m->trig, b->start, b->last)))
		return from;
	for (uint64_t a = b->start; a <= b->last; a += 4) {
		enum tc_emu_trigger_kind k = tc_emu_trigger_at(&c->m->trig, a);

		if (k == TC_EMU_TRIG_PAUSE && !c->paused) {
			c->paused = true;
			from = 0;
		} else if (k == TC_EMU_TRIG_RESUME && c->paused) {
			c->paused = false;
			from = a;
		}
	}
	return from;
}

/* A block the thread executed: traced when it starts inside the filter. The truth is in
 * perf's convention for CoreSight: FROM TO where a taken branch joins two traced blocks,
 * 0 TO where tracing (re)starts, FROM 0 where it stopped before a gap (written when it
 * resumes: perf has no branch out at the end of the trace). */
static int snapshot(struct emu *m, struct tc_err *e);

static int block(struct vcpu *c, const struct tc_etm4_enc_block *b, struct tc_err *e)
{
	struct emu *m = c->m;
	struct tc_etm4_enc_block cut;
	uint64_t n, from;
	bool resumed;

	if (b->end == TC_ETM4_END_NONE) {
		/* No waypoint a decoder could place: the thread's end, or flow the program
		 * image does not explain, which is a signal's handler entered while the
		 * program computed (qemu delivers it between blocks) or sigreturn resuming
		 * the interrupted code. As an exception to the untraced kernel and back would
		 * on a user-only ETM, the trace stops at the last waypoint placed (the block
		 * that was interrupted, whose branch goes where sigreturn later resumes, is
		 * not shown) and starts again with TRACE_ON at the next block. */
		c->in_range = false;
		tc_etm4_enc_gap(c->enc);
		return 0;
	}
	n = (b->last - b->start) / 4 + 1;
	m->st->steps += n;
	m->clock += n;
	if (!(from = triggered(c, b)) || !tc_addr_filter_has(&m->f, from)) {
		c->in_range = false;
		tc_etm4_enc_gap(c->enc);
		return 0;
	}
	if (from != b->start) {
		/* resumed inside the block: traced from there */
		cut = *b;
		cut.start = from;
		b = &cut;
		n = (b->last - b->start) / 4 + 1;
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

static int on_block(void *ctx, const struct tc_etm4_enc_block *b, struct tc_err *e)
{
	struct vcpu *c = ctx;

	if (block(c, b, e))
		return -1;
	/* --snapshot-on: the thread reached it in this block; the snapshot has the trace up
	 * to the block's waypoint (an ETM shows no instruction before its waypoint) */
	if (b->end != TC_ETM4_END_NONE && tc_emu_trigger_snap_in(&c->m->trig, b->start, b->last))
		return snapshot(c->m, e);
	return 0;
}

static int drain(struct vcpu *c, struct tc_err *e)
{
	struct emu *m = c->m;
	size_t n;
	const uint8_t *d = tc_etm4_enc_data(c->enc, &n);

	if (n && tc_cs_formatter_write(m->fmt, (uint8_t)(FIRST_TRACE_ID + c->etm), d, n, e))
		return -1;
	tc_etm4_enc_drain(c->enc, n);
	if (m->ring) {
		/* the sink in overwrite mode: the latest ring bytes (dropped in bulk) */
		tc_cs_formatter_data(m->fmt, &n);
		if (n >= 2 * m->ring) {
			tc_cs_formatter_drain(m->fmt, n - m->ring);
			m->base += n - m->ring;
		}
	}
	return 0;
}

/* The sink's data ends (the run's end, a snapshot): the partial frame padded, then a whole
 * frame of null-ID padding. perf 6.1 feeds a buffer to OpenCSD only while bytes remain: when
 * its decoder stops to wait on an element of the buffer's last frame (those bytes all taken),
 * the elements still held there (a thread's last ranges) are never decoded and that thread's
 * last branch is missing; how full perf's queues are then depends on how the threads' trace
 * interleaves in the sink, so it came and went (t59 "ETM: per thread", 1 run in 10 loaded).
 * With one more frame perf makes another call and gets them. */
static int end_sink(struct emu *m, struct tc_err *e)
{
	return tc_cs_formatter_pad_frame(m->fmt, e);
}

/* -S: the sink as it is now, what is new since the last snapshot. Every ETM's held-back
 * atoms go in first and the partial frame is padded, as stopping the sink flushes them; a
 * decoder starts at the first frame and each trace ID at its first A-sync. */
static int snapshot(struct emu *m, struct tc_err *e)
{
	uint64_t head, from;
	const uint8_t *d;
	struct snap *x;
	size_t n;

	for (unsigned i = 0; i < m->netms; i++)
		if (m->etm[i] && (tc_etm4_enc_flush(m->etm[i]->enc, e) || drain(m->etm[i], e)))
			return -1;
	if (end_sink(m, e))
		return -1;
	d = tc_cs_formatter_data(m->fmt, &n);
	head = m->base + n;
	from = head - (n < m->ring ? n : m->ring);
	if (from < m->snapped)
		from = m->snapped;
	m->st->snapshots++;
	if (from == head)
		return 0;
	if (tc_grow((void **)&m->snaps, &m->capsnaps, m->nsnaps + 1, sizeof(*m->snaps)))
		return tc_err_set(e, ENOMEM, "out of memory");
	x = &m->snaps[m->nsnaps];
	x->pos = from;
	x->len = (size_t)(head - from);
	if (!(x->data = malloc(x->len)))
		return tc_err_set(e, ENOMEM, "out of memory");
	memcpy(x->data, d + (from - m->base), x->len);
	m->nsnaps++;
	m->snapped = head;
	return 0;
}

/* The thread's trace ends: its last block, atoms and a timestamp go to the sink. Two:
 * perf 6.1 leaves out the last range before a thread's final timestamp (t55 checks the
 * last branch is there); the repeated value changes nothing else. */
static int retire(struct vcpu *c, struct tc_err *e)
{
	struct emu *m = c->m;

	c->retired = true;
	if (m->last == c)
		m->last = NULL;
	if (tc_qemu_exec_end(c->q, e) || tc_etm4_enc_flush(c->enc, e) || stamp(c, e) ||
	    stamp(c, e) || drain(c, e))
		return -1;
	/* its ETM is free for the next thread; what is left of it is the side-band's */
	m->etm[c->etm] = NULL;
	tc_qemu_exec_free(c->q);
	tc_etm4_enc_free(c->enc);
	c->q = NULL;
	c->enc = NULL;
	return 0;
}

/* A guest thread's first block: its ETM. */
static struct vcpu *etm_new(struct emu *m, const struct tc_qemu_run_thr *t, struct tc_err *e)
{
	uint32_t tid = t->tid;
	struct tc_etm4_cfg cfg = { .sync_period = m->o->sync_period, .ctxid = tid };
	struct vcpu *c;
	unsigned k = 0;

	while (k < MAX_ETMS && m->etm[k])
		k++;
	if (k == MAX_ETMS) {
		tc_err_set(e, E2BIG, "thread %u: more than %d threads alive at once; the emulated "
			   "ETM gives each live thread a trace ID of its own (0x%x-0x%x) and reuses "
			   "those of threads that have exited", tid, MAX_ETMS, FIRST_TRACE_ID,
			   FIRST_TRACE_ID + MAX_ETMS - 1);
		return NULL;
	}
	if (tc_grow((void **)&m->v, &m->capv, m->nv + 1, sizeof(*m->v)) ||
	    !(c = calloc(1, sizeof(*c)))) {
		tc_err_set(e, ENOMEM, "out of memory");
		return NULL;
	}
	c->m = m;
	c->etm = k;
	if (m->was[k]) {
		/* The trace ID's last thread: its trace ends at this one's TRACE_ON, which
		 * comes with a timestamp before the new CONTEXTIDR (its last range goes
		 * nowhere, a decoder says, for the thread it was). */
		if (m->was[k]->started)
			truth(m->was[k], m->was[k]->prev_last, 0);
		cfg.start_ts = TS_BASE + m->clock;
	}
	m->etm[k] = m->was[k] = c;
	if (k >= m->netms)
		m->netms = k + 1;
	c->tid = tid;
	c->paused = m->o->start_paused;	/* every thread's trace starts paused */
	c->pid = (pid_t)t->pid;
	c->ppid = t->ppid;
	c->ptid = t->ptid;
	c->exec = t->exec;
	memcpy(c->comm, t->comm, sizeof(c->comm));
	c->guest_base = t->guest_base;
	/* a fork child runs the same program; an exec'd one does not */
	c->own_elf = !t->exec && (!m->nv || m->v[m->nv - 1]->own_elf || t->pid == (uint32_t)m->pid);
	m->v[m->nv++] = c;
	m->st->threads++;
	if (!(c->enc = tc_etm4_enc_new(&cfg, e)) ||
	    !(c->q = tc_qemu_exec_new(read_code, on_block, c, e)))
		return NULL;
	return c;
}

static struct vcpu *etm_of(struct emu *m, uint32_t tid)
{
	if (m->last && m->last->tid == tid)
		return m->last;
	for (unsigned i = 0; i < m->netms; i++)
		if (m->etm[i] && m->etm[i]->tid == tid)
			return m->etm[i];
	return NULL;
}

static int on_thread(void *arg, const struct tc_qemu_run_thr *t, bool start,
		     struct tc_err *e)
{
	struct emu *m = arg;
	uint32_t tid = t->tid;
	struct vcpu *c;

	if (start) {
		if (!m->nv)
			m->pid = (pid_t)t->pid;	/* the first thread: the process */
		return etm_new(m, t, e) ? 0 : -1;
	}
	if (!(c = etm_of(m, tid)))
		return 0;
	return retire(c, e);
}

static int add_map(struct emu *m, const struct tc_map *x, struct tc_err *e)
{
	struct tc_map *v = realloc(m->maps.v, (m->maps.n + 1) * sizeof(*v));

	if (!v)
		return tc_err_set(e, ENOMEM, "out of memory");
	m->maps.v = v;
	v[m->maps.n] = *x;
	v[m->maps.n].prot |= PROT_EXEC;	/* qemu maps guest code without it */
	if (!(v[m->maps.n].path = strdup(x->path)))
		return tc_err_set(e, ENOMEM, "out of memory");
	m->maps.n++;
	return 0;
}

/* The mapping that holds guest address va of c's process joins m->maps (MMAP2 records),
 * taken from /proc/PID/maps (host addresses: guest + guest_base) unless already known. */
static int learn_map(struct emu *m, struct vcpu *c, uint64_t va, struct tc_err *e)
{
	struct tc_maps now = { 0 };
	struct tc_err ignore;
	int rc = 0;

	for (size_t i = m->maps.n; i-- > 0;)
		if (va >= m->maps.v[i].start && va < m->maps.v[i].end) {
			m->known_lo = m->maps.v[i].start;
			m->known_hi = m->maps.v[i].end;
			return 0;
		}
	if (c->own_elf && m->elf_code)
		return 0;	/* elf_maps has them */
	if (m->o->guest ? m->o->guest->maps(m->o->guest->ctx, c->pid, &now, &ignore) :
	    tc_addr_filter_maps_read(c->pid, &now, &ignore))
		return 0;	/* gone (a fatal signal): its code cannot be read either */
	for (size_t i = 0; i < now.n; i++) {
		struct tc_map x = now.v[i];

		if (va + c->guest_base < x.start || va + c->guest_base >= x.end)
			continue;
		x.start -= c->guest_base;
		x.end -= c->guest_base;
		if (x.path[0] == '/' && !(rc = add_map(m, &x, e))) {
			m->known_lo = x.start;
			m->known_hi = x.end;
		}
		break;
	}
	tc_addr_filter_maps_free(&now);
	return rc;
}

/* The plugin saw the guest map a file with PROT_EXEC (guest addresses). */
static int on_mmap(void *arg, uint32_t tid, const struct tc_qemu_run_map *q, struct tc_err *e)
{
	struct emu *m = arg;
	struct tc_map x = { .start = q->addr, .end = q->addr + ((q->len + 4095) & ~4095ULL),
		.pgoff = q->pgoff, .ino = q->ino, .maj = major(q->dev), .min = minor(q->dev),
		.prot = (int)q->prot, .path = (char *)q->path };

	(void)tid;
	if (x.start < m->known_hi && x.end > m->known_lo)
		m->known_hi = m->known_lo = 0;
	return add_map(m, &x, e);
}

static int on_tb(void *arg, uint32_t tid, const struct tc_qp_desc *d, struct tc_err *e)
{
	struct emu *m = arg;
	struct vcpu *c = etm_of(m, tid);

	if (!c)
		return tc_err_set(e, EPROTO, "a block of thread %u before its start", tid);
	/* -S: SIGUSR2 asked for a snapshot */
	if (m->ring && m->o->snap_req && *m->o->snap_req) {
		*m->o->snap_req = 0;
		if (snapshot(m, e))
			return -1;
	}
	/* The previous thread stops here for now: time stamps its trace so far. */
	if (m->last && m->last != c && (stamp(m->last, e) || drain(m->last, e)))
		return -1;
	m->last = c;
	if ((d->vaddr < m->known_lo || d->vaddr >= m->known_hi) && learn_map(m, c, d->vaddr, e))
		return -1;
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

/* Is the program static and not position-independent (its code read from the file)?
 * Dynamic: where qemu finds the aarch64 ld.so (-L), unless QEMU_LD_PREFIX says. */
static int check_static(struct emu *m, const char *path, struct tc_err *e)
{
	static const char prefix[] = "/usr/aarch64-linux-gnu";
	const char *env = getenv("QEMU_LD_PREFIX");
	bool interp = false;
	struct stat st;
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
			interp = true;
	}
	close(fd);
	m->elf_code = !rc && !interp && h.e_type == ET_EXEC;
	if (interp && (!env || !*env) && !stat(prefix, &st))
		m->ld_prefix = prefix;
	return rc;
}

/* Run qemu-aarch64 with tracectl's plugin and feed every thread's blocks. */
static int run(struct emu *m, struct tc_err *e)
{
	static const struct tc_qemu_run_ops ops = { on_thread, on_tb, NULL, on_mmap };
	struct tc_qemu_run_opts ro = { .qemu = m->o->qemu ? m->o->qemu : "qemu-aarch64",
		.argv = m->o->argv, .ld_prefix = m->ld_prefix, .stop_req = m->o->stop_req,
		/* more rings than trace IDs: the rings of exited threads come back once read,
		 * so a thread past the trace IDs gets its ring and the error names the limit */
		.max_rings = MAX_ETMS + 32 };
	struct tc_qemu_run *r;
	int rc;

	if (m->o->guest) {
		if (m->o->guest->run(m->o->guest->ctx, &ops, m, &m->st->status, e))
			return -1;
	} else {
		if (tc_qemu_run_start(&r, &ro, e))
			return -1;
		rc = tc_qemu_run_loop(r, &ops, m, &m->st->status, e);
		tc_qemu_run_free(r);
		if (rc)
			return -1;
	}
	if (!m->nv)
		return tc_err_set(e, EINVAL, "%s ran no code under %s", m->real, ro.qemu);
	for (unsigned i = 0; i < m->netms; i++)
		if (m->etm[i] && retire(m->etm[i], e))
			return -1;
	/* -S: write_perf's last snapshot ends the sink */
	return m->ring ? tc_cs_formatter_flush(m->fmt, e) : end_sink(m, e);
}

/* The build id of each file mapped, once. */
static int build_ids(struct tc_perf_write *w, const struct emu *m, struct tc_err *e)
{
	for (size_t i = 0; i < m->maps.n; i++) {
		const char *p = m->maps.v[i].path;
		struct tc_err ignore;
		struct tc_elf *elf;
		bool seen = false;
		int rc;

		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(m->maps.v[j].path, p);
		if (seen || !(m->maps.v[i].prot & PROT_EXEC) || p[0] != '/' ||
		    !(elf = tc_elf_open(p, &ignore)))
			continue;
		rc = tc_emu_file_build_id(w, tc_elf_build_id(elf), p, e);
		tc_elf_close(elf);
		if (rc)
			return -1;
	}
	return 0;
}

/* MMAP2 of every executable mapping seen, in process pid (the guest's mappings are not told
 * apart by process or program: all are written for the first process, which fork children
 * inherit, and again after an exec, whose COMM empties the process's address space). */
static int mmaps(struct tc_perf_write *w, const struct emu *m, uint32_t pid,
		 struct tc_perf_write_sid *sid, uint64_t *time, struct tc_err *e)
{
	sid->pid = pid;
	for (size_t i = 0; i < m->maps.n; i++) {
		const struct tc_map *x = &m->maps.v[i];
		uint64_t s = x->start & ~0xfffULL;
		struct tc_perf_write_mmap2 mm = { .pid = pid, .tid = pid, .start = s,
			.len = ((x->end + 0xfff) & ~0xfffULL) - s, .pgoff = x->pgoff & ~0xfffULL,
			.maj = x->maj, .min = x->min, .ino = x->ino,
			.prot = (uint32_t)x->prot, .flags = MAP_PRIVATE, .filename = x->path };

		if ((x->prot & PROT_EXEC) &&
		    tc_perf_write_mmap2(w, &mm, tc_emu_file_sid(sid, pid, time), e))
			return -1;
	}
	return 0;
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

	for (unsigned i = 0; i < m->netms; i++) {
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
	if (m->ring && snapshot(m, e))
		return -1;
	buf = tc_cs_formatter_data(m->fmt, &len);
	m->st->bytes = len;
#define SID(tid) tc_emu_file_sid(&sid, (tid), &time)
	if (tc_emu_file_open(&w, m->o, CS_PMU_TYPE, CS_ETM_OPT_CTXTID | CS_ETM_OPT_TS, &id, 1, e))
		return -1;
	if (tc_perf_write_auxtrace_info_cs_etm(w, CS_PMU_TYPE, m->ring != 0, cpus, nc, e) ||
	    tc_perf_write_comm(w, pid, pid, comm, true, SID(pid), e))
		goto fail;
	if (mmaps(w, m, pid, &sid, &time, e))
		goto fail;
	for (size_t i = 1; i < m->nv; i++) {
		const struct vcpu *c = m->v[i];
		uint32_t t = c->tid, cp = (uint32_t)c->pid;
		bool child = cp != pid && t == cp && !c->exec;	/* a fork child's first thread */
		const struct tc_perf_write_sid *fs;

		sid.pid = cp;
		fs = SID(t);
		if (c->exec) {		/* its thread was there before: named anew */
			if (tc_perf_write_comm(w, cp, t, c->comm, true, fs, e) ||
			    mmaps(w, m, cp, &sid, &time, e))
				goto fail;
			continue;
		}
		/* the fork's time is its sample id's (see pt_stream.c) */
		if (tc_perf_write_fork(w, false, cp, child ? c->ppid : cp, t, child ? c->ptid : cp,
				       fs->time, fs, e) ||
		    tc_perf_write_comm(w, cp, t, comm, false, SID(t), e))
			goto fail;
	}
	sid.pid = pid;
	if (tc_perf_write_itrace_start(w, pid, pid, SID(pid), e))
		goto fail;
	if (m->ring) {
		m->st->bytes = 0;
		for (size_t i = 0; i < m->nsnaps; i++) {
			const struct snap *x = &m->snaps[i];

			m->st->bytes += x->len;
			if (tc_perf_write_auxtrace(w, x->data, x->len, x->pos, 0, 0, (uint32_t)-1, 0,
						   e) ||
			    /* no PERF_AUX_FLAG_OVERWRITE: perf 6.1 crashes on it for cs_etm */
			    tc_perf_write_aux(w, x->pos, x->len, 0, SID(pid), e))
				goto fail;
		}
	} else if (tc_perf_write_auxtrace(w, buf, len, 0, 0, 0, (uint32_t)-1, 0, e) ||
		   tc_perf_write_aux(w, 0, len, 0, SID(pid), e)) {
		goto fail;
	}
	for (size_t i = m->nv; i-- > 0;) {
		const struct vcpu *c = m->v[i];
		uint32_t t = c->tid, cp = (uint32_t)c->pid;
		const struct tc_perf_write_sid *fs;
		bool later = false;

		for (size_t j = i + 1; j < m->nv && !later; j++)
			later = m->v[j]->tid == t;	/* exec'd: one EXIT, the last */
		if (later)
			continue;
		sid.pid = cp;
		fs = SID(t);
		if (tc_perf_write_fork(w, true, cp, cp, t, cp, fs->time, fs, e))
			goto fail;
	}
#undef SID
	if (tc_emu_file_features(w, m->o, &(struct tc_emu_file_host){ "emulated", "6.1.0",
				 "aarch64", "0x00000000410fd034", (uint32_t)m->netms }, e) ||
	    build_ids(w, m, e))
		goto fail;
	return tc_perf_write_close(w, e);
fail:
	tc_perf_write_abort(w);
	return -1;
}

int tc_emu_etm_record(const struct tc_emu_opts *o, struct tc_emu_stats *st, struct tc_err *e)
{
	struct emu m = { .o = o, .st = st, .ring = o->snapshot_size & ~(uint64_t)(FRAME - 1) };
	int rc = -1;

	memset(st, 0, sizeof(*st));
	if (!realpath(o->argv[0], m.real))
		return tc_err_sys(e, errno, "%s", o->argv[0]);
	if (check_static(&m, m.real, e) || !(m.elf = tc_elf_open(m.real, e)))
		return -1;
	if (o->filter && !m.elf_code) {
		tc_err_set(e, ENOTSUP, "%s is dynamic or position-independent: --filter is "
			   "resolved before the run, against a static non-PIE program's file, "
			   "for emulated ETM", m.real);
		goto out;
	}
	if ((o->npause || o->nresume || o->nsnapshot_on) && !m.elf_code) {
		tc_err_set(e, ENOTSUP, "%s is dynamic or position-independent: --pause-on, "
			   "--resume-on and --snapshot-on are resolved before the run, against a "
			   "static non-PIE program's file, for emulated ETM", m.real);
		goto out;
	}
	/* without a filter: all of user space, libraries and ld.so included */
	if ((m.elf_code && elf_maps(&m, e)) || tc_emu_trigger_parse(&m.trig, o, e) ||
	    tc_emu_trigger_resolve(&m.trig, &m.maps, e) || tc_emu_trigger_check(&m.trig, e) ||
	    (o->filter ? tc_addr_filter_resolve(o->filter, &m.maps, &m.f, e) :
	     !(m.f.v = calloc(1, sizeof(*m.f.v))) ? tc_err_set(e, ENOMEM, "out of memory") :
	     (m.f.v[0] = (struct tc_addr_range){ 0, UINT64_MAX }, m.f.n = 1, 0)) ||
	    !(m.fmt = tc_cs_formatter_new(e)))
		goto out;
	tc_cs_formatter_every_frame_id(m.fmt, m.ring != 0);
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
	for (size_t i = 0; i < m.nv; i++) {
		tc_qemu_exec_free(m.v[i]->q);
		tc_etm4_enc_free(m.v[i]->enc);
		free(m.v[i]);
	}
	free(m.v);
	tc_cs_formatter_free(m.fmt);
	for (size_t i = 0; i < m.nsnaps; i++)
		free(m.snaps[i].data);
	free(m.snaps);
	tc_emu_trigger_free(&m.trig);
	tc_addr_filter_free(&m.f);
	tc_addr_filter_maps_free(&m.maps);
	if (m.elf)
		tc_elf_close(m.elf);
	return rc;
}
