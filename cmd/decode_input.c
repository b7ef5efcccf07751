/* Input side of decode/report/diff: snapshot directory or perf.data, through the decoder
 * that fits (cmd/decode_snapshot.c, cmd/decode_pt.c, cmd/decode_cs.c), plus the account of
 * AUX data every perf.data gets: trace announced but missing, truncated, lost. */
#include "cmd/decode_input.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/coresight/cs_perf.h"
#include "decoders/intel_pt/pt_config.h"
#include "decoders/intel_pt/pt_packets.h"
#include "decoders/intel_pt/pt_session.h"
#include "lib/perfdata/perf_data.h"
#include "lib/perfdata/snapshot.h"
#include "lib/analysis/analysis.h"
#include "cmd/decode_cs.h"
#include "cmd/decode_events.h"
#include "cmd/decode_pt.h"
#include "cmd/progress.h"
#include "cmd/tracectl.h"

struct comm {
	int tid;
	char *name;
};

struct tc_dec {
	struct tc_decode_args a;
	void (*emit)(void *ctx, const struct tc_rec *r);
	void *ctx;
	struct tc_listing *rec;
	struct decode_pt *pt;		/* Intel PT flow */
	struct decode_cs *cs;		/* CoreSight packets or flow */
	struct decode_ev *ev;		/* tracepoint samples */
	struct tc_perf_data *pd;	/* the input, while it is read */
	struct comm *comms;
	size_t ncomms, ccomms;
	/* what the file holds */
	uint32_t aux_type;		/* AUXTRACE_INFO type: 1 Intel PT, 3 CS_ETM, 0 none */
	struct tc_pt_setup ptcfg;
	uint64_t aux_recs, aux_bytes, aux_truncated, aux_partial, aux_collision, aux_empty;
	uint64_t auxtrace_recs, auxtrace_bytes, lost_recs, lost_events;
	uint64_t lost_samples_recs, lost_samples;	/* the kernel's own counts (perf record's) */
	uint64_t first_aux_offset;
	uint64_t compressed_recs, first_compressed;	/* perf record -z: zstd, not read */
	struct tc_pt_packets_stats ptp;
	struct tc_progress *progress;	/* NULL when not shown */
};

int tc_parse_trace_ids(const char *arg, bool want[128])
{
	char *list = strdup(arg), *save = NULL;
	int rc = 0;

	if (!list)
		tc_fatal("out of memory");
	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long id;

		errno = 0;
		id = strtoul(tok, &end, 0);
		if (errno || end == tok || *end || id > 0x7f) {
			rc = -1;
			break;
		}
		want[id] = true;
	}
	free(list);
	return rc;
}

/* The text/JSON writer's symboliser: whichever decoder is at work. */
static int dec_symbolize(void *ctx, uint64_t addr, char *buf, size_t len)
{
	struct tc_dec *d = ctx;

	if (d->cs && decode_cs_is_cs_etm(d->cs))
		return tc_cs_perf_symbolize(decode_cs_session(d->cs), addr, buf, len);
	if (d->pt && decode_pt_is_intel_pt(d->pt))
		return tc_pt_session_symbolize(decode_pt_session(d->pt), addr, buf, len);
	return -1;
}

struct tc_dec *tc_dec_new(const struct tc_decode_args *a,
			  void (*emit)(void *ctx, const struct tc_rec *r), void *ctx,
			  struct tc_listing *rec)
{
	struct tc_dec *d = calloc(1, sizeof(*d));

	if (!d)
		tc_fatal("out of memory");
	d->a = *a;
	d->emit = emit;
	d->ctx = ctx;
	d->rec = rec;
	if (rec) {
		rec->sym = dec_symbolize;
		rec->sym_ctx = d;
	}
	return d;
}

void tc_dec_free(struct tc_dec *d)
{
	if (!d)
		return;
	decode_pt_free(d->pt);
	decode_cs_free(d->cs);
	decode_ev_free(d->ev);
	for (size_t i = 0; i < d->ncomms; i++)
		free(d->comms[i].name);
	free(d->comms);
	free(d);
}

int tc_dec_sym(void *ctx, int pid, uint64_t addr, const char **name, uint64_t *start)
{
	struct tc_dec *d = ctx;

	if (d->cs && decode_cs_is_cs_etm(d->cs))
		return tc_analysis_images_sym(tc_cs_perf_images(decode_cs_session(d->cs)), pid,
					      addr, name, start);
	if (d->pt && decode_pt_is_intel_pt(d->pt))
		return tc_pt_session_sym(decode_pt_session(d->pt), pid, addr, name, start);
	return -1;
}

const char *tc_dec_dso(void *ctx, int pid, uint64_t addr)
{
	struct tc_dec *d = ctx;

	if (d->cs && decode_cs_is_cs_etm(d->cs))
		return tc_analysis_images_dso(tc_cs_perf_images(decode_cs_session(d->cs)), pid,
					      addr);
	if (d->pt && decode_pt_is_intel_pt(d->pt))
		return tc_pt_session_dso(decode_pt_session(d->pt), pid, addr);
	return NULL;
}

/* The address spaces that map addr, from whichever decoder is at work. */
static struct tc_images *images_at(struct tc_dec *d, int pid, uint64_t addr)
{
	if (d->cs && decode_cs_is_cs_etm(d->cs))
		return tc_cs_perf_images(decode_cs_session(d->cs));
	if (d->pt && decode_pt_is_intel_pt(d->pt))
		return tc_pt_session_images_at(decode_pt_session(d->pt), pid, addr);
	return NULL;
}

int tc_dec_file(void *ctx, int pid, uint64_t addr, struct tc_images_file *f)
{
	struct tc_images *im = images_at(ctx, pid, addr);

	return im ? tc_images_file(im, pid, addr, f) : -1;
}

size_t tc_dec_read(void *ctx, int pid, uint64_t addr, void *buf, size_t len)
{
	struct tc_images *im = images_at(ctx, pid, addr);

	return im ? tc_images_read(im, pid, addr, buf, len) : 0;
}

const char *tc_dec_comm(void *ctx, int pid, int tid)
{
	struct tc_dec *d = ctx;

	(void)pid;
	for (size_t i = d->ncomms; i-- > 0;)
		if (d->comms[i].tid == tid)
			return d->comms[i].name;
	return NULL;
}

static void add_comm(struct tc_dec *d, int tid, const char *name)
{
	for (size_t i = 0; i < d->ncomms; i++)
		if (d->comms[i].tid == tid) {
			free(d->comms[i].name);
			d->comms[i].name = strdup(name);
			return;
		}
	if (d->ncomms == d->ccomms) {
		size_t n = d->ccomms ? d->ccomms * 2 : 16;
		struct comm *c = realloc(d->comms, n * sizeof(*c));

		if (!c)
			tc_fatal("out of memory");
		d->comms = c;
		d->ccomms = n;
	}
	d->comms[d->ncomms++] = (struct comm){ tid, strdup(name) };
}

static int on_auxtrace_info(struct tc_dec *d, struct tc_perf_data *pd,
			    const struct tc_perf_data_record *r, struct tc_err *e)
{
	d->aux_type = r->u.auxtrace_info.type;
	if (d->aux_type == 1 && d->a.packets) {
		if (!r->u.auxtrace_info.intel_pt)
			return tc_err_set(e, 0, "%s: Intel PT AUXTRACE_INFO at offset 0x%" PRIx64
					  " could not be parsed", tc_perf_data_name(pd), r->offset);
		return tc_pt_config_from_perf_data(&d->ptcfg, pd, r->u.auxtrace_info.intel_pt, e);
	}
	return 0;
}

static void emit_progress(void *ctx, const struct tc_rec *r);

static int on_auxtrace(struct tc_dec *d, const struct tc_perf_data_record *r, struct tc_err *e)
{
	tc_progress_buffer(d->progress, r->offset + r->size, r->u.auxtrace.size);
	d->auxtrace_recs++;
	d->auxtrace_bytes += r->u.auxtrace.size;
	if (!d->a.packets || d->aux_type != 1)
		return 0;	/* CoreSight packets go through decode_cs */
	return tc_pt_packets_decode(&d->ptcfg.cfg, r->u.auxtrace.data, (size_t)r->u.auxtrace.size,
			     r->offset + r->size, (int)r->u.auxtrace.cpu, emit_progress, d,
			     &d->ptp, e);
}

static void on_aux(struct tc_dec *d, const struct tc_perf_data_record *r)
{
	if (!d->aux_recs++)
		d->first_aux_offset = r->offset;
	d->aux_bytes += r->u.aux.aux_size;
	d->aux_truncated += r->u.aux.truncated;
	d->aux_partial += r->u.aux.partial;
	d->aux_collision += r->u.aux.collision;
	d->aux_empty += r->u.aux.truncated && !r->u.aux.aux_size;
}

static int read_all(struct tc_dec *d, struct tc_perf_data *pd, struct tc_err *e)
{
	struct tc_perf_data_record r;
	int n;

	while ((n = tc_perf_data_next(pd, &r, e)) > 0) {
		if (d->pt)
			decode_pt_record(d->pt, pd, &r);
		decode_cs_record(d->cs, &r);
		decode_ev_record(d->ev, pd, &r);
		switch (r.type) {
		case TC_PERF_DATA_AUXTRACE_INFO:
			if (on_auxtrace_info(d, pd, &r, e))
				return -1;
			break;
		case TC_PERF_DATA_AUXTRACE:
			if (on_auxtrace(d, &r, e))
				return -1;
			break;
		case PERF_RECORD_AUX:
			on_aux(d, &r);
			break;
		case PERF_RECORD_COMM:
			add_comm(d, (int)r.u.comm.tid, r.u.comm.comm);
			break;
		case PERF_RECORD_LOST:
			d->lost_recs++;
			d->lost_events += r.u.lost.lost;
			break;
		case PERF_RECORD_LOST_SAMPLES:
			d->lost_samples_recs++;
			d->lost_samples += r.u.lost.lost;
			break;
		case TC_PERF_DATA_COMPRESSED:
		case TC_PERF_DATA_COMPRESSED2:
			if (!d->compressed_recs++)
				d->first_compressed = r.offset;
			break;
		}
		if (ferror(stdout))
			break;	/* reported at exit */
	}
	return n < 0 ? -1 : 0;
}

/* Trace the kernel announced (AUX records) but that the file does not hold. */
static int report_missing(struct tc_dec *d)
{
	const char *in = d->a.input;
	int problems = 0;

	if (d->aux_bytes && !d->auxtrace_recs) {
		struct tc_rec lost = { .type = TC_REC_LOST, .id = -1, .cpu = -1, .pid = -1,
				       .tid = -1, .offset = d->first_aux_offset,
				       .text = "AUX records announce trace but the file holds no AUXTRACE data" };

		d->emit(d->ctx, &lost);
		tc_warning("%s: %" PRIu64 " AUX records announce %" PRIu64
			   " bytes of trace, but the file holds no AUXTRACE data: the trace is missing",
			   in, d->aux_recs, d->aux_bytes);
		problems++;
	}
	if (d->aux_truncated || d->aux_partial || d->aux_collision) {
		tc_warning("%s: AUX records flagged truncated %" PRIu64 " (%" PRIu64
			   " of them empty), partial %" PRIu64 ", collision %" PRIu64,
			   in, d->aux_truncated, d->aux_empty, d->aux_partial, d->aux_collision);
		problems++;
	}
	if (d->lost_recs) {
		tc_warning("%s: %" PRIu64 " LOST records (%" PRIu64 " events lost)", in,
			   d->lost_recs, d->lost_events);
		problems++;
	}
	if (d->compressed_recs) {
		tc_warning("%s: %" PRIu64 " COMPRESSED records from offset 0x%" PRIx64 " (perf record "
			   "-z): tracectl does not decompress zstd, so the records inside them are "
			   "not decoded; record without -z", in, d->compressed_recs,
			   d->first_compressed);
		problems++;
	}
	if (d->lost_samples) {
		tc_warning("%s: %" PRIu64 " records lost by the kernel's count (%" PRIu64
			   " LOST_SAMPLES records)", in, d->lost_samples, d->lost_samples_recs);
		problems++;
	}
	if (d->ptp.errors) {
		tc_warning("%s: %" PRIu64 " decode errors (decoding resynchronised after each)",
			   in, d->ptp.errors);
		problems++;
	}
	return problems;
}

/* The decoders' records pass here on their way to the command: progress, and the
 * tracepoint samples from before them in time (a record with perf time) or in the file. */
static void emit_progress(void *ctx, const struct tc_rec *r)
{
	struct tc_dec *d = ctx;

	tc_progress_at(d->progress, r->offset);
	if (r->has_time)
		decode_ev_flush_time(d->ev, d->pd, r->time);
	else
		decode_ev_flush(d->ev, d->pd, r->offset);
	d->emit(d->ctx, r);
}

static int run_perf_data(struct tc_dec *d)
{
	struct tc_perf_data *pd;
	struct tc_err e;
	int rc, problems = 0;

	if (tc_perf_data_open(&pd, d->a.input, &e))
		tc_fatal("%s", e.msg);
	d->progress = tc_progress_new();
	d->pd = pd;
	d->ev = decode_ev_new(d->emit, d->ctx);
	if (!d->a.packets)
		d->pt = decode_pt_new(d->a.symfs, d->a.branches, emit_progress, d, NULL);
	d->cs = decode_cs_new(d->a.symfs, d->a.packets, d->a.branches,
			      d->a.any_id ? d->a.want_id : NULL, emit_progress, d, NULL);
	rc = read_all(d, pd, &e);
	if (rc) {
		tc_progress_end(d->progress);
		tc_perf_data_close(pd);
		tc_fatal("%s", e.msg);
	}
	if (decode_cs_is_cs_etm(d->cs))
		problems += decode_cs_finish(d->cs, pd, d->a.input);
	else if (d->pt && decode_pt_is_intel_pt(d->pt))
		problems += decode_pt_finish(d->pt, pd, d->a.input);
	else if (!d->a.packets && d->auxtrace_recs)
		tc_fatal("%s: AUX trace of unknown kind (AUXTRACE_INFO type %u): cannot decode",
			 d->a.input, d->aux_type);
	tc_progress_end(d->progress);
	d->progress = NULL;
	decode_ev_flush(d->ev, pd, UINT64_MAX);
	problems += decode_ev_finish(d->ev, d->a.input);
	problems += report_missing(d);
	if (d->a.packets && d->aux_type == 1)
		tc_status("tracectl decode: %" PRIu64 " AUXTRACE buffers (%" PRIu64 " bytes), %"
			  PRIu64 " AUX records, %" PRIu64 " packets, %" PRIu64 " errors",
			  d->auxtrace_recs, d->auxtrace_bytes, d->aux_recs, d->ptp.packets,
			  d->ptp.errors);
	d->pd = NULL;
	tc_perf_data_close(pd);
	return problems;
}

int tc_dec_run(struct tc_dec *d)
{
	if (tc_snapshot_is(d->a.input))
		return tc_decode_snapshot(&d->a, d->emit, d->ctx);
	return run_perf_data(d);
}
