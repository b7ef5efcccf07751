/* record for CoreSight ETM (cs_etm): CPUs with a tracer, sinks chosen by their hash in the
 * sinkid term, and per-CPU tracer registers in AUXTRACE_INFO, read from sysfs through one
 * table as perf's cs-etm.c does (tools/perf/arch/arm/util/cs-etm.c). */
#include "lib/record/record_ops.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "lib/perfdata/auxtrace_info.h"
#include "lib/pmu/pmu.h"
#include "lib/util/sysfs.h"

static const struct tc_pmu_cs_cpu *cs_cpu(const struct tc_pmu *p, int cpu)
{
	for (size_t i = 0; i < p->ncpus; i++)
		if (p->cpus[i].cpu == cpu)
			return &p->cpus[i];
	return NULL;
}

/* --- CPUs and sinks ---------------------------------------------------------------- */

/* Every CPU with a tracer (cpuN link). */
static int default_cpus(const struct tc_pmu *p, int *cpus, size_t max, size_t *n,
			struct tc_err *e)
{
	for (size_t i = 0; i < p->ncpus && i < max; i++)
		cpus[(*n)++] = p->cpus[i].cpu;
	if (!*n)
		return tc_err_set(e, ENODEV, "cs_etm lists no CPU tracers (cpuN links)");
	return 0;
}

static int check_cpus(const struct tc_pmu *p, const int *cpus, size_t n, struct tc_err *e)
{
	for (size_t i = 0; i < n; i++)
		if (!cs_cpu(p, cpus[i])) {
			char have[256] = "";

			for (size_t k = 0; k < p->ncpus; k++)
				snprintf(have + strlen(have), sizeof(have) - strlen(have),
					 "%s%d", k ? "," : "", p->cpus[k].cpu);
			return tc_err_set(e, ENODEV, "cpu %d has no CoreSight tracer; CPUs "
					  "with one: %s", cpus[i], have);
		}
	return 0;
}

/* Sinks every traced CPU reaches and sysfs does not hold, for messages. */
static void usable_sinks(const char *root, const struct tc_pmu *p, const int *cpus, size_t ncpus,
			 char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t s = 0; s < p->nsinks; s++) {
		const char *name = p->sinks[s].name;
		bool ok = !tc_cs_topo_sink_claimed(root, name);

		for (size_t i = 0; ok && i < ncpus; i++) {
			const struct tc_pmu_cs_cpu *c = cs_cpu(p, cpus[i]);

			ok = c && tc_strv_has(&c->sinks, name);
		}
		if (ok && ncpus)
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", *buf ? ", " : "",
				 name);
	}
	if (!*buf)
		snprintf(buf, len, "none for these CPUs (a per-CPU sink such as TRBE serves one "
			 "CPU: choose it with -C)");
}

/* A sink every traced CPU reaches and sysfs does not hold; its hash goes into sinkid. */
static int sink(const char *root, const struct tc_pmu *p, const char *name, const int *cpus,
		size_t ncpus, uint64_t *val, struct tc_err *e)
{
	const struct tc_pmu_cs_sink *s;
	char ok[400];

	usable_sinks(root, p, cpus, ncpus, ok, sizeof(ok));
	s = tc_pmu_sink(p, name);
	if (!s)
		return tc_err_set(e, ENOENT, "no sink '%s' in %s/sinks; sinks that would work: %s",
				  name, p->name, ok);
	if (!s->hash_ok)
		return tc_err_set(e, EIO, "sink '%s': its hash file could not be read", name);
	for (size_t i = 0; i < ncpus; i++) {
		const struct tc_pmu_cs_cpu *c = cs_cpu(p, cpus[i]);

		if (!c || !tc_strv_has(&c->sinks, name))
			return tc_err_set(e, EINVAL,
					  "sink '%s' is not reachable from cpu %d; sinks "
					  "that would work: %s",
					  name, cpus[i], ok);
	}
	if (tc_cs_topo_sink_claimed(root, name))
		return tc_err_set(e, EBUSY, "sink '%s' is enabled through sysfs "
				  "(%s/bus/coresight/devices/%s/enable_sink reads 1), so perf "
				  "cannot use it; write 0 there when that session is done, or use "
				  "another sink: %s", name, root, name, ok);
	*val = s->hash;
	return 0;
}

/* Without --sink: a sink every traced CPU reaches and sysfs does not hold, an ETR before an
 * ETF before any other (system memory holds the most trace). None where each CPU has its
 * own (TRBE) or nothing is common: the kernel then takes each CPU's default. */
static int default_sink(const char *root, const struct tc_pmu *p, const int *cpus, size_t ncpus,
			const char **name, uint64_t *val, char *why, size_t len)
{
	static const char *const order[] = { "ETR", "ETF", "ETB" };
	const struct tc_pmu_cs_sink *best = NULL;
	size_t rank = sizeof(order) / sizeof(order[0]), r;

	for (size_t s = 0; s < p->nsinks; s++) {
		const struct tc_pmu_cs_sink *k = &p->sinks[s];
		const char *kind = tc_cs_topo_kind(k->name);
		bool ok = k->hash_ok && !tc_cs_topo_sink_claimed(root, k->name);

		for (size_t i = 0; ok && i < ncpus; i++) {
			const struct tc_pmu_cs_cpu *c = cs_cpu(p, cpus[i]);

			ok = c && tc_strv_has(&c->sinks, k->name);
		}
		for (r = 0; ok && r < rank; r++)
			if (kind && !strcmp(kind, order[r]))
				break;
		if (ok && (!best || r < rank))
			best = k, rank = r;
	}
	if (!best)
		return 0;
	*name = best->name;
	*val = best->hash;
	snprintf(why, len, "%s, reached by every traced CPU%s", tc_cs_topo_kind(best->name) ?
		 tc_cs_topo_kind(best->name) : "a sink", p->nsinks > 1 ? "; ETR preferred, "
		 "then ETF" : "");
	return 1;
}

/* The sink given by its hash (or the default), and the sinks every CPU of the PMU reaches
 * that sysfs does not hold. */
static void busy_sinks(const char *root, const struct tc_pmu *p, uint64_t sink_val,
		       const char **sink, char *free_sinks, size_t len)
{
	*sink = NULL;
	free_sinks[0] = '\0';
	for (size_t s = 0; s < p->nsinks; s++)
		if (sink_val && p->sinks[s].hash == sink_val)
			*sink = p->sinks[s].name;
	for (size_t s = 0; s < p->common_sinks.n; s++) {
		const char *name = p->common_sinks.v[s];

		if ((*sink && !strcmp(name, *sink)) || tc_cs_topo_sink_claimed(root, name))
			continue;
		snprintf(free_sinks + strlen(free_sinks), len - strlen(free_sinks), "%s%s",
			 *free_sinks ? ", " : "sinks reachable from these CPUs and not held "
			 "through sysfs: ", name);
	}
	if (*free_sinks)
		snprintf(free_sinks + strlen(free_sinks), len - strlen(free_sinks),
			 " (--sink NAME)");
}

/* --- AUXTRACE_INFO ----------------------------------------------------------------- */

/* An ETM version's block: its magic and the registers read from sysfs, each a file under
 * the PMU's cpuN directory (TRCCONFIGR is not read: it follows from the event's config). */
struct cs_reg {
	unsigned param;		/* index among the block's registers (auxtrace_info.h) */
	const char *path;
};

static const struct cs_reg etmv4_regs[] = {
	{ TC_CS_ETMV4_TRCTRACEIDR, "mgmt/trctraceid" },
	{ TC_CS_ETMV4_TRCIDR0, "trcidr/trcidr0" },
	{ TC_CS_ETMV4_TRCIDR1, "trcidr/trcidr1" },
	{ TC_CS_ETMV4_TRCIDR2, "trcidr/trcidr2" },
	{ TC_CS_ETMV4_TRCIDR8, "trcidr/trcidr8" },
	{ TC_CS_ETMV4_TRCAUTHSTATUS, "mgmt/trcauthstatus" },
};

#define ETMV4_BLOCK (TC_CS_BLK_HDR_WORDS + TC_CS_ETMV4_NR_PARAMS)

/* TRCCONFIGR as perf derives it from the event's config (tools/perf/arch/arm/util/cs-etm.c):
 * the ETM_OPT_* bit of config to the register bit it enables. */
static uint64_t trcconfigr(uint64_t config)
{
	static const struct { int opt, bit; } map[] = {
		{ 8, 3 },	/* branch_broadcast -> BB */
		{ 12, 4 },	/* cycacc -> CCI */
		{ 14, 6 },	/* contextid1 -> CID */
		{ 28, 11 },	/* timestamp -> TS */
		{ 29, 12 },	/* retstack -> RS */
	};
	uint64_t v = 0;

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (config & (1ULL << map[i].opt))
			v |= 1ULL << map[i].bit;
	if (config & (1ULL << 15))	/* contextid2 -> VMID + VMIDOPT */
		v |= (1ULL << 7) | (1ULL << 15);
	return v;
}

/* A register file of a CPU's tracer; 0 if it cannot be read (as perf leaves it). */
static uint64_t reg(const char *dir, int cpu, const char *name)
{
	char p[4200];
	uint64_t v = 0;

	tc_sysfs_pathf(p, sizeof(p), "%s/cpu%d/%s", dir, cpu, name);
	tc_sysfs_read_u64(p, 0, &v, NULL);
	return v;
}

static size_t info_words(const struct tc_record_ops_info *in)
{
	return TC_CS_HDR_WORDS + in->ncpus * ETMV4_BLOCK;
}

/* Header version 1, then an ETMv4 block per traced CPU. */
static int info_fill(const struct tc_record_ops_info *in, uint64_t *w, struct tc_err *e)
{
	char dir[4096];

	(void)e;
	tc_sysfs_pathf(dir, sizeof(dir), "%s/bus/event_source/devices/%s", in->sysfs_root,
		       in->pmu->name);
	w[TC_CS_HDR_VERSION] = TC_CS_HDR_VERSION_1;
	w[TC_CS_HDR_PMU_TYPE_CPUS] = (uint64_t)in->aux->type << 32 | in->ncpus;
	w[TC_CS_HDR_SNAPSHOT] = in->snapshot;
	for (size_t i = 0; i < in->ncpus; i++) {
		uint64_t *b = w + TC_CS_HDR_WORDS + i * ETMV4_BLOCK;
		uint64_t *param = b + TC_CS_BLK_HDR_WORDS;

		b[TC_CS_BLK_MAGIC] = TC_CS_ETMV4_MAGIC;
		b[TC_CS_BLK_CPU] = (uint32_t)in->cpus[i];
		b[TC_CS_BLK_NR_PARAMS] = TC_CS_ETMV4_NR_PARAMS;
		param[TC_CS_ETMV4_TRCCONFIGR] = trcconfigr(in->aux->config);
		for (size_t r = 0; r < sizeof(etmv4_regs) / sizeof(etmv4_regs[0]); r++)
			param[etmv4_regs[r].param] = reg(dir, in->cpus[i], etmv4_regs[r].path);
	}
	return 0;
}

/* --- the operations ---------------------------------------------------------------- */

/* perf's defaults: timestamps and context IDs. */
static const struct tc_record_ops_term terms[] = {
	{ "timestamp", 1, NULL },
	{ "contextid", 1, NULL },
	{ NULL, 0, NULL },
};

const struct tc_record_ops tc_record_cs_etm_ops = {
	.name = "cs_etm",
	.kind = TC_PMU_CS_ETM,
	.terms = terms,
	.default_cpus = default_cpus,
	.check_cpus = check_cpus,
	.sink = sink,
	.default_sink = default_sink,
	.sink_term = "sinkid",
	.info_type = TC_AUXTRACE_CS_ETM,
	.info_words = info_words,
	.info_fill = info_fill,
	.busy_sinks = busy_sinks,
};
