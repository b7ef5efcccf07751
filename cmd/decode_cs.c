/* tracectl decode for CoreSight perf.data: instruction ranges (or branches, or packets) per
 * trace ID through decoders/coresight/cs_perf, threads from the trace's context IDs, images through
 * --symfs, the recorded paths and perf's build-id cache. */
#include "cmd/decode_cs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/coresight/cs_perf.h"
#include "cmd/tracectl.h"

struct decode_cs {
	struct tc_cs_perf *s;
	char *buildid_dir;
	bool packets;
};

char *tc_buildid_dir(void)
{
	const char *env = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
	char *dir = NULL;

	if (env && *env)
		return strdup(env);
	if (home && *home && asprintf(&dir, "%s/.debug", home) < 0)
		dir = NULL;
	return dir;
}

struct decode_cs *decode_cs_new(const char *symfs, bool packets, bool branches,
				const bool *want_id,
				void (*emit)(void *ctx, const struct tc_rec *r), void *ctx,
				struct tc_listing *out)
{
	struct decode_cs *c = calloc(1, sizeof(*c));
	struct tc_err e;

	if (!c)
		tc_fatal("out of memory");
	c->buildid_dir = tc_buildid_dir();
	c->packets = packets;
	c->s = tc_cs_perf_new(&(struct tc_cs_perf_opts){ .symfs = symfs,
							 .buildid_dir = c->buildid_dir,
							 .packets = packets,
							 .branches = branches,
							 .want_id = want_id,
							 .emit = emit,
							 .ctx = ctx },
			      &e);
	if (!c->s)
		tc_fatal("%s", e.msg);
	if (out && !packets) {
		out->sym = tc_cs_perf_symbolize;
		out->sym_ctx = c->s;
	}
	return c;
}

void decode_cs_record(struct decode_cs *c, const struct tc_perf_data_record *r)
{
	struct tc_err e;

	if (tc_cs_perf_record(c->s, r, &e))
		tc_fatal("%s", e.msg);
}

bool decode_cs_is_cs_etm(const struct decode_cs *c)
{
	return tc_cs_perf_is_cs_etm(c->s);
}

int decode_cs_finish(struct decode_cs *c, struct tc_perf_data *pd, const char *input)
{
	const struct tc_cs_perf_stats *st;
	struct tc_diag notes = { 0 };
	struct tc_err e;
	int problems = 0;

	if (tc_cs_perf_decode(c->s, pd, &e))
		tc_fatal("%s", e.msg);
	st = tc_cs_perf_stats(c->s);
	tc_cs_perf_diag(c->s, &notes);
	for (size_t i = 0; i < notes.n; i++)
		tc_warning("%s: %s", input, notes.msgs[i]);
	problems += notes.n > 0;
	tc_diag_free(&notes);
	if (st->errors) {
		tc_warning("%s: %" PRIu64 " decode errors (decoding resynchronised after each)",
			   input, st->errors);
		problems++;
	}
	if (st->nomap && !c->packets) {
		tc_warning("%s: %" PRIu64 " times no code at a traced address (images missing?)",
			   input, st->nomap);
		problems++;
	}
	if (c->packets)
		tc_status("tracectl decode: %" PRIu64 " AUXTRACE buffers (%" PRIu64 " bytes, %"
			  PRIu64 " blocks), %" PRIu64 " packets, %" PRIu64 " errors", st->buffers,
			  st->bytes, st->blocks, st->packets, st->errors);
	else
		tc_status("tracectl decode: %" PRIu64 " AUXTRACE buffers (%" PRIu64 " bytes, %"
			  PRIu64 " blocks), %" PRIu64 " instructions, %" PRIu64 " ranges, %" PRIu64
			  " branches, %" PRIu64 " errors, %" PRIu64 " without code", st->buffers,
			  st->bytes, st->blocks, st->insns, st->ranges, st->branches, st->errors,
			  st->nomap);
	return problems;
}

void decode_cs_free(struct decode_cs *c)
{
	if (!c)
		return;
	tc_cs_perf_free(c->s);
	free(c->buildid_dir);
	free(c);
}

struct tc_cs_perf *decode_cs_session(struct decode_cs *c)
{
	return c->s;
}
