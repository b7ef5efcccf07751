/* Blocks of one size for threads to fill and hand over (lib/output/lanes.c): taken from
 * 2 MiB chunks that ask for transparent huge pages and are kept until the pool goes.
 * A first touch of fresh memory costs a page fault per 4 KiB page (~10 us in a VM), a
 * huge page one fault per 2 MiB; a block given back is taken again first, while its
 * bytes are still in a cache. Under AddressSanitizer each block is an allocation of its
 * own, poisoned while given back, so that overruns and uses after a put are caught.
 * Thread-safe. */
#ifndef TC_LIB_UTIL_BLOCKPOOL_H
#define TC_LIB_UTIL_BLOCKPOOL_H

#include <stddef.h>

struct tc_blockpool;

/* Blocks of size bytes (a power of two, at most 2 MiB), each aligned to its size; NULL
 * on ENOMEM. */
struct tc_blockpool *tc_blockpool_new(size_t size);
/* A block (its bytes as last left), NULL on ENOMEM. */
void *tc_blockpool_get(struct tc_blockpool *p);
/* Give back a block of p's (NULL: nothing). */
void tc_blockpool_put(struct tc_blockpool *p, void *block);
/* Every block goes with it, given back or not. */
void tc_blockpool_free(struct tc_blockpool *p);

/* The process's pool of blocks of size bytes, for tables that decoders on any thread make
 * and let go of (a table given back taken again first, by any of them): made on first
 * use and kept for the process; NULL on ENOMEM or with more sizes than it holds. */
struct tc_blockpool *tc_blockpool_shared(size_t size);

#endif
