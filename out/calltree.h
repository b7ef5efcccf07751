/* A call tree of instruction counts built from call stacks (out/callstack.h): one node per
 * distinct path of function names from a root, weighed in instructions. Folded stacks and
 * flame graphs are written from it. */
#ifndef TC_OUT_CALLTREE_H
#define TC_OUT_CALLTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "out/callstack.h"

struct tc_tree_opts {
	tc_sym_fn sym;		/* names (unknown: "0x<addr>") */
	void *sym_ctx;
	bool thread_roots;	/* a root frame per thread: "comm tid N" / "tid N" / "cpu N" */
	const char *(*comm)(void *ctx, int pid, int tid);	/* optional, for thread roots */
	void *comm_ctx;
};

struct tc_tree_node {
	const char *name;
	uint64_t self;		/* instructions of ranges whose stack ends here */
	uint64_t total;		/* self plus the children's totals */
	size_t parent;		/* node 0 is the root above all stacks (name "") */
	size_t child, next;	/* first child, next sibling; 0 for none */
};

struct tc_tree;

struct tc_tree *tc_tree_new(const struct tc_tree_opts *o);	/* NULL on ENOMEM */
void tc_tree_range(void *tree, const struct tc_cs_range *r);	/* a tc_cs_ops.range */
bool tc_tree_failed(const struct tc_tree *t);	/* memory ran out: counts incomplete */
void tc_tree_free(struct tc_tree *t);

/* Nodes, valid until the next tc_tree_range. totals are up to date after tc_tree_sum. */
const struct tc_tree_node *tc_tree_nodes(const struct tc_tree *t, size_t *n);
void tc_tree_sum(struct tc_tree *t);
/* Children of node i sorted by name into *out (malloc'd, caller frees); count, -1 ENOMEM. */
ptrdiff_t tc_tree_children(const struct tc_tree *t, size_t i, size_t **out);

#endif
