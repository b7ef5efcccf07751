/* decoders/jobs: every lane's items come back in the order put, parts interleaved by a
 * schedule the consumer follows, whatever the number of threads and however small the
 * budget (workers wait, the caller runs or helps). */
#include "tc_test.h"

#include "decoders/jobs.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* Records through tc_jobs_put_rec / tc_jobs_get_rec come back field for field, with
 * their name, text and extra bytes, however few fields change from one to the next. */
#define NRECS 20000

static struct tc_rec rec_at(unsigned i)
{
	struct tc_rec r;

	memset(&r, 0, sizeof(r));
	r.type = (enum tc_rec_type)(i % 7 == 0 ? TC_REC_ERROR : i % 3 ? TC_REC_BRANCH : TC_REC_RANGE);
	r.id = i % 11 == 0 ? (int)(i % 4) : -1;
	r.cpu = (int)(i / 1000);
	r.pid = r.tid = (int)(i / 500);
	r.offset = 1000 + i * 3;
	r.start = 0x400000 + (i % 97) * 16;
	r.end = i % 5 ? r.start + 40 : 0;
	r.insns = i % 13;
	r.isa = TC_ISA_X86_64;
	r.last = i % 2 ? 'E' : 'N';
	r.last_type = (uint8_t)(i % 6);
	r.last_size = (uint8_t)(i % 4);
	r.last_taken = i % 3 == 1;
	r.value = i % 17 == 0 ? i : 0;
	r.has_time = i > 100;
	r.time = i > 100 ? 5000000ull + i / 4 : 0;
	return r;
}

static void run_recs(void *p, struct tc_jobs_out *o)
{
	struct tc_rec prev, r;
	char text[40];

	(void)p;
	memset(&prev, 0, sizeof(prev));
	for (unsigned i = 0; i < NRECS; i++) {
		uint8_t *x;

		r = rec_at(i);
		snprintf(text, sizeof(text), "error %u", i);
		r.name = i % 9 == 0 ? "name" : NULL;
		r.text = r.type == TC_REC_ERROR ? text : NULL;
		if ((x = tc_jobs_put_rec(o, &prev, &r, 1000 + i, i % 4)))
			memset(x, (int)i, i % 4);
	}
}

TEST(jobs_records_round_trip)
{
	struct tc_jobs *j = tc_jobs_new(2, 1, 4096);
	struct tc_rec prev, want;
	const void *item;
	size_t len;
	unsigned bad = 0, n = 0;
	char text[40];

	memset(&prev, 0, sizeof(prev));
	CHECK_INT(tc_jobs_submit(j, 0, run_recs, NULL, NULL), 0);
	while (tc_jobs_next(j, 0, &item, &len) == 1) {
		size_t xl;
		const uint8_t *x;

		if (tc_jobs_tag(item) != 1000 + n)
			bad++;
		x = tc_jobs_get_rec(item, len, &prev, &xl);
		want = rec_at(n);
		snprintf(text, sizeof(text), "error %u", n);
		if (prev.type != want.type || prev.id != want.id || prev.cpu != want.cpu ||
		    prev.pid != want.pid || prev.tid != want.tid || prev.offset != want.offset ||
		    prev.start != want.start || prev.end != want.end || prev.insns != want.insns ||
		    prev.isa != want.isa || prev.last != want.last ||
		    prev.last_type != want.last_type || prev.last_size != want.last_size ||
		    prev.last_taken != want.last_taken || prev.value != want.value ||
		    prev.has_time != want.has_time || prev.time != want.time || prev.fields ||
		    prev.nfields)
			bad++;
		if ((n % 9 == 0) != (prev.name && !strcmp(prev.name, "name")) ||
		    (want.type == TC_REC_ERROR) != (prev.text && !strcmp(prev.text, text)))
			bad++;
		if (xl != n % 4 || (xl && x[0] != (uint8_t)n))
			bad++;
		n++;
	}
	CHECK_INT(n, NRECS);
	CHECK_INT(bad, 0);
	CHECK(!tc_jobs_failed(j));
	tc_jobs_free(j);
}

/* tc_jobs_charge: bytes an item stands for count against the budget. A worker's task that
 * charges more than the budget waits at its end until the caller reads; the lane's next
 * task starts only then (without the charge its small chunk is far below the budget). */
struct charged {
	int started[2];
};

static void run_charged(void *p, struct tc_jobs_out *o, int task)
{
	struct charged *c = p;
	uint32_t v = (uint32_t)task;

	__atomic_store_n(&c->started[task], 1, __ATOMIC_SEQ_CST);
	tc_jobs_put(o, &v, sizeof(v));
	tc_jobs_charge(o, 1u << 20);
}

static void run_charged0(void *p, struct tc_jobs_out *o) { run_charged(p, o, 0); }
static void run_charged1(void *p, struct tc_jobs_out *o) { run_charged(p, o, 1); }

TEST(jobs_charge_holds_a_worker)
{
	struct tc_jobs *j = tc_jobs_new(2, 1, 64 * 1024);
	struct charged c = { { 0, 0 } };
	const void *item;
	size_t len;
	uint32_t v;

	CHECK(j != NULL);
	tc_jobs_no_help(j);	/* only the worker runs tasks */
	CHECK_INT(tc_jobs_submit(j, 0, run_charged0, NULL, &c), 0);
	CHECK_INT(tc_jobs_submit(j, 0, run_charged1, NULL, &c), 0);
	for (int i = 0; i < 2000 && !__atomic_load_n(&c.started[0], __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	CHECK(__atomic_load_n(&c.started[0], __ATOMIC_SEQ_CST));
	usleep(100 * 1000);	/* time enough for the second task, were the first not held */
	CHECK(!__atomic_load_n(&c.started[1], __ATOMIC_SEQ_CST));
	for (uint32_t want = 0; want < 2; want++) {
		CHECK_INT(tc_jobs_next(j, 0, &item, &len), 1);
		CHECK_INT(len, sizeof(v));
		memcpy(&v, item, sizeof(v));
		CHECK_INT(v, want);
	}
	CHECK_INT(tc_jobs_next(j, 0, &item, &len), 0);
	CHECK(__atomic_load_n(&c.started[1], __ATOMIC_SEQ_CST));
	tc_jobs_free(j);
}

/* Bytes a lane holds by reference (Intel PT lanes' formatted output) count in the budget
 * as they are charged, not only at the task's end: a lane the caller does not wait for
 * stops past it. */
#define CHARGE_BUDGET (64u << 10)

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
	tc_jobs_charge(o, 4 * CHARGE_BUDGET);
	__atomic_store_n(&after_charge, 1, __ATOMIC_SEQ_CST);
	v = 2;
	tc_jobs_put(o, &v, sizeof(v));
}

TEST(charged_bytes_hold_a_lane_back)
{
	struct tc_jobs *j = tc_jobs_new(3, 2, CHARGE_BUDGET);	/* two workers: both lanes run */
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

/* tc_jobs_poll: -1 while the lane's task is a worker's and has put nothing read yet (no
 * waiting, no other lane's task run meanwhile), then its items as tc_jobs_next gives them,
 * then 0; with no workers it runs the task itself, as tc_jobs_next would. */
static int gate;	/* the gated task may go on */

static void gated(void *p, struct tc_jobs_out *o)
{
	uint32_t v = 5;

	(void)p;
	while (!__atomic_load_n(&gate, __ATOMIC_SEQ_CST))
		usleep(1000);
	tc_jobs_put(o, &v, sizeof(v));
	v = 6;
	tc_jobs_put(o, &v, sizeof(v));
}

static void poll_lane(unsigned jobs)
{
	struct tc_jobs *j = tc_jobs_new(jobs, 2, 0);
	const void *item;
	size_t len;
	uint32_t v;
	int got = -1, n = 0;

	CHECK(j != NULL);
	if (!j)
		return;
	__atomic_store_n(&gate, jobs == 1, __ATOMIC_SEQ_CST);
	if (jobs > 1)
		tc_jobs_no_help(j);	/* only the worker runs tasks */
	CHECK_INT(tc_jobs_submit(j, 0, gated, NULL, NULL), 0);
	CHECK_INT(tc_jobs_submit(j, 1, small, NULL, NULL), 0);
	if (jobs > 1) {
		for (int i = 0; i < 20; i++) {
			CHECK_INT(tc_jobs_poll(j, 0, &item, &len), -1);
			usleep(1000);
		}
		__atomic_store_n(&gate, 1, __ATOMIC_SEQ_CST);
	}
	for (int i = 0; i < 5000 && got != 0; i++) {
		got = tc_jobs_poll(j, 0, &item, &len);
		if (got < 0) {
			usleep(1000);
			continue;
		}
		if (got == 1) {
			CHECK_INT(len, sizeof(v));
			memcpy(&v, item, sizeof(v));
			CHECK_INT(v, 5u + (uint32_t)n++);
		}
	}
	CHECK_INT(got, 0);
	CHECK_INT(n, 2);
	CHECK_INT(tc_jobs_next(j, 1, &item, &len), 1);
	CHECK_INT(tc_jobs_tag(item), 7);
	CHECK_INT(tc_jobs_next(j, 1, &item, &len), 0);
	CHECK(!tc_jobs_failed(j));
	tc_jobs_free(j);
}

TEST(jobs_poll_no_workers) { poll_lane(1); }
TEST(jobs_poll_a_workers_lane) { poll_lane(2); }

/* tc_jobs_share_step against a model of turns: per window, the caller decodes its share of
 * the segments at speed 1 and does some joining besides, each worker the rest at its own
 * speed; the thread done first waits for the other. From one in jobs, the share must come
 * near the balance where neither waits, and stay within its bounds. */
static unsigned share_model(unsigned jobs, double worker_speed, double join_cost)
{
	unsigned share = tc_jobs_share_first(jobs);

	for (int w = 0; w < 40; w++) {
		double s = (double)share / TC_JOBS_SHARE_ONE, n = 100;
		double caller = s * n + (1 - s) * n * join_cost;
		double worker = (1 - s) * n / (jobs - 1) / worker_speed;
		double span = caller > worker ? caller : worker;

		/* in ns: the step reads only their ratios */
		share = tc_jobs_share_step(share, jobs, (uint64_t)((span - caller) * 1e6),
					   (uint64_t)((span - worker) * 1e6), (uint64_t)(span * 1e6));
		CHECK(share >= tc_jobs_share_first(jobs) / 4 && share <= TC_JOBS_SHARE_ONE * 3 / 4);
	}
	return share;
}

/* the share where both take as long: s = (1 - s) / (workers * speed), joining aside */
static unsigned share_balance(unsigned jobs, double worker_speed)
{
	return (unsigned)(TC_JOBS_SHARE_ONE / (1 + (jobs - 1) * worker_speed));
}

TEST(jobs_share_follows_the_threads)
{
	unsigned s;

	CHECK_INT(tc_jobs_share_first(2), 512);
	CHECK_INT(tc_jobs_share_first(3), 342);
	/* no window, or a balanced one: as it was */
	CHECK_INT(tc_jobs_share_step(300, 2, 5, 5, 0), 300);
	CHECK_INT(tc_jobs_share_step(300, 2, 5, 5, 100), 300);
	/* the caller waited: more; the workers idled: less */
	CHECK(tc_jobs_share_step(512, 2, 50, 0, 100) > 512);
	CHECK(tc_jobs_share_step(512, 2, 0, 50, 100) < 512);
	/* bounds: a quarter of one in jobs, three quarters */
	CHECK_INT(tc_jobs_share_step(130, 2, 0, 100, 100), 128);
	CHECK_INT(tc_jobs_share_step(760, 2, 100, 0, 100), 768);
	CHECK_INT(tc_jobs_share_step(40, 8, 0, 100, 100), 32);
	/* alike cores: about one in two */
	s = share_model(2, 1.0, 0);
	CHECK(s > share_balance(2, 1.0) - 40 && s < share_balance(2, 1.0) + 40);
	/* the worker's core 0.6 as fast: the caller takes more, near 5 in 8 */
	s = share_model(2, 0.6, 0);
	CHECK(s > share_balance(2, 0.6) - 40 && s < share_balance(2, 0.6) + 40);
	CHECK(s > 560);
	/* the caller's core the slower one: it takes less */
	s = share_model(2, 1.6, 0);
	CHECK(s > share_balance(2, 1.6) - 40 && s < share_balance(2, 1.6) + 40);
	CHECK(s < 460);
	/* joining costs the caller: it takes less than the bare balance */
	CHECK(share_model(2, 1.0, 0.2) < share_balance(2, 1.0) - 20);
	/* three workers */
	s = share_model(4, 1.0, 0);
	CHECK(s > share_balance(4, 1.0) - 40 && s < share_balance(4, 1.0) + 40);
}
