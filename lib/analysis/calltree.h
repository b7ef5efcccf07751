/* A call tree of instruction counts built from call stacks (lib/analysis/callstack.h): one node per
 * distinct path of function names from a root, weighed in instructions. Folded stacks and
 * flame graphs are written from it. */
#ifndef TC_LIB_ANALYSIS_CALLTREE_H
#define TC_LIB_ANALYSIS_CALLTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/analysis/callstack.h"

struct tc_calltree_opts {
	tc_sym_fn sym;		/* names (unknown: "0x<addr>") */
	void *sym_ctx;
	bool thread_roots;	/* a root frame per thread: "comm tid N" / "tid N" / "cpu N" */
	/* A root frame per command (flamegraph.pl's and perf's "comm;frame;frame count"): the
	 * thread's comm, "tid N" where it has none; no root where the thread is not known
	 * (snapshots). thread_roots wins. */
	bool comm_roots;
	const char *(*comm)(void *ctx, int pid, int tid);	/* optional, for the roots */
	void *comm_ctx;
};

struct tc_calltree_node {
	const char *name;
	uint64_t self;		/* instructions of ranges whose stack ends here */
	uint64_t total;		/* self plus the children's totals */
	size_t parent;		/* node 0 is the root above all stacks (name "") */
	size_t child, next;	/* first child, next sibling; 0 for none */
};

struct tc_calltree;

struct tc_calltree *tc_calltree_new(const struct tc_calltree_opts *o);	/* NULL on ENOMEM */
void tc_calltree_range(void *tree,
		       const struct tc_callstack_range *r); /* a tc_callstack_ops.range */
bool tc_calltree_failed(const struct tc_calltree *t);	/* memory ran out: counts incomplete */
void tc_calltree_free(struct tc_calltree *t);

/* Nodes, valid until the next tc_calltree_range. totals are up to date after tc_calltree_sum. */
const struct tc_calltree_node *tc_calltree_nodes(const struct tc_calltree *t, size_t *n);
void tc_calltree_sum(struct tc_calltree *t);
/* Children of node i sorted by name into *out (malloc'd, caller frees); count, -1 ENOMEM. */
ptrdiff_t tc_calltree_children(const struct tc_calltree *t, size_t i, size_t **out);

#endif
