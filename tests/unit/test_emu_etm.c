/* Emulated ETM (lib/emulate/emu_etm.c) end to end: static aarch64 fixtures run under qemu-aarch64,
 * every thread on its own emulated ETMv4 into one formatted sink, written as CS_ETM perf.data.
 * Our CoreSight perf.data decoder (decoders/coresight/cs_perf) must find exactly the recorder's ground
 * truth, thread by thread, each thread's trace ID taking its turns in the sink.
 * Debian's perf script on the same files is checked by tests/e2e/t55-record-emulated.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/coresight/cs_frame.h"
#include "decoders/coresight/cs_perf.h"
#include "lib/emulate/emu.h"
#include "lib/perfdata/perf_data.h"
#include "tests/unit/tc_test.h"

static int have_cmd(const char *name)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

struct br {
	int tid;
	uint64_t from, to;
};

struct brs {
	struct br *v;
	size_t n, cap;
};

static void add(struct brs *b, int tid, uint64_t from, uint64_t to)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 1024;
		b->v = realloc(b->v, b->cap * sizeof(*b->v));
	}
	b->v[b->n++] = (struct br){ tid, from, to };
}

static void collect(void *ctx, const struct tc_rec *r)
{
	if (r->type == TC_REC_BRANCH)
		add(ctx, r->tid, r->start, r->end);
}

/* Stable by thread: each thread's branches in their order. */
static int by_tid(const void *a, const void *b)
{
	const struct br *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return 0;
}

static void stable_sort(struct brs *b)
{
	/* qsort is not stable: sort (tid, index) pairs by packing the index in. */
	struct { struct br b; size_t i; } *t = malloc(b->n * sizeof(*t));

	for (size_t i = 0; i < b->n; i++)
		t[i].b = b->v[i], t[i].i = i;
	qsort(t, b->n, sizeof(*t), by_tid);
	for (size_t i = 1; i < b->n; i++)	/* insertion fix-up within equal tids */
		for (size_t j = i; j > 0 && t[j - 1].b.tid == t[j].b.tid && t[j - 1].i > t[j].i; j--) {
			__typeof__(*t) s = t[j];

			t[j] = t[j - 1];
			t[j - 1] = s;
		}
	for (size_t i = 0; i < b->n; i++)
		b->v[i] = t[i].b;
	free(t);
}

struct ids {
	uint8_t last;
	size_t switches;
	bool seen[128];
};

static void on_data(void *ctx, uint8_t id, const uint8_t *data, size_t len, uint64_t off)
{
	struct ids *d = ctx;

	(void)data;
	(void)len;
	(void)off;
	d->switches += id != d->last;
	d->last = id;
	if (id < 128)
		d->seen[id] = true;
}

static void check_prog(const char *dir, const char *name, char *const *argv, unsigned threads,
		       const char *filter)
{
	char out[1024], truth[1024], line[256];
	struct tc_emu_opts o = { .argv = argv, .output = out, .truth = truth, .filter = filter };
	struct tc_cs_perf_opts co = { .branches = true, .emit = collect };
	struct brs want = { 0 }, got = { 0 };
	struct tc_emu_stats st;
	struct tc_err e = { 0 };
	struct tc_perf_data *pd;
	struct tc_perf_data_record r;
	struct ids ids = { .last = 0xff };
	struct tc_cs_frame *csf;
	struct tc_cs_perf *s;
	size_t same = 0, ntids = 0, nids = 0;
	FILE *f;

	snprintf(out, sizeof(out), "%s/%s.data", dir, name);
	snprintf(truth, sizeof(truth), "%s/%s.truth", dir, name);
	CHECK_INT(tc_emu_etm_record(&o, &st, &e), 0);
	if (e.msg[0])
		printf("#   %s: %s\n", name, e.msg);
	CHECK_INT(st.threads, threads);
	CHECK(st.insns > 1000);
	CHECK((f = fopen(truth, "r")) != NULL);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		int tid;
		unsigned long long from, to;

		if (sscanf(line, "%d %llx %llx", &tid, &from, &to) == 3)
			add(&want, tid, from, to);
	}
	fclose(f);
	CHECK_INT(want.n, st.branches);

	co.ctx = &got;
	CHECK_INT(tc_perf_data_open(&pd, out, &e), 0);
	s = tc_cs_perf_new(&co, &e);
	csf = tc_cs_frame_new(TC_CS_FRAME_MEM_ALIGN, on_data, NULL, &ids, &e);
	while (tc_perf_data_next(pd, &r, &e) > 0) {
		CHECK_INT(tc_cs_perf_record(s, &r, &e), 0);
		if (r.type == TC_PERF_DATA_AUXTRACE)
			tc_cs_frame_feed(csf, r.u.auxtrace.data, r.u.auxtrace.size);
	}
	tc_cs_frame_flush(csf);
	CHECK_INT(tc_cs_frame_stats(csf)->errors, 0);
	tc_cs_frame_free(csf);
	CHECK(tc_cs_perf_is_cs_etm(s));
	CHECK_INT(tc_cs_perf_decode(s, pd, &e), 0);
	CHECK_INT(tc_cs_perf_stats(s)->errors, 0);
	CHECK_INT(tc_cs_perf_stats(s)->nomap, 0);
	tc_cs_perf_free(s);
	tc_perf_data_close(pd);

	stable_sort(&want);
	stable_sort(&got);
	while (same < want.n && same < got.n && want.v[same].tid == got.v[same].tid &&
	       want.v[same].from == got.v[same].from && want.v[same].to == got.v[same].to)
		same++;
	for (size_t i = 0; i < want.n; i++)
		ntids += !i || want.v[i].tid != want.v[i - 1].tid;
	for (unsigned id = 0; id < 128; id++)
		nids += ids.seen[id] && id >= 0x10;
	printf("#   %s: %u threads, %llu instructions, %zu branches expected, %zu decoded, equal "
	       "%zu; sink: %llu bytes, %zu trace ID switches\n", name, st.threads,
	       (unsigned long long)st.insns, want.n, got.n, same, (unsigned long long)st.bytes,
	       ids.switches);
	if (same < want.n && same < got.n)
		printf("#   first difference: expected %d %llx %llx, decoded %d %llx %llx\n",
		       want.v[same].tid, (unsigned long long)want.v[same].from,
		       (unsigned long long)want.v[same].to, got.v[same].tid,
		       (unsigned long long)got.v[same].from, (unsigned long long)got.v[same].to);
	CHECK(want.n > 100);
	CHECK_INT(got.n, want.n);
	CHECK_INT(same, want.n);
	/* A trace ID per live thread with trace (an exited thread's goes to the next new one),
	 * each with its turn in the sink. How often they alternate depends on how the threads
	 * overlapped under qemu (the example's are short and may run one after the other);
	 * test_etm_truth interleaves IDs by design. */
	CHECK(nids >= 1 && nids <= ntids);
	CHECK(ids.switches >= (threads > 1 ? threads - 1 : 1u));
	free(want.v);
	free(got.v);
}

TEST(emulated_etm_decodes_to_the_ground_truth)
{
	char dir[] = "/tmp/tc-emuetm-XXXXXX", src[1024], cmd[4096], th[1100], paths[1100],
	     filter[2400];
	const char *top = getenv("TOP") ? getenv("TOP") : ".";

	if (!have_cmd("qemu-aarch64") || !have_cmd("aarch64-linux-gnu-gcc"))
		SKIP("needs qemu-aarch64 (qemu-user) and gcc-aarch64-linux-gnu");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(th, sizeof(th), "%s/threads", dir);
	snprintf(paths, sizeof(paths), "%s/paths", dir);
	snprintf(src, sizeof(src), "%s/examples/threads.c", top);
	snprintf(cmd, sizeof(cmd), "aarch64-linux-gnu-gcc -O1 -static -pthread -o '%s' '%s'", th,
		 src);
	CHECK_INT(system(cmd), 0);
	snprintf(src, sizeof(src), "%s/tests/fixtures/etm/paths.c", top);
	snprintf(cmd, sizeof(cmd), "aarch64-linux-gnu-gcc -O2 -static -o '%s' '%s'", paths, src);
	CHECK_INT(system(cmd), 0);

	char *targv[] = { th, NULL }, *pargv[] = { paths, "9", NULL };

	check_prog(dir, "threads", targv, 4, NULL);
	check_prog(dir, "paths", pargv, 1, NULL);
	/* Only the fixture's main and fib: everything else is a gap (TRACE_ON). */
	snprintf(filter, sizeof(filter), "filter main@%s,filter fib@%s", paths, paths);
	check_prog(dir, "paths-filtered", pargv, 1, filter);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (!getenv("KEEP"))
		CHECK_INT(system(cmd), 0);
}
