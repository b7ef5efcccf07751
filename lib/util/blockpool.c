/* Blocks from huge-page chunks; see blockpool.h. */
#include "lib/util/blockpool.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define CHUNK ((size_t)2 << 20)

struct chunk {
	struct chunk *next;
	void *map;
	size_t len;
};

struct tc_blockpool {
	pthread_mutex_t mu;
	size_t size;
	void *free;		/* blocks given back, linked through their first word */
	char *at;		/* the newest chunk's blocks not yet handed out */
	size_t left;
	struct chunk *chunks;
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
static int chunk_add(struct tc_blockpool *p)
{
	struct chunk *c = malloc(sizeof(*c));
	char *m, *a;

	if (!c)
		return -1;
	m = mmap(NULL, 2 * CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		free(c);
		return -1;
	}
	a = (char *)(((uintptr_t)m + CHUNK - 1) & ~(uintptr_t)(CHUNK - 1));
	if (a > m)
		munmap(m, (size_t)(a - m));
	if (a + CHUNK < m + 2 * CHUNK)
		munmap(a + CHUNK, (size_t)(m + 2 * CHUNK - (a + CHUNK)));
	madvise(a, CHUNK, MADV_HUGEPAGE);	/* a hint: without it, 4 KiB pages */
	*c = (struct chunk){ p->chunks, a, CHUNK };
	p->chunks = c;
	p->at = a;
	p->left = CHUNK;
	return 0;
}

void *tc_blockpool_get(struct tc_blockpool *p)
{
	void *b = NULL;

	pthread_mutex_lock(&p->mu);
	if (p->free) {
		b = p->free;
		p->free = *(void **)b;
	} else if (p->left || !chunk_add(p)) {
		b = p->at;
		p->at += p->size;
		p->left -= p->size;
	}
	pthread_mutex_unlock(&p->mu);
	return b;
}

void tc_blockpool_put(struct tc_blockpool *p, void *block)
{
	if (!block)
		return;
	pthread_mutex_lock(&p->mu);
	*(void **)block = p->free;
	p->free = block;
	pthread_mutex_unlock(&p->mu);
}

void tc_blockpool_free(struct tc_blockpool *p)
{
	if (!p)
		return;
	while (p->chunks) {
		struct chunk *c = p->chunks;

		p->chunks = c->next;
		munmap(c->map, c->len);
		free(c);
	}
	pthread_mutex_destroy(&p->mu);
	free(p);
}
