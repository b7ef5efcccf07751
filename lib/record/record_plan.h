/* The events `tracectl record` opens, built from its options and the discovered PMUs without
 * touching the kernel: per-CPU AUX events, a side-band dummy event per CPU, trigger events
 * (tracepoint, uprobe, counter) grouped under the AUX event to pause or resume it, and
 * sampled events (-e) recorded alongside the trace. */
#ifndef TC_LIB_RECORD_RECORD_PLAN_H
#define TC_LIB_RECORD_RECORD_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/pmu/perf_attr_ext.h"
#include "lib/pmu/pmu.h"
#include "lib/util/err.h"
#include "lib/util/strv.h"

#define TC_REC_MAX_TRIGGERS 8

/* What the AUX event traces (perf's /u and /k modifiers). */
enum tc_record_space { TC_SPACE_BOTH, TC_SPACE_USER, TC_SPACE_KERNEL };

struct tc_record_opts {
	const char *pmu;		/* NULL: the one present */
	const char *config;		/* "term=value,..." or NULL */
	const char *sink;		/* sink name (a PMU with sinks) or NULL */
	const char *cpu_list;		/* -C, NULL: all CPUs */
	pid_t pid, tid;			/* -p / -t, 0 if not given */
	bool per_thread;		/* one event following the task, no CPU */
	bool workload;			/* a command is started (enable_on_exec) */
	bool snapshot, start_paused;
	enum tc_record_space space;	/* exclude_kernel / exclude_user of the AUX event */
	const char *pause_on[TC_REC_MAX_TRIGGERS];
	const char *resume_on[TC_REC_MAX_TRIGGERS];
	size_t npause, nresume;
	const char *events[TC_REC_MAX_TRIGGERS];	/* -e: sampled, no aux_action */
	size_t nevents;
	const char *snapshot_on[TC_REC_MAX_TRIGGERS];	/* --snapshot-on: each hit (a
							 * sample) takes a snapshot (-S) */
	size_t nsnapshot_on;
	const char *tracefs;		/* tracefs mount (events/<group>/<name>/id), NULL: find */
};

enum tc_record_role {
	TC_ROLE_AUX,
	TC_ROLE_SIDEBAND,
	TC_ROLE_PAUSE,
	TC_ROLE_RESUME,
	TC_ROLE_SAMPLE,
	TC_ROLE_SNAPSHOT	/* --snapshot-on: sampled like -e; a sample takes a snapshot */
};

struct tc_record_event {
	char pmu[32]; /* the trace PMU's name, "software", "tracepoint", "uprobe" */
	enum tc_record_role role;
	char *trigger;			/* the EVENT as given, for triggers and -e */
	char *uprobe_path;		/* owned; attr.config1 points at it */
	int cpu;			/* -1: any CPU (per-thread) */
	int group_leader; /* index of the group's leader (itself for a leader), -1 none */
	struct tc_attr a;
};

struct tc_record_plan {
	const struct tc_pmu *pmu;	/* the trace PMU (points into the pmu list) */
	int cpus[1024];
	size_t ncpus;			/* 0 with per_thread */
	uint64_t sink_hash;		/* the sink term's value (the sink's hash), 0 none */
	char sink[64];			/* the sink: --sink's, or chosen (sink_auto); "" none */
	bool sink_auto;			/* chosen by the PMU's default_sink */
	char sink_why[160];		/* why that one, for the status line */
	char terms[512];		/* terms set on the AUX event, for messages */
	struct tc_record_event *ev;
	size_t n, cap;
	bool pause_resume;		/* uses aux_action bits: needs Linux 6.13 */
	char tracefs[4096];		/* where tracepoints were resolved ("" if none found) */
};

/* The sysfs tracefs mount under root ("<root>/kernel/tracing"), if its events/ exists. */
int tc_record_plan_tracefs_find(const char *sysfs_root, char *buf, size_t len);

/* Choose the PMU, check CPUs, terms and the sink, resolve triggers, build every attr.
 * A refusal fills e with a sentence that says what would work. */
int tc_record_plan_build(const char *sysfs_root, const struct tc_pmu_list *pmus,
			 const struct tc_record_opts *o, struct tc_record_plan *plan,
			 struct tc_err *e);
void tc_record_plan_free(struct tc_record_plan *plan);

/* Build just one trigger event (EVENT syntax of --pause-on and -e); for tests and the plan.
 * It samples every hit: IP, TID, TIME, CPU, IDENTIFIER, and RAW for a tracepoint. */
int tc_record_plan_trigger_attr(const char *sysfs_root, const char *tracefs, const char *spec,
			struct tc_record_event *ev, struct tc_err *e);
/* The side-band dummy event's attr (COMM, MMAP2, FORK/EXIT, SWITCH with sample_id_all). */
void tc_record_plan_sideband_attr(struct tc_attr *a, bool cpu_wide, bool workload);

/* Parse a CPU list ("0-3,6"); -1 on a syntax error. */
int tc_record_plan_parse_cpus(const char *s, int *cpus, size_t max, size_t *n);

const char *tc_record_plan_role_name(enum tc_record_role r);

#endif
