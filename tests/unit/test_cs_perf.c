/* CoreSight decode of a real perf.data (simpleperf's perf_etm.data with etm_test_loop):
 * decoders/coresight/cs_perf.c end to end -- metadata, demux, OpenCSD, images via symfs, threads from
 * context IDs, perf-convention branches. The full branch list is compared with Debian perf
 * by tests/e2e/t31-cs-perf.sh; here the counts and the first branches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoders/coresight/cs_perf.h"
#include "tests/unit/tc_test.h"

struct got {
	size_t n, ranges, branches, ctx, other;
	uint64_t from[8], to[8];
	int tid[8], cpu[8];
};

static void collect(void *ctx, const struct tc_rec *r)
{
	struct got *g = ctx;

	g->n++;
	if (r->type == TC_REC_BRANCH) {
		if (g->branches < 8) {
			g->from[g->branches] = r->start;
			g->to[g->branches] = r->end;
			g->tid[g->branches] = r->tid;
			g->cpu[g->branches] = r->cpu;
		}
		g->branches++;
	} else if (r->type == TC_REC_RANGE) {
		g->ranges++;
	} else {
		g->other++;
	}
}

static int run(const char *file, const char *symfs, bool branches, struct got *g,
	       struct tc_cs_perf_stats *st)
{
	struct tc_cs_perf_opts o = {
		.symfs = symfs, .branches = branches, .emit = collect, .ctx = g
	};
	struct tc_perf_data *pd;
	struct tc_perf_data_record r;
	struct tc_err e;
	struct tc_cs_perf *s;
	int n;

	if (tc_perf_data_open(&pd, file, &e))
		return -1;
	s = tc_cs_perf_new(&o, &e);
	while ((n = tc_perf_data_next(pd, &r, &e)) > 0)
		if (tc_cs_perf_record(s, &r, &e))
			break;
	CHECK(tc_cs_perf_is_cs_etm(s));
	CHECK_INT(tc_cs_perf_decode(s, pd, &e), 0);
	*st = *tc_cs_perf_stats(s);
	tc_cs_perf_free(s);
	tc_perf_data_close(pd);
	return n;
}

TEST(perf_etm_branches)
{
	const char *td = tc_testdata();
	char file[512], bin[512], symfs[] = "/tmp/tc-symfs-XXXXXX", dir[600], link[700];
	struct got g = { 0 };
	struct tc_cs_perf_stats st;

	if (!td)
		SKIP("no test data");
	snprintf(file, sizeof(file), "%s/perfdata/simpleperf-etm/perf_etm.data", td);
	snprintf(bin, sizeof(bin), "%s/perfdata/simpleperf-etm/etm_test_loop", td);
	CHECK(mkdtemp(symfs) != NULL);
	snprintf(dir, sizeof(dir), "mkdir -p %s/data/local/tmp", symfs);
	CHECK_INT(system(dir), 0);
	snprintf(link, sizeof(link), "%s/data/local/tmp/etm_test_loop", symfs);
	CHECK_INT(symlink(bin, link), 0);

	CHECK_INT(run(file, symfs, true, &g, &st), 0);
	/* Debian perf 6.1: 208 branch samples, the first ones these */
	CHECK_INT((int)g.branches, 208);
	CHECK_INT((int)st.buffers, 1);
	CHECK_INT((int)st.errors, 0);
	CHECK_INT((int)st.nomap, 0);
	CHECK(g.from[0] == 0 && g.to[0] == 0x582b2b1000);
	CHECK(g.from[1] == 0x582b2b1004 && g.to[1] == 0x582b2b100c);
	CHECK(g.from[2] == 0x582b2b1050 && g.to[2] == 0x582b2b10e0);
	CHECK(g.from[3] == 0x582b2b10ec && g.to[3] == 0);
	CHECK(g.from[4] == 0 && g.to[4] == 0x582b2b108c);
	CHECK(g.tid[0] == 17235 && g.cpu[0] == 7);

	/* without the image: no ranges past the first address, the miss is counted */
	memset(&g, 0, sizeof(g));
	CHECK_INT(run(file, "/nonexistent", false, &g, &st), 0);
	CHECK(st.nomap > 0);
	CHECK_INT((int)g.ranges, 0);

	unlink(link);
	snprintf(dir, sizeof(dir), "rm -rf %s", symfs);
	CHECK_INT(system(dir), 0);
}
