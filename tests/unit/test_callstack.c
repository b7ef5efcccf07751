/* Call-stack reconstruction (lib/analysis/callstack.c) on synthetic record streams. */
#include <stdio.h>

#include "lib/analysis/callstack.h"
#include "tests/unit/rec_stream.h"
#include "tests/unit/tc_test.h"

/* Each range's stack as "tid:name;name;name insns" lines, breaks as "tid:BREAK type". */
struct log {
	char buf[8192];
	size_t len;
	int kinds[64];	/* kind of each frame of the last range */
	bool sym;	/* name frames with the symboliser */
	char kept[64];	/* kept of each range, as digits */
	uint64_t insns;
};

static void on_range(void *ctx, const struct tc_callstack_range *r)
{
	struct log *l = ctx;
	char hex[32];

	l->len += (size_t)snprintf(l->buf + l->len, sizeof(l->buf) - l->len, "%d:", r->tid);
	for (unsigned i = 0; i < r->depth; i++) {
		l->len += (size_t)snprintf(
			l->buf + l->len, sizeof(l->buf) - l->len, "%s%s", i ? ";" : "",
			tc_callstack_func_name(l->sym ? st_sym : NULL, NULL, r->pid, r->func[i],
					       hex, sizeof(hex)));
		if (i < 64)
			l->kinds[i] = r->kind[i];
	}
	l->len += (size_t)snprintf(l->buf + l->len, sizeof(l->buf) - l->len, " %u\n", r->insns);
	l->insns += r->insns;
	if (strlen(l->kept) < sizeof(l->kept) - 1)
		l->kept[strlen(l->kept)] = (char)('0' + r->kept);
}

static void on_brk(void *ctx, int pid, int tid, int cpu, const struct tc_rec *r)
{
	struct log *l = ctx;

	(void)pid;
	(void)cpu;
	l->len += (size_t)snprintf(l->buf + l->len, sizeof(l->buf) - l->len, "%d:BREAK %s\n",
				   tid, tc_rec_type_name(r->type));
}

static struct tc_callstack_stats run(struct stream *st, struct log *l, bool sym)
{
	struct tc_callstack_ops ops = { .range = on_range, .brk = on_brk, .ctx = l,
				 .sym = sym ? st_sym : NULL };
	struct tc_callstack *cs = tc_callstack_new(&ops);
	struct tc_callstack_stats s;

	*l = (struct log){ .sym = sym };
	for (int i = 0; i < st->n; i++)
		CHECK_INT(tc_callstack_feed(cs, &st->r[i]), 0);
	s = *tc_callstack_stats(cs);
	tc_callstack_free(cs);
	return s;
}

TEST(calls_and_returns_nest)
{
	struct stream st = { .n = 0 };
	struct log l;
	struct tc_callstack_stats s;

	st_nested(&st, 1);
	s = run(&st, &l, true);
	CHECK_STR(l.buf, "1:main 4\n1:main;foo 2\n1:main;foo;bar 8\n1:main;foo 2\n"
			 "1:main;foo;bar 1\n1:main;foo;bar;baz 16\n1:main;foo;bar 1\n1:main;foo 2\n"
			 "1:main 8\n");
	CHECK_INT(s.calls, 4);
	CHECK_INT(s.returns, 4);
	CHECK_INT(s.unmatched, 0);
	CHECK_INT(s.max_depth, 4);
	CHECK_INT(s.insns, st.insns);
	CHECK_INT(l.insns, 44);
	CHECK_INT(l.kinds[0], TC_FRAME_ROOT);
	CHECK_STR(l.kept, "012223321");
}

TEST(without_symbols_functions_are_entry_addresses)
{
	struct stream st = { .n = 0 };
	struct log l;

	st_range(&st, 1, MAIN + 0x40, MAIN + 0x50, TC_INSN_CALL);
	st_range(&st, 1, FOO, FOO + 0x10, TC_INSN_JUMP);
	st_range(&st, 1, FOO + 0x20, FOO + 0x28, TC_INSN_RET);
	st_range(&st, 1, MAIN + 0x50, MAIN + 0x54, TC_INSN_OTHER);
	run(&st, &l, false);
	CHECK_STR(l.buf, "1:0x1040 4\n1:0x1040;0x2000 4\n1:0x1040;0x2000 2\n1:0x1040 1\n");
}

TEST(trace_starting_mid_stack_invents_no_frames)
{
	struct stream st = { .n = 0 };
	struct log l;
	struct tc_callstack_stats s;

	/* Trace begins inside bar, which returns to foo, which returns to main. */
	st_range(&st, 1, BAR + 0x10, BAR + 0x20, TC_INSN_RET);
	st_range(&st, 1, FOO + 0x40, FOO + 0x48, TC_INSN_CALL);
	st_range(&st, 1, BAZ, BAZ + 0x08, TC_INSN_RET);
	st_range(&st, 1, FOO + 0x48, FOO + 0x50, TC_INSN_RET);
	st_range(&st, 1, MAIN + 0x80, MAIN + 0x84, TC_INSN_OTHER);
	s = run(&st, &l, true);
	CHECK_STR(l.buf, "1:bar 4\n1:foo 2\n1:foo;baz 2\n1:foo 2\n1:main 1\n");
	CHECK_INT(s.unmatched, 2);
	CHECK_INT(l.kinds[0], TC_FRAME_ROOT);
}

TEST(return_past_several_frames_pops_to_the_match)
{
	struct stream st = { .n = 0 };
	struct log l;

	/* main -> foo -> bar -> baz, then baz returns straight to main (longjmp-like). */
	st_range(&st, 1, MAIN, MAIN + 0x10, TC_INSN_CALL);
	st_range(&st, 1, FOO, FOO + 0x10, TC_INSN_CALL);
	st_range(&st, 1, BAR, BAR + 0x10, TC_INSN_CALL);
	st_range(&st, 1, BAZ, BAZ + 0x10, TC_INSN_RET);
	st_range(&st, 1, MAIN + 0x10, MAIN + 0x14, TC_INSN_OTHER);
	run(&st, &l, true);
	CHECK_STR(l.buf, "1:main 4\n1:main;foo 4\n1:main;foo;bar 4\n1:main;foo;bar;baz 4\n"
			 "1:main 1\n");
}

TEST(recursion_pops_one_level_per_return)
{
	struct stream st = { .n = 0 };
	struct log l;

	st_range(&st, 1, MAIN, MAIN + 0x10, TC_INSN_CALL);
	st_range(&st, 1, FOO, FOO + 0x08, TC_INSN_CALL);
	st_range(&st, 1, FOO, FOO + 0x08, TC_INSN_CALL);
	st_range(&st, 1, FOO, FOO + 0x10, TC_INSN_RET);
	st_range(&st, 1, FOO + 0x08, FOO + 0x10, TC_INSN_RET);
	st_range(&st, 1, FOO + 0x08, FOO + 0x10, TC_INSN_RET);
	st_range(&st, 1, MAIN + 0x10, MAIN + 0x14, TC_INSN_OTHER);
	run(&st, &l, true);
	CHECK_STR(l.buf, "1:main 4\n1:main;foo 2\n1:main;foo;foo 2\n1:main;foo;foo;foo 4\n"
			 "1:main;foo;foo 2\n1:main;foo 2\n1:main 1\n");
}

TEST(untraced_callee_and_tail_call)
{
	struct stream st = { .n = 0 };
	struct log l;

	/* main calls something untraced (next range at the return address), then calls foo,
	 * which tail-jumps to bar, which returns to main. */
	st_range(&st, 1, MAIN, MAIN + 0x10, TC_INSN_CALL);
	st_range(&st, 1, MAIN + 0x10, MAIN + 0x20, TC_INSN_CALL);
	st_range(&st, 1, FOO, FOO + 0x10, TC_INSN_JUMP);
	st_range(&st, 1, BAR, BAR + 0x10, TC_INSN_RET);
	st_range(&st, 1, MAIN + 0x20, MAIN + 0x24, TC_INSN_OTHER);
	run(&st, &l, true);
	CHECK_STR(l.buf, "1:main 4\n1:main 4\n1:main;foo 4\n1:main;bar 4\n1:main 1\n");
	CHECK_STR(l.kept, "01111");
}

TEST(syscall_and_exception_frames)
{
	struct stream st = { .n = 0 };
	struct log l;
	struct tc_callstack_stats s;

	/* SVC (range + its EXCEPTION record: one frame), kernel code, ERET (range + an
	 * EXCEPTION_RET record: one pop); then an interrupt with its return address. */
	st_range(&st, 1, MAIN, MAIN + 0x10, TC_INSN_CALL);
	st_range(&st, 1, FOO, FOO + 0x10, TC_INSN_SYSCALL);
	st_event(&st, TC_REC_EXCEPTION, 1, 1, 8);
	st_range(&st, 1, KERN, KERN + 0x10, TC_INSN_CALL);
	st_range(&st, 1, BAZ, BAZ + 0x10, TC_INSN_RET);
	st_range(&st, 1, KERN + 0x10, KERN + 0x20, TC_INSN_EXC_RET);
	st_event(&st, TC_REC_EXCEPTION_RET, 1, 1, 0);
	st_range(&st, 1, FOO + 0x10, FOO + 0x20, TC_INSN_OTHER);
	st_event(&st, TC_REC_EXCEPTION, 1, 1, 0x12);
	st.r[st.n - 1].start = FOO + 0x20;
	st_range(&st, 1, KERN + 0x40, KERN + 0x50, TC_INSN_EXC_RET);
	st_range(&st, 1, FOO + 0x20, FOO + 0x28, TC_INSN_RET);
	st_range(&st, 1, MAIN + 0x10, MAIN + 0x14, TC_INSN_OTHER);
	s = run(&st, &l, true);
	CHECK_STR(l.buf, "1:main 4\n1:main;foo 4\n1:main;foo;el1_svc 4\n"
			 "1:main;foo;el1_svc;baz 4\n1:main;foo;el1_svc 4\n1:main;foo 4\n"
			 "1:main;foo;el1_svc 4\n1:main;foo 2\n1:main 1\n");
	CHECK_INT(l.kinds[0], TC_FRAME_ROOT);
	CHECK_INT(s.exceptions, 2);
	CHECK_INT(s.exc_returns, 2);
	CHECK_INT(s.unmatched, 0);
}

TEST(breaks_drop_the_stack_with_a_marker)
{
	struct stream st = { .n = 0 };
	struct log l;
	struct tc_callstack_stats s;

	st_range(&st, 1, MAIN, MAIN + 0x10, TC_INSN_CALL);
	st_range(&st, 1, FOO, FOO + 0x10, TC_INSN_CALL);
	st_event(&st, TC_REC_LOST, 1, 1, 0);
	st_range(&st, 1, BAR, BAR + 0x10, TC_INSN_RET);		/* after the gap: a new root */
	st_range(&st, 1, FOO + 0x10, FOO + 0x14, TC_INSN_OTHER);	/* unmatched return */
	st_event(&st, TC_REC_TRACE_ON, -1, 1, 0);	/* by cpu: tid 1 runs on cpu 1 */
	st_range(&st, 1, BAZ, BAZ + 0x04, TC_INSN_OTHER);
	st_event(&st, TC_REC_ERROR, -1, -1, 0);	/* unknown thread: every stack */
	st_range(&st, 1, BAZ + 4, BAZ + 0x08, TC_INSN_OTHER);
	s = run(&st, &l, true);
	CHECK_STR(l.buf, "1:main 4\n1:main;foo 4\n1:BREAK lost\n1:bar 4\n1:foo 1\n"
			 "1:BREAK trace_on\n1:baz 1\n1:BREAK error\n1:baz 1\n");
	CHECK_INT(s.breaks, 3);
	CHECK_STR(l.kept, "010000");
	CHECK_INT(s.unmatched, 1);
}

TEST(threads_have_their_own_stacks)
{
	struct stream st = { .n = 0 };
	struct log l;
	struct tc_callstack_stats s;

	st_range(&st, 1, MAIN, MAIN + 0x10, TC_INSN_CALL);
	st_range(&st, 2, BAR, BAR + 0x10, TC_INSN_CALL);
	st_range(&st, 1, FOO, FOO + 0x10, TC_INSN_RET);
	st_range(&st, 2, BAZ, BAZ + 0x10, TC_INSN_RET);
	st_range(&st, 1, MAIN + 0x10, MAIN + 0x14, TC_INSN_OTHER);
	/* no tid: keyed by cpu */
	st_range_cpu(&st, -1, 3, MAIN, MAIN + 0x10, TC_INSN_CALL);
	st_range_cpu(&st, -1, 2, BAR, BAR + 0x10, TC_INSN_OTHER);
	st_range_cpu(&st, -1, 3, FOO, FOO + 0x10, TC_INSN_OTHER);
	s = run(&st, &l, true);
	CHECK_STR(l.buf, "1:main 4\n2:bar 4\n1:main;foo 4\n2:bar;baz 4\n1:main 1\n"
			 "-1:main 4\n-1:bar 4\n-1:main;foo 4\n");
	CHECK_INT(s.threads, 4);
}

TEST(runaway_depth_is_capped)
{
	static struct stream st;
	struct log l = { .sym = true };
	struct tc_callstack_stats s;
	struct tc_callstack_ops ops = { .range = on_range, .ctx = &l, .sym = st_sym };
	struct tc_callstack *cs = tc_callstack_new(&ops);

	st.n = 0;
	st_range(&st, 1, FOO, FOO + 0x08, TC_INSN_CALL);
	for (int i = 0; i < TC_CALLSTACK_MAX_DEPTH + 10; i++) {
		l.len = 0;
		CHECK(!tc_callstack_feed(cs, &st.r[0]));
	}
	s = *tc_callstack_stats(cs);
	CHECK_INT(s.max_depth, TC_CALLSTACK_MAX_DEPTH);
	CHECK_INT(s.depth_drops, 10);	/* 1 root + 1033 calls */
	tc_callstack_free(cs);
}

/* The function of a range's start is asked of the symboliser once while the space number
 * (tc_callstack_ops.space) stands, again once it moves (an exec: other code at the same
 * address), and every time while the number is not known. */
struct counted_sym {
	int asked;
	bool known, exec;	/* exec: FOO's addresses now hold BAR */
	uint64_t space;
};

static int counted_sym(void *ctx, int pid, uint64_t addr, const char **name, uint64_t *start)
{
	struct counted_sym *c = ctx;

	c->asked++;
	if (c->exec && addr >= FOO && addr < FOO + 0x100) {
		*name = "bar";
		*start = FOO;
		return 0;
	}
	return st_sym(NULL, pid, addr, name, start);
}

static const uint64_t *counted_space(void *ctx)
{
	struct counted_sym *c = ctx;

	return c->known ? &c->space : NULL;
}

static void on_range_fn(void *ctx, const struct tc_callstack_range *r)
{
	uint64_t *fn = ctx;

	*fn = r->func[r->depth - 1];
}

TEST(function_of_a_block_kept_per_space)
{
	static struct stream st;
	struct counted_sym c = { .known = false };
	uint64_t fn = 0;
	struct tc_callstack_ops ops = { .range = on_range_fn, .ctx = &fn, .sym = counted_sym,
					.sym_ctx = &c, .space = counted_space, .space_ctx = &c };
	struct tc_callstack *cs = tc_callstack_new(&ops);

	st.n = 0;
	st_range(&st, 1, FOO + 0x10, FOO + 0x20, TC_INSN_OTHER);
	/* not known yet: asked for each range */
	CHECK(!tc_callstack_feed(cs, &st.r[0]));
	CHECK(!tc_callstack_feed(cs, &st.r[0]));
	CHECK_INT(c.asked, 2);
	/* known: asked once */
	c.known = true;
	for (int i = 0; i < 5; i++)
		CHECK(!tc_callstack_feed(cs, &st.r[0]));
	CHECK_INT(c.asked, 3);
	CHECK_INT(fn, FOO);
	/* the space moved: asked again, the new answer counts */
	c.exec = true;
	c.space++;
	CHECK(!tc_callstack_feed(cs, &st.r[0]));
	CHECK(!tc_callstack_feed(cs, &st.r[0]));
	CHECK_INT(c.asked, 4);
	c.space = UINT64_MAX;	/* "not known" as a number: nothing kept */
	CHECK(!tc_callstack_feed(cs, &st.r[0]));
	CHECK(!tc_callstack_feed(cs, &st.r[0]));
	CHECK_INT(c.asked, 6);
	/* another process at the same address is asked of its own, and both are kept */
	c.space = 7;
	for (int i = 0; i < 4; i++) {
		st.r[0].pid = i % 2 ? 200 : 100;
		CHECK(!tc_callstack_feed(cs, &st.r[0]));
	}
	CHECK_INT(c.asked, 8);
	tc_callstack_free(cs);
}

/* r[0..n) through tc_callstack_feed_ranges in pieces of at most chunk records. */
static struct tc_callstack_stats run_in_runs(struct stream *st, struct log *l, int chunk)
{
	struct tc_callstack_ops ops = { .range = on_range, .brk = on_brk, .ctx = l, .sym = st_sym };
	struct tc_callstack *cs = tc_callstack_new(&ops);
	struct tc_callstack_stats s;

	*l = (struct log){ .sym = true };
	for (int i = 0; i < st->n; i += chunk)
		CHECK_INT(tc_callstack_feed_ranges(cs, &st->r[i],
						   (size_t)(st->n - i < chunk ? st->n - i : chunk)), 0);
	s = *tc_callstack_stats(cs);
	tc_callstack_free(cs);
	return s;
}

/* Runs of records (a decoder's emit_ranges) give what the records one by one give: stacks,
 * kept frames, breaks, statistics; threads and records other than ranges inside a run
 * included. */
TEST(runs_of_ranges_are_the_records_one_by_one)
{
	struct stream st = { .n = 0 };
	struct log one, runs;
	struct tc_callstack_stats s1, s2;

	st_nested(&st, 1);
	st_range(&st, 2, BAR, BAR + 0x10, TC_INSN_CALL);
	st_range(&st, 1, MAIN, MAIN + 0x10, TC_INSN_CALL);
	st_range(&st, 1, FOO, FOO + 0x10, TC_INSN_CALL);
	st_event(&st, TC_REC_LOST, 1, 1, 0);
	st_range(&st, 1, BAR, BAR + 0x10, TC_INSN_RET);
	st_range(&st, 2, BAZ, BAZ + 0x10, TC_INSN_RET);
	st_range(&st, 1, FOO + 0x10, FOO + 0x14, TC_INSN_OTHER);
	st_range(&st, 5, BAZ, BAZ + 0x10, TC_INSN_OTHER);	/* tid 5 on cpu 1 too */
	st_range(&st, 1, FOO + 0x14, FOO + 0x18, TC_INSN_OTHER);
	st_range_cpu(&st, -1, 3, MAIN, MAIN + 0x10, TC_INSN_CALL);
	st_range_cpu(&st, -1, 2, BAR, BAR + 0x10, TC_INSN_OTHER);
	st_range_cpu(&st, -1, 3, FOO, FOO + 0x10, TC_INSN_OTHER);
	s1 = run(&st, &one, true);
	CHECK(one.len > 0 && strstr(one.buf, "BREAK"));
	for (int chunk = 1; chunk <= st.n; chunk++) {
		s2 = run_in_runs(&st, &runs, chunk);
		CHECK_STR(runs.buf, one.buf);
		CHECK_STR(runs.kept, one.kept);
		CHECK(!memcmp(&s1, &s2, sizeof(s1)));
	}
}
