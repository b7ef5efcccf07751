/* Minimal unit-test harness: TEST() functions register themselves; each prints one line
 * (ok / not ok / skip) for tests/run.sh to count. Include once per test program. */
#ifndef TC_TESTS_UNIT_TC_TEST_H
#define TC_TESTS_UNIT_TC_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tc_test {
	const char *name;
	void (*fn)(void);
};

static struct tc_test tc_tests[256];
static int tc_ntests, tc_failed, tc_skipped, tc_checks;
static const char *tc_prog = "unit";

#define TEST(name)                                                        \
	static void name(void);                                           \
	__attribute__((constructor)) static void reg_##name(void)         \
	{                                                                 \
		if (tc_ntests < 256)                                      \
			tc_tests[tc_ntests++] = (struct tc_test){ #name, name }; \
	}                                                                 \
	static void name(void)

#define CHECK(cond)                                                             \
	do {                                                                    \
		tc_checks++;                                                    \
		if (!(cond)) {                                                  \
			printf("#   %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
			tc_failed = 1;                                          \
		}                                                               \
	} while (0)

#define CHECK_INT(a, b)                                                          \
	do {                                                                     \
		long long _a = (long long)(a), _b = (long long)(b);              \
		tc_checks++;                                                     \
		if (_a != _b) {                                                  \
			printf("#   %s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, \
			       #a, _a, _b);                                      \
			tc_failed = 1;                                           \
		}                                                                \
	} while (0)

#define CHECK_STR(a, b)                                                          \
	do {                                                                     \
		const char *_a = (a), *_b = (b);                                 \
		tc_checks++;                                                     \
		if (!_a || !_b || strcmp(_a, _b)) {                              \
			printf("#   %s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, \
			       __LINE__, #a, _a ? _a : "(null)", _b ? _b : "(null)"); \
			tc_failed = 1;                                           \
		}                                                                \
	} while (0)

#define SKIP(reason)                  \
	do {                          \
		tc_skipped = 1;       \
		printf("#   %s\n", reason); \
		return;               \
	} while (0)

/* ../shared/testdata (tests/run.sh exports TC_TESTDATA); NULL if missing (and a failure
 * when TC_REQUIRE_TESTDATA=1, as CI sets). */
static inline const char *tc_testdata(void)
{
	const char *d = getenv("TC_TESTDATA");
	static int warned;

	if (d && *d) {
		FILE *f;
		char probe[4096];

		snprintf(probe, sizeof(probe), "%s/README.md", d);
		f = fopen(probe, "r");
		if (f) {
			fclose(f);
			return d;
		}
	}
	if (getenv("TC_REQUIRE_TESTDATA") && !strcmp(getenv("TC_REQUIRE_TESTDATA"), "1")) {
		printf("#   test data missing and TC_REQUIRE_TESTDATA=1\n");
		tc_failed = 1;
	} else if (!warned++) {
		fprintf(stderr, "warning: ../shared/testdata missing; data tests are skipped\n");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *only = getenv("TESTS");
	int any_fail = 0;

	(void)argc;
	tc_prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	for (int i = 0; i < tc_ntests; i++) {
		if (only && *only && !strstr(tc_tests[i].name, only) && !strstr(tc_prog, only))
			continue;
		tc_failed = tc_skipped = tc_checks = 0;
		tc_tests[i].fn();
		fflush(stdout);
		if (tc_failed) {
			printf("not ok %s: %s\n", tc_prog, tc_tests[i].name);
			any_fail = 1;
		} else if (tc_skipped) {
			printf("skip %s: %s\n", tc_prog, tc_tests[i].name);
		} else if (!tc_checks) {
			/* A test that asserts nothing is a defect, not a pass. */
			printf("not ok %s: %s made no checks\n", tc_prog, tc_tests[i].name);
			any_fail = 1;
		} else {
			printf("ok %s: %s (%d checks)\n", tc_prog, tc_tests[i].name, tc_checks);
		}
	}
	return any_fail;
}

#endif
