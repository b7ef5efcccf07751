/* libFuzzer target for the emulator's input side: what tracectl reads from its QEMU plugin
 * (lib/emulate/qemu_plugin/qp_shm.h: TB descriptors, the per-thread rings of TB ids and
 * events, ring claims and exits), through the consumer (lib/emulate/qemu_run.c, attached to
 * a shared memory image this target writes as the plugin would) into the encoders: Intel
 * PT (emu_pt_qemu.c) or ETMv4 (emu_etm.c), up to the perf.data they write. No qemu runs:
 * the guest's mappings and memory are stand-ins (tc_emu_guest) the input fills.
 *
 * Input: byte 0 picks the encoder (bit 0: ETM, else PT); then operations, each an opcode
 * byte (mod 12) and its operands (missing bytes read as 0):
 *   0 DESC     vaddr offset (2), size (2), insns, kind (low 4 bits) and base (high 4),
 *              last size, target offset (2), flags: append a TB descriptor
 *   1 CLAIM    ring, tid, process (pid, exec, guest_base, parent bits): a new guest thread
 *              takes a FREE or RECLAIMED ring
 *   2 WORDS    ring, count, 4-byte words: ring entries written (not yet published)
 *   3 IDS      ring, count, 1-byte TB ids: the same, cheaper
 *   4 PUBLISH  ring                       5 EXIT ring (published, then EXITED)
 *   6 PASS     the consumer's pass over the rings
 *   7 EVENT    ring, kind: a system call (number, return, PROT bits) or an mmap (address,
 *              length, path: a known one or bytes of the input)
 *   8 CODE     offset (2), length, bytes: guest memory at the code base
 *   9 MAP      process, start page, pages, path: a mapping in its /proc/PID/maps
 *  10 HEAD     ring, 4 bytes: the ring's head set as a broken producer would
 *  11 NDESCS   2 bytes: n_descs set as a broken producer would
 * A ring that is full is passed over first (the producer waits for the consumer). At the
 * end the consumer passes until nothing moves and hands over the rings still active (as a
 * process killed by a signal). Seeds: FUZZ_EMULATE_SEEDS=DIR fuzz_emulate writes valid
 * sequences (loops, calls, system calls, mmap, two threads, a fork child, a signal
 * handler, ETM and PT) into DIR and exits (tests/fuzz/run.sh does); FUZZ_EMULATE_VERBOSE
 * set prints each input's outcome and keeps the last perf.data.
 *
 * A crash, leak or hang is a finding; so is an error without a message. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/emulate/emu.h"
#include "lib/emulate/qemu_run.h"
#include "lib/images/addr_filter.h"
#include "tests/fuzz/fuzz_check.h"

#define RINGS 4
#define ENTRIES 64
#define DESCS 256
#define STRIDE (TC_QP_RING_HDR + 4 * ENTRIES)
#define DESC_OFF 8192
#define SHM_SIZE (DESC_OFF + DESCS * sizeof(struct tc_qp_desc))
#define CODE_BASE 0x400000ULL
#define CODE_SIZE 8192
#define PID0 1000
#define TID0 2000
#define MAX_MAPS 16

static const uint64_t bases[4] = { CODE_BASE, 0x7f0000000000ULL, 0, 0xfffffffffffff000ULL };
static const char *const paths[4] = { "/fuzz/prog", "/fuzz/lib.so", "", "[vdso]" };

struct fmap {
	uint32_t pid;
	uint64_t start, end;
	char path[40];
};

/* One input being played. */
struct play {
	const uint8_t *p, *end;
	void *shm;
	struct tc_qp_hdr *h;
	uint64_t wpos[RINGS];	/* the producer's write position per ring */
	uint8_t code[CODE_SIZE];
	struct fmap maps[MAX_MAPS];
	size_t nmaps;
	struct tc_qemu_run *r;
	const struct tc_qemu_run_ops *ops;
	void *arg;
};

static unsigned u8(struct play *g)
{
	return g->p < g->end ? *g->p++ : 0;
}

static unsigned u16(struct play *g)
{
	unsigned a = u8(g);

	return a | u8(g) << 8;
}

static uint32_t u32(struct play *g)
{
	uint32_t a = u16(g);

	return a | (uint32_t)u16(g) << 16;
}

static struct tc_qp_ring *ring(struct play *g, unsigned i)
{
	return (struct tc_qp_ring *)((char *)g->shm + g->h->ring_off + i * STRIDE);
}

static uint32_t *ents(struct play *g, unsigned i)
{
	return (uint32_t *)((char *)ring(g, i) + TC_QP_RING_HDR);
}

/* The consumer's pass; -1 when it stopped the run (its error set). */
static int pass(struct play *g, uint64_t *n, struct tc_err *e)
{
	uint64_t k = 0;
	int rc = tc_qemu_run_pass(g->r, g->ops, g->arg, &k, e);

	if (n)
		*n = k;
	CHECK(!rc || e->msg[0]);
	return rc;
}

/* One word into ring i (waiting for the consumer while it is full); -1: the run stopped,
 * 1: the ring stays full (a broken head), 0 written. */
static int put(struct play *g, unsigned i, uint32_t w, struct tc_err *e)
{
	struct tc_qp_ring *r = ring(g, i);

	if (g->wpos[i] - r->tail >= ENTRIES) {
		__atomic_store_n(&r->head, g->wpos[i], __ATOMIC_RELEASE);
		if (pass(g, NULL, e))
			return -1;
		if (g->wpos[i] - r->tail >= ENTRIES)
			return 1;
	}
	ents(g, i)[g->wpos[i]++ & (ENTRIES - 1)] = w;
	return 0;
}

static bool active(struct play *g, unsigned i)
{
	return ring(g, i)->state == TC_QP_RING_ACTIVE;
}

static int event(struct play *g, unsigned i, struct tc_err *e)
{
	static const unsigned nums[8] = { 9, 10, 56, 15, 60, 231, 1, 0 };
	unsigned kind = u8(g);
	uint32_t w[TC_QP_EV_MAX + 1] = { 0 };
	unsigned n;
	int rc = 0;

	if (!(kind & 1)) {
		/* a system call: num, ret, a1..a6 */
		uint64_t num = kind & 0x80 ? u16(g) : nums[kind >> 1 & 7];
		int64_t ret = (int16_t)u16(g);
		unsigned prot = u8(g);

		if (num == 9 && ret >= 0)	/* mmap returns an address */
			ret = (int64_t)(CODE_BASE + ((uint64_t)ret << 12));
		w[0] = (uint32_t)num;
		w[1] = (uint32_t)(num >> 32);
		w[2] = (uint32_t)ret;
		w[3] = (uint32_t)((uint64_t)ret >> 32);
		w[8] = prot;			/* a3: mmap's and mprotect's prot */
		n = TC_QP_EV_SYSCALL_WORDS;
		rc = put(g, i, TC_QP_EV_HDR(TC_QP_EV_SYSCALL, n), e);
	} else {
		uint64_t addr = bases[kind >> 1 & 3] + ((uint64_t)u16(g) << 12);
		uint64_t len = (uint64_t)u8(g) << 12;
		unsigned ps = u8(g), plen = 0;
		char *path = (char *)&w[TC_QP_EV_MMAP_FIXED];

		w[0] = (uint32_t)addr;
		w[1] = (uint32_t)(addr >> 32);
		w[2] = (uint32_t)len;
		w[4] = u8(g);			/* pgoff, pages */
		w[6] = 5;			/* PROT_READ | PROT_EXEC */
		w[7] = 2;			/* MAP_PRIVATE */
		w[10] = ps;			/* ino */
		if (ps & 0x80) {		/* a path of input bytes (NUL or not) */
			plen = (ps & 0x7f) % 64;
			for (unsigned k = 0; k < plen; k++)
				path[k] = (char)u8(g);
		} else {
			plen = (unsigned)strlen(paths[ps & 3]);
			memcpy(path, paths[ps & 3], plen + 1);
			plen++;
		}
		n = TC_QP_EV_MMAP_FIXED + (plen + 3) / 4;
		if (n <= TC_QP_EV_MMAP_FIXED)
			n = TC_QP_EV_MMAP_FIXED + 1;
		rc = put(g, i, TC_QP_EV_HDR(TC_QP_EV_MMAP, n), e);
	}
	for (unsigned k = 0; k < n && !rc; k++)
		rc = put(g, i, w[k], e);
	/* events are published as they are written */
	__atomic_store_n(&ring(g, i)->head, g->wpos[i], __ATOMIC_RELEASE);
	return rc < 0 ? -1 : 0;
}

/* The operations, up to the end of the input; -1 when the consumer stopped the run. */
static int play_ops(struct play *g, struct tc_err *e)
{
	while (g->p < g->end) {
		unsigned op = u8(g) % 12, i;
		struct tc_qp_ring *r;
		int rc = 0;

		switch (op) {
		case 0: {
			struct tc_qp_desc d = { 0 };
			uint64_t id;
			unsigned off = u16(g), kb;

			d.size = u16(g);
			d.n_insns = (uint16_t)u8(g);
			kb = u8(g);
			d.kind = (uint8_t)(kb & 15);
			d.vaddr = bases[kb >> 4 & 3] + off;
			d.last_size = (uint8_t)u8(g);
			d.target = bases[kb >> 6] + u16(g);
			d.flags = u8(g) & 1 ? TC_QP_F_REP : 0;
			id = g->h->n_descs;
			if (id < DESCS) {
				((struct tc_qp_desc *)((char *)g->shm + DESC_OFF))[id] = d;
				__atomic_store_n(&g->h->n_descs, id + 1, __ATOMIC_RELEASE);
			}
			break;
		}
		case 1: {
			unsigned tid, b;

			i = u8(g) % RINGS;
			tid = TID0 + u8(g);
			b = u8(g);
			r = ring(g, i);
			if (r->state != TC_QP_RING_FREE && r->state != TC_QP_RING_RECLAIMED)
				break;
			r->tid = tid;
			r->pid = PID0 + (b & 3);
			/* a fork child: its parent process and the thread that forked */
			r->ppid = b & 0x30 ? PID0 + (b >> 4 & 3) - 1 : 1;
			r->ptid = b & 0x30 ? TID0 + (b >> 4 & 3) - 1 : 0;
			r->flags = b & 4 ? TC_QP_R_EXEC : 0;
			r->guest_base = b & 8 ? 0x10000 : 0;
			memcpy(r->comm, "fuzzprog", 9);
			r->gen++;
			g->wpos[i] = r->head;
			__atomic_store_n(&r->state, TC_QP_RING_ACTIVE, __ATOMIC_RELEASE);
			break;
		}
		case 2:
		case 3: {
			unsigned n;

			i = u8(g) % RINGS;
			n = u8(g) % 32 + 1;
			for (unsigned k = 0; k < n && !rc; k++) {
				uint32_t w = op == 2 ? u32(g) : u8(g);

				if (active(g, i))
					rc = put(g, i, w, e);
			}
			if (rc < 0)
				return -1;
			break;
		}
		case 4:
		case 5:
			i = u8(g) % RINGS;
			r = ring(g, i);
			if (!active(g, i))
				break;
			__atomic_store_n(&r->head, g->wpos[i], __ATOMIC_RELEASE);
			if (op == 5)
				__atomic_store_n(&r->state, TC_QP_RING_EXITED, __ATOMIC_RELEASE);
			break;
		case 6:
			if (pass(g, NULL, e))
				return -1;
			break;
		case 7:
			i = u8(g) % RINGS;
			if (active(g, i) && event(g, i, e))
				return -1;
			break;
		case 8: {
			unsigned off = u16(g) % CODE_SIZE, n = u8(g);

			for (unsigned k = 0; k < n; k++)
				g->code[(off + k) % CODE_SIZE] = (uint8_t)u8(g);
			break;
		}
		case 9: {
			unsigned pid = PID0 + u8(g) % 4, start = u16(g), pages = u8(g) % 64 + 1;
			unsigned ps = u8(g);
			struct fmap *x;

			if (g->nmaps == MAX_MAPS)
				break;
			x = &g->maps[g->nmaps++];
			x->pid = pid;
			x->start = bases[ps >> 4 & 3] + ((uint64_t)start << 12);
			x->end = x->start + ((uint64_t)pages << 12);
			snprintf(x->path, sizeof(x->path), "%s", paths[ps & 3]);
			break;
		}
		case 10:
			i = u8(g) % RINGS;
			if (active(g, i)) {
				g->wpos[i] = ring(g, i)->tail + u32(g);
				__atomic_store_n(&ring(g, i)->head, g->wpos[i], __ATOMIC_RELEASE);
			}
			break;
		case 11:
			__atomic_store_n(&g->h->n_descs, (uint64_t)u16(g), __ATOMIC_RELEASE);
			break;
		}
	}
	return 0;
}

/* tc_emu_guest's run: the input played against the consumer. */
static int guest_run(void *ctx, const struct tc_qemu_run_ops *ops, void *arg, int *status,
		     struct tc_err *e)
{
	struct play *g = ctx;
	int rc;

	*status = 0;
	if (tc_qemu_run_attach(&g->r, g->shm, SHM_SIZE, e))
		return -1;
	g->ops = ops;
	g->arg = arg;
	g->h->state = TC_QP_RUNNING;
	rc = play_ops(g, e);
	if (!rc) {
		g->h->state = TC_QP_DONE;
		rc = tc_qemu_run_finish(g->r, ops, arg, e);
		CHECK(!rc || e->msg[0]);
	}
	tc_qemu_run_free(g->r);
	g->r = NULL;
	return rc;
}

static int guest_maps(void *ctx, pid_t pid, struct tc_maps *out, struct tc_err *e)
{
	struct play *g = ctx;

	memset(out, 0, sizeof(*out));
	if (!(out->v = calloc(g->nmaps + 1, sizeof(*out->v))))
		return tc_err_set(e, ENOMEM, "out of memory");
	for (size_t i = 0; i < g->nmaps; i++) {
		const struct fmap *x = &g->maps[i];
		struct tc_map *m = &out->v[out->n];

		if (x->pid != (uint32_t)pid)
			continue;
		*m = (struct tc_map){ .start = x->start, .end = x->end, .prot = PROT_READ,
				      .path = strdup(x->path) };
		if (!m->path) {
			tc_addr_filter_maps_free(out);
			return tc_err_set(e, ENOMEM, "out of memory");
		}
		out->n++;
	}
	return 0;
}

/* The code bytes at CODE_BASE (every process, host addresses); nothing elsewhere. */
static size_t guest_read(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct play *g = ctx;
	size_t n;

	(void)pid;
	if (addr < CODE_BASE || addr - CODE_BASE >= CODE_SIZE)
		return 0;
	n = CODE_SIZE - (addr - CODE_BASE);
	n = n < len ? n : len;
	memcpy(buf, g->code + (addr - CODE_BASE), n);
	return n;
}

static char out_dir[48], out_path[64];
static bool verbose;	/* FUZZ_EMULATE_VERBOSE: each input's outcome on stderr */

static void cleanup(void)
{
	char old[80];

	if (verbose)	/* the last input's file stays, to be looked at */
		return;
	snprintf(old, sizeof(old), "%s.old", out_path);
	unlink(out_path);
	unlink(old);
	rmdir(out_dir);
}

static void setup(struct play *g, const uint8_t *data, size_t len)
{
	struct tc_qp_hdr *h;

	memset(g, 0, sizeof(*g));
	g->p = data;
	g->end = data + len;
	CHECK((g->shm = calloc(1, SHM_SIZE)));
	h = g->h = g->shm;
	h->magic = TC_QP_MAGIC;
	h->version = TC_QP_VERSION;
	h->max_rings = RINGS;
	h->ring_entries = ENTRIES;
	h->ring_off = TC_QP_HDR_SIZE;
	h->ring_stride = STRIDE;
	h->desc_off = DESC_OFF;
	h->max_descs = DESCS;
	h->size = SHM_SIZE;
	h->n_descs = 1;		/* id 0 is never used */
	/* every process maps the program's code */
	for (unsigned p = 0; p < 4; p++)
		g->maps[g->nmaps++] = (struct fmap){ PID0 + p, CODE_BASE, CODE_BASE + CODE_SIZE,
						     "/fuzz/prog" };
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static char *const argv[] = { "/bin/true", NULL };
	struct play g;
	struct tc_emu_guest guest = { guest_run, guest_maps, guest_read, &g };
	struct tc_emu_opts o = { .argv = argv, .output = out_path, .guest = &guest };
	struct tc_emu_stats st;
	struct tc_err e = { 0 };
	bool etm;
	int rc;

	if (!len)
		return 0;
	setup(&g, data + 1, len - 1);
	etm = data[0] & 1;
	snprintf(fuzz_ctx, sizeof(fuzz_ctx), "%s", etm ? "ETM" : "PT");
	rc = etm ? tc_emu_etm_record(&o, &st, &e) : tc_emu_pt_qemu_record(&o, &st, &e);
	CHECK(!rc || e.msg[0]);
	if (verbose)
		fprintf(stderr, "fuzz_emulate %s: %s%s (%u threads, %llu instructions, %llu trace "
			"bytes)\n", fuzz_ctx, rc ? e.msg : "written to ", rc ? "" : out_path, st.threads,
			(unsigned long long)st.insns, (unsigned long long)st.bytes);
	if (g.r)
		tc_qemu_run_free(g.r);
	free(g.shm);
	return 0;
}

/* ---- seeds ---------------------------------------------------------------------------- */

struct seed {
	uint8_t b[4096];
	size_t n;
};

static void put8(struct seed *s, unsigned v)
{
	if (s->n < sizeof(s->b))
		s->b[s->n++] = (uint8_t)v;
}

static void put16(struct seed *s, unsigned v)
{
	put8(s, v & 255);
	put8(s, v >> 8 & 255);
}

static void s_code(struct seed *s, unsigned off, const uint8_t *c, unsigned n)
{
	put8(s, 8);
	put16(s, off);
	put8(s, n);
	for (unsigned i = 0; i < n; i++)
		put8(s, c[i]);
}

/* A descriptor at the code base (id = order of the calls, from 1). */
static void s_desc(struct seed *s, unsigned off, unsigned size, unsigned insns, unsigned kind,
		   unsigned last, unsigned target)
{
	put8(s, 0);
	put16(s, off);
	put16(s, size);
	put8(s, insns);
	put8(s, kind);
	put8(s, last);
	put16(s, target);
	put8(s, 0);
}

static void s_claim(struct seed *s, unsigned ring, unsigned tid, unsigned b)
{
	put8(s, 1);
	put8(s, ring);
	put8(s, tid);
	put8(s, b);
}

static void s_ids(struct seed *s, unsigned ring, const uint8_t *ids, unsigned n)
{
	put8(s, 3);
	put8(s, ring);
	put8(s, n - 1);
	for (unsigned i = 0; i < n; i++)
		put8(s, ids[i]);
}

static void s_op(struct seed *s, unsigned op, unsigned ring)
{
	put8(s, op);
	if (op != 6)
		put8(s, ring);
}

static void s_syscall(struct seed *s, unsigned ring, unsigned which, unsigned ret,
		      unsigned prot)
{
	put8(s, 7);
	put8(s, ring);
	put8(s, which << 1);
	put16(s, ret);
	put8(s, prot);
}

static void s_mmap(struct seed *s, unsigned ring, unsigned page, unsigned pages, unsigned path)
{
	put8(s, 7);
	put8(s, ring);
	put8(s, 1);		/* mmap, at the code base */
	put16(s, page);
	put8(s, pages);
	put8(s, path);
	put8(s, 0);
}

static void s_write(const char *dir, const char *name, const struct seed *s)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/seed-%s", dir, name);
	if ((f = fopen(path, "wb"))) {
		fwrite(s->b, 1, s->n, f);
		fclose(f);
	}
}

/* x86-64: mov ecx,3; l: dec ecx; jnz l; call f; syscall; syscall; f: ret */
static const uint8_t x86[] = { 0xb9, 3, 0, 0, 0, 0xff, 0xc9, 0x75, 0xfc, 0xe8, 6, 0, 0, 0,
			       0x0f, 0x05, 0x0f, 0x05, 0xcc, 0xcc, 0xc3 };
/* A64: mov x0,#3; l: subs x0,x0,#1; b.ne l; bl f; svc #0; f: ret */
static const uint8_t a64[] = { 0x60, 0, 0x80, 0xd2, 0, 0x04, 0, 0xf1, 0xe1, 0xff, 0xff, 0x54,
			       2, 0, 0, 0x94, 1, 0, 0, 0xd4, 0xc0, 0x03, 0x5f, 0xd6 };

/* The PT program's blocks, ids 1..6: entry, loop, call, f, syscall, exit. */
static void pt_prog(struct seed *s)
{
	put8(s, 0);		/* PT */
	s_code(s, 0, x86, sizeof(x86));
	s_desc(s, 0x00, 9, 3, TC_QP_COND, 2, 0x05);
	s_desc(s, 0x05, 4, 2, TC_QP_COND, 2, 0x05);
	s_desc(s, 0x09, 5, 1, TC_QP_CALL, 5, 0x14);
	s_desc(s, 0x14, 1, 1, TC_QP_RET, 1, 0);
	s_desc(s, 0x0e, 2, 1, TC_QP_SYSCALL, 2, 0);
	s_desc(s, 0x10, 2, 1, TC_QP_SYSCALL, 2, 0);
}

static void etm_prog(struct seed *s)
{
	put8(s, 1);		/* ETM */
	s_code(s, 0, a64, sizeof(a64));
	s_desc(s, 0x00, 12, 3, TC_QP_COND, 4, 0x04);
	s_desc(s, 0x04, 8, 2, TC_QP_COND, 4, 0x04);
	s_desc(s, 0x0c, 4, 1, TC_QP_CALL, 4, 0x14);
	s_desc(s, 0x14, 4, 1, TC_QP_RET, 4, 0);
	s_desc(s, 0x10, 4, 1, TC_QP_SYSCALL, 4, 0);
	s_desc(s, 0x10, 4, 1, TC_QP_SYSCALL, 4, 0);
}

/* Thread on ring r runs the program: the loop, the call, mmap (an mmap event, then its
 * system call's), exit. */
static void s_thread(struct seed *s, unsigned r, unsigned tid, unsigned b, bool sig)
{
	static const uint8_t run1[] = { 1, 2, 2, 3, 4, 5 }, run2[] = { 6 };

	s_claim(s, r, tid, b);
	s_ids(s, r, run1, sig ? 2 : sizeof(run1));
	if (sig) {	/* a handler (f) entered after the loop's branch, its rt_sigreturn */
		static const uint8_t h[] = { 4 }, rest[] = { 2, 3, 4, 5 };

		s_ids(s, r, h, 1);
		s_syscall(s, r, 3, 0, 0);
		s_ids(s, r, rest, sizeof(rest));
	}
	s_op(s, 4, r);
	s_op(s, 6, 0);
	s_mmap(s, r, 1, 1, 0);
	s_syscall(s, r, 0, 1, 5);
	s_ids(s, r, run2, 1);
	s_op(s, 5, r);
}

/* x86-64 at 0x100: lea rax,[rip+9]; call rax; rep movsb; jmp rax... (to 0x120); f: ret;
 * at 0x120 syscall */
static const uint8_t x86i[] = { 0x48, 0x8d, 0x05, 9, 0, 0, 0, 0xff, 0xd0, 0xf3, 0xa4, 0xff,
				0xe0, 0xcc, 0xcc, 0xcc, 0xc3 };
/* A64 at 0x100: adr x0,f; blr x0; isb; b 0x11c; f: ret; at 0x11c svc #0 */
static const uint8_t a64i[] = { 0x80, 0, 0, 0x10, 0, 0, 0x3f, 0xd6, 0xdf, 0x3f, 0x03, 0xd5,
				4, 0, 0, 0x14, 0xc0, 0x03, 0x5f, 0xd6 };
static const uint8_t sys_x86[] = { 0x0f, 0x05 }, sys_a64[] = { 1, 0, 0, 0xd4 };

/* Indirect calls and jumps, a rep instruction repeated, an ISB; then the same thread's
 * program exec'd (a new ring, TC_QP_R_EXEC) running the first seed's loop. */
static void s_indirect(struct seed *s, bool etm)
{
	put8(s, etm);
	s_code(s, 0x100, etm ? a64i : x86i, etm ? sizeof(a64i) : sizeof(x86i));
	s_code(s, 0x120 - (etm ? 4 : 0), etm ? sys_a64 : sys_x86, etm ? 4 : 2);
	if (etm) {
		s_desc(s, 0x100, 8, 2, TC_QP_ICALL, 4, 0);		/* 1 */
		s_desc(s, 0x110, 4, 1, TC_QP_RET, 4, 0);		/* 2 */
		s_desc(s, 0x108, 4, 1, TC_QP_OTHER, 4, 0);		/* 3 */
		s_desc(s, 0x10c, 4, 1, TC_QP_JUMP, 4, 0x11c);		/* 4 */
		s_desc(s, 0x11c, 4, 1, TC_QP_SYSCALL, 4, 0);		/* 5 */
	} else {
		s_desc(s, 0x100, 9, 2, TC_QP_ICALL, 2, 0);		/* 1 */
		s_desc(s, 0x110, 1, 1, TC_QP_RET, 1, 0);		/* 2 */
		s_desc(s, 0x109, 2, 1, TC_QP_OTHER, 2, 0);		/* 3: rep */
		s->b[s->n - 1] = 1;	/* its flags: TC_QP_F_REP */
		s_desc(s, 0x10b, 2, 1, TC_QP_IJUMP, 2, 0);		/* 4 */
		s_desc(s, 0x120, 2, 1, TC_QP_SYSCALL, 2, 0);		/* 5 */
	}
	s_claim(s, 0, 0, 0);
	if (etm)
		s_ids(s, 0, (const uint8_t[]){ 1, 2, 3, 4, 5 }, 5);
	else
		s_ids(s, 0, (const uint8_t[]){ 1, 2, 3, 3, 3, 4, 5 }, 7);
	s_op(s, 5, 0);
	s_op(s, 6, 0);
	/* the exec'd program: the loop of the first seeds, at the code base */
	s_code(s, 0, etm ? a64 : x86, etm ? sizeof(a64) : sizeof(x86));
	s_desc(s, 0x00, 9, 3, TC_QP_COND, 2, 0x05);			/* 6 */
	s_desc(s, 0x05, 4, 2, TC_QP_COND, 2, 0x05);			/* 7 */
	s_claim(s, 1, 0, 4);
	s_ids(s, 1, (const uint8_t[]){ 6, 7, 7 }, 3);
	s_op(s, 5, 1);
	s_op(s, 6, 0);
}

static void write_seeds(const char *dir)
{
	struct seed s;

	s.n = 0;
	s_indirect(&s, false);
	s_write(dir, "pt-indirect", &s);
	s.n = 0;
	s_indirect(&s, true);
	s_write(dir, "etm-indirect", &s);

	for (int etm = 0; etm < 2; etm++) {
		char name[32];

		/* one thread */
		s.n = 0;
		etm ? etm_prog(&s) : pt_prog(&s);
		s_thread(&s, 0, 0, 0, false);
		s_op(&s, 6, 0);
		snprintf(name, sizeof(name), "%s-one", etm ? "etm" : "pt");
		s_write(dir, name, &s);
		/* two threads of one process, interleaved; the second's ring left active
		 * (its process killed) */
		s.n = 0;
		etm ? etm_prog(&s) : pt_prog(&s);
		s_thread(&s, 0, 0, 0, false);
		s_claim(&s, 1, 1, 0);
		s_ids(&s, 1, (const uint8_t[]){ 1, 2, 3, 4 }, 4);
		s_op(&s, 4, 1);
		s_op(&s, 6, 0);
		s_ids(&s, 1, (const uint8_t[]){ 5 }, 1);
		snprintf(name, sizeof(name), "%s-threads", etm ? "etm" : "pt");
		s_write(dir, name, &s);
		/* a fork child (its own process, its parent the first thread), a clone */
		s.n = 0;
		etm ? etm_prog(&s) : pt_prog(&s);
		s_claim(&s, 0, 0, 0);
		s_ids(&s, 0, (const uint8_t[]){ 1, 2 }, 2);
		s_syscall(&s, 0, 2, TID0 + 1, 0);	/* clone returned the child's tid */
		s_thread(&s, 1, 1, 0x11, false);
		s_ids(&s, 0, (const uint8_t[]){ 2, 3, 4, 5, 6 }, 5);
		s_op(&s, 5, 0);
		s_op(&s, 6, 0);
		snprintf(name, sizeof(name), "%s-fork", etm ? "etm" : "pt");
		s_write(dir, name, &s);
		/* a signal handler between blocks */
		s.n = 0;
		etm ? etm_prog(&s) : pt_prog(&s);
		s_thread(&s, 0, 0, 0, true);
		s_op(&s, 6, 0);
		snprintf(name, sizeof(name), "%s-signal", etm ? "etm" : "pt");
		s_write(dir, name, &s);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *seeds = getenv("FUZZ_EMULATE_SEEDS");
	char *dir = out_dir;

	(void)argc;
	(void)argv;
	verbose = getenv("FUZZ_EMULATE_VERBOSE") != NULL;
	if (seeds && *seeds) {
		write_seeds(seeds);
		exit(0);
	}
	/* the perf.data each input makes: in memory (/dev/shm), one directory per process */
	snprintf(out_dir, sizeof(out_dir), "/dev/shm/fuzz_emulate-%d", (int)getpid());
	if (mkdir(dir, 0700) && errno != EEXIST)
		snprintf(out_dir, sizeof(out_dir), "/tmp/fuzz_emulate-%d", (int)getpid());
	mkdir(dir, 0700);
	snprintf(out_path, sizeof(out_path), "%s/out.data", dir);
	atexit(cleanup);
	return 0;
}
