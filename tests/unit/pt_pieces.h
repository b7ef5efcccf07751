/* A trace cut into consecutive buffers, for pt_flow.h's tc_pt_flow_follow in tests (unit and
 * fuzz): the pieces in order, each the next's predecessor. */
#ifndef TC_TESTS_UNIT_PT_PIECES_H
#define TC_TESTS_UNIT_PT_PIECES_H

#include <stdbool.h>
#include <stddef.h>

#include "decoders/intel_pt/pt_flow.h"

struct pieces {
	const struct tc_pt_flow_buf *p;
	size_t n;
};

/* tc_pt_flow_follow's next (ctx: struct pieces): the ith piece after piece at. */
static inline bool next_piece(void *ctx, size_t at, size_t i, struct tc_pt_flow_buf *b)
{
	const struct pieces *ps = ctx;

	if (at + 1 + i >= ps->n)
		return false;
	*b = ps->p[at + 1 + i];
	return true;
}

#endif
