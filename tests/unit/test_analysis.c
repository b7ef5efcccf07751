/* One record stream into each analysis output (lib/analysis/analysis.c), and the symboliser over
 * lib/images/images.h checked on this test program's own ELF. */
#include <stdio.h>

#include "lib/images/elf.h"
#include "lib/analysis/analysis.h"
#include "tests/unit/rec_stream.h"
#include "tests/unit/tc_test.h"

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static const char *run(enum tc_analysis_format fmt, const struct stream *st)
{
	static char buf[1 << 15];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	struct tc_analysis_opts o = { .format = fmt, .f = f, .sym = st_sym, .tid = -1, .cpu = -1,
				.view = { .sort = TC_PROFILE_BY_SELF, .limit = 1 } };
	struct tc_analysis *a = tc_analysis_new(&o);

	CHECK(a != NULL);
	if (!a) {
		fclose(f);
		return "";
	}
	for (int i = 0; i < st->n; i++)
		CHECK_INT(tc_analysis_feed(a, &st->r[i]), 0);
	CHECK_INT(tc_analysis_finish(a), 0);
	CHECK_INT(tc_analysis_stats(a)->insns, st->insns);
	tc_analysis_free(a);
	fclose(f);
	return buf;
}

TEST(format_words)
{
	enum tc_analysis_format f = TC_ANALYSIS_REPORT;

	CHECK(!tc_analysis_format_parse("folded", &f) && f == TC_ANALYSIS_FOLDED);
	CHECK(!tc_analysis_format_parse("chrome", &f) && f == TC_ANALYSIS_CHROME);
	CHECK(!tc_analysis_format_parse("svg", &f) && f == TC_ANALYSIS_SVG);
	CHECK_INT(tc_analysis_format_parse("text", &f), -1);
}

TEST(every_output_from_one_stream)
{
	struct stream st = { .n = 0 };
	const char *s;

	st_nested(&st, 1);
	CHECK_STR(run(TC_ANALYSIS_FOLDED, &st),
		  "main 12\nmain;foo 6\nmain;foo;bar 10\nmain;foo;bar;baz 16\n");
	s = run(TC_ANALYSIS_CHROME, &st);
	CHECK(starts(s, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[{\"ph\":\"B\",\"name\":"
			"\"main\",\"pid\":100,\"tid\":1,\"ts\":0},"));
	CHECK(strstr(s, "{\"ph\":\"E\",\"name\":\"main\",\"pid\":100,\"tid\":1,\"ts\":44}]}\n"));
	s = run(TC_ANALYSIS_SVG, &st);
	CHECK(strstr(s, ">baz</text>") && strstr(s, "</svg>\n"));
	s = run(TC_ANALYSIS_REPORT, &st);
	CHECK(strstr(s, "all threads: 44 instructions, 4 functions executed\n"));
	CHECK(strstr(s, "  baz  hottest") && !strstr(s, "main"));
	s = run(TC_ANALYSIS_REPORT_JSON, &st);
	CHECK(starts(s, "{\"insns\":44,\"threads\":[{\"pid\":-1,"));
}

TEST(profile_for_diff)
{
	struct stream st = { .n = 0 };
	struct tc_analysis *a = tc_analysis_new(&(struct tc_analysis_opts){
		.format = TC_ANALYSIS_PROFILE, .sym = st_sym, .tid = -1, .cpu = -1 });
	struct tc_profile_diff d;

	st_nested(&st, 1);
	for (int i = 0; i < st.n; i++)
		tc_analysis_feed(a, &st.r[i]);
	CHECK_INT(tc_analysis_finish(a), 0);
	CHECK(tc_analysis_profile(a) != NULL);
	CHECK(!tc_profile_diff(tc_analysis_profile(a), tc_analysis_profile(a),
			    &(struct tc_profile_view){ .sort = TC_PROFILE_BY_SELF }, &d));
	CHECK_INT(d.n, 0);
	CHECK_INT(d.a_insns, 44);
	tc_profile_diff_free(&d);
	tc_analysis_free(a);
}

extern char __executable_start;

/* This program's segments mapped at base as ld.so would; tc_analysis_feed resolves by name. */
TEST(images_symboliser)
{
	const uint64_t base = 0x555500000000ULL;
	struct tc_err e;
	struct tc_elf *elf = tc_elf_open("/proc/self/exe", &e);
	struct tc_images *im = tc_images_new(&(struct tc_images_opts){ 0 });
	uint64_t link = (uint64_t)(uintptr_t)(void *)tc_analysis_feed -
			(uint64_t)(uintptr_t)&__executable_start;
	const struct tc_elf_seg *sg;
	const char *name = NULL;
	uint64_t start = 0;
	size_t n;

	CHECK(elf && im);
	if (!elf || !im)
		goto out;
	sg = tc_elf_segments(elf, &n);
	for (size_t i = 0; i < n; i++) {
		uint64_t va = sg[i].vaddr & ~0xfffULL, off = sg[i].offset & ~0xfffULL;
		uint64_t len = ((sg[i].vaddr + sg[i].filesz + 0xfff) & ~0xfffULL) - va;

		tc_images_map(im, 5, base + va, len, off, "/proc/self/exe", NULL, 0);
	}
	CHECK_INT(tc_analysis_images_sym(im, 5, base + link + 2, &name, &start), 0);
	CHECK_STR(name, "tc_analysis_feed");
	CHECK_INT(start, base + link);
	CHECK_STR(tc_analysis_images_dso(im, 5, base + link), "/proc/self/exe");
	CHECK_INT(tc_analysis_images_sym(im, 6, base + link, &name, &start), -1);
	CHECK(!tc_analysis_images_dso(im, 6, base + link));
out:
	tc_images_free(im);
	if (elf)
		tc_elf_close(elf);
}
