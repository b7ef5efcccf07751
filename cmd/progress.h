/* Progress of a long decode on stderr: trace bytes done of the total, rate and ETA, on one
 * line redrawn in place. Only for a terminal: silent with -q, under CI (the CI variable set)
 * and when stderr is not a TTY. The first line waits TRACECTL_PROGRESS_DELAY seconds
 * (default 1) so that short decodes print nothing. */
#ifndef TC_CMD_PROGRESS_H
#define TC_CMD_PROGRESS_H

#include <stdint.h>

struct tc_progress;

struct tc_progress *tc_progress_new(void);	/* NULL when progress is not shown */
/* A buffer of trace at [offset, offset + size) of the input, in input order. */
void tc_progress_buffer(struct tc_progress *p, uint64_t offset, uint64_t size);
/* Decoding has reached this input offset (records in any buffer, any order). */
void tc_progress_at(struct tc_progress *p, uint64_t offset);
/* Clear the line and free. */
void tc_progress_end(struct tc_progress *p);

#endif
