/* Blocks from huge-page chunks; see blockpool.h. */
#include "lib/util/blockpool.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "lib/util/grow.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#define BP_ASAN 1
#else
#define BP_ASAN 0
#define ASAN_POISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#endif

#define CHUNK ((size_t)2 << 20)
#define SHARED 8	/* sizes of the process's pools */

struct tc_blockpool {
	pthread_mutex_t mu;
	size_t size;
	void **free;		/* blocks given back, the last one last */
	size_t nfree, cfree;
	size_t nblocks;		/* handed out ever: free has room for all of them */
	void **maps;		/* chunks (under ASan: blocks) to let go of at the end */
	size_t nmaps, cmaps;
	char *at;		/* the newest chunk's blocks not yet handed out */
	size_t left;
};

struct tc_blockpool *tc_blockpool_new(size_t size)
{
	struct tc_blockpool *p;

	if (!size || size > CHUNK || (size & (size - 1)) || !(p = calloc(1, sizeof(*p))))
		return NULL;
	pthread_mutex_init(&p->mu, NULL);
	p->size = size;
	return p;
}

/* A chunk aligned to its size, so that the kernel can back it with one huge page. */
static char *chunk_new(void)
{
	char *m = mmap(NULL, 2 * CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0), *a;

	if (m == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)m + CHUNK - 1) & ~(uintptr_t)(CHUNK - 1));
	if (a > m)
		munmap(m, (size_t)(a - m));
	if (a + CHUNK < m + 2 * CHUNK)
		munmap(a + CHUNK, (size_t)(m + 2 * CHUNK - (a + CHUNK)));
	madvise(a, CHUNK, MADV_HUGEPAGE);	/* a hint: without it, 4 KiB pages */
	return a;
}

/* A block never handed out before (lock held). */
static void *fresh(struct tc_blockpool *p)
{
	char *b;

	/* room to give it back made now: a put cannot fail */
	if (tc_grow((void **)&p->free, &p->cfree, p->nblocks + 1, sizeof(*p->free)) ||
	    ((BP_ASAN || !p->left) &&
	     tc_grow((void **)&p->maps, &p->cmaps, p->nmaps + 1, sizeof(*p->maps))))
		return NULL;
	if (BP_ASAN) {
		if (!(b = aligned_alloc(p->size, p->size)))
			return NULL;
		p->maps[p->nmaps++] = b;
	} else {
		if (!p->left) {
			if (!(p->at = chunk_new()))
				return NULL;
			p->maps[p->nmaps++] = p->at;
			p->left = CHUNK;
		}
		b = p->at;
		p->at += p->size;
		p->left -= p->size;
	}
	p->nblocks++;
	return b;
}

void *tc_blockpool_get(struct tc_blockpool *p)
{
	void *b;

	pthread_mutex_lock(&p->mu);
	b = p->nfree ? p->free[--p->nfree] : fresh(p);
	pthread_mutex_unlock(&p->mu);
	if (b)
		ASAN_UNPOISON_MEMORY_REGION(b, p->size);
	return b;
}

void tc_blockpool_put(struct tc_blockpool *p, void *block)
{
	if (!block)
		return;
	ASAN_POISON_MEMORY_REGION(block, p->size);
	pthread_mutex_lock(&p->mu);
	p->free[p->nfree++] = block;	/* room made when it was fresh */
	pthread_mutex_unlock(&p->mu);
}

struct tc_blockpool *tc_blockpool_shared(size_t size)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static struct tc_blockpool *pools[SHARED];
	struct tc_blockpool *p = NULL;
	size_t i;

	pthread_mutex_lock(&mu);
	for (i = 0; i < SHARED && pools[i] && pools[i]->size != size; i++)
		;
	if (i < SHARED && !pools[i])
		pools[i] = tc_blockpool_new(size);	/* kept for the process */
	if (i < SHARED)
		p = pools[i];
	pthread_mutex_unlock(&mu);
	return p;
}

void tc_blockpool_free(struct tc_blockpool *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nmaps; i++)
		if (BP_ASAN) {
			ASAN_UNPOISON_MEMORY_REGION(p->maps[i], p->size);
			free(p->maps[i]);
		} else {
			munmap(p->maps[i], CHUNK);
		}
	free(p->maps);
	free(p->free);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
