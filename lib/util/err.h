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

#endif
