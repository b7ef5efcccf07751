#include "lib/util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tc_err_set(struct tc_err *e, int errnum, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return -1;
	e->errnum = errnum;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int tc_err_sys(struct tc_err *e, int errnum, const char *fmt, ...)
{
	va_list ap;
	size_t len;

	if (!e)
		return -1;
	e->errnum = errnum;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	len = strlen(e->msg);
	snprintf(e->msg + len, sizeof(e->msg) - len, ": %s", strerror(errnum));
	return -1;
}

void tc_diag_add(struct tc_diag *d, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		char **m = realloc(d->msgs, cap * sizeof(*m));

		if (!m) {
			free(s);
			return;
		}
		d->msgs = m;
		d->cap = cap;
	}
	d->msgs[d->n++] = s;
}

void tc_diag_free(struct tc_diag *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->msgs[i]);
	free(d->msgs);
	memset(d, 0, sizeof(*d));
}

int tc_grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 8;
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	p = realloc(*v, c * size);
	if (!p)
		return -1;
	*v = p;
	*cap = c;
	return 0;
}
