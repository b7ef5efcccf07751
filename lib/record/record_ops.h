/* What `record` does differently per trace PMU, as one table of operations (the role of
 * perf's struct auxtrace_record): the AUX event's default terms and sink, the CPUs it can
 * trace, the AUXTRACE_INFO words of the file, and the sinks to name when one refuses the
 * trace. One implementation per PMU (record_cs_etm.c, record_intel_pt.c), listed once in
 * record_ops.c; the plan and the loop ask these and name no PMU themselves. */
#ifndef TC_LIB_RECORD_RECORD_OPS_H
#define TC_LIB_RECORD_RECORD_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "lib/pmu/pmu.h"
#include "lib/util/err.h"

/* A format term the AUX event gets by default (perf's choice): set if the PMU has the term
 * and, with cap, unless caps/<cap> reads 0. */
struct tc_record_ops_term {
	const char *name;
	uint64_t value;
	const char *cap;
};

/* What AUXTRACE_INFO is made from. */
struct tc_record_ops_info {
	const struct tc_pmu *pmu;
	const char *sysfs_root;
	const struct perf_event_attr *aux;	/* the AUX event's attr */
	const int *cpus;			/* the traced CPUs; none with per-thread */
	size_t ncpus;
	bool snapshot;
	const struct perf_event_mmap_page *up;	/* a ring's user page (time), or NULL */
};

struct tc_record_ops {
	const char *name;
	enum tc_pmu_kind kind;
	const struct tc_record_ops_term *terms;	/* defaults, ended by a NULL name */
	/* The CPUs traced without -C; NULL: the online ones. */
	int (*default_cpus)(const struct tc_pmu *p, int *cpus, size_t max, size_t *n,
			    struct tc_err *e);
	/* Can the CPUs given with -C be traced? NULL: if they are online. */
	int (*check_cpus)(const struct tc_pmu *p, const int *cpus, size_t n, struct tc_err *e);
	/* --sink NAME for these CPUs: the value of the term sink_term, or a refusal that
	 * names the sinks that would work. NULL: the PMU has no sinks. */
	int (*sink)(const char *sysfs_root, const struct tc_pmu *p, const char *name,
		    const int *cpus, size_t ncpus, uint64_t *val, struct tc_err *e);
	const char *sink_term;
	/* In overwrite (snapshot) mode the AUX head is an offset that wraps (Intel PT), not
	 * a stream position (record_snapshot.h). */
	bool snapshot_head_wraps;
	/* Without --sink: 1 with the sink chosen for these CPUs (its name, the term's value
	 * and why, for the status line), 0 to leave the choice to the kernel. NULL: none. */
	int (*default_sink)(const char *sysfs_root, const struct tc_pmu *p, const int *cpus,
			    size_t ncpus, const char **name, uint64_t *val, char *why, size_t len);
	/* AUXTRACE_INFO: its type (TC_AUXTRACE_*), how many words, the words (w comes
	 * zeroed). */
	uint32_t info_type;
	size_t (*info_words)(const struct tc_record_ops_info *in);
	int (*info_fill)(const struct tc_record_ops_info *in, uint64_t *w, struct tc_err *e);
	/* For the message when a CPU's sink refused the trace (its AUX event ended empty and
	 * truncated): the sink in use (NULL: the default; sink_val is what --sink gave, 0
	 * none) and, in free_sinks, the other reachable sinks that would do ("" if none).
	 * NULL: no sinks to name. */
	void (*busy_sinks)(const char *sysfs_root, const struct tc_pmu *p, uint64_t sink_val,
			   const char **sink, char *free_sinks, size_t len);
};

extern const struct tc_record_ops tc_record_cs_etm_ops;
extern const struct tc_record_ops tc_record_intel_pt_ops;

/* The operations for a discovered PMU (by its kind), NULL if record has none. */
const struct tc_record_ops *tc_record_ops_find(const struct tc_pmu *p);
/* The operations named name ("cs_etm"), NULL if none. */
const struct tc_record_ops *tc_record_ops_by_name(const char *name);
/* The PMU names for messages, "cs_etm, intel_pt"; with_sink: only those that have sinks. */
void tc_record_ops_names(char *buf, size_t len, bool with_sink);

#endif
