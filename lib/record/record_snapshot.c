/* Snapshot ranges for monotonic and wrapping AUX heads (record_snapshot.h). */
#include "lib/record/record_snapshot.h"

/* Is any byte in [off, size) non-zero: trace from an earlier lap past the head? */
static bool data_past(const uint8_t *buf, size_t off, size_t size)
{
	for (size_t i = off; i < size; i++)
		if (buf[i])
			return true;
	return false;
}

void tc_record_snapshot_range(struct tc_record_snapshot *s, bool head_wraps, uint64_t head,
			      const uint8_t *buf, size_t size, uint64_t *from, uint64_t *to)
{
	uint64_t pos;

	if (!head_wraps) {
		*from = head - s->done > size ? head - size : s->done;
		*to = s->done = head;
		return;
	}
	head %= size;
	if (head < s->last) {
		s->lap += size;
		s->wrapped = true;
	}
	if (!s->wrapped && data_past(buf, head, size))
		s->wrapped = true;
	pos = s->lap + head;
	if (s->wrapped && pos < size)
		pos += size;	/* the first lap seen already over: keep positions >= size */
	if (s->wrapped)
		s->lap = pos - head;
	*from = s->wrapped ? pos - size : s->done;
	*to = s->done = pos;
	s->last = head;
}
