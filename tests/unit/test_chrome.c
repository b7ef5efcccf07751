/* Chrome trace-event JSON (lib/output/chrome.c): parsed back with jq, every slice nested and
 * closed per thread, times in order. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/output/chrome.h"
#include "tests/unit/rec_stream.h"
#include "tests/unit/tc_test.h"

static char path[64];
static const char *(*comm_fn)(void *ctx, int pid, int tid);	/* names, or NULL */

static void write_trace(const struct stream *st)
{
	FILE *f;
	int fd;
	struct tc_chrome *c;
	struct tc_callstack_ops ops = { .range = tc_chrome_range,
					.brk = tc_chrome_brk,
					.sym = st_sym };
	struct tc_callstack *cs;

	snprintf(path, sizeof(path), "/tmp/tc-chrome-XXXXXX");
	fd = mkstemp(path);
	CHECK(fd >= 0);
	f = fdopen(fd, "w");
	c = tc_chrome_new(f, st_sym, NULL, comm_fn, NULL);
	ops.ctx = c;
	cs = tc_callstack_new(&ops);
	for (int i = 0; i < st->n; i++)
		tc_callstack_feed(cs, &st->r[i]);
	tc_callstack_free(cs);
	CHECK_INT(tc_chrome_finish(c), 0);
	fclose(f);
}

/* jq's output for prog on the trace, trailing newline cut (jq is a dependency: mk/deps.sh). */
static const char *jq(const char *prog)
{
	static char out[4096];
	char cmd[4096];
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof(cmd), "jq -c '%s' %s 2>&1", prog, path);
	p = popen(cmd, "r");
	if (!p)
		return "popen failed";
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	if (pclose(p))
		return "jq failed";
	if (n && out[n - 1] == '\n')
		out[n - 1] = 0;
	return out;
}

/* Per tid: B and E pair up like brackets with matching names, all closed, ts never goes
 * back. */
static const char nested[] =
	".traceEvents as $ev | [$ev[].tid] | unique | map(. as $t | "
	"[$ev[] | select(.tid == $t and (.ph == \"B\" or .ph == \"E\"))] | "
	"reduce .[] as $e ({s: [], ok: true, ts: 0}; "
	"(if $e.ts < .ts then .ok = false else . end) | .ts = $e.ts | "
	"if $e.ph == \"B\" then .s += [$e.name] "
	"elif (.s | length) > 0 and .s[-1] == $e.name then .s |= .[:-1] "
	"else .ok = false end) | .ok and (.s | length) == 0) | all";

TEST(slices_nest_and_close)
{
	struct stream st = { .n = 0 };

	st_nested(&st, 1);
	/* tid 2 is left deep in a call at the end: finish closes it */
	st_range(&st, 2, MAIN, MAIN + 0x10, TC_INSN_CALL);
	st_range(&st, 2, FOO, FOO + 0x10, TC_INSN_CALL);
	st_range(&st, 2, BAR, BAR + 0x10, TC_INSN_OTHER);
	write_trace(&st);
	CHECK_STR(jq(nested), "true");
	CHECK_STR(jq("[.traceEvents[] | select(.tid == 1 and .ph == \"B\") | .name]"),
		  "[\"main\",\"foo\",\"bar\",\"bar\",\"baz\"]");
	CHECK_STR(jq("[.traceEvents[] | select(.ph == \"E\")] | length"), "8");
	/* instruction timeline: baz opens after 4+2+8+2+1 instructions, closes 16 later */
	CHECK_STR(jq("[.traceEvents[] | select(.name == \"baz\") | .ts]"), "[17,33]");
	CHECK_STR(jq("[.traceEvents[] | select(.tid == 2) | .pid] | unique"), "[100]");
	unlink(path);
}

TEST(breaks_close_slices_and_mark)
{
	struct stream st = { .n = 0 };

	st_event(&st, TC_REC_TIMESTAMP, -1, -1, 1000);
	st_range(&st, 1, MAIN, MAIN + 0x10, TC_INSN_CALL);
	st_event(&st, TC_REC_TIMESTAMP, -1, -1, 1010);
	st_range(&st, 1, FOO, FOO + 0x10, TC_INSN_CALL);
	st_event(&st, TC_REC_LOST, 1, 1, 0);
	st_event(&st, TC_REC_TIMESTAMP, -1, -1, 1050);
	st_range(&st, 1, BAR, BAR + 0x10, TC_INSN_RET);
	st_range(&st, 1, FOO + 0x10, FOO + 0x14, TC_INSN_OTHER);
	st_range_cpu(&st, -1, 2, BAZ, BAZ + 0x10, TC_INSN_OTHER);
	write_trace(&st);
	CHECK_STR(jq(nested), "true");
	CHECK_STR(jq("[.traceEvents[] | select(.ph == \"i\") | [.name, .tid, .ts]]"),
		  "[[\"trace break (lost)\",1,1010]]");
	CHECK_STR(jq("[.traceEvents[] | select(.tid == 1) | [.ph, .name, .ts]]"),
		  "[[\"B\",\"main\",1000],[\"B\",\"foo\",1010],[\"E\",\"foo\",1010],"
		  "[\"E\",\"main\",1010],[\"i\",\"trace break (lost)\",1010],[\"B\",\"bar\",1050],"
		  "[\"E\",\"bar\",1050],[\"B\",\"foo\",1050],[\"E\",\"foo\",1050]]");
	CHECK_STR(jq("[.traceEvents[] | select(.name == \"baz\") | .tid] | unique"), "[1000002]");
	unlink(path);
}

TEST(empty_stream_is_a_document)
{
	struct stream st = { .n = 0 };

	write_trace(&st);
	CHECK_STR(jq(".traceEvents | length"), "0");
	unlink(path);
}

static const char *comm_of(void *ctx, int pid, int tid)
{
	(void)ctx;
	return tid == 1 ? "worker" : tid == pid ? "app" : NULL;
}

TEST(threads_and_processes_are_named)
{
	struct stream st = { .n = 0 };

	st_nested(&st, 1);
	st_range(&st, 2, MAIN, MAIN + 0x10, TC_INSN_OTHER);
	st_range_cpu(&st, -1, 3, BAZ, BAZ + 0x10, TC_INSN_OTHER);
	comm_fn = comm_of;
	write_trace(&st);
	comm_fn = NULL;
	CHECK_STR(jq(nested), "true");
	/* one thread_name per thread seen (by comm, or its CPU), a process_name per process */
	CHECK_STR(jq("[.traceEvents[] | select(.ph == \"M\") | [.name, .pid, .tid, .args.name]]"),
		  "[[\"thread_name\",100,1,\"worker\"],[\"process_name\",100,1,\"app\"],"
		  "[\"thread_name\",0,1000003,\"cpu 3\"]]");
	unlink(path);
}
