/* Exact instruction profile from call stacks (lib/analysis/callstack.h): per thread and function,
 * self and total (inclusive) instruction counts, calls, hottest address ranges; tables
 * sorted, limited and filtered, written as text or JSON; and the difference of two
 * profiles (tracectl report / tracectl diff are thin commands over this).
 *
 * Counting: a range's instructions are self of the deepest frame's function and total of
 * every function on its stack, once per function however often recursion repeats it. A call
 * is a frame entered by a traced call, syscall, exception or tail call; ROOT frames (entered
 * unseen) count none. Functions are told apart by process and address; merged views (all
 * threads, diffs) go by dso and name. */
#ifndef TC_LIB_ANALYSIS_PROFILE_H
#define TC_LIB_ANALYSIS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/analysis/callstack.h"
#include "lib/util/json.h"

#define TC_PROFILE_HOT 4	/* hottest address ranges kept per table row */

struct tc_profile_opts {
	tc_sym_fn sym;		/* function names and starts (also give it to the callstack) */
	void *sym_ctx;
	/* optional: the dso holding addr ("[kernel]", "/usr/lib/libc.so.6"), NULL unknown */
	const char *(*dso)(void *ctx, int pid, uint64_t addr);
	void *dso_ctx;
	/* optional: the command name of a thread */
	const char *(*comm)(void *ctx, int pid, int tid);
	void *comm_ctx;
	/* filters on what is counted: -1 / NULL for all */
	int tid, cpu;
	const char *comm_is;	/* needs comm */
};

enum tc_profile_sort {
	TC_PROFILE_BY_SELF,
	TC_PROFILE_BY_TOTAL,
	TC_PROFILE_BY_CALLS,
	TC_PROFILE_BY_NAME
};

/* How a table is cut: rows sorted (name ascending, figures descending; ties by name), at
 * most limit rows per thread (0: all), only functions of dso (NULL: all). */
struct tc_profile_view {
	enum tc_profile_sort sort;
	size_t limit;
	bool per_thread;	/* one table per thread, else one for all threads */
	const char *dso;
};

struct tc_profile_hot {
	uint64_t start, end, insns;
};

struct tc_profile_row {
	const char *name, *dso;	/* dso may be NULL */
	uint64_t addr;		/* function start (first thread's, in merged tables) */
	uint64_t self, total, calls;
	struct tc_profile_hot hot[TC_PROFILE_HOT];	/* hottest first; insns 0 ends the list */
};

struct tc_profile_thread {
	int pid, tid, cpu;	/* -1 in the all-threads table */
	const char *comm;	/* may be NULL */
	uint64_t insns;		/* every instruction the thread ran */
	size_t funcs;		/* functions executed (coverage), before limit and dso filter */
	struct tc_profile_row *rows;
	size_t n;
};

struct tc_profile_table {
	struct tc_profile_thread *threads;	/* in order of first appearance */
	size_t n;
	uint64_t insns;		/* every counted instruction */
};

struct tc_profile;

struct tc_profile *tc_profile_new(const struct tc_profile_opts *o);	/* NULL on ENOMEM */
/* Count one range: a tc_callstack_ops.range callback (ctx = the profile). */
void tc_profile_range(void *prof, const struct tc_callstack_range *r);
bool tc_profile_failed(const struct tc_profile *p);	/* memory ran out: figures incomplete */
void tc_profile_free(struct tc_profile *p);

/* Tables by view; -1 on ENOMEM. Strings point into the profile: free the table first. */
int tc_profile_table(const struct tc_profile *p, const struct tc_profile_view *v,
		  struct tc_profile_table *t);
void tc_profile_table_free(struct tc_profile_table *t);

void tc_profile_write_text(const struct tc_profile_table *t, FILE *f);
/* {"insns":N,"threads":[{"pid":..,"tid":..,"cpu":..,"comm":..,"insns":..,"functions":..,
 *  "rows":[{"name":..,"dso":..,"addr":..,"self":..,"total":..,"calls":..,
 *  "hot":[{"start":..,"end":..,"insns":..}]}]}]} */
void tc_profile_write_json(const struct tc_profile_table *t, struct tc_json *j);

/* ---- diff of two profiles (all threads merged), by dso and name ---- */

struct tc_profile_diff_row {
	const char *name, *dso;
	uint64_t a_self, b_self, a_total, b_total, a_calls, b_calls;
	/* relative change in percent; +inf where A had none and B has some */
	double self_pct, total_pct;
};

struct tc_profile_diff {
	struct tc_profile_diff_row *rows;	/* only functions whose figures changed */
	size_t n;
	uint64_t a_insns, b_insns;
};

/* Rows sorted by the view's key applied to the absolute change (name: by name); view's
 * limit and dso apply, per_thread is ignored. -1 on ENOMEM. */
int tc_profile_diff(const struct tc_profile *a, const struct tc_profile *b,
		 const struct tc_profile_view *v, struct tc_profile_diff *d);
void tc_profile_diff_free(struct tc_profile_diff *d);
/* The first row (in d's order) whose self (total_pct: total) count grew by more than pct
 * percent, or NULL: tracectl diff --fail-above. */
const struct tc_profile_diff_row *tc_profile_diff_grew(const struct tc_profile_diff *d, double pct,
						 bool total);
void tc_profile_diff_write_text(const struct tc_profile_diff *d, FILE *f);
/* {"a_insns":N,"b_insns":N,"rows":[{"name":..,"dso":..,"a_self":..,"b_self":..,
 *  "self_change":..,"self_pct":..|null,...}]} (null for an infinite change) */
void tc_profile_diff_write_json(const struct tc_profile_diff *d, struct tc_json *j);

#endif
