/* lib/output/lanes: the listing made by lanes, their bytes taken step by step (in pieces
 * where a step filled blocks) and put in the one-thread order, is byte for byte what one
 * listing writes; blocks go back for reuse. Steps of every size: a few records, and runs
 * of many blocks' worth (the pieces), on two lanes taking turns. */
#include "tc_test.h"

#include "lib/output/lanes.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int no_sym(void *ctx, int pid, uint64_t addr, struct tc_images_sym *s)
{
	(void)ctx;
	(void)pid;
	(void)addr;
	(void)s;
	return -1;
}

static const char *comm_of(void *ctx, const struct tc_rec *r)
{
	(void)ctx;
	return r->tid % 2 ? "worker" : "main";
}

static struct tc_rec rec_of(unsigned lane, unsigned i)
{
	return (struct tc_rec){
		.type = i % 3 ? TC_REC_BRANCH : TC_REC_RANGE, .id = 0x10 + (int)lane, .cpu = -1,
		.pid = 40 + (int)lane, .tid = 40 + (int)lane, .offset = i * 16 + lane,
		.start = 0x400000 + i * 4, .end = 0x400100 + i * 8, .insns = i % 50 + 1,
		.isa = TC_ISA_A64, .last = 'E', .last_taken = true,
	};
}

/* Steps: lane, number of records (some far past a block's 256 KiB of text). */
static const struct { unsigned lane, n; } steps[] = {
	{ 0, 3 }, { 1, 1 }, { 0, 0 }, { 1, 9000 }, { 0, 20000 }, { 1, 2 }, { 0, 1 },
	{ 1, 30000 }, { 0, 5 }, { 1, 0 }, { 0, 700 }, { 1, 4000 },
};

static void check(bool json)
{
	char *want = NULL, *got = NULL;
	size_t want_len = 0, got_len;
	FILE *ref = open_memstream(&want, &want_len), *out = tmpfile();
	struct tc_listing o;
	struct tc_lanes *l = tc_lanes_new(&(struct tc_lanes_opts){
		.f = out, .fd = fileno(out), .json = json });
	const struct tc_jobs_writer *w;
	static const uint64_t space = 1;
	void *lw[2];
	unsigned next[2] = { 0, 0 }, pieces = 0;

	CHECK(ref && out && l);
	tc_listing_init(&o, ref, json);
	o.comm = comm_of;
	tc_listing_batch(&o, true);
	tc_lanes_comm(l, comm_of, NULL);
	w = tc_lanes_writer(l);
	CHECK(w->usable(w->ctx));
	for (unsigned k = 0; k < 2; k++)
		CHECK((lw[k] = w->open(w->ctx, no_sym, NULL, &space)) != NULL);
	for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		unsigned k = steps[s].lane;
		const char *bytes;
		void *block;
		size_t n;

		for (unsigned i = 0; i < steps[s].n; i++, next[k]++) {
			struct tc_rec r = rec_of(k, next[k]);

			tc_listing_write(&o, &r);
			w->write(lw[k], &r);
		}
		/* as decoders/coresight/cs_session.c does: take until nothing, put in order */
		while ((n = w->take(lw[k], &bytes, &block)) || block) {
			w->put(w->ctx, bytes, n, 0, block);
			pieces++;
		}
	}
	for (unsigned k = 0; k < 2; k++)
		w->close(lw[k]);
	tc_lanes_free(l);
	tc_listing_flush(&o);
	tc_listing_fini(&o);
	fclose(ref);
	got_len = (size_t)ftell(out);
	CHECK(got_len > 3 * 256 * 1024);	/* several blocks' worth */
	CHECK(pieces > sizeof(steps) / sizeof(steps[0]));	/* steps came in pieces */
	CHECK_INT(got_len, want_len);
	got = malloc(got_len + 1);
	rewind(out);
	CHECK(got && fread(got, 1, got_len, out) == got_len);
	CHECK(got && !memcmp(got, want, want_len < got_len ? want_len : got_len));
	fclose(out);
	free(got);
	free(want);
}

TEST(lanes_text_as_one_listing) { check(false); }
TEST(lanes_json_as_one_listing) { check(true); }
