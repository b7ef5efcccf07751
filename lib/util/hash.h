/* A hash index over the caller's own array: it maps a 64-bit hash to indices into that
 * array, and the caller, who keeps the keys, says when two are equal. Open addressing
 * with linear probing, at most half full, no removal. The slot order (tc_hash_next)
 * depends only on the hashes and the order of reserves and adds. */
#ifndef TC_LIB_UTIL_HASH_H
#define TC_LIB_UTIL_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tc_hash_slot {
	uint64_t hash;
	size_t idx1;		/* index + 1; 0: empty */
};

struct tc_hash {
	struct tc_hash_slot *slot;
	size_t cap, n;		/* cap: 0 or a power of two from 64 */
};

#define TC_HASH_NONE ((size_t)-1)

/* Whether entry idx of the caller's array (ctx) has key. */
typedef bool (*tc_hash_eq_fn)(const void *ctx, size_t idx, const void *key);

/* Room for one more index (the table doubles once half full); -1 on ENOMEM. */
int tc_hash_reserve(struct tc_hash *h);
/* The index whose entry equals key among those added with hash, or TC_HASH_NONE. */
size_t tc_hash_find(const struct tc_hash *h, uint64_t hash, tc_hash_eq_fn eq, const void *ctx,
		    const void *key);
/* Add idx under hash (reserving first); -1 on ENOMEM. */
int tc_hash_add(struct tc_hash *h, uint64_t hash, size_t idx);
/* The indices in slot order: start with *pos 0; TC_HASH_NONE after the last. */
size_t tc_hash_next(const struct tc_hash *h, size_t *pos);
void tc_hash_free(struct tc_hash *h);

#endif
