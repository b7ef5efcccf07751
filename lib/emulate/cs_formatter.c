/* CoreSight frame formatter; see cs_formatter.h. Frame layout (CoreSight Architecture Spec,
 * Trace Formatter): even bytes 0..14 are an ID change (id << 1 | 1) or data with bit 0 moved
 * into byte 15 (bit k for byte 2k); odd bytes 1..13 are data. An ID change at 2k with flag k
 * set leaves byte 2k+1 to the old ID; an ID change in byte 14 applies to the next frame. */
#include "lib/emulate/cs_formatter.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"

#define FRAME		16
#define NO_ID		0xff

struct tc_cs_formatter {
	uint8_t *buf;		/* complete frames [off, n) */
	size_t off, n, cap;
	uint8_t fr[FRAME];	/* frame being filled: bytes [0, pos), flags in fr[15] */
	unsigned pos;
	uint8_t cur_id;		/* ID the next data byte would belong to */
	bool every;		/* an ID change opens every frame */
};

struct tc_cs_formatter *tc_cs_formatter_new(struct tc_err *e)
{
	struct tc_cs_formatter *f = calloc(1, sizeof(*f));

	if (!f) {
		tc_err_set(e, ENOMEM, "out of memory for the CoreSight formatter");
		return NULL;
	}
	f->cur_id = NO_ID;
	return f;
}

void tc_cs_formatter_free(struct tc_cs_formatter *f)
{
	if (!f)
		return;
	free(f->buf);
	free(f);
}

static int append(struct tc_cs_formatter *f, const uint8_t *p, size_t len, struct tc_err *e)
{
	if (f->n + len > f->cap) {
		if (f->off) {
			memmove(f->buf, f->buf + f->off, f->n - f->off);
			f->n -= f->off;
			f->off = 0;
		}
		if (tc_grow((void **)&f->buf, &f->cap, f->n + len, 1))
			return tc_err_set(e, ENOMEM, "out of memory for the sink buffer");
	}
	memcpy(f->buf + f->n, p, len);
	f->n += len;
	return 0;
}

static int frame_done(struct tc_cs_formatter *f, struct tc_err *e)
{
	if (f->pos < FRAME - 1)
		return 0;
	f->pos = 0;
	int r = append(f, f->fr, FRAME, e);

	memset(f->fr, 0, FRAME);
	return r;
}

static void put_data(struct tc_cs_formatter *f, uint8_t b)
{
	if (f->pos & 1) {
		f->fr[f->pos] = b;
	} else {
		f->fr[f->pos] = b & 0xfe;
		f->fr[15] |= (b & 1) << (f->pos / 2);
	}
	f->pos++;
}

/* Switch to id before the next data byte. */
static int change_id(struct tc_cs_formatter *f, uint8_t id, struct tc_err *e)
{
	if (f->pos & 1) {
		/* The even byte before holds the old ID's data: it moves to the odd slot and the ID
		 * change takes its place, flagged "next byte is still the old ID". */
		unsigned k = (f->pos - 1) / 2;
		uint8_t old = f->fr[f->pos - 1] | ((f->fr[15] >> k) & 1);

		f->fr[f->pos - 1] = (uint8_t)(id << 1 | 1);
		f->fr[15] |= 1u << k;
		f->fr[f->pos++] = old;
	} else {
		f->fr[f->pos++] = (uint8_t)(id << 1 | 1);
		if (f->pos == FRAME - 1)
			f->fr[15] &= 0x7f;	/* ID in byte 14: applies to the next frame */
	}
	f->cur_id = id;
	return frame_done(f, e);
}

void tc_cs_formatter_every_frame_id(struct tc_cs_formatter *f, bool on)
{
	f->every = on;
}

int tc_cs_formatter_write(struct tc_cs_formatter *f, uint8_t id, const void *data, size_t len,
		   struct tc_err *e)
{
	const uint8_t *p = data;

	if (id == 0 || id >= 0x70)
		return tc_err_set(e, EINVAL, "trace ID 0x%02x is reserved", id);
	for (size_t i = 0; i < len; i++) {
		if ((id != f->cur_id || (f->every && !f->pos)) && change_id(f, id, e))
			return -1;
		put_data(f, p[i]);
		if (frame_done(f, e))
			return -1;
	}
	return 0;
}

int tc_cs_formatter_flush(struct tc_cs_formatter *f, struct tc_err *e)
{
	if (!f->pos)
		return 0;
	if (f->cur_id != 0 && change_id(f, 0, e))
		return -1;
	while (f->pos) {
		put_data(f, 0);
		if (frame_done(f, e))
			return -1;
	}
	return 0;
}

int tc_cs_formatter_pad_frame(struct tc_cs_formatter *f, struct tc_err *e)
{
	/* an ID change opens it, as every frame of a snapshot ring needs */
	if (tc_cs_formatter_flush(f, e) || change_id(f, 0, e))
		return -1;
	do {
		put_data(f, 0);
		if (frame_done(f, e))
			return -1;
	} while (f->pos);
	return 0;
}

int tc_cs_formatter_fsync4(struct tc_cs_formatter *f, struct tc_err *e)
{
	static const uint8_t fs[FRAME] = { 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f,
					   0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f };

	if (tc_cs_formatter_flush(f, e))
		return -1;
	f->cur_id = NO_ID;
	return append(f, fs, FRAME, e);
}

const uint8_t *tc_cs_formatter_data(const struct tc_cs_formatter *f, size_t *len)
{
	*len = f->n - f->off;
	return f->buf ? f->buf + f->off : (const uint8_t *)"";
}

void tc_cs_formatter_drain(struct tc_cs_formatter *f, size_t n)
{
	if (n > f->n - f->off)
		n = f->n - f->off;
	f->off += n;
	if (f->off == f->n)
		f->off = f->n = 0;
}
