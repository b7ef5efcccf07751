/* Snapshot mode (-S): which bytes of an AUX buffer in overwrite mode are the latest trace.
 * The kernel reports the buffer's head two ways. CoreSight's drivers keep it monotonic (a
 * stream position; the buffer offset is head % size). Intel PT's driver reports an offset
 * within the buffer that wraps; nothing says how many times it went round, so the buffer
 * counts as wrapped once the head has moved backwards or any byte past the head is
 * non-zero (the kernel hands out AUX pages zeroed; zero bytes are PAD packets to a PT
 * decoder), and from then on each snapshot is the whole buffer, oldest byte first. */
#ifndef TC_LIB_RECORD_RECORD_SNAPSHOT_H
#define TC_LIB_RECORD_RECORD_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Per AUX buffer, zeroed before the first snapshot. */
struct tc_record_snapshot {
	uint64_t done;		/* stream position copied up to */
	uint64_t lap;		/* wrapping head: stream position of offset 0 in this lap */
	uint64_t last;		/* wrapping head: the head at the last snapshot */
	bool wrapped;		/* wrapping head: the buffer has gone round */
};

/* The bytes to copy for a snapshot taken with the event stopped: stream positions
 * [*from, *to), at most size bytes, the buffer offset of position p being p % size.
 * head is what the user page shows; buf the buffer (read only for a wrapping head). */
void tc_record_snapshot_range(struct tc_record_snapshot *s, bool head_wraps, uint64_t head,
			      const uint8_t *buf, size_t size, uint64_t *from, uint64_t *to);

#endif
