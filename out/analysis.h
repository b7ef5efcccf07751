/* One decoded record stream into one analysis output: the glue a command needs. Feed every
 * record (tc_an_feed) from the decoder's emit callback, then tc_an_finish writes the result
 * (Chrome traces stream as they go). Pieces: out/callstack.h (stacks), out/profile.h
 * (report, diff), out/calltree.h + out/folded.h / out/svg.h, out/chrome.h. */
#ifndef TC_OUT_ANALYSIS_H
#define TC_OUT_ANALYSIS_H

#include <stdbool.h>
#include <stdio.h>

#include "decoders/record.h"
#include "lib/images.h"
#include "out/callstack.h"
#include "out/profile.h"

enum tc_an_format {
	TC_AN_FOLDED,		/* folded stacks */
	TC_AN_CHROME,		/* Chrome trace-event JSON */
	TC_AN_SVG,		/* flame graph */
	TC_AN_REPORT,		/* profile table, text */
	TC_AN_REPORT_JSON,	/* profile table, JSON */
	TC_AN_PROFILE,		/* nothing written: tc_an_profile for tracectl diff */
};

struct tc_an_opts {
	enum tc_an_format format;
	FILE *f;		/* output (not for TC_AN_PROFILE) */
	tc_sym_fn sym;		/* e.g. tc_an_images_sym with sym_ctx = struct tc_images * */
	void *sym_ctx;
	const char *(*dso)(void *ctx, int pid, uint64_t addr);	/* report: dso column, filter */
	void *dso_ctx;
	const char *(*comm)(void *ctx, int pid, int tid);	/* thread names */
	void *comm_ctx;
	int tid, cpu;		/* report/profile: count only these (-1 all) */
	const char *comm_is;	/* report/profile: count only this command */
	struct tc_prof_view view;	/* report: sort, limit, per thread, dso */
	bool thread_roots;	/* folded, svg: a root frame per thread */
	const char *title;	/* svg */
};

struct tc_an;

/* "folded", "chrome", "svg" (the --format words of decode); -1 for anything else. */
int tc_an_format_parse(const char *s, enum tc_an_format *f);

struct tc_an *tc_an_new(const struct tc_an_opts *o);	/* NULL on ENOMEM */
int tc_an_feed(struct tc_an *a, const struct tc_rec *r);	/* -1 on ENOMEM */
/* Write the output. -1 on ENOMEM (now or while feeding) or a write error. */
int tc_an_finish(struct tc_an *a);
const struct tc_cs_stats *tc_an_stats(const struct tc_an *a);
/* The profile (TC_AN_REPORT*, TC_AN_PROFILE; else NULL), valid until tc_an_free. */
const struct tc_profile *tc_an_profile(const struct tc_an *a);
void tc_an_free(struct tc_an *a);

/* tc_sym_fn and dso callback over lib/images.h (ctx: struct tc_images *). */
int tc_an_images_sym(void *images, int pid, uint64_t addr, const char **name, uint64_t *start);
const char *tc_an_images_dso(void *images, int pid, uint64_t addr);

#endif
