#include "lib/util/diag.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"

/* The text shown for m: the first text, and the count when there was more than one. */
static void render(struct tc_diag_msg *m)
{
	char *s;
	int r;

	if (m->count < 2)
		return;
	if (m->kind)
		r = asprintf(&s, "%s (and %zu more like it)", m->first, m->count - 1);
	else
		r = asprintf(&s, "%s (%zu times)", m->first, m->count);
	if (r < 0)
		return;	/* the last text shown stays */
	if (m->text != m->first)
		free(m->text);
	m->text = s;
}

static bool same(const struct tc_diag_msg *m, const char *kind, const char *text)
{
	if (m->level != TC_DIAG_WARNING)
		return false;
	if (kind || m->kind)
		return kind && m->kind && !strcmp(m->kind, kind);
	return !strcmp(m->first, text);
}

static void add(struct tc_diag *d, enum tc_diag_level level, const char *kind, const char *fmt,
		va_list ap)
{
	char *s, *k = NULL;

	if (vasprintf(&s, fmt, ap) < 0)
		return;
	if (level == TC_DIAG_WARNING) {
		for (size_t i = 0; i < d->n; i++) {
			if (same(&d->msgs[i], kind, s)) {
				d->msgs[i].count++;
				render(&d->msgs[i]);
				free(s);
				return;
			}
		}
	}
	if ((kind && !(k = strdup(kind))) ||
	    tc_grow((void **)&d->msgs, &d->cap, d->n + 1, sizeof(*d->msgs))) {
		free(k);
		free(s);
		return;
	}
	d->msgs[d->n++] = (struct tc_diag_msg){ .level = level, .text = s, .first = s,
						.kind = k, .count = 1 };
}

void tc_diag_add(struct tc_diag *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add(d, TC_DIAG_WARNING, NULL, fmt, ap);
	va_end(ap);
}

void tc_diag_add_kind(struct tc_diag *d, const char *kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add(d, TC_DIAG_WARNING, kind, fmt, ap);
	va_end(ap);
}

void tc_diag_status(struct tc_diag *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add(d, TC_DIAG_STATUS, NULL, fmt, ap);
	va_end(ap);
}

size_t tc_diag_warnings(const struct tc_diag *d)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n; i++)
		n += d->msgs[i].level == TC_DIAG_WARNING;
	return n;
}

void tc_diag_free(struct tc_diag *d)
{
	for (size_t i = 0; i < d->n; i++) {
		if (d->msgs[i].text != d->msgs[i].first)
			free(d->msgs[i].text);
		free(d->msgs[i].first);
		free(d->msgs[i].kind);
	}
	free(d->msgs);
	memset(d, 0, sizeof(*d));
}
