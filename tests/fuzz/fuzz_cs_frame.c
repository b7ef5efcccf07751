/* libFuzzer target for the CoreSight frame deformatter (decoders/coresight/cs_frame.c).
 *
 * Every input goes through every valid flag mode (MEM_ALIGN, MEM_ALIGN|RESET_4X_FSYNC,
 * FSYNCS, HSYNCS, FSYNCS|HSYNCS, each with and without ALL_IDS), three times per mode:
 *   A  the whole input in one tc_cs_frame_feed(), then flush;
 *   B  the same bytes in chunks (sizes from a PRNG seeded by the input), then flush:
 *      everything observable (stats, errors, bytes and offsets per ID, resets) must equal A,
 *      since the deformatter promises any chunking gives the same result;
 *   C  chunks with tc_cs_frame_flush() and tc_cs_frame_reset() at random points.
 * The input's first byte picks the chunk sizes (low 3 bits) and how often C flushes or
 * resets (next bits); the byte itself is fed too, so snapshot buffers stay frame-aligned.
 * After every run each input byte must be in exactly one stats bucket (frames, dropped,
 * fsync, hsync, unsynced), delivered bytes must match the byte counters, errors must lie
 * inside the input. A broken invariant calls abort(), which libFuzzer reports as a crash. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/coresight/cs_frame.h"
#include "lib/util/diag.h"
#include "lib/util/err.h"
#include "tests/fuzz/fuzz_check.h"

static unsigned cur_flags;
static char cur_run = '-';

static void note_ctx(void)
{
	snprintf(fuzz_ctx, sizeof(fuzz_ctx), "mode 0x%x, run %c", cur_flags, cur_run);
}

static const unsigned modes[] = {
	TC_CS_FRAME_MEM_ALIGN,
	TC_CS_FRAME_MEM_ALIGN | TC_CS_FRAME_RESET_4X_FSYNC,
	TC_CS_FRAME_FSYNCS,
	TC_CS_FRAME_HSYNCS,
	TC_CS_FRAME_FSYNCS | TC_CS_FRAME_HSYNCS,
};

/* What one run delivered, compared between runs A and B. */
struct result {
	struct tc_cs_frame_stats st;
	uint64_t nbytes[128];		/* data bytes delivered per ID */
	uint64_t hash[128];		/* FNV-1a over (frame offset, byte) per ID */
	uint64_t last_off[128];
	uint64_t resets, reset_hash;
	size_t nerr;
	struct tc_cs_frame_err errs[TC_CS_FRAME_MAX_ERRS];
};

struct sink {
	unsigned flags;
	uint64_t fed;			/* bytes fed so far */
	uint64_t last_off;		/* offsets come in stream order */
	bool any;
	bool aligned;			/* no flush/reset yet: frames start at multiples of 16 */
	struct result *r;
};

static uint64_t fnv(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void on_data(void *ctx, uint8_t id, const uint8_t *data, size_t len, uint64_t off)
{
	struct sink *s = ctx;
	struct result *r = s->r;
	uint64_t h;

	CHECK(data != NULL);
	CHECK(len >= 1 && len <= TC_CS_FRAME_FRAME_SIZE - 1);
	CHECK(id < 128);	/* 7-bit IDs; never TC_CS_FRAME_NO_ID */
	if (!(s->flags & TC_CS_FRAME_ALL_IDS))
		CHECK(id >= 0x01 && id <= 0x6f);
	CHECK(off < s->fed);
	CHECK(!s->any || off >= s->last_off);
	/* a run starts at its frame or at the ID byte that began it: ID bytes sit at even
	 * positions of a frame */
	if (s->aligned && (s->flags & TC_CS_FRAME_MEM_ALIGN))
		CHECK(off % 2 == 0);
	s->any = true;
	s->last_off = off;
	h = fnv(r->hash[id] ? r->hash[id] : 0xcbf29ce484222325ULL, off);
	for (size_t i = 0; i < len; i++)	/* reads every byte: ASan checks the pointer */
		h = (h ^ data[i]) * 0x100000001b3ULL;
	r->hash[id] = h;
	r->nbytes[id] += len;
	r->last_off[id] = off;
}

static void on_reset(void *ctx, uint64_t off)
{
	struct sink *s = ctx;

	CHECK(s->flags & TC_CS_FRAME_RESET_4X_FSYNC);
	CHECK(off + TC_CS_FRAME_FRAME_SIZE <= s->fed);
	if (s->aligned)
		CHECK(off % TC_CS_FRAME_FRAME_SIZE == 0);
	s->r->resets++;
	s->r->reset_hash = fnv(s->r->reset_hash ? s->r->reset_hash : 1, off);
}

static uint32_t rnd(uint32_t *r)
{
	*r = *r * 1103515245u + 12345u;
	return *r >> 8;
}

/* Every byte in one bucket, deliveries matching the counters, errors inside the input. */
static void check_result(struct tc_cs_frame *d, struct sink *s, uint64_t len)
{
	const struct tc_cs_frame_stats *st = tc_cs_frame_stats(d);
	struct result *r = s->r;
	uint64_t ids = 0, reserved = 0, data, nosync = 0, trunc = 0, pattern = 0;
	const struct tc_cs_frame_err *errs;
	struct tc_diag diag = { 0 };
	size_t nerr;
	unsigned kinds;

	CHECK(st->frames * TC_CS_FRAME_FRAME_SIZE + st->dropped_bytes + st->fsync_bytes +
	      st->hsync_bytes + st->unsynced_bytes == len);
	for (int id = 0x01; id <= 0x6f; id++)
		ids += r->nbytes[id];
	for (int id = 0x70; id < 0x80; id++)
		reserved += r->nbytes[id];
	CHECK(ids == st->id_bytes);
	if (s->flags & TC_CS_FRAME_ALL_IDS) {
		CHECK(r->nbytes[0] == st->null_bytes);
		CHECK(reserved == st->reserved_bytes);
	} else {
		CHECK(r->nbytes[0] == 0 && reserved == 0);
	}
	/* A frame has 7 data-only bytes and 8 that are data or an ID. */
	data = st->id_bytes + st->null_bytes + st->reserved_bytes + st->unknown_bytes;
	CHECK(data >= 7 * st->frames && data <= 15 * st->frames);
	CHECK(r->resets == st->resets);
	if (s->flags & TC_CS_FRAME_MEM_ALIGN) {
		CHECK(st->hsync_bytes == 0 && st->unsynced_bytes == 0);
		if (!(s->flags & TC_CS_FRAME_RESET_4X_FSYNC))
			CHECK(st->fsync_bytes == 0 && st->resets == 0);
		CHECK(st->fsync_bytes % TC_CS_FRAME_FRAME_SIZE == 0);
		CHECK(st->resets * TC_CS_FRAME_FRAME_SIZE <= st->fsync_bytes);
	} else {
		CHECK(st->resets == 0);
		CHECK(st->fsync_bytes % 4 == 0 && st->hsync_bytes % 2 == 0);
		if (!(s->flags & TC_CS_FRAME_FSYNCS))
			CHECK(st->unsynced_bytes == 0);
	}

	errs = tc_cs_frame_errors(d, &nerr);
	kinds = 0;
	CHECK(nerr <= TC_CS_FRAME_MAX_ERRS);
	CHECK(nerr == (st->errors < TC_CS_FRAME_MAX_ERRS ? st->errors : TC_CS_FRAME_MAX_ERRS));
	for (size_t i = 0; i < nerr; i++) {
		const struct tc_cs_frame_err *e = &errs[i];
		char small[8], big[256];

		CHECK(e->off <= len);
		switch (e->kind) {
		case TC_CS_FRAME_E_RESERVED_ID:
			CHECK(e->id >= 0x70 && e->id < 0x80);
			CHECK(e->off < len);
			break;
		case TC_CS_FRAME_E_TRUNCATED:
			CHECK(e->len > 0 && e->len < TC_CS_FRAME_FRAME_SIZE + 4);
			trunc += e->len;
			break;
		case TC_CS_FRAME_E_NO_SYNC:
			CHECK(s->flags & TC_CS_FRAME_FSYNCS);
			CHECK(e->len > 0);
			nosync += e->len;
			break;
		case TC_CS_FRAME_E_BAD_FSYNC:
			CHECK(!(s->flags & TC_CS_FRAME_MEM_ALIGN) && e->len == 4);
			break;
		case TC_CS_FRAME_E_BAD_HSYNC:
			CHECK(!(s->flags & (TC_CS_FRAME_MEM_ALIGN | TC_CS_FRAME_HSYNCS)) &&
			      e->len == 2);
			break;
		case TC_CS_FRAME_E_RESET_PATTERN:
			CHECK((s->flags & TC_CS_FRAME_RESET_4X_FSYNC) &&
			      e->len == TC_CS_FRAME_FRAME_SIZE);
			pattern += e->len;
			break;
		default:
			CHECK(!"unknown error kind");
		}
		if (e->kind != TC_CS_FRAME_E_RESERVED_ID)
			CHECK(e->off + e->len <= len);
		CHECK((unsigned)e->kind < 32);
		kinds |= 1u << e->kind;
		tc_cs_frame_err_str(e, small, sizeof(small));
		CHECK(strlen(small) < sizeof(small));
		tc_cs_frame_err_str(e, big, sizeof(big));
		CHECK(big[0] && strlen(big) < sizeof(big));
	}
	if (st->errors <= TC_CS_FRAME_MAX_ERRS) {
		/* All errors listed: the skipped and dropped bytes are all explained. */
		CHECK(nosync == st->unsynced_bytes);
		CHECK(trunc + pattern <= st->dropped_bytes);
	}
	tc_cs_frame_errors_to_diag(d, &diag);
	/* one warning per kind of error listed (with a count), one for those not listed */
	CHECK(diag.n == (size_t)__builtin_popcount(kinds) + (st->errors > nerr));
	tc_diag_free(&diag);

	r->st = *st;
	r->nerr = nerr;
	memcpy(r->errs, errs, nerr * sizeof(*errs));
}

static struct tc_cs_frame *start(unsigned flags, struct sink *s, struct result *r, char run)
{
	struct tc_err e = { 0 };
	struct tc_cs_frame *d;

	cur_flags = flags;
	cur_run = run;
	note_ctx();
	memset(r, 0, sizeof(*r));
	memset(s, 0, sizeof(*s));
	s->flags = flags;
	s->aligned = true;
	s->r = r;
	d = tc_cs_frame_new(flags, on_data, on_reset, s, &e);
	CHECK(d != NULL);
	return d;
}

static void feed(struct tc_cs_frame *d, struct sink *s, const uint8_t *p, size_t n)
{
	s->fed += n;
	tc_cs_frame_feed(d, p, n);
}

static bool same_result(const struct result *a, const struct result *b)
{
	if (memcmp(&a->st, &b->st, sizeof(a->st)) || memcmp(a->nbytes, b->nbytes, sizeof(a->nbytes)) ||
	    memcmp(a->hash, b->hash, sizeof(a->hash)) ||
	    memcmp(a->last_off, b->last_off, sizeof(a->last_off)) || a->resets != b->resets ||
	    a->reset_hash != b->reset_hash || a->nerr != b->nerr)
		return false;
	for (size_t i = 0; i < a->nerr; i++)
		if (a->errs[i].off != b->errs[i].off || a->errs[i].len != b->errs[i].len ||
		    a->errs[i].id != b->errs[i].id || a->errs[i].kind != b->errs[i].kind)
			return false;
	return true;
}

/* Flags that tc_cs_frame_new must refuse, and a missing callback. */
static void check_bad_flags(void)
{
	const unsigned all = TC_CS_FRAME_MEM_ALIGN | TC_CS_FRAME_FSYNCS | TC_CS_FRAME_HSYNCS |
			     TC_CS_FRAME_RESET_4X_FSYNC | TC_CS_FRAME_ALL_IDS;

	for (unsigned f = 0; f < 0x40; f++) {
		bool valid = false;
		struct tc_err e = { 0 };
		struct tc_cs_frame *d;

		for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++)
			if ((f & ~TC_CS_FRAME_ALL_IDS) == modes[m])
				valid = true;
		valid = valid && !(f & ~all);
		cur_flags = f;
		note_ctx();
		d = tc_cs_frame_new(f, on_data, NULL, NULL, &e);
		CHECK(!d == !valid);
		CHECK(d || e.msg[0]);
		tc_cs_frame_free(d);
		CHECK(tc_cs_frame_new(f, NULL, NULL, NULL, NULL) == NULL);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static const size_t chunk_max[8] = { 1, 2, 3, 5, 7, 16, 33, 4096 };
	static bool checked;
	static struct result ra, rb, rc;
	uint8_t sel = len ? data[0] : 0;
	uint32_t seed0 = sel | (uint32_t)len << 8;

	if (!checked) {
		check_bad_flags();
		checked = true;
	}
	for (size_t m = 0; m < 2 * sizeof(modes) / sizeof(modes[0]); m++) {
		unsigned flags = modes[m / 2] | (m % 2 ? TC_CS_FRAME_ALL_IDS : 0);
		struct sink s;
		struct tc_cs_frame *d;
		uint32_t r;

		/* A: all at once. */
		d = start(flags, &s, &ra, 'A');
		feed(d, &s, data, len);
		tc_cs_frame_flush(d);
		check_result(d, &s, len);
		tc_cs_frame_free(d);

		/* B: chunked; must be indistinguishable from A. */
		d = start(flags, &s, &rb, 'B');
		r = seed0;
		for (size_t i = 0, n; i < len; i += n) {
			n = 1 + rnd(&r) % chunk_max[sel & 7];
			if (n > len - i)
				n = len - i;
			feed(d, &s, data + i, n);
		}
		tc_cs_frame_flush(d);
		check_result(d, &s, len);
		tc_cs_frame_free(d);
		CHECK(same_result(&ra, &rb));

		/* C: chunked, with flushes and resets (and empty feeds) in between. */
		d = start(flags, &s, &rc, 'C');
		r = seed0 ^ 0x5a5a5a5a;
		unsigned every = 2 + ((sel >> 3) & 7) * 4;

		for (size_t i = 0, n; i < len; i += n) {
			uint32_t op = rnd(&r);

			n = 1 + rnd(&r) % chunk_max[(sel + 3) & 7];
			if (n > len - i)
				n = len - i;
			feed(d, &s, data + i, n);
			if (op % every == 0) {
				tc_cs_frame_flush(d);
				s.aligned = false;
			} else if (op % every == 1 && (sel & 0x40)) {
				tc_cs_frame_reset(d);
				s.aligned = false;
			} else if (op % every == 2) {
				tc_cs_frame_feed(d, data, 0);
				tc_cs_frame_feed(d, NULL, 0);
			}
		}
		tc_cs_frame_flush(d);
		tc_cs_frame_flush(d);	/* a second flush has nothing left */
		check_result(d, &s, len);
		tc_cs_frame_free(d);
	}
	return 0;
}
