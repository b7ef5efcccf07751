/* CoreSight decode of a whole perf.data recording (AUXTRACE_INFO type 3). The caller hands
 * over every record in file order: the CS_ETM metadata gives one decoder configuration per
 * CPU (decoders/cs_meta), AUX_OUTPUT_HW_ID records move trace IDs, MMAP/MMAP2/COMM/FORK
 * build the address spaces (lib/images), AUX records mark where the kernel's AUX blocks
 * begin, and AUXTRACE buffers are kept. tc_csp_decode() then runs every buffer through one
 * demultiplexer + per-ID OpenCSD session (decoders/cs_session), resetting it at buffer and
 * AUX block boundaries as perf does; the thread of each record comes from the trace's
 * context ID (the kernel writes the tid there), else from the CPU's ITRACE_START. The
 * side-band is applied whole before decoding: mappings are not replayed in time. */
#ifndef TC_CS_PERF_H
#define TC_CS_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoders/record.h"
#include "lib/err.h"
#include "lib/images.h"
#include "lib/perf_data.h"

struct tc_csp_opts {
	const char *symfs;		/* root for recorded paths, or NULL */
	const char *buildid_dir;	/* build-id cache, or NULL */
	bool packets;			/* TC_REC_PACKET records instead of elements */
	bool branches;			/* TC_REC_BRANCH records (perf's convention) instead of
					 * ranges; other elements are dropped, problems kept */
	const bool *want_id;		/* 128 flags, or NULL for every trace ID */
	void (*emit)(void *ctx, const struct tc_rec *r);	/* required */
	void *ctx;
};

struct tc_csp_stats {
	uint64_t buffers, bytes, blocks;	/* AUXTRACE buffers; AUX blocks decoded */
	uint64_t packets, ranges, insns, branches;
	uint64_t errors;		/* decode errors (each emitted, decoding resyncs) */
	uint64_t nomap;			/* no_image records */
	uint64_t unknown_id_bytes;	/* trace of IDs the metadata does not name */
	uint64_t demux_errors;
};

struct tc_csp;

struct tc_csp *tc_csp_new(const struct tc_csp_opts *o, struct tc_err *e);
void tc_csp_free(struct tc_csp *s);

/* One record, in file order. -1 on unusable CS_ETM metadata or out of memory. */
int tc_csp_record(struct tc_csp *s, const struct tc_pd_record *r, struct tc_err *e);
bool tc_csp_is_cs_etm(const struct tc_csp *s);
/* Decode everything kept. pd gives the build-id feature. -1 only if a decoder cannot be
 * set up (message names the trace ID); bad trace gives records and counts. */
int tc_csp_decode(struct tc_csp *s, const struct tc_perf_data *pd, struct tc_err *e);

const struct tc_csp_stats *tc_csp_stats(const struct tc_csp *s);
/* Problems worth a warning (demux errors, IDs without metadata, missing images). */
void tc_csp_diag(const struct tc_csp *s, struct tc_diag *diag);
/* A tc_symbolize_fn (out/records.h) valid while records are emitted; ctx is the session. */
int tc_csp_symbolize(void *ctx, uint64_t addr, char *buf, size_t len);

/* The address spaces, for analyses after decoding (out/analysis.h's tc_an_images_sym). */
struct tc_images *tc_csp_images(struct tc_csp *s);

#endif
