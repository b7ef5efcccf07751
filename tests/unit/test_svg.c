/* Flame graph SVG (lib/output/svg.c): rendered by rsvg-convert (librsvg2-bin, mk/deps.sh), names
 * escaped, the hottest frame labelled. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/output/svg.h"
#include "tests/unit/rec_stream.h"
#include "tests/unit/tc_test.h"

static int xml_sym(void *ctx, int pid, uint64_t addr, const char **name, uint64_t *start)
{
	if (addr >= FOO && addr < FOO + 0x100) {
		*name = "std::vector<int>::at&\"'";
		*start = FOO;
		return 0;
	}
	return st_sym(ctx, pid, addr, name, start);
}

static struct tc_calltree *tree(const struct stream *st, tc_sym_fn sym)
{
	struct tc_calltree_opts o = { .sym = sym };
	struct tc_calltree *t = tc_calltree_new(&o);
	struct tc_callstack_ops ops = { .range = tc_calltree_range, .ctx = t, .sym = sym };
	struct tc_callstack *cs = tc_callstack_new(&ops);

	for (int i = 0; i < st->n; i++)
		tc_callstack_feed(cs, &st->r[i]);
	tc_callstack_free(cs);
	return t;
}

/* Writes the SVG to a temporary file, returns its text (static) and renders it to PNG:
 * *rendered = rsvg-convert's exit status, and the PNG must start with the PNG signature. */
static const char *render(struct tc_calltree *t, int *rendered)
{
	static char text[1 << 16];
	char svg[64] = "/tmp/tc-svg-XXXXXX", png[80], cmd[256], sig[8] = { 0 };
	int fd = mkstemp(svg);
	FILE *f;
	size_t n;

	CHECK(fd >= 0);
	f = fdopen(fd, "w+");
	CHECK_INT(tc_svg_write(t, f, &(struct tc_svg_opts){ .title = "test <run>" }), 0);
	rewind(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = 0;
	fclose(f);
	snprintf(png, sizeof(png), "%s.png", svg);
	snprintf(cmd, sizeof(cmd), "rsvg-convert -o %s %s", png, svg);
	*rendered = system(cmd);
	f = fopen(png, "rb");
	if (f) {
		CHECK_INT(fread(sig, 1, sizeof(sig), f), 8);
		fclose(f);
	}
	CHECK(!memcmp(sig, "\x89PNG\r\n\x1a\n", 8));
	unlink(svg);
	unlink(png);
	return text;
}

static int count(const char *s, const char *what)
{
	int n = 0;

	while ((s = strstr(s, what))) {
		n++;
		s += strlen(what);
	}
	return n;
}

TEST(flame_graph_renders)
{
	struct stream st = { .n = 0 };
	struct tc_calltree *t;
	const char *s;
	int rc;

	st_nested(&st, 1);
	t = tree(&st, st_sym);
	s = render(t, &rc);
	CHECK_INT(rc, 0);
	CHECK_INT(count(s, "<g class=\"f\""), 4);
	/* the hottest frame (baz, 16 of 44 instructions in itself) is labelled and titled */
	CHECK(strstr(s, ">baz</text>"));
	CHECK(strstr(s, "<title>baz\n16 instructions (36.36%), 16 in itself</title>"));
	/* main spans the width at the bottom row (4 rows: y = 46 + 3 * 17) */
	CHECK(strstr(s, "data-n=\"main\"><title>main\n44 instructions (100.00%), 12 in itself"
			"</title><rect x=\"8.00\" y=\"97.0\" width=\"1184.00\""));
	CHECK(strstr(s, "test &lt;run&gt; (44 instructions)"));
	CHECK(strstr(s, "<script"));
	tc_calltree_free(t);
}

TEST(names_are_escaped_and_empty_is_valid)
{
	struct stream st = { .n = 0 };
	struct tc_calltree *t;
	const char *s;
	int rc;

	st_nested(&st, 1);
	t = tree(&st, xml_sym);
	s = render(t, &rc);
	CHECK_INT(rc, 0);
	CHECK(strstr(s, "data-n=\"std::vector&lt;int&gt;::at&amp;&quot;&apos;\""));
	CHECK(!strstr(s, "vector<int>"));
	tc_calltree_free(t);

	st.n = 0;
	t = tree(&st, st_sym);
	s = render(t, &rc);
	CHECK_INT(rc, 0);
	CHECK_INT(count(s, "<g class=\"f\""), 0);
	tc_calltree_free(t);
}

TEST(narrow_frames_are_left_out)
{
	static struct stream st;
	struct tc_calltree *t;
	const char *s;
	int rc;

	/* one huge range in main, then a 1-instruction call to foo: 1/100000 of 1184 px */
	st.n = 0;
	st_range(&st, 1, MAIN, MAIN + 0x10, TC_INSN_CALL);
	st.r[0].insns = 100000;
	st_range(&st, 1, FOO, FOO + 4, TC_INSN_OTHER);
	t = tree(&st, st_sym);
	s = render(t, &rc);
	CHECK_INT(rc, 0);
	CHECK_INT(count(s, "<g class=\"f\""), 1);
	CHECK(!strstr(s, "data-n=\"foo\""));
	tc_calltree_free(t);
}
