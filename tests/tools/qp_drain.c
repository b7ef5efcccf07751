/* qp_drain: a minimal consumer for tracectl's QEMU plugin (lib/emulate/qemu_plugin/), to
 * measure it and to check that it loses nothing. It makes the shared memory, runs qemu with
 * the plugin, drains every thread's ring while the guest runs and counts, per guest thread,
 * the TBs executed and their instructions (from the TB descriptors), then compares them with
 * the plugin's own counts.
 *
 *   qp_drain -p PLUGIN [-o ARGS] [-r ENTRIES] [-n RINGS] [-D DESCS] [-d USEC [-b N]]
 *            [-t FILE] [-k] -- QEMU [QEMU-OPTIONS] PROGRAM [ARGS]
 *
 * -p  the plugin (tracectl-qemu.so); it goes in as -plugin PLUGIN,shm=PATH[,ARGS] right
 *     after QEMU
 * -o  more plugin arguments (e.g. icount=on,stats=on,batch=4096)
 * -r  ring entries per thread (power of two, 256K); -n rings (64); -D descriptors (4M)
 * -d  a slow consumer: sleep USEC after each burst of at most -b entries (4096)
 * -t  write every executed TB as "TID VADDR NINSNS KIND" and every system call as
 *     "TID syscall NUM = RET" to FILE
 * -k  keep the shared memory file (its path is printed)
 *
 * Exit: 0 if every thread's counts equal the plugin's and qemu exited 0; 1 on a mismatch or
 * a plugin failure; 2 on a usage or system error; qemu's status otherwise. Test tool. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/emulate/qemu_plugin/qp_shm.h"

struct thread {
	uint32_t tid, vcpu;
	uint64_t tbs, insns, syscalls, ev_words;
	uint64_t plugin_tbs, plugin_insns, waits;
	bool unfinished;	/* qemu died first: the plugin's counts stop at its last publish */
	uint64_t kinds[TC_QP_NKINDS];
	struct thread *next;
};

struct slot {
	struct thread *t;	/* NULL: no thread on it yet */
	unsigned ev_left;	/* payload words of the event in progress */
	unsigned ev_n;
	bool ev_syscall;
	uint32_t ev[TC_QP_EV_MAX];
};

static struct tc_qp_hdr *hdr;
static struct tc_qp_desc *descs;
static uint64_t n_descs, bad_ids;
static struct thread *threads;
static FILE *trace;

static void die(const char *what)
{
	fprintf(stderr, "qp_drain: %s: %s\n", what, strerror(errno));
	exit(2);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct tc_qp_ring *ring_at(unsigned i)
{
	return (struct tc_qp_ring *)((char *)hdr + hdr->ring_off + i * hdr->ring_stride);
}

static void event_done(struct slot *s, struct tc_qp_ring *r)
{
	uint64_t num = s->ev[0] | (uint64_t)s->ev[1] << 32;
	uint64_t ret = s->ev[2] | (uint64_t)s->ev[3] << 32;

	s->t->syscalls++;
	if (trace)
		fprintf(trace, "%u syscall %" PRId64 " = %" PRId64 "\n",
			__atomic_load_n(&r->tid, __ATOMIC_RELAXED), (int64_t)num, (int64_t)ret);
}

/* Drains up to max entries of ring i; returns how many. */
static uint64_t drain(struct slot *s, struct tc_qp_ring *r, uint64_t max)
{
	uint32_t *ents = (uint32_t *)((char *)r + TC_QP_RING_HDR);
	uint64_t mask = hdr->ring_entries - 1;
	uint64_t tail = r->tail, head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	uint64_t n = 0;

	for (; tail != head && n < max; tail++, n++) {
		uint32_t w = ents[tail & mask];
		const struct tc_qp_desc *d;

		ents[tail & mask] = 0;	/* qp_shm.h: found after a crash */

		if (s->ev_left) {
			s->ev[s->ev_n++] = w;
			s->t->ev_words++;
			if (!--s->ev_left && s->ev_syscall)
				event_done(s, r);
			continue;
		}
		if (w & TC_QP_EV_BIT) {
			s->t->ev_words++;
			s->ev_left = TC_QP_EV_LEN(w);
			s->ev_n = 0;
			s->ev_syscall = TC_QP_EV_TYPE(w) == TC_QP_EV_SYSCALL;
			if ((s->ev_syscall && s->ev_left != TC_QP_EV_SYSCALL_WORDS) ||
			    (!s->ev_syscall && TC_QP_EV_TYPE(w) != TC_QP_EV_MMAP)) {
				fprintf(stderr, "qp_drain: unknown event %#x\n", w);
				exit(1);
			}
			continue;
		}
		if (!w || w >= n_descs) {
			n_descs = __atomic_load_n(&hdr->n_descs, __ATOMIC_ACQUIRE);
			if (!w || w >= n_descs) {
				bad_ids++;
				continue;
			}
		}
		d = &descs[w];
		s->t->tbs++;
		s->t->insns += d->n_insns;
		s->t->kinds[d->kind < TC_QP_NKINDS ? d->kind : TC_QP_UNKNOWN]++;
		if (trace)
			fprintf(trace, "%u %#" PRIx64 " %u %u\n",
				__atomic_load_n(&r->tid, __ATOMIC_RELAXED), d->vaddr,
				d->n_insns, d->kind);
	}
	__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
	return n;
}

/* One pass over the rings; returns the entries drained. */
static uint64_t pass(struct slot *slots, uint64_t burst)
{
	uint64_t total = 0;

	for (unsigned i = 0; i < hdr->max_rings; i++) {
		struct tc_qp_ring *r = ring_at(i);
		struct slot *s = &slots[i];
		uint32_t st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);

		if (st == TC_QP_RING_FREE || st == TC_QP_RING_RECLAIMED)
			continue;
		if (!s->t) {
			s->t = calloc(1, sizeof(*s->t));
			if (!s->t)
				die("out of memory");
			s->t->next = threads;
			threads = s->t;
		}
		total += drain(s, r, burst);
		if (st != TC_QP_RING_EXITED || r->tail != __atomic_load_n(&r->head,
									   __ATOMIC_ACQUIRE))
			continue;
		/* exited and drained: note the plugin's counts, give the slot back */
		s->t->tid = r->tid;
		s->t->vcpu = r->vcpu;
		s->t->plugin_tbs = r->tbs;
		s->t->plugin_insns = r->insns;
		s->t->waits = r->waits;
		s->t = NULL;
		r->head = 0;
		r->tail = 0;
		__atomic_store_n(&r->state, TC_QP_RING_RECLAIMED, __ATOMIC_RELEASE);
	}
	return total;
}

/* qemu died without the plugin's exit callback: take the entries written after the last
 * publication of each live ring (qp_shm.h); returns how many. */
static uint64_t recover(struct slot *slots)
{
	uint64_t total = 0;

	for (unsigned i = 0; i < hdr->max_rings; i++) {
		struct tc_qp_ring *r = ring_at(i);
		uint32_t *ents = (uint32_t *)((char *)r + TC_QP_RING_HDR);
		uint64_t mask = hdr->ring_entries - 1, h = r->head;

		if (r->state != TC_QP_RING_ACTIVE || !slots[i].t || slots[i].ev_left)
			continue;
		while (h - r->tail < hdr->ring_entries && ents[h & mask] &&
		       !(ents[h & mask] & TC_QP_EV_BIT))
			h++;
		total += h - r->head;
		r->head = h;
		drain(&slots[i], r, UINT64_MAX);
		slots[i].t->tid = r->tid;
		slots[i].t->vcpu = r->vcpu;
		slots[i].t->plugin_tbs = r->tbs;
		slots[i].t->plugin_insns = r->insns;
		slots[i].t->waits = r->waits;
		slots[i].t->unfinished = true;
	}
	return total;
}

static void nap(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };

	nanosleep(&ts, NULL);
}

static const char *const kind_names[TC_QP_NKINDS] = {
	"other", "cond", "jump", "call", "ijump", "icall", "ret", "syscall", "unknown",
};

int main(int argc, char **argv)
{
	const char *plugin = NULL, *pargs = NULL, *trace_path = NULL;
	uint64_t entries = 1 << 18, rings = 64, max_descs = 1 << 22, burst = 0;
	long delay = 0;
	bool keep = false, mismatch = false, exited = false;
	char path[64], *parg;
	struct slot *slots;
	struct tc_qp_hdr h = { 0 };
	int c, fd, status = 0;
	uint64_t tot_insns = 0, tot_tbs = 0, tot_bytes = 0;
	double t0, t1 = 0;
	pid_t pid;

	while ((c = getopt(argc, argv, "+p:o:r:n:D:d:b:t:k")) != -1) {
		switch (c) {
		case 'p': plugin = optarg; break;
		case 'o': pargs = optarg; break;
		case 'r': entries = strtoull(optarg, NULL, 0); break;
		case 'n': rings = strtoull(optarg, NULL, 0); break;
		case 'D': max_descs = strtoull(optarg, NULL, 0); break;
		case 'd': delay = strtol(optarg, NULL, 0); break;
		case 'b': burst = strtoull(optarg, NULL, 0); break;
		case 't': trace_path = optarg; break;
		case 'k': keep = true; break;
		default: goto usage;
		}
	}
	if (!plugin || optind + 2 > argc || !entries || (entries & (entries - 1)) || !rings)
		goto usage;
	if (!burst)
		burst = delay ? 4096 : UINT64_MAX;

	h.magic = TC_QP_MAGIC;
	h.version = TC_QP_VERSION;
	h.max_rings = (uint32_t)rings;
	h.ring_entries = (uint32_t)entries;
	h.ring_off = TC_QP_HDR_SIZE;
	h.ring_stride = TC_QP_RING_HDR + 4 * entries;
	h.desc_off = (h.ring_off + rings * h.ring_stride + 4095) & ~4095ULL;
	h.max_descs = max_descs;
	h.size = h.desc_off + max_descs * sizeof(struct tc_qp_desc);
	snprintf(path, sizeof(path), "/dev/shm/tc-qp-%d", (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		die(path);
	if (ftruncate(fd, (off_t)h.size))
		die(path);
	hdr = mmap(NULL, h.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (hdr == MAP_FAILED)
		die(path);
	close(fd);
	*hdr = h;
	descs = (struct tc_qp_desc *)((char *)hdr + h.desc_off);
	slots = calloc(rings, sizeof(*slots));
	if (!slots)
		die("out of memory");
	if (trace_path && !(trace = fopen(trace_path, "w")))
		die(trace_path);

	/* argv: QEMU -plugin PLUGIN,shm=PATH[,ARGS] [the rest] */
	if (asprintf(&parg, "%s,shm=%s%s%s", plugin, path, pargs ? "," : "",
		     pargs ? pargs : "") < 0)
		die("out of memory");
	char **av = calloc((size_t)(argc - optind + 3), sizeof(*av));

	if (!av)
		die("out of memory");
	av[0] = argv[optind];
	av[1] = "-plugin";
	av[2] = parg;
	for (int i = optind + 1; i < argc; i++)
		av[i - optind + 2] = argv[i];
	t0 = now();
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		execvp(av[0], av);
		die(av[0]);
	}
	for (;;) {
		uint64_t n = pass(slots, burst);

		if (exited) {
			if (!n)
				break;
			continue;
		}
		if (delay && n)
			nap(delay);
		if (!n) {
			if (waitpid(pid, &status, WNOHANG) == pid) {
				exited = true;
				t1 = now();
				continue;
			}
			nap(50);
		}
	}
	if (hdr->state == TC_QP_RUNNING) {
		uint64_t n = recover(slots);

		printf("qemu ended without the plugin's exit (%s %d): %" PRIu64 " TB ids recovered "
		       "after the last publication\n", WIFSIGNALED(status) ? "signal" : "status",
		       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), n);
	}
	if (keep)
		fprintf(stderr, "qp_drain: shared memory kept in %s\n", path);
	else
		unlink(path);

	for (struct thread *t = threads; t; t = t->next) {
		bool ok = t->unfinished ? t->tbs >= t->plugin_tbs && t->insns >= t->plugin_insns :
			t->tbs == t->plugin_tbs && t->insns == t->plugin_insns;

		printf("tid %u vcpu %u: tbs %" PRIu64 " insns %" PRIu64 " syscalls %" PRIu64
		       " | plugin tbs %" PRIu64 " insns %" PRIu64 " | waits %" PRIu64 " %s\n",
		       t->tid, t->vcpu, t->tbs, t->insns, t->syscalls, t->plugin_tbs,
		       t->plugin_insns, t->waits, !ok ? "MISMATCH" : t->unfinished ? "unfinished" :
		       "ok");
		mismatch |= !ok;
		tot_insns += t->insns;
		tot_tbs += t->tbs;
		tot_bytes += 4 * (t->tbs + t->ev_words);
	}
	printf("kinds (executed):");
	for (unsigned k = 0; k < TC_QP_NKINDS; k++) {
		uint64_t n = 0;

		for (struct thread *t = threads; t; t = t->next)
			n += t->kinds[k];
		printf(" %s %" PRIu64, kind_names[k], n);
	}
	n_descs = __atomic_load_n(&hdr->n_descs, __ATOMIC_ACQUIRE) - 1;	/* id 0: unused */
	printf("\ntotal: %" PRIu64 " insns in %" PRIu64 " tbs (%" PRIu64 " translations), "
	       "%.3f s, %.1f M insns/s, %.3f ring bytes/insn\n",
	       tot_insns, tot_tbs, n_descs, t1 - t0, tot_insns / (t1 - t0) / 1e6,
	       tot_insns ? (double)tot_bytes / (double)tot_insns : 0.0);
	if (bad_ids) {
		printf("ERROR: %" PRIu64 " ids without a descriptor\n", bad_ids);
		mismatch = true;
	}
	if (hdr->state != TC_QP_DONE && hdr->state != TC_QP_RUNNING) {
		printf("ERROR: plugin state %u%s%s\n", hdr->state, hdr->error[0] ? ": " : "",
		       hdr->error);
		mismatch = true;
	}
	if (trace)
		fclose(trace);
	/* all freed, so that test-asan's leak check has nothing to say */
	while (threads) {
		struct thread *t = threads;

		threads = t->next;
		free(t);
	}
	free(slots);
	free(av);
	free(parg);
	munmap(hdr, h.size);
	if (mismatch)
		return 1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);

usage:
	fprintf(stderr, "usage: qp_drain -p PLUGIN [-o ARGS] [-r ENTRIES] [-n RINGS] [-D DESCS] "
		"[-d USEC [-b N]] [-t FILE] [-k] -- QEMU [OPTIONS] PROGRAM [ARGS]\n");
	return 2;
}
