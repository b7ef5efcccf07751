#include "lib/emulate/qemu_run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PLUGIN_NAME "tracectl-qemu.so"
/* Entries taken from one ring before the next ring's turn: threads that run together
 * are handed over interleaved (the ETM sink shows them taking turns), none waits long. */
#define BURST 256

/* A ring slot's reader state: the thread on it now. */
struct slot {
	bool live;		/* a thread owns it and was announced */
	uint32_t tid;
	struct tc_qemu_run_thr thr;
	unsigned ev_left, ev_n;	/* payload words still to come, words read */
	uint32_t ev_type;
	uint32_t ev[TC_QP_EV_MAX + 1];	/* + 1: a path's NUL whatever the plugin wrote */
};

struct tc_qemu_run {
	struct tc_qp_hdr *hdr;
	struct tc_qp_desc *descs;
	uint64_t n_descs;	/* as last read (acquire) */
	size_t size;
	struct slot *slots;
	char shm[64];
	pid_t pid;
	volatile sig_atomic_t *stop_req;
	bool reaped, acked, stopped;
	bool attached;		/* the memory is the caller's (tc_qemu_run_attach) */
	int status;
	struct timespec stuck;	/* since when no process is seen, though procs says some */
	char qemu[PATH_MAX];
};

static bool readable(const char *p)
{
	return !access(p, R_OK);
}

int tc_qemu_run_plugin(char *out, size_t size, struct tc_err *e)
{
	const char *env = getenv("TRACECTL_QEMU_PLUGIN");
	static const char *const rel[] = {
		"/" PLUGIN_NAME,			/* installed beside tracectl */
		"/build/qemu_plugin/" PLUGIN_NAME,	/* ./tracectl at the top of the tree */
		"/../qemu_plugin/" PLUGIN_NAME,		/* build/obj/tracectl, build/asan/ */
		"/../../qemu_plugin/" PLUGIN_NAME,	/* build/obj/unit/, build/obj/tools/ */
	};
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env) {
		if (snprintf(out, size, "%s", env) >= (int)size || !readable(out))
			return tc_err_set(e, ENOENT, "TRACECTL_QEMU_PLUGIN=%s: no such plugin",
					  env);
		return 0;
	}
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0)
		return tc_err_sys(e, errno, "/proc/self/exe");
	self[n] = 0;
	if ((slash = strrchr(self, '/')))
		*slash = 0;
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++)
		if (snprintf(out, size, "%s%s", self, rel[i]) < (int)size && readable(out))
			return 0;
	return tc_err_set(e, ENOENT, "%s is neither beside %s/tracectl nor in the build tree "
			  "(make builds it; TRACECTL_QEMU_PLUGIN names another)", PLUGIN_NAME,
			  self);
}

int tc_qemu_run_which(const char *qemu, char *out, size_t size, struct tc_err *e)
{
	const char *path = getenv("PATH"), *p, *end;

	if (strchr(qemu, '/')) {
		if (snprintf(out, size, "%s", qemu) < (int)size && !access(out, X_OK))
			return 0;
		return tc_err_sys(e, errno, "%s", qemu);
	}
	for (p = path ? path : "/usr/bin:/bin"; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		if (snprintf(out, size, "%.*s/%s", (int)(end - p), p, qemu) < (int)size &&
		    !access(out, X_OK))
			return 0;
	}
	return tc_err_set(e, ENOENT, "%s not found: emulated tracing runs the program under "
			  "QEMU's user-mode emulator with a plugin (Debian: apt install qemu-user; "
			  "qemu-user-static cannot load plugins)", qemu);
}

static struct tc_qp_ring *ring_at(const struct tc_qemu_run *r, unsigned i)
{
	return (struct tc_qp_ring *)((char *)r->hdr + r->hdr->ring_off +
				     i * r->hdr->ring_stride);
}

/* The shared memory is no output: a file size limit (ulimit -f) below its size is raised
 * for the ftruncate alone (the hard limit too where that is allowed); beyond the limit
 * ftruncate would fail, or raise SIGXFSZ. */
static int size_shm(int fd, uint64_t size, struct tc_err *e)
{
	struct rlimit lim, raised = { RLIM_INFINITY, RLIM_INFINITY };
	bool raise = !getrlimit(RLIMIT_FSIZE, &lim) && lim.rlim_cur != RLIM_INFINITY &&
		     lim.rlim_cur < size;
	int rc;

	if (raise) {
		if (lim.rlim_max == RLIM_INFINITY || lim.rlim_max >= size)
			raised.rlim_max = lim.rlim_max;
		if (setrlimit(RLIMIT_FSIZE, &raised))
			return tc_err_set(e, EFBIG, "shared memory for the QEMU plugin: %llu bytes "
					  "are more than the file size limit (ulimit -f) allows",
					  (unsigned long long)size);
	}
	rc = ftruncate(fd, (off_t)size) ? tc_err_sys(e, errno, "shared memory for the QEMU "
						     "plugin") : 0;
	if (raise)
		setrlimit(RLIMIT_FSIZE, &lim);
	return rc;
}

static int make_shm(struct tc_qemu_run *r, const struct tc_qemu_run_opts *o, struct tc_err *e)
{
	static unsigned seq;
	struct tc_qp_hdr h = { 0 };
	uint64_t entries = o->ring_entries ? o->ring_entries : 1 << 18;
	int fd;

	if (entries & (entries - 1))
		return tc_err_set(e, EINVAL, "ring entries %llu: not a power of two",
				  (unsigned long long)entries);
	h.magic = TC_QP_MAGIC;
	h.version = TC_QP_VERSION;
	h.flags = TC_QP_H_WAIT_DRAIN;	/* the caller reads the guest's maps behind it */
	h.max_rings = o->max_rings ? o->max_rings : 64;
	h.ring_entries = (uint32_t)entries;
	h.ring_off = TC_QP_HDR_SIZE;
	h.ring_stride = TC_QP_RING_HDR + 4 * entries;
	h.desc_off = (h.ring_off + h.max_rings * h.ring_stride + 4095) & ~4095ULL;
	h.max_descs = o->max_descs ? o->max_descs : 1 << 22;
	h.consumer = (uint32_t)getpid();
	h.size = h.desc_off + h.max_descs * sizeof(struct tc_qp_desc);
	/* /dev/shm: memory, not disk; the file is sparse, so only what is used costs. */
	snprintf(r->shm, sizeof(r->shm), "/dev/shm/tracectl-qp-%d-%u", (int)getpid(), seq++);
	if ((fd = open(r->shm, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) {
		r->shm[0] = 0;
		return tc_err_sys(e, errno, "shared memory for the QEMU plugin");
	}
	if (size_shm(fd, h.size, e)) {
		close(fd);
		return -1;
	}
	r->hdr = mmap(NULL, h.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (r->hdr == MAP_FAILED) {
		r->hdr = NULL;
		return tc_err_sys(e, errno, "mmap %s", r->shm);
	}
	r->size = h.size;
	*r->hdr = h;
	r->descs = (struct tc_qp_desc *)((char *)r->hdr + h.desc_off);
	if (!(r->slots = calloc(h.max_rings, sizeof(*r->slots))))
		return tc_err_set(e, ENOMEM, "out of memory");
	return 0;
}

int tc_qemu_run_start(struct tc_qemu_run **out, const struct tc_qemu_run_opts *o,
		      struct tc_err *e)
{
	struct tc_qemu_run *r = calloc(1, sizeof(*r));
	char plugin[PATH_MAX], *parg = NULL, **av = NULL;
	size_t n = 0, k = 0;
	pid_t parent;

	*out = NULL;
	if (!r)
		return tc_err_set(e, ENOMEM, "out of memory");
	r->pid = -1;
	if (tc_qemu_run_which(o->qemu, r->qemu, sizeof(r->qemu), e))
		goto fail;
	if (o->plugin)
		snprintf(plugin, sizeof(plugin), "%s", o->plugin);
	else if (tc_qemu_run_plugin(plugin, sizeof(plugin), e))
		goto fail;
	if (make_shm(r, o, e))
		goto fail;
	while (o->argv[n])
		n++;
	if ((o->ld_prefix ? asprintf(&parg, "%s,shm=%s,prefix=%s", plugin, r->shm, o->ld_prefix) :
	     asprintf(&parg, "%s,shm=%s", plugin, r->shm)) < 0 ||
	    !(av = calloc(n + 6, sizeof(*av)))) {
		tc_err_set(e, ENOMEM, "out of memory");
		goto fail;
	}
	av[k++] = r->qemu;
	if (o->ld_prefix) {
		av[k++] = "-L";
		av[k++] = (char *)o->ld_prefix;
	}
	av[k++] = "-plugin";
	av[k++] = parg;
	memcpy(av + k, o->argv, n * sizeof(*av));
	r->stop_req = o->stop_req;
	parent = getpid();
	if ((r->pid = fork()) < 0) {
		tc_err_sys(e, errno, "fork");
		goto fail;
	}
	if (!r->pid) {
		/* never orphaned at full speed: qemu dies with tracectl (checked after the
		 * prctl: tracectl may have died before it) */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(127);
		/* record ignores SIGXFSZ for its own writes; the program gets the default */
		signal(SIGXFSZ, SIG_DFL);
		execv(r->qemu, av);
		_exit(127);
	}
	free(parg);
	free(av);
	*out = r;
	return 0;
fail:
	free(parg);
	free(av);
	tc_qemu_run_free(r);
	return -1;
}

pid_t tc_qemu_run_pid(const struct tc_qemu_run *r)
{
	return r->pid;
}

bool tc_qemu_run_stopped(const struct tc_qemu_run *r)
{
	return r->stopped;
}

static const struct tc_qp_desc *desc(struct tc_qemu_run *r, uint32_t id)
{
	if (id >= r->n_descs) {
		/* ids past the table are none, whatever the count says (the plugin counts
		 * those it could not store too; fuzz_emulate found one read past it) */
		r->n_descs = __atomic_load_n(&r->hdr->n_descs, __ATOMIC_ACQUIRE);
		if (r->n_descs > r->hdr->max_descs)
			r->n_descs = r->hdr->max_descs;
		if (id >= r->n_descs)
			return NULL;
	}
	return &r->descs[id];
}

static int event(struct tc_qemu_run *r, struct slot *s, const struct tc_qemu_run_ops *ops,
		 void *arg, struct tc_err *e)
{
	struct tc_qemu_run_sys sys;
	uint64_t w[8];

	(void)r;
	if (s->ev_type == TC_QP_EV_MMAP) {
		const uint32_t *v = s->ev;
		struct tc_qemu_run_map m = { v[0] | (uint64_t)v[1] << 32,
			v[2] | (uint64_t)v[3] << 32, v[4] | (uint64_t)v[5] << 32,
			v[8] | (uint64_t)v[9] << 32, v[10] | (uint64_t)v[11] << 32, v[6], v[7],
			(const char *)&v[TC_QP_EV_MMAP_FIXED] };

		s->ev[s->ev_n] = 0;
		return ops->mmap ? ops->mmap(arg, s->tid, &m, e) : 0;
	}
	for (unsigned i = 0; i < 8; i++)
		w[i] = s->ev[2 * i] | (uint64_t)s->ev[2 * i + 1] << 32;
	sys.num = (int64_t)w[0];
	sys.ret = (int64_t)w[1];
	memcpy(sys.args, &w[2], sizeof(sys.args));
	return ops->syscall ? ops->syscall(arg, s->tid, &sys, e) : 0;
}

/* Hands over ring i's entries up to its head, BURST at most; *n counts them. */
static int drain(struct tc_qemu_run *r, unsigned i, const struct tc_qemu_run_ops *ops,
		 void *arg, uint64_t *n, struct tc_err *e)
{
	struct tc_qp_ring *ring = ring_at(r, i);
	struct slot *s = &r->slots[i];
	uint32_t *ents = (uint32_t *)((char *)ring + TC_QP_RING_HDR);
	uint64_t mask = r->hdr->ring_entries - 1, tail = ring->tail;
	uint64_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
	int rc = 0;

	if (tail == head)
		return 0;
	/* the plugin waits while its ring is full: a head further on is no count of entries
	 * (fuzz_emulate found the consumer reading such a ring for ever) */
	if (head - tail > mask + 1)
		return tc_err_set(e, EPROTO, "QEMU plugin: the ring of thread %u has head %llu, "
				  "tail %llu: more than its %llu entries", ring->tid,
				  (unsigned long long)head, (unsigned long long)tail,
				  (unsigned long long)(mask + 1));
	if (!s->live) {
		/* the plugin stores the tid before its first publication */
		s->live = true;
		s->tid = __atomic_load_n(&ring->tid, __ATOMIC_RELAXED);
		s->thr = (struct tc_qemu_run_thr){ .pid = ring->pid, .tid = s->tid,
			.ppid = ring->ppid, .ptid = ring->ptid, .guest_base = ring->guest_base,
			.exec = ring->flags & TC_QP_R_EXEC };
		memcpy(s->thr.comm, ring->comm, sizeof(s->thr.comm) - 1);
		if (ops->thread && ops->thread(arg, &s->thr, true, e))
			return -1;
	}
	if (head - tail > BURST)
		head = tail + BURST;
	for (; tail != head && !rc; tail++) {
		uint32_t w = ents[tail & mask];
		const struct tc_qp_desc *d;

		ents[tail & mask] = 0;	/* qp_shm.h: how unpublished entries are found */
		if (s->ev_left) {
			s->ev[s->ev_n++] = w;
			if (!--s->ev_left)
				rc = event(r, s, ops, arg, e);
		} else if (w & TC_QP_EV_BIT) {
			s->ev_type = TC_QP_EV_TYPE(w);
			if ((s->ev_type != TC_QP_EV_SYSCALL ||
			     TC_QP_EV_LEN(w) != TC_QP_EV_SYSCALL_WORDS) &&
			    (s->ev_type != TC_QP_EV_MMAP || TC_QP_EV_LEN(w) <= TC_QP_EV_MMAP_FIXED))
				rc = tc_err_set(e, EPROTO, "QEMU plugin: unknown event 0x%x in the "
						"ring of thread %u", w, s->tid);
			s->ev_left = TC_QP_EV_LEN(w);
			s->ev_n = 0;
		} else if (!w || !(d = desc(r, w))) {	/* id 0 is never used */
			rc = tc_err_set(e, EPROTO, "QEMU plugin: block id %u without a descriptor "
					"(thread %u)", w, s->tid);
		} else if (ops->block) {
			rc = ops->block(arg, s->tid, d, e);
		}
		(*n)++;
	}
	__atomic_store_n(&ring->tail, tail, __ATOMIC_RELEASE);
	return rc;
}

static int thread_end(struct tc_qemu_run *r, unsigned i, const struct tc_qemu_run_ops *ops,
		      void *arg, struct tc_err *e)
{
	struct slot *s = &r->slots[i];
	int rc = 0;

	if (s->live && ops->thread)
		rc = ops->thread(arg, &s->thr, false, e);
	memset(s, 0, sizeof(*s));
	return rc;
}

/* Ring i is read to its end: its thread ends and the slot goes back to the plugin. */
static int reclaim(struct tc_qemu_run *r, unsigned i, const struct tc_qemu_run_ops *ops,
		   void *arg, struct tc_err *e)
{
	struct tc_qp_ring *ring = ring_at(r, i);

	if (thread_end(r, i, ops, arg, e))
		return -1;
	ring->head = 0;
	ring->tail = 0;
	__atomic_store_n(&ring->state, TC_QP_RING_RECLAIMED, __ATOMIC_RELEASE);
	return 0;
}

/* One pass over the rings: *n counts the entries handed over. */
static int pass(struct tc_qemu_run *r, const struct tc_qemu_run_ops *ops, void *arg,
		uint64_t *n, struct tc_err *e)
{
	for (unsigned i = 0; i < r->hdr->max_rings; i++) {
		struct tc_qp_ring *ring = ring_at(r, i);
		uint32_t st = __atomic_load_n(&ring->state, __ATOMIC_ACQUIRE);

		if (st != TC_QP_RING_ACTIVE && st != TC_QP_RING_EXITED)
			continue;
		if (drain(r, i, ops, arg, n, e))
			return -1;
		if (st != TC_QP_RING_EXITED ||
		    ring->tail != __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE))
			continue;
		/* drained after its exit */
		if (reclaim(r, i, ops, arg, e))
			return -1;
	}
	return 0;
}

/* A process is gone (or a zombie): it runs no more plugin code. */
static bool dead(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT || errno == ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = 0;
	/* "pid (comm) S ...": comm may hold ')' */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/* Ring i's process died without the plugin's exit callback (a fatal guest signal; an exec
 * the plugin did not follow): the entries the ring got after its last publication are the
 * non-zero ids from head on (qp_shm.h); then the slot is free again. */
static int recover(struct tc_qemu_run *r, unsigned i, const struct tc_qemu_run_ops *ops,
		   void *arg, struct tc_err *e)
{
	struct tc_qp_ring *ring = ring_at(r, i);
	uint32_t *ents = (uint32_t *)((char *)ring + TC_QP_RING_HDR);
	uint64_t mask = r->hdr->ring_entries - 1, h = ring->head, n;

	if (!r->slots[i].ev_left)
		while (h - ring->tail < r->hdr->ring_entries && ents[h & mask] &&
		       !(ents[h & mask] & TC_QP_EV_BIT))
			h++;
	ring->head = h;
	do {
		n = 0;
		if (drain(r, i, ops, arg, &n, e))
			return -1;
	} while (n);
	return reclaim(r, i, ops, arg, e);
}

/* The rings of processes that died without their exit callback are recovered, and those
 * processes leave procs as their exit would have; *live counts the rings of live ones. */
static int bury(struct tc_qemu_run *r, const struct tc_qemu_run_ops *ops, void *arg,
		unsigned *live, struct tc_err *e)
{
	*live = 0;
	for (unsigned i = 0; i < r->hdr->max_rings; i++) {
		struct tc_qp_ring *ring = ring_at(r, i);
		pid_t pid = (pid_t)ring->pid;

		/* not live: pid may still be a former owner's (claimed, not yet published) */
		if (__atomic_load_n(&ring->state, __ATOMIC_ACQUIRE) != TC_QP_RING_ACTIVE ||
		    !r->slots[i].live)
			continue;
		if (!dead(pid)) {
			++*live;
			continue;
		}
		for (unsigned j = i; j < r->hdr->max_rings; j++)
			if (ring_at(r, j)->state == TC_QP_RING_ACTIVE && r->slots[j].live &&
			    (pid_t)ring_at(r, j)->pid == pid && recover(r, j, ops, arg, e))
				return -1;
		__atomic_fetch_sub(&r->hdr->procs, 1, __ATOMIC_ACQ_REL);
	}
	return 0;
}

static double since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

static void nap(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

int tc_qemu_run_loop(struct tc_qemu_run *r, const struct tc_qemu_run_ops *ops, void *arg,
		     int *status, struct tc_err *e)
{
	unsigned idle = 0, live;

	for (;;) {
		/* read before the pass: DONE then means the pass saw every ring ended */
		uint32_t st = __atomic_load_n(&r->hdr->state, __ATOMIC_ACQUIRE);
		uint32_t procs = __atomic_load_n(&r->hdr->procs, __ATOMIC_ACQUIRE);
		uint64_t n = 0;

		if (r->stop_req && *r->stop_req && !r->stopped) {
			/* the rings keep what qemu had published: recover() hands it over; the
			 * processes the guest forked are qemus of their own, not qemu's to end */
			if (!r->reaped)
				kill(r->pid, SIGKILL);
			for (unsigned i = 0; i < r->hdr->max_rings; i++)
				if (__atomic_load_n(&ring_at(r, i)->state, __ATOMIC_ACQUIRE) ==
				    TC_QP_RING_ACTIVE && r->slots[i].live && ring_at(r, i)->pid > 0)
					kill((pid_t)ring_at(r, i)->pid, SIGKILL);
			r->stopped = true;
		}
		if (pass(r, ops, arg, &n, e))
			return -1;
		if (n) {
			idle = 0;
			continue;
		}
		if (st == TC_QP_FAILED || (r->reaped && (st != TC_QP_RUNNING || !procs)))
			break;
		if (!r->reaped && waitpid(r->pid, &r->status, WNOHANG) == r->pid) {
			r->reaped = true;
			clock_gettime(CLOCK_MONOTONIC, &r->stuck);
			continue;	/* one more pass for what it wrote last */
		}
		/* Processes killed by a signal: now and then, and at each turn once the first
		 * qemu is gone (its children may outlive it). */
		if ((r->reaped || (idle > 64 && idle % 512 == 0)) && st == TC_QP_RUNNING) {
			if (bury(r, ops, arg, &live, e))
				return -1;
			if (live)
				clock_gettime(CLOCK_MONOTONIC, &r->stuck);
			else if (r->reaped && since(&r->stuck) > 2)
				break;	/* procs counts one that never ran: killed as it forked */
		}
		/* Nothing to read: spin a little (the guest is fast), then sleep. */
		if (++idle > 64)
			nap(idle > 100000 ? 200 : 20);
	}
	*status = r->status;
	switch (__atomic_load_n(&r->hdr->state, __ATOMIC_ACQUIRE)) {
	case TC_QP_WAITING:
		if (r->stopped)
			return tc_err_set(e, EINTR, "stopped before %s had started the program",
					  r->qemu);
		return tc_err_set(e, ENOEXEC, "%s did not load the tracectl plugin (exit status "
				  "0x%x): a QEMU that loads plugins is needed (Debian: apt install "
				  "qemu-user; qemu-user-static cannot)", r->qemu, r->status);
	case TC_QP_FAILED:
		return tc_err_set(e, EPROTO, "QEMU plugin: %.*s", (int)sizeof(r->hdr->error),
				  r->hdr->error);
	default:
		return 0;
	}
}

void tc_qemu_run_free(struct tc_qemu_run *r)
{
	int st;

	if (!r)
		return;
	if (r->pid > 0 && !r->reaped) {
		kill(r->pid, SIGKILL);
		while (waitpid(r->pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	if (r->hdr && !r->attached)
		munmap(r->hdr, r->size);
	if (r->shm[0])
		unlink(r->shm);
	free(r->slots);
	free(r);
}

int tc_qemu_run_attach(struct tc_qemu_run **out, void *mem, size_t size, struct tc_err *e)
{
	const struct tc_qp_hdr *h = mem;
	struct tc_qemu_run *r;
	uint64_t rings_end;

	*out = NULL;
	if (size < TC_QP_HDR_SIZE || h->magic != TC_QP_MAGIC || h->version != TC_QP_VERSION ||
	    !h->ring_entries || (h->ring_entries & (h->ring_entries - 1)) || !h->max_rings ||
	    h->max_rings > 4096 || h->ring_stride != TC_QP_RING_HDR + 4ULL * h->ring_entries ||
	    h->ring_off < TC_QP_HDR_SIZE || h->ring_off % 64 || h->ring_off > size ||
	    (rings_end = h->ring_off + h->max_rings * h->ring_stride) > size ||
	    h->desc_off < rings_end || h->desc_off % 8 || h->desc_off > size ||
	    h->max_descs > (size - h->desc_off) / sizeof(struct tc_qp_desc))
		return tc_err_set(e, EINVAL, "not a shared memory image of the QEMU plugin's "
				  "layout in %zu bytes", size);
	if (!(r = calloc(1, sizeof(*r))) || !(r->slots = calloc(h->max_rings, sizeof(*r->slots)))) {
		free(r);
		return tc_err_set(e, ENOMEM, "out of memory");
	}
	r->hdr = mem;
	r->size = size;
	r->descs = (struct tc_qp_desc *)((char *)mem + h->desc_off);
	r->attached = r->reaped = true;
	r->pid = -1;
	*out = r;
	return 0;
}

int tc_qemu_run_pass(struct tc_qemu_run *r, const struct tc_qemu_run_ops *ops, void *arg,
		     uint64_t *n, struct tc_err *e)
{
	*n = 0;
	return pass(r, ops, arg, n, e);
}

int tc_qemu_run_finish(struct tc_qemu_run *r, const struct tc_qemu_run_ops *ops, void *arg,
		       struct tc_err *e)
{
	uint64_t n;

	do {
		n = 0;
		if (pass(r, ops, arg, &n, e))
			return -1;
	} while (n);
	for (unsigned i = 0; i < r->hdr->max_rings; i++)
		if (__atomic_load_n(&ring_at(r, i)->state, __ATOMIC_ACQUIRE) ==
		    TC_QP_RING_ACTIVE && r->slots[i].live && recover(r, i, ops, arg, e))
			return -1;
	return 0;
}
