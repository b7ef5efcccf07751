/* The hash index (lib/util/hash.c): find, add, growth, equal hashes, slot order. */
#include "lib/util/hash.h"
#include "tests/unit/tc_test.h"

#include <stdint.h>

static bool eq_u64(const void *ctx, size_t idx, const void *key)
{
	return ((const uint64_t *)ctx)[idx] == *(const uint64_t *)key;
}

/* A poor hash on purpose: many keys share one, so the caller's eq decides. */
static uint64_t weak(uint64_t k)
{
	return k % 7;
}

TEST(find_add_grow)
{
	static uint64_t keys[1000];
	struct tc_hash h = { 0 };
	uint64_t k = 5;

	CHECK_INT(tc_hash_find(&h, 5, eq_u64, keys, &k), TC_HASH_NONE);
	for (size_t i = 0; i < 1000; i++) {
		keys[i] = i * 3 + 1;
		CHECK_INT(tc_hash_add(&h, weak(keys[i]), i), 0);
	}
	CHECK_INT(h.n, 1000);
	CHECK(h.cap >= 2000);
	for (size_t i = 0; i < 1000; i++) {
		k = i * 3 + 1;
		CHECK_INT(tc_hash_find(&h, weak(k), eq_u64, keys, &k), i);
	}
	k = 2;
	CHECK_INT(tc_hash_find(&h, weak(k), eq_u64, keys, &k), TC_HASH_NONE);
	tc_hash_free(&h);
	CHECK_INT(h.cap, 0);
}

TEST(slot_order)
{
	struct tc_hash h = { 0 };
	size_t pos = 0, idx, n = 0, seen[100] = { 0 };

	CHECK_INT(tc_hash_next(&h, &pos), TC_HASH_NONE);
	for (size_t i = 0; i < 100; i++) {
		CHECK_INT(tc_hash_reserve(&h), 0);
		CHECK_INT(tc_hash_add(&h, 100 - i, i), 0);
	}
	/* hashes 100 down to 1 in a table of 256: slot order is hash order */
	CHECK_INT(h.cap, 256);
	while ((idx = tc_hash_next(&h, &pos)) != TC_HASH_NONE) {
		CHECK_INT(idx, 99 - n);
		seen[idx]++;
		n++;
	}
	CHECK_INT(n, 100);
	for (size_t i = 0; i < 100; i++)
		CHECK_INT(seen[i], 1);
	tc_hash_free(&h);
}
