/* The record loop: open the plan's events, map the data rings and AUX areas, start the
 * workload, drain everything into a perf.data file until the workload ends or a stop is
 * asked for, and account for lost or truncated trace. */
#ifndef TC_LIB_RECORD_RECORD_LOOP_H
#define TC_LIB_RECORD_RECORD_LOOP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/record/record_plan.h"
#include "lib/util/err.h"

struct tc_record_run {
	const struct tc_record_plan *plan;
	const char *sysfs_root;
	const char *output;
	unsigned data_pages, aux_pages;
	bool snapshot;			/* AUX in overwrite mode, copied on *snap_req */
	uint64_t snapshot_size;		/* -S SIZE: the latest bytes a snapshot takes of each
					 * AUX area (0: all of it) */
	bool cpu_wide;			/* -a / -C: every task on the CPUs */
	pid_t pid;			/* -p / -t target, 0: the workload (or none) */
	bool inherit;			/* follow children/threads of the task */
	bool all_threads;		/* -p: every thread of pid, not just pid itself */
	char **argv;			/* workload, NULL-terminated; NULL: none */
	int argc;
	char **cmdline;			/* tracectl's own argv for the cmdline feature */
	int cmdline_argc;
	volatile sig_atomic_t *stop_req;	/* set by SIGINT/SIGTERM handlers */
	volatile sig_atomic_t *snap_req;	/* set by SIGUSR2 */
	/* Called as soon as something must be told (a busy sink); msg is one sentence. */
	void (*notify)(void *ctx, const char *msg);
	void *ctx;
};

struct tc_record_stats {
	uint64_t aux_bytes, auxtrace_records, aux_records;
	uint64_t truncated, collision, partial, lost_records, lost_events, lost_samples;
	uint64_t data_bytes, snapshots;
	uint64_t snapshot_hits;		/* --snapshot-on samples that asked for one */
	/* The kernel's own count of records it could not write (read_format PERF_FORMAT_LOST,
	 * Linux 6.0+, read after the last drain; kernel_lost_known false on older kernels).
	 * It writes a ring's loss as a LOST record only in front of the next record that ring
	 * takes, so kernel_lost - lost_events were lost without a word in the file. */
	uint64_t kernel_lost;
	bool kernel_lost_known;
	uint32_t busy_cpus;		/* CPUs whose sink refused the event */
	bool renamed;			/* an old output became .old */
	bool file_opened;		/* the output was created (and is closed valid) */
	bool workload_started;
	int exit_status;		/* workload's wait status */
};

/* Record until done. Returns 0 with the file written and closed; -1 with e set (a file
 * begun is still closed as a valid perf.data when possible). */
int tc_record_loop_run(const struct tc_record_run *r, struct tc_record_stats *st, struct tc_err *e);

/* The busy-sink sentence for a sink whose events were refused on cpus (ncpus of them);
 * free_sinks lists reachable ones not held through sysfs (may be empty). */
void tc_record_loop_busy_msg(char *buf, size_t len, const char *sink, const int *cpus, size_t ncpus,
		     const char *free_sinks);

#endif
