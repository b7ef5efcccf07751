/* The record filter (decoders/rec_filter.c) and --itrace's synthesis (decoders/itrace.c):
 * option values, the predicate on each field, gaps for flow consumers, calls and returns
 * with their depth. */
#include "decoders/itrace.h"
#include "decoders/rec_filter.h"
#include "tests/unit/tc_test.h"

static struct tc_rec rec(int tid, int cpu, uint64_t start)
{
	return (struct tc_rec){ .type = TC_REC_RANGE, .id = -1, .cpu = cpu, .pid = 100,
				.tid = tid, .start = start, .end = start + 8, .insns = 2,
				.last = 'E' };
}

static int fake_sym(void *ctx, int pid, uint64_t addr, const char **name, uint64_t *start)
{
	(void)ctx, (void)pid;
	*name = addr >= 0x1000 && addr < 0x2000 ? "fib" : addr < 0x3000 ? "main" : NULL;
	*start = addr & ~0xfffull;
	return *name ? 0 : -1;
}

static const char *fake_dso(void *ctx, int pid, uint64_t addr)
{
	(void)ctx, (void)pid;
	return addr < 0x3000 ? "/usr/bin/prog" : "/lib/libc.so.6";
}

static const char *fake_comm(void *ctx, const struct tc_rec *r)
{
	(void)ctx;
	return r->tid == 7 ? "worker" : "prog";
}

static struct tc_rec_filter *with(enum tc_rec_filter_key k, const char *arg)
{
	struct tc_rec_filter *f = tc_rec_filter_new();
	struct tc_err e;

	CHECK(f != NULL);
	CHECK_INT(tc_rec_filter_add(f, k, arg, &e), 0);
	tc_rec_filter_source(f, &(struct tc_rec_filter_src){ .sym = fake_sym, .dso = fake_dso,
							   .comm = fake_comm });
	return f;
}

static int bad(enum tc_rec_filter_key k, const char *arg)
{
	struct tc_rec_filter *f = tc_rec_filter_new();
	struct tc_err e = { 0 };
	int rc = tc_rec_filter_add(f, k, arg, &e);

	if (rc)
		CHECK(strstr(e.msg, arg) != NULL);
	tc_rec_filter_free(f);
	return rc;
}

TEST(bad_values)
{
	CHECK_INT(bad(TC_REC_FILTER_TIME, "1"), -1);
	CHECK_INT(bad(TC_REC_FILTER_TIME, "1,2,3"), -1);
	CHECK_INT(bad(TC_REC_FILTER_TIME, "2,1"), -1);
	CHECK_INT(bad(TC_REC_FILTER_TIME, "1.,2"), -1);
	CHECK_INT(bad(TC_REC_FILTER_TIME, "x,2"), -1);
	CHECK_INT(bad(TC_REC_FILTER_TIME, ","), 0);
	CHECK_INT(bad(TC_REC_FILTER_CPU, "3-1"), -1);
	CHECK_INT(bad(TC_REC_FILTER_CPU, "-1"), -1);
	CHECK_INT(bad(TC_REC_FILTER_CPU, "1,"), -1);
	CHECK_INT(bad(TC_REC_FILTER_TID, "99999999999"), -1);
	CHECK_INT(bad(TC_REC_FILTER_COMM, "a,,b"), -1);
	CHECK_INT(bad(TC_REC_FILTER_PID, "1,3-5"), 0);
}

TEST(time_window)
{
	struct tc_rec_filter *f = with(TC_REC_FILTER_TIME, "12.5,13.000000750");
	struct tc_rec r = rec(1, 0, 0x1000);

	CHECK(!tc_rec_filter_keep(f, &r));	/* no time */
	r.has_time = true;
	r.time = 12499999999;
	CHECK(!tc_rec_filter_keep(f, &r));
	r.time = 12500000000;
	CHECK(tc_rec_filter_keep(f, &r));
	r.time = 13000000750;
	CHECK(tc_rec_filter_keep(f, &r));
	r.time = 13000000751;
	CHECK(!tc_rec_filter_keep(f, &r));
	tc_rec_filter_free(f);

	f = with(TC_REC_FILTER_TIME, "13,");
	CHECK(!tc_rec_filter_keep(f, &(struct tc_rec){ .has_time = true, .time = 1 }));
	CHECK(tc_rec_filter_keep(f, &(struct tc_rec){ .has_time = true, .time = UINT64_MAX }));
	tc_rec_filter_free(f);
}

TEST(threads_cpus_names)
{
	struct tc_rec_filter *f = with(TC_REC_FILTER_CPU, "0-1,3");
	struct tc_rec r = rec(7, 3, 0x1000);

	CHECK(tc_rec_filter_keep(f, &r));
	r.cpu = 2;
	CHECK(!tc_rec_filter_keep(f, &r));
	r.cpu = -1;
	CHECK(!tc_rec_filter_keep(f, &r));
	tc_rec_filter_free(f);

	f = with(TC_REC_FILTER_TID, "7");
	CHECK(tc_rec_filter_add(f, TC_REC_FILTER_TID, "9", NULL) == 0);	/* repeat: adds */
	CHECK(tc_rec_filter_keep(f, &(struct tc_rec){ .tid = 9 }));
	CHECK(tc_rec_filter_keep(f, &r));
	CHECK(!tc_rec_filter_keep(f, &(struct tc_rec){ .tid = 8 }));
	tc_rec_filter_free(f);

	f = with(TC_REC_FILTER_COMM, "nosuch,worker");
	CHECK(tc_rec_filter_keep(f, &r));
	r.tid = 8;
	CHECK(!tc_rec_filter_keep(f, &r));
	tc_rec_filter_free(f);
}

TEST(dso_and_sym_by_address)
{
	struct tc_rec_filter *f = with(TC_REC_FILTER_DSO, "prog");
	struct tc_rec r = rec(1, 0, 0x1800);

	CHECK(tc_rec_filter_keep(f, &r));
	r.start = 0x3800;
	CHECK(!tc_rec_filter_keep(f, &r));
	CHECK(!tc_rec_filter_keep(f, &(struct tc_rec){ .type = TC_REC_TRACE_ON, .tid = 1 }));
	CHECK_INT(tc_rec_filter_dsos(f)[0][0], 'p');
	CHECK(tc_rec_filter_dsos(f)[1] == NULL);
	tc_rec_filter_dso_off(f);	/* autofdo/bolt: names only */
	CHECK(tc_rec_filter_keep(f, &r));
	tc_rec_filter_free(f);

	f = with(TC_REC_FILTER_DSO, "/lib/libc.so.6");
	CHECK(tc_rec_filter_keep(f, &r));
	tc_rec_filter_free(f);

	f = with(TC_REC_FILTER_SYM, "fib");
	r.start = 0x1004;
	CHECK(tc_rec_filter_keep(f, &r));
	r.type = TC_REC_BRANCH;		/* a branch by its source */
	r.start = 0x2004;
	r.end = 0x1000;
	CHECK(!tc_rec_filter_keep(f, &r));
	r.start = 0;			/* trace start: no source */
	CHECK(!tc_rec_filter_keep(f, &r));
	tc_rec_filter_free(f);
	CHECK(tc_rec_filter_dso_is("/usr/bin/prog", "prog"));
	CHECK(!tc_rec_filter_dso_is("/usr/bin/prog", "rog"));
}

static struct tc_rec got[32];
static int ngot;

static void collect(void *ctx, const struct tc_rec *r)
{
	(void)ctx;
	if (ngot < 32)
		got[ngot++] = *r;
}

TEST(gap_before_kept_records)
{
	struct tc_rec_filter *f = with(TC_REC_FILTER_SYM, "fib");
	struct tc_rec a = rec(1, 0, 0x1000), b = rec(1, 0, 0x3000), c = rec(2, 0, 0x3000);

	ngot = 0;
	CHECK_INT(tc_rec_filter_pass(f, &a, collect, NULL), 0);
	CHECK_INT(tc_rec_filter_pass(f, &b, collect, NULL), 0);
	CHECK_INT(tc_rec_filter_pass(f, &c, collect, NULL), 0);
	CHECK_INT(tc_rec_filter_pass(f, &a, collect, NULL), 0);
	CHECK_INT(tc_rec_filter_pass(f, &a, collect, NULL), 0);
	CHECK_INT(ngot, 4);
	CHECK_INT(got[0].type, TC_REC_RANGE);
	CHECK_INT(got[1].type, TC_REC_TRACE_ON);	/* thread 1 lost b */
	CHECK_INT(got[1].tid, 1);
	CHECK_INT(got[2].type, TC_REC_RANGE);
	CHECK_INT(got[3].type, TC_REC_RANGE);
	tc_rec_filter_free(f);
	ngot = 0;
	CHECK_INT(tc_rec_filter_pass(NULL, &b, collect, NULL), 0);	/* no filter */
	CHECK_INT(ngot, 1);
}

TEST(itrace_letters)
{
	unsigned k = 0;
	struct tc_err e;

	CHECK_INT(tc_itrace_parse("cre", &k, &e), 0);
	CHECK_INT(k, TC_ITRACE_CALLS | TC_ITRACE_RETURNS | TC_ITRACE_ERRORS);
	CHECK_INT(tc_itrace_parse("bx", &k, &e), -1);
	CHECK(strstr(e.msg, "'x' (transaction") != NULL);
	CHECK_INT(tc_itrace_parse("i100ns", &k, &e), -1);
	CHECK(strstr(e.msg, "periods") != NULL);
	CHECK_INT(tc_itrace_parse("ib", &k, &e), 0);
	CHECK_INT(k, TC_ITRACE_INSNS | TC_ITRACE_BRANCHES);
	CHECK_INT(tc_itrace_parse("b?", &k, &e), -1);
	CHECK(strstr(e.msg, "'?' is not") != NULL);
	CHECK_INT(tc_itrace_parse("", &k, &e), -1);
}

static struct tc_rec ends(uint64_t start, uint64_t end, enum tc_insn_class c)
{
	struct tc_rec r = rec(1, -1, start);

	r.end = end;
	r.last_type = (uint8_t)c;
	r.last_size = 5;
	return r;
}

TEST(itrace_calls_returns_depth)
{
	struct tc_itrace *t;
	struct tc_rec seq[] = {
		ends(0x100, 0x110, TC_INSN_CALL),	/* main calls 0x200 */
		ends(0x200, 0x210, TC_INSN_CALL),	/* which calls 0x300 */
		ends(0x300, 0x310, TC_INSN_RET),	/* returns to 0x210 */
		ends(0x210, 0x220, TC_INSN_RET),	/* returns to 0x110 */
		ends(0x110, 0x120, TC_INSN_RET),	/* returns above the trace */
		ends(0x400, 0x410, TC_INSN_CALL),	/* the trace ends before the callee */
	};

	ngot = 0;
	t = tc_itrace_new(TC_ITRACE_CALLS | TC_ITRACE_RETURNS, collect, NULL);
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		tc_itrace_feed(t, &seq[i]);
	tc_itrace_feed(t, &(struct tc_rec){ .type = TC_REC_EVENT, .tid = 1 });
	CHECK_INT(tc_itrace_finish(t), 0);
	tc_itrace_free(t);
	CHECK_INT(ngot, 7);
	CHECK_INT(got[0].last_type, TC_INSN_CALL);
	CHECK_INT(got[0].start, 0x110 - 5);
	CHECK_INT(got[0].end, 0x200);
	CHECK_INT(got[0].value, 0);
	CHECK_INT(got[1].value, 1);
	CHECK_INT(got[2].last_type, TC_INSN_RET);
	CHECK_INT(got[2].end, 0x210);
	CHECK_INT(got[2].value, 1);
	CHECK_INT(got[3].value, 0);
	CHECK_INT(got[4].value, 0);		/* never below 0 */
	CHECK_INT(got[5].type, TC_REC_EVENT);	/* the event passes on its way */
	CHECK_INT(got[6].end, 0);		/* the call without a target */
	CHECK_INT(got[6].value, 0);
}
