/* AutoFDO text as simpleperf's `inject` writes it, from the instruction ranges of the record
 * stream: per binary (sorted by path) the executed ranges "start-end:count" (end is the last
 * instruction's address), an empty address section "0", the taken branches
 * "from->to:count", then "// build_id: 0x<40 hex digits>" and "// <recorded path>" and a
 * blank line. Addresses are link-time addresses less the first PT_LOAD segment's.
 *
 * Ranges are counted as simpleperf counts OpenCSD's instruction ranges: one per range. A
 * range ending in a taken direct branch branches to the start of the next range of its
 * trace stream (CoreSight trace ID, else thread), or to its encoded target (A64; 0 for
 * others) when trace turns off first; a taken indirect branch (return, register call) goes to 0. Trace on ends a
 * stream's chain. Addresses without a found binary are left out. */
#ifndef TC_LIB_OUTPUT_AUTOFDO_H
#define TC_LIB_OUTPUT_AUTOFDO_H

#include <stdio.h>

#include "decoders/rec.h"
#include "lib/images/images.h"

struct tc_autofdo_opts {
	/* the binary behind an address, and its bytes (to tell direct from indirect calls and
	 * find direct targets); ctx is the decoder's */
	int (*file)(void *ctx, int pid, uint64_t addr, struct tc_images_file *f);
	size_t (*read)(void *ctx, int pid, uint64_t addr, void *buf, size_t len);
	void *ctx;
};

struct tc_autofdo;

struct tc_autofdo *tc_autofdo_new(const struct tc_autofdo_opts *o);	/* NULL on ENOMEM */
/* Count one record while the decoder's address spaces are current; -1 on ENOMEM. */
int tc_autofdo_feed(struct tc_autofdo *a, const struct tc_rec *r);
/* Write the text (the binaries' strings must still be valid); -1 on ENOMEM or a write
 * error. */
int tc_autofdo_write(struct tc_autofdo *a, FILE *f);
void tc_autofdo_free(struct tc_autofdo *a);

#endif
