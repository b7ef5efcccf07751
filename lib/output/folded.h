/* Folded stacks ("frame;frame;frame count" per line), the input of flame graph tools:
 * one line per distinct stack that ran instructions, weighed in instructions. */
#ifndef TC_LIB_OUTPUT_FOLDED_H
#define TC_LIB_OUTPUT_FOLDED_H

#include <stdio.h>

#include "lib/analysis/calltree.h"

/* Depth-first, siblings by name. -1 on ENOMEM or a write error. */
int tc_folded_write(const struct tc_calltree *t, FILE *f);

#endif
