/* Differential libFuzzer target for decoding with threads (--jobs): a whole perf.data file
 * decoded with one thread (records to emit) and again with several and a writer of the
 * command's kind (decoders/jobs.h: each lane formats its own records, the caller's thread
 * puts the bytes out in the one-thread order). Intel PT (decoders/intel_pt/pt_session.c):
 * per-thread queues with time decode in lanes merged by time, the last one's part alone
 * cut at its PSBs (pt_lanes.c), a queue without time in segments joined in order
 * (pt_segment.c). CoreSight (decoders/coresight/cs_perf.c): trace IDs decode in lanes
 * after the demultiplexer, one ID alone for a while split between its lane and the
 * caller's thread (cs_session.c). The records, field by field with the symbol of each
 * one's address (the writer's from its lane's symbols, the one thread's from the session's
 * symbolize), the statistics (but PT's segments' own counts) and the warnings must be the
 * same. The images are the ones the recording names (seeds: run.sh records a program of
 * threads under emulation, whose files are on this machine). A hash of the input picks
 * branches or ranges (CoreSight: or packets), 2 or 4 jobs, for PT the caller's turns or
 * none and the segments' size, for CoreSight the writer or records to emit from the lanes
 * (as report's analyses take them), for PT records to emit in runs for analyses (no
 * offsets: a worker decodes, the caller's thread emits, pt_pipe.c; the ranges' offsets
 * not compared, which that leaves to the run); FUZZ_JOBS_HASH sets it (a finding run with other
 * options), FUZZ_JOBS_SHOW prints what an input reached. Any difference calls abort(). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/coresight/cs_perf.h"
#include "decoders/intel_pt/pt_session.h"
#include "lib/perfdata/perf_data.h"
#include "lib/util/diag.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_recs.h"

typedef int (*sym_fn)(void *ctx, int pid, uint64_t addr, struct tc_images_sym *s);

struct run {
	sym_fn sym;		/* the session's symbolize, for emitted records */
	bool no_range_offsets;	/* PT ranges' offsets left out (0) */
	void *sym_ctx;
	struct fuzz_recs recs;	/* the one-thread order: emitted, or the lanes' bytes put */
	pthread_mutex_t lock;	/* emit and put come from the caller's thread; made sure */
};

/* A record as fuzz_recs keeps it, then its address's symbol (or 0xff). */
static void add(struct fuzz_recs *fr, const struct tc_rec *r, sym_fn sym, void *ctx)
{
	struct tc_images_sym s;
	bool has = (r->type == TC_REC_RANGE || r->type == TC_REC_BRANCH) &&
		   sym(ctx, r->pid, r->start, &s) == 0;

	fuzz_recs_add(fr, r);
	fuzz_recs_put_str(fr, has ? (s.sym ? s.sym : s.dso ? s.dso : "?") : NULL);
}

static void on_rec(void *ctx, const struct tc_rec *r)
{
	struct run *x = ctx;

	struct tc_rec c = *r;

	CHECK(pthread_mutex_trylock(&x->lock) == 0);	/* never two at once */
	if (x->no_range_offsets && c.type == TC_REC_RANGE && c.id < 0)	/* PT's (no ID) */
		c.offset = 0;
	add(&x->recs, &c, x->sym, x->sym_ctx);
	pthread_mutex_unlock(&x->lock);
}

/* Runs of ranges (emit_ranges), as on_rec of each. */
static void on_ranges(void *ctx, const struct tc_rec *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		on_rec(ctx, &r[i]);
}

/* The lanes' writer: a lane's records serialised as on_rec does; take hands over all of
 * them as one block. */
struct lane_w {
	struct fuzz_recs recs;
	sym_fn sym;
	void *sym_ctx;
};

static bool w_usable(void *ctx)
{
	(void)ctx;
	return true;
}

static void *w_open(void *ctx, sym_fn sym, void *sym_ctx, const uint64_t *space)
{
	struct lane_w *w = calloc(1, sizeof(*w));

	(void)ctx;
	(void)space;
	CHECK(w);
	w->recs.with_offset = true;
	w->sym = sym;
	w->sym_ctx = sym_ctx;
	return w;
}

static void w_write(void *wp, const struct tc_rec *r)
{
	struct lane_w *w = wp;

	add(&w->recs, r, w->sym, w->sym_ctx);
}

static size_t w_take(void *wp, const char **bytes, void **block)
{
	struct lane_w *w = wp;
	size_t n = w->recs.n;

	*bytes = (const char *)w->recs.out;
	*block = w->recs.out;	/* handed over: w_put frees it */
	free(w->recs.starts);
	free(w->recs.offs);
	w->recs = (struct fuzz_recs){ .with_offset = true };
	return n;
}

static void w_close(void *wp)
{
	struct lane_w *w = wp;

	fuzz_recs_free(&w->recs);
	free(w);
}

static void w_put(void *ctx, const char *bytes, size_t n, uint64_t offset, void *block)
{
	struct run *x = ctx;

	(void)offset;
	CHECK(pthread_mutex_trylock(&x->lock) == 0);	/* never two at once */
	if (n)	/* (0: a dropped segment's block let go of) */
		fuzz_recs_put(&x->recs, bytes, n);
	pthread_mutex_unlock(&x->lock);
	free(block);
}

/* Where each record of a byte string of them begins (the lanes' bytes came without):
 * an offset, the fields, then three strings. */
static void recount(struct fuzz_recs *r)
{
	size_t o = 0;

	r->nrec = 0;
	while (o + 8 + FUZZ_RECS_FIELDS * 8 <= r->n) {
		uint64_t off;

		memcpy(&off, r->out + o, 8);
		fuzz_recs_begin(r, o, off);
		o += 8 + FUZZ_RECS_FIELDS * 8;
		for (int k = 0; k < 3 && o < r->n; k++)
			o += r->out[o] == 0xff ? 1 : strnlen((const char *)r->out + o, r->n - o) + 1;
	}
}

struct opts {
	bool branches, packets, workers_only;
	bool cs_emit;	/* CoreSight's lanes without the writer: records to emit (report's) */
	bool pt_runs;	/* PT's records in runs to emit, no offsets (report's) */
	unsigned jobs, segment_bytes;
};

struct result {
	struct fuzz_recs recs;
	char *stats;	/* the statistics and warnings, as text */
	size_t stats_len;
	int ret;
	uint64_t segments, here;	/* PT's segments: decoded apart, in the caller's turns */
};

#define U(v) ((unsigned long long)(v))

static FILE *stats_open(struct result *res)
{
	FILE *f = open_memstream(&res->stats, &res->stats_len);

	CHECK(f);
	return f;
}

static void pt_stats(struct tc_pt_session *s, struct result *res)
{
	const struct tc_pt_session_stats *st = tc_pt_session_stats(s);
	const struct tc_pt_session_missing *miss;
	size_t nmiss = tc_pt_session_missing(s, &miss);
	FILE *out = stats_open(res);

	/* not the segments' counts: they are --jobs's own */
	fprintf(out, "buffers %llu bytes %llu queues %llu insns %llu ranges %llu branches %llu "
		     "errors %llu nomap %llu/%llu overflows %llu syncs %llu unsynced %llu\n",
		U(st->buffers), U(st->bytes), U(st->queues), U(st->insns), U(st->ranges),
		U(st->branches), U(st->errors), U(st->nomap), U(st->nomap_unmapped),
		U(st->overflows), U(st->syncs), U(st->unsynced_bytes));
	for (size_t i = 0; i < nmiss; i++)
		fprintf(out, "missing %s %llu %llu\n", miss[i].line, U(miss[i].stops),
			U(miss[i].reached));
	CHECK(fclose(out) == 0);
}

static void cs_stats(struct tc_cs_perf *s, struct result *res)
{
	const struct tc_cs_perf_stats *st = tc_cs_perf_stats(s);
	struct tc_diag d = { 0 };
	FILE *out = stats_open(res);

	fprintf(out, "buffers %llu bytes %llu blocks %llu packets %llu ranges %llu insns %llu "
		     "branches %llu errors %llu nomap %llu unknown id %llu demux errors %llu\n",
		U(st->buffers), U(st->bytes), U(st->blocks), U(st->packets), U(st->ranges),
		U(st->insns), U(st->branches), U(st->errors), U(st->nomap),
		U(st->unknown_id_bytes), U(st->demux_errors));
	tc_cs_perf_diag(s, &d);
	for (size_t i = 0; i < d.n; i++)
		fprintf(out, "%s %s\n",
			d.msgs[i].level == TC_DIAG_STATUS ? "status" : "warning", d.msgs[i].text);
	tc_diag_free(&d);
	CHECK(fclose(out) == 0);
}

/* Decode data with o's jobs: Intel PT or CoreSight, as its AUXTRACE_INFO says (each
 * session takes the records of its own trace and the side-band). */
static void decode(const uint8_t *data, size_t size, const struct opts *o, struct result *res)
{
	static const struct tc_jobs_writer lw = { .usable = w_usable, .open = w_open,
						  .write = w_write, .take = w_take,
						  .close = w_close, .put = w_put };
	struct tc_jobs_writer w = lw;
	struct run x = { .recs.with_offset = true, .no_range_offsets = o->pt_runs };
	const struct tc_jobs_writer *wp = o->jobs > 1 ? &w : NULL;
	struct tc_pt_session *pt;
	struct tc_cs_perf *cs;
	struct tc_perf_data *pd;
	struct tc_perf_data_record r;
	struct tc_err e;
	int n = -1;

	memset(res, 0, sizeof(*res));
	res->ret = -2;
	pthread_mutex_init(&x.lock, NULL);
	w.ctx = &x;
	if (tc_perf_data_open_mem(&pd, data, size, "fuzz", &e))
		goto out;
	pt = tc_pt_session_new(&(struct tc_pt_session_opts){
		.branches = o->branches, .jobs = o->jobs, .writer = o->pt_runs ? NULL : wp,
		.segment_bytes = o->segment_bytes, .segment_workers_only = o->workers_only,
		.emit = on_rec, .emit_ranges = o->pt_runs ? on_ranges : NULL,
		.no_offsets = o->pt_runs, .ctx = &x }, &e);
	cs = tc_cs_perf_new(&(struct tc_cs_perf_opts){
		.branches = o->branches, .packets = o->packets, .jobs = o->jobs,
		.writer = o->cs_emit ? NULL : wp,
		.emit = on_rec, .ctx = &x }, &e);
	CHECK(pt && cs);
	while ((n = tc_perf_data_next(pd, &r, &e)) > 0)
		if (tc_pt_session_record(pt, pd, &r, &e) || tc_cs_perf_record(cs, &r, &e))
			break;
	if (n == 0 && tc_pt_session_is_intel_pt(pt)) {
		x.sym = tc_pt_session_symbolize;
		x.sym_ctx = pt;
		res->ret = tc_pt_session_decode(pt, pd, &e);
		pt_stats(pt, res);
		res->segments = tc_pt_session_stats(pt)->segments;
		res->here = tc_pt_session_stats(pt)->segments_here;
	} else if (n == 0 && tc_cs_perf_is_cs_etm(cs)) {
		x.sym = tc_cs_perf_symbolize;
		x.sym_ctx = cs;
		res->ret = tc_cs_perf_decode(cs, pd, &e);
		cs_stats(cs, res);
	}
	tc_pt_session_free(pt);
	tc_cs_perf_free(cs);
	tc_perf_data_close(pd);
out:
	pthread_mutex_destroy(&x.lock);
	res->recs = x.recs;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned seg_bytes[] = { 512, 2048, 8192, 0 };
	uint32_t h = 2166136261u;
	struct opts o = { 0 };
	struct result one, many;

	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 16777619u;
	if (getenv("FUZZ_JOBS_HASH"))	/* an input run with other options */
		h = (uint32_t)strtoul(getenv("FUZZ_JOBS_HASH"), NULL, 0);
	o.branches = h & 1;
	o.packets = !o.branches && (h >> 1 & 7) == 0;
	o.segment_bytes = seg_bytes[h >> 4 & 3];
	o.workers_only = h >> 6 & 1;
	o.cs_emit = (h >> 8 & 3) == 0;
	o.pt_runs = (h >> 10 & 3) == 0;
	snprintf(fuzz_ctx, sizeof(fuzz_ctx), "%s, --jobs %u, segments of %u%s%s%s",
		 o.branches ? "branches" : o.packets ? "packets" : "ranges",
		 h >> 7 & 1 ? 4 : 2, o.segment_bytes, o.workers_only ? ", workers only" : "",
		 o.cs_emit ? ", CS to emit" : "", o.pt_runs ? ", PT runs to emit" : "");
	o.jobs = 1;
	decode(data, size, &o, &one);
	o.jobs = h >> 7 & 1 ? 4 : 2;
	decode(data, size, &o, &many);
	if (getenv("FUZZ_JOBS_SHOW"))	/* what an input reaches (seeds, say) */
		fprintf(stderr, "fuzz_jobs: %s: ret %d, %zu records, segments %llu (%llu in turn)\n%s",
			fuzz_ctx, one.ret, one.recs.nrec, U(many.segments), U(many.here),
			one.stats ? one.stats : "");
	CHECK(one.ret == many.ret);
	CHECK(!one.stats == !many.stats);
	if (one.stats && strcmp(one.stats, many.stats)) {
		fprintf(stderr, "--jobs 1:\n%s--jobs N:\n%s", one.stats, many.stats);
		CHECK(!"the same statistics and warnings");
	}
	recount(&many.recs);
	fuzz_recs_same("fuzz_jobs", "--jobs 1", &one.recs, "--jobs N", &many.recs);
	fuzz_recs_free(&one.recs);
	fuzz_recs_free(&many.recs);
	free(one.stats);
	free(many.stats);
	return 0;
}
