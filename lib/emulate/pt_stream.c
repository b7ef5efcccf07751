#include "lib/emulate/pt_stream.h"

#include <errno.h>
#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/emulate/emu_file.h"
#include "lib/images/elf.h"
#include "lib/perfdata/perf_data.h"
#include "lib/perfdata/perf_write.h"
#include "lib/util/grow.h"

#define PT_PMU_TYPE 8
#define PT_CFG_TSC (1ULL << 10)
#define PT_CFG_NORETCOMP (1ULL << 11)
#define AUX_OVERWRITE 0x02	/* PERF_AUX_FLAG_OVERWRITE: the buffer is in snapshot mode */

int tc_pt_stream_init(struct tc_pt_stream *s, const struct tc_emu_opts *o,
		      struct tc_emu_stats *st, struct tc_err *e)
{
	memset(s, 0, sizeof(*s));
	s->o = o;
	s->st = st;
	if (tc_emu_trigger_parse(&s->trig, o, e)) {
		tc_emu_trigger_free(&s->trig);
		return -1;
	}
	return 0;
}

void tc_pt_stream_fini(struct tc_pt_stream *s)
{
	if (s->truth)
		fclose(s->truth);
	for (size_t i = 0; i < s->n; i++) {
		for (size_t k = 0; k < s->t[i]->nsnaps; k++)
			free(s->t[i]->snaps[k].data);
		free(s->t[i]->snaps);
		tc_pt_enc_fini(&s->t[i]->x);
		free(s->t[i]);
	}
	free(s->t);
	tc_addr_filter_free(&s->f);
	tc_addr_filter_maps_free(&s->maps);
	tc_emu_trigger_free(&s->trig);
	free(s->map_proc);
	free(s->procs);
	memset(s, 0, sizeof(*s));
}

struct tc_pt_stream_thr *tc_pt_stream_find(const struct tc_pt_stream *s, pid_t tid)
{
	for (size_t i = s->n; i-- > 0;)
		if (s->t[i]->tid == tid)
			return s->t[i];
	return NULL;
}

struct tc_pt_stream_thr *tc_pt_stream_add(struct tc_pt_stream *s, pid_t tid, size_t size,
					  struct tc_err *e)
{
	struct tc_pt_stream_thr *t;

	if (tc_grow((void **)&s->t, &s->cap, s->n + 1, sizeof(*s->t)) ||
	    !(t = calloc(1, size))) {
		tc_err_set(e, ENOMEM, "out of memory");
		return NULL;
	}
	t->tid = tid;
	t->ptid = s->pid;
	if (tc_pt_enc_init(&t->x, !s->o->no_retcomp, s->o->sync_period, e)) {
		free(t);
		return NULL;
	}
	tc_pt_enc_ring(&t->x, s->o->snapshot_size);
	s->t[s->n++] = t;
	s->st->threads++;
	return t;
}

static void truth(struct tc_pt_stream *s, const struct tc_pt_stream_thr *t, uint64_t from,
		  uint64_t to)
{
	s->st->branches++;
	if (!s->truth)
		return;
	if (!s->o->truth_no_tid)
		fprintf(s->truth, "%d ", (int)t->tid);
	fprintf(s->truth, "%llx %llx\n", (unsigned long long)from, (unsigned long long)to);
}

int tc_pt_stream_enable(struct tc_pt_stream *s, struct tc_pt_stream_thr *t, uint64_t ip,
			struct tc_err *e)
{
	t->x.depth = 0;
	if (tc_pt_enc_ip(&t->x, ppt_tip_pge, ip, e))
		return -1;
	truth(s, t, 0, ip);
	return 0;
}

int tc_pt_stream_start(struct tc_pt_stream *s, struct tc_pt_stream_thr *t, uint64_t ip,
		       struct tc_err *e)
{
	enum tc_emu_trigger_kind k = tc_emu_trigger_at(&s->trig, ip);

	/* --start-paused: every thread's trace starts paused, as the event it runs on */
	t->paused = s->o->start_paused ? k != TC_EMU_TRIG_RESUME : k == TC_EMU_TRIG_PAUSE;
	t->ip = ip;
	t->in = tc_pt_stream_in(s, ip) && !t->paused;
	if (tc_pt_enc_psb(&t->x, false, 0, e) || (t->in && tc_pt_stream_enable(s, t, ip, e)))
		return -1;
	return 0;
}

/* A system call in traced code: user-only tracing stops at the instruction (TIP.PGD, the
 * kernel's IP suppressed) and starts again where user space resumes (TIP.PGE). */
static int syscall_step(struct tc_pt_stream *s, struct tc_pt_stream_thr *t,
			const struct tc_pt_stream_step *p, struct tc_err *e)
{
	if (tc_pt_enc_pgd_noip(&t->x, e))
		return -1;
	t->x.depth = 0;
	truth(s, t, p->ip, 0);
	if (p->next_in && tc_pt_stream_enable(s, t, p->next, e))
		return -1;
	return 0;
}

/* A pause trigger at t->ip: tracing stops before the instruction there. */
static int pause_at(struct tc_pt_stream *s, struct tc_pt_stream_thr *t, struct tc_err *e)
{
	return tc_pt_stream_stop(s, t, e);
}

int tc_pt_stream_stop(struct tc_pt_stream *s, struct tc_pt_stream_thr *t, struct tc_err *e)
{
	if (tc_pt_enc_ip(&t->x, ppt_fup, t->ip, e) || tc_pt_enc_pgd_noip(&t->x, e))
		return -1;
	truth(s, t, t->ip, 0);
	t->in = false;
	return 0;
}

int tc_pt_stream_encode(struct tc_pt_stream *s, struct tc_pt_stream_thr *t,
			const struct tc_pt_stream_step *p, struct tc_err *e)
{
	struct tc_pt_enc *x = &t->x;
	uint64_t ip = p->ip, next = p->next;
	enum tc_x86_kind k = p->kind;
	struct tc_pt_stream_step q;
	bool pause = false;

	if (s->trig.n) {
		enum tc_emu_trigger_kind tk = tc_emu_trigger_at(&s->trig, next);

		if (t->paused && tk == TC_EMU_TRIG_RESUME) {
			t->paused = false;
		} else if (!t->paused && tk == TC_EMU_TRIG_PAUSE) {
			t->paused = true;
			/* the step that reaches it is traced, unless tracing stops anyway */
			pause = p->in && k != TC_X86_SYSCALL;
		}
		if (t->paused && p->next_in && !pause) {
			q = *p;
			q.next_in = false;
			p = &q;
		}
	}
	s->st->steps++;
	if (!p->in) {
		if (p->next_in && tc_pt_stream_enable(s, t, next, e))
			return -1;
		goto out;
	}
	s->st->insns++;
	if (k == TC_X86_SYSCALL) {
		if (syscall_step(s, t, p, e))
			return -1;
		goto out;
	}
	if (k == TC_X86_OTHER) {
		if (next <= ip || next - ip > 15)
			return tc_err_set(e, EINVAL, "0x%llx -> 0x%llx in thread %d: not a branch "
					  "to the classifier", (unsigned long long)ip,
					  (unsigned long long)next, (int)t->tid);
	} else if (k == TC_X86_JCC && p->next_in) {
		if (tc_pt_enc_tnt_bit(x, next != ip + p->len, e))
			return -1;
	} else if (!p->next_in) {
		/* Out of the filter region: TIP.PGD with the target, the stack forgotten. */
		if (k == TC_X86_JCC)
			return tc_err_set(e, ENOTSUP, "conditional branch out of the filter at "
					  "0x%llx", (unsigned long long)ip);
		if (tc_pt_enc_ip(x, ppt_tip_pgd, next, e))
			return -1;
		x->depth = 0;
	} else if (k == TC_X86_CALL || k == TC_X86_ICALL) {
		tc_pt_enc_push_ret(x, p->ret);
		if (k == TC_X86_ICALL && tc_pt_enc_ip(x, ppt_tip, next, e))
			return -1;
	} else if (k == TC_X86_RET && tc_pt_enc_pop_ret(x, next)) {
		if (tc_pt_enc_tnt_bit(x, true, e))
			return -1;
	} else if ((k == TC_X86_RET || k == TC_X86_IJMP) && tc_pt_enc_ip(x, ppt_tip, next, e)) {
		return -1;
	}
	if (k != TC_X86_OTHER && (k != TC_X86_JCC || next != ip + p->len))
		truth(s, t, ip, next);
out:
	t->ip = next;
	t->in = p->next_in;
	if (pause && t->in && pause_at(s, t, e))
		return -1;
	/* --snapshot-on: the thread reached it; the snapshot has the trace up to there */
	if (tc_emu_trigger_snap_in(&s->trig, next, next))
		return tc_pt_stream_snapshot(s, e);
	return 0;
}

int tc_pt_stream_snapshot(struct tc_pt_stream *s, struct tc_err *e)
{
	for (size_t i = 0; i < s->n; i++) {
		struct tc_pt_stream_thr *t = s->t[i];
		uint64_t off, head, from;
		struct tc_pt_stream_snap *x;

		/* the branches so far are in the snapshot, as a disabled event flushes them */
		if (tc_pt_enc_flush_tnt(&t->x, e))
			return -1;
		off = tc_pt_enc_offset(&t->x);
		head = t->x.base + off;
		from = head - (off < s->o->snapshot_size ? off : s->o->snapshot_size);
		if (from < t->snapped)
			from = t->snapped;
		if (from == head)
			continue;
		if (tc_grow((void **)&t->snaps, &t->capsnaps, t->nsnaps + 1, sizeof(*t->snaps)))
			return tc_err_set(e, ENOMEM, "out of memory");
		x = &t->snaps[t->nsnaps];
		x->pos = from;
		x->len = (size_t)(head - from);
		if (!(x->data = malloc(x->len)))
			return tc_err_set(e, ENOMEM, "out of memory");
		memcpy(x->data, t->x.buf + (from - t->x.base), x->len);
		t->nsnaps++;
		t->snapped = head;
	}
	s->st->snapshots++;
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

static pid_t pid_of(const struct tc_pt_stream *m, const struct tc_pt_stream_thr *t)
{
	return t->pid ? t->pid : m->pid;
}

static const char *comm_of(const struct tc_pt_stream *m, unsigned proc)
{
	return proc ? m->procs[proc - 1].comm : m->comm;
}

/* The index of a thread of program proc (its records' sample id). */
static size_t thread_of(const struct tc_pt_stream *m, unsigned proc)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->t[i]->proc == proc)
			return i;
	return 0;
}

/* MMAP2 records of program proc's executable file mappings. */
static int write_maps(struct tc_pt_stream *m, struct tc_perf_write *w, unsigned proc,
		      struct tc_perf_write_sid *sid, uint64_t *time, struct tc_err *e)
{
	pid_t pid = proc ? m->procs[proc - 1].pid : m->pid;

	for (size_t i = 0; i < m->maps.n; i++) {
		const struct tc_map *x = &m->maps.v[i];
		struct tc_perf_write_mmap2 mm = { .pid = (uint32_t)pid, .tid = (uint32_t)pid,
			.start = x->start, .len = x->end - x->start, .pgoff = x->pgoff,
			.maj = x->maj, .min = x->min, .ino = x->ino, .prot = (uint32_t)x->prot,
			.flags = MAP_PRIVATE, .filename = x->path };

		if ((m->map_proc ? m->map_proc[i] : 0) != proc ||
		    !(x->prot & PROT_EXEC) || x->path[0] != '/')
			continue;
		sid->pid = (uint32_t)pid;
		sid->id = thread_of(m, proc) + 1;
		if (tc_perf_write_mmap2(w, &mm, tc_emu_file_sid(sid, (uint32_t)pid, time), e))
			return -1;
	}
	return 0;
}

/* Thread i's snapshots, one AUXTRACE each at its stream position, and the AUX record an
 * AUX buffer in overwrite mode gives. */
static int snapshots(struct tc_pt_stream *m, struct tc_perf_write *w, size_t i, uint64_t *time,
		     struct tc_err *e)
{
	const struct tc_pt_stream_thr *t = m->t[i];
	struct tc_perf_write_sid sid = { .pid = (uint32_t)pid_of(m, t), .id = i + 1 };

	for (size_t k = 0; k < t->nsnaps; k++) {
		const struct tc_pt_stream_snap *x = &t->snaps[k];

		m->st->bytes += x->len;
		if (tc_perf_write_auxtrace(w, x->data, x->len, x->pos, i, (uint32_t)i,
					   (uint32_t)t->tid, (uint32_t)-1, e) ||
		    tc_perf_write_aux(w, x->pos, x->len, AUX_OVERWRITE,
				      tc_emu_file_sid(&sid, (uint32_t)t->tid, time), e))
			return -1;
	}
	return 0;
}

int tc_pt_stream_write(struct tc_pt_stream *m, struct tc_err *e)
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
	priv[TC_IPT_SNAPSHOT_MODE] = m->o->snapshot_size != 0;
	if (m->o->snapshot_size && tc_pt_stream_snapshot(m, e)) {
		free(ids);
		return -1;
	}
	gethostname(host, sizeof(host) - 1);
	if (uname(&u))
		strcpy(u.release, "6.1.0");
	if (tc_emu_file_open(&w, m->o, PT_PMU_TYPE, m->o->no_retcomp ? PT_CFG_NORETCOMP : 0, ids,
			     m->n, e)) {
		free(ids);
		return -1;
	}
	/* one id per thread: its AUX stream */
#define SID(i) (sid.pid = (uint32_t)pid_of(m, m->t[i]), sid.id = (i) + 1, \
		tc_emu_file_sid(&sid, (uint32_t)m->t[i]->tid, &time))
	if (tc_perf_write_auxtrace_info_intel_pt(w, priv, m->all ? NULL : m->f.perf, e) ||
	    tc_perf_write_comm(w, pid, pid, m->comm, true, SID(0), e) ||
	    write_maps(m, w, 0, &sid, &time, e))
		goto out;
	/* fork children (as perf sees them, a copy of the parent, then their own maps) and
	 * exec'd programs (their maps anew) */
	for (i = 0; i < m->nprocs; i++) {
		const struct tc_pt_stream_proc *p = &m->procs[i];
		size_t k = thread_of(m, (unsigned)i + 1);
		const struct tc_perf_write_sid *fs = SID(k);

		if ((!p->exec &&
		     tc_perf_write_fork(w, false, (uint32_t)p->pid, (uint32_t)p->ppid,
					(uint32_t)p->pid, (uint32_t)p->ptid, fs->time, fs, e)) ||
		    tc_perf_write_comm(w, (uint32_t)p->pid, (uint32_t)p->pid, p->comm, p->exec,
				       SID(k), e) ||
		    write_maps(m, w, (unsigned)i + 1, &sid, &time, e))
			goto out;
	}
	for (i = 1; i < m->n; i++) {
		const struct tc_pt_stream_thr *t = m->t[i];
		uint32_t tp = (uint32_t)pid_of(m, t);
		const struct tc_perf_write_sid *fs;

		if ((pid_t)tp == t->tid || tc_pt_stream_find(m, t->tid) != t)
			continue;	/* a process's first thread; or a thread seen again */
		fs = SID(i);

		/* the fork's time is its sample id's, as perf writes it (computed first: an
		 * argument list does not order SID()'s increment against a read of time) */
		if (tc_perf_write_fork(w, false, tp, tp, (uint32_t)t->tid, (uint32_t)t->ptid,
				       fs->time, fs, e) ||
		    tc_perf_write_comm(w, tp, (uint32_t)t->tid, comm_of(m, t->proc), false,
				       SID(i), e))
			goto out;
	}
	for (i = 0; i < m->n; i++)
		if (tc_perf_write_itrace_start(w, (uint32_t)pid_of(m, m->t[i]),
					       (uint32_t)m->t[i]->tid, SID(i), e))
			goto out;
	for (i = 0; i < m->n; i++) {
		const struct tc_pt_stream_thr *t = m->t[i];
		uint64_t len = tc_pt_enc_offset(&t->x);

		if (m->o->snapshot_size) {
			if (snapshots(m, w, i, &time, e))
				goto out;
			continue;
		}
		m->st->bytes += len;
		if (tc_perf_write_auxtrace(w, t->x.buf, len, 0, i, (uint32_t)i, (uint32_t)t->tid,
				   (uint32_t)-1, e) ||
		    tc_perf_write_aux(w, 0, len, 0, SID(i), e))
			goto out;
	}
	for (i = m->n; i-- > 0;) {
		const struct tc_pt_stream_thr *t = m->t[i];
		uint32_t tp = (uint32_t)pid_of(m, t);
		const struct tc_perf_write_sid *fs;

		if (tc_pt_stream_find(m, t->tid) != t)
			continue;
		fs = SID(i);
		if (tc_perf_write_fork(w, true, tp, tp, (uint32_t)t->tid, (uint32_t)t->ptid,
				       fs->time, fs, e))
			goto out;
	}
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
