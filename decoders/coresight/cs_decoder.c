/* CoreSight perf.data decode for the session: instruction ranges (or branches, or packets)
 * per trace ID through decoders/coresight/cs_perf, threads from the trace's context IDs,
 * images through --symfs, the recorded paths and perf's build-id cache. */
#include "decoders/coresight/cs_decoder.h"

#include <inttypes.h>
#include <stdlib.h>

#include "decoders/coresight/cs_perf.h"
#include "lib/util/diag.h"

struct cs_decoder {
	struct tc_cs_perf *s;
	bool packets;
	uint64_t space;		/* records taken and decodes begun: the side-band applies then */
};

static void *cs_new(const struct tc_decoder_opts *o, struct tc_err *e)
{
	struct cs_decoder *c = calloc(1, sizeof(*c));

	if (!c) {
		tc_err_set(e, 0, "out of memory");
		return NULL;
	}
	c->packets = o->packets;
	c->s = tc_cs_perf_new(&(struct tc_cs_perf_opts){ .symfs = o->symfs,
							 .buildid_dir = o->buildid_dir,
							 .kernel = o->kernel,
							 .packets = o->packets,
							 .branches = o->branches,
							 .want_id = o->want_id,
							 .reference = o->reference,
							 .jobs = o->jobs,
							 .writer = o->writer,
							 .emit = o->emit,
							 .ctx = o->ctx },
			      e);
	if (!c->s) {
		free(c);
		return NULL;
	}
	return c;
}

static int cs_process(void *dec, const struct tc_perf_data *pd,
		      const struct tc_perf_data_record *r, struct tc_err *e)
{
	struct cs_decoder *c = dec;
	int rc;

	(void)pd;
	c->space++;
	rc = tc_cs_perf_record(c->s, r, e);
	c->space++;
	return rc;
}

static int cs_finish(void *dec, const struct tc_perf_data *pd, const char *input,
		     struct tc_diag *m, struct tc_err *e)
{
	struct cs_decoder *c = dec;
	const struct tc_cs_perf_stats *st;
	struct tc_diag notes = { 0 };
	int problems = 0, rc;

	c->space++;	/* build ids join the images */
	rc = tc_cs_perf_decode(c->s, pd, e);
	c->space++;
	if (rc)
		return -1;
	st = tc_cs_perf_stats(c->s);
	tc_cs_perf_diag(c->s, &notes);
	for (size_t i = 0; i < notes.n; i++)
		tc_diag_add(m, "%s: %s", input, notes.msgs[i].text);
	problems += notes.n > 0;
	tc_diag_free(&notes);
	if (st->errors) {
		tc_diag_add(m, "%s: %" PRIu64 " decode errors (decoding "
			    "resynchronised after each)", input, st->errors);
		problems++;
	}
	if (st->nomap && !c->packets) {
		tc_diag_add(m, "%s: %" PRIu64 " times no code at a traced address"
			    " (images missing?)", input, st->nomap);
		problems++;
	}
	if (c->packets)
		tc_diag_status(m, "tracectl decode: %" PRIu64 " AUXTRACE buffers (%"
			       PRIu64 " bytes, %" PRIu64 " blocks), %" PRIu64 " packets, %" PRIu64
			       " errors", st->buffers, st->bytes, st->blocks, st->packets,
			       st->errors);
	else
		tc_diag_status(m, "tracectl decode: %" PRIu64 " AUXTRACE buffers (%"
			       PRIu64 " bytes, %" PRIu64 " blocks), %" PRIu64 " instructions, %"
			       PRIu64 " ranges, %" PRIu64 " branches, %" PRIu64 " errors, %" PRIu64
			       " without code", st->buffers, st->bytes, st->blocks, st->insns,
			       st->ranges, st->branches, st->errors, st->nomap);
	return problems;
}

static void cs_free(void *dec)
{
	struct cs_decoder *c = dec;

	if (!c)
		return;
	tc_cs_perf_free(c->s);
	free(c);
}

static int cs_symbolize(void *dec, int pid, uint64_t addr, struct tc_images_sym *s)
{
	return tc_cs_perf_symbolize(((struct cs_decoder *)dec)->s, pid, addr, s);
}

/* One address space for the whole recording: the trace has no perf time to replay the
 * side-band by, so cs_perf applies all of it before decoding. */
static struct tc_images *cs_images_at(void *dec, int pid, uint64_t addr)
{
	(void)pid;
	(void)addr;
	return tc_cs_perf_images(((struct cs_decoder *)dec)->s);
}

static int cs_sym(void *dec, int pid, uint64_t addr, const char **name, uint64_t *start)
{
	struct tc_images_sym s;

	if (tc_images_symbol(cs_images_at(dec, pid, addr), pid, addr, &s) || !s.sym)
		return -1;
	*name = s.sym;
	*start = addr - s.sym_off;
	return 0;
}

/* The side-band changes the address space within cs_process and at cs_finish's start (build
 * ids): the number moves around each, never while records of a decode are emitted. */
static const uint64_t *cs_space(void *dec)
{
	return &((const struct cs_decoder *)dec)->space;
}

static const char *cs_dso(void *dec, int pid, uint64_t addr)
{
	struct tc_images_sym s;

	return tc_images_symbol(cs_images_at(dec, pid, addr), pid, addr, &s) ? NULL : s.dso;
}

const struct tc_decoder_ops tc_cs_decoder_ops = {
	.name = "CoreSight ETM",
	.auxtrace_type = TC_AUXTRACE_CS_ETM,
	.new = cs_new,
	.process = cs_process,
	.finish = cs_finish,
	.free = cs_free,
	.symbolize = cs_symbolize,
	.sym = cs_sym,
	.dso = cs_dso,
	.images_at = cs_images_at,
	.space = cs_space,
};
