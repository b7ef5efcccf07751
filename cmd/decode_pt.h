/* tracectl decode, Intel PT instruction flow (cmd/decode_pt.c): the part of decode that
 * drives decoders/intel_pt/pt_session and reports what it found. cmd/decode.c hands it records. */
#ifndef TC_CMD_DECODE_PT_H
#define TC_CMD_DECODE_PT_H

#include <stdbool.h>

#include "decoders/rec.h"
#include "lib/perfdata/perf_data.h"
#include "lib/output/listing.h"

struct decode_pt;

/* out: the stdout writer, which gets the symboliser (NULL with --per-thread). */
struct decode_pt *decode_pt_new(const char *symfs, bool branches,
				void (*emit)(void *ctx, const struct tc_rec *r), void *ctx,
				struct tc_listing *out);
/* Every record in file order; fatal on an unusable AUXTRACE_INFO or no memory. */
void decode_pt_record(struct decode_pt *p, struct tc_perf_data *pd,
		      const struct tc_perf_data_record *r);
/* Whether the input held Intel PT (else another decoder's turn). */
bool decode_pt_is_intel_pt(const struct decode_pt *p);
/* Decode the queued trace, then report: warnings for missing images, errors, overflows
 * and a status line. Returns the number of problems warned about. */
int decode_pt_finish(struct decode_pt *p, struct tc_perf_data *pd, const char *input);
void decode_pt_free(struct decode_pt *p);
/* The session behind it (decoders/intel_pt/pt_session.h), for symbols in analyses. */
struct tc_pt_session *decode_pt_session(struct decode_pt *p);

#endif
