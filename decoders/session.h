/* One decode session: an OpenCSD snapshot directory or a perf.data recording (file or pipe),
 * decoded into records for one emit callback. For perf.data it reads the records, picks the
 * decoder by the file's AUXTRACE_INFO type (decoders/decoders.c), hands it every record,
 * keeps the tracepoint samples (decoders/events.c) and emits them among the trace by time,
 * keeps thread names, and accounts for AUX data announced but missing, truncated or lost.
 * It never prints: warnings and status lines come back in order as messages, fatal
 * problems as -1 with e filled (messages gathered before it still stand). */
#ifndef TC_DECODERS_SESSION_H
#define TC_DECODERS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoders/rec.h"
#include "lib/images/images.h"
#include "lib/perfdata/perf_data.h"
#include "lib/images/kernel.h"
#include "lib/util/diag.h"
#include "lib/util/err.h"

struct tc_session_opts {
	const char *input;		/* perf.data file, "-" (pipe) or snapshot directory */
	const char *buffer;		/* snapshot: trace buffer name, NULL the first */
	const char *symfs;
	/* Kernel images (lib/images/kernel.h): --vmlinux, --kallsyms, --kcore; sysfs root for
	 * module sections. Each may be NULL. */
	struct tc_kernel_opts kernel;
	bool packets, branches;
	unsigned jobs;			/* --jobs (decoders/decoder.h) */
	/* With jobs: where emit's records go to one writer that can run on the decoding
	 * threads (decoders/jobs.h), or NULL. Where the decoder uses it (CoreSight perf.data
	 * without tracepoint samples to interleave), emit gets no record. */
	const struct tc_jobs_writer *writer;
	bool reference;			/* --decoder=reference (decoders/decoder.h) */
	/* Optional: runs of RANGE records (decoders/decoder.h emit_ranges; ctx: emit's), where
	 * the decoder makes them; the records around a run still go to emit, in order. */
	void (*emit_ranges)(void *ctx, const struct tc_rec *r, size_t n);
	bool no_offsets;		/* records for analyses only (decoders/decoder.h) */
	bool any_id;			/* want_id was given (--id) */
	bool want_id[128];
	/* decode --show-events: every record of a perf.data goes here, in file order, and
	 * nothing is decoded (the session still reports lost data and a bad file). r is
	 * valid only during the call. */
	void (*record)(void *ctx, const struct tc_perf_data_record *r);
	void *record_ctx;
};

/* What the command watches while a perf.data is read; every member may be NULL. */
struct tc_session_progress {
	void (*begin)(void *ctx);	/* the input is open, reading starts */
	/* A buffer of trace at [offset, offset + size) of the input, in input order. */
	void (*buffer)(void *ctx, uint64_t offset, uint64_t size);
	/* Decoding has reached this input offset (records in any buffer, any order); told
	 * for every 256th record. */
	void (*at)(void *ctx, uint64_t offset);
	void (*end)(void *ctx);		/* decoding is done (or failed) */
	/* True: stop reading records (the output failed; the command reports it). */
	bool (*stop)(void *ctx);
	void *ctx;
};

struct tc_session;

/* emit gets every record; r is valid only during the call. NULL on ENOMEM. */
struct tc_session *tc_session_new(const struct tc_session_opts *o,
				  void (*emit)(void *ctx, const struct tc_rec *r), void *ctx);
void tc_session_free(struct tc_session *s);

/* Decode everything. Warnings and status lines are appended to m in the order they are to
 * be shown. Returns the number of problems warned about (decode errors, missing trace or
 * images, lost data), or -1 on unusable input with e filled. p may be NULL. */
int tc_session_run(struct tc_session *s, const struct tc_session_progress *p,
		   struct tc_diag *m, struct tc_err *e);

/* The record writer's symboliser (lib/output/listing.h tc_symbolize_fn): symbol, offset
 * and DSO of pid's addr in the address space of the record being emitted; ctx is the session.
 * Valid while records are emitted. */
int tc_session_symbolize(void *ctx, int pid, uint64_t addr, struct tc_images_sym *sym);

/* For analyses (lib/analysis/analysis.h): symbols, dso and thread names of what was
 * decoded; ctx is the session. Valid during tc_session_run and until tc_session_free. */
int tc_session_sym(void *ctx, int pid, uint64_t addr, const char **name, uint64_t *start);
const char *tc_session_dso(void *ctx, int pid, uint64_t addr);
/* For caches of tc_session_sym and tc_session_dso answers, and of tc_session_symbolize's
 * for a pid >= 0: where the decoder keeps a number that changes whenever they may answer
 * differently (side-band applied, records emitted from another address space or pid:
 * decoders/decoder.h's space), valid until tc_session_free; names they gave stay valid
 * while it is unchanged. NULL: not known (yet: no decoder picked), keep nothing; ask
 * again later. */
const uint64_t *tc_session_space(void *ctx);
const char *tc_session_comm(void *ctx, int pid, int tid);	/* the latest name */
/* The one lookup of a record's thread name (lib/output/listing.h tc_comm_fn; filters by
 * comm): tid's command name when r happened (r's perf time; the latest where r has none),
 * from COMM records and, before a thread's first, its parent's at FORK; the process's
 * where the thread has none. NULL where unknown. */
const char *tc_session_comm_rec(void *ctx, const struct tc_rec *r);
/* The binary behind addr (lib/output/autofdo.h), and its bytes; -1 / 0 where unknown. */
int tc_session_file(void *ctx, int pid, uint64_t addr, struct tc_images_file *f);
size_t tc_session_read(void *ctx, int pid, uint64_t addr, void *buf, size_t len);

#endif
