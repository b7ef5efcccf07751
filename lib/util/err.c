#include "lib/util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void vset(struct tc_err *e, int errnum, const char *fmt, va_list ap)
{
	e->errnum = errnum;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
}

int tc_err_set(struct tc_err *e, int errnum, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return -1;
	va_start(ap, fmt);
	vset(e, errnum, fmt, ap);
	va_end(ap);
	return -1;
}

int tc_err_sys(struct tc_err *e, int errnum, const char *fmt, ...)
{
	va_list ap;
	size_t len;

	if (!e)
		return -1;
	va_start(ap, fmt);
	vset(e, errnum, fmt, ap);
	va_end(ap);
	len = strlen(e->msg);
	snprintf(e->msg + len, sizeof(e->msg) - len, ": %s", strerror(errnum));
	return -1;
}
