/* CS_ETM metadata -> decoder configurations and the trace ID map (decoders/coresight/cs_meta.c), and
 * perf-convention branches from CoreSight ranges (decoders/coresight/cs_branches.c). */
#include <string.h>

#include "decoders/coresight/cs_branches.h"
#include "decoders/coresight/cs_meta.h"
#include "tests/unit/tc_test.h"

TEST(meta_from_priv_words)
{
	uint64_t v[] = { 2, (9ULL << 32) | 3, 0,
			 TC_CS_ETMV3_MAGIC, 0, 4, 0x1000, 0x12, 0x3, 0x411cf300,
			 TC_CS_ETMV4_MAGIC, 1, 7, 0xc1, TC_CS_TRACE_ID_UNUSED_FLAG | 0x14,
			 0x28000ea1, 0x4100f443, 0x488, 0, 0xcc,
			 TC_CS_ETE_MAGIC, 2, 8, 0xc1, 0x16, 1, 0x4100f403, 2, 3, 4, 0x47724a13 };
	struct tc_cs_etm_info info;
	struct tc_cs_meta m;
	struct tc_err e;
	const struct tc_etm_cfg *c;

	CHECK_INT(tc_auxtrace_info_cs_etm_parse(v, sizeof(v) / 8, &info, &e), 0);
	CHECK_INT(tc_cs_meta_init(&m, &info, &e), 0);
	CHECK_INT((int)m.ncfgs, 3);
	c = tc_cs_meta_cfg(&m, 0x12);
	CHECK(c && c->proto == TC_ETM_PROTO_PTM && c->cpu == 0 && c->etmidr == 0x411cf300 &&
	      c->arch == TC_ETM_ARCH_V7);
	/* cpu 1's ID is unset until AUX_OUTPUT_HW_ID says */
	CHECK(tc_cs_meta_cfg(&m, 0x14) == NULL);
	CHECK_INT(tc_cs_meta_set_id(&m, 1, 0x20), 0);
	c = tc_cs_meta_cfg(&m, 0x20);
	CHECK(c && c->cpu == 1 && c->proto == TC_ETM_PROTO_ETMV4 && c->trctraceidr == 0x20 &&
	      c->arch == TC_ETM_ARCH_AA64 && c->trcidr0 == 0x28000ea1);
	/* a HW_ID moving cpu 2 to another ID frees the old one */
	CHECK_INT(tc_cs_meta_set_id(&m, 2, 0x22), 0);
	CHECK(tc_cs_meta_cfg(&m, 0x16) == NULL);
	c = tc_cs_meta_cfg(&m, 0x22);
	CHECK(c && c->proto == TC_ETM_PROTO_ETE && c->trcdevarch == 0x47724a13 &&
	      c->arch == TC_ETM_ARCH_AA64);
	CHECK_INT(tc_cs_meta_set_id(&m, 9, 0x30), -1);
	tc_cs_meta_free(&m);
	tc_auxtrace_info_cs_etm_free(&info);

	/* an ETMv4 block too short for the registers the decoder needs */
	uint64_t s[] = { 1, (9ULL << 32) | 1, 0, TC_CS_ETMV4_MAGIC, 0, 3, 0xc1, 0x10, 1 };
	CHECK_INT(tc_auxtrace_info_cs_etm_parse(s, sizeof(s) / 8, &info, &e), 0);
	CHECK_INT(tc_cs_meta_init(&m, &info, &e), -1);
	CHECK(strstr(e.msg, "cpu 0") != NULL);
	tc_auxtrace_info_cs_etm_free(&info);
}

static struct tc_rec got[16];
static int ngot;

static void collect(void *ctx, const struct tc_rec *r)
{
	(void)ctx;
	if (ngot < 16)
		got[ngot++] = *r;
}

static struct tc_rec rng(uint64_t s, uint64_t e, bool taken)
{
	return (struct tc_rec){ .type = TC_REC_RANGE, .id = 0x10, .cpu = 1, .pid = -1, .tid = 7,
				.start = s, .end = e, .last_size = 4, .last_taken = taken };
}

TEST(branches_perf_convention)
{
	struct tc_cs_branches b;
	struct tc_rec on = { .type = TC_REC_TRACE_ON, .id = 0x10 };
	struct tc_rec exc = { .type = TC_REC_EXCEPTION, .id = 0x10 };
	struct tc_rec eot = { .type = TC_REC_EOT, .id = 0x10 };
	struct tc_rec seq[] = { on, rng(0x1000, 0x1010, true), rng(0x2000, 0x2008, false),
				rng(0x2008, 0x2010, true), exc, rng(0x3000, 0x3004, false),
				rng(0x3004, 0x3008, false), eot };

	tc_csb_init(&b);
	ngot = 0;
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		tc_cs_branches_feed(&b, &seq[i], collect, NULL);
	/* from 0 into the first range; taken branches; not-taken ends make none; an
	 * exception ends a range in a branch; to 0 at the end */
	CHECK_INT(ngot, 3);
	CHECK(got[0].type == TC_REC_BRANCH && got[0].start == 0 && got[0].end == 0x1000 &&
	      got[0].tid == 7 && got[0].cpu == 1 && got[0].id == 0x10);
	CHECK(got[1].start == 0x100c && got[1].end == 0x2000);
	CHECK(got[2].start == 0x200c && got[2].end == 0x3000);
	/* a discontinuity ends a range in "to 0"; the end of the trace does not */
	struct tc_rec nosync = { .type = TC_REC_NO_SYNC, .id = 0x10 };
	tc_cs_branches_feed(&b, &on, collect, NULL);
	tc_cs_branches_feed(&b, &seq[1], collect, NULL);
	tc_cs_branches_feed(&b, &nosync, collect, NULL);
	CHECK_INT(ngot, 5);
	CHECK(got[4].start == 0x100c && got[4].end == 0);

	/* no discontinuity before the first range: no branch into it */
	struct tc_rec r1 = rng(0x10, 0x20, false);
	tc_csb_init(&b);
	ngot = 0;
	tc_cs_branches_feed(&b, &r1, collect, NULL);
	CHECK_INT(ngot, 0);
}
