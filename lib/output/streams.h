/* --per-thread DIR: one decoded stream per thread (or per trace ID where the thread is not
 * known), each written through the same record writer as stdout. */
#ifndef TC_LIB_OUTPUT_STREAMS_H
#define TC_LIB_OUTPUT_STREAMS_H

#include <stdbool.h>

#include "lib/output/listing.h"
#include "lib/util/err.h"

struct tc_streams;

/* Creates DIR if needed. json picks .jsonl files, else .txt. Refuses DIR if it is a symbolic
 * link, or exists with anything in it unless overwrite; never writes through a link in it. */
struct tc_streams *tc_streams_open(const char *dir, bool json, bool overwrite,
				   struct tc_err *e);
/* The writer every stream uses (symboliser, thread names, fields): fill it in before the
 * first write; its file is each stream's own. */
struct tc_listing *tc_streams_listing(struct tc_streams *s);
/* Write r to its stream: tid >= 0 -> "tid-<tid>", else "cpu-<cpu>" or "id-0x<id>". */
int tc_streams_write(struct tc_streams *s, const struct tc_rec *r, struct tc_err *e);
/* Closes every file; fails if any write failed. Returns the number of streams in *n. */
int tc_streams_close(struct tc_streams *s, unsigned *n, struct tc_err *e);

#endif
