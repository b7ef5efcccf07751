#include "lib/util/strv.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"

int tc_strv_push(struct tc_strv *s, const char *str)
{
	char *copy;

	if (tc_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return -1;
	copy = strdup(str);
	if (!copy)
		return -1;
	s->v[s->n++] = copy;
	return 0;
}

bool tc_strv_has(const struct tc_strv *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], str))
			return true;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void tc_strv_sort(struct tc_strv *s)
{
	if (s->n > 1)
		qsort(s->v, s->n, sizeof(*s->v), cmp_str);
}

void tc_strv_free(struct tc_strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}
