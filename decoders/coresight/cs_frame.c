/* CoreSight frame deformatter; see cs_frame.h. Frame layout (CoreSight Architecture Spec,
 * Trace Formatter): bytes 0,2,..,14 are either an ID change (bit0 = 1, ID = byte >> 1) or data
 * whose bit0 lives in byte 15 (bit k for byte 2k); odd bytes 1..13 are always data. For an ID
 * change at byte 2k, flag bit k set means byte 2k+1 still belongs to the old ID. */
#include "decoders/coresight/cs_frame.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/diag.h"

#define FSYNC_B3	0x7f	/* FSYNC is ff ff ff 7f in memory (0x7fffffff LE) */

struct tc_cs_frame {
	unsigned flags;
	tc_csf_data_fn fn;
	tc_csf_reset_fn reset_fn;
	void *ctx;

	uint64_t pos;		/* stream offset of the next unconsumed byte */
	uint8_t cur_id;		/* TC_CS_FRAME_NO_ID until the first ID byte */
	bool synced;		/* FSYNCS: first FSYNC found */
	bool in_reset_run;	/* last frame was a 4x FSYNC reset (reset once per run) */

	uint8_t fb[TC_CS_FRAME_FRAME_SIZE];	/* frame being gathered */
	unsigned fb_n;
	uint64_t frame_off;
	uint64_t pair_off[TC_CS_FRAME_FRAME_SIZE / 2];	/* sync modes: HSYNCs may split a frame */

	uint8_t hold[4];	/* sync modes: bytes kept back until the lookahead is known */
	unsigned hold_n;

	uint64_t unsync_off, unsync_n;	/* current run of bytes before the first FSYNC */

	struct tc_cs_frame_stats st;
	struct tc_cs_frame_err errs[TC_CS_FRAME_MAX_ERRS];
	size_t nerr;
};

static void add_err(struct tc_cs_frame *d, enum tc_cs_frame_err_kind kind, uint64_t off,
		    uint32_t len, uint8_t id)
{
	d->st.errors++;
	if (d->nerr < TC_CS_FRAME_MAX_ERRS)
		d->errs[d->nerr++] = (struct tc_cs_frame_err){ .off = off, .len = len, .id = id,
							  .kind = kind };
}

static bool is_fsync(const uint8_t *p)
{
	return p[0] == 0xff && p[1] == 0xff && p[2] == 0xff && p[3] == FSYNC_B3;
}

static void emit(struct tc_cs_frame *d, uint8_t id, const uint8_t *buf, size_t n, uint64_t off)
{
	if (!n)
		return;
	if (id == TC_CS_FRAME_NO_ID) {
		/* Data from before the first ID: nobody can own it. */
		d->st.unknown_bytes += n;
		return;
	}
	if (id == 0 || id >= 0x70) {
		if (id == 0)
			d->st.null_bytes += n;
		else
			d->st.reserved_bytes += n;
		if (d->flags & TC_CS_FRAME_ALL_IDS)
			d->fn(d->ctx, id, buf, n, off);
		return;
	}
	d->st.id_bytes += n;
	d->fn(d->ctx, id, buf, n, off);
}

static void note_id(struct tc_cs_frame *d, uint8_t id, uint64_t off)
{
	if (id >= 0x70)
		add_err(d, TC_CS_FRAME_E_RESERVED_ID, off, 1, id);
}

/* Split one complete frame f into per-ID runs. pair_off gives the input offset of each byte
 * pair when syncs may sit between them (NULL: contiguous from off). */
static void unpack(struct tc_cs_frame *d, const uint8_t *f, uint64_t off, const uint64_t *pair_off)
{
	uint8_t out[TC_CS_FRAME_FRAME_SIZE];
	size_t n = 0;
	uint8_t id = d->cur_id, flags = f[15];
	uint64_t run_off = off;	/* a run begun by an ID change is indexed at its ID byte */

	d->st.frames++;
	for (unsigned i = 0; i < 14; i += 2) {
		unsigned lsb = (flags >> (i / 2)) & 1;

		if (!(f[i] & 1)) {
			out[n++] = f[i] | lsb;
			out[n++] = f[i + 1];
			continue;
		}
		uint8_t nid = f[i] >> 1;

		if (nid != id) {
			uint64_t id_off = pair_off ? pair_off[i / 2] : off + i;

			/* Re-stating the current ID is no change: the flag is then moot. */
			note_id(d, nid, id_off);
			if (lsb)
				out[n++] = f[i + 1];
			emit(d, id, out, n, run_off);
			n = 0;
			id = nid;
			run_off = id_off;
			if (lsb)
				continue;
		}
		out[n++] = f[i + 1];
	}
	/* Byte 14 has no partner data byte: an ID there only applies to the next frame. */
	if (f[14] & 1) {
		uint8_t nid = f[14] >> 1;

		if (nid != id)
			note_id(d, nid, pair_off ? pair_off[7] : off + 14);
		emit(d, id, out, n, run_off);
		id = nid;
	} else {
		out[n++] = f[14] | (flags >> 7);
		emit(d, id, out, n, run_off);
	}
	d->cur_id = id;
}

/* Memory-aligned frame: maybe a 4x FSYNC reset frame, else trace. */
static void mem_frame(struct tc_cs_frame *d, const uint8_t *f, uint64_t off)
{
	if ((d->flags & TC_CS_FRAME_RESET_4X_FSYNC) && is_fsync(f)) {
		if (is_fsync(f + 4) && is_fsync(f + 8) && is_fsync(f + 12)) {
			d->st.fsync_bytes += TC_CS_FRAME_FRAME_SIZE;
			if (!d->in_reset_run) {
				d->in_reset_run = true;
				d->cur_id = TC_CS_FRAME_NO_ID;
				d->st.resets++;
				if (d->reset_fn)
					d->reset_fn(d->ctx, off);
			}
			return;
		}
		/* OpenCSD stops on this; dropping the frame keeps the alignment. */
		add_err(d, TC_CS_FRAME_E_RESET_PATTERN, off, TC_CS_FRAME_FRAME_SIZE, 0);
		d->st.dropped_bytes += TC_CS_FRAME_FRAME_SIZE;
		return;
	}
	d->in_reset_run = false;
	unpack(d, f, off, NULL);
}

static void feed_mem(struct tc_cs_frame *d, const uint8_t *p, size_t len)
{
	while (len) {
		if (!d->fb_n && len >= TC_CS_FRAME_FRAME_SIZE) {
			mem_frame(d, p, d->pos);	/* whole frame in place: no copy */
			p += TC_CS_FRAME_FRAME_SIZE;
			len -= TC_CS_FRAME_FRAME_SIZE;
			d->pos += TC_CS_FRAME_FRAME_SIZE;
			continue;
		}
		size_t n = TC_CS_FRAME_FRAME_SIZE - d->fb_n;

		if (n > len)
			n = len;
		if (!d->fb_n)
			d->frame_off = d->pos;
		memcpy(d->fb + d->fb_n, p, n);
		d->fb_n += n;
		p += n;
		len -= n;
		d->pos += n;
		if (d->fb_n == TC_CS_FRAME_FRAME_SIZE) {
			d->fb_n = 0;
			mem_frame(d, d->fb, d->frame_off);
		}
	}
}

static void drop_partial(struct tc_cs_frame *d)
{
	d->st.dropped_bytes += d->fb_n;
	d->fb_n = 0;
}

static void end_unsynced(struct tc_cs_frame *d)
{
	if (d->unsync_n)
		add_err(d, TC_CS_FRAME_E_NO_SYNC, d->unsync_off,
			d->unsync_n > UINT32_MAX ? UINT32_MAX : (uint32_t)d->unsync_n, 0);
	d->unsync_n = 0;
}

#define NEED_MORE (-1)

/* TPIU-style stream: one step at p (avail bytes, stream offset d->pos). Returns the bytes
 * consumed (0: state changed only) or NEED_MORE. final: no more bytes will follow, so a
 * lookahead that cannot be an FSYNC need not wait. */
static int step_sync(struct tc_cs_frame *d, const uint8_t *p, size_t avail, bool final)
{
	if ((d->flags & TC_CS_FRAME_FSYNCS) && !d->synced) {
		if (avail >= 4 && is_fsync(p)) {
			d->synced = true;
			end_unsynced(d);
			return 0;
		}
		if (avail < 4 && (!final || !avail))
			return NEED_MORE;
		if (!d->unsync_n)
			d->unsync_off = d->pos;
		d->unsync_n++;
		d->st.unsynced_bytes++;
		return 1;
	}
	/* FSYNCs are word aligned relative to the frame bytes gathered (as OpenCSD checks). */
	if (d->fb_n % 4 == 0) {
		if (avail < 4 && !final)
			return NEED_MORE;
		if (avail >= 4 && is_fsync(p)) {
			d->st.fsync_bytes += 4;
			if (d->fb_n || !(d->flags & TC_CS_FRAME_FSYNCS)) {
				/* OpenCSD stops here; we resync on this FSYNC instead. */
				add_err(d, TC_CS_FRAME_E_BAD_FSYNC, d->pos, 4, 0);
				drop_partial(d);
			}
			return 4;
		}
	}
	if (avail < 2)
		return NEED_MORE;
	if (p[0] == 0xff && p[1] == 0x7f) {
		/* An HSYNC: in a frame this pair could only be a change to reserved ID 0x7f. */
		d->st.hsync_bytes += 2;
		if (!(d->flags & TC_CS_FRAME_HSYNCS))
			add_err(d, TC_CS_FRAME_E_BAD_HSYNC, d->pos, 2, 0);
		return 2;
	}
	if (!d->fb_n)
		d->frame_off = d->pos;
	d->pair_off[d->fb_n / 2] = d->pos;
	d->fb[d->fb_n++] = p[0];
	d->fb[d->fb_n++] = p[1];
	if (d->fb_n == TC_CS_FRAME_FRAME_SIZE) {
		d->fb_n = 0;
		unpack(d, d->fb, d->frame_off, d->pair_off);
	}
	return 2;
}

/* Step through the held-back bytes until they run out or want more than they are. */
static void run_hold(struct tc_cs_frame *d, bool final)
{
	while (d->hold_n) {
		int r = step_sync(d, d->hold, d->hold_n, final);

		if (r == NEED_MORE)
			return;
		memmove(d->hold, d->hold + r, d->hold_n - r);
		d->hold_n -= r;
		d->pos += r;
	}
}

static void feed_sync(struct tc_cs_frame *d, const uint8_t *p, size_t len)
{
	size_t i = 0;
	int r;

	/* Bytes held from the last call: top up to the 4-byte lookahead and step through. */
	while (d->hold_n && len) {
		size_t take = sizeof(d->hold) - d->hold_n;

		if (take > len)
			take = len;
		memcpy(d->hold + d->hold_n, p, take);
		d->hold_n += take;
		p += take;
		len -= take;
		run_hold(d, false);
	}
	if (d->hold_n)
		return;
	while ((r = step_sync(d, p + i, len - i, false)) != NEED_MORE) {
		i += r;
		d->pos += r;
	}
	/* Fewer than 4 bytes left that need lookahead: keep them for the next call. */
	d->hold_n = len - i;
	memcpy(d->hold, p + i, d->hold_n);
}

void tc_cs_frame_feed(struct tc_cs_frame *d, const void *buf, size_t len)
{
	if (!d || !buf || !len)
		return;
	if (d->flags & TC_CS_FRAME_MEM_ALIGN)
		feed_mem(d, buf, len);
	else
		feed_sync(d, buf, len);
}

void tc_cs_frame_flush(struct tc_cs_frame *d)
{
	if (!d)
		return;
	if (!(d->flags & TC_CS_FRAME_MEM_ALIGN)) {
		run_hold(d, true);
		end_unsynced(d);
	}
	if (d->fb_n || d->hold_n) {
		uint64_t off = d->fb_n ? d->frame_off : d->pos;
		uint32_t n = d->fb_n + d->hold_n;

		add_err(d, TC_CS_FRAME_E_TRUNCATED, off, n, 0);
		d->st.dropped_bytes += n;
		d->pos += d->hold_n;
		d->fb_n = d->hold_n = 0;
	}
}

void tc_cs_frame_reset(struct tc_cs_frame *d)
{
	if (!d)
		return;
	/* Forgotten bytes were fed: they count for later offsets and as dropped, so that every
	 * input byte stays in exactly one stats bucket; a pending unsynced run is reported. */
	if (!(d->flags & TC_CS_FRAME_MEM_ALIGN))
		end_unsynced(d);
	d->st.dropped_bytes += d->fb_n + d->hold_n;
	d->pos += d->hold_n;
	d->hold_n = 0;
	d->fb_n = 0;
	d->cur_id = TC_CS_FRAME_NO_ID;
	d->synced = false;
	d->in_reset_run = false;
}

struct tc_cs_frame *tc_cs_frame_new(unsigned flags, tc_csf_data_fn fn, tc_csf_reset_fn reset_fn,
			  void *ctx, struct tc_err *e)
{
	const unsigned all = TC_CS_FRAME_MEM_ALIGN | TC_CS_FRAME_FSYNCS | TC_CS_FRAME_HSYNCS |
			     TC_CS_FRAME_RESET_4X_FSYNC | TC_CS_FRAME_ALL_IDS;
	const unsigned sync = TC_CS_FRAME_FSYNCS | TC_CS_FRAME_HSYNCS;
	struct tc_cs_frame *d;

	if (!fn) {
		tc_err_set(e, 0, "frame deformatter needs a data callback");
		return NULL;
	}
	if ((flags & ~all) || !!(flags & TC_CS_FRAME_MEM_ALIGN) == !!(flags & sync) ||
	    ((flags & TC_CS_FRAME_RESET_4X_FSYNC) && !(flags & TC_CS_FRAME_MEM_ALIGN))) {
		tc_err_set(e, 0, "frame deformatter flags 0x%x: need memory-aligned frames or "
			   "FSYNC/HSYNC framing (not both), 4x FSYNC reset only when aligned",
			   flags);
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		tc_err_sys(e, ENOMEM, "frame deformatter");
		return NULL;
	}
	d->flags = flags;
	d->fn = fn;
	d->reset_fn = reset_fn;
	d->ctx = ctx;
	d->cur_id = TC_CS_FRAME_NO_ID;
	return d;
}

void tc_cs_frame_free(struct tc_cs_frame *d)
{
	free(d);
}

const struct tc_cs_frame_stats *tc_cs_frame_stats(const struct tc_cs_frame *d)
{
	return &d->st;
}

const struct tc_cs_frame_err *tc_cs_frame_errors(const struct tc_cs_frame *d, size_t *n)
{
	*n = d->nerr;
	return d->errs;
}

void tc_cs_frame_err_str(const struct tc_cs_frame_err *e, char *buf, size_t size)
{
	unsigned long long off = e->off;

	switch (e->kind) {
	case TC_CS_FRAME_E_RESERVED_ID:
		snprintf(buf, size, "reserved trace ID 0x%02x at offset %llu", e->id, off);
		break;
	case TC_CS_FRAME_E_TRUNCATED:
		snprintf(buf, size, "truncated frame at offset %llu: %u of 16 bytes, dropped",
			 off, e->len);
		break;
	case TC_CS_FRAME_E_NO_SYNC:
		snprintf(buf, size, "%u bytes at offset %llu skipped before a frame sync",
			 e->len, off);
		break;
	case TC_CS_FRAME_E_BAD_FSYNC:
		snprintf(buf, size, "frame sync inside a frame at offset %llu, partial frame "
			 "dropped", off);
		break;
	case TC_CS_FRAME_E_BAD_HSYNC:
		snprintf(buf, size, "half-word sync at offset %llu in a stream not configured "
			 "for them, skipped", off);
		break;
	case TC_CS_FRAME_E_RESET_PATTERN:
		snprintf(buf, size, "frame at offset %llu starts with a frame sync but is not a "
			 "4x sync reset, dropped", off);
		break;
	default:
		snprintf(buf, size, "frame error %d at offset %llu", (int)e->kind, off);
		break;
	}
}

void tc_cs_frame_errors_to_diag(const struct tc_cs_frame *d, struct tc_diag *diag)
{
	char msg[160];

	for (size_t i = 0; i < d->nerr; i++) {
		char kind[32];

		/* one warning per kind of frame error, with how many more there were */
		tc_cs_frame_err_str(&d->errs[i], msg, sizeof(msg));
		snprintf(kind, sizeof(kind), "cs_frame error %d", (int)d->errs[i].kind);
		tc_diag_add_kind(diag, kind, "%s", msg);
	}
	if (d->st.errors > d->nerr)
		tc_diag_add(diag, "%llu more frame errors not listed",
			    (unsigned long long)(d->st.errors - d->nerr));
}
