/* Intel PT from a stream of executed instructions, per thread, as a user-space-only
 * hardware trace would show it, and the perf.data that holds it: what both x86-64 emulated
 * tracers share (lib/emulate/emu_pt.c steps a program under ptrace; emu_pt_qemu.c follows
 * it block by block through the QEMU plugin). A tracer hands over each instruction that
 * transfers control (and, under a filter, each that leaves or enters it) as a step; the
 * stream writes the packets and the ground truth, one line per taken branch. */
#ifndef TC_LIB_EMULATE_PT_STREAM_H
#define TC_LIB_EMULATE_PT_STREAM_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/emulate/emu.h"
#include "lib/emulate/emu_trigger.h"
#include "lib/emulate/pt_enc.h"
#include "lib/images/addr_filter.h"
#include "lib/isa/x86.h"
#include "lib/util/err.h"

/* One snapshot of a thread's trace (snapshot mode): what is new since the last one, at
 * most the ring, from stream position pos. */
struct tc_pt_stream_snap {
	uint64_t pos;
	size_t len;
	uint8_t *data;
};

/* A thread's trace. Tracers allocate their own thread state with this as its first member
 * (tc_pt_stream_add's size), so pointers to it stay valid as threads are added. */
struct tc_pt_stream_thr {
	pid_t pid;		/* its process (0: the stream's pid) */
	unsigned proc;		/* its process's program: 0 the first, k: procs[k - 1] */
	pid_t tid, ptid;
	struct tc_pt_enc x;
	uint64_t ip;		/* where the thread is */
	bool in;		/* ip is traced */
	bool paused;		/* a pause trigger stopped its trace (until a resume one) */
	struct tc_pt_stream_snap *snaps;	/* snapshot mode: the snapshots taken */
	size_t nsnaps, capsnaps;
	uint64_t snapped;	/* stream position the last snapshot reached */
};

/* One executed instruction at ip that went to next. */
struct tc_pt_stream_step {
	uint64_t ip, next;
	uint64_t ret;		/* the return address a traced call pushed */
	uint64_t sp;		/* after the step (emu_pt's repeat: the state a cycle returns to) */
	uint64_t branches;	/* ground-truth lines once the step is encoded */
	enum tc_x86_kind kind;	/* TC_X86_SYSCALL: tracing stops there, resumes at next */
	unsigned len;
	bool in, next_in;
};

/* A program after the first: a fork child (FORK, COMM records) or what a process exec'd
 * (COMM with exec). */
struct tc_pt_stream_proc {
	pid_t pid, ppid, ptid;
	bool exec;
	char comm[16];
};

struct tc_pt_stream {
	const struct tc_emu_opts *o;
	struct tc_emu_stats *st;
	pid_t pid;
	struct tc_pt_stream_thr **t;	/* in order of appearance */
	size_t n, cap;
	struct tc_addr_filter f;
	struct tc_emu_triggers trig;	/* o's pause/resume triggers (the tracer resolves) */
	bool all;		/* no filter: all of user space is traced */
	struct tc_maps maps;	/* the mappings the MMAP2 records give (executable ones) */
	unsigned *map_proc;	/* each one's program, as tc_pt_stream_thr's proc (NULL: 0) */
	size_t cap_map_proc;
	struct tc_pt_stream_proc *procs;	/* in order of appearance */
	size_t nprocs, capprocs;
	FILE *truth;
	char comm[16];
};

int tc_pt_stream_init(struct tc_pt_stream *s, const struct tc_emu_opts *o,
		      struct tc_emu_stats *st, struct tc_err *e);
void tc_pt_stream_fini(struct tc_pt_stream *s);

/* ip is traced (inside the filter, or anywhere without one). */
static inline bool tc_pt_stream_in(const struct tc_pt_stream *s, uint64_t ip)
{
	return s->all || tc_addr_filter_has(&s->f, ip);
}

/* The thread tid added last. */
struct tc_pt_stream_thr *tc_pt_stream_find(const struct tc_pt_stream *s, pid_t tid);
/* A new thread of size bytes (zeroed; >= sizeof(struct tc_pt_stream_thr)), parent s->pid. */
struct tc_pt_stream_thr *tc_pt_stream_add(struct tc_pt_stream *s, pid_t tid, size_t size,
					  struct tc_err *e);

/* The thread's trace begins (PSB+), at ip: enabled there if ip is traced. */
int tc_pt_stream_start(struct tc_pt_stream *s, struct tc_pt_stream_thr *t, uint64_t ip,
		       struct tc_err *e);
/* Tracing of t starts (or resumes) at ip: TIP.PGE. */
int tc_pt_stream_enable(struct tc_pt_stream *s, struct tc_pt_stream_thr *t, uint64_t ip,
			struct tc_err *e);
/* Encode step p of t (t is at p->ip). The triggers act where the step arrives: a pause
 * one stops t's trace there, before that instruction (FUP of it and TIP.PGD without IP: an
 * asynchronous disable, as the hardware's trace shows TraceEn cleared there), a resume one
 * starts it at that instruction (TIP.PGE). p->next_in is the filter's view. */
int tc_pt_stream_encode(struct tc_pt_stream *s, struct tc_pt_stream_thr *t,
			const struct tc_pt_stream_step *p, struct tc_err *e);

/* t stops asynchronously before t->ip, which it did not run (a pause trigger there, the
 * thread ended by another's exec or a fatal signal): FUP of it and TIP.PGD without IP, as
 * hardware shows an interrupt that ends user-only tracing. */
int tc_pt_stream_stop(struct tc_pt_stream *s, struct tc_pt_stream_thr *t, struct tc_err *e);

/* Snapshot mode (o->snapshot_size): every thread's ring as it is now, what is new since the
 * last snapshot (as record's -S copies an AUX buffer on SIGUSR2). */
int tc_pt_stream_snapshot(struct tc_pt_stream *s, struct tc_err *e);

/* Write o->output: one AUXTRACE queue per thread (perf's per-thread mode) with COMM, MMAP2
 * of s->maps' executable file mappings, FORK/EXIT of each thread, build ids; a program of
 * s->procs gets its FORK from its parent and its COMM (or a COMM with exec), then its own
 * MMAP2 records. In snapshot mode a last snapshot is taken and each snapshot is an AUXTRACE
 * of its thread's queue. */
int tc_pt_stream_write(struct tc_pt_stream *s, struct tc_err *e);

#endif
