#include "decoders/time_heap.h"

#include <stdlib.h>

int tc_time_heap_init(struct tc_time_heap *h, size_t cap)
{
	h->n = 0;
	h->cap = cap;
	h->ix = calloc(cap ? cap : 1, sizeof(*h->ix));
	h->key = calloc(cap ? cap : 1, sizeof(*h->key));
	if (h->ix && h->key)
		return 0;
	tc_time_heap_free(h);
	return -1;
}

int tc_time_heap_start(struct tc_time_heap *h, size_t n)
{
	if (tc_time_heap_init(h, n))
		return -1;
	for (size_t i = 0; i < n; i++)
		tc_time_heap_push(h, i, 0);
	return 0;
}

void tc_time_heap_free(struct tc_time_heap *h)
{
	free(h->ix);
	free(h->key);
	h->ix = NULL;
	h->key = NULL;
	h->n = 0;
}

static int before(const struct tc_time_heap *h, size_t a, size_t b)
{
	uint64_t ka = h->key[h->ix[a]], kb = h->key[h->ix[b]];

	return ka < kb || (ka == kb && h->ix[a] < h->ix[b]);
}

static void swap(struct tc_time_heap *h, size_t a, size_t b)
{
	size_t t = h->ix[a];

	h->ix[a] = h->ix[b];
	h->ix[b] = t;
}

static void up(struct tc_time_heap *h, size_t i)
{
	for (; i && before(h, i, (i - 1) / 2); i = (i - 1) / 2)
		swap(h, i, (i - 1) / 2);
}

static void down(struct tc_time_heap *h, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < h->n && before(h, l, m))
			m = l;
		if (l + 1 < h->n && before(h, l + 1, m))
			m = l + 1;
		if (m == i)
			return;
		swap(h, i, m);
		i = m;
	}
}

void tc_time_heap_push(struct tc_time_heap *h, size_t ix, uint64_t key)
{
	if (ix >= h->cap || h->n == h->cap)
		return;
	h->key[ix] = key;
	h->ix[h->n++] = ix;
	up(h, h->n - 1);
}

size_t tc_time_heap_top(const struct tc_time_heap *h)
{
	return h->ix[0];
}

uint64_t tc_time_heap_next(const struct tc_time_heap *h)
{
	uint64_t k = UINT64_MAX;

	for (size_t c = 1; c <= 2 && c < h->n; c++)
		if (h->key[h->ix[c]] < k)
			k = h->key[h->ix[c]];
	return k;
}

void tc_time_heap_update_top(struct tc_time_heap *h, uint64_t key)
{
	h->key[h->ix[0]] = key;
	down(h, 0);
}

void tc_time_heap_pop(struct tc_time_heap *h)
{
	if (!h->n)
		return;
	h->ix[0] = h->ix[--h->n];
	down(h, 0);
}
