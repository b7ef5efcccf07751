/* A flame graph as one self-contained SVG file: a bar per call-tree node, as wide as its
 * instructions, callers below callees; hovering shows name and counts, clicking a bar
 * zooms to it (inline script), clicking outside resets. */
#ifndef TC_LIB_OUTPUT_SVG_H
#define TC_LIB_OUTPUT_SVG_H

#include <stdio.h>

#include "lib/analysis/calltree.h"

struct tc_svg_opts {
	const char *title;	/* NULL: "Flame graph" */
	unsigned width;		/* pixels, 0: 1200 */
};

/* Sums t (tc_calltree_sum) and writes the SVG. -1 on ENOMEM or a write error. */
int tc_svg_write(struct tc_calltree *t, FILE *f, const struct tc_svg_opts *o);

#endif
