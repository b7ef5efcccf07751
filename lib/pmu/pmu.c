#include "lib/pmu/pmu.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/diag.h"
#include "lib/util/sysfs.h"

const char *const tc_pmu_supported[] = { "cs_etm", "intel_pt", NULL };

bool tc_pmu_has_caps(const struct tc_pmu *p)
{
	return p->kind == TC_PMU_INTEL_PT;
}

/* Hardware trace PMUs that exist in Linux but that tracectl does not (yet) handle. */
static const char *const unsupported_globs[] = {
	"arm_spe_*", "intel_bts", "hisi_ptt*", "arm_cmn_*_tracer", NULL
};

static int read_formats(const char *dir, struct tc_pmu *p, struct tc_diag *diag)
{
	struct tc_strv names = { 0 };
	struct tc_err e;
	char path[4096], spec[256];

	if (tc_sysfs_list(dir, &names, &e)) {
		tc_diag_add(diag, "%s: no format terms: %s", p->name, e.msg);
		return 0;
	}
	p->formats = calloc(names.n ? names.n : 1, sizeof(*p->formats));
	if (!p->formats) {
		tc_strv_free(&names);
		return -1;
	}
	for (size_t i = 0; i < names.n; i++) {
		tc_sysfs_pathf(path, sizeof(path), "%s/%s", dir, names.v[i]);
		if (tc_sysfs_read(path, spec, sizeof(spec), &e)) {
			tc_diag_add(diag, "%s", e.msg);
			continue;
		}
		if (tc_pmu_format_parse(names.v[i], spec, &p->formats[p->nformats], &e)) {
			tc_diag_add(diag, "%s: %s", path, e.msg);
			continue;
		}
		p->nformats++;
	}
	tc_strv_free(&names);
	return 0;
}

static int read_caps(const char *dir, struct tc_pmu *p, struct tc_diag *diag)
{
	struct tc_strv names = { 0 };
	struct tc_err e;
	char path[4096], val[256];

	if (tc_sysfs_list(dir, &names, &e)) {
		tc_diag_add(diag, "%s: no capabilities: %s", p->name, e.msg);
		return 0;
	}
	p->caps = calloc(names.n ? names.n : 1, sizeof(*p->caps));
	if (!p->caps) {
		tc_strv_free(&names);
		return -1;
	}
	for (size_t i = 0; i < names.n; i++) {
		tc_sysfs_pathf(path, sizeof(path), "%s/%s", dir, names.v[i]);
		if (tc_sysfs_read(path, val, sizeof(val), &e)) {
			tc_diag_add(diag, "%s", e.msg);
			continue;
		}
		p->caps[p->ncaps].name = strdup(names.v[i]);
		p->caps[p->ncaps].value = strdup(val);
		p->ncaps++;
	}
	tc_strv_free(&names);
	return 0;
}

static int read_sinks(const char *dir, struct tc_pmu *p, struct tc_diag *diag)
{
	struct tc_strv names = { 0 };
	struct tc_err e;
	char path[4096], val[128];

	if (tc_sysfs_list(dir, &names, &e)) {
		tc_diag_add(diag, "%s: no sinks: %s", p->name, e.msg);
		return 0;
	}
	p->sinks = calloc(names.n ? names.n : 1, sizeof(*p->sinks));
	if (!p->sinks) {
		tc_strv_free(&names);
		return -1;
	}
	for (size_t i = 0; i < names.n; i++) {
		struct tc_pmu_cs_sink *s;

		/* Older kernels (6.1 among them) list every sink here, TPIUs too; perf cannot use a
		 * TPIU (no AUX buffer), and the kernel always names them tpiuN. */
		if (!strncmp(names.v[i], "tpiu", 4))
			continue;
		s = &p->sinks[p->nsinks++];

		s->name = strdup(names.v[i]);
		tc_sysfs_pathf(path, sizeof(path), "%s/%s", dir, names.v[i]);
		if (tc_sysfs_read(path, val, sizeof(val), &e)) {
			tc_diag_add(diag, "%s", e.msg);
			continue;
		}
		s->hash_str = strdup(val);
		if (tc_sysfs_parse_u64(val, 16, &s->hash))
			tc_diag_add(diag, "%s: expected a hex sink hash, found '%s'", path, val);
		else
			s->hash_ok = 1;
	}
	tc_strv_free(&names);
	return 0;
}

static int read_pmu(const char *root, const char *devdir, const char *name,
		    enum tc_pmu_kind kind, struct tc_pmu *p, struct tc_diag *diag)
{
	char dir[4096], path[4200];
	struct tc_err e;
	uint64_t type;

	memset(p, 0, sizeof(*p));
	p->name = strdup(name);
	p->kind = kind;
	p->type = -1;
	if (!p->name)
		return -1;
	tc_sysfs_pathf(dir, sizeof(dir), "%s/%s", devdir, name);
	tc_sysfs_pathf(path, sizeof(path), "%s/type", dir);
	if (tc_sysfs_read_u64(path, 10, &type, &e))
		tc_diag_add(diag, "%s: PMU type unknown: %s", name, e.msg);
	else if (type > 0x7fffffff)
		tc_diag_add(diag, "%s: PMU type %llu out of range", path, (unsigned long long)type);
	else
		p->type = (int)type;

	tc_sysfs_pathf(path, sizeof(path), "%s/format", dir);
	if (read_formats(path, p, diag))
		return -1;
	if (kind == TC_PMU_INTEL_PT) {
		tc_sysfs_pathf(path, sizeof(path), "%s/caps", dir);
		return read_caps(path, p, diag);
	}
	tc_sysfs_pathf(path, sizeof(path), "%s/sinks", dir);
	if (read_sinks(path, p, diag))
		return -1;
	return tc_cs_topo_build(root, dir, p, diag);
}

static int is_unsupported(const char *name)
{
	for (int i = 0; unsupported_globs[i]; i++)
		if (!fnmatch(unsupported_globs[i], name, 0))
			return 1;
	return 0;
}

int tc_pmu_discover(const char *sysfs_root, struct tc_pmu_list *out, struct tc_err *e)
{
	struct tc_strv names = { 0 };
	char dir[4096];

	memset(out, 0, sizeof(*out));
	tc_sysfs_pathf(dir, sizeof(dir), "%s/bus/event_source/devices", sysfs_root);
	out->devices_dir = strdup(dir);
	if (tc_sysfs_list(dir, &names, e))
		return -1;
	out->pmus = calloc(names.n ? names.n : 1, sizeof(*out->pmus));
	if (!out->pmus) {
		tc_strv_free(&names);
		return tc_err_sys(e, ENOMEM, "discovering PMUs");
	}
	for (size_t i = 0; i < names.n; i++) {
		const char *n = names.v[i];
		int kind = !strcmp(n, "cs_etm") ? TC_PMU_CS_ETM :
			   !strcmp(n, "intel_pt") ? TC_PMU_INTEL_PT : -1;

		if (kind < 0) {
			if (is_unsupported(n))
				tc_strv_push(&out->unsupported, n);
			continue;
		}
		if (read_pmu(sysfs_root, dir, n, (enum tc_pmu_kind)kind, &out->pmus[out->n++],
			     &out->diag)) {
			tc_strv_free(&names);
			return tc_err_sys(e, ENOMEM, "reading PMU %s", n);
		}
	}
	tc_strv_free(&names);
	return 0;
}

void tc_pmu_list_free(struct tc_pmu_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		struct tc_pmu *p = &l->pmus[i];

		free(p->name);
		free(p->formats);
		for (size_t j = 0; j < p->ncaps; j++) {
			free(p->caps[j].name);
			free(p->caps[j].value);
		}
		free(p->caps);
		for (size_t j = 0; j < p->nsinks; j++) {
			free(p->sinks[j].name);
			free(p->sinks[j].hash_str);
		}
		free(p->sinks);
		for (size_t j = 0; j < p->ncpus; j++) {
			free(p->cpus[j].device);
			tc_strv_free(&p->cpus[j].sinks);
		}
		free(p->cpus);
		tc_strv_free(&p->common_sinks);
		for (size_t j = 0; j < p->nedges; j++) {
			free(p->edges[j].from);
			free(p->edges[j].to);
		}
		free(p->edges);
	}
	free(l->pmus);
	free(l->devices_dir);
	tc_strv_free(&l->unsupported);
	tc_diag_free(&l->diag);
	memset(l, 0, sizeof(*l));
}

const struct tc_pmu *tc_pmu_find(const struct tc_pmu_list *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->pmus[i].name, name))
			return &l->pmus[i];
	return NULL;
}

const struct tc_pmu_format *tc_pmu_term(const struct tc_pmu *p, const char *term)
{
	for (size_t i = 0; i < p->nformats; i++)
		if (!strcmp(p->formats[i].name, term))
			return &p->formats[i];
	return NULL;
}

const struct tc_pmu_cs_sink *tc_pmu_sink(const struct tc_pmu *p, const char *name)
{
	for (size_t i = 0; i < p->nsinks; i++)
		if (!strcmp(p->sinks[i].name, name))
			return &p->sinks[i];
	return NULL;
}
