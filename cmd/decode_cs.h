/* tracectl decode for CoreSight perf.data (cmd/decode_cs.c): drives decoders/coresight/cs_perf and
 * reports what it found. cmd/decode.c hands it every record. */
#ifndef TC_CMD_DECODE_CS_H
#define TC_CMD_DECODE_CS_H

#include <stdbool.h>

#include "decoders/rec.h"
#include "lib/perfdata/perf_data.h"
#include "lib/output/listing.h"

struct decode_cs;

/* want_id: 128 flags or NULL; out: the stdout writer, which gets the symboliser (NULL with
 * --per-thread). */
struct decode_cs *decode_cs_new(const char *symfs, bool packets, bool branches,
				const bool *want_id,
				void (*emit)(void *ctx, const struct tc_rec *r), void *ctx,
				struct tc_listing *out);
void decode_cs_record(struct decode_cs *c, const struct tc_perf_data_record *r);
bool decode_cs_is_cs_etm(const struct decode_cs *c);
/* Decode what was kept, warn about problems, print the status line; returns the number of
 * problems warned about. */
int decode_cs_finish(struct decode_cs *c, struct tc_perf_data *pd, const char *input);
void decode_cs_free(struct decode_cs *c);
/* The session behind it (decoders/coresight/cs_perf.h), for symbols in analyses. */
struct tc_cs_perf *decode_cs_session(struct decode_cs *c);

/* perf's build-id cache: $PERF_BUILDID_DIR, else ~/.debug; NULL if neither (malloc'd). */
char *tc_buildid_dir(void);

#endif
