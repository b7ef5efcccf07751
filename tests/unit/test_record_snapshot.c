/* Snapshot ranges (lib/record/record_snapshot.c) against a synthetic writer: a stream of
 * non-zero bytes written round a buffer the way the hardware does, heads reported both ways
 * (monotonic: CoreSight; wrapping offset: Intel PT). Each snapshot must give exactly the
 * bytes the writer wrote last: those since the previous snapshot, at most a buffer's worth
 * (monotonic), or until the buffer has gone round, then the whole buffer (wrapping). */
#include <stdlib.h>
#include <string.h>

#include "lib/record/record_snapshot.h"
#include "tests/unit/tc_test.h"

#define STREAM (1u << 16)

struct writer {
	uint8_t *buf;
	size_t size;
	uint64_t written;	/* stream bytes so far */
	bool wraps;		/* report the head as an offset that wraps */
	struct tc_record_snapshot s;
	uint64_t prev;		/* written at the previous snapshot */
};

static uint8_t byte_at(uint64_t pos)
{
	return (uint8_t)(pos * 131 % 251 + 1);	/* never 0 */
}

static void write_bytes(struct writer *w, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++, w->written++)
		w->buf[w->written % w->size] = byte_at(w->written);
}

/* One snapshot: the range is what the writer wrote last, and the bytes copied from the
 * buffer at those positions are the stream's. */
static int snap(struct writer *w)
{
	uint64_t from, to, want_from, head = w->wraps ? w->written % w->size : w->written;
	bool round = w->written > w->size || (w->wraps && w->written == w->size);

	tc_record_snapshot_range(&w->s, w->wraps, head, w->buf, w->size, &from, &to);
	if (w->wraps)
		want_from = round ? w->written - w->size : w->prev;
	else
		want_from = w->written - w->prev > w->size ? w->written - w->size : w->prev;
	w->prev = w->written;
	if (to - from != w->written - want_from || to % w->size != w->written % w->size) {
		fprintf(stderr, "# range [%llu, %llu), want %llu bytes ending at offset %llu\n",
			(unsigned long long)from, (unsigned long long)to,
			(unsigned long long)(w->written - want_from),
			(unsigned long long)(w->written % w->size));
		return -1;
	}
	for (uint64_t p = from, q = want_from; p < to; p++, q++)
		if (w->buf[p % w->size] != byte_at(q))
			return -1;
	return 0;
}

static void writer_init(struct writer *w, size_t size, bool wraps)
{
	memset(w, 0, sizeof(*w));
	w->buf = calloc(1, size);	/* the kernel's AUX pages come zeroed */
	w->size = size;
	w->wraps = wraps;
}

TEST(monotonic_head_first_and_later_snapshots)
{
	struct writer w;

	writer_init(&w, 4096, false);
	write_bytes(&w, 1000);
	CHECK_INT(snap(&w), 0);		/* first, buffer larger than the data */
	write_bytes(&w, 500);
	CHECK_INT(snap(&w), 0);		/* only the new bytes */
	CHECK_INT(snap(&w), 0);		/* nothing new: empty */
	write_bytes(&w, 10000);
	CHECK_INT(snap(&w), 0);		/* more than the buffer: its last 4096 */
	write_bytes(&w, 4096);
	CHECK_INT(snap(&w), 0);		/* exactly a buffer */
	free(w.buf);
}

TEST(wrapping_head_before_the_first_wrap)
{
	struct writer w;

	writer_init(&w, 8192, true);
	write_bytes(&w, 7000);		/* the head inside the last 4 KiB, not yet round */
	CHECK_INT(snap(&w), 0);
	CHECK_INT(w.s.wrapped, 0);
	write_bytes(&w, 1000);
	CHECK_INT(snap(&w), 0);		/* [7000, 8000): the new bytes only */
	CHECK_INT(w.s.wrapped, 0);
	free(w.buf);
}

TEST(wrapping_head_goes_round_between_snapshots)
{
	struct writer w;

	writer_init(&w, 8192, true);
	write_bytes(&w, 3000);
	CHECK_INT(snap(&w), 0);
	write_bytes(&w, 6000);		/* past the end: the head is now below the last one */
	CHECK_INT(snap(&w), 0);
	CHECK_INT(w.s.wrapped, 1);
	write_bytes(&w, 100);		/* later snapshots: the whole buffer, oldest first */
	CHECK_INT(snap(&w), 0);
	write_bytes(&w, 3 * 8192 + 5);	/* several laps unseen */
	CHECK_INT(snap(&w), 0);
	free(w.buf);
}

TEST(wrapping_head_already_round_at_the_first_snapshot)
{
	struct writer w;

	writer_init(&w, 8192, true);
	write_bytes(&w, 20000);		/* the head (3616) says nothing of the laps */
	CHECK_INT(snap(&w), 0);
	CHECK_INT(w.s.wrapped, 1);
	write_bytes(&w, 8192 - 20000 % 8192);	/* the head lands on 0 */
	CHECK_INT(snap(&w), 0);
	free(w.buf);

	writer_init(&w, 8192, true);
	write_bytes(&w, 8192);		/* exactly one buffer: head 0, every byte data */
	CHECK_INT(snap(&w), 0);
	CHECK_INT(w.s.wrapped, 1);
	free(w.buf);
}

TEST(random_writes_and_snapshots_both_ways)
{
	for (int wraps = 0; wraps < 2; wraps++) {
		struct writer w;
		unsigned seed = 7;
		int bad = 0;

		writer_init(&w, 4096, wraps);
		for (int i = 0; i < 200 && w.written < STREAM * 8; i++) {
			write_bytes(&w, (uint64_t)(rand_r(&seed) % 6000));
			bad += snap(&w) != 0;
		}
		CHECK_INT(bad, 0);
		free(w.buf);
	}
}
