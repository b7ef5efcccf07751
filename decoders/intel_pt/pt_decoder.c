/* Intel PT perf.data decode for the session. Flow (ranges, or branches with --branches)
 * queues the trace in pt_session and decodes it at the end; pt_session applies the
 * side-band to each queue's address space as that queue's trace time passes it (a later
 * MMAP over the same range must not be seen early). Packets are listed buffer by buffer
 * while the file is read. */
#include "decoders/intel_pt/pt_decoder.h"

#include <inttypes.h>
#include <stdlib.h>

#include "decoders/intel_pt/pt_config.h"
#include "decoders/intel_pt/pt_packets.h"
#include "decoders/intel_pt/pt_session.h"
#include "lib/util/diag.h"

struct pt_decoder {
	struct tc_pt_session *s;	/* flow; NULL with packets */
	bool packets;
	void (*emit)(void *ctx, const struct tc_rec *r);
	void *ctx;
	/* packets: the configuration once AUXTRACE_INFO was read, and the counts */
	bool have_cfg;
	struct tc_pt_setup cfg;
	uint64_t auxtrace_recs, auxtrace_bytes, aux_recs;
	struct tc_pt_packets_stats st;
};

static void *pt_new(const struct tc_decoder_opts *o, struct tc_err *e)
{
	struct pt_decoder *p = calloc(1, sizeof(*p));

	if (!p) {
		tc_err_set(e, 0, "out of memory");
		return NULL;
	}
	p->packets = o->packets;
	p->emit = o->emit;
	p->ctx = o->ctx;
	if (o->packets)
		return p;
	p->s = tc_pt_session_new(&(struct tc_pt_session_opts){ .symfs = o->symfs,
							       .buildid_dir = o->buildid_dir,
							       .kernel = o->kernel,
							       .branches = o->branches,
							       .reference = o->reference,
							       .jobs = o->jobs,
							       .writer = o->writer,
							       .emit = o->emit,
							       .emit_ranges = o->emit_ranges,
							       .no_offsets = o->no_offsets,
							       .ctx = o->ctx },
				 e);
	if (!p->s) {
		free(p);
		return NULL;
	}
	return p;
}

static int packets_process(struct pt_decoder *p, const struct tc_perf_data *pd,
			   const struct tc_perf_data_record *r, struct tc_err *e)
{
	switch (r->type) {
	case TC_PERF_DATA_AUXTRACE_INFO:
		if (r->u.auxtrace_info.type != tc_pt_decoder_ops.auxtrace_type)
			return 0;
		if (!r->u.auxtrace_info.intel_pt)
			return tc_err_set(e, 0, "%s: Intel PT AUXTRACE_INFO at offset 0x%" PRIx64
					  " could not be parsed", tc_perf_data_name(pd), r->offset);
		if (tc_pt_config_from_perf_data(&p->cfg, pd, r->u.auxtrace_info.intel_pt, e))
			return -1;
		p->have_cfg = true;
		return 0;
	case TC_PERF_DATA_AUXTRACE:
		p->auxtrace_recs++;
		p->auxtrace_bytes += r->u.auxtrace.size;
		if (!p->have_cfg)
			return 0;
		return tc_pt_packets_decode(&p->cfg.cfg, r->u.auxtrace.data,
					    (size_t)r->u.auxtrace.size, r->offset + r->size,
					    (int)r->u.auxtrace.cpu, p->emit, p->ctx, &p->st, e);
	case PERF_RECORD_AUX:
		p->aux_recs++;
		return 0;
	}
	return 0;
}

static int pt_process(void *dec, const struct tc_perf_data *pd,
		      const struct tc_perf_data_record *r, struct tc_err *e)
{
	struct pt_decoder *p = dec;

	if (p->packets)
		return packets_process(p, pd, r, e);
	return tc_pt_session_record(p->s, pd, r, e);
}

static int packets_finish(struct pt_decoder *p, const char *input, struct tc_diag *m)
{
	int problems = 0;

	if (p->st.errors) {
		tc_diag_add(m, "%s: %" PRIu64 " decode errors (decoding "
			    "resynchronised after each)", input, p->st.errors);
		problems++;
	}
	tc_diag_status(m, "tracectl decode: %" PRIu64 " AUXTRACE buffers (%" PRIu64
		       " bytes), %" PRIu64 " AUX records, %" PRIu64 " packets, %" PRIu64 " errors",
		       p->auxtrace_recs, p->auxtrace_bytes, p->aux_recs, p->st.packets,
		       p->st.errors);
	return problems;
}

static int pt_finish(void *dec, const struct tc_perf_data *pd, const char *input,
		     struct tc_diag *m, struct tc_err *e)
{
	struct pt_decoder *p = dec;
	const struct tc_pt_session_missing *miss;
	const struct tc_pt_session_stats *st;
	size_t nmiss;
	int problems = 0;

	if (p->packets)
		return packets_finish(p, input, m);
	if (tc_pt_session_decode(p->s, pd, e))
		return -1;
	st = tc_pt_session_stats(p->s);
	nmiss = tc_pt_session_missing(p->s, &miss);
	if (nmiss) {
		tc_diag_add(m, "%s: %zu images needed but not found (give their "
			    "root with --symfs DIR); decoding stopped %" PRIu64 " times for lack "
			    "of code", input, nmiss, st->nomap);
		for (size_t i = 0; i < nmiss; i++)
			if (!miss[i].reached)
				tc_diag_add(m, "%s: image not found: %s: decoding stopped"
					    " there %" PRIu64 " times", input, miss[i].line,
					    miss[i].stops);
			else
				tc_diag_add(m, "%s: image not found: %s: decoding stopped"
					    " there %" PRIu64 " times; %" PRIu64 " branches into it"
					    " were followed in the packets without its code", input,
					    miss[i].line, miss[i].stops, miss[i].reached);
		problems++;
	}
	if (st->nomap_unmapped) {
		tc_diag_add(m, "%s: decoding stopped %" PRIu64 " times at "
			    "addresses no MMAP record covers", input, st->nomap_unmapped);
		problems++;
	}
	if (st->errors || st->overflows) {
		tc_diag_add(m, "%s: %" PRIu64 " decode errors, %" PRIu64
			    " overflows (decoding resumed at the next packet with an IP after each)",
			    input, st->errors, st->overflows);
		problems++;
	}
	if (st->syncs && st->unsynced_bytes) {
		/* a queue's buffers are one stream where their AUX offsets follow on: bytes
		 * before a PSB are lost only where they do not (or the stream began inside) */
		tc_diag_add(m, "%s: %" PRIu64 " bytes of trace skipped looking for a PSB: not "
			    "decoded (a buffer whose trace does not go on from the one before, "
			    "or a PSB+ that could not be read)", input, st->unsynced_bytes);
		problems++;
	}
	if (st->buffers && !st->syncs) {
		tc_diag_add(m, "%s: no PSB found in %" PRIu64 " bytes of trace: "
			    "nothing decoded", input, st->bytes);
		problems++;
	}
	tc_diag_status(m, "tracectl decode: %" PRIu64 " AUXTRACE buffers (%" PRIu64
		       " bytes) in %" PRIu64 " queues, %" PRIu64 " instructions, %" PRIu64
		       " ranges, %" PRIu64 " branches, %" PRIu64 " errors, %" PRIu64
		       " stops without code", st->buffers, st->bytes, st->queues, st->insns,
		       st->ranges, st->branches, st->errors, st->nomap);
	return problems;
}

static void pt_free(void *dec)
{
	struct pt_decoder *p = dec;

	if (!p)
		return;
	tc_pt_session_free(p->s);
	free(p);
}

static int pt_symbolize(void *dec, int pid, uint64_t addr, struct tc_images_sym *s)
{
	struct pt_decoder *p = dec;

	return p->s ? tc_pt_session_symbolize(p->s, pid, addr, s) : -1;
}

static int pt_sym(void *dec, int pid, uint64_t addr, const char **name, uint64_t *start)
{
	struct pt_decoder *p = dec;

	return p->s ? tc_pt_session_sym(p->s, pid, addr, name, start) : -1;
}

static const char *pt_dso(void *dec, int pid, uint64_t addr)
{
	struct pt_decoder *p = dec;

	return p->s ? tc_pt_session_dso(p->s, pid, addr) : NULL;
}

static const uint64_t *pt_space(void *dec)
{
	struct pt_decoder *p = dec;

	return p->s ? tc_pt_session_space(p->s) : NULL;
}

static struct tc_images *pt_images_at(void *dec, int pid, uint64_t addr)
{
	struct pt_decoder *p = dec;

	return p->s ? tc_pt_session_images_at(p->s, pid, addr) : NULL;
}

const struct tc_decoder_ops tc_pt_decoder_ops = {
	.name = "Intel PT",
	.auxtrace_type = TC_AUXTRACE_INTEL_PT,
	.new = pt_new,
	.process = pt_process,
	.finish = pt_finish,
	.free = pt_free,
	.symbolize = pt_symbolize,
	.sym = pt_sym,
	.dso = pt_dso,
	.images_at = pt_images_at,
	.space = pt_space,
};
