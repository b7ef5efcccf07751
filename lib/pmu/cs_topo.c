/* CoreSight topology from sysfs: which tracer each CPU has and which perf sinks it reaches
 * through the device graph (bus/coresight/devices/<dev>/connections/out:N links). */
#include "lib/pmu/pmu.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/diag.h"
#include "lib/util/grow.h"
#include "lib/util/sysfs.h"

/* TRCDEVARCH fields (ETE: ARCHVER 5, ARCHPART 0xA13), ETMIDR PTM marker: as perf reads them. */
#define DEVARCH_ARCHVER(x)	(((x) >> 12) & 0xf)
#define DEVARCH_ARCHPART(x)	((x) & 0xfff)
#define ETMIDR_PTM_VERSION	0x300u

struct graph {
	struct tc_pmu_cs_edge *e;
	size_t n, cap;
};

static int graph_add(struct graph *g, const char *from, const char *to)
{
	if (tc_grow((void **)&g->e, &g->cap, g->n + 1, sizeof(*g->e)))
		return -1;
	g->e[g->n].from = strdup(from);
	g->e[g->n].to = strdup(to);
	g->n++;
	return 0;
}

bool tc_cs_topo_sink_claimed(const char *root, const char *sink)
{
	char p[4096];
	uint64_t v;

	tc_sysfs_pathf(p, sizeof(p), "%s/bus/coresight/devices/%s/enable_sink", root, sink);
	return tc_sysfs_read_u64(p, 10, &v, NULL) == 0 && v != 0;
}

const char *tc_cs_topo_kind(const char *device)
{
	static const struct {
		const char *prefix, *kind;
	} kinds[] = {
		{ "tmc_etr", "ETR" }, { "tmc_etf", "ETF" }, { "tmc_etb", "ETB" },
		{ "etb", "ETB" }, { "trbe", "TRBE" }, { "tpiu", "TPIU" }, { "funnel", "funnel" },
		{ "replicator", "replicator" }, { "etm", "ETM" }, { "ete", "ETE" },
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strncmp(device, kinds[i].prefix, strlen(kinds[i].prefix)))
			return kinds[i].kind;
	return NULL;
}

static int is_out_link(const char *name)
{
	if (strncmp(name, "out:", 4) || !name[4])
		return 0;
	for (const char *p = name + 4; *p; p++)
		if (!isdigit((unsigned char)*p))
			return 0;
	return 1;
}

static void load_graph(const char *root, struct graph *g, struct tc_diag *diag)
{
	char dir[4096], cdir[4200], link[4300], target[256];
	struct tc_strv devs = { 0 };
	struct tc_err e;

	tc_sysfs_pathf(dir, sizeof(dir), "%s/bus/coresight/devices", root);
	if (tc_sysfs_list(dir, &devs, &e)) {
		tc_diag_add(diag,
			    "CoreSight device graph unavailable, sink reachability unknown: %s",
			    e.msg);
		return;
	}
	for (size_t i = 0; i < devs.n; i++) {
		struct tc_strv conns = { 0 };

		tc_sysfs_pathf(cdir, sizeof(cdir), "%s/%s/connections", dir, devs.v[i]);
		if (!tc_sysfs_exists(cdir))
			continue;	/* a device with no outputs, e.g. a sink */
		if (tc_sysfs_list(cdir, &conns, &e)) {
			tc_diag_add(diag, "%s", e.msg);
			continue;
		}
		for (size_t j = 0; j < conns.n; j++) {
			if (!is_out_link(conns.v[j]))
				continue;
			tc_sysfs_pathf(link, sizeof(link), "%s/%s", cdir, conns.v[j]);
			if (tc_sysfs_link_name(link, target, sizeof(target), &e)) {
				tc_diag_add(diag, "%s", e.msg);
				continue;
			}
			if (!tc_sysfs_exists(link)) {
				tc_diag_add(diag, "%s: dangling link to '%s'; connection ignored",
					    link, target);
				continue;
			}
			graph_add(g, devs.v[i], target);
		}
		tc_strv_free(&conns);
	}
	tc_strv_free(&devs);
}

/* Breadth-first from the tracer; collects every perf sink on the way. */
static void reach(const struct graph *g, const struct tc_pmu *p, const char *start,
		  struct tc_strv *sinks)
{
	struct tc_strv seen = { 0 };

	tc_strv_push(&seen, start);	/* a cycle in a broken graph ends here */
	for (size_t head = 0; head < seen.n; head++) {
		for (size_t i = 0; i < g->n; i++) {
			if (strcmp(g->e[i].from, seen.v[head]) || tc_strv_has(&seen, g->e[i].to))
				continue;
			tc_strv_push(&seen, g->e[i].to);
			if (tc_pmu_sink(p, g->e[i].to))
				tc_strv_push(sinks, g->e[i].to);
		}
	}
	tc_strv_free(&seen);
}

static int read_reg(const char *cpudir, const char *reg, uint64_t *v, struct tc_diag *diag,
		    int required)
{
	char path[4300];
	struct tc_err e;

	tc_sysfs_pathf(path, sizeof(path), "%s/%s", cpudir, reg);
	if (!tc_sysfs_exists(path) && !required)
		return -1;
	if (tc_sysfs_read_u64(path, 0, v, &e)) {
		tc_diag_add(diag, "%s", e.msg);
		return -1;
	}
	return 0;
}

static void identify_tracer(const char *cpudir, struct tc_pmu_cs_cpu *c, struct tc_diag *diag)
{
	char path[4300];
	uint64_t v;

	tc_sysfs_pathf(path, sizeof(path), "%s/trcidr/trcidr0", cpudir);
	if (tc_sysfs_exists(path)) {
		if (read_reg(cpudir, "trcidr/trcidr0", &v, diag, 1))
			return;
		c->etm = "ETMv4";
		if (!read_reg(cpudir, "mgmt/trcdevarch", &v, diag, 0) &&
		    DEVARCH_ARCHVER(v) == 5 && DEVARCH_ARCHPART(v) == 0xA13)
			c->etm = "ETE";
		if (!read_reg(cpudir, "mgmt/trctraceid", &v, diag, 0))
			c->trace_id = (int)(v & 0x7f);
		return;
	}
	tc_sysfs_pathf(path, sizeof(path), "%s/mgmt/etmidr", cpudir);
	if (tc_sysfs_exists(path)) {
		if (read_reg(cpudir, "mgmt/etmidr", &v, diag, 1))
			return;
		c->etm = (v & ETMIDR_PTM_VERSION) == ETMIDR_PTM_VERSION ? "PTM" : "ETMv3";
		if (!read_reg(cpudir, "traceid", &v, diag, 0))
			c->trace_id = (int)(v & 0x7f);
		return;
	}
	tc_diag_add(diag, "%s: tracer version unknown (neither trcidr/trcidr0 nor mgmt/etmidr)",
		    cpudir);
}

static int parse_cpu_entry(const char *name)
{
	uint64_t v;

	if (strncmp(name, "cpu", 3) || !isdigit((unsigned char)name[3]) ||
	    tc_sysfs_parse_u64(name + 3, 10, &v) || v > 65535)
		return -1;
	return (int)v;
}

static int cmp_cpu(const void *a, const void *b)
{
	return ((const struct tc_pmu_cs_cpu *)a)->cpu - ((const struct tc_pmu_cs_cpu *)b)->cpu;
}

int tc_cs_topo_build(const char *root, const char *pmu_dir, struct tc_pmu *p, struct tc_diag *diag)
{
	struct tc_strv names = { 0 };
	struct graph g = { 0 };
	struct tc_err e;
	char cpudir[4200], dev[256];

	if (tc_sysfs_list(pmu_dir, &names, &e))
		return 0;
	p->cpus = calloc(names.n ? names.n : 1, sizeof(*p->cpus));
	if (!p->cpus) {
		tc_strv_free(&names);
		return -1;
	}
	for (size_t i = 0; i < names.n; i++) {
		int cpu = parse_cpu_entry(names.v[i]);
		struct tc_pmu_cs_cpu *c;

		if (cpu < 0)
			continue;
		c = &p->cpus[p->ncpus++];
		c->cpu = cpu;
		c->trace_id = -1;
		tc_sysfs_pathf(cpudir, sizeof(cpudir), "%s/%s", pmu_dir, names.v[i]);
		if (!tc_sysfs_link_name(cpudir, dev, sizeof(dev), &e))
			c->device = strdup(dev);
		if (!tc_sysfs_exists(cpudir)) {
			tc_diag_add(diag, "%s: dangling link%s%s; tracer unknown", cpudir,
				    c->device ? " to " : "", c->device ? c->device : "");
			continue;
		}
		identify_tracer(cpudir, c, diag);
	}
	tc_strv_free(&names);
	qsort(p->cpus, p->ncpus, sizeof(*p->cpus), cmp_cpu);

	if (p->ncpus)
		load_graph(root, &g, diag);
	for (size_t i = 0; i < p->ncpus; i++) {
		struct tc_pmu_cs_cpu *c = &p->cpus[i];
		char percpu[32];

		if (c->device)
			reach(&g, p, c->device, &c->sinks);
		/* A per-CPU sink (TRBE) has no graph link; the kernel names it trbe<cpu>. */
		tc_sysfs_pathf(percpu, sizeof(percpu), "trbe%d", c->cpu);
		if (tc_pmu_sink(p, percpu) && !tc_strv_has(&c->sinks, percpu))
			tc_strv_push(&c->sinks, percpu);
		tc_strv_sort(&c->sinks);
	}
	for (size_t s = 0; p->ncpus && s < p->cpus[0].sinks.n; s++) {
		const char *name = p->cpus[0].sinks.v[s];
		size_t i;

		for (i = 1; i < p->ncpus; i++)
			if (!tc_strv_has(&p->cpus[i].sinks, name))
				break;
		if (i == p->ncpus)
			tc_strv_push(&p->common_sinks, name);
	}
	for (size_t s = 0; s < p->nsinks; s++)
		p->sinks[s].claimed = tc_cs_topo_sink_claimed(root, p->sinks[s].name);
	p->edges = g.e;
	p->nedges = g.n;
	return 0;
}
