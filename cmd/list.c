/* tracectl list: trace PMUs, format terms, sinks, per-CPU tracers and reachable sinks, and
 * (--graph) the CoreSight device graph each CPU's trace takes. */
#include <string.h>

#include "cmd/tracectl.h"
#include "lib/pmu/pmu.h"

const struct tc_opt list_opts[] = {
	{ "sinks", 's', 0, NULL, "print only the CoreSight sink names, one per line" },
	{ "graph", 'g', 0, NULL, "print only the CoreSight device graph, a tree per CPU" },
	{ 0 },
};

struct list_args {
	bool sinks_only, graph_only;
};

static int on_opt(int key, const char *arg, void *ctx)
{
	struct list_args *a = ctx;

	(void)arg;
	if (key == 's')
		a->sinks_only = true;
	if (key == 'g')
		a->graph_only = true;
	return 0;
}

#define BOLD "\033[1m"

static void json_graph(struct tc_json *j, const struct tc_pmu *p);

static void print_strv(const struct tc_strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		printf(" %s", s->v[i]);
	if (!s->n)
		printf(" (none)");
	printf("\n");
}

static void text_pmu(const struct tc_pmu *p)
{
	printf("%s%s%s", tc_msg_color_on(BOLD), p->name, tc_msg_color_off());
	if (p->type >= 0)
		printf(": type %d\n", p->type);
	else
		printf(": type unknown\n");
	printf("  formats:\n");
	for (size_t i = 0; i < p->nformats; i++)
		printf("    %-20s %s\n", p->formats[i].name, p->formats[i].spec);
	if (tc_pmu_has_caps(p)) {
		printf("  caps:\n");
		for (size_t i = 0; i < p->ncaps; i++)
			printf("    %-28s %s\n", p->caps[i].name, p->caps[i].value);
		return;
	}
	printf("  sinks:\n");
	for (size_t i = 0; i < p->nsinks; i++)
		printf("    %-20s %-12s %s%s\n", p->sinks[i].name,
		       p->sinks[i].hash_str ? p->sinks[i].hash_str : "(unreadable)",
		       tc_cs_topo_kind(p->sinks[i].name) ? tc_cs_topo_kind(p->sinks[i].name) : "",
		       p->sinks[i].claimed ? ", claimed through sysfs (enable_sink)" : "");
	printf("  cpus:\n");
	for (size_t i = 0; i < p->ncpus; i++) {
		const struct tc_pmu_cs_cpu *c = &p->cpus[i];
		char id[16] = "-";

		if (c->trace_id >= 0)
			snprintf(id, sizeof(id), "0x%x", c->trace_id);
		printf("    cpu%-4d %-6s trace id %-5s %-10s sinks:", c->cpu,
		       c->etm ? c->etm : "?", id, c->device ? c->device : "?");
		print_strv(&c->sinks);
	}
	printf("  common sinks:");
	print_strv(&p->common_sinks);
}

static void json_strv(struct tc_json *j, const char *key, const struct tc_strv *s)
{
	tc_json_key(j, key);
	tc_json_arr_open(j);
	for (size_t i = 0; i < s->n; i++)
		tc_json_str(j, s->v[i]);
	tc_json_arr_close(j);
}

static void json_pmu(struct tc_json *j, const struct tc_pmu *p)
{
	tc_json_obj_open(j);
	tc_json_kstr(j, "name", p->name);
	tc_json_key(j, "type");
	if (p->type >= 0)
		tc_json_int(j, p->type);
	else
		tc_json_null(j);
	tc_json_key(j, "formats");
	tc_json_obj_open(j);
	for (size_t i = 0; i < p->nformats; i++)
		tc_json_kstr(j, p->formats[i].name, p->formats[i].spec);
	tc_json_obj_close(j);
	if (tc_pmu_has_caps(p)) {
		tc_json_key(j, "caps");
		tc_json_obj_open(j);
		for (size_t i = 0; i < p->ncaps; i++)
			tc_json_kstr(j, p->caps[i].name, p->caps[i].value);
		tc_json_obj_close(j);
		tc_json_obj_close(j);
		return;
	}
	tc_json_key(j, "sinks");
	tc_json_arr_open(j);
	for (size_t i = 0; i < p->nsinks; i++) {
		tc_json_obj_open(j);
		tc_json_kstr(j, "name", p->sinks[i].name);
		tc_json_kstr(j, "hash", p->sinks[i].hash_str);
		tc_json_kstr(j, "kind", tc_cs_topo_kind(p->sinks[i].name));
		tc_json_kbool(j, "claimed", p->sinks[i].claimed);
		tc_json_obj_close(j);
	}
	tc_json_arr_close(j);
	tc_json_key(j, "cpus");
	tc_json_arr_open(j);
	for (size_t i = 0; i < p->ncpus; i++) {
		const struct tc_pmu_cs_cpu *c = &p->cpus[i];

		tc_json_obj_open(j);
		tc_json_kint(j, "cpu", c->cpu);
		tc_json_kstr(j, "device", c->device);
		tc_json_kstr(j, "etm", c->etm);
		tc_json_key(j, "trace_id");
		if (c->trace_id >= 0)
			tc_json_hex(j, (unsigned)c->trace_id);
		else
			tc_json_null(j);
		json_strv(j, "sinks", &c->sinks);
		tc_json_obj_close(j);
	}
	tc_json_arr_close(j);
	json_strv(j, "common_sinks", &p->common_sinks);
	json_graph(j, p);
	tc_json_obj_close(j);
}

/* --- the CoreSight graph --------------------------------------------------------------- */

/* dev's kind, and for a perf sink "sink" and whether sysfs holds it, as one label. */
static void graph_label(const struct tc_pmu *p, const char *dev, char *buf, size_t len)
{
	const struct tc_pmu_cs_sink *s = tc_pmu_sink(p, dev);
	const char *kind = tc_cs_topo_kind(dev);

	snprintf(buf, len, "%s%s%s%s%s", s || kind ? " [" : "", s ? "sink" : "",
		 s && kind ? " " : "", kind ? kind : "",
		 s && s->claimed ? ", claimed through sysfs]" : s || kind ? "]" : "");
}

/* The devices dev's trace goes on to, depth first; a device already on the path (a cycle in
 * a broken graph) is named and not followed. */
static void graph_tree(const struct tc_pmu *p, const char *dev, const char **path, size_t depth,
		       const char *indent)
{
	char label[96], next[256];
	size_t n = 0, k = 0;

	for (size_t i = 0; i < p->nedges; i++)
		n += !strcmp(p->edges[i].from, dev);
	for (size_t i = 0; i < p->nedges; i++) {
		const char *to = p->edges[i].to;
		bool last, cycle = false;

		if (strcmp(p->edges[i].from, dev))
			continue;
		last = ++k == n;
		for (size_t d = 0; d < depth; d++)
			cycle |= !strcmp(path[d], to);
		graph_label(p, to, label, sizeof(label));
		printf("%s%s %s%s%s\n", indent, last ? "`--" : "|--", to, label,
		       cycle ? " (cycle: not followed)" : "");
		if (cycle || depth >= 63 || strlen(indent) + 4 >= sizeof(next))
			continue;
		snprintf(next, sizeof(next), "%s%s", indent, last ? "    " : "|   ");
		path[depth] = to;
		graph_tree(p, to, path, depth + 1, next);
	}
}

static void text_graph(const struct tc_pmu *p)
{
	const char *path[64];

	printf("%s: device graph\n", p->name);
	for (size_t i = 0; i < p->ncpus; i++) {
		const struct tc_pmu_cs_cpu *c = &p->cpus[i];

		printf("cpu%d: %s (%s)\n", c->cpu, c->device ? c->device : "?",
		       c->etm ? c->etm : "tracer unknown");
		if (!c->device)
			continue;
		path[0] = c->device;
		graph_tree(p, c->device, path, 1, "  ");
		/* a per-CPU sink (TRBE) has no link in the graph */
		for (size_t s = 0; s < c->sinks.n; s++) {
			char label[96];
			bool linked = false;

			for (size_t k = 0; k < p->nedges; k++)
				linked |= !strcmp(p->edges[k].to, c->sinks.v[s]);
			if (linked)
				continue;
			graph_label(p, c->sinks.v[s], label, sizeof(label));
			printf("  `-- %s%s (per-CPU)\n", c->sinks.v[s], label);
		}
	}
}

static void json_graph(struct tc_json *j, const struct tc_pmu *p)
{
	struct tc_strv nodes = { 0 };

	for (size_t i = 0; i < p->ncpus; i++)
		if (p->cpus[i].device && !tc_strv_has(&nodes, p->cpus[i].device))
			tc_strv_push(&nodes, p->cpus[i].device);
	for (size_t i = 0; i < p->nedges; i++) {
		if (!tc_strv_has(&nodes, p->edges[i].from))
			tc_strv_push(&nodes, p->edges[i].from);
		if (!tc_strv_has(&nodes, p->edges[i].to))
			tc_strv_push(&nodes, p->edges[i].to);
	}
	for (size_t i = 0; i < p->nsinks; i++)
		if (!tc_strv_has(&nodes, p->sinks[i].name))
			tc_strv_push(&nodes, p->sinks[i].name);
	tc_strv_sort(&nodes);
	tc_json_key(j, "graph");
	tc_json_obj_open(j);
	tc_json_key(j, "nodes");
	tc_json_arr_open(j);
	for (size_t i = 0; i < nodes.n; i++) {
		const struct tc_pmu_cs_sink *s = tc_pmu_sink(p, nodes.v[i]);

		tc_json_obj_open(j);
		tc_json_kstr(j, "name", nodes.v[i]);
		tc_json_kstr(j, "kind", tc_cs_topo_kind(nodes.v[i]));
		tc_json_kbool(j, "sink", s != NULL);
		tc_json_kbool(j, "claimed", s && s->claimed);
		tc_json_obj_close(j);
	}
	tc_json_arr_close(j);
	tc_json_key(j, "edges");
	tc_json_arr_open(j);
	for (size_t i = 0; i < p->nedges; i++) {
		tc_json_obj_open(j);
		tc_json_kstr(j, "from", p->edges[i].from);
		tc_json_kstr(j, "to", p->edges[i].to);
		tc_json_obj_close(j);
	}
	tc_json_arr_close(j);
	tc_json_obj_close(j);
	tc_strv_free(&nodes);
}

static void print_graph(const struct tc_pmu_list *l)
{
	struct tc_json j;
	bool any = false;

	if (tc_g.json) {
		tc_msg_json_stdout(&j);
		tc_json_arr_open(&j);
	}
	for (size_t i = 0; i < l->n; i++) {
		const struct tc_pmu *p = &l->pmus[i];

		if (tc_pmu_has_caps(p))
			continue;	/* no device graph */
		any = true;
		if (tc_g.json) {
			tc_json_obj_open(&j);
			tc_json_kstr(&j, "pmu", p->name);
			json_graph(&j, p);
			tc_json_obj_close(&j);
		} else {
			text_graph(p);
		}
	}
	if (tc_g.json)
		tc_json_arr_close(&j);
	else if (!any)
		printf("no CoreSight PMU in %s: no device graph\n", l->devices_dir);
}

static void print_sinks(const struct tc_pmu_list *l)
{
	struct tc_json j;

	if (tc_g.json) {
		tc_msg_json_stdout(&j);
		tc_json_arr_open(&j);
	}
	for (size_t i = 0; i < l->n; i++)
		for (size_t k = 0; k < l->pmus[i].nsinks; k++) {
			if (tc_g.json)
				tc_json_str(&j, l->pmus[i].sinks[k].name);
			else
				printf("%s\n", l->pmus[i].sinks[k].name);
		}
	if (tc_g.json)
		tc_json_arr_close(&j);
}

static void print_listing(const struct tc_pmu_list *l)
{
	struct tc_json j;

	if (!tc_g.json) {
		for (size_t i = 0; i < l->n; i++)
			text_pmu(&l->pmus[i]);
		for (size_t i = 0; i < l->unsupported.n; i++)
			printf("%s: not supported (tracectl handles cs_etm and intel_pt)\n",
			       l->unsupported.v[i]);
		if (!l->n)
			printf("no trace PMU found in %s (looked for cs_etm and intel_pt)\n",
			       l->devices_dir);
		return;
	}
	tc_msg_json_stdout(&j);
	tc_json_obj_open(&j);
	tc_json_kstr(&j, "devices", l->devices_dir);
	tc_json_key(&j, "pmus");
	tc_json_arr_open(&j);
	for (size_t i = 0; i < l->n; i++)
		json_pmu(&j, &l->pmus[i]);
	tc_json_arr_close(&j);
	json_strv(&j, "unsupported", &l->unsupported);
	tc_json_key(&j, "warnings");
	tc_json_arr_open(&j);
	for (size_t i = 0; i < l->diag.n; i++)
		tc_json_str(&j, l->diag.msgs[i].text);
	tc_json_arr_close(&j);
	tc_json_obj_close(&j);
}

int do_list(int argc, char **argv)
{
	const struct tc_cmd *cmd = tc_cmd_find("list");
	struct list_args a = { 0 };
	struct tc_pmu_list l;
	struct tc_err e;
	int i = tc_opts_parse(cmd, argc, argv, on_opt, &a), rc;

	if (i < 0)
		return TC_EXIT_USAGE;
	if (i < argc)
		return tc_msg_usage_error(cmd, "unexpected argument '%s'", argv[i]), TC_EXIT_USAGE;
	if (tc_pmu_discover(tc_g.sysfs_root, &l, &e)) {
		tc_pmu_list_free(&l);
		tc_fatal("%s", e.msg);
	}
	for (size_t k = 0; k < l.diag.n; k++)
		tc_warning("%s", l.diag.msgs[k].text);
	if (a.sinks_only && a.graph_only) {
		tc_pmu_list_free(&l);
		return tc_msg_usage_error(cmd, "--sinks and --graph exclude each other"),
		       TC_EXIT_USAGE;
	}
	if (a.sinks_only)
		print_sinks(&l);
	else if (a.graph_only)
		print_graph(&l);
	else
		print_listing(&l);
	rc = l.diag.n ? TC_EXIT_DATA : TC_EXIT_OK;
	tc_pmu_list_free(&l);
	return rc;
}
