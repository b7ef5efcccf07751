/* The order of queues interleaved by time (as perf's auxtrace heap orders them): a min-heap
 * of queue indexes keyed by the time each resumes at, ties to the lower index. The top runs
 * until it passes the second smallest time, then takes its new key. */
#ifndef TC_DECODERS_TIME_HEAP_H
#define TC_DECODERS_TIME_HEAP_H

#include <stddef.h>
#include <stdint.h>

struct tc_time_heap {
	size_t *ix;		/* heap of queue indexes */
	uint64_t *key;		/* by queue index */
	size_t n, cap;
};

/* Room for queue indexes 0..cap-1; -1 when out of memory. */
int tc_time_heap_init(struct tc_time_heap *h, size_t cap);
/* tc_time_heap_init with queues 0..n-1 in, all at 0: each runs first until its trace tells
 * a time (as perf starts its queues). */
int tc_time_heap_start(struct tc_time_heap *h, size_t n);
void tc_time_heap_free(struct tc_time_heap *h);
void tc_time_heap_push(struct tc_time_heap *h, size_t ix, uint64_t key);
/* The queue furthest behind (heap not empty). */
size_t tc_time_heap_top(const struct tc_time_heap *h);
/* The smallest key but the top's: how far the top may run (UINT64_MAX: alone). */
uint64_t tc_time_heap_next(const struct tc_time_heap *h);
/* The top's new key, or its removal. */
void tc_time_heap_update_top(struct tc_time_heap *h, uint64_t key);
void tc_time_heap_pop(struct tc_time_heap *h);

#endif
