/* Trace without trace hardware: run a program, follow its exact executed path per thread
 * and write it as a genuine Intel PT (x86-64: lib/emulate/emu_pt_qemu.c under qemu-x86_64
 * with tracectl's plugin, or lib/emulate/emu_pt.c under ptrace single-step) or CoreSight
 * ETMv4 (lib/emulate/emu_etm.c, aarch64 under qemu-user) perf.data recording. */
#ifndef TC_LIB_EMULATE_EMU_H
#define TC_LIB_EMULATE_EMU_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/util/err.h"

enum tc_emu_format { TC_EMU_AUTO, TC_EMU_PT, TC_EMU_ETM };

struct tc_maps;
struct tc_qemu_run_ops;

/* Tests and fuzzing (tests/fuzz/fuzz_emulate.c): what stands in for qemu and the guest's
 * processes in the QEMU-based emulators (emu_pt_qemu.c, emu_etm.c). run feeds ops as
 * tc_qemu_run_loop does (the caller's shared memory through tc_qemu_run_attach) and sets
 * the program's wait status; maps gives a process's mappings as /proc/PID/maps would (host
 * addresses); read its memory at a host address, as process_vm_readv (bytes read). */
struct tc_emu_guest {
	int (*run)(void *ctx, const struct tc_qemu_run_ops *ops, void *arg, int *status,
		   struct tc_err *e);
	int (*maps)(void *ctx, pid_t pid, struct tc_maps *out, struct tc_err *e);
	size_t (*read)(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len);
	void *ctx;
};

/* How an x86-64 program is followed: QEMU with tracectl's plugin when qemu-x86_64 and the
 * plugin are there (AUTO), or ptrace single-step (slow; the program's own code by default). */
enum tc_emu_engine { TC_EMU_ENGINE_AUTO, TC_EMU_ENGINE_QEMU, TC_EMU_ENGINE_PTRACE };

struct tc_emu_opts {
	char *const *argv;	/* the program (a path) and its arguments */
	const char *output;	/* perf.data to write */
	const char *filter;	/* perf address filter; NULL: all of user space (QEMU), the
				 * program's own code (ptrace) */
	enum tc_emu_engine engine;	/* x86-64 */
	const char *truth;	/* ground truth file, or NULL */
	bool truth_no_tid;	/* truth lines without the thread id (single-threaded tools) */
	bool no_retcomp;	/* PT: no return compression (DisRETC) */
	uint64_t sync_period;	/* PSB / A-sync period in bytes (0: 4096) */
	uint64_t repeat_bytes;	/* PT: repeat a cycle of the path until the trace has this
				 * many bytes (single-threaded programs; 0: off) */
	int rec_argc;		/* the recording command line, for the header */
	char *const *rec_argv;
	const char *qemu;	/* ETM: the qemu-aarch64 to run (NULL: from PATH) */
	const char *qemu_x86;	/* PT: the qemu-x86_64 to run (NULL: from PATH) */
	/* Trace control as the hardware's (record's --start-paused, --pause-on, --resume-on,
	 * -S). Triggers are code locations in uprobe syntax, FILE:SYMBOL or FILE:0xOFFSET
	 * (FILE a path or a name in the program's mappings): the trace pauses or resumes
	 * when a guest thread reaches that instruction. */
	bool start_paused;
	const char *const *pause_on, *const *resume_on;
	size_t npause, nresume;
	/* -S: a snapshot each time a guest thread reaches one of these (record's
	 * --snapshot-on, the same syntax) */
	const char *const *snapshot_on;
	size_t nsnapshot_on;
	uint64_t snapshot_size;	/* -S: trace bytes kept per thread, the latest (an AUX
				 * ring in overwrite mode); 0: every byte is kept */
	/* Set asynchronously by cmd/'s signal handlers, polled by the tracer: */
	volatile sig_atomic_t *snap_req;	/* -S: take a snapshot now (SIGUSR2) */
	volatile sig_atomic_t *stop_req;	/* stop the program and write what was traced
						 * (SIGINT, SIGTERM, SIGHUP) */
	const struct tc_emu_guest *guest;	/* NULL: qemu and real processes */
};

struct tc_emu_stats {
	uint64_t steps;		/* instructions the program executed while followed */
	uint64_t insns;		/* of those, inside the filter (traced) */
	uint64_t branches;	/* ground-truth branch lines */
	uint64_t bytes;		/* trace bytes written */
	unsigned threads;
	int status;		/* the program's wait status */
	bool interrupted;	/* *stop_req ended the run: the trace stops there */
	unsigned snapshots;	/* -S: snapshots written */
	/* repeat_bytes: ground-truth lines (from, to] are the cycle, repeated `repeats`
	 * more times after line `to`. */
	uint64_t cycle_from, cycle_to, repeats;
};

/* The format for a program from its ELF machine: PT for x86-64, ETM for aarch64. */
int tc_emu_format_of(const char *path, enum tc_emu_format *out, struct tc_err *e);

/* Closes the ground-truth file (if open) and clears *f; a failed close (full disk) is
 * an error naming path, so a truncated truth never passes for a complete one. */
int tc_emu_truth_close(FILE **f, const char *path, struct tc_err *e);

int tc_emu_pt_record(const struct tc_emu_opts *o, struct tc_emu_stats *st, struct tc_err *e);
/* x86-64 under qemu-x86_64 with tracectl's plugin (emu_pt_qemu.c): the same Intel PT. */
int tc_emu_pt_qemu_record(const struct tc_emu_opts *o, struct tc_emu_stats *st,
			  struct tc_err *e);
int tc_emu_etm_record(const struct tc_emu_opts *o, struct tc_emu_stats *st, struct tc_err *e);

#endif
