#include "lib/util/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"

static void add(struct tc_diag *d, enum tc_diag_level level, const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		return;
	if (tc_grow((void **)&d->msgs, &d->cap, d->n + 1, sizeof(*d->msgs))) {
		free(s);
		return;
	}
	d->msgs[d->n++] = (struct tc_diag_msg){ level, s };
}

void tc_diag_add(struct tc_diag *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add(d, TC_DIAG_WARNING, fmt, ap);
	va_end(ap);
}

void tc_diag_status(struct tc_diag *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add(d, TC_DIAG_STATUS, fmt, ap);
	va_end(ap);
}

void tc_diag_free(struct tc_diag *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->msgs[i].text);
	free(d->msgs);
	memset(d, 0, sizeof(*d));
}
