/* The record filter of decode, report and diff (--time, --cpu, --pid, --tid, --comm, --dso,
 * --sym): one predicate over decoded records, applied between the decoder's emit and every
 * writer or analysis, so that each output form keeps the same records.
 *
 * A record is kept when it passes every filter given; a record without the value a filter
 * looks at (no perf time, no CPU, no thread, no address) is not kept by that filter. The
 * address of a record is a range's start, a branch's source, an inaccessible address; the
 * thread's name is the one it had when the record happened (tc_rec_filter_comm). */
#ifndef TC_DECODERS_REC_FILTER_H
#define TC_DECODERS_REC_FILTER_H

#include <stdbool.h>
#include <stdint.h>

#include "decoders/rec.h"
#include "lib/util/err.h"

enum tc_rec_filter_key {
	TC_REC_FILTER_TIME,	/* "START,END": perf seconds[.fraction], either side empty */
	TC_REC_FILTER_CPU,	/* "0-3,6" */
	TC_REC_FILTER_PID,	/* "100,102-104" */
	TC_REC_FILTER_TID,
	TC_REC_FILTER_COMM,	/* "name,name" */
	TC_REC_FILTER_DSO,	/* recorded paths or file names */
	TC_REC_FILTER_SYM,	/* symbol names */
};

/* Where the filter looks names up (the decode session's, decoders/session.h). */
struct tc_rec_filter_src {
	int (*sym)(void *ctx, int pid, uint64_t addr, const char **name, uint64_t *start);
	const char *(*dso)(void *ctx, int pid, uint64_t addr);
	const char *(*comm)(void *ctx, const struct tc_rec *r);	/* r's thread's name then */
	void *ctx;
};

struct tc_rec_filter;

struct tc_rec_filter *tc_rec_filter_new(void);	/* NULL on ENOMEM */
void tc_rec_filter_free(struct tc_rec_filter *f);

/* Add one option's value (repeating an option adds to its list; --time replaces).
 * -1 with e filled ("bad ... '%s'") on a bad value or no memory. */
int tc_rec_filter_add(struct tc_rec_filter *f, enum tc_rec_filter_key k, const char *arg,
		      struct tc_err *e);
/* Was this filter given? */
bool tc_rec_filter_has(const struct tc_rec_filter *f, enum tc_rec_filter_key k);
/* The DSO names given (NULL-terminated, empty when none): --format autofdo and bolt take
 * them as the binaries whose profiles they write. */
const char *const *tc_rec_filter_dsos(const struct tc_rec_filter *f);
/* Let --dso name binaries instead of filtering records (autofdo, bolt). */
void tc_rec_filter_dso_off(struct tc_rec_filter *f);

void tc_rec_filter_source(struct tc_rec_filter *f, const struct tc_rec_filter_src *src);

/* Does a binary's recorded path, or its file name, say name? */
bool tc_rec_filter_dso_is(const char *path, const char *name);

/* The thread's name, or NULL: the one place the filter asks for it. */
const char *tc_rec_filter_comm(const struct tc_rec_filter *f, const struct tc_rec *r);

/* The predicate. Always true when no filter was given. */
bool tc_rec_filter_keep(const struct tc_rec_filter *f, const struct tc_rec *r);

/* The predicate on the way to a consumer that follows a thread's flow (call stacks, branch
 * profiles): records kept go to emit; where records of a thread were left out before one
 * that is kept, a TRACE_ON record (text "left out by a filter") goes first, so that no
 * call, return or branch is made up across the gap. -1 on ENOMEM. */
int tc_rec_filter_pass(struct tc_rec_filter *f, const struct tc_rec *r,
		       void (*emit)(void *ctx, const struct tc_rec *r), void *ctx);

#endif
