/* One decoded record stream into one analysis output: the glue a command needs. Feed every
 * record (tc_analysis_feed) from the decoder's emit callback, then tc_analysis_finish writes the result
 * (Chrome traces stream as they go). Pieces: lib/analysis/callstack.h (stacks), lib/analysis/profile.h
 * (report, diff), lib/analysis/calltree.h + lib/output/folded.h / lib/output/svg.h, lib/output/chrome.h. */
#ifndef TC_LIB_ANALYSIS_ANALYSIS_H
#define TC_LIB_ANALYSIS_ANALYSIS_H

#include <stdbool.h>
#include <stdio.h>

#include "decoders/rec.h"
#include "lib/analysis/callstack.h"
#include "lib/analysis/profile.h"
#include "lib/images/images.h"

enum tc_analysis_format {
	TC_ANALYSIS_FOLDED,		/* folded stacks */
	TC_ANALYSIS_CHROME,		/* Chrome trace-event JSON */
	TC_ANALYSIS_SVG,		/* flame graph */
	TC_ANALYSIS_REPORT,		/* profile table, text */
	TC_ANALYSIS_REPORT_JSON,	/* profile table, JSON */
	TC_ANALYSIS_PROFILE,		/* nothing written: tc_analysis_profile for tracectl diff */
};

struct tc_analysis_opts {
	enum tc_analysis_format format;
	FILE *f;		/* output (not for TC_ANALYSIS_PROFILE) */
	tc_sym_fn sym;		/* e.g. tc_analysis_images_sym with sym_ctx = struct tc_images * */
	void *sym_ctx;
	/* optional: sym's answers are kept while this number is unchanged (lib/analysis/
	 * symcache.h; decoders/session.h tc_session_space) */
	const uint64_t *(*space)(void *ctx);
	void *space_ctx;
	const char *(*dso)(void *ctx, int pid, uint64_t addr);	/* report: dso column, filter */
	void *dso_ctx;
	const char *(*comm)(void *ctx, int pid, int tid);	/* thread names */
	void *comm_ctx;
	int tid, cpu;		/* report/profile: count only these (-1 all) */
	const char *comm_is;	/* report/profile: count only this command */
	struct tc_profile_view view;	/* report: sort, limit, per thread, dso */
	bool thread_roots;	/* folded, svg: a root frame per thread */
	bool comm_roots;	/* folded, svg: a root frame per command name (comm) */
	const char *title;	/* svg */
};

struct tc_analysis;

/* "folded", "chrome", "svg" (the --format words of decode); -1 for anything else. */
int tc_analysis_format_parse(const char *s, enum tc_analysis_format *f);

struct tc_analysis *tc_analysis_new(const struct tc_analysis_opts *o);	/* NULL on ENOMEM */
int tc_analysis_feed(struct tc_analysis *a, const struct tc_rec *r);	/* -1 on ENOMEM */
/* A run of RANGE records r[0..n) in one address space (decoders/decoder.h emit_ranges: the
 * sym answers hold for all of them), as tc_analysis_feed of each. -1 on ENOMEM. */
int tc_analysis_feed_ranges(struct tc_analysis *a, const struct tc_rec *r, size_t n);
/* Write the output. -1 on ENOMEM (now or while feeding) or a write error. */
int tc_analysis_finish(struct tc_analysis *a);
const struct tc_callstack_stats *tc_analysis_stats(const struct tc_analysis *a);
/* The profile (TC_ANALYSIS_REPORT*, TC_ANALYSIS_PROFILE; else NULL), valid until tc_analysis_free. */
const struct tc_profile *tc_analysis_profile(const struct tc_analysis *a);
void tc_analysis_free(struct tc_analysis *a);

/* tc_sym_fn and dso callback over lib/images/images.h (ctx: struct tc_images *). */
int tc_analysis_images_sym(void *images, int pid, uint64_t addr, const char **name,
			   uint64_t *start);
const char *tc_analysis_images_dso(void *images, int pid, uint64_t addr);

#endif
