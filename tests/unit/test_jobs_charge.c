/* decoders/jobs: bytes a lane holds by reference (tc_jobs_charge: Intel PT lanes' formatted
 * output) count in the budget, so a lane the caller does not wait for stops past it. */
#include "tc_test.h"

#include "decoders/jobs.h"

#include <stdint.h>
#include <time.h>

#define BUDGET (64u << 10)

static int after_charge;	/* lane 1's task went on past its charge */

static void small(void *p, struct tc_jobs_out *o)
{
	uint32_t v = 7;

	(void)p;
	tc_jobs_put(o, &v, sizeof(v));
}

/* One small item standing for four budgets of bytes held elsewhere, then another. */
static void big(void *p, struct tc_jobs_out *o)
{
	uint32_t v = 1;

	(void)p;
	tc_jobs_put(o, &v, sizeof(v));
	tc_jobs_charge(o, 4 * BUDGET);
	__atomic_store_n(&after_charge, 1, __ATOMIC_SEQ_CST);
	v = 2;
	tc_jobs_put(o, &v, sizeof(v));
}

TEST(charged_bytes_hold_a_lane_back)
{
	struct tc_jobs *j = tc_jobs_new(3, 2, BUDGET);	/* two workers: both lanes run */
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	const void *item;
	size_t len;
	int n = 0;

	CHECK(j != NULL);
	if (!j)
		return;
	tc_jobs_no_help(j);
	CHECK_INT(tc_jobs_submit(j, 1, big, NULL, NULL), 0);
	CHECK_INT(tc_jobs_submit(j, 0, small, NULL, NULL), 0);
	while (tc_jobs_next(j, 0, &item, &len) == 1)
		n++;
	CHECK_INT(n, 1);
	/* lane 1 is not waited for: past its charge its worker waits for the caller */
	nanosleep(&ts, NULL);
	CHECK_INT(__atomic_load_n(&after_charge, __ATOMIC_SEQ_CST), 0);
	/* read, it goes on */
	n = 0;
	while (tc_jobs_next(j, 1, &item, &len) == 1)
		CHECK_INT(tc_jobs_tag(item), ++n);
	CHECK_INT(n, 2);
	CHECK_INT(__atomic_load_n(&after_charge, __ATOMIC_SEQ_CST), 1);
	CHECK(!tc_jobs_failed(j));
	tc_jobs_free(j);
}
