/* A record listing made on the decoding threads (--jobs): the writer decoders/jobs.h's
 * struct tc_jobs_writer describes. Each lane formats its records (lib/output/listing.h)
 * into blocks of its own, hands them over as they are, and the caller's thread writes
 * them out in order (writev), each block let go of once its last bytes are and kept for
 * the lanes to fill again. Output is byte for byte what one listing on the FILE makes. */
#ifndef TC_LIB_OUTPUT_LANES_H
#define TC_LIB_OUTPUT_LANES_H

#include <stdbool.h>
#include <stdio.h>

#include "decoders/jobs.h"
#include "lib/output/listing.h"

struct tc_lanes_opts {
	FILE *f;		/* where the listing goes, alone: flushed before each write */
	int fd;			/* f's descriptor, written with writev */
	bool json;
	unsigned fields;	/* -F fields (tc_listing's), 0 the default listing */
};

struct tc_lanes;

/* NULL on ENOMEM. */
struct tc_lanes *tc_lanes_new(const struct tc_lanes_opts *o);
/* Thread names for the listings (tc_listing's comm), before decoding; comm is called
 * from the lanes' threads. */
void tc_lanes_comm(struct tc_lanes *l, tc_comm_fn comm, void *ctx);
/* The writer for a decoder (valid while l is). */
const struct tc_jobs_writer *tc_lanes_writer(struct tc_lanes *l);
/* Write out what the lanes' bytes put so far hold (after decoding: all of it). A failed
 * write goes through f, whose error flag then tells it. */
void tc_lanes_flush(struct tc_lanes *l);
/* Flushes, then lets go of everything (every lane's writer must be closed). */
void tc_lanes_free(struct tc_lanes *l);

#endif
