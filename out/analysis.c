#include "out/analysis.h"

#include <stdlib.h>
#include <string.h>

#include "out/calltree.h"
#include "out/chrome.h"
#include "out/folded.h"
#include "out/svg.h"

struct tc_an {
	struct tc_an_opts o;
	struct tc_callstack *cs;
	struct tc_profile *prof;
	struct tc_tree *tree;
	struct tc_chrome *chrome;
	bool failed;
};

int tc_an_format_parse(const char *s, enum tc_an_format *f)
{
	static const struct { const char *name; enum tc_an_format f; } names[] = {
		{ "folded", TC_AN_FOLDED }, { "chrome", TC_AN_CHROME }, { "svg", TC_AN_SVG },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i].name)) {
			*f = names[i].f;
			return 0;
		}
	}
	return -1;
}

struct tc_an *tc_an_new(const struct tc_an_opts *o)
{
	struct tc_an *a = calloc(1, sizeof(*a));
	struct tc_cs_ops ops = { .sym = o->sym, .sym_ctx = o->sym_ctx };

	if (!a)
		return NULL;
	a->o = *o;
	switch (o->format) {
	case TC_AN_FOLDED:
	case TC_AN_SVG:
		a->tree = tc_tree_new(&(struct tc_tree_opts){
			.sym = o->sym, .sym_ctx = o->sym_ctx, .thread_roots = o->thread_roots,
			.comm = o->comm, .comm_ctx = o->comm_ctx });
		ops.range = tc_tree_range;
		ops.ctx = a->tree;
		break;
	case TC_AN_CHROME:
		a->chrome = tc_chrome_new(o->f, o->sym, o->sym_ctx);
		ops.range = tc_chrome_range;
		ops.brk = tc_chrome_brk;
		ops.ctx = a->chrome;
		break;
	case TC_AN_REPORT:
	case TC_AN_REPORT_JSON:
	case TC_AN_PROFILE:
		a->prof = tc_prof_new(&(struct tc_prof_opts){
			.sym = o->sym, .sym_ctx = o->sym_ctx, .dso = o->dso, .dso_ctx = o->dso_ctx,
			.comm = o->comm, .comm_ctx = o->comm_ctx, .tid = o->tid, .cpu = o->cpu,
			.comm_is = o->comm_is });
		ops.range = tc_prof_range;
		ops.ctx = a->prof;
		break;
	}
	if (ops.ctx)
		a->cs = tc_cs_new(&ops);
	if (!a->cs) {
		tc_an_free(a);
		return NULL;
	}
	return a;
}

int tc_an_feed(struct tc_an *a, const struct tc_rec *r)
{
	if (tc_cs_feed(a->cs, r)) {
		a->failed = true;
		return -1;
	}
	return 0;
}

const struct tc_cs_stats *tc_an_stats(const struct tc_an *a)
{
	return tc_cs_stats(a->cs);
}

const struct tc_profile *tc_an_profile(const struct tc_an *a)
{
	return a->prof;
}

static int write_report(struct tc_an *a)
{
	struct tc_prof_table t;
	struct tc_json j;

	if (tc_prof_table(a->prof, &a->o.view, &t))
		return -1;
	if (a->o.format == TC_AN_REPORT) {
		tc_prof_write_text(&t, a->o.f);
	} else {
		tc_json_init(&j, a->o.f, false);
		tc_prof_write_json(&t, &j);
	}
	tc_prof_table_free(&t);
	return tc_prof_failed(a->prof) || ferror(a->o.f) ? -1 : 0;
}

int tc_an_finish(struct tc_an *a)
{
	int rc = a->failed ? -1 : 0;

	switch (a->o.format) {
	case TC_AN_FOLDED:
		rc |= tc_folded_write(a->tree, a->o.f) || tc_tree_failed(a->tree) ? -1 : 0;
		break;
	case TC_AN_SVG:
		rc |= tc_svg_write(a->tree, a->o.f, &(struct tc_svg_opts){ .title = a->o.title }) ||
			      tc_tree_failed(a->tree) ? -1 : 0;
		break;
	case TC_AN_CHROME:
		rc |= tc_chrome_finish(a->chrome);
		a->chrome = NULL;
		break;
	case TC_AN_REPORT:
	case TC_AN_REPORT_JSON:
		rc |= write_report(a);
		break;
	case TC_AN_PROFILE:
		rc |= tc_prof_failed(a->prof) ? -1 : 0;
		break;
	}
	return rc ? -1 : 0;
}

void tc_an_free(struct tc_an *a)
{
	if (!a)
		return;
	tc_cs_free(a->cs);
	tc_prof_free(a->prof);
	tc_tree_free(a->tree);
	if (a->chrome) {
		/* never finished: end the document anyway so the file parses */
		tc_chrome_finish(a->chrome);
	}
	free(a);
}

int tc_an_images_sym(void *images, int pid, uint64_t addr, const char **name, uint64_t *start)
{
	struct tc_img_sym s;

	if (tc_images_symbol(images, pid, addr, &s) || !s.sym)
		return -1;
	*name = s.sym;
	*start = addr - s.sym_off;
	return 0;
}

const char *tc_an_images_dso(void *images, int pid, uint64_t addr)
{
	struct tc_img_sym s;

	return tc_images_symbol(images, pid, addr, &s) ? NULL : s.dso;
}
