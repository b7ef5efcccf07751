#include "lib/util/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"

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
	if (tc_grow((void **)&d->msgs, &d->cap, d->n + 1, sizeof(*d->msgs))) {
		free(s);
		return;
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
