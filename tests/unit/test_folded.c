/* Call tree and folded stacks (lib/analysis/calltree.c, lib/output/folded.c) on synthetic record streams. */
#include <inttypes.h>
#include <stdio.h>

#include "lib/output/folded.h"
#include "tests/unit/rec_stream.h"
#include "tests/unit/tc_test.h"

static const char *comm_of(void *ctx, int pid, int tid)
{
	(void)ctx;
	(void)pid;
	return tid == 1 ? "app" : NULL;
}

static int odd_sym(void *ctx, int pid, uint64_t addr, const char **name, uint64_t *start)
{
	if (addr >= BAR && addr < BAR + 0x100) {
		*name = "operator;\nweird";
		*start = BAR;
		return 0;
	}
	return st_sym(ctx, pid, addr, name, start);
}

static struct tc_calltree *tree(const struct stream *st, const struct tc_calltree_opts *o)
{
	struct tc_calltree *t = tc_calltree_new(o);
	struct tc_callstack_ops ops = { .range = tc_calltree_range, .ctx = t, .sym = o->sym };
	struct tc_callstack *cs = tc_callstack_new(&ops);

	for (int i = 0; i < st->n; i++)
		tc_callstack_feed(cs, &st->r[i]);
	tc_callstack_free(cs);
	CHECK(!tc_calltree_failed(t));
	return t;
}

static char *folded(const struct tc_calltree *t)
{
	static char buf[8192];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	CHECK_INT(tc_folded_write(t, f), 0);
	fclose(f);
	return buf;
}

/* Sum of the counts after each line's last space; -1 if a line has none. */
static long long weights(const char *s)
{
	long long sum = 0;

	while (*s) {
		const char *nl = strchr(s, '\n'), *sp = NULL;

		if (!nl)
			return -1;
		for (const char *p = s; p < nl; p++)
			if (*p == ' ')
				sp = p;
		if (!sp)
			return -1;
		sum += strtoll(sp + 1, NULL, 10);
		s = nl + 1;
	}
	return sum;
}

TEST(folded_stacks_weigh_instructions)
{
	struct stream st = { .n = 0 };
	struct tc_calltree_opts o = { .sym = st_sym };
	struct tc_calltree *t;
	char *s;

	st_nested(&st, 1);
	t = tree(&st, &o);
	s = folded(t);
	CHECK_STR(s, "main 12\nmain;foo 6\nmain;foo;bar 10\nmain;foo;bar;baz 16\n");
	CHECK_INT(weights(s), st.insns);
	tc_calltree_free(t);
}

TEST(thread_roots_and_totals)
{
	struct stream st = { .n = 0 };
	struct tc_calltree_opts o = { .sym = st_sym, .thread_roots = true, .comm = comm_of };
	const struct tc_calltree_node *n;
	struct tc_calltree *t;
	size_t nn;
	char *s;

	st_nested(&st, 1);
	st_range(&st, 2, BAZ, BAZ + 0x10, TC_INSN_OTHER);
	st_range_cpu(&st, -1, 3, FOO, FOO + 0x10, TC_INSN_OTHER);
	st_event(&st, TC_REC_LOST, 1, 1, 0);
	st_range(&st, 1, BAR, BAR + 0x08, TC_INSN_OTHER);	/* a new root after the gap */
	t = tree(&st, &o);
	s = folded(t);
	CHECK_STR(s, "app tid 1;bar 2\napp tid 1;main 12\napp tid 1;main;foo 6\n"
		     "app tid 1;main;foo;bar 10\napp tid 1;main;foo;bar;baz 16\ncpu 3;foo 4\n"
		     "tid 2;baz 4\n");
	CHECK_INT(weights(s), st.insns);
	tc_calltree_sum(t);
	n = tc_calltree_nodes(t, &nn);
	CHECK_INT(n[0].total, st.insns);
	CHECK_INT(nn, 1 + 3 + 4 + 1 + 1 + 1);
	for (size_t i = 1; i < nn; i++) {
		if (!strcmp(n[i].name, "foo") && !strcmp(n[n[i].parent].name, "main"))
			CHECK_INT(n[i].total, 32);
	}
	tc_calltree_free(t);
}

TEST(names_cannot_break_lines)
{
	struct stream st = { .n = 0 };
	struct tc_calltree_opts o = { .sym = odd_sym };
	struct tc_calltree *t;
	char *s;

	st_nested(&st, 1);
	t = tree(&st, &o);
	s = folded(t);
	CHECK_STR(s, "main 12\nmain;foo 6\nmain;foo;operator__weird 10\n"
		     "main;foo;operator__weird;baz 16\n");
	tc_calltree_free(t);
}

TEST(many_stacks_weigh_all)
{
	static struct stream st;
	struct tc_calltree_opts o = { .sym = NULL };
	struct tc_calltree *t;
	static char buf[1 << 20];
	FILE *f;

	/* distinct unknown functions, deep and wide enough to rehash every table */
	st.n = 0;
	st.insns = 0;
	for (int i = 0; i < 500; i++)
		st_range(&st, i % 3, 0x100000 + (uint64_t)i * 0x40, 0x100000 + (uint64_t)i * 0x40 + 8 + (uint64_t)(i % 7) * 4,
			 i % 5 ? TC_INSN_CALL : TC_INSN_OTHER);
	t = tree(&st, &o);
	f = fmemopen(buf, sizeof(buf), "w");
	CHECK_INT(tc_folded_write(t, f), 0);
	fclose(f);
	CHECK_INT(weights(buf), st.insns);
	tc_calltree_free(t);
}

TEST(comm_roots_flamegraph_convention)
{
	struct stream st = { .n = 0 };
	struct tc_calltree_opts o = { .sym = st_sym, .comm_roots = true, .comm = comm_of };
	struct tc_calltree *t;
	char *s;

	st_nested(&st, 1);
	st_range(&st, 2, BAZ, BAZ + 0x10, TC_INSN_OTHER);
	t = tree(&st, &o);
	s = folded(t);
	/* comm alone as the root (flamegraph.pl's comm;frame;frame count); no comm: tid N */
	CHECK_STR(s, "app;main 12\napp;main;foo 6\napp;main;foo;bar 10\napp;main;foo;bar;baz 16\n"
		     "tid 2;baz 4\n");
	CHECK_INT(weights(s), st.insns);
	tc_calltree_free(t);
}

/* A thread's path is kept from range to range (calltree.c's struct tpath, a few slots by
 * tid and cpu): threads interleaved range by range, more of them than slots, give the tree
 * they give one after the other. */
static const char *comm_many(void *ctx, int pid, int tid)
{
	static char names[128][16];

	(void)ctx;
	(void)pid;
	if (tid < 0 || tid >= 128 || tid % 3 == 0)
		return NULL;	/* "tid N" */
	if (!names[tid][0])
		snprintf(names[tid], sizeof(names[tid]), "t%d", tid);
	return names[tid];
}

static char *fold_threads(bool interleaved)
{
	struct tc_calltree_opts o = { .sym = st_sym, .comm_roots = true, .comm = comm_many };
	struct tc_calltree *t = tc_calltree_new(&o);
	struct tc_callstack *cs = tc_callstack_new(&(struct tc_callstack_ops){
		.range = tc_calltree_range, .ctx = t, .sym = st_sym });
	static struct stream st[100];
	static char buf[1 << 16];
	FILE *f;

	for (int k = 0; k < 100; k++) {
		st[k].n = 0;
		st_nested(&st[k], k + 1);
	}
	for (int i = 0; i < 9 * 100; i++)
		tc_callstack_feed(cs, interleaved ? &st[i % 100].r[i / 100] : &st[i / 9].r[i % 9]);
	tc_callstack_free(cs);
	CHECK(!tc_calltree_failed(t));
	f = fmemopen(buf, sizeof(buf), "w");
	CHECK_INT(tc_folded_write(t, f), 0);
	fclose(f);
	tc_calltree_free(t);
	return buf;
}

TEST(threads_interleaved_keep_their_paths)
{
	char *apart = strdup(fold_threads(false)), *mixed = fold_threads(true);

	CHECK(apart);
	CHECK_INT(weights(apart), 100 * 44);
	CHECK(strstr(apart, "\nt1;main;foo;bar;baz 16\nt10;main 12\n"));
	CHECK(strstr(apart, "\ntid 3;main 12\ntid 3;main;foo 6\n"));
	CHECK_STR(mixed, apart);
	free(apart);
}

/* A thread whose comm changes between two of its ranges (an exec): the ranges after it
 * are under the new root, though their frames are the ones kept from before. */
static int comm_phase;

static const char *comm_exec(void *ctx, int pid, int tid)
{
	(void)ctx;
	(void)pid;
	(void)tid;
	return comm_phase ? "app2" : "app";
}

TEST(comm_change_moves_the_root)
{
	struct stream st = { .n = 0 };
	struct tc_calltree_opts o = { .sym = st_sym, .comm_roots = true, .comm = comm_exec };
	struct tc_calltree *t = tc_calltree_new(&o);
	struct tc_callstack *cs = tc_callstack_new(&(struct tc_callstack_ops){
		.range = tc_calltree_range, .ctx = t, .sym = st_sym });

	st_nested(&st, 1);
	comm_phase = 0;
	for (int i = 0; i < st.n; i++) {
		comm_phase = i >= 4;
		tc_callstack_feed(cs, &st.r[i]);
	}
	tc_callstack_free(cs);
	CHECK_STR(folded(t), "app;main 4\napp;main;foo 4\napp;main;foo;bar 8\napp2;main 8\n"
			     "app2;main;foo 2\napp2;main;foo;bar 2\napp2;main;foo;bar;baz 16\n");
	tc_calltree_free(t);
}
