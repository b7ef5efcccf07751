/* Growable arrays: the one way lib/ and decoders/ make room to append. */
#ifndef TC_LIB_UTIL_GROW_H
#define TC_LIB_UTIL_GROW_H

#include <stddef.h>

/* Make room for need elements of size bytes in the array *v of capacity *cap (doubling,
 * from 8); -1 on ENOMEM with *v and *cap unchanged. */
int tc_grow(void **v, size_t *cap, size_t need, size_t size);

#endif
