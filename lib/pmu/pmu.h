/* Trace PMU discovery under <root>/bus/event_source/devices: what `tracectl list` shows
 * and what `record` validates against. */
#ifndef TC_LIB_PMU_PMU_H
#define TC_LIB_PMU_PMU_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/pmu/pmu_format.h"
#include "lib/util/diag.h"
#include "lib/util/err.h"
#include "lib/util/strv.h"

enum tc_pmu_kind { TC_PMU_CS_ETM, TC_PMU_INTEL_PT };

struct tc_pmu_kv {
	char *name;
	char *value;
};

struct tc_pmu_cs_sink {
	char *name;
	char *hash_str;		/* as the file holds it, e.g. "0xf2b4a2c1" */
	uint64_t hash;
	int hash_ok;		/* 0 if the file could not be read or parsed */
	bool claimed;		/* enabled through sysfs (enable_sink reads 1) when listed */
};

/* A link of the CoreSight device graph: from's connections/out:N points at to. */
struct tc_pmu_cs_edge {
	char *from, *to;
};

struct tc_pmu_cs_cpu {
	int cpu;
	char *device;		/* coresight device name the cpuN link points at, or NULL */
	const char *etm;	/* "ETMv3", "PTM", "ETMv4", "ETE", or NULL if unknown */
	int trace_id;		/* -1 if unknown */
	struct tc_strv sinks;	/* perf sinks this CPU's tracer reaches */
};

struct tc_pmu {
	char *name;
	enum tc_pmu_kind kind;
	int type;		/* perf_event_attr.type, -1 if unreadable */
	struct tc_pmu_format *formats;
	size_t nformats;
	struct tc_pmu_kv *caps;	/* intel_pt caps/ */
	size_t ncaps;
	struct tc_pmu_cs_sink *sinks;	/* cs_etm sinks/ */
	size_t nsinks;
	struct tc_pmu_cs_cpu *cpus;	/* cs_etm cpuN, sorted by cpu */
	size_t ncpus;
	struct tc_strv common_sinks;	/* sinks every CPU reaches */
	struct tc_pmu_cs_edge *edges;	/* the device graph, as sysfs links it */
	size_t nedges;
};

struct tc_pmu_list {
	char *devices_dir;
	struct tc_pmu *pmus;
	size_t n;
	struct tc_strv unsupported;	/* trace PMUs we know of but do not handle */
	struct tc_diag diag;		/* problems with individual files; listing goes on */
};

/* Does the PMU report capabilities (caps/, Intel PT's way) rather than sinks and per-CPU
 * tracers (CoreSight's)? What `list` shows of it follows. */
bool tc_pmu_has_caps(const struct tc_pmu *p);

/* The PMU names tracectl handles, for messages. */
extern const char *const tc_pmu_supported[];

/* Fails only when the devices directory itself cannot be read. */
int tc_pmu_discover(const char *sysfs_root, struct tc_pmu_list *out, struct tc_err *e);
void tc_pmu_list_free(struct tc_pmu_list *l);

const struct tc_pmu *tc_pmu_find(const struct tc_pmu_list *l, const char *name);
const struct tc_pmu_format *tc_pmu_term(const struct tc_pmu *p, const char *term);
const struct tc_pmu_cs_sink *tc_pmu_sink(const struct tc_pmu *p, const char *name);

/* CoreSight part: cpus, ETM versions, trace IDs, the device graph, sink reachability and
 * claims (cs_topo.c). */
int tc_cs_topo_build(const char *sysfs_root, const char *pmu_dir, struct tc_pmu *p,
		   struct tc_diag *diag);
/* Is sink enabled through sysfs (bus/coresight/devices/<sink>/enable_sink reads non-zero)?
 * Such a sink serves that session, not perf's. Read now, not when the PMU was listed. */
bool tc_cs_topo_sink_claimed(const char *sysfs_root, const char *sink);
/* The kind of a CoreSight device from the name the kernel gives it: "ETR", "ETF", "ETB",
 * "TRBE", "TPIU", "funnel", "replicator", "ETM", or NULL if it is none of these. */
const char *tc_cs_topo_kind(const char *device);

#endif
