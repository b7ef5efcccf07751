/* decoders/time_heap: the queue order of interleaving by time, against a linear scan of the
 * same keys (the smallest key, ties to the lower index; the next smallest as the limit). */
#include "decoders/time_heap.h"
#include "tests/unit/tc_test.h"

#define NQ 37

static uint32_t rnd_state = 777;

static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

/* The queue a linear scan picks among live ones, and the smallest key of the others. */
static size_t scan(const uint64_t *key, const int *live, uint64_t *next)
{
	size_t best = NQ;

	*next = UINT64_MAX;
	for (size_t i = 0; i < NQ; i++) {
		if (!live[i])
			continue;
		if (best == NQ || key[i] < key[best]) {
			if (best != NQ && key[best] < *next)
				*next = key[best];
			best = i;
		} else if (key[i] < *next) {
			*next = key[i];
		}
	}
	return best;
}

TEST(heap_runs_queues_as_a_scan_would)
{
	struct tc_time_heap h;
	uint64_t key[NQ], next;
	int live[NQ];
	size_t steps = 0, wrong = 0, left = NQ;

	CHECK_INT(tc_time_heap_init(&h, NQ), 0);
	for (size_t i = 0; i < NQ; i++) {
		key[i] = rnd() % 50;	/* small range: many ties */
		live[i] = 1;
		tc_time_heap_push(&h, i, key[i]);
	}
	while (h.n) {
		size_t want = scan(key, live, &next), top = tc_time_heap_top(&h);

		wrong += top != want || tc_time_heap_next(&h) != next;
		/* the top runs on: time moves forward, or its queue ends */
		if (rnd() % 8 == 0) {
			live[top] = 0;
			left--;
			tc_time_heap_pop(&h);
		} else {
			key[top] += rnd() % 20;
			tc_time_heap_update_top(&h, key[top]);
		}
		steps++;
	}
	CHECK_INT(left, 0);
	CHECK(steps > 100);
	CHECK_INT(wrong, 0);
	tc_time_heap_free(&h);
}
