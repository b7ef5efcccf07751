/* A list of non-fatal problems found while reading input ("the rest still prints"): lib/
 * and decoders/ collect them, cmd/ prints them as warnings. */
#ifndef TC_LIB_UTIL_DIAG_H
#define TC_LIB_UTIL_DIAG_H

#include <stddef.h>

struct tc_diag {
	char **msgs;
	size_t n, cap;
};

/* Append a message; on ENOMEM it is dropped (a warning less, nothing else lost). */
void tc_diag_add(struct tc_diag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void tc_diag_free(struct tc_diag *d);

#endif
