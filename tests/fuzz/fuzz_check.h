/* The fuzz targets' invariant check. A failure prints the file, line, the target's context
 * (fuzz_ctx when set: how the input is being put through) and the expression, then aborts,
 * which libFuzzer reports as a crash with the input. Each target is one translation unit,
 * so fuzz_ctx is its own. */
#ifndef TC_TESTS_FUZZ_FUZZ_CHECK_H
#define TC_TESTS_FUZZ_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static char fuzz_ctx[64];

#define CHECK(c)                                                                       \
	do {                                                                           \
		if (!(c)) {                                                            \
			fprintf(stderr, "%s:%d: invariant failed%s%s%s: %s\n", __FILE__, \
				__LINE__, *fuzz_ctx ? " (" : "", fuzz_ctx,             \
				*fuzz_ctx ? ")" : "", #c);                             \
			abort();                                                       \
		}                                                                      \
	} while (0)

#endif
