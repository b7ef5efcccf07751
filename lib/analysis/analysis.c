#include "lib/analysis/analysis.h"

#include <stdlib.h>
#include <string.h>

#include "lib/analysis/calltree.h"
#include "lib/analysis/symcache.h"
#include "lib/output/chrome.h"
#include "lib/output/folded.h"
#include "lib/output/svg.h"

struct tc_analysis {
	struct tc_analysis_opts o;
	struct tc_callstack *cs;
	struct tc_profile *prof;
	struct tc_calltree *tree;
	struct tc_chrome *chrome;
	struct tc_symcache *cache;
	const uint64_t *space;	/* o.space's number once known, */
	uint64_t space_seen;	/* as the cache was last refreshed with */
	bool failed;
};

int tc_analysis_format_parse(const char *s, enum tc_analysis_format *f)
{
	static const struct { const char *name; enum tc_analysis_format f;
	} names[] = {
		{ "folded", TC_ANALYSIS_FOLDED },
		{ "chrome", TC_ANALYSIS_CHROME },
		{ "svg", TC_ANALYSIS_SVG },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i].name)) {
			*f = names[i].f;
			return 0;
		}
	}
	return -1;
}

struct tc_analysis *tc_analysis_new(const struct tc_analysis_opts *o)
{
	struct tc_analysis *a = calloc(1, sizeof(*a));
	struct tc_callstack_ops ops;

	if (!a)
		return NULL;
	a->o = *o;
	if (o->sym && o->space) {
		/* every consumer asks through the one cache */
		a->cache = tc_symcache_new(&(struct tc_symcache_opts){
			.sym = o->sym, .sym_ctx = o->sym_ctx, .space = o->space,
			.space_ctx = o->space_ctx });
		if (!a->cache) {
			free(a);
			return NULL;
		}
		o = &a->o;
		a->o.sym = tc_symcache_sym;
		a->o.sym_ctx = a->cache;
	}
	ops = (struct tc_callstack_ops){ .sym = o->sym, .sym_ctx = o->sym_ctx,
					 .space = o->space, .space_ctx = o->space_ctx };
	switch (o->format) {
	case TC_ANALYSIS_FOLDED:
	case TC_ANALYSIS_SVG:
		a->tree = tc_calltree_new(&(struct tc_calltree_opts){
			.sym = o->sym, .sym_ctx = o->sym_ctx, .thread_roots = o->thread_roots,
			.comm_roots = o->comm_roots,
			.comm = o->comm, .comm_ctx = o->comm_ctx });
		ops.range = tc_calltree_range;
		ops.ctx = a->tree;
		break;
	case TC_ANALYSIS_CHROME:
		a->chrome = tc_chrome_new(o->f, o->sym, o->sym_ctx, o->comm, o->comm_ctx);
		ops.range = tc_chrome_range;
		ops.brk = tc_chrome_brk;
		ops.ctx = a->chrome;
		break;
	case TC_ANALYSIS_REPORT:
	case TC_ANALYSIS_REPORT_JSON:
	case TC_ANALYSIS_PROFILE:
		a->prof = tc_profile_new(&(struct tc_profile_opts){
			.sym = o->sym, .sym_ctx = o->sym_ctx, .dso = o->dso, .dso_ctx = o->dso_ctx,
			.comm = o->comm, .comm_ctx = o->comm_ctx, .tid = o->tid, .cpu = o->cpu,
			.comm_is = o->comm_is });
		ops.range = tc_profile_range;
		ops.ctx = a->prof;
		break;
	}
	if (ops.ctx)
		a->cs = tc_callstack_new(&ops);
	if (!a->cs) {
		tc_analysis_free(a);
		return NULL;
	}
	return a;
}

/* The cache reads the number only when it moved (or is not known yet). */
static inline void check_space(struct tc_analysis *a)
{
	if (a->cache && (!a->space || *a->space != a->space_seen)) {
		tc_symcache_refresh(a->cache);
		if (!a->space)
			a->space = a->o.space(a->o.space_ctx);
		if (a->space)
			a->space_seen = *a->space;
	}
}

int tc_analysis_feed(struct tc_analysis *a, const struct tc_rec *r)
{
	check_space(a);
	if (tc_callstack_feed(a->cs, r)) {
		a->failed = true;
		return -1;
	}
	return 0;
}

int tc_analysis_feed_ranges(struct tc_analysis *a, const struct tc_rec *r, size_t n)
{
	check_space(a);	/* once: one address space for the run */
	if (tc_callstack_feed_ranges(a->cs, r, n)) {
		a->failed = true;
		return -1;
	}
	return 0;
}

const struct tc_callstack_stats *tc_analysis_stats(const struct tc_analysis *a)
{
	return tc_callstack_stats(a->cs);
}

const struct tc_profile *tc_analysis_profile(const struct tc_analysis *a)
{
	return a->prof;
}

static int write_report(struct tc_analysis *a)
{
	struct tc_profile_table t;
	struct tc_json j;

	if (tc_profile_table(a->prof, &a->o.view, &t))
		return -1;
	if (a->o.format == TC_ANALYSIS_REPORT) {
		tc_profile_write_text(&t, a->o.f);
	} else {
		tc_json_init(&j, a->o.f, false);
		tc_profile_write_json(&t, &j);
	}
	tc_profile_table_free(&t);
	return tc_profile_failed(a->prof) || ferror(a->o.f) ? -1 : 0;
}

int tc_analysis_finish(struct tc_analysis *a)
{
	int rc = a->failed ? -1 : 0;

	if (a->cache)
		tc_symcache_refresh(a->cache);
	switch (a->o.format) {
	case TC_ANALYSIS_FOLDED:
		rc |= tc_folded_write(a->tree, a->o.f) || tc_calltree_failed(a->tree) ? -1 : 0;
		break;
	case TC_ANALYSIS_SVG:
		rc |= tc_svg_write(a->tree, a->o.f, &(struct tc_svg_opts){ .title = a->o.title }) ||
			      tc_calltree_failed(a->tree) ? -1 : 0;
		break;
	case TC_ANALYSIS_CHROME:
		rc |= tc_chrome_finish(a->chrome);
		a->chrome = NULL;
		break;
	case TC_ANALYSIS_REPORT:
	case TC_ANALYSIS_REPORT_JSON:
		rc |= write_report(a);
		break;
	case TC_ANALYSIS_PROFILE:
		rc |= tc_profile_failed(a->prof) ? -1 : 0;
		break;
	}
	return rc ? -1 : 0;
}

void tc_analysis_free(struct tc_analysis *a)
{
	if (!a)
		return;
	tc_callstack_free(a->cs);
	tc_profile_free(a->prof);
	tc_calltree_free(a->tree);
	if (a->chrome) {
		/* never finished: end the document anyway so the file parses */
		tc_chrome_finish(a->chrome);
	}
	tc_symcache_free(a->cache);
	free(a);
}

int tc_analysis_images_sym(void *images, int pid, uint64_t addr, const char **name, uint64_t *start)
{
	struct tc_images_sym s;

	if (tc_images_symbol(images, pid, addr, &s) || !s.sym)
		return -1;
	*name = s.sym;
	*start = addr - s.sym_off;
	return 0;
}

const char *tc_analysis_images_dso(void *images, int pid, uint64_t addr)
{
	struct tc_images_sym s;

	return tc_images_symbol(images, pid, addr, &s) ? NULL : s.dso;
}
