#include "lib/util/hash.h"

#include <stdlib.h>
#include <string.h>

#define FIRST_CAP 64

/* The first empty slot on hash's probe sequence. */
static size_t empty_slot(const struct tc_hash_slot *slot, size_t cap, uint64_t hash)
{
	size_t i = (size_t)hash & (cap - 1);

	while (slot[i].idx1)
		i = (i + 1) & (cap - 1);
	return i;
}

int tc_hash_reserve(struct tc_hash *h)
{
	struct tc_hash_slot *slot;
	size_t cap;

	if (2 * (h->n + 1) <= h->cap)
		return 0;
	cap = h->cap ? h->cap * 2 : FIRST_CAP;
	slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -1;
	for (size_t i = 0; i < h->cap; i++)
		if (h->slot[i].idx1)
			slot[empty_slot(slot, cap, h->slot[i].hash)] = h->slot[i];
	free(h->slot);
	h->slot = slot;
	h->cap = cap;
	return 0;
}

size_t tc_hash_find(const struct tc_hash *h, uint64_t hash, tc_hash_eq_fn eq, const void *ctx,
		    const void *key)
{
	if (!h->cap)
		return TC_HASH_NONE;
	for (size_t i = (size_t)hash & (h->cap - 1); h->slot[i].idx1; i = (i + 1) & (h->cap - 1))
		if (h->slot[i].hash == hash && eq(ctx, h->slot[i].idx1 - 1, key))
			return h->slot[i].idx1 - 1;
	return TC_HASH_NONE;
}

int tc_hash_add(struct tc_hash *h, uint64_t hash, size_t idx)
{
	if (tc_hash_reserve(h))
		return -1;
	h->slot[empty_slot(h->slot, h->cap, hash)] = (struct tc_hash_slot){ hash, idx + 1 };
	h->n++;
	return 0;
}

size_t tc_hash_next(const struct tc_hash *h, size_t *pos)
{
	for (; *pos < h->cap; ++*pos)
		if (h->slot[*pos].idx1)
			return h->slot[(*pos)++].idx1 - 1;
	return TC_HASH_NONE;
}

void tc_hash_free(struct tc_hash *h)
{
	free(h->slot);
	memset(h, 0, sizeof(*h));
}
