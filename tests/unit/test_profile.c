/* Instruction profile and profile diff (lib/analysis/profile.c, lib/analysis/profile_diff.c) on synthetic
 * record streams through lib/analysis/callstack.c. */
#include <math.h>
#include <stdio.h>

#include "lib/analysis/profile.h"
#include "tests/unit/rec_stream.h"
#include "tests/unit/tc_test.h"

static const char *dso_of(void *ctx, int pid, uint64_t addr)
{
	(void)ctx;
	(void)pid;
	return addr >= BAR && addr < BAZ + 0x100 ? "libc.so" : addr < FOO + 0x100 ? "app" : NULL;
}

static const char *comm_of(void *ctx, int pid, int tid)
{
	(void)ctx;
	(void)pid;
	return tid == 1 ? "app" : "other";
}

static struct tc_profile *profile(const struct stream *st, const struct tc_profile_opts *o)
{
	struct tc_profile_opts def = { .sym = st_sym, .dso = dso_of, .comm = comm_of, .tid = -1,
				    .cpu = -1 };
	struct tc_profile *p = tc_profile_new(o ? o : &def);
	struct tc_callstack_ops ops = { .range = tc_profile_range, .ctx = p, .sym = st_sym };
	struct tc_callstack *cs = tc_callstack_new(&ops);

	for (int i = 0; i < st->n; i++)
		tc_callstack_feed(cs, &st->r[i]);
	tc_callstack_free(cs);
	CHECK(!tc_profile_failed(p));
	return p;
}

static const struct tc_profile_row *row(const struct tc_profile_thread *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++) {
		if (!strcmp(t->rows[i].name, name))
			return &t->rows[i];
	}
	return NULL;
}

/* Names of the rows in order, ' '-separated. */
static const char *order(const struct tc_profile_thread *t)
{
	static char buf[256];
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < t->n; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? " " : "", t->rows[i].name);
	return buf;
}

TEST(self_total_calls_and_coverage)
{
	struct stream st = { .n = 0 };
	struct tc_profile_view v = { .sort = TC_PROFILE_BY_SELF, .per_thread = true };
	struct tc_profile_table t;
	const struct tc_profile_row *r;
	struct tc_profile *p;

	st_nested(&st, 1);
	p = profile(&st, NULL);
	CHECK(!tc_profile_table(p, &v, &t));
	CHECK_INT(t.n, 1);
	CHECK_INT(t.insns, 44);
	CHECK_INT(t.threads[0].tid, 1);
	CHECK_STR(t.threads[0].comm, "app");
	CHECK_INT(t.threads[0].funcs, 4);
	CHECK_STR(order(&t.threads[0]), "baz main bar foo");
	CHECK((r = row(&t.threads[0], "main")) && r->self == 12 && r->total == 44 && !r->calls);
	CHECK((r = row(&t.threads[0], "foo")) && r->self == 6 && r->total == 32 && r->calls == 1);
	CHECK((r = row(&t.threads[0], "bar")) && r->self == 10 && r->total == 26 && r->calls == 2);
	CHECK((r = row(&t.threads[0], "baz")) && r->self == 16 && r->total == 16 && r->calls == 1);
	/* hottest ranges: bar's own 8, then its two 1-instruction pieces (by address) */
	r = row(&t.threads[0], "bar");
	CHECK(r && r->hot[0].start == BAR && r->hot[0].end == BAR + 0x20 && r->hot[0].insns == 8);
	CHECK(r && r->hot[1].insns == 1 && r->hot[2].insns == 1 && r->hot[3].insns == 0);
	CHECK_STR(r ? r->dso : NULL, "libc.so");
	tc_profile_table_free(&t);
	tc_profile_free(p);
}

/* The table of all threads merges a function's rows by name and dso, and its hottest
 * ranges too: a range two threads ran is one entry with both threads' instructions (not
 * one entry per thread crowding the list). Each thread's own table keeps its own. */
TEST(hot_ranges_summed_over_threads)
{
	struct stream st = { .n = 0 };
	struct tc_profile_view v = { .sort = TC_PROFILE_BY_SELF };
	struct tc_profile_table t;
	const struct tc_profile_row *r;
	struct tc_profile *p;

	st_nested(&st, 1);
	st_nested(&st, 2);
	p = profile(&st, NULL);
	CHECK(!tc_profile_table(p, &v, &t));
	CHECK_INT(t.n, 1);
	r = row(&t.threads[0], "bar");
	CHECK(r && r->self == 20 && r->calls == 4);
	CHECK(r && r->hot[0].start == BAR && r->hot[0].end == BAR + 0x20 && r->hot[0].insns == 16);
	CHECK(r && r->hot[1].start == BAR && r->hot[1].end == BAR + 0x04 && r->hot[1].insns == 2);
	CHECK(r && r->hot[2].start == BAR + 0x04 && r->hot[2].end == BAR + 0x08 &&
	      r->hot[2].insns == 2);
	CHECK(r && r->hot[3].insns == 0);
	tc_profile_table_free(&t);
	v.per_thread = true;
	CHECK(!tc_profile_table(p, &v, &t));
	CHECK_INT(t.n, 2);
	for (size_t i = 0; i < t.n; i++) {
		r = row(&t.threads[i], "bar");
		CHECK(r && r->hot[0].insns == 8 && r->hot[1].insns == 1 && r->hot[2].insns == 1 &&
		      r->hot[3].insns == 0);
	}
	tc_profile_table_free(&t);
	tc_profile_free(p);
}

TEST(recursion_counts_total_once_per_stack)
{
	struct stream st = { .n = 0 };
	struct tc_profile_view v = { .sort = TC_PROFILE_BY_TOTAL };
	struct tc_profile_table t;
	const struct tc_profile_row *r;
	struct tc_profile *p;

	st_range(&st, 1, MAIN, MAIN + 0x10, TC_INSN_CALL);
	st_range(&st, 1, FOO, FOO + 0x08, TC_INSN_CALL);
	st_range(&st, 1, FOO, FOO + 0x08, TC_INSN_CALL);
	st_range(&st, 1, FOO, FOO + 0x10, TC_INSN_RET);
	st_range(&st, 1, FOO + 0x08, FOO + 0x10, TC_INSN_RET);
	st_range(&st, 1, FOO + 0x08, FOO + 0x10, TC_INSN_RET);
	st_range(&st, 1, MAIN + 0x10, MAIN + 0x14, TC_INSN_OTHER);
	p = profile(&st, NULL);
	CHECK(!tc_profile_table(p, &v, &t));
	CHECK((r = row(&t.threads[0], "foo")) && r->self == 12 && r->total == 12 && r->calls == 3);
	CHECK((r = row(&t.threads[0], "main")) && r->self == 5 && r->total == 17);
	CHECK_STR(order(&t.threads[0]), "main foo");
	tc_profile_table_free(&t);
	tc_profile_free(p);
}

TEST(sorting_limit_and_dso)
{
	struct stream st = { .n = 0 };
	struct tc_profile_view v = { .sort = TC_PROFILE_BY_TOTAL };
	struct tc_profile_table t;
	struct tc_profile *p;

	st_nested(&st, 1);
	p = profile(&st, NULL);
	static const struct {
		enum tc_profile_sort s;
		size_t limit;
		const char *dso, *want;
	} c[] = {
		{ TC_PROFILE_BY_TOTAL, 0, NULL, "main foo bar baz" },
		{ TC_PROFILE_BY_CALLS, 0, NULL, "bar baz foo main" },
		{ TC_PROFILE_BY_NAME, 0, NULL, "bar baz foo main" },
		{ TC_PROFILE_BY_SELF, 2, NULL, "baz main" },
		{ TC_PROFILE_BY_SELF, 0, "libc.so", "baz bar" },
	};
	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		v = (struct tc_profile_view){ .sort = c[i].s,
					      .limit = c[i].limit,
					      .dso = c[i].dso };
		CHECK(!tc_profile_table(p, &v, &t));
		CHECK_STR(order(&t.threads[0]), c[i].want);
		CHECK_INT(t.threads[0].funcs, 4);	/* coverage is before cuts */
		tc_profile_table_free(&t);
	}
	tc_profile_free(p);
}

TEST(threads_and_filters)
{
	struct stream st = { .n = 0 };
	struct tc_profile_view v = { .sort = TC_PROFILE_BY_NAME, .per_thread = true };
	struct tc_profile_table t;
	struct tc_profile *p;
	struct tc_profile_opts o = { .sym = st_sym, .comm = comm_of, .tid = -1, .cpu = -1 };

	st_nested(&st, 1);
	st_nested(&st, 2);
	st_range(&st, 2, BAZ, BAZ + 0x10, TC_INSN_OTHER);
	p = profile(&st, NULL);
	CHECK(!tc_profile_table(p, &v, &t));
	CHECK_INT(t.n, 2);
	CHECK_INT(t.threads[0].insns, 44);
	CHECK_INT(t.threads[1].insns, 48);
	CHECK_STR(t.threads[1].comm, "other");
	tc_profile_table_free(&t);
	v.per_thread = false;
	CHECK(!tc_profile_table(p, &v, &t));
	CHECK_INT(t.n, 1);
	CHECK_INT(t.threads[0].insns, 92);
	CHECK(row(&t.threads[0], "baz") && row(&t.threads[0], "baz")->self == 36);
	CHECK(row(&t.threads[0], "main") && row(&t.threads[0], "main")->total == 88);
	tc_profile_table_free(&t);
	tc_profile_free(p);

	o.tid = 2;
	p = profile(&st, &o);
	CHECK(!tc_profile_table(p, &v, &t));
	CHECK_INT(t.insns, 48);
	tc_profile_table_free(&t);
	tc_profile_free(p);

	o.tid = -1;
	o.comm_is = "app";
	p = profile(&st, &o);
	CHECK(!tc_profile_table(p, &v, &t));
	CHECK_INT(t.insns, 44);
	tc_profile_table_free(&t);
	tc_profile_free(p);

	o.comm_is = NULL;
	o.cpu = 3;	/* st_range puts tid 1 on cpu 1, tid 2 on cpu 2 */
	p = profile(&st, &o);
	CHECK(!tc_profile_table(p, &v, &t));
	CHECK_INT(t.insns, 0);
	CHECK_INT(t.threads[0].n, 0);
	tc_profile_table_free(&t);
	tc_profile_free(p);
}

TEST(text_and_json)
{
	struct stream st = { .n = 0 };
	struct tc_profile_view v = { .sort = TC_PROFILE_BY_SELF, .limit = 2, .per_thread = true };
	struct tc_profile_table t;
	struct tc_profile *p;
	static char buf[4096];
	FILE *f;
	struct tc_json j;

	st_nested(&st, 1);
	p = profile(&st, NULL);
	CHECK(!tc_profile_table(p, &v, &t));
	f = fmemopen(buf, sizeof(buf), "w");
	tc_profile_write_text(&t, f);
	fclose(f);
	CHECK_STR(buf,
		  "thread 100/1 (app): 44 instructions, 4 functions executed\n"
		  "        self   self%        total  total%    calls  function\n"
		  "          16  36.36%           16  36.36%        1  baz [libc.so]  hottest 0x4000-0x4040 (16)\n"
		  "          12  27.27%           44 100.00%        0  main [app]  hottest 0x1010-0x1030 (8)\n");
	f = fmemopen(buf, sizeof(buf), "w");
	tc_json_init(&j, f, false);
	tc_profile_write_json(&t, &j);
	fclose(f);
	CHECK_STR(buf,
		  "{\"insns\":44,\"threads\":[{\"pid\":100,\"tid\":1,\"cpu\":1,\"comm\":\"app\",\"insns\":44,"
		  "\"functions\":4,\"rows\":[{\"name\":\"baz\",\"dso\":\"libc.so\",\"addr\":\"0x4000\","
		  "\"self\":16,\"total\":16,\"calls\":1,\"hot\":[{\"start\":\"0x4000\",\"end\":\"0x4040\","
		  "\"insns\":16}]},{\"name\":\"main\",\"dso\":\"app\",\"addr\":\"0x1000\",\"self\":12,"
		  "\"total\":44,\"calls\":0,\"hot\":[{\"start\":\"0x1010\",\"end\":\"0x1030\",\"insns\":8},"
		  "{\"start\":\"0x1000\",\"end\":\"0x1010\",\"insns\":4}]}]}]}\n");
	tc_profile_table_free(&t);
	tc_profile_free(p);
}

TEST(diff_against_itself_is_empty)
{
	struct stream st = { .n = 0 };
	struct tc_profile_view v = { .sort = TC_PROFILE_BY_SELF };
	struct tc_profile_diff d;
	struct tc_profile *a, *b;

	st_nested(&st, 1);
	a = profile(&st, NULL);
	st.r[0].tid = 7;	/* another run: other thread ids, same work */
	b = profile(&st, NULL);
	CHECK(!tc_profile_diff(a, a, &v, &d));
	CHECK_INT(d.n, 0);
	CHECK(!tc_profile_diff_grew(&d, 0, false));
	tc_profile_diff_free(&d);
	CHECK(!tc_profile_diff(a, b, &v, &d));
	CHECK_INT(d.a_insns, d.b_insns);
	tc_profile_diff_free(&d);
	tc_profile_free(a);
	tc_profile_free(b);
}

TEST(diff_names_what_changed)
{
	struct stream sa = { .n = 0 }, sb = { .n = 0 };
	struct tc_profile_view v = { .sort = TC_PROFILE_BY_SELF };
	struct tc_profile_diff d;
	const struct tc_profile_diff_row *g;
	struct tc_profile *a, *b;
	static char buf[4096];
	FILE *f;
	struct tc_json j;

	st_nested(&sa, 1);
	st_nested(&sb, 1);
	sb.r[5].end = BAZ + 0x60;	/* baz: 16 -> 24 instructions */
	sb.r[5].insns = 24;
	sb.insns += 8;
	a = profile(&sa, NULL);
	b = profile(&sb, NULL);
	CHECK(!tc_profile_diff(a, b, &v, &d));
	/* self changed for baz only; totals for baz, bar, foo, main */
	CHECK_INT(d.n, 4);
	CHECK_STR(d.rows[0].name, "baz");
	CHECK_INT(d.rows[0].a_self, 16);
	CHECK_INT(d.rows[0].b_self, 24);
	CHECK(fabs(d.rows[0].self_pct - 50.0) < 1e-9);
	CHECK(fabs(d.rows[1].self_pct) < 1e-9);
	CHECK((g = tc_profile_diff_grew(&d, 40, false)) && !strcmp(g->name, "baz"));
	CHECK(!tc_profile_diff_grew(&d, 50, false));
	CHECK((g = tc_profile_diff_grew(&d, 20, true)) && !strcmp(g->name, "baz"));
	f = fmemopen(buf, sizeof(buf), "w");
	tc_profile_diff_write_text(&d, f);
	fclose(f);
	CHECK(strstr(buf, "instructions: 44 -> 52\n"));
	CHECK(strstr(buf, "          16           24           +8   +50.0%           16           24"
			  "           +8   +50.0%  baz [libc.so]\n"));
	tc_profile_diff_free(&d);

	/* a function only B runs is a change without bound */
	sb.r[sb.n - 1].last_type = TC_INSN_CALL;
	st_range(&sb, 1, 0x5000, 0x5010, TC_INSN_OTHER);
	tc_profile_free(b);
	b = profile(&sb, NULL);
	v.sort = TC_PROFILE_BY_NAME;
	CHECK(!tc_profile_diff(a, b, &v, &d));
	CHECK_STR(d.rows[0].name, "0x5000");
	CHECK(isinf(d.rows[0].self_pct));
	CHECK((g = tc_profile_diff_grew(&d, 1e9, false)) && !strcmp(g->name, "0x5000"));
	f = fmemopen(buf, sizeof(buf), "w");
	tc_json_init(&j, f, false);
	tc_profile_diff_write_json(&d, &j);
	fclose(f);
	CHECK(strstr(buf, "{\"name\":\"0x5000\",\"dso\":null,\"a_self\":0,\"b_self\":4,"
			  "\"self_change\":4,\"self_pct\":null,"));
	CHECK(strstr(buf, "\"name\":\"baz\",\"dso\":\"libc.so\",\"a_self\":16,\"b_self\":24,"
			  "\"self_change\":8,\"self_pct\":50,"));
	tc_profile_diff_free(&d);
	tc_profile_free(a);
	tc_profile_free(b);
}

/* ---- the counts against a plain recount of every range's stack ---- */

struct recount {
	struct tc_profile *p;
	int tid, cpu;		/* the profile's filters */
	struct { int tid; uint64_t addr, self, total, calls; } f[512];
	int n;
};

static int recount_fn(struct recount *rc, int tid, uint64_t addr)
{
	for (int i = 0; i < rc->n; i++)
		if (rc->f[i].tid == tid && rc->f[i].addr == addr)
			return i;
	rc->f[rc->n].tid = tid;
	rc->f[rc->n].addr = addr;
	rc->f[rc->n].self = rc->f[rc->n].total = rc->f[rc->n].calls = 0;
	return rc->n++;
}

/* Every function on the stack gets the range's instructions once, the deepest its self,
 * the frames entered since the thread's previous range a call. */
static void recount_range(void *ctx, const struct tc_callstack_range *r)
{
	struct recount *rc = ctx;
	int seen[TC_CALLSTACK_MAX_DEPTH], ns = 0, k = 0;

	tc_profile_range(rc->p, r);
	if ((rc->tid >= 0 && r->tid != rc->tid) || (rc->cpu >= 0 && r->cpu != rc->cpu))
		return;
	for (unsigned i = 0; i < r->depth; i++) {
		k = recount_fn(rc, r->tid, r->func[i]);
		if (i >= r->kept && r->kind[i] != TC_FRAME_ROOT)
			rc->f[k].calls++;
		for (int j = 0; j < ns; j++)
			if (seen[j] == k)
				goto counted;
		seen[ns++] = k;
		rc->f[k].total += r->insns;
counted:;
	}
	rc->f[k].self += r->insns;
}

/* A random walk over main/foo/bar/baz and unknown code: calls, returns, jumps, breaks, two
 * threads moving between cpus. */
static void random_stream(struct stream *st, unsigned seed)
{
	static const uint64_t at[] = { MAIN, FOO, BAR, BAZ, 0x9000, 0xa000 };
	static const enum tc_insn_class cls[] = { TC_INSN_CALL, TC_INSN_CALL, TC_INSN_RET,
						  TC_INSN_RET, TC_INSN_JUMP, TC_INSN_OTHER };

	srand(seed);
	while (st->n < 480) {
		int tid = 1 + rand() % 2, cpu = rand() % 3;
		uint64_t s = at[rand() % 6] + 4 * (uint64_t)(rand() % 16);

		if (rand() % 40 == 0)
			st_event(st, TC_REC_TRACE_ON, tid, cpu, 0);
		else
			st_range_cpu(st, tid, cpu, s, s + 4 * (1 + (uint64_t)(rand() % 8)),
				     cls[rand() % 6]);
	}
}

TEST(counts_match_a_recount_of_every_stack)
{
	static const int filters[][2] = { { -1, -1 }, { -1, 1 }, { 2, -1 }, { 1, 0 } };

	for (unsigned seed = 1; seed <= 40; seed++) {
		for (unsigned fi = 0; fi < sizeof(filters) / sizeof(filters[0]); fi++) {
			struct stream st = { .n = 0 };
			struct recount rc = { .tid = filters[fi][0], .cpu = filters[fi][1] };
			struct tc_profile_view v = { .sort = TC_PROFILE_BY_NAME, .per_thread = true };
			struct tc_callstack_ops ops = { .range = recount_range, .ctx = &rc,
							.sym = st_sym };
			struct tc_callstack *cs;
			struct tc_profile_table t;
			int rows = 0, bad = 0;

			rc.p = tc_profile_new(&(struct tc_profile_opts){
				.sym = st_sym, .tid = rc.tid, .cpu = rc.cpu });
			cs = tc_callstack_new(&ops);
			random_stream(&st, seed);
			for (int i = 0; i < st.n; i++)
				tc_callstack_feed(cs, &st.r[i]);
			CHECK(!tc_profile_table(rc.p, &v, &t));
			for (size_t i = 0; i < t.n; i++)
				for (size_t k = 0; k < t.threads[i].n; k++) {
					const struct tc_profile_row *r = &t.threads[i].rows[k];
					int j = recount_fn(&rc, t.threads[i].tid, r->addr);

					rows++;
					bad += r->self != rc.f[j].self || r->total != rc.f[j].total ||
					       r->calls != rc.f[j].calls;
				}
			if (bad || rows != rc.n)
				printf("#   seed %u filter %u: %d of %d rows differ, %d functions\n",
				       seed, fi, bad, rows, rc.n);
			CHECK(!bad && rows == rc.n && rows > 0);
			tc_profile_table_free(&t);
			tc_callstack_free(cs);
			tc_profile_free(rc.p);
		}
	}
}
