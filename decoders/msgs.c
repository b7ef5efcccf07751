#include "decoders/msgs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/err.h"

void tc_msgs_add(struct tc_msgs *m, enum tc_msgs_level level, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	if (tc_grow((void **)&m->v, &m->cap, m->n + 1, sizeof(*m->v))) {
		free(s);
		return;
	}
	m->v[m->n++] = (struct tc_msgs_one){ level, s };
}

void tc_msgs_free(struct tc_msgs *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].text);
	free(m->v);
	memset(m, 0, sizeof(*m));
}
