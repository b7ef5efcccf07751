#include "lib/output/folded.h"

#include <inttypes.h>
#include <stdlib.h>

#include "lib/util/grow.h"

struct walk {
	const struct tc_calltree *t;
	const struct tc_calltree_node *node;
	FILE *f;
	size_t *path;		/* node ids from the top */
	size_t depth, cap;
};

static int visit(struct walk *w, size_t i)
{
	size_t *kids;
	ptrdiff_t n;
	int rc = 0;

	if (tc_grow((void **)&w->path, &w->cap, w->depth + 1, sizeof(*w->path)))
		return -1;
	w->path[w->depth++] = i;
	if (w->node[i].self) {
		for (size_t k = 0; k < w->depth; k++)
			fprintf(w->f, "%s%s", k ? ";" : "", w->node[w->path[k]].name);
		fprintf(w->f, " %" PRIu64 "\n", w->node[i].self);
	}
	n = tc_calltree_children(w->t, i, &kids);
	if (n < 0)
		return -1;
	for (ptrdiff_t k = 0; k < n && !rc; k++)
		rc = visit(w, kids[k]);
	free(kids);
	w->depth--;
	return rc;
}

int tc_folded_write(const struct tc_calltree *t, FILE *f)
{
	struct walk w = { .t = t, .f = f };
	size_t n, *top;
	ptrdiff_t nt;
	int rc = 0;

	w.node = tc_calltree_nodes(t, &n);
	nt = tc_calltree_children(t, 0, &top);	/* node 0 is above the stacks: not a frame */
	if (nt < 0)
		return -1;
	for (ptrdiff_t k = 0; k < nt && !rc; k++)
		rc = visit(&w, top[k]);
	free(top);
	free(w.path);
	return rc || ferror(f) ? -1 : 0;
}
