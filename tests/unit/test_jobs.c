/* decoders/jobs: every lane's items come back in the order put, parts interleaved by a
 * schedule the consumer follows, whatever the number of threads and however small the
 * budget (workers wait, the caller runs or helps). */
#include "tc_test.h"

#include "decoders/jobs.h"

#include <stdint.h>

#define LANES 5
#define TASKS 40
#define PARTS 7		/* parts per task */

struct arg {
	unsigned lane, task;
	int *done_count;
};

/* Item: lane, task, part, index in part, then filler making sizes vary. */
static void run(void *p, struct tc_jobs_out *o)
{
	struct arg *a = p;
	uint32_t buf[64];

	for (unsigned part = 0; part < PARTS; part++) {
		unsigned n = (a->lane * 7 + a->task * 3 + part) % 23;	/* 0..22 items */

		for (unsigned i = 0; i <= n; i++) {
			size_t words = 4 + (i + part) % 60;

			buf[0] = a->lane;
			buf[1] = a->task;
			buf[2] = part;
			buf[3] = i == n ? UINT32_MAX : i;	/* UINT32_MAX ends the part */
			for (size_t w = 4; w < words; w++)
				buf[w] = (uint32_t)(w * 2654435761u ^ a->task);
			tc_jobs_put(o, buf, words * sizeof(*buf));
		}
	}
}

static void done(void *p)
{
	struct arg *a = p;

	__atomic_add_fetch(a->done_count, 1, __ATOMIC_SEQ_CST);
}

static void check_jobs(unsigned jobs, size_t budget)
{
	struct tc_jobs *j = tc_jobs_new(jobs, LANES, budget);
	static struct arg args[LANES][TASKS];
	unsigned next_task[LANES] = { 0 }, next_part[LANES] = { 0 };
	unsigned submitted[LANES] = { 0 };
	int ndone = 0, bad = 0;
	uint64_t x = 88172645463325252ull;

	CHECK(j != NULL);
	if (!j)
		return;
	for (unsigned step = 0; step < LANES * TASKS * PARTS; step++) {
		unsigned lane;
		const void *item;
		size_t len;

		/* a pseudo-random schedule over the lanes with parts left */
		do {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			lane = (unsigned)(x % LANES);
		} while (next_task[lane] == TASKS);
		/* submit ahead, some lanes far ahead of being read */
		while (submitted[lane] < TASKS && submitted[lane] <= next_task[lane] + lane) {
			struct arg *a = &args[lane][submitted[lane]];

			*a = (struct arg){ lane, submitted[lane]++, &ndone };
			tc_jobs_submit(j, lane, run, done, a);
		}
		for (;;) {
			const uint32_t *w;

			if (tc_jobs_next(j, lane, &item, &len) != 1) {
				bad++;
				break;
			}
			w = item;
			if (w[0] != lane || w[1] != next_task[lane] || w[2] != next_part[lane])
				bad++;
			if (w[3] == UINT32_MAX)
				break;
		}
		if (++next_part[lane] == PARTS) {
			next_part[lane] = 0;
			next_task[lane]++;
		}
	}
	for (unsigned l = 0; l < LANES; l++) {
		const void *item;
		size_t len;

		CHECK_INT(tc_jobs_next(j, l, &item, &len), 0);
	}
	CHECK_INT(bad, 0);
	CHECK(!tc_jobs_failed(j));
	tc_jobs_free(j);
	CHECK_INT(ndone, LANES * TASKS);
}

TEST(jobs_order_one_thread) { check_jobs(1, 0); }
TEST(jobs_order_two_threads) { check_jobs(2, 0); }
TEST(jobs_order_four_threads_small_budget) { check_jobs(4, 4096); }
TEST(jobs_order_eight_threads_tiny_budget) { check_jobs(8, 1); }

/* Tasks never read are dropped at free, their done callbacks still run. */
TEST(jobs_free_drops_queued)
{
	struct tc_jobs *j = tc_jobs_new(2, 2, 1);
	struct arg a[6];
	int ndone = 0;

	for (unsigned i = 0; i < 6; i++) {
		a[i] = (struct arg){ i % 2, i, &ndone };
		CHECK_INT(tc_jobs_submit(j, i % 2, run, done, &a[i]), 0);
	}
	tc_jobs_free(j);
	CHECK_INT(ndone, 6);
}


/* 400 KB of output: several chunks. */
static void run_big(void *p, struct tc_jobs_out *o)
{
	uint8_t buf[200];

	(void)p;
	memset(buf, 7, sizeof(buf));
	for (unsigned i = 0; i < 2000; i++)
		tc_jobs_put(o, buf, sizeof(buf));
}

/* Freed with output half read: the chunk being read and those after it go once each. */
TEST(jobs_free_half_read)
{
	struct tc_jobs *j = tc_jobs_new(2, 2, 0);
	struct arg a[4];
	int ndone = 0;
	const void *item;
	size_t len;

	for (unsigned i = 0; i < 4; i++) {
		a[i] = (struct arg){ i % 2, i + 5, &ndone };
		CHECK_INT(tc_jobs_submit(j, i % 2, run_big, done, &a[i]), 0);
	}
	for (unsigned i = 0; i < 1000; i++)
		CHECK_INT(tc_jobs_next(j, 0, &item, &len), 1);
	CHECK_INT(tc_jobs_next(j, 1, &item, &len), 1);
	tc_jobs_free(j);
	CHECK_INT(ndone, 4);
}
