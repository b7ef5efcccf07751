/* The consumer side of tracectl's QEMU plugin (lib/emulate/qemu_plugin/, the shared memory
 * in qp_shm.h): run a program under qemu-x86_64 / qemu-aarch64 with tracectl-qemu.so, drain
 * every guest thread's ring while it runs and hand the caller, per thread and in the order
 * that thread executed them, its translation blocks and system call returns, plus where each
 * thread starts and ends. Threads are told apart by their real TIDs. */
#ifndef TC_LIB_EMULATE_QEMU_RUN_H
#define TC_LIB_EMULATE_QEMU_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/emulate/qemu_plugin/qp_shm.h"
#include "lib/util/err.h"

/* A system call that returned in the guest. */
struct tc_qemu_run_sys {
	int64_t num, ret;
	uint64_t args[6];
};

/* A file the guest mapped with PROT_EXEC, seen by the plugin as mmap returned (guest
 * addresses). */
struct tc_qemu_run_map {
	uint64_t addr, len, pgoff, dev, ino;
	uint32_t prot, flags;
	const char *path;
};

/* A guest thread: its process (a qemu process: the first, or a fork child), the process's
 * parent and the thread that forked it (0: the first process). */
struct tc_qemu_run_thr {
	uint32_t pid, tid, ppid, ptid;
	uint64_t guest_base;	/* host address - guest address in its qemu process */
	bool exec;		/* the first thread of a program the process exec'd */
	char comm[16];		/* exec: the program's name */
};

/* What the caller is handed; each returns 0, or -1 with e set to stop the run (qemu is
 * killed). Any may be NULL. */
struct tc_qemu_run_ops {
	/* Thread t ran its first block (start) or has exited and every block of it was
	 * handed over (!start). */
	int (*thread)(void *arg, const struct tc_qemu_run_thr *t, bool start, struct tc_err *e);
	int (*block)(void *arg, uint32_t tid, const struct tc_qp_desc *d, struct tc_err *e);
	int (*syscall)(void *arg, uint32_t tid, const struct tc_qemu_run_sys *s,
		       struct tc_err *e);
	/* Before the mmap's syscall. */
	int (*mmap)(void *arg, uint32_t tid, const struct tc_qemu_run_map *m, struct tc_err *e);
};

struct tc_qemu_run_opts {
	const char *qemu;	/* qemu-x86_64 or qemu-aarch64, a path or looked up in PATH */
	const char *plugin;	/* tracectl-qemu.so (NULL: tc_qemu_run_plugin's) */
	char *const *argv;	/* the guest program and its arguments */
	uint32_t ring_entries;	/* per thread, a power of two (0: 256 Ki) */
	uint32_t max_rings;	/* guest threads alive at once (0: 64) */
	uint64_t max_descs;	/* different blocks (0: 4 Mi) */
	const char *ld_prefix;	/* qemu's -L (NULL: none), kept across the guest's execs */
	/* Set by a signal handler: qemu is killed, what the rings hold is handed over and
	 * tc_qemu_run_loop returns as if the program had ended (NULL: never). */
	volatile sig_atomic_t *stop_req;
};

struct tc_qemu_run;

/* Where tracectl-qemu.so is: $TRACECTL_QEMU_PLUGIN if set; else beside the running
 * tracectl (installed), or in the build tree's build/qemu_plugin/ (tracectl at the top,
 * build/obj/tracectl, or the test programs in build/obj/unit/ and tools/). */
int tc_qemu_run_plugin(char *out, size_t size, struct tc_err *e);

/* Finds qemu (name or path) in PATH into out; -1 with an error naming Debian's qemu-user. */
int tc_qemu_run_which(const char *qemu, char *out, size_t size, struct tc_err *e);

/* Makes the shared memory and starts qemu with the plugin on it; qemu is killed when the
 * caller dies (PR_SET_PDEATHSIG). */
int tc_qemu_run_start(struct tc_qemu_run **out, const struct tc_qemu_run_opts *o,
		      struct tc_err *e);
/* The first qemu's pid: the guest's address space is qemu's (/proc/PID/maps); a fork
 * child's is its own qemu process's (tc_qemu_run_thr's pid). */
pid_t tc_qemu_run_pid(const struct tc_qemu_run *r);

/* Drains the rings into ops until qemu and every process the guest forked have exited and
 * everything they wrote is handed over; *status is the first qemu's wait status (the
 * guest's exit status or its fatal signal; SIGKILL after a stop request,
 * tc_qemu_run_stopped then true). */
int tc_qemu_run_loop(struct tc_qemu_run *r, const struct tc_qemu_run_ops *ops, void *arg,
		     int *status, struct tc_err *e);

bool tc_qemu_run_stopped(const struct tc_qemu_run *r);

/* Kills qemu if it still runs, reaps it, removes the shared memory. */
void tc_qemu_run_free(struct tc_qemu_run *r);

/* Tests and fuzzing (tests/fuzz/fuzz_emulate.c): the consumer over a shared memory image
 * the caller made and writes as the plugin would, with no qemu and no process behind it.
 * attach checks the header's layout against size (the memory stays the caller's, also
 * after tc_qemu_run_free); pass is one of tc_qemu_run_loop's passes over the rings (*n
 * counts the entries handed over); finish passes until nothing moves, then hands over the
 * rings still ACTIVE as those of a process that died (their unpublished entries too). */
int tc_qemu_run_attach(struct tc_qemu_run **out, void *mem, size_t size, struct tc_err *e);
int tc_qemu_run_pass(struct tc_qemu_run *r, const struct tc_qemu_run_ops *ops, void *arg,
		     uint64_t *n, struct tc_err *e);
int tc_qemu_run_finish(struct tc_qemu_run *r, const struct tc_qemu_run_ops *ops, void *arg,
		       struct tc_err *e);

#endif
