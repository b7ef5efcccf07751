#include "lib/record/record_plan.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/images/elf.h"
#include "lib/record/record_ops.h"
#include "lib/util/grow.h"
#include "lib/util/sysfs.h"

/* What perf samples with every record of a recording: who, when, where. */
#define TC_SAMPLE_ID (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		      PERF_SAMPLE_CPU)

const char *tc_record_plan_role_name(enum tc_record_role r)
{
	static const char *const n[] = { "aux", "sideband", "pause", "resume", "sample",
					 "snapshot" };

	return n[r];
}

int tc_record_plan_tracefs_find(const char *sysfs_root, char *buf, size_t len)
{
	static const char *const where[] = { "kernel/tracing", "kernel/debug/tracing" };
	char p[PATH_MAX];

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		tc_sysfs_pathf(p, sizeof(p), "%s/%s/events", sysfs_root, where[i]);
		if (tc_sysfs_exists(p)) {
			tc_sysfs_pathf(buf, len, "%s/%s", sysfs_root, where[i]);
			return 0;
		}
	}
	return -1;
}

int tc_record_plan_parse_cpus(const char *s, int *cpus, size_t max, size_t *n)
{
	*n = 0;
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s || a < 0)
			return -1;
		s = end;
		if (*s == '-') {
			b = strtol(++s, &end, 10);
			if (end == s || b < a)
				return -1;
			s = end;
		}
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
		for (long c = a; c <= b; c++) {
			bool dup = false;

			for (size_t i = 0; i < *n; i++)
				dup |= cpus[i] == c;
			if (dup)
				continue;
			if (*n == max || c > INT_MAX)
				return -1;
			cpus[(*n)++] = (int)c;
		}
	}
	return *n ? 0 : -1;
}

void tc_record_plan_sideband_attr(struct tc_attr *a, bool cpu_wide, bool workload)
{
	memset(a, 0, sizeof(*a));
	a->attr.size = TC_ATTR_SIZE_VER8;
	a->attr.type = PERF_TYPE_SOFTWARE;
	a->attr.config = PERF_COUNT_SW_DUMMY;
	a->attr.sample_type = TC_SAMPLE_ID;
	a->attr.sample_id_all = 1;
	a->attr.comm = 1;
	a->attr.comm_exec = 1;
	a->attr.mmap = 1;
	a->attr.mmap2 = 1;
	a->attr.task = 1;		/* FORK and EXIT */
	a->attr.context_switch = 1;	/* SWITCH_CPU_WIDE on a CPU, SWITCH per thread */
	a->attr.exclude_kernel = 1;	/* records about tasks, not kernel samples */
	a->attr.disabled = 1;
	a->attr.enable_on_exec = workload;
	(void)cpu_wide;
}

/* --- triggers ---------------------------------------------------------------------- */

static const struct counter {
	const char *name;
	uint32_t type;
	uint64_t config;
} counters[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
};

static int counter_attr(const char *spec, struct tc_record_event *ev, struct tc_err *e)
{
	const char *slash = strchr(spec, '/');
	size_t nl = (size_t)(slash - spec);
	unsigned long long period;
	char tail;

	if (sscanf(slash, "/period=%llu%c", &period, &tail) != 2 || tail != '/' ||
	    slash[strlen(slash) - 1] != '/' || !period)
		return tc_err_set(e, EINVAL, "bad counter trigger '%s': write it as "
				  "name/period=N/ (N > 0)", spec);
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		if (strlen(counters[i].name) != nl || strncmp(counters[i].name, spec, nl))
			continue;
		ev->a.attr.type = counters[i].type;
		ev->a.attr.config = counters[i].config;
		ev->a.attr.sample_period = period;
		snprintf(ev->pmu, sizeof(ev->pmu), "%s", counters[i].type == PERF_TYPE_HARDWARE ?
			 "hardware" : "software");
		return 0;
	}
	char names[512] = "";

	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 i ? ", " : "", counters[i].name);
	return tc_err_set(e, EINVAL, "unknown counter in trigger '%s'; counters: %s", spec, names);
}

static int tracepoint_attr(const char *sysfs_root, const char *tracefs, const char *spec,
			   const char *colon, struct tc_record_event *ev, struct tc_err *e)
{
	char tfs[PATH_MAX], p[PATH_MAX];
	uint64_t id;

	if (!tracefs) {
		if (tc_record_plan_tracefs_find(sysfs_root, tfs, sizeof(tfs)))
			return tc_err_set(
				e, ENOENT,
				"tracepoint trigger '%s': tracefs is not mounted "
				"(looked in %s/kernel/tracing and %s/kernel/debug/tracing); "
				"mount it with 'mount -t tracefs nodev /sys/kernel/tracing'",
				spec, sysfs_root, sysfs_root);
		tracefs = tfs;
	}
	tc_sysfs_pathf(p, sizeof(p), "%s/events/%.*s/%s/id", tracefs, (int)(colon - spec), spec,
		 colon + 1);
	if (strchr(colon + 1, '/') || tc_sysfs_read_u64(p, 10, &id, NULL))
		return tc_err_set(e, ENOENT, "no tracepoint '%s' (%s is missing); "
				  "tracepoints are listed under %s/events", spec, p, tracefs);
	ev->a.attr.type = PERF_TYPE_TRACEPOINT;
	ev->a.attr.config = id;
	ev->a.attr.sample_period = 1;
	ev->a.attr.sample_type |= PERF_SAMPLE_RAW;
	snprintf(ev->pmu, sizeof(ev->pmu), "tracepoint");
	return 0;
}

static int uprobe_attr(const char *sysfs_root, const char *spec, const char *colon,
		       struct tc_record_event *ev, struct tc_err *e)
{
	char bin[PATH_MAX], p[PATH_MAX], *end;
	const char *where = colon + 1;
	uint64_t type, off, vaddr;
	struct tc_elf *elf;

	snprintf(bin, sizeof(bin), "%.*s", (int)(colon - spec), spec);
	tc_sysfs_pathf(p, sizeof(p), "%s/bus/event_source/devices/uprobe/type", sysfs_root);
	if (tc_sysfs_read_u64(p, 10, &type, NULL))
		return tc_err_set(e, ENOENT, "uprobe trigger '%s': this kernel has no uprobe PMU "
				  "(%s is missing; CONFIG_UPROBE_EVENTS)", spec, p);
	ev->uprobe_path = realpath(bin, NULL);
	if (!ev->uprobe_path)
		return tc_err_sys(e, errno, "uprobe trigger '%s': %s", spec, bin);
	if (!strncmp(where, "0x", 2)) {
		errno = 0;
		off = strtoull(where, &end, 16);
		if (*end || errno || end == where + 2)
			return tc_err_set(e, EINVAL, "uprobe trigger '%s': bad file offset '%s'",
					  spec, where);
	} else {
		elf = tc_elf_open(ev->uprobe_path, e);
		if (!elf)
			return -1;
		if (tc_elf_symbol_addr(elf, where, &vaddr)) {
			tc_elf_close(elf);
			return tc_err_set(e, ENOENT, "uprobe trigger '%s': no function '%s' in %s",
					  spec, where, ev->uprobe_path);
		}
		if (tc_elf_vaddr_to_offset(elf, vaddr, &off)) {
			tc_elf_close(elf);
			return tc_err_set(e, ENOENT, "uprobe trigger '%s': function '%s' at 0x%llx "
					  "is not in a loaded part of %s", spec, where,
					  (unsigned long long)vaddr, ev->uprobe_path);
		}
		tc_elf_close(elf);
	}
	ev->a.attr.type = (uint32_t)type;
	ev->a.attr.config1 = (uint64_t)(uintptr_t)ev->uprobe_path;	/* uprobe_path */
	ev->a.attr.config2 = off;					/* probe_offset */
	ev->a.attr.sample_period = 1;
	snprintf(ev->pmu, sizeof(ev->pmu), "uprobe");
	return 0;
}

int tc_record_plan_trigger_attr(const char *sysfs_root, const char *tracefs, const char *spec,
			struct tc_record_event *ev, struct tc_err *e)
{
	const char *colon = strrchr(spec, ':');
	struct stat st;
	char bin[PATH_MAX];

	memset(&ev->a, 0, sizeof(ev->a));
	ev->a.attr.size = TC_ATTR_SIZE_VER8;
	/* perf's choice for tracepoint samples, less PERIOD (always 1 here). */
	ev->a.attr.sample_type = TC_SAMPLE_ID | PERF_SAMPLE_IP;
	ev->a.attr.sample_id_all = 1;
	ev->a.attr.disabled = 1;
	ev->trigger = strdup(spec);
	if (!ev->trigger)
		return tc_err_set(e, ENOMEM, "out of memory");
	if (strchr(spec, '/') && (!colon || strchr(spec, '/') < colon) &&
	    spec[strlen(spec) - 1] == '/')
		return counter_attr(spec, ev, e);
	if (!colon || colon == spec || !colon[1])
		return tc_err_set(e, EINVAL, "bad trigger '%s': use a tracepoint group:name, a "
				  "uprobe binary:symbol or binary:0xoffset, or a counter "
				  "name/period=N/", spec);
	/* A path, or a file that exists, makes it a uprobe; otherwise a tracepoint. */
	snprintf(bin, sizeof(bin), "%.*s", (int)(colon - spec), spec);
	if (memchr(spec, '/', (size_t)(colon - spec)) || !stat(bin, &st))
		return uprobe_attr(sysfs_root, spec, colon, ev, e);
	return tracepoint_attr(sysfs_root, tracefs, spec, colon, ev, e);
}

/* --- the plan ---------------------------------------------------------------------- */

static int push(struct tc_record_plan *pl, struct tc_record_event **out, struct tc_err *e)
{
	if (tc_grow((void **)&pl->ev, &pl->cap, pl->n + 1, sizeof(*pl->ev)))
		return tc_err_set(e, ENOMEM, "out of memory");
	*out = &pl->ev[pl->n++];
	memset(*out, 0, sizeof(**out));
	(*out)->group_leader = -1;
	(*out)->cpu = -1;
	return 0;
}

void tc_record_plan_free(struct tc_record_plan *pl)
{
	for (size_t i = 0; i < pl->n; i++) {
		free(pl->ev[i].trigger);
		free(pl->ev[i].uprobe_path);
	}
	free(pl->ev);
	memset(pl, 0, sizeof(*pl));
}

static void term_names(const struct tc_pmu *p, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < p->nformats; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? ", " : "",
			 p->formats[i].name);
}

static uint64_t *field_of(struct tc_attr *a, enum tc_pmu_field f, uint64_t *c3)
{
	switch (f) {
	case TC_FIELD_CONFIG: return (uint64_t *)&a->attr.config;
	case TC_FIELD_CONFIG1: return (uint64_t *)&a->attr.config1;
	case TC_FIELD_CONFIG2: return (uint64_t *)&a->attr.config2;
	default: return c3;
	}
}

/* Set one term (clearing what an earlier default put there); note it for messages. */
static int set_term(struct tc_record_plan *pl, struct tc_attr *a, uint64_t *c3, const char *name,
		    uint64_t val, bool must, struct tc_err *e)
{
	const struct tc_pmu_format *f = tc_pmu_term(pl->pmu, name);
	uint64_t *fld;
	size_t l = strlen(pl->terms);

	if (!f) {
		char names[400];

		if (!must)
			return 0;
		term_names(pl->pmu, names, sizeof(names));
		return tc_err_set(e, EINVAL, "%s has no format term '%s'; its terms: %s",
				  pl->pmu->name, name, names);
	}
	fld = field_of(a, f->field, c3);
	*fld &= ~f->mask;
	if (tc_pmu_format_apply(f, val, fld, e))
		return -1;
	snprintf(pl->terms + l, sizeof(pl->terms) - l, "%s%s=0x%llx", l ? "," : "", name,
		 (unsigned long long)val);
	return 0;
}

static int caps_has(const struct tc_pmu *p, const char *cap)
{
	for (size_t i = 0; i < p->ncaps; i++)
		if (!strcmp(p->caps[i].name, cap))
			return strcmp(p->caps[i].value, "0") != 0;
	return 1;	/* unknown: let the kernel judge */
}

/* The PMU's default terms (record_ops.h), each only where the PMU has it. */
static int default_terms(struct tc_record_plan *pl, const struct tc_record_ops *ops,
			 struct tc_attr *a, uint64_t *c3, struct tc_err *e)
{
	for (const struct tc_record_ops_term *t = ops ? ops->terms : NULL; t && t->name; t++)
		if ((!t->cap || caps_has(pl->pmu, t->cap)) &&
		    set_term(pl, a, c3, t->name, t->value, false, e))
			return -1;
	return 0;
}

static int user_terms(struct tc_record_plan *pl, const char *spec, struct tc_attr *a,
		      uint64_t *c3, struct tc_err *e)
{
	char *dup = strdup(spec), *save = NULL;
	int rc = 0;

	if (!dup)
		return tc_err_set(e, ENOMEM, "out of memory");
	for (char *t = strtok_r(dup, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '='), *end;
		uint64_t v = 1;

		if (eq) {
			*eq = '\0';
			errno = 0;
			v = strtoull(eq + 1, &end, 0);
			if (!eq[1] || *end || errno) {
				rc = tc_err_set(e, EINVAL, "--config: bad value '%s' for term '%s'",
						eq + 1, t);
				break;
			}
		}
		rc = set_term(pl, a, c3, t, v, true, e);
		if (rc && e)
			snprintf(e->msg + strlen(e->msg), sizeof(e->msg) - strlen(e->msg),
				 " (--config)");
	}
	free(dup);
	return rc;
}

static int online_cpus(const char *root, struct tc_record_plan *pl, struct tc_err *e)
{
	char p[PATH_MAX], buf[256];

	tc_sysfs_pathf(p, sizeof(p), "%s/devices/system/cpu/online", root);
	if (tc_sysfs_read(p, buf, sizeof(buf), e))
		return -1;
	if (tc_record_plan_parse_cpus(buf, pl->cpus, sizeof(pl->cpus) / sizeof(pl->cpus[0]),
				      &pl->ncpus))
		return tc_err_set(e, EINVAL, "%s: cannot parse '%s'", p, buf);
	return 0;
}

static int choose_cpus(const char *root, const struct tc_record_opts *o, struct tc_record_plan *pl,
		       struct tc_err *e)
{
	const struct tc_pmu *p = pl->pmu;
	const struct tc_record_ops *ops = tc_record_ops_find(p);
	size_t max = sizeof(pl->cpus) / sizeof(pl->cpus[0]);
	struct tc_record_plan on = { 0 };
	char p2[PATH_MAX], list[256] = "";

	if (o->per_thread) {
		if (o->cpu_list)
			return tc_err_set(e, EINVAL, "--per-thread and -C cannot be combined");
		pl->ncpus = 0;
		return 0;
	}
	if (o->cpu_list) {
		if (tc_record_plan_parse_cpus(o->cpu_list, pl->cpus, max, &pl->ncpus))
			return tc_err_set(e, EINVAL, "-C: bad CPU list '%s' (e.g. 0-3,6)",
					  o->cpu_list);
	} else if (ops && ops->default_cpus) {
		return ops->default_cpus(p, pl->cpus, max, &pl->ncpus, e);
	} else if (online_cpus(root, pl, e)) {
		return -1;
	}
	if (ops && ops->check_cpus)
		return ops->check_cpus(p, pl->cpus, pl->ncpus, e);
	if (online_cpus(root, &on, e))
		return -1;
	for (size_t i = 0; i < pl->ncpus; i++) {
		bool found = false;

		for (size_t k = 0; k < on.ncpus; k++)
			found |= on.cpus[k] == pl->cpus[i];
		if (!found) {
			tc_sysfs_pathf(p2, sizeof(p2), "%s/devices/system/cpu/online", root);
			tc_sysfs_read(p2, list, sizeof(list), NULL);
			return tc_err_set(e, ENODEV, "cpu %d is not online; online CPUs: %s",
					  pl->cpus[i], list);
		}
	}
	return 0;
}

/* Every CPU the PMU can trace (per-thread events may run on any). */
static int choose_all_cpus(const struct tc_pmu *p, const struct tc_record_ops *ops,
			   struct tc_record_plan *all, struct tc_err *e)
{
	size_t max = sizeof(all->cpus) / sizeof(all->cpus[0]);

	return ops->default_cpus ? ops->default_cpus(p, all->cpus, max, &all->ncpus, e) : 0;
}

/* --sink: a PMU with sinks checks it for the CPUs and gives its term's value. */
static int check_sink(const char *root, const struct tc_record_opts *o, struct tc_record_plan *pl,
		      struct tc_err *e)
{
	const struct tc_record_ops *ops = tc_record_ops_find(pl->pmu);
	char names[128];

	if (!ops || !ops->sink) {
		tc_record_ops_names(names, sizeof(names), true);
		return tc_err_set(e, EINVAL, "--sink is for %s; %s has no sinks", names,
				  pl->pmu->name);
	}
	snprintf(pl->sink, sizeof(pl->sink), "%s", o->sink);
	if (!pl->ncpus) {
		/* per-thread: the task may run on any CPU with a tracer */
		struct tc_record_plan all = { 0 };

		if (choose_all_cpus(pl->pmu, ops, &all, e))
			return -1;
		return ops->sink(root, pl->pmu, o->sink, all.cpus, all.ncpus, &pl->sink_hash, e);
	}
	return ops->sink(root, pl->pmu, o->sink, pl->cpus, pl->ncpus, &pl->sink_hash, e);
}

/* No --sink: the PMU's choice, if it makes one. */
/* Does the --config list "a=1,b,c=2" set term? */
static bool config_sets(const char *config, const char *term)
{
	size_t n = strlen(term);

	for (const char *p = config; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : "")
		if (!strncmp(p, term, n) && (p[n] == '=' || p[n] == ',' || !p[n]))
			return true;
	return false;
}

static int pick_sink(const char *root, const struct tc_record_opts *o, struct tc_record_plan *pl,
		     struct tc_err *e)
{
	const struct tc_record_ops *ops = tc_record_ops_find(pl->pmu);
	struct tc_record_plan all = { 0 };
	const struct tc_record_plan *on = pl;
	const char *name = NULL;

	if (!ops || !ops->default_sink || config_sets(o->config, ops->sink_term))
		return 0;
	if (!pl->ncpus) {
		if (choose_all_cpus(pl->pmu, ops, &all, e))
			return -1;
		on = &all;
	}
	if (ops->default_sink(root, pl->pmu, on->cpus, on->ncpus, &name, &pl->sink_hash,
			      pl->sink_why, sizeof(pl->sink_why)) == 1) {
		snprintf(pl->sink, sizeof(pl->sink), "%s", name);
		pl->sink_auto = true;
	}
	return 0;
}

static int aux_attr(const char *root, const struct tc_record_opts *o, struct tc_record_plan *pl,
		    struct tc_attr *a, struct tc_err *e)
{
	const struct tc_record_ops *ops = tc_record_ops_find(pl->pmu);
	uint64_t c3 = 0;

	(void)root;
	memset(a, 0, sizeof(*a));
	a->attr.size = TC_ATTR_SIZE_VER8;
	a->attr.type = (uint32_t)pl->pmu->type;
	/* IP as perf sets it: the AUX event takes no samples, but perf script's default
	 * fields for a PMU event (symbols) refuse an attr without it. */
	a->attr.sample_type = TC_SAMPLE_ID | PERF_SAMPLE_IP;
	a->attr.sample_period = 1;
	a->attr.sample_id_all = 1;
	a->attr.disabled = 1;
	a->attr.enable_on_exec = o->workload;
	/* as perf's u and k modifiers: the hypervisor goes with the kernel */
	a->attr.exclude_kernel = a->attr.exclude_hv = o->space == TC_SPACE_USER;
	a->attr.exclude_user = o->space == TC_SPACE_KERNEL;
	if (default_terms(pl, ops, a, &c3, e))
		return -1;
	/* check_sink made sure the PMU has sinks. */
	if (*pl->sink && set_term(pl, a, &c3, ops->sink_term, pl->sink_hash, true, e))
		return -1;
	if (o->config && user_terms(pl, o->config, a, &c3, e))
		return -1;
	tc_attr_set_config3(a, c3);
	if (o->start_paused)
		tc_attr_set_aux_action(a, TC_AUX_START_PAUSED);
	return 0;
}

static int add_triggers(const char *root, const struct tc_record_opts *o, struct tc_record_plan *pl,
			int cpu, int leader, struct tc_err *e)
{
	for (int k = 0; k < 2; k++) {
		const char *const *specs = k ? o->resume_on : o->pause_on;
		size_t n = k ? o->nresume : o->npause;

		for (size_t i = 0; i < n; i++) {
			struct tc_record_event *ev;

			if (push(pl, &ev, e))
				return -1;
			ev->role = k ? TC_ROLE_RESUME : TC_ROLE_PAUSE;
			ev->cpu = cpu;
			ev->group_leader = leader;
			if (tc_record_plan_trigger_attr(root, *pl->tracefs ? pl->tracefs : NULL,
							specs[i], ev, e))
				return -1;
			tc_attr_set_aux_action(&ev->a, k ? TC_AUX_RESUME : TC_AUX_PAUSE);
			ev->a.attr.disabled = 0;	/* follows its leader */
			ev->a.attr.enable_on_exec = 0;
		}
	}
	return 0;
}

/* -e and --snapshot-on: the same events, in no group and with no aux_action, so that they
 * work on any kernel and sample whether or not the trace runs; enabled with the others (at
 * exec for a command). A snapshot trigger wakes the reader at each hit. */
static int add_samples(const char *root, const char *const *specs, size_t n,
		       enum tc_record_role role, struct tc_record_plan *pl, int cpu, bool workload,
		       struct tc_err *e)
{
	for (size_t i = 0; i < n; i++) {
		struct tc_record_event *ev;

		if (push(pl, &ev, e))
			return -1;
		ev->role = role;
		ev->cpu = cpu;
		if (tc_record_plan_trigger_attr(root, *pl->tracefs ? pl->tracefs : NULL, specs[i],
						ev, e))
			return -1;
		ev->a.attr.enable_on_exec = workload;
		if (role == TC_ROLE_SNAPSHOT)
			ev->a.attr.wakeup_events = 1;
	}
	return 0;
}

int tc_record_plan_build(const char *root, const struct tc_pmu_list *pmus,
		      const struct tc_record_opts *o, struct tc_record_plan *pl, struct tc_err *e)
{
	struct tc_attr aux;
	size_t slots;

	memset(pl, 0, sizeof(*pl));
	if (o->pmu) {
		pl->pmu = tc_pmu_find(pmus, o->pmu);
		if (!pl->pmu) {
			char have[128] = "";

			for (size_t i = 0; i < pmus->n; i++)
				snprintf(have + strlen(have), sizeof(have) - strlen(have), "%s%s",
					 i ? ", " : "", pmus->pmus[i].name);
			return tc_err_set(e, ENODEV,
					  "no %s PMU on this machine; trace PMUs here: %s", o->pmu,
					  *have ? have : "none");
		}
	} else if (pmus->n) {
		pl->pmu = &pmus->pmus[0];
	}
	if (pl->pmu && pl->pmu->type < 0)
		return tc_err_set(e, EIO, "%s: its type file could not be read", pl->pmu->name);
	if (!pl->pmu && (o->sink || o->config)) {
		char names[128];

		tc_record_ops_names(names, sizeof(names), false);
		return tc_err_set(e, ENODEV, "%s needs a trace PMU, and this machine has none "
				  "(%s)", o->sink ? "--sink" : "--config", names);
	}
	if (o->pid && o->tid)
		return tc_err_set(e, EINVAL, "-p and -t cannot be combined");
	if (o->nsnapshot_on && !o->snapshot)
		return tc_err_set(e, EINVAL, "--snapshot-on takes snapshots: it needs -S");
	if (choose_cpus(root, o, pl, e))
		return -1;
	if (pl->pmu && o->sink && check_sink(root, o, pl, e))
		return -1;
	if (pl->pmu && !o->sink && pick_sink(root, o, pl, e))
		return -1;
	pl->pause_resume = o->start_paused || o->npause || o->nresume;
	if (o->tracefs)
		snprintf(pl->tracefs, sizeof(pl->tracefs), "%s", o->tracefs);
	else if (tc_record_plan_tracefs_find(root, pl->tracefs, sizeof(pl->tracefs)))
		pl->tracefs[0] = '\0';
	if (pl->pmu && aux_attr(root, o, pl, &aux, e))
		return -1;
	slots = pl->ncpus ? pl->ncpus : 1;
	for (size_t i = 0; i < slots; i++) {
		int cpu = pl->ncpus ? pl->cpus[i] : -1, leader = -1;
		struct tc_record_event *ev;

		if (pl->pmu) {
			if (push(pl, &ev, e))
				return -1;
			snprintf(ev->pmu, sizeof(ev->pmu), "%s", pl->pmu->name);
			ev->role = TC_ROLE_AUX;
			ev->cpu = cpu;
			ev->a = aux;
			leader = (int)(pl->n - 1);
			if (o->npause || o->nresume)
				ev->group_leader = leader;
		}
		if (add_triggers(root, o, pl, cpu, leader, e) ||
		    add_samples(root, o->events, o->nevents, TC_ROLE_SAMPLE, pl, cpu, o->workload,
				e) ||
		    add_samples(root, o->snapshot_on, o->nsnapshot_on, TC_ROLE_SNAPSHOT, pl, cpu,
				o->workload, e))
			return -1;
	}
	for (size_t i = 0; i < slots; i++) {
		struct tc_record_event *ev;

		if (push(pl, &ev, e))
			return -1;
		snprintf(ev->pmu, sizeof(ev->pmu), "software");
		ev->role = TC_ROLE_SIDEBAND;
		ev->cpu = pl->ncpus ? pl->cpus[i] : -1;
		tc_record_plan_sideband_attr(&ev->a, pl->ncpus != 0, o->workload);
	}
	return 0;
}
