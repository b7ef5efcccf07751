#include "lib/record/record_loop.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <linux/perf_event.h>

#include <perf/evsel.h>

#include "lib/perfdata/perf_data.h"
#include "lib/perfdata/perf_write.h"
#include "lib/perfdata/tracing_data_write.h"
#include "lib/record/record_open.h"
#include "lib/record/record_ops.h"
#include "lib/record/record_snapshot.h"
#include "lib/record/record_uprobe.h"

/* One opened event; AUX events own the rings the others on their CPU write into. */
struct ev {
	const struct tc_record_event *pe;
	struct perf_evsel *evsel;
	int fd;
	uint64_t id;
	pid_t pid, tid;			/* the task it follows, -1 for a CPU's */
	int ring;			/* index into rings, -1 none */
};

struct ring {
	int cpu;
	int fd;				/* the AUX event's */
	struct tc_record_rings m;
	uint64_t aux_done;		/* AUX stream position copied so far */
	struct tc_record_snapshot snap;	/* -S: what the last snapshot took */
	bool busy;			/* zero-size TRUNCATED AUX seen */
	bool stopped_busy;		/* the sink refused: no trace from here */
};

struct loop {
	const struct tc_record_run *r;
	struct tc_record_stats *st;
	struct tc_record_event *pev;	/* the plan's events as opened (uprobes may change) */
	char (*tp)[128];		/* per plan event: its tracepoint group:name, or "" */
	char (*probe)[64];		/* per plan event: the tracefs uprobe we defined, or "" */
	char probe_group[32];
	struct ev *ev;
	size_t nev;
	struct ring *rings;
	size_t nrings;
	struct tc_perf_write *w;
	uint8_t rec[65536];
	bool snap_due;			/* a --snapshot-on trigger's sample was read */
	uint8_t *auxbuf;
	pid_t child;
	int go_fd;			/* write end: releases the workload's exec */
	int err_fd;			/* read end: exec's errno, EOF when exec worked */
	int lost_fmt;			/* PERF_FORMAT_LOST: 0 not tried yet, 1 taken, -1 not */
	size_t busy_told;		/* CPUs named in the last busy-sink message */
	size_t nbusy;
};

void tc_record_loop_busy_msg(char *buf, size_t len, const char *sink, const int *cpus, size_t ncpus,
		     const char *free_sinks)
{
	int l = snprintf(buf, len, "sink %s refused the trace of cpu%s ", sink ? sink : "(default)",
			 ncpus > 1 ? "s" : "");

	for (size_t i = 0; i < ncpus && l >= 0 && (size_t)l < len; i++)
		l += snprintf(buf + l, len - (size_t)l, "%s%d", i ? "," : "", cpus[i]);
	if (l < 0 || (size_t)l >= len)
		return;
	snprintf(buf + l, len - (size_t)l, ": no trace is collected there, because another "
		 "session (another perf/tracectl, or sysfs enable_sink) holds that sink; %s",
		 free_sinks && *free_sinks ? free_sinks : "no other reachable sink is free, wait "
		 "for that session to end");
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* --- opening ----------------------------------------------------------------------- */

/* The threads of a process (/proc/PID/task), at most max; 0 if it cannot be read. */
static size_t task_tids(pid_t pid, pid_t *tids, size_t max)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return 0;
	while (n < max && (de = readdir(d)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			tids[n++] = (pid_t)atoi(de->d_name);
	closedir(d);
	return n;
}

/* Does plan event i join another's group (rather than lead one or stand alone)? */
static bool is_member(const struct tc_record_plan *pl, size_t i)
{
	return pl->ev[i].group_leader >= 0 && (size_t)pl->ev[i].group_leader != i;
}

/* Does this event own its CPU's ring: the AUX event, or without a trace PMU (tests of the
 * loop on a machine that has none) the side-band one? */
static bool owns_ring(const struct tc_record_plan *pl, const struct tc_record_event *pe)
{
	return pe->role == TC_ROLE_AUX || (!pl->pmu && pe->role == TC_ROLE_SIDEBAND);
}

/* The tracefs event name for a uprobe EVENT: its symbol (or offset) in the characters
 * tracefs takes, and the plan index to keep it unique ("spin_3", "p_0x1136_4"). */
static void probe_name(const char *spec, size_t i, char *buf, size_t len)
{
	const char *sym = strrchr(spec, ':');
	size_t n = 0;

	sym = sym ? sym + 1 : spec;
	if (!((*sym >= 'a' && *sym <= 'z') || (*sym >= 'A' && *sym <= 'Z') || *sym == '_'))
		n = (size_t)snprintf(buf, len, "p_");
	for (; *sym && n + 24 < len; sym++)
		buf[n++] = (char)((*sym >= 'a' && *sym <= 'z') || (*sym >= 'A' && *sym <= 'Z') ||
				  (*sym >= '0' && *sym <= '9') ? *sym : '_');
	snprintf(buf + n, len - n, "_%zu", i);
}

/* Probes a killed record left behind would stay for good: say so and remove them. */
static void reap_probes(struct loop *L, const char *tracefs)
{
	char msg[PATH_MAX + 192];
	unsigned n = 0;
	int pid = 0;

	if (!tracefs || !*tracefs || tc_record_uprobe_reap(tracefs, &n, &pid, NULL) || !n)
		return;
	snprintf(msg, sizeof(msg), "removed %u uprobe%s that tracectl record %d (gone without "
		 "cleaning up, e.g. killed) left in %s/uprobe_events", n, n == 1 ? "" : "s", pid,
		 tracefs);
	if (L->r->notify)
		L->r->notify(L->r->ctx, msg);
}

/* The plan's events as they will be opened: a uprobe that a task's new threads inherit
 * becomes a tracefs uprobe opened as a tracepoint (rec_uprobe.h says why), one per EVENT
 * for all CPUs. So does a uprobe opened on several CPUs (-a, -C) while tracefs is there:
 * each uprobe PMU event is a probe of its own, whose handler samples only if the thread
 * is on that event's CPU when it runs; the kernel runs a hit's handlers one after the
 * other and may move the thread between them (each takes a per-CPU buffer's mutex), so a
 * hit gave two samples or none (3 --snapshot-on hits for 2 in make test-vm). One tracefs
 * probe runs one handler per hit: one sample, on the CPU the thread is on.
 * Notes each tracepoint's group:name for the tracing data. */
static int prepare_events(struct loop *L, struct tc_err *e)
{
	const struct tc_record_plan *pl = L->r->plan;
	bool inherited = L->r->inherit && !L->r->cpu_wide;
	bool shared = inherited || (pl->ncpus > 1 && *pl->tracefs);
	bool reaped = false, warned = false;

	L->pev = calloc(pl->n ? pl->n : 1, sizeof(*L->pev));
	L->tp = calloc(pl->n ? pl->n : 1, sizeof(*L->tp));
	L->probe = calloc(pl->n ? pl->n : 1, sizeof(*L->probe));
	if (!L->pev || !L->tp || !L->probe)
		return tc_err_set(e, ENOMEM, "out of memory");
	snprintf(L->probe_group, sizeof(L->probe_group), TC_UPROBE_GROUP "%d", (int)getpid());
	for (size_t i = 0; i < pl->n; i++) {
		struct tc_record_event *v = &L->pev[i];
		uint64_t id = 0;
		size_t same = i;

		*v = pl->ev[i];
		if (v->a.attr.type == PERF_TYPE_TRACEPOINT && v->trigger)
			snprintf(L->tp[i], sizeof(L->tp[i]), "%s", v->trigger);
		if (v->uprobe_path && !shared && pl->ncpus > 1 && !warned && L->r->notify) {
			char msg[512];

			snprintf(msg, sizeof(msg), "uprobe %s on %zu CPUs without tracefs: a hit may be "
				 "sampled twice or not at all (mount -t tracefs nodev "
				 "/sys/kernel/tracing: one probe for all CPUs)", v->trigger, pl->ncpus);
			L->r->notify(L->r->ctx, msg);
			warned = true;
		}
		if (!v->uprobe_path || !shared)
			continue;
		/* Another CPU's copy of the same EVENT has its probe already. */
		for (size_t k = 0; k < i && same == i; k++)
			if (*L->probe[k] && !strcmp(pl->ev[k].trigger, v->trigger))
				same = k;
		if (same != i) {
			v->a.attr = L->pev[same].a.attr;
			memcpy(L->tp[i], L->tp[same], sizeof(L->tp[i]));
			continue;
		}
		if (!reaped)
			reap_probes(L, pl->tracefs);
		reaped = true;
		probe_name(v->trigger, i, L->probe[i], sizeof(L->probe[i]));
		if (tc_record_uprobe_tp_add(pl->tracefs, L->probe_group, L->probe[i],
					    v->uprobe_path, v->a.attr.config2, &id, e)) {
			*L->probe[i] = '\0';
			return -1;
		}
		snprintf(L->tp[i], sizeof(L->tp[i]), "%s:%s", L->probe_group, L->probe[i]);
		v->a.attr.type = PERF_TYPE_TRACEPOINT;
		v->a.attr.config = id;
		v->a.attr.config1 = 0;
		v->a.attr.config2 = 0;
		v->a.attr.sample_type |= PERF_SAMPLE_RAW;
	}
	return 0;
}

/* Remove the tracefs uprobes (their events are closed by now). */
static void drop_probes(struct loop *L)
{
	const struct tc_record_plan *pl = L->r->plan;

	for (size_t i = 0; L->probe && i < pl->n; i++)
		if (*L->probe[i])
			tc_record_uprobe_tp_del(pl->tracefs, L->probe_group, L->probe[i], NULL);
	free(L->pev);
	free(L->tp);
	free(L->probe);
}

static int open_one(struct loop *L, size_t i, pid_t pid, const pid_t *tids, struct tc_err *e)
{
	const struct tc_record_plan *pl = L->r->plan;
	const struct tc_record_event *pe = &L->pev[i % pl->n];
	struct tc_record_event copy = *pe;
	struct ev *v = &L->ev[i];
	bool member = is_member(pl, i % pl->n);

	/* A CPU-wide event is enabled by us once the workload is ready; a task's events come
	 * on at its exec, like perf's. Group members follow their leader (perf's way too). */
	copy.a.attr.enable_on_exec = !member && !L->r->cpu_wide && L->r->argv;
	copy.a.attr.disabled = !member;
	copy.a.attr.inherit = L->r->inherit;
	v->pe = pe;
	/* The kernel's lost count for this event (read at the end): Linux 6.0+; an older one
	 * refuses the read_format bit with EINVAL on the first open, and is asked no more. */
	if (L->lost_fmt >= 0)
		copy.a.attr.read_format |= PERF_FORMAT_LOST;
	if (!(v->evsel = tc_record_open_evsel_new(&copy, e)))
		return -1;
	if (!L->lost_fmt && !member) {
		int rc = tc_record_open_evsel_open_fd(v->evsel, &copy, tids[i / pl->n],
						      owns_ring(pl, pe) ? pl->terms : NULL, &v->fd,
						      e);

		if (!rc) {
			L->lost_fmt = 1;
			goto opened;
		}
		if (e->errnum != EINVAL)
			return -1;
		perf_evsel__delete(v->evsel);
		L->lost_fmt = -1;
		copy.a.attr.read_format &= ~(uint64_t)PERF_FORMAT_LOST;
		if (!(v->evsel = tc_record_open_evsel_new(&copy, e)))
			return -1;
	}
	if (member) {
		/* The leader of the same task's copy of the group. */
		size_t li = i - i % pl->n + (size_t)pe->group_leader;

		if (!L->ev[li].evsel || L->ev[li].fd < 0)
			return tc_err_set(e, EINVAL, "event %zu: its group leader %d is not open",
					  i, pe->group_leader);
		if (tc_record_open_evsel_set_leader(L->ev[li].evsel, v->evsel, e))
			return -1;
	}
	if (tc_record_open_evsel_open_fd(v->evsel, &copy, tids[i / pl->n], owns_ring(pl, pe) ?
				 pl->terms : NULL, &v->fd, e))
		return -1;
opened:
	v->tid = tids[i / pl->n];
	v->pid = v->tid < 0 ? -1 : pid;
	if (ioctl(v->fd, PERF_EVENT_IOC_ID, &v->id) < 0)
		return tc_err_sys(e, errno, "PERF_EVENT_IOC_ID");
	if (owns_ring(pl, pe) && i < pl->n) {
		struct ring *g = &L->rings[L->nrings];

		g->cpu = pe->cpu;
		g->fd = v->fd;
		if (tc_record_open_map(v->fd, L->r->data_pages, pe->role == TC_ROLE_AUX ?
			       L->r->aux_pages : 0, L->r->snapshot, &g->m, e))
			return -1;
		v->ring = (int)L->nrings++;
	}
	return 0;
}

static int open_events(struct loop *L, pid_t pid, struct tc_err *e)
{
	const struct tc_record_plan *pl = L->r->plan;
	pid_t tids[256] = { pid };
	size_t ntids = 1;

	/* -p: every thread the process has now (later ones are inherited); per CPU only, as
	 * a per-thread event cannot share another task's ring. */
	if (L->r->all_threads && pid > 0 && pl->ncpus &&
	    !(ntids = task_tids(pid, tids, sizeof(tids) / sizeof(tids[0])))) {
		tids[0] = pid;
		ntids = 1;
	}
	L->ev = calloc(pl->n * ntids, sizeof(*L->ev));
	L->rings = calloc(pl->n, sizeof(*L->rings));
	if (!L->ev || !L->rings)
		return tc_err_set(e, ENOMEM, "out of memory");
	L->nev = pl->n * ntids;
	for (size_t i = 0; i < L->nev; i++) {
		L->ev[i].fd = -1;
		L->ev[i].ring = -1;
	}
	/* Leaders (and events in no group) first: a member is opened with its leader's fd. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < L->nev; i++)
			if (is_member(pl, i % pl->n) == (pass == 1) &&
			    open_one(L, i, pid, tids, e))
				return -1;
	/* Everything else goes into the ring of the AUX event on the same CPU (the decoder
	 * wants one stream per CPU, and the kernel's rings are per CPU anyway): side-band,
	 * other threads' AUX events, triggers and sampled events. */
	for (size_t i = 0; i < L->nev; i++) {
		struct ev *v = &L->ev[i];

		if (v->ring >= 0)
			continue;
		for (size_t k = 0; k < L->nrings; k++) {
			if (L->rings[k].cpu != v->pe->cpu)
				continue;
			if (ioctl(v->fd, PERF_EVENT_IOC_SET_OUTPUT, L->rings[k].fd) < 0)
				return tc_err_sys(e, errno,
						  "redirecting the %s event of cpu %d into "
						  "its AUX event's ring",
						  tc_record_plan_role_name(v->pe->role),
						  v->pe->cpu);
			v->ring = (int)k;
			break;
		}
		if (v->ring < 0)
			return tc_err_set(e, EINVAL, "no AUX event on cpu %d for its %s event",
					  v->pe->cpu, tc_record_plan_role_name(v->pe->role));
	}
	return 0;
}

static void close_events(struct loop *L)
{
	for (size_t k = 0; k < L->nrings; k++)
		tc_record_open_unmap(&L->rings[k].m);
	/* Members before their leaders. */
	for (size_t i = L->nev; i-- > 0;) {
		if (!L->ev[i].evsel)
			continue;
		perf_evsel__close(L->ev[i].evsel);
		perf_evsel__delete(L->ev[i].evsel);
	}
	free(L->ev);
	free(L->rings);
	L->ev = NULL;
	L->rings = NULL;
}

static void enable_all(struct loop *L, unsigned long req)
{
	for (size_t i = 0; i < L->nev; i++)
		if (L->ev[i].fd >= 0)
			ioctl(L->ev[i].fd, req, 0);
}

/* --- the file's head: attrs, AUXTRACE_INFO ----------------------------------------- */

/* Events of one attr in the file: the same role and EVENT (all CPUs and threads). */
static bool same_attr(const struct tc_record_event *a, const struct tc_record_event *b)
{
	return a->role == b->role && (a->trigger && b->trigger ? !strcmp(a->trigger, b->trigger) :
				      a->trigger == b->trigger);
}

/* The name perf script shows for an attr (HEADER_EVENT_DESC): the EVENT as given. */
static void attr_name(const struct tc_record_event *pe, char *buf, size_t len)
{
	if (pe->trigger)
		snprintf(buf, len, "%s", pe->trigger);
	else if (pe->role == TC_ROLE_SIDEBAND)
		snprintf(buf, len, "dummy:u");
	else
		snprintf(buf, len, "%s//", pe->pmu);
}

/* One attr per distinct event, AUX first (its sample_id layout is the file's), with the ids
 * of every copy opened. */
static int add_attrs(struct loop *L, struct tc_err *e)
{
	uint64_t *ids = calloc(L->nev ? L->nev : 1, sizeof(*ids));
	bool *done = calloc(L->nev ? L->nev : 1, sizeof(*done));
	size_t nattr = 0;
	int rc = 0;

	if (!ids || !done) {
		free(ids);
		free(done);
		return tc_err_set(e, ENOMEM, "out of memory");
	}
	for (int aux_pass = 1; aux_pass >= 0 && !rc; aux_pass--)
		for (size_t i = 0; i < L->nev && !rc; i++) {
			const struct tc_record_event *pe = L->ev[i].pe;
			struct perf_event_attr a;
			char name[300];
			size_t n = 0;

			if (done[i] || (pe->role == TC_ROLE_AUX) != aux_pass)
				continue;
			for (size_t k = i; k < L->nev; k++)
				if (!done[k] && same_attr(pe, L->ev[k].pe)) {
					done[k] = true;
					ids[n++] = L->ev[k].id;
				}
			a = pe->a.attr;
			a.inherit = L->r->inherit;
			if (L->lost_fmt > 0)
				a.read_format |= PERF_FORMAT_LOST;	/* as opened */
			attr_name(pe, name, sizeof(name));
			rc = tc_perf_write_add_attr(L->w, &a, ids, n, e) ||
			     tc_perf_write_attr_name(L->w, nattr++, name, e) ? -1 : 0;
		}
	free(ids);
	free(done);
	return rc;
}

/* perf's tracing data (HEADER_TRACING_DATA) with the format of every tracepoint recorded,
 * so that readers can decode their raw samples. */
static int tracing_data(struct loop *L, struct tc_err *e)
{
	const struct tc_record_plan *pl = L->r->plan;
	const char **names = calloc(pl->n ? pl->n : 1, sizeof(*names));
	uint8_t *buf = NULL;
	size_t n = 0, len = 0;
	int rc = 0;

	if (!names)
		return tc_err_set(e, ENOMEM, "out of memory");
	for (size_t i = 0; i < pl->n; i++)
		if (*L->tp[i])
			names[n++] = L->tp[i];
	if (n)
		rc = tc_tracing_data_write(pl->tracefs, names, n, &buf, &len, e) ||
				     tc_perf_write_feat_raw(L->w, TC_PERF_DATA_FEAT_TRACING_DATA,
							    buf, len, e)
			     ? -1
			     : 0;
	free(buf);
	free(names);
	return rc;
}

/* The trace PMU's AUXTRACE_INFO (record_ops.h says what goes in), for the AUX event. */
static int auxtrace_info(struct loop *L, struct tc_err *e)
{
	const struct tc_record_plan *pl = L->r->plan;
	const struct tc_record_ops *ops = tc_record_ops_find(pl->pmu);
	struct tc_record_ops_info in = {
		.pmu = pl->pmu, .sysfs_root = L->r->sysfs_root, .cpus = pl->cpus,
		.ncpus = pl->ncpus, .snapshot = L->r->snapshot,
		.up = L->nrings ? L->rings[0].m.base : NULL,
	};
	uint64_t *w;
	size_t n;
	int rc;

	for (size_t i = 0; i < L->nev && !in.aux; i++)
		if (L->ev[i].pe->role == TC_ROLE_AUX)
			in.aux = &L->ev[i].pe->a.attr;
	if (!in.aux || !ops)
		return 0;
	n = ops->info_words(&in);
	if (!(w = calloc(n ? n : 1, sizeof(*w))))
		return tc_err_set(e, ENOMEM, "out of memory");
	rc = ops->info_fill(&in, w, e) ||
	     tc_perf_write_auxtrace_info(L->w, ops->info_type, w, n, e) ? -1 : 0;
	free(w);
	return rc;
}

/* --- draining ---------------------------------------------------------------------- */

static void tell_busy(struct loop *L)
{
	const struct tc_record_plan *pl = L->r->plan;
	const struct tc_record_ops *ops = tc_record_ops_find(pl->pmu);
	int cpus[1024];
	size_t n = 0;
	char free_sinks[512] = "", msg[1024];
	const char *sink = NULL;

	/* Said after a pass over every ring (the refusals come together when the events
	 * start), again only if more CPUs were refused later. */
	if (L->nbusy == L->busy_told)
		return;
	L->busy_told = L->nbusy;
	for (size_t k = 0; k < L->nrings; k++)
		if (L->rings[k].busy)
			cpus[n++] = L->rings[k].cpu;
	/* The PMU names the sink and the ones that would do instead, if it has sinks. */
	if (ops && ops->busy_sinks)
		ops->busy_sinks(L->r->sysfs_root, pl->pmu, pl->sink_hash, &sink, free_sinks,
				sizeof(free_sinks));
	tc_record_loop_busy_msg(msg, sizeof(msg), sink, cpus, n, free_sinks);
	if (L->r->notify)
		L->r->notify(L->r->ctx, msg);
}

static void account(struct loop *L, struct ring *g, const struct perf_event_header *h)
{
	const uint64_t *u = (const uint64_t *)(h + 1);

	switch (h->type) {
	case PERF_RECORD_AUX:
		L->st->aux_records++;
		if (u[2] & PERF_AUX_FLAG_TRUNCATED)
			L->st->truncated++;
		if (u[2] & PERF_AUX_FLAG_COLLISION)
			L->st->collision++;
		if (u[2] & PERF_AUX_FLAG_PARTIAL)
			L->st->partial++;
		/* The sink's enable failed: the handle ended empty and truncated, the event
		 * stays stopped. */
		if ((u[2] & PERF_AUX_FLAG_TRUNCATED) && !u[1] && !g->busy) {
			g->busy = true;
			L->st->busy_cpus++;
			L->nbusy++;
		}
		break;
	case PERF_RECORD_LOST:
		L->st->lost_records++;
		L->st->lost_events += u[1];
		break;
	case PERF_RECORD_LOST_SAMPLES:
		L->st->lost_samples += u[0];
		break;
	case PERF_RECORD_SAMPLE:	/* PERF_SAMPLE_IDENTIFIER first */
		/* hits read in one drain make one snapshot */
		for (size_t i = 0; i < L->nev; i++)
			if (L->ev[i].id == u[0] && L->ev[i].pe->role == TC_ROLE_SNAPSHOT) {
				L->snap_due = true;
				L->st->snapshot_hits++;
				break;
			}
		break;
	}
}

static int drain_data(struct loop *L, struct ring *g, struct tc_err *e)
{
	struct perf_event_mmap_page *up = g->m.base;
	const uint8_t *data = (const uint8_t *)g->m.base + (g->m.base_len - g->m.data_size);
	uint64_t head = __atomic_load_n(&up->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = up->data_tail;
	size_t size = g->m.data_size;

	while (tail < head) {
		struct perf_event_header h;
		size_t off = tail % size, first;

		for (size_t i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = data[(off + i) % size];
		if (h.size < sizeof(h) || h.size > head - tail)
			return tc_err_set(e, EIO, "cpu %d: bad record in the data ring (size %u)",
					  g->cpu, h.size);
		first = size - off < h.size ? size - off : h.size;
		memcpy(L->rec, data + off, first);
		memcpy(L->rec + first, data, h.size - first);
		account(L, g, (const struct perf_event_header *)L->rec);
		if (tc_perf_write_record(L->w, L->rec, h.size, e))
			return -1;
		L->st->data_bytes += h.size;
		tail += h.size;
	}
	__atomic_store_n(&up->data_tail, tail, __ATOMIC_RELEASE);
	return 0;
}

/* Copy AUX stream bytes [from, to) (to - from <= aux_size) as one AUXTRACE record. */
static int aux_copy(struct loop *L, struct ring *g, uint64_t from, uint64_t to, struct tc_err *e)
{
	size_t size = g->m.aux_size, len = (size_t)(to - from), off = from % size;
	size_t first = size - off < len ? size - off : len;

	if (!len)
		return 0;
	memcpy(L->auxbuf, (uint8_t *)g->m.aux + off, first);
	memcpy(L->auxbuf + first, g->m.aux, len - first);
	L->st->aux_bytes += len;
	L->st->auxtrace_records++;
	return tc_perf_write_auxtrace(
		L->w, L->auxbuf, len, from, now_ns(), (uint32_t)(g - L->rings),
		g->cpu < 0 ? (uint32_t)L->child : (uint32_t)-1, (uint32_t)g->cpu, e);
}

static int drain_aux(struct loop *L, struct ring *g, struct tc_err *e)
{
	struct perf_event_mmap_page *up = g->m.base;
	uint64_t head;

	if (!g->m.aux || L->r->snapshot)
		return 0;
	head = __atomic_load_n(&up->aux_head, __ATOMIC_ACQUIRE);
	if (head <= g->aux_done)
		return 0;
	if (aux_copy(L, g, g->aux_done, head, e))
		return -1;
	g->aux_done = head;
	__atomic_store_n(&up->aux_tail, head, __ATOMIC_RELEASE);
	return 0;
}

/* Snapshot mode: stop the AUX event so the buffer holds still, copy the latest trace
 * (record_snapshot.h: monotonic or wrapping head), start it again. */
static int snapshot(struct loop *L, struct tc_err *e)
{
	const struct tc_record_ops *ops = tc_record_ops_find(L->r->plan->pmu);
	bool wraps = ops && ops->snapshot_head_wraps;

	for (size_t k = 0; k < L->nrings; k++) {
		struct ring *g = &L->rings[k];
		struct perf_event_mmap_page *up = g->m.base;
		uint64_t head, from, to;
		int rc;

		if (!g->m.aux)
			continue;
		ioctl(g->fd, PERF_EVENT_IOC_DISABLE, 0);
		head = __atomic_load_n(&up->aux_head, __ATOMIC_ACQUIRE);
		tc_record_snapshot_range(&g->snap, wraps, head, (const uint8_t *)g->m.aux,
					 g->m.aux_size, &from, &to);
		if (L->r->snapshot_size && to - from > L->r->snapshot_size)
			from = to - L->r->snapshot_size;
		rc = aux_copy(L, g, from, to, e);
		g->aux_done = to;
		ioctl(g->fd, PERF_EVENT_IOC_ENABLE, 0);
		if (rc)
			return -1;
	}
	L->st->snapshots++;
	return 0;
}

static int drain_all(struct loop *L, struct tc_err *e)
{
	for (size_t k = 0; k < L->nrings; k++)
		if (drain_data(L, &L->rings[k], e) || drain_aux(L, &L->rings[k], e))
			return -1;
	tell_busy(L);
	return 0;
}

/* After the last drain: the kernel's count of the records it could not write, summed over
 * every event (each failed record counts once, on the event that tried to write it), and
 * written into the file as one LOST_SAMPLES record per event that lost any, as perf record
 * does: a ring's LOST record only comes with its next record, so without these a stranded
 * ring's losses would be in no file. */
static int read_lost(struct loop *L, struct tc_err *e)
{
	uint64_t sum = 0;

	if (L->lost_fmt <= 0)
		return 0;
	for (size_t i = 0; i < L->nev; i++) {
		uint64_t n;

		if (!L->ev[i].evsel || L->ev[i].fd < 0)
			continue;
		struct ev *v = &L->ev[i];
		struct tc_perf_write_sid sid = { .pid = (uint32_t)v->pid, .tid = (uint32_t)v->tid,
					 .id = v->id, .cpu = (uint32_t)v->pe->cpu };

		if (tc_record_open_evsel_lost(v->evsel, &n, e) ||
		    (n && tc_perf_write_lost_samples(L->w, n, &sid, e)))
			return -1;
		sum += n;
	}
	L->st->kernel_lost = sum;
	L->st->kernel_lost_known = true;
	return 0;
}

/* --- the workload ------------------------------------------------------------------ */

/* Fork the command, held before exec until the events are open on it. */
static int start_child(struct loop *L, struct tc_err *e)
{
	int go[2], err[2];
	char c;

	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		return tc_err_sys(e, errno, "pipe");
	L->child = fork();
	if (L->child < 0)
		return tc_err_sys(e, errno, "fork");
	if (!L->child) {
		int x;

		close(go[1]);
		close(err[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(L->r->argv[0], L->r->argv);
		x = errno;
		if (write(err[1], &x, sizeof(x)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	L->go_fd = go[1];
	L->err_fd = err[0];
	return 0;
}

static int release_child(struct loop *L, struct tc_err *e)
{
	int errfd = L->err_fd, x = 0;
	ssize_t n;

	L->err_fd = -1;
	if (write(L->go_fd, "g", 1) != 1)
		return tc_err_sys(e, errno, "starting the workload");
	close(L->go_fd);
	L->go_fd = -1;
	n = read(errfd, &x, sizeof(x));
	close(errfd);
	if (n == (ssize_t)sizeof(x))
		return tc_err_sys(e, x, "cannot run '%s'", L->r->argv[0]);
	L->st->workload_started = true;
	return 0;
}

/* --- the whole run ----------------------------------------------------------------- */

/* perf_write puts the file in place at close, an existing one moved to .old only then
 * (a failed or interrupted run leaves it alone). */
static int check_output(const char *path, bool *exists, struct tc_err *e)
{
	struct stat sb;

	*exists = !lstat(path, &sb);
	/* Someone else's link (dangling or not): neither renamed nor written through. */
	if (*exists && S_ISLNK(sb.st_mode))
		return tc_err_set(e, 0, "%s is a symbolic link: not writing through it or renaming "
				  "it (remove it or give another -o)", path);
	return 0;
}

static int features(struct loop *L, struct tc_err *e)
{
	struct utsname u;
	long n = sysconf(_SC_NPROCESSORS_CONF), on = sysconf(_SC_NPROCESSORS_ONLN);

	if (!uname(&u) &&
	    (tc_perf_write_feat_string(L->w, TC_PERF_DATA_FEAT_HOSTNAME, u.nodename, e) ||
	     tc_perf_write_feat_string(L->w, TC_PERF_DATA_FEAT_OSRELEASE, u.release, e) ||
	     tc_perf_write_feat_string(L->w, TC_PERF_DATA_FEAT_ARCH, u.machine, e)))
		return -1;
	if (tc_perf_write_feat_string(L->w, TC_PERF_DATA_FEAT_VERSION, "tracectl " TRACECTL_VERSION,
				      e) ||
	    tc_perf_write_feat_nrcpus(L->w, (uint32_t)n, (uint32_t)on, e))
		return -1;
	if (L->r->cmdline && tc_perf_write_feat_cmdline(L->w, L->r->cmdline_argc, L->r->cmdline, e))
		return -1;
	return tracing_data(L, e);
}

static int loop_body(struct loop *L, struct tc_err *e)
{
	const struct tc_record_run *r = L->r;
	struct pollfd *pfd = calloc(L->nrings ? L->nrings : 1, sizeof(*pfd));
	bool done = false;
	int rc = 0;

	if (!pfd)
		return tc_err_set(e, ENOMEM, "out of memory");
	for (size_t k = 0; k < L->nrings; k++) {
		pfd[k].fd = L->rings[k].fd;
		pfd[k].events = POLLIN;
	}
	while (!done && !rc) {
		int status;

		size_t hup = 0;

		poll(pfd, L->nrings, 50);
		for (size_t k = 0; k < L->nrings; k++)
			hup += !!(pfd[k].revents & POLLHUP);
		/* -p/-t: the task's events hang up when it exits; that ends the recording. */
		if (r->pid && !r->cpu_wide && L->nrings && hup == L->nrings)
			done = true;
		if (drain_all(L, e)) {
			rc = -1;
			break;
		}
		if ((r->snap_req && *r->snap_req) || L->snap_due) {
			if (r->snap_req)
				*r->snap_req = 0;
			L->snap_due = false;
			if (snapshot(L, e))
				rc = -1;
		}
		/* a full disk: what the workload does from here would be dropped */
		if ((r->stop_req && *r->stop_req) || tc_perf_write_failed(L->w))
			done = true;
		if (L->child > 0 && waitpid(L->child, &status, WNOHANG) == L->child) {
			L->st->exit_status = status;
			L->child = -L->child;	/* reaped; keep the pid for AUXTRACE tids */
			done = true;
		}
	}
	free(pfd);
	return rc;
}

int tc_record_loop_run(const struct tc_record_run *r, struct tc_record_stats *st, struct tc_err *e)
{
	struct loop *L = calloc(1, sizeof(*L));
	pid_t pid;
	bool old_exists = false;
	int rc = -1;

	memset(st, 0, sizeof(*st));
	if (!L)
		return tc_err_set(e, ENOMEM, "out of memory");
	L->r = r;
	L->st = st;
	L->go_fd = -1;
	L->err_fd = -1;
	if (!(L->auxbuf = malloc((size_t)r->aux_pages * (size_t)sysconf(_SC_PAGESIZE) + 1)))
		goto out;
	if (r->argv && start_child(L, e))
		goto out;
	pid = r->cpu_wide ? -1 : r->pid ? r->pid : L->child > 0 ? L->child : -1;
	if (prepare_events(L, e) || open_events(L, pid, e))
		goto out;
	if (check_output(r->output, &old_exists, e) || tc_perf_write_open(&L->w, r->output, e))
		goto out;
	st->file_opened = true;
	if (add_attrs(L, e) || features(L, e) || auxtrace_info(L, e))
		goto out;
	if (r->cpu_wide || !r->argv)
		enable_all(L, PERF_EVENT_IOC_ENABLE);
	if (r->argv && release_child(L, e))
		goto out;
	if (loop_body(L, e))
		goto out;
	enable_all(L, PERF_EVENT_IOC_DISABLE);
	/* What the kernel wrote up to the disable (the last AUX record comes with it). */
	if ((r->snapshot && snapshot(L, e)) || drain_all(L, e) || read_lost(L, e))
		goto out;
	rc = 0;
out:
	if (L->child > 0) {
		int status;

		if (L->go_fd >= 0) {
			close(L->go_fd);	/* the child reads EOF and exits 127 */
			L->go_fd = -1;
		}
		if (st->workload_started)
			kill(L->child, SIGTERM);
		if (waitpid(L->child, &status, 0) == L->child && st->workload_started)
			st->exit_status = status;
	}
	if (L->w) {
		struct tc_err e2 = { 0 };

		/* Closing writes the header and features: the file is valid whatever broke. */
		struct tc_err *ce = rc ? &e2 : e;
		int cr = tc_perf_write_close(L->w, ce);

		/* a full disk still puts the file in place, with an error saying how much */
		if (cr)
			rc = -1;
		st->renamed = old_exists && (!cr || ce->errnum == ENOSPC || ce->errnum == EFBIG ||
					     ce->errnum == EIO || ce->errnum == EDQUOT);
	}
	if (L->err_fd >= 0)
		close(L->err_fd);
	close_events(L);
	drop_probes(L);
	free(L->auxbuf);
	free(L);
	return rc;
}
