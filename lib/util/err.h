/* Error context for lib/ and decoders/: they never print, they fill one of these. */
#ifndef TC_LIB_UTIL_ERR_H
#define TC_LIB_UTIL_ERR_H

#include <stddef.h>

struct tc_err {
	int errnum;		/* errno-style cause, 0 if none */
	char msg[512];		/* full sentence without the "error:" prefix */
};

/* Fill e (may be NULL) and return -1, so callers can `return tc_err_set(...)`. */
int tc_err_set(struct tc_err *e, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Like tc_err_set, but appends ": strerror(errnum)". */
int tc_err_sys(struct tc_err *e, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A list of non-fatal problems found while reading input ("the rest still prints"). */
struct tc_diag {
	char **msgs;
	size_t n, cap;
};

void tc_diag_add(struct tc_diag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void tc_diag_free(struct tc_diag *d);

/* Make room for need elements of size bytes in the array *v of capacity *cap (doubling);
 * -1 on ENOMEM with *v and *cap unchanged. */
int tc_grow(void **v, size_t *cap, size_t need, size_t size);

#endif
