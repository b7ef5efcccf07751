/* One trace format's decoder behind one interface (as perf's struct auxtrace): the decode
 * session (decoders/session.c) hands it every perf.data record in file order, side-band,
 * AUXTRACE_INFO and AUXTRACE alike, then asks it to finish: decode what it queued and say
 * what it found. Writers and analyses then look symbols, DSOs and images up through it.
 * Each applies the side-band (MMAP, COMM, FORK) itself, when its trace needs it: a format
 * without time in its trace can only apply all of it before decoding, one with time
 * applies it as the trace's time passes it, so that a later mapping is not seen early.
 * One implementation per format (decoders/coresight/cs_decoder.c,
 * decoders/intel_pt/pt_decoder.c), listed once in decoders/decoders.c. */
#ifndef TC_DECODERS_DECODER_H
#define TC_DECODERS_DECODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoders/jobs.h"
#include "decoders/rec.h"
#include "lib/images/images.h"
#include "lib/perfdata/perf_data.h"
#include "lib/util/diag.h"
#include "lib/util/err.h"

struct tc_decoder_opts {
	const char *symfs;		/* root for recorded paths, or NULL */
	const char *buildid_dir;	/* perf's build-id cache, or NULL */
	struct tc_kernel *kernel;	/* kernel images (lib/images/kernel.h), or NULL */
	bool packets;			/* TC_REC_PACKET records instead of instruction flow */
	bool branches;			/* TC_REC_BRANCH records instead of ranges */
	const bool *want_id;		/* 128 trace-ID flags, or NULL for all */
	/* Threads to decode with (--jobs; 0 or 1: none besides the caller's). Records come
	 * out the same, in the same order, whatever the number. */
	unsigned jobs;
	/* With jobs: where the records go to one writer that can run on the decoding threads
	 * (decoders/jobs.h; NULL: none). A decoder that uses it emits no record. */
	const struct tc_jobs_writer *writer;
	/* --decoder=reference: the trace library's own full decoder (libipt's block decoder,
	 * OpenCSD's packet decoder), the oracle of the fast paths. */
	bool reference;
	void (*emit)(void *ctx, const struct tc_rec *r);	/* required */
	/* Optional (ctx as emit's): RANGE records in runs r[0..n), n >= 1, instead of one emit
	 * each, in their order among the records emit gets. A run is of one queue or trace ID,
	 * pid, tid and cpu, and in one address space: symbolize, sym, dso and space answer for
	 * every record of it as they would for each emitted alone. A decoder may ignore it
	 * (NULL: every record through emit). */
	void (*emit_ranges)(void *ctx, const struct tc_rec *r, size_t n);
	void *ctx;
	/* The records go to analyses only: none reads their offsets but to tell the buffer
	 * (a decoder may then give approximate ones). */
	bool no_offsets;
};

struct tc_decoder_ops {
	const char *name;
	uint32_t auxtrace_type;		/* AUXTRACE_INFO type the format records */
	/* NULL with e filled on failure. */
	void *(*new)(const struct tc_decoder_opts *o, struct tc_err *e);
	/* One record, in file order; -1 on unusable input (a fatal problem) or no memory. */
	int (*process)(void *dec, const struct tc_perf_data *pd,
		       const struct tc_perf_data_record *r, struct tc_err *e);
	/* Decode what was queued, then append warnings and the status line to m (input names
	 * the file in them). Returns the number of problems warned about, -1 when decoding
	 * cannot be set up. */
	int (*finish)(void *dec, const struct tc_perf_data *pd, const char *input,
		      struct tc_diag *m, struct tc_err *e);
	void (*free)(void *dec);
	/* tc_symbolize_fn (lib/output/listing.h) for the record writer, valid while a record
	 * is emitted: what maps pid's addr in that record's address space (the one the
	 * decoder is in: a later mapping is not seen early; for another pid, as an event's,
	 * any that maps it); -1 where nothing maps it. */
	int (*symbolize)(void *dec, int pid, uint64_t addr, struct tc_images_sym *s);
	/* For analyses after decoding (lib/analysis/analysis.h's sym and dso callbacks). */
	int (*sym)(void *dec, int pid, uint64_t addr, const char **name, uint64_t *start);
	const char *(*dso)(void *dec, int pid, uint64_t addr);
	/* Optional, for caches of sym and dso answers, and of symbolize's for a pid >= 0 (the
	 * record writer's, lib/output/listing.h): where the decoder keeps a number that
	 * changes whenever they may answer differently (side-band applied, address spaces
	 * made, records emitted from another address space or pid than the last), valid until
	 * free; the names they gave stay valid while it is unchanged. NULL (or no op): no
	 * cache may keep an answer. */
	const uint64_t *(*space)(void *dec);
	/* The address spaces that map pid's addr, or NULL. */
	struct tc_images *(*images_at)(void *dec, int pid, uint64_t addr);
};

#endif
