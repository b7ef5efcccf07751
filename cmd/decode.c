/* tracectl decode: read a perf.data recording and list its trace. Today: Intel PT packets
 * (--packets) and an account of the AUX data, including trace that is missing. */
#include <inttypes.h>
#include <stdlib.h>

#include "../decoders/pt_config.h"
#include "../decoders/pt_packets.h"
#include "../lib/perf_data.h"
#include "../lib/snapshot.h"
#include "../out/analysis.h"
#include "../out/records.h"
#include "../out/streams.h"
#include "decode_pt.h"
#include "tracectl.h"

enum { OPT_PACKETS = TC_OPT_CMD_BASE, OPT_PER_THREAD, OPT_BUFFER, OPT_ID, OPT_FORMAT, OPT_SYMFS,
       OPT_BRANCHES };

const struct tc_opt decode_opts[] = {
	{ "input", 'i', 1, "FILE", "read FILE (default perf.data; - for a pipe on stdin) or an "
	  "OpenCSD snapshot directory" },
	{ "packets", OPT_PACKETS, 0, NULL, "list trace packets" },
	{ "per-thread", OPT_PER_THREAD, 1, "DIR", "write one stream per thread into DIR" },
	{ "buffer", OPT_BUFFER, 1, "NAME", "snapshot: decode trace buffer NAME (default the first)" },
	{ "id", OPT_ID, 1, "ID[,ID]", "CoreSight: only these trace IDs (repeatable)" },
	{ "format", OPT_FORMAT, 1, "FMT", "write call stacks: folded, chrome (trace JSON) or svg "
	  "(flame graph)" },
	{ "symfs", OPT_SYMFS, 1, "DIR", "Intel PT: find traced binaries under DIR (recorded paths)" },
	{ "branches", OPT_BRANCHES, 0, NULL, "Intel PT: list taken branches instead of ranges" },
	{ 0 },
};

struct decode {
	const char *input, *per_thread;
	bool packets;
	const char *symfs;		/* Intel PT flow (cmd/decode_pt.c) */
	bool branches;
	struct decode_pt *flow;
	struct tc_decode_args ss;	/* CoreSight snapshot options (cmd/decode_snapshot.c) */
	struct tc_rec_out out;
	struct tc_streams *streams;
	struct tc_err serr;
	int stream_failed;
	/* what the file holds */
	uint32_t aux_type;	/* AUXTRACE_INFO type: 1 Intel PT, 3 CS_ETM, 0 none */
	struct tc_pt_setup pt;
	uint64_t aux_recs, aux_bytes, aux_truncated, aux_partial, aux_collision, aux_empty;
	uint64_t auxtrace_recs, auxtrace_bytes, lost_recs, lost_events;
	uint64_t first_aux_offset;
	struct tc_ptp_stats ptp;
};

static int on_opt(int key, const char *arg, void *ctx)
{
	struct decode *d = ctx;

	switch (key) {
	case 'i': d->input = arg; break;
	case OPT_PACKETS: d->packets = true; break;
	case OPT_PER_THREAD: d->per_thread = arg; break;
	case OPT_SYMFS: d->symfs = arg; break;
	case OPT_BRANCHES: d->branches = true; break;
	case OPT_BUFFER: d->ss.buffer = arg; break;
	case OPT_ID:
		if (tc_parse_trace_ids(arg, d->ss.want_id))
			return tc_usage_error(tc_cmd_find("decode"), "bad trace ID list '%s'", arg);
		d->ss.any_id = true;
		break;
	case OPT_FORMAT:
		if (tc_an_format_parse(arg, &(enum tc_an_format){ 0 }))
			return tc_usage_error(tc_cmd_find("decode"), "bad format '%s' (folded, "
					      "chrome or svg)", arg);
		d->ss.format = arg;
		break;
	}
	return 0;
}

static void emit(void *ctx, const struct tc_rec *r)
{
	struct decode *d = ctx;

	if (!d->streams) {
		tc_rec_write(&d->out, r);
		return;
	}
	if (!d->stream_failed && tc_streams_write(d->streams, r, &d->serr))
		d->stream_failed = 1;
}

static int on_auxtrace_info(struct decode *d, struct tc_perf_data *pd,
			    const struct tc_pd_record *r, struct tc_err *e)
{
	d->aux_type = r->u.auxtrace_info.type;
	if (d->aux_type == 1) {
		if (!r->u.auxtrace_info.intel_pt)
			return tc_err_set(e, 0, "%s: Intel PT AUXTRACE_INFO at offset 0x%" PRIx64
					  " could not be parsed", tc_pd_name(pd), r->offset);
		return tc_pt_setup_from_pd(&d->pt, pd, r->u.auxtrace_info.intel_pt, e);
	}
	return 0;
}

static int on_auxtrace(struct decode *d, const struct tc_pd_record *r, struct tc_err *e)
{
	const uint8_t *data = r->u.auxtrace.data;
	uint64_t size = r->u.auxtrace.size;

	d->auxtrace_recs++;
	d->auxtrace_bytes += size;
	if (!d->packets)
		return 0;
	if (d->aux_type != 1)
		return tc_err_set(e, 0, "packet listing of %s trace is not implemented yet",
				  d->aux_type == 3 ? "CoreSight" : "this kind of");
	return tc_ptp_decode(&d->pt.cfg, data, (size_t)size, r->offset + r->size,
			     (int)r->u.auxtrace.cpu, emit, d, &d->ptp, e);
}

static void on_aux(struct decode *d, const struct tc_pd_record *r)
{
	if (!d->aux_recs++)
		d->first_aux_offset = r->offset;
	d->aux_bytes += r->u.aux.aux_size;
	d->aux_truncated += r->u.aux.truncated;
	d->aux_partial += r->u.aux.partial;
	d->aux_collision += r->u.aux.collision;
	d->aux_empty += r->u.aux.truncated && !r->u.aux.aux_size;
}

static int read_all(struct decode *d, struct tc_perf_data *pd, struct tc_err *e)
{
	struct tc_pd_record r;
	int n;

	while ((n = tc_pd_next(pd, &r, e)) > 0) {
		if (d->flow)
			decode_pt_record(d->flow, pd, &r);
		switch (r.type) {
		case TC_PD_AUXTRACE_INFO:
			if (on_auxtrace_info(d, pd, &r, e))
				return -1;
			break;
		case TC_PD_AUXTRACE:
			if (on_auxtrace(d, &r, e))
				return -1;
			break;
		case PERF_RECORD_AUX:
			on_aux(d, &r);
			break;
		case PERF_RECORD_LOST:
			d->lost_recs++;
			d->lost_events += r.u.lost.lost;
			break;
		}
		if (ferror(stdout) || d->stream_failed)
			break;	/* reported at exit */
	}
	return n < 0 ? -1 : 0;
}

/* Trace the kernel announced (AUX records) but that the file does not hold. */
static int report_missing(struct decode *d)
{
	int problems = 0;

	if (d->aux_bytes && !d->auxtrace_recs) {
		struct tc_rec lost = { .type = TC_REC_LOST, .id = -1, .cpu = -1, .pid = -1,
				       .tid = -1, .offset = d->first_aux_offset,
				       .text = "AUX records announce trace but the file holds no AUXTRACE data" };

		if (d->packets)
			emit(d, &lost);
		tc_warning("%s: %" PRIu64 " AUX records announce %" PRIu64
			   " bytes of trace, but the file holds no AUXTRACE data: the trace is missing",
			   d->input, d->aux_recs, d->aux_bytes);
		problems++;
	}
	if (d->aux_truncated || d->aux_partial || d->aux_collision) {
		tc_warning("%s: AUX records flagged truncated %" PRIu64 " (%" PRIu64
			   " of them empty), partial %" PRIu64 ", collision %" PRIu64,
			   d->input, d->aux_truncated, d->aux_empty, d->aux_partial, d->aux_collision);
		problems++;
	}
	if (d->lost_recs) {
		tc_warning("%s: %" PRIu64 " LOST records (%" PRIu64 " events lost)", d->input,
			   d->lost_recs, d->lost_events);
		problems++;
	}
	if (d->ptp.errors) {
		tc_warning("%s: %" PRIu64 " decode errors (decoding resynchronised after each)",
			   d->input, d->ptp.errors);
		problems++;
	}
	return problems;
}

int do_decode(int argc, char **argv)
{
	const struct tc_cmd *cmd = tc_cmd_find("decode");
	struct decode d = { .input = "perf.data" };
	struct tc_perf_data *pd;
	struct tc_err e;
	int i = tc_parse_opts(cmd, argc, argv, on_opt, &d), rc, problems, not_pt;
	unsigned nstreams = 0;

	if (i < 0)
		return TC_EXIT_USAGE;
	if (i < argc)
		return tc_usage_error(cmd, "unexpected argument '%s'", argv[i]), TC_EXIT_USAGE;
	if (d.ss.format && (d.packets || d.per_thread))
		return tc_usage_error(cmd, "--format takes instruction ranges: not with --packets "
				      "or --per-thread"), TC_EXIT_USAGE;
	if (tc_snapshot_is(d.input)) {
		d.ss.input = d.input;
		d.ss.packets = d.packets;
		d.ss.per_thread = d.per_thread;
		return tc_decode_snapshot(&d.ss);
	}
	if (tc_pd_open(&pd, d.input, &e))
		tc_fatal("%s", e.msg);
	tc_rec_out_init(&d.out, stdout, tc_g.json);
	if (d.per_thread && !(d.streams = tc_streams_open(d.per_thread, tc_g.json, &e))) {
		tc_pd_close(pd);
		tc_fatal("%s", e.msg);
	}
	if (!d.packets)
		d.flow = decode_pt_new(d.symfs, d.branches, emit, &d, d.streams ? NULL : &d.out);
	rc = read_all(&d, pd, &e);
	not_pt = !rc && d.flow && !decode_pt_is_intel_pt(d.flow);
	problems = !rc && d.flow && !not_pt ? decode_pt_finish(d.flow, pd, d.input) : 0;
	decode_pt_free(d.flow);
	tc_pd_close(pd);
	if (not_pt) {
		tc_streams_close(d.streams, NULL, NULL);
		tc_error("%s: instruction decoding of %s is not implemented yet; use --packets",
			 d.input, d.aux_type == 3 ? "CoreSight perf.data" : "this file (no Intel PT trace)");
		return TC_EXIT_FAIL;
	}
	if (tc_streams_close(d.streams, &nstreams, d.stream_failed ? NULL : &d.serr) ||
	    d.stream_failed)
		tc_fatal("%s", d.serr.msg);
	if (rc)
		tc_fatal("%s", e.msg);
	problems += report_missing(&d);
	if (d.packets)
		tc_status("tracectl decode: %" PRIu64 " AUXTRACE buffers (%" PRIu64 " bytes), %"
			  PRIu64 " AUX records, %" PRIu64 " packets, %" PRIu64 " errors",
			  d.auxtrace_recs, d.auxtrace_bytes, d.aux_recs, d.ptp.packets, d.ptp.errors);
	if (d.per_thread)
		tc_status("tracectl decode: %u streams written to %s", nstreams, d.per_thread);
	return problems ? TC_EXIT_DATA : TC_EXIT_OK;
}
