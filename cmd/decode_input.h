/* The input side shared by decode, report and diff (cmd/decode_input.c): an OpenCSD snapshot
 * directory or a perf.data recording (Intel PT or CoreSight; packets or instruction flow),
 * decoded into records for one emit callback. Warnings (missing trace, lost data, decode
 * errors, missing images) and the status line go to stderr here. */
#ifndef TC_CMD_DECODE_INPUT_H
#define TC_CMD_DECODE_INPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "decoders/rec.h"
#include "lib/images/images.h"
#include "lib/output/listing.h"

struct tc_decode_args {
	const char *input;		/* perf.data file, "-" (pipe) or snapshot directory */
	const char *buffer;		/* snapshot: trace buffer name, NULL the first */
	const char *symfs;
	bool packets, branches;
	bool any_id;			/* want_id was given (--id) */
	bool want_id[128];
};

struct tc_dec;

/* rec: the stdout record writer, which gets the decoder's symboliser (may be NULL). */
struct tc_dec *tc_dec_new(const struct tc_decode_args *a,
			  void (*emit)(void *ctx, const struct tc_rec *r), void *ctx,
			  struct tc_listing *rec);
/* Decode everything; fatal on unusable input. Returns the number of problems warned about
 * (decode errors, missing trace or images, lost data): exit status 3 when non-zero. */
int tc_dec_run(struct tc_dec *d);
void tc_dec_free(struct tc_dec *d);

/* For analyses (lib/analysis/analysis.h): symbols, dso and thread names of what was decoded; ctx is
 * the struct tc_dec. Valid during tc_dec_run and until tc_dec_free. */
int tc_dec_sym(void *ctx, int pid, uint64_t addr, const char **name, uint64_t *start);
const char *tc_dec_dso(void *ctx, int pid, uint64_t addr);
const char *tc_dec_comm(void *ctx, int pid, int tid);
/* The binary behind addr (lib/output/autofdo.h), and its bytes; -1 / 0 where unknown. */
int tc_dec_file(void *ctx, int pid, uint64_t addr, struct tc_images_file *f);
size_t tc_dec_read(void *ctx, int pid, uint64_t addr, void *buf, size_t len);

/* "0x10,0x11" into want; -1 on a bad ID. */
int tc_parse_trace_ids(const char *arg, bool want[128]);

#endif
