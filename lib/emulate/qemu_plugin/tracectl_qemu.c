/* tracectl-qemu.so: a QEMU TCG plugin (API version 1, QEMU 7.2 qemu-user) that follows a
 * guest program block by block for tracectl.
 *
 * At translation it describes each translation block (TB) once, in the shared memory's
 * descriptor table (start, size, instruction count, class of the last instruction from
 * Capstone, its direct target); at execution a callback appends the TB's id to the ring of
 * the executing guest thread. System call returns go into the ring too, as events with the
 * call's number, result and arguments, for side-band. The layout and the ordering rules are
 * in qp_shm.h. When a ring is full, the guest thread waits for the consumer: no trace is
 * dropped.
 *
 *   qemu-x86_64 -plugin tracectl-qemu.so,shm=PATH[,mode=M][,batch=N][,icount=on][,stats=on]
 *
 * shm=PATH   the consumer's shared memory file (required for mode=ring)
 * mode=ring  TB ids into the rings (default);  cb: a callback per TB that only counts;
 *            count: an inline add per TB (no callback);  none: describe TBs, no execution
 *            instrumentation
 * batch=N    publish a ring's head every N entries (default: a sixteenth of the ring)
 * icount=on  also count instructions with an inline add per TB, a count independent of the
 *            callbacks (one counter for all threads: exact for single-threaded guests)
 * stats=on   print the plugin's counts to stderr at exit
 * exec=NAME  this qemu runs a guest's exec of program NAME, run by the plugin: the shared
 *            memory is in use
 * prefix=DIR qemu runs with -L DIR (the guest's ld.so and libraries): so do its execs
 * avoid=S-E:S-E...  (with exec=) guest ranges (hex) the program before the exec ran code
 *            in: kept free of the new program's mappings (x86-64 guests), so that a
 *            decoder without time, which sees the process's mappings of both programs at
 *            once (perf's timeless decoding), finds no overlap
 *
 * A guest fork() forks qemu and this plugin with it: the child's thread claims a ring of
 * its own as the fork returns in it, so children are followed as perf's inherit does
 * (qp_shm.h). A guest's execve of a program for the same guest runs qemu and the plugin
 * again on it, so exec is followed too. Built by the Makefile into $(B)/qemu_plugin/tracectl-qemu.so, not into
 * tracectl. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <capstone.h>
#include <dlfcn.h>

#include "lib/emulate/qemu_plugin/qemu_plugin_api.h"
#include "lib/emulate/qemu_plugin/qp_shm.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_VCPUS 4096
#define unlikely(x) __builtin_expect(!!(x), 0)

enum mode { MODE_RING, MODE_CB, MODE_COUNT, MODE_NONE };

/* vstate.sys: a thread runs guest code, or is in a system call (its ring published), or
 * was in one when another thread's exec ended its ring for it. */
enum { SYS_NO, SYS_IN, SYS_ENDED };
enum target { TGT_X86_64, TGT_AARCH64 };

/* A guest thread's producer state, private to the plugin. The hot path touches head, limit,
 * ents, mask and insns: one cache line. */
struct vstate {
	_Alignas(64) uint64_t head;	/* entries written */
	uint64_t limit;		/* slow path when head reaches it */
	uint32_t *ents;
	uint64_t mask;
	uint64_t insns;		/* instructions of the TBs written */
	uint64_t tail;		/* the consumer's tail, as last read */
	struct tc_qp_ring *ring;	/* NULL: private (to_scratch) */
	uint64_t ev_words;	/* entries that are events, not TB ids */
	uint64_t sys_args[6];	/* of the system call in progress */
	uint32_t tid;
	unsigned vcpu;
	uint32_t sys;		/* SYS_*: where the thread is, for another's exec */
	struct tc_qp_ring *done;	/* the ring finish() ended, and its gen: exit waits */
	uint32_t done_gen;
	struct vstate *next;	/* all states, for the exit flush */
};

static struct {
	enum mode mode;
	enum target target;
	struct tc_qp_hdr *hdr;
	size_t map_size;
	struct tc_qp_desc *descs;
	uint64_t n_descs;
	uint64_t translations;
	uint64_t batch;
	bool icount, stats;
	csh cs;
	pthread_mutex_t lock;	/* translation, vCPU init/exit, exit flush */
	struct vstate *all;
	uint64_t kinds[TC_QP_NKINDS];
	uint64_t inline_insns;	/* icount=on and mode=count: inline adds */
	uint64_t cb_insns[MAX_VCPUS];	/* mode=cb */
	uint64_t waits;
	uint64_t split_insns;	/* last instructions across a page: read from haddr */
	int errfd;		/* stderr as it was at load: guests close theirs */
	bool exec;		/* exec=NAME: this qemu runs a guest's exec */
	char comm[16];		/* exec=NAME: for the first thread's ring */
	char args[1024];	/* the plugin's arguments but exec=, joined by ',' (for exec) */
	intptr_t guest_base;	/* host address - guest address */
	bool has_base;
	const char *avoid;	/* avoid=, as given */
	const char *prefix;	/* prefix=, as given */
	bool exec_stop;		/* a thread execs: the others end their rings and wait */
} g = { .lock = PTHREAD_MUTEX_INITIALIZER, .errfd = 2 };

static struct vstate *vstates[MAX_VCPUS];

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void __attribute__((format(printf, 1, 2))) msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdprintf(g.errfd, fmt, ap);
	va_end(ap);
}

/* The plugin cannot go on without losing trace: say why (stderr and the shared memory)
 * and end the guest. */
static void fail(const char *fmt, ...)
{
	char text[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	msg("tracectl-qemu: %s\n", text);
	if (g.hdr) {
		memcpy(g.hdr->error, text, sizeof(text));
		__atomic_store_n(&g.hdr->state, TC_QP_FAILED, __ATOMIC_RELEASE);
	}
	_exit(125);
}

static uint32_t gettid_(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

/* ---- rings ------------------------------------------------------------------------- */

static void publish(struct vstate *v)
{
	if (!v->ring)
		return;
	__atomic_store_n(&v->ring->insns, v->insns, __ATOMIC_RELAXED);
	__atomic_store_n(&v->ring->tbs, v->head - v->ev_words, __ATOMIC_RELAXED);
	__atomic_store_n(&v->ring->head, v->head, __ATOMIC_RELEASE);
}

static void sleep_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

/* head reached limit: publish, wait while the ring is full, set the next limit. */
static void __attribute__((noinline)) slow_path(struct vstate *v)
{
	uint64_t cap = v->mask + 1;
	unsigned spins = 0;

	if (!v->ring) {		/* private: a scratch ring that wraps */
		v->limit = UINT64_MAX;
		return;
	}
	if (unlikely(!v->tid)) {
		v->tid = gettid_();
		__atomic_store_n(&v->ring->tid, v->tid, __ATOMIC_RELAXED);
		v->ring->guest_base = (uint64_t)g.guest_base;	/* known: a TB was translated */
	}
	publish(v);
	v->tail = __atomic_load_n(&v->ring->tail, __ATOMIC_ACQUIRE);
	if (v->head - v->tail >= cap) {
		v->ring->waits++;
		__atomic_fetch_add(&g.waits, 1, __ATOMIC_RELAXED);
		while (v->head - v->tail >= cap) {
			if (spins++ < 64)
				sched_yield();
			else
				sleep_us(20);
			v->tail = __atomic_load_n(&v->ring->tail, __ATOMIC_ACQUIRE);
		}
	}
	v->limit = v->head + g.batch;
	if (v->limit > v->tail + cap)
		v->limit = v->tail + cap;
}

static inline void put(struct vstate *v, uint32_t w)
{
	v->ents[v->head & v->mask] = w;
	if (++v->head == v->limit)
		slow_path(v);
}

static void park(struct vstate *v);

/* The hot path: one executed TB. udata: id in the low 32 bits, instruction count above. */
static void on_tb_ring(unsigned int vcpu, void *udata)
{
	struct vstate *v = vstates[vcpu];
	uintptr_t u = (uintptr_t)udata;

	v->insns += u >> 32;
	v->ents[v->head & v->mask] = (uint32_t)u;
	if (++v->head == v->limit) {
		slow_path(v);
		/* another thread execs: stop here, between blocks (this one's id is written:
		 * the kernel ends the thread as it was about to run it) */
		if (unlikely(__atomic_load_n(&g.exec_stop, __ATOMIC_ACQUIRE)))
			park(v);
	}
}

static void on_tb_count(unsigned int vcpu, void *udata)
{
	g.cb_insns[vcpu & (MAX_VCPUS - 1)] += (uintptr_t)udata >> 32;
}

/* Where a thread that no longer owns a ring writes (a thread after its exit callback, one
 * of the parent's in a fork child): written, never read. */
static void to_scratch(struct vstate *v)
{
	static uint32_t scratch[4096];

	v->ring = NULL;
	v->ents = scratch;
	v->mask = 4095;
	v->limit = UINT64_MAX;
}

static struct vstate *private_state(unsigned vcpu)
{
	struct vstate *v = calloc(1, sizeof(*v));

	if (!v)
		fail("out of memory");
	to_scratch(v);
	v->vcpu = vcpu;
	return v;
}

static struct tc_qp_ring *ring_at(unsigned i)
{
	return (struct tc_qp_ring *)((char *)g.hdr + g.hdr->ring_off + i * g.hdr->ring_stride);
}

static struct tc_qp_ring *claim_ring(void)
{
	for (unsigned i = 0; i < g.hdr->max_rings; i++) {
		struct tc_qp_ring *r = ring_at(i);
		uint32_t s = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);

		if (s != TC_QP_RING_FREE && s != TC_QP_RING_RECLAIMED)
			continue;
		if (__atomic_compare_exchange_n(&r->state, &s, TC_QP_RING_ACTIVE, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			return r;
	}
	return NULL;
}

/* v (a new thread, or a fork child's) takes a ring of its own; tid 0: the thread's tid is
 * taken at its first slow path. ptid: the thread that forked this process. */
static void attach(struct vstate *v, uint32_t tid, uint32_t ptid)
{
	v->ring = claim_ring();
	if (!v->ring)
		fail("all %u rings are in use: more guest threads than the consumer allows",
		     g.hdr->max_rings);
	v->ents = (uint32_t *)((char *)v->ring + TC_QP_RING_HDR);
	v->mask = g.hdr->ring_entries - 1;
	v->tail = __atomic_load_n(&v->ring->tail, __ATOMIC_ACQUIRE);
	v->head = v->tail;	/* 0: a fresh or reclaimed ring */
	v->limit = v->head + (tid ? g.batch : 1);	/* tid 0: the first TB takes it */
	v->insns = 0;
	v->ev_words = 0;
	v->done = NULL;
	v->tid = tid;
	v->ring->tid = tid;
	v->ring->vcpu = v->vcpu;
	v->ring->pid = (uint32_t)getpid();
	v->ring->ppid = (uint32_t)getppid();
	v->ring->ptid = ptid;
	v->ring->flags = 0;
	v->ring->guest_base = (uint64_t)g.guest_base;
	if (g.exec) {	/* the first thread of an exec'd program */
		g.exec = false;
		v->ring->flags = TC_QP_R_EXEC;
		memcpy(v->ring->comm, g.comm, sizeof(g.comm));
	}
	v->ring->gen++;
}

/* qemu-user calls this in the thread that creates the guest thread, before the new one
 * runs; the new thread's tid is taken at its first slow path. */
static void on_vcpu_init(qemu_plugin_id_t id, unsigned int vcpu)
{
	struct vstate *v;

	(void)id;
	if (vcpu >= MAX_VCPUS)
		fail("vCPU index %u: more than %d guest threads at once", vcpu, MAX_VCPUS);
	if (g.mode != MODE_RING)
		return;
	pthread_mutex_lock(&g.lock);
	v = aligned_alloc(64, sizeof(*v));
	if (!v)
		fail("out of memory");
	memset(v, 0, sizeof(*v));
	v->vcpu = vcpu;
	attach(v, 0, 0);
	v->next = g.all;
	g.all = v;
	vstates[vcpu] = v;
	pthread_mutex_unlock(&g.lock);
}

static void finish(struct vstate *v)
{
	if (!v->ring)
		return;
	if (!v->tid) {
		v->tid = gettid_();
		__atomic_store_n(&v->ring->tid, v->tid, __ATOMIC_RELAXED);
	}
	publish(v);
	v->done = v->ring;
	v->done_gen = v->ring->gen;
	__atomic_store_n(&v->ring->state, TC_QP_RING_EXITED, __ATOMIC_RELEASE);
	to_scratch(v);
}

/* Another thread of the process execs: v's ring ends here (if it has not been ended for it)
 * and v waits, guest code no longer run, for the kernel to end it at the exec. If the exec
 * fails, v goes on, on a new ring. */
static void park(struct vstate *v)
{
	pthread_mutex_lock(&g.lock);
	finish(v);
	pthread_mutex_unlock(&g.lock);
	while (__atomic_load_n(&g.exec_stop, __ATOMIC_ACQUIRE))
		sleep_us(200);
	__atomic_store_n(&v->sys, SYS_NO, __ATOMIC_RELEASE);
	attach(v, v->tid, 0);
}

/* Runs in the exiting thread. */
static void on_vcpu_exit(qemu_plugin_id_t id, unsigned int vcpu)
{
	struct vstate *v;

	(void)id;
	if (g.mode != MODE_RING || vcpu >= MAX_VCPUS)
		return;
	pthread_mutex_lock(&g.lock);
	v = vstates[vcpu];
	if (v)
		finish(v);
	pthread_mutex_unlock(&g.lock);
}

/* ---- system calls ------------------------------------------------------------------ */

#define CLONE_VM_ 0x100
#define CLONE_VFORK_ 0x4000

/* A system call that makes a new process. qemu-user runs vfork, and clone with CLONE_VFORK,
 * as a fork; clone with CLONE_VM otherwise is a thread; clone3 is ENOSYS in 7.2. */
static bool forks_process(int64_t num, uint64_t flags)
{
	if (g.target == TGT_X86_64 && (num == 57 || num == 58))	/* fork, vfork */
		return true;
	if (num != (g.target == TGT_X86_64 ? 56 : 220))		/* clone */
		return false;
	return (flags & CLONE_VFORK_) || !(flags & CLONE_VM_);
}

/* ---- exec -------------------------------------------------------------------------- */

static bool rings_unread(void);
static bool consumer_alive(void);

#define AT_FDCWD_ (-100)
#define MAX_EXEC_ARGS 4096

static bool is_exec(int64_t num)
{
	if (g.target == TGT_X86_64)
		return num == 59 || num == 322;		/* execve, execveat */
	return num == 221 || num == 281;
}

/* A guest pointer as a host one. */
static void *g2h(uint64_t va)
{
	return (void *)(uintptr_t)(va + (uint64_t)g.guest_base);
}

/* The guest's NULL-terminated array of string pointers at va, as host pointers into
 * out[1..] (out[0] left for the caller); -1 when too long. */
static int guest_strv(uint64_t va, char **out, size_t max)
{
	const uint64_t *p = g2h(va);
	size_t n = 0;

	if (!va)
		return 0;
	for (; p[n]; n++) {
		if (n + 2 >= max)
			return -1;
		out[n + 1] = g2h(p[n]);
	}
	return (int)n;
}

/* path is an ELF program for this guest, one qemu runs. */
static bool guest_elf(const char *path)
{
	unsigned char h[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = read(fd, h, sizeof(h)) == (ssize_t)sizeof(h) && !memcmp(h, "\177ELF", 4) &&
	     h[4] == 2 && h[5] == 1 &&		/* 64-bit, little-endian */
	     (h[18] | h[19] << 8) == (g.target == TGT_X86_64 ? 62 : 183);
	close(fd);
	return ok && !access(path, X_OK);
}

static uint64_t seen_size(void);
static uint32_t seen_id(uint64_t i);

/* A "#!INTERP [ARG]" script's interpreter and its one optional argument, as Linux reads
 * the first line; false for anything else. */
static bool shebang(const char *path, char *line, size_t size, char **interp, char **arg)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, line, size - 1);
	char *p, *end;

	if (fd >= 0)
		close(fd);
	if (n < 3 || memcmp(line, "#!", 2) || access(path, X_OK))
		return false;
	line[n] = 0;
	if (!(end = strchr(line, '\n')))
		return false;
	*end = 0;
	for (p = line + 2; *p == ' ' || *p == '\t'; p++)
		;
	*interp = p;
	while (*p && *p != ' ' && *p != '\t')
		p++;
	if (*p)
		*p++ = 0;
	while (*p == ' ' || *p == '\t')
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = 0;
	*arg = *p ? p : NULL;
	return **interp;
}

/* avoid=: the guest ranges of /proc/self/maps that hold a block this process translated,
 * at most max of them, into out (a "S-E:S-E" list). */
static void code_ranges(char *out, size_t size, unsigned max)
{
	struct range { uint64_t lo, hi; bool used; } r[512];
	unsigned n = 0, k = 0;
	char line[512];
	size_t len = 0;
	FILE *f;

	*out = 0;
	if (!(f = fopen("/proc/self/maps", "re")))
		return;
	while (n < 512 && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			r[n++] = (struct range){ lo - (uint64_t)g.guest_base,
						 hi - (uint64_t)g.guest_base, false };
	}
	fclose(f);
	for (uint64_t i = 0; i < seen_size(); i++) {
		uint32_t id = seen_id(i);
		unsigned a = 0, b = n;

		if (!id)
			continue;
		while (a < b) {		/* the first range ending above vaddr */
			unsigned mid = (a + b) / 2;

			if (r[mid].hi <= g.descs[id].vaddr)
				a = mid + 1;
			else
				b = mid;
		}
		if (a < n && r[a].lo <= g.descs[id].vaddr)
			r[a].used = true;
	}
	for (unsigned i = 0; i < n && k < max; i++) {
		int w;

		if (!r[i].used)
			continue;
		w = snprintf(out + len, size - len, "%s%" PRIx64 "-%" PRIx64, k ? ":" : "",
			     r[i].lo, r[i].hi);
		if (w < 0 || (size_t)w >= size - len)
			break;
		len += (size_t)w;
		k++;
	}
}

/* exec=, avoid=: the ranges taken (PROT_NONE) before qemu loads the program; qemu places
 * mappings where the host's mmap gives room. */
static void reserve(const char *list)
{
	for (const char *p = list; p && *p;) {
		unsigned long lo, hi;
		int used = 0;

		if (sscanf(p, "%lx-%lx%n", &lo, &hi, &used) != 2 || hi <= lo)
			return;
		mmap((void *)lo, hi - lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
		     MAP_FIXED_NOREPLACE, -1, 0);
		p += used;
		p += *p == ':';
	}
}

/* The thread in execve ends every ring of the process, waits until the consumer has read
 * them (the old program's code is still mapped) and runs qemu with the plugin on the new
 * program. Back here only if that exec failed: the guest's own execve then runs (and gives
 * its error). */
static void follow_exec(struct vstate *v, int64_t num, const uint64_t *a)
{
	static char *av[MAX_EXEC_ARGS + 8], *gav[MAX_EXEC_ARGS], avoid[2048], line[256];
	char qemu[4096], *parg = NULL, **genv, *interp = NULL, *iarg = NULL;
	const char *path, *base;
	Dl_info dl;
	ssize_t n;
	int nargs, k = 0;

	if (!g.has_base)
		return;
	if (num == 322 || num == 281) {		/* execveat: from the cwd, no flags */
		if ((int)a[0] != AT_FDCWD_ || a[4])
			return;
		a++;
	}
	path = g2h(a[0]);
	genv = g2h(a[2]);
	if (!a[0] || (!guest_elf(path) && (!shebang(path, line, sizeof(line), &interp, &iarg) ||
					   !guest_elf(interp))) ||
	    (nargs = guest_strv(a[1], gav, MAX_EXEC_ARGS)) < 0 ||
	    (n = readlink("/proc/self/exe", qemu, sizeof(qemu) - 1)) <= 0 ||
	    !dladdr((void *)qemu_plugin_install, &dl) || !dl.dli_fname)
		return;
	qemu[n] = 0;
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	pthread_mutex_lock(&g.lock);	/* seen */
	if (g.target == TGT_X86_64 && !g.guest_base)
		code_ranges(avoid, sizeof(avoid), 48);
	pthread_mutex_unlock(&g.lock);
	if (asprintf(&parg, "%s,%s%savoid=%s,exec=%.15s", dl.dli_fname, g.args,
		     *g.args ? "," : "", avoid, base) < 0)
		return;
	for (char *c = strrchr(parg, '=') + 1; *c; c++)
		if (*c == ',')	/* the argument separator */
			*c = '_';
	av[k++] = qemu;
	if (g.prefix) {
		av[k++] = "-L";
		av[k++] = (char *)g.prefix;
	}
	av[k++] = "-plugin";
	av[k++] = parg;
	if (interp) {		/* as Linux runs a script: INTERP [ARG] PATH ARGV[1...] */
		av[k++] = interp;
		if (iarg)
			av[k++] = iarg;
	} else if (nargs) {	/* the guest's argv[0] need not be the path */
		av[k++] = "-0";
		av[k++] = gav[1];
	}
	av[k++] = (char *)path;
	for (int i = 2; i <= nargs; i++)
		av[k++] = gav[i];
	av[k] = NULL;
	/* The other threads stop and end their rings: one in a system call (its ring
	 * published) has it ended here, one running guest code ends it itself at its next
	 * slow path and waits (park); the kernel ends them all at the exec. */
	__atomic_store_n(&g.exec_stop, true, __ATOMIC_RELEASE);
	for (bool pending = true; pending;) {
		pending = false;
		pthread_mutex_lock(&g.lock);
		for (struct vstate *w = g.all; w; w = w->next) {
			uint32_t in = SYS_IN;

			if (w == v || !w->ring)
				continue;
			if (__atomic_compare_exchange_n(&w->sys, &in, SYS_ENDED, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				finish(w);
			else
				pending = true;
		}
		pthread_mutex_unlock(&g.lock);
		if (pending)
			sleep_us(100);
	}
	pthread_mutex_lock(&g.lock);
	finish(v);
	pthread_mutex_unlock(&g.lock);
	if (g.hdr->flags & TC_QP_H_WAIT_DRAIN)
		while (rings_unread() && consumer_alive())
			sleep_us(100);
	execve(qemu, av, a[2] ? genv : (char *[]){ NULL });
	/* failed: this process goes on tracing, from new rings (the others' too) */
	free(parg);
	attach(v, v->tid, 0);
	__atomic_store_n(&g.exec_stop, false, __ATOMIC_RELEASE);
}

static void on_syscall(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, uint64_t a1,
		       uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
		       uint64_t a7, uint64_t a8)
{
	struct vstate *v;

	(void)id, (void)num, (void)a7, (void)a8;
	if (g.mode != MODE_RING || vcpu >= MAX_VCPUS || !(v = vstates[vcpu]))
		return;
	v->sys_args[0] = a1, v->sys_args[1] = a2, v->sys_args[2] = a3;
	v->sys_args[3] = a4, v->sys_args[4] = a5, v->sys_args[5] = a6;
	/* another thread execs: this one stops before its call */
	if (unlikely(__atomic_load_n(&g.exec_stop, __ATOMIC_ACQUIRE)))
		park(v);
	/* counted before it exists, so that procs never reaches 0 while it runs */
	if (forks_process(num, a1))
		__atomic_fetch_add(&g.hdr->procs, 1, __ATOMIC_ACQ_REL);
	/* the call may block: let the consumer see everything before it */
	publish(v);
	__atomic_store_n(&v->sys, SYS_IN, __ATOMIC_RELEASE);
	if (is_exec(num))
		follow_exec(v, num, v->sys_args);
}

/* In a fork child, as the fork returns: v's thread is the only one; the other states are
 * the parent's threads (their rings stay theirs). v's ring and its unpublished batch are
 * the parent's too: v takes a new ring. */
static void child(struct vstate *v)
{
	uint32_t ptid = v->tid;

	/* another thread of the parent may have held it at the fork */
	pthread_mutex_init(&g.lock, NULL);
	for (unsigned i = 0; i < MAX_VCPUS; i++)
		if (vstates[i] && vstates[i] != v)
			vstates[i] = private_state(i);
	v->next = NULL;
	g.all = v;
	attach(v, gettid_(), ptid);
}

/* The guest mapped a file with PROT_EXEC at addr: what the MMAP2 record needs, from the
 * plugin's view (the fd is open now; read later, /proc/PID/maps may have changed). */
static void mmap_event(struct vstate *v, uint64_t addr)
{
	uint32_t w[TC_QP_EV_MAX];
	char fd[64];
	struct stat st;
	ssize_t n;
	unsigned words;
	const uint64_t *a = v->sys_args;

	snprintf(fd, sizeof(fd), "/proc/self/fd/%d", (int)a[4]);
	if (stat(fd, &st))
		return;
	n = readlink(fd, (char *)&w[TC_QP_EV_MMAP_FIXED],
		     4 * (TC_QP_EV_MAX - TC_QP_EV_MMAP_FIXED) - 1);
	if (n <= 0 || ((char *)&w[TC_QP_EV_MMAP_FIXED])[0] != '/')
		return;
	((char *)&w[TC_QP_EV_MMAP_FIXED])[n] = 0;
	words = TC_QP_EV_MMAP_FIXED + (unsigned)(n + 4) / 4;
	w[0] = (uint32_t)addr, w[1] = (uint32_t)(addr >> 32);
	w[2] = (uint32_t)a[1], w[3] = (uint32_t)(a[1] >> 32);
	w[4] = (uint32_t)a[5], w[5] = (uint32_t)(a[5] >> 32);
	w[6] = (uint32_t)a[2], w[7] = (uint32_t)a[3];
	w[8] = (uint32_t)st.st_dev, w[9] = (uint32_t)((uint64_t)st.st_dev >> 32);
	w[10] = (uint32_t)st.st_ino, w[11] = (uint32_t)((uint64_t)st.st_ino >> 32);
	put(v, TC_QP_EV_HDR(TC_QP_EV_MMAP, words));
	for (unsigned i = 0; i < words; i++)
		put(v, w[i]);
	v->ev_words += 1 + words;
}

static void on_syscall_ret(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, int64_t ret)
{
	struct vstate *v;
	uint64_t p[8];

	uint32_t in = SYS_IN;

	(void)id;
	if (g.mode != MODE_RING || vcpu >= MAX_VCPUS || !(v = vstates[vcpu]))
		return;
	/* back from the call: unless another thread's exec ended the ring meanwhile */
	if (!__atomic_compare_exchange_n(&v->sys, &in, SYS_NO, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE) && in == SYS_ENDED) {
		park(v);
		return;
	}
	if (forks_process(num, v->sys_args[0])) {
		if (ret == 0)
			child(v);
		else if (ret < 0)	/* no child after all */
			__atomic_fetch_sub(&g.hdr->procs, 1, __ATOMIC_ACQ_REL);
	}
	if (num == (g.target == TGT_X86_64 ? 9 : 222) && (uint64_t)ret < -4096ULL &&
	    (v->sys_args[2] & PROT_EXEC) && !(v->sys_args[3] & MAP_ANONYMOUS))
		mmap_event(v, (uint64_t)ret);
	p[0] = (uint64_t)num;
	p[1] = (uint64_t)ret;
	memcpy(&p[2], v->sys_args, sizeof(v->sys_args));
	put(v, TC_QP_EV_HDR(TC_QP_EV_SYSCALL, TC_QP_EV_SYSCALL_WORDS));
	for (unsigned i = 0; i < 8; i++) {
		put(v, (uint32_t)p[i]);
		put(v, (uint32_t)(p[i] >> 32));
	}
	v->ev_words += 1 + TC_QP_EV_SYSCALL_WORDS;
	publish(v);
}

/* ---- translation ------------------------------------------------------------------- */

static bool x86_string_op(unsigned id)
{
	switch (id) {
	case X86_INS_MOVSB: case X86_INS_MOVSW: case X86_INS_MOVSD: case X86_INS_MOVSQ:
	case X86_INS_STOSB: case X86_INS_STOSW: case X86_INS_STOSD: case X86_INS_STOSQ:
	case X86_INS_LODSB: case X86_INS_LODSW: case X86_INS_LODSD: case X86_INS_LODSQ:
	case X86_INS_CMPSB: case X86_INS_CMPSW: case X86_INS_CMPSD: case X86_INS_CMPSQ:
	case X86_INS_SCASB: case X86_INS_SCASW: case X86_INS_SCASD: case X86_INS_SCASQ:
	case X86_INS_INSB: case X86_INS_INSW: case X86_INS_INSD:
	case X86_INS_OUTSB: case X86_INS_OUTSW: case X86_INS_OUTSD:
		return true;
	}
	return false;
}

static bool in_group(const cs_insn *in, unsigned grp)
{
	for (unsigned i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == grp)
			return true;
	return false;
}

static void classify_x86(const cs_insn *in, struct tc_qp_desc *d)
{
	const cs_x86 *x = &in->detail->x86;
	bool imm = x->op_count >= 1 && x->operands[0].type == X86_OP_IMM;

	switch (in->id) {
	case X86_INS_SYSCALL: case X86_INS_SYSENTER: case X86_INS_INT: case X86_INS_INT1:
	case X86_INS_INT3: case X86_INS_INTO:
		d->kind = TC_QP_SYSCALL;
		return;
	case X86_INS_RET: case X86_INS_RETF:
		d->kind = TC_QP_RET;
		return;
	}
	if ((x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE) &&
	    x86_string_op(in->id))
		d->flags |= TC_QP_F_REP;
	if (in_group(in, CS_GRP_CALL)) {
		d->kind = imm ? TC_QP_CALL : TC_QP_ICALL;
	} else if (in_group(in, CS_GRP_JUMP)) {
		if (in->id == X86_INS_JMP || in->id == X86_INS_LJMP)
			d->kind = imm ? TC_QP_JUMP : TC_QP_IJUMP;
		else
			d->kind = TC_QP_COND;	/* jcc, jrcxz, loop* */
	} else if (in_group(in, CS_GRP_RET) || in_group(in, CS_GRP_IRET)) {
		d->kind = TC_QP_RET;
	} else if (in_group(in, CS_GRP_INT)) {
		d->kind = TC_QP_SYSCALL;
	}
	if (imm && d->kind != TC_QP_OTHER)
		d->target = (uint64_t)x->operands[0].imm;
}

static void classify_a64(const cs_insn *in, struct tc_qp_desc *d)
{
	const cs_arm64 *a = &in->detail->arm64;
	const cs_arm64_op *last = a->op_count ? &a->operands[a->op_count - 1] : NULL;

	switch (in->id) {
	case ARM64_INS_B:
		d->kind = a->cc != ARM64_CC_INVALID && a->cc != ARM64_CC_AL ? TC_QP_COND :
			TC_QP_JUMP;
		break;
	case ARM64_INS_CBZ: case ARM64_INS_CBNZ: case ARM64_INS_TBZ: case ARM64_INS_TBNZ:
		d->kind = TC_QP_COND;
		break;
	case ARM64_INS_BL:
		d->kind = TC_QP_CALL;
		break;
	case ARM64_INS_BR:
		d->kind = TC_QP_IJUMP;
		return;
	case ARM64_INS_BLR:
		d->kind = TC_QP_ICALL;
		return;
	case ARM64_INS_RET: case ARM64_INS_ERET:
		d->kind = TC_QP_RET;
		return;
	case ARM64_INS_SVC:
		d->kind = TC_QP_SYSCALL;
		return;
	default:
		return;
	}
	if (last && last->type == ARM64_OP_IMM)
		d->target = (uint64_t)last->imm;
}

/* Decodes one x86 instruction at host address h (guest va) without reading past its page
 * unless it needs to: then it crosses the page, and the next page is mapped. */
static size_t decode_at_host(const uint8_t *h, uint64_t va, cs_insn **in)
{
	size_t room = 4096 - (va & 4095);

	if (cs_disasm(g.cs, h, room < 15 ? room : 15, va, 1, in) == 1)
		return 1;
	return room < 15 ? cs_disasm(g.cs, h, 15, va, 1, in) : 0;
}

/* Classifies the last instruction and sets d->last_size. QEMU 7.2 gives an x86 instruction
 * that crosses a page boundary with some of its bytes missing (qemu_plugin_insn_data and
 * _size): then it is decoded from its host address (qemu-user maps guest memory into its
 * own, linearly). */
static void classify(struct tc_qp_desc *d, const struct qemu_plugin_insn *insn)
{
	uint64_t va = qemu_plugin_insn_vaddr(insn);
	size_t n = qemu_plugin_insn_size(insn);
	const void *bytes = qemu_plugin_insn_data(insn);
	cs_insn *in = NULL;

	d->last_size = (uint8_t)n;
	if (cs_disasm(g.cs, bytes, n, va, 1, &in) != 1 || in->size != n) {
		const uint8_t *h = qemu_plugin_insn_haddr(insn);

		if (in)
			cs_free(in, 1);
		in = NULL;
		if (g.target != TGT_X86_64 || !h || (va & 4095) + 15 <= 4096 ||
		    decode_at_host(h, va, &in) != 1) {
			d->kind = TC_QP_UNKNOWN;
			return;
		}
		d->last_size = (uint8_t)in->size;
		g.split_insns++;
	}
	if (g.target == TGT_X86_64)
		classify_x86(in, d);
	else
		classify_a64(in, d);
	cs_free(in, 1);
}

/* Descriptors already made, by start address: a TB translated again (after QEMU flushes its
 * code cache, or for another vCPU state) with the same description keeps its id, so the
 * descriptor table grows with the code run, not with the translations. Under g.lock. */
static struct {
	uint32_t *ids;		/* 0: empty */
	uint64_t size, used;	/* size: power of two */
} seen;

static uint64_t hash_va(uint64_t va)
{
	return (va * 0x9e3779b97f4a7c15ULL) >> 20;
}

static uint64_t seen_size(void)
{
	return seen.size;
}

static uint32_t seen_id(uint64_t i)
{
	return seen.ids[i];
}

static void seen_add(uint32_t id)
{
	if (2 * (seen.used + 1) > seen.size) {
		uint64_t n = seen.size ? 2 * seen.size : 1 << 16;
		uint32_t *ids = calloc(n, sizeof(*ids));

		if (!ids)
			fail("out of memory");
		for (uint64_t i = 0; i < seen.size; i++) {
			uint64_t h;

			if (!seen.ids[i])
				continue;
			for (h = hash_va(g.descs[seen.ids[i]].vaddr); ids[h & (n - 1)]; h++)
				;
			ids[h & (n - 1)] = seen.ids[i];
		}
		free(seen.ids);
		seen.ids = ids;
		seen.size = n;
	}
	uint64_t h = hash_va(g.descs[id].vaddr);

	while (seen.ids[h & (seen.size - 1)])
		h++;
	seen.ids[h & (seen.size - 1)] = id;
	seen.used++;
}

/* The id of a descriptor equal to d, 0 if none. */
static uint32_t seen_find(const struct tc_qp_desc *d)
{
	if (!seen.size)
		return 0;
	for (uint64_t h = hash_va(d->vaddr);; h++) {
		uint32_t id = seen.ids[h & (seen.size - 1)];

		if (!id || !memcmp(&g.descs[id], d, sizeof(*d)))
			return id;
	}
}

/* QEMU 7.2's x86 translator stops a TB before an instruction that would cross into another
 * page (unless it is the TB's first) and takes it out of the TB's code, yet the plugin's list
 * of the TB's instructions keeps it, with only the bytes of the first page: that instruction
 * is not executed by this TB but starts the next. */
static bool x86_ghost(const struct qemu_plugin_insn *insn)
{
	uint64_t va = qemu_plugin_insn_vaddr(insn);
	size_t room = 4096 - (va & 4095);
	const uint8_t *h = qemu_plugin_insn_haddr(insn);
	cs_insn *in = NULL;
	bool ghost;

	if (room >= 15 || !h)
		return false;
	ghost = cs_disasm(g.cs, h, room, va, 1, &in) != 1;
	if (in)
		cs_free(in, 1);
	return ghost;
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct qemu_plugin_insn *last;
	struct tc_qp_desc d = { 0 };
	uint64_t tid;

	(void)id;
	if (!n)
		return;
	if (g.target == TGT_X86_64 && n > 1) {
		pthread_mutex_lock(&g.lock);	/* g.cs */
		if (x86_ghost(qemu_plugin_tb_get_insn(tb, n - 1)))
			n--;
		pthread_mutex_unlock(&g.lock);
	}
	if (g.icount || g.mode == MODE_COUNT)
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
							 &g.inline_insns, n);
	if (g.mode == MODE_CB)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb_count, QEMU_PLUGIN_CB_NO_REGS,
						     (void *)((uintptr_t)n << 32));
	if (g.mode == MODE_COUNT) {
		__atomic_fetch_add(&g.translations, 1, __ATOMIC_RELAXED);
		return;
	}
	last = qemu_plugin_tb_get_insn(tb, n - 1);
	d.vaddr = qemu_plugin_tb_vaddr(tb);
	if (!g.has_base) {	/* qemu-user maps guest memory linearly: for exec's reads */
		const struct qemu_plugin_insn *first = qemu_plugin_tb_get_insn(tb, 0);
		void *h = qemu_plugin_insn_haddr(first);

		if (h) {
			g.guest_base = (intptr_t)((uintptr_t)h - qemu_plugin_insn_vaddr(first));
			g.has_base = true;
		}
	}
	d.n_insns = (uint16_t)n;
	pthread_mutex_lock(&g.lock);
	classify(&d, last);
	d.size = (uint32_t)(qemu_plugin_insn_vaddr(last) + d.last_size - d.vaddr);
	g.kinds[d.kind]++;
	g.translations++;
	tid = g.descs ? seen_find(&d) : 0;
	if (!tid) {
		tid = g.n_descs;
		if (g.descs) {
			/* fork children append to the same table */
			tid = __atomic_fetch_add(&g.hdr->n_descs, 1, __ATOMIC_ACQ_REL);
			if (tid >= g.hdr->max_descs || tid >= TC_QP_EV_BIT)
				fail("more than %" PRIu64 " different TBs: the descriptor table "
				     "is full", g.hdr->max_descs);
			g.descs[tid] = d;
			seen_add((uint32_t)tid);
		}
		g.n_descs++;
	}
	pthread_mutex_unlock(&g.lock);
	if (g.mode == MODE_RING)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb_ring, QEMU_PLUGIN_CB_NO_REGS,
						     (void *)(uintptr_t)(tid | (uint64_t)n << 32));
}

/* ---- exit -------------------------------------------------------------------------- */

static const char *const kind_names[TC_QP_NKINDS] = {
	"other", "cond", "jump", "call", "ijump", "icall", "ret", "syscall", "unknown",
};

static bool consumer_alive(void)
{
	pid_t c = (pid_t)g.hdr->consumer;

	return c > 0 && (!kill(c, 0) || errno != ESRCH);
}

/* This process's rings, ended, are not all reclaimed by the consumer yet. */
static bool rings_unread(void)
{
	for (struct vstate *v = g.all; v; v = v->next)
		if (v->done && __atomic_load_n(&v->done->state, __ATOMIC_ACQUIRE) ==
		    TC_QP_RING_EXITED && v->done->gen == v->done_gen)
			return true;
	return false;
}

/* qemu-user: exit_group or the last thread's exit, other threads stopped. */
static void on_exit_(qemu_plugin_id_t id, void *udata)
{
	uint64_t cb = 0;

	(void)id, (void)udata;
	pthread_mutex_lock(&g.lock);
	for (struct vstate *v = g.all; v; v = v->next)
		finish(v);
	if (g.hdr && __atomic_sub_fetch(&g.hdr->procs, 1, __ATOMIC_ACQ_REL) == 0)
		__atomic_store_n(&g.hdr->state, TC_QP_DONE, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&g.lock);
	/* the process's mappings stay while the consumer reads the code it ran */
	if (g.hdr && (g.hdr->flags & TC_QP_H_WAIT_DRAIN))
		while (rings_unread() && consumer_alive())
			sleep_us(100);
	if (!g.stats)
		return;
	for (unsigned i = 0; i < MAX_VCPUS; i++)
		cb += g.cb_insns[i];
	msg("tracectl-qemu: %" PRIu64 " translations, %" PRIu64 " descriptors (%" PRIu64
	    " ending with an instruction across pages), ring waits %" PRIu64, g.translations,
	    g.n_descs - !!g.descs, g.split_insns, g.waits);
	if (g.icount || g.mode == MODE_COUNT)
		msg(", inline count %" PRIu64 " insns", g.inline_insns);
	if (g.mode == MODE_CB)
		msg(", callback count %" PRIu64 " insns", cb);
	msg("\ntracectl-qemu: last instructions:");
	for (unsigned k = 0; k < TC_QP_NKINDS; k++)
		msg(" %s %" PRIu64, kind_names[k], g.kinds[k]);
	msg("\n");
}

/* ---- install ----------------------------------------------------------------------- */

static int map_shm(const char *path)
{
	struct tc_qp_hdr *h;
	struct stat st;
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "tracectl-qemu: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || st.st_size < TC_QP_HDR_SIZE) {
		fprintf(stderr, "tracectl-qemu: %s: too small\n", path);
		close(fd);
		return -1;
	}
	h = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (h == MAP_FAILED) {
		fprintf(stderr, "tracectl-qemu: mmap %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (h->magic != TC_QP_MAGIC || h->version != TC_QP_VERSION ||
	    h->size != (uint64_t)st.st_size || !h->ring_entries ||
	    (h->ring_entries & (h->ring_entries - 1)) ||
	    h->ring_stride != TC_QP_RING_HDR + 4ULL * h->ring_entries ||
	    h->ring_off + (uint64_t)h->max_rings * h->ring_stride > h->desc_off ||
	    h->desc_off + h->max_descs * sizeof(struct tc_qp_desc) > h->size) {
		fprintf(stderr, "tracectl-qemu: %s: not a tracectl shared memory (version %d)\n",
			path, TC_QP_VERSION);
		munmap(h, (size_t)st.st_size);
		return -1;
	}
	g.hdr = h;
	g.map_size = (size_t)st.st_size;
	g.descs = (struct tc_qp_desc *)((char *)h + h->desc_off);
	/* id 0 is never used, so that a ring entry 0 means "not written" (qp_shm.h) */
	g.n_descs = 1;
	if (g.exec)	/* the table is in use */
		return 0;
	memset(&g.descs[0], 0, sizeof(g.descs[0]));
	__atomic_store_n(&h->n_descs, 1, __ATOMIC_RELEASE);
	return 0;
}

static int parse_args(int argc, char **argv, const char **shm)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');
		const char *val = eq ? eq + 1 : "";
		char name[32];

		if (!eq || (size_t)(eq - a) >= sizeof(name)) {
			fprintf(stderr, "tracectl-qemu: argument '%s': expected name=value\n", a);
			return -1;
		}
		memcpy(name, a, (size_t)(eq - a));
		name[eq - a] = 0;
		if (strcmp(name, "exec") && strcmp(name, "avoid") &&
		    snprintf(g.args + strlen(g.args), sizeof(g.args) - strlen(g.args), "%s%s",
			     *g.args ? "," : "", a) >= (int)(sizeof(g.args) - strlen(g.args))) {
			fprintf(stderr, "tracectl-qemu: arguments too long\n");
			return -1;
		}
		if (!strcmp(name, "shm")) {
			*shm = val;
		} else if (!strcmp(name, "prefix")) {
			g.prefix = val;
		} else if (!strcmp(name, "avoid")) {
			g.avoid = val;
		} else if (!strcmp(name, "exec")) {
			g.exec = true;
			snprintf(g.comm, sizeof(g.comm), "%s", val);
		} else if (!strcmp(name, "mode")) {
			if (!strcmp(val, "ring"))
				g.mode = MODE_RING;
			else if (!strcmp(val, "cb"))
				g.mode = MODE_CB;
			else if (!strcmp(val, "count"))
				g.mode = MODE_COUNT;
			else if (!strcmp(val, "none"))
				g.mode = MODE_NONE;
			else
				goto bad;
		} else if (!strcmp(name, "batch")) {
			char *end;

			g.batch = strtoull(val, &end, 0);
			if (*end || !g.batch)
				goto bad;
		} else if (!strcmp(name, "icount")) {
			if (!qemu_plugin_bool_parse(name, val, &g.icount))
				goto bad;
		} else if (!strcmp(name, "stats")) {
			if (!qemu_plugin_bool_parse(name, val, &g.stats))
				goto bad;
		} else {
			fprintf(stderr, "tracectl-qemu: unknown argument '%s'\n", a);
			return -1;
		}
		continue;
bad:
		fprintf(stderr, "tracectl-qemu: bad value in '%s'\n", a);
		return -1;
	}
	return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *shm = NULL;
	cs_err err;

	if (info->system_emulation) {
		fprintf(stderr, "tracectl-qemu: user-mode emulation only (qemu-x86_64, "
			"qemu-aarch64)\n");
		return -1;
	}
	if (!strcmp(info->target_name, "x86_64")) {
		g.target = TGT_X86_64;
		err = cs_open(CS_ARCH_X86, CS_MODE_64, &g.cs);
	} else if (!strcmp(info->target_name, "aarch64")) {
		g.target = TGT_AARCH64;
		err = cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &g.cs);
	} else {
		fprintf(stderr, "tracectl-qemu: guest %s: only x86_64 and aarch64\n",
			info->target_name);
		return -1;
	}
	if (err != CS_ERR_OK) {
		fprintf(stderr, "tracectl-qemu: capstone: %s\n", cs_strerror(err));
		return -1;
	}
	cs_option(g.cs, CS_OPT_DETAIL, CS_OPT_ON);
	g.errfd = fcntl(2, F_DUPFD_CLOEXEC, 100);
	if (g.errfd < 0)
		g.errfd = 2;
	if (parse_args(argc, argv, &shm))
		return -1;
	if (shm && map_shm(shm))
		return -1;
	if (g.mode == MODE_RING && !shm) {
		fprintf(stderr, "tracectl-qemu: mode=ring needs shm=PATH\n");
		return -1;
	}
	if (g.exec && g.avoid && g.target == TGT_X86_64)
		reserve(g.avoid);
	if (g.hdr && !g.batch)
		g.batch = g.hdr->ring_entries / 16 ? g.hdr->ring_entries / 16 : 1;
	if (g.hdr && !g.exec) {
		g.hdr->pid = (uint32_t)getpid();
		g.hdr->procs = 1;
		snprintf(g.hdr->target, sizeof(g.hdr->target), "%s", info->target_name);
		__atomic_store_n(&g.hdr->state, TC_QP_RUNNING, __ATOMIC_RELEASE);
	}
	qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
	qemu_plugin_register_vcpu_exit_cb(id, on_vcpu_exit);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
	qemu_plugin_register_vcpu_syscall_ret_cb(id, on_syscall_ret);
	qemu_plugin_register_atexit_cb(id, on_exit_, NULL);
	return 0;
}
