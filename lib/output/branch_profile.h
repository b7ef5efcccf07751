/* Branch profiles per binary from the instruction ranges of the record stream: what the
 * profile formats for optimisers (autofdo.c: AutoFDO text; bolt.c: BOLT's pre-aggregated
 * branches) are written from. For each binary the trace ran in (found by path and build
 * id), the executed ranges "start, end" (end is the last instruction's address) and the
 * taken branches "from, to", each with its count, in link-time addresses of the file.
 *
 * Ranges are counted as simpleperf counts OpenCSD's instruction ranges: one per range. A
 * range ending in a taken direct branch branches to the start of the next range of its
 * trace stream (CoreSight trace ID, else thread), or to its encoded target (A64; 0 for
 * others) when trace turns off first; a taken indirect branch (return, register call) goes
 * to 0. Trace on ends a stream's chain. Addresses without a found binary are left out,
 * counted per recorded path (tc_branch_profile_warn says which). */
#ifndef TC_LIB_OUTPUT_BRANCH_PROFILE_H
#define TC_LIB_OUTPUT_BRANCH_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "decoders/rec.h"
#include "lib/images/images.h"
#include "lib/util/diag.h"

struct tc_branch_profile_opts {
	/* the binary behind an address, and its bytes (to tell direct from indirect calls and
	 * find direct targets); ctx is the decoder's */
	int (*file)(void *ctx, int pid, uint64_t addr, struct tc_images_file *f);
	size_t (*read)(void *ctx, int pid, uint64_t addr, void *buf, size_t len);
	/* the recorded path mapped at an address whose binary was not found (NULL: none
	 * mapped); may be NULL */
	const char *(*dso)(void *ctx, int pid, uint64_t addr);
	void *ctx;
};

/* (a, b) counted n times: a range start and end, or a branch's from and to (0: not known). */
struct tc_branch_profile_pair {
	uint64_t a, b, n;
};

/* qsort order of pairs: by a, then b (the writers' line order). */
int tc_branch_profile_pair_cmp(const void *x, const void *y);

struct tc_branch_profile_bin {
	const char *dso, *build_id;	/* the decoder's strings */
	uint64_t base;			/* link-time address of the first PT_LOAD segment */
	/* in the order they were first seen hashed (tc_hash's slot order): writers sort */
	struct tc_branch_profile_pair *ranges, *branches;
	size_t nranges, nbranches;
};

struct tc_branch_profile;

struct tc_branch_profile *tc_branch_profile_new(const struct tc_branch_profile_opts *o);
/* Count one record while the decoder's address spaces are current; -1 on ENOMEM. */
int tc_branch_profile_feed(struct tc_branch_profile *p, const struct tc_rec *r);
/* After the last record: the binaries, sorted by path (the strings must still be valid);
 * -1 if memory ran out now or while feeding. */
int tc_branch_profile_finish(struct tc_branch_profile *p, const struct tc_branch_profile_bin **bins,
			     size_t *n);
/* After finish: one warning in d if ranges were left out for want of their binary, with
 * how many of all, and the recorded paths (or "no mapping") and address spans they were
 * in, the most first; format names the output ("autofdo"). Returns the ranges left out. */
uint64_t tc_branch_profile_warn(struct tc_branch_profile *p, const char *format,
				struct tc_diag *d);
void tc_branch_profile_free(struct tc_branch_profile *p);

#endif
