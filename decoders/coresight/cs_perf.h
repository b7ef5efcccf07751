/* CoreSight decode of a whole perf.data recording (AUXTRACE_INFO type 3). The caller hands
 * over every record in file order: the CS_ETM metadata gives one decoder configuration per
 * CPU (decoders/coresight/cs_meta), AUX_OUTPUT_HW_ID records move trace IDs, MMAP/MMAP2/COMM/FORK
 * build the address spaces (lib/images/images), AUX records mark where the kernel's AUX blocks
 * begin, and AUXTRACE buffers are kept. tc_cs_perf_decode() then runs every buffer through one
 * demultiplexer + per-ID OpenCSD session (decoders/coresight/cs_session), resetting it at buffer and
 * AUX block boundaries as perf does; the thread of each record comes from the trace's
 * context ID (the kernel writes the tid there), else from the CPU's ITRACE_START. The
 * side-band is applied whole before decoding: mappings are not replayed in time. */
#ifndef TC_DECODERS_CORESIGHT_CS_PERF_H
#define TC_DECODERS_CORESIGHT_CS_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoders/jobs.h"
#include "decoders/rec.h"
#include "lib/images/images.h"
#include "lib/perfdata/perf_data.h"
#include "lib/util/diag.h"
#include "lib/util/err.h"

struct tc_cs_perf_opts {
	const char *symfs;		/* root for recorded paths, or NULL */
	const char *buildid_dir;	/* build-id cache, or NULL */
	struct tc_kernel *kernel;	/* kernel images (lib/images/kernel.h), or NULL */
	bool packets;			/* TC_REC_PACKET records instead of elements */
	bool branches;			/* TC_REC_BRANCH records (perf's convention) instead of
					 * ranges; other elements are dropped, problems kept */
	const bool *want_id;		/* 128 flags, or NULL for every trace ID */
	bool reference;			/* OpenCSD's full decoder only (TC_ETM_REFERENCE) */
	/* Threads (--jobs): above 1, trace IDs decode in parallel, records in the same
	 * order. The kernel's images must then be unused (lib/images/kernel is shared). */
	unsigned jobs;
	/* With jobs: the records' writer, on the threads (decoders/jobs.h), or NULL. */
	const struct tc_jobs_writer *writer;
	void (*emit)(void *ctx, const struct tc_rec *r);	/* required */
	void *ctx;
};

struct tc_cs_perf_stats {
	uint64_t buffers, bytes, blocks;	/* AUXTRACE buffers; AUX blocks decoded */
	uint64_t packets, ranges, insns, branches;
	uint64_t errors;		/* decode errors (each emitted, decoding resyncs) */
	uint64_t nomap;			/* no_image records */
	uint64_t unknown_id_bytes;	/* trace of IDs the metadata does not name */
	uint64_t demux_errors;
};

struct tc_cs_perf;

struct tc_cs_perf *tc_cs_perf_new(const struct tc_cs_perf_opts *o, struct tc_err *e);
void tc_cs_perf_free(struct tc_cs_perf *s);

/* One record, in file order. -1 on unusable CS_ETM metadata or out of memory. */
int tc_cs_perf_record(struct tc_cs_perf *s, const struct tc_perf_data_record *r, struct tc_err *e);
bool tc_cs_perf_is_cs_etm(const struct tc_cs_perf *s);
/* Decode everything kept. pd gives the build-id feature. -1 only if a decoder cannot be
 * set up (message names the trace ID); bad trace gives records and counts. */
int tc_cs_perf_decode(struct tc_cs_perf *s, const struct tc_perf_data *pd, struct tc_err *e);

const struct tc_cs_perf_stats *tc_cs_perf_stats(const struct tc_cs_perf *s);
/* Problems worth a warning (demux errors, IDs without metadata, missing images). */
void tc_cs_perf_diag(const struct tc_cs_perf *s, struct tc_diag *diag);
/* A tc_symbolize_fn (lib/output/listing.h) valid while records are emitted; ctx is the session. */
int tc_cs_perf_symbolize(void *ctx, int pid, uint64_t addr, struct tc_images_sym *sym);

/* The address spaces, for analyses after decoding (lib/analysis/analysis.h's tc_analysis_images_sym). */
struct tc_images *tc_cs_perf_images(struct tc_cs_perf *s);

#endif
