/* The block pool (lib/util/blockpool.c): sizes refused, blocks apart and whole, chunks
 * aligned for a huge page, a block given back taken first, two threads at once, and
 * under ASan a block given back poisoned; the process's pools, one a size. */
#include "lib/util/blockpool.h"
#include "tests/unit/tc_test.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define KB 1024u
#define MB (1024u * 1024u)

TEST(sizes_refused)
{
	CHECK(tc_blockpool_new(0) == NULL);
	CHECK(tc_blockpool_new(3 * KB) == NULL);
	CHECK(tc_blockpool_new(4 * MB) == NULL);
	tc_blockpool_free(NULL);
}

TEST(blocks_apart_whole_aligned)
{
	struct tc_blockpool *p = tc_blockpool_new(256 * KB);
	unsigned char *b[17];

	CHECK(p != NULL);
	if (!p)
		return;
	for (int i = 0; i < 17; i++) {
		b[i] = tc_blockpool_get(p);
		CHECK(b[i] != NULL);
		if (!b[i])
			return;
		memset(b[i], i + 1, 256 * KB);
	}
#ifndef __SANITIZE_ADDRESS__
	/* eight to a 2 MiB chunk, each chunk on a 2 MiB boundary (under ASan each block is
	 * an allocation of its own) */
	CHECK_INT((uintptr_t)b[0] % (2 * MB), 0);
	CHECK_INT((uintptr_t)b[8] % (2 * MB), 0);
	CHECK_INT((uintptr_t)b[16] % (2 * MB), 0);
	CHECK(b[1] == b[0] + 256 * KB && b[9] == b[8] + 256 * KB);
#endif
	for (int i = 0; i < 17; i++) {
		CHECK_INT((uintptr_t)b[i] % (256 * KB), 0);
		CHECK_INT(b[i][0], i + 1);
		CHECK_INT(b[i][256 * KB - 1], i + 1);
		for (int k = 0; k < i; k++)
			CHECK(b[i] != b[k]);
	}
	tc_blockpool_free(p);
}

TEST(given_back_taken_first)
{
	struct tc_blockpool *p = tc_blockpool_new(4 * KB);
	void *a, *b, *c;

	CHECK(p != NULL);
	if (!p)
		return;
	a = tc_blockpool_get(p);
	b = tc_blockpool_get(p);
	tc_blockpool_put(p, NULL);
	tc_blockpool_put(p, a);
	tc_blockpool_put(p, b);
	CHECK(tc_blockpool_get(p) == b);	/* the last given back: still in a cache */
	CHECK(tc_blockpool_get(p) == a);
	c = tc_blockpool_get(p);
	CHECK(c != a && c != b && c != NULL);
	tc_blockpool_free(p);
}

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>

TEST(given_back_poisoned_under_asan)
{
	struct tc_blockpool *p = tc_blockpool_new(4 * KB);
	char *a = p ? tc_blockpool_get(p) : NULL;

	CHECK(a != NULL);
	if (!a)
		return;
	CHECK(!__asan_address_is_poisoned(a + 4 * KB - 1));
	CHECK(__asan_address_is_poisoned(a + 4 * KB));	/* past its end */
	tc_blockpool_put(p, a);
	CHECK(__asan_address_is_poisoned(a));
	CHECK(tc_blockpool_get(p) == a);
	CHECK(!__asan_address_is_poisoned(a));
	tc_blockpool_free(p);
}
#endif

TEST(shared_one_pool_a_size)
{
	struct tc_blockpool *a = tc_blockpool_shared(64 * KB), *b = tc_blockpool_shared(128 * KB);
	void *x;

	CHECK(a != NULL && b != NULL && a != b);
	CHECK(tc_blockpool_shared(64 * KB) == a);
	CHECK(tc_blockpool_shared(3 * KB) == NULL);	/* not a power of two */
	if (!a)
		return;
	x = tc_blockpool_get(a);
	CHECK(x != NULL);
	tc_blockpool_put(tc_blockpool_shared(64 * KB), x);
	CHECK(tc_blockpool_get(a) == x);	/* another user's, given back */
	tc_blockpool_put(a, x);
}

struct churn {
	struct tc_blockpool *p;
	unsigned char mark;
	int bad;
};

/* Each round: take blocks, fill them with this thread's mark, check, give them back. */
static void *churn(void *arg)
{
	struct churn *c = arg;
	unsigned char *b[4];

	for (int round = 0; round < 2000; round++) {
		for (int i = 0; i < 4; i++)
			if ((b[i] = tc_blockpool_get(c->p)))
				memset(b[i], c->mark, 8 * KB);
		for (int i = 0; i < 4; i++) {
			if (!b[i] || b[i][0] != c->mark || b[i][8 * KB - 1] != c->mark ||
			    b[i][4 * KB] != c->mark)
				c->bad++;
			tc_blockpool_put(c->p, b[i]);
		}
	}
	return NULL;
}

TEST(two_threads)
{
	struct tc_blockpool *p = tc_blockpool_new(8 * KB);
	struct churn c[2] = { { p, 0x5a, 0 }, { p, 0xa5, 0 } };
	pthread_t t;

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_INT(pthread_create(&t, NULL, churn, &c[0]), 0);
	churn(&c[1]);
	pthread_join(t, NULL);
	CHECK_INT(c[0].bad, 0);
	CHECK_INT(c[1].bad, 0);
	tc_blockpool_free(p);
}
