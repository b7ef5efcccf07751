/* CoreSight frame deformatter (decoders/coresight/cs_frame.c): hand-made frames, and every formatted
 * OpenCSD snapshot compared byte for byte, per trace ID, with OpenCSD 1.3.3's own
 * deformatter output (the ID_DATA lines of trc_pkt_lister -o_raw_unpacked). */
#include <stdint.h>
#include <time.h>

#include "decoders/coresight/cs_frame.h"
#include "lib/util/diag.h"
#include "tests/unit/tc_test.h"

/* ---- collecting what the deformatter delivers, per ID ---- */

struct idstream {
	uint8_t *b;
	uint64_t *off;		/* frame offset (ours) or ID_DATA index (OpenCSD) per byte */
	size_t n, cap;
};

struct coll {
	struct idstream s[128];
	uint64_t unknown;	/* OpenCSD's ID_DATA[????] bytes */
	unsigned resets;
	uint64_t reset_off;
};

static void put(struct idstream *s, const uint8_t *b, size_t n, uint64_t off)
{
	if (s->n + n > s->cap) {
		size_t cap = s->cap ? s->cap : 256;

		while (cap < s->n + n)
			cap *= 2;
		s->b = realloc(s->b, cap);
		s->off = realloc(s->off, cap * sizeof(*s->off));
		if (!s->b || !s->off)
			abort();
		s->cap = cap;
	}
	memcpy(s->b + s->n, b, n);
	for (size_t i = 0; i < n; i++)
		s->off[s->n + i] = off;
	s->n += n;
}

static void on_data(void *ctx, uint8_t id, const uint8_t *data, size_t len, uint64_t off)
{
	struct coll *c = ctx;

	if (id < 128)
		put(&c->s[id], data, len, off);
}

static void on_reset(void *ctx, uint64_t off)
{
	struct coll *c = ctx;

	c->resets++;
	c->reset_off = off;
}

static void coll_free(struct coll *c)
{
	for (int i = 0; i < 128; i++) {
		free(c->s[i].b);
		free(c->s[i].off);
	}
	memset(c, 0, sizeof(*c));
}

static int bytes_are(const struct idstream *s, const uint8_t *want, size_t n)
{
	return s->n == n && (!n || !memcmp(s->b, want, n));
}

static struct tc_cs_frame *mk(unsigned flags, struct coll *c)
{
	struct tc_err e = { 0 };
	struct tc_cs_frame *d = tc_cs_frame_new(flags, on_data, on_reset, c, &e);

	if (!d) {
		printf("#   tc_cs_frame_new: %s\n", e.msg);
		abort();
	}
	return d;
}

static int has_err(struct tc_cs_frame *d, enum tc_cs_frame_err_kind k, uint64_t off, uint32_t len)
{
	size_t n;
	const struct tc_cs_frame_err *e = tc_cs_frame_errors(d, &n);

	for (size_t i = 0; i < n; i++)
		if (e[i].kind == k && e[i].off == off && (!len || e[i].len == len))
			return 1;
	return 0;
}

/* ---- hand-made frames ---- */

/* ID 0x10 at byte 0 (flag 0: byte 1 is 0x10's), data 0x02 with its LSB from flag bit 1,
 * ID 0x11 at byte 4 whose flag bit 2 decides who owns byte 5. */
static void frame_two_ids(uint8_t f[16], int byte5_to_old)
{
	static const uint8_t base[16] = { 0x21, 0x01, 0x02, 0x03, 0x23, 0x05, 0x06, 0x07,
					  0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x00 };

	memcpy(f, base, 16);
	f[15] = 0x02 | (byte5_to_old ? 0x04 : 0);
}

TEST(id_change_data_goes_to_old_id_when_flagged)
{
	static const uint8_t id10[] = { 0x01, 0x03, 0x03, 0x05 };
	static const uint8_t id11[] = { 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e };
	struct coll c = { 0 };
	struct tc_cs_frame *d = mk(TC_CS_FRAME_MEM_ALIGN, &c);
	uint8_t f[16];

	frame_two_ids(f, 1);
	tc_cs_frame_feed(d, f, 16);
	tc_cs_frame_flush(d);
	CHECK(bytes_are(&c.s[0x10], id10, sizeof(id10)));
	CHECK(bytes_are(&c.s[0x11], id11, sizeof(id11)));
	CHECK_INT(tc_cs_frame_stats(d)->id_bytes, 13);
	CHECK_INT(tc_cs_frame_stats(d)->frames, 1);
	CHECK_INT(tc_cs_frame_stats(d)->errors, 0);
	tc_cs_frame_free(d);
	coll_free(&c);
}

TEST(id_change_data_goes_to_new_id_when_not_flagged)
{
	static const uint8_t id10[] = { 0x01, 0x03, 0x03 };
	static const uint8_t id11[] = { 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d,
					0x0e };
	struct coll c = { 0 };
	struct tc_cs_frame *d = mk(TC_CS_FRAME_MEM_ALIGN, &c);
	uint8_t f[16];

	frame_two_ids(f, 0);
	tc_cs_frame_feed(d, f, 16);
	CHECK(bytes_are(&c.s[0x10], id10, sizeof(id10)));
	CHECK(bytes_are(&c.s[0x11], id11, sizeof(id11)));
	tc_cs_frame_free(d);
	coll_free(&c);
}

TEST(data_before_any_id_is_counted_not_delivered)
{
	/* All data, no ID: 15 bytes nobody owns; byte 14's ID applies to the next frame. */
	uint8_t f[32] = { 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b,
			  0x1c, 0x1d, 0x25, 0xff };
	struct coll c = { 0 };
	struct tc_cs_frame *d = mk(TC_CS_FRAME_MEM_ALIGN, &c);

	/* Second frame: data only, flags 0x00. */
	for (int i = 16; i < 31; i++)
		f[i] = (uint8_t)(2 * i);
	tc_cs_frame_feed(d, f, 32);
	CHECK_INT(tc_cs_frame_stats(d)->unknown_bytes, 14);
	CHECK_INT(c.s[0x12].n, 15);
	CHECK_INT(c.s[0x12].b[0], 32);
	CHECK_INT(c.s[0x12].off[0], 16);
	for (int i = 0; i < 128; i++)
		if (i != 0x12)
			CHECK_INT(c.s[i].n, 0);
	tc_cs_frame_free(d);
	coll_free(&c);
}

TEST(frame_split_across_feeds_gives_same_result)
{
	uint8_t buf[48];
	struct coll whole = { 0 }, bytewise = { 0 }, odd = { 0 };
	struct tc_cs_frame *d1 = mk(TC_CS_FRAME_MEM_ALIGN, &whole),
			   *d2 = mk(TC_CS_FRAME_MEM_ALIGN, &bytewise);
	struct tc_cs_frame *d3 = mk(TC_CS_FRAME_MEM_ALIGN, &odd);

	frame_two_ids(buf, 1);
	frame_two_ids(buf + 16, 0);
	frame_two_ids(buf + 32, 1);
	buf[36] = 0x21;		/* third frame: ID 0x10 at byte 4 too (no change) */
	tc_cs_frame_feed(d1, buf, sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i++)
		tc_cs_frame_feed(d2, buf + i, 1);
	tc_cs_frame_feed(d3, buf, 5);
	tc_cs_frame_feed(d3, buf + 5, 20);
	tc_cs_frame_feed(d3, buf + 25, 23);
	for (int id = 0; id < 128; id++) {
		CHECK(bytes_are(&bytewise.s[id], whole.s[id].b, whole.s[id].n));
		CHECK(bytes_are(&odd.s[id], whole.s[id].b, whole.s[id].n));
		for (size_t i = 0; i < whole.s[id].n && i < bytewise.s[id].n; i++)
			CHECK(bytewise.s[id].off[i] == whole.s[id].off[i]);
	}
	CHECK_INT(whole.s[0x10].n, 4 + 3 + 13);
	CHECK_INT(whole.s[0x10].off[whole.s[0x10].n - 1], 32);
	CHECK_INT(tc_cs_frame_stats(d2)->frames, 3);
	tc_cs_frame_free(d1);
	tc_cs_frame_free(d2);
	tc_cs_frame_free(d3);
	coll_free(&whole);
	coll_free(&bytewise);
	coll_free(&odd);
}

static const uint8_t fsync[4] = { 0xff, 0xff, 0xff, 0x7f };

TEST(four_fsyncs_reset_the_current_id)
{
	uint8_t buf[64];
	struct coll c = { 0 };
	struct tc_cs_frame *d = mk(TC_CS_FRAME_MEM_ALIGN | TC_CS_FRAME_RESET_4X_FSYNC, &c);

	frame_two_ids(buf, 1);			/* ends with ID 0x11 current */
	for (int i = 0; i < 4; i++)
		memcpy(buf + 16 + 4 * i, fsync, 4);	/* one full frame of FSYNCs */
	memset(buf + 32, 0x40, 15);		/* data only */
	buf[47] = 0;
	memcpy(buf + 48, fsync, 4);		/* an FSYNC that is not a whole frame of them */
	memset(buf + 52, 0x21, 12);
	tc_cs_frame_feed(d, buf, sizeof(buf));
	CHECK_INT(c.resets, 1);
	CHECK_INT(c.reset_off, 16);
	CHECK_INT(tc_cs_frame_stats(d)->resets, 1);
	CHECK_INT(c.s[0x11].n, 9);		/* nothing after the reset */
	CHECK_INT(tc_cs_frame_stats(d)->unknown_bytes, 15);
	CHECK(has_err(d, TC_CS_FRAME_E_RESET_PATTERN, 48, 16));
	CHECK_INT(tc_cs_frame_stats(d)->dropped_bytes, 16);
	tc_cs_frame_free(d);
	coll_free(&c);

	/* Without the flag an FSYNC frame is just (reserved-ID) frame data, as in OpenCSD. */
	d = mk(TC_CS_FRAME_MEM_ALIGN, &c);
	tc_cs_frame_feed(d, buf, 32);
	CHECK_INT(c.resets, 0);
	CHECK(has_err(d, TC_CS_FRAME_E_RESERVED_ID, 16, 1));
	tc_cs_frame_free(d);
	coll_free(&c);
}

TEST(reserved_and_null_ids_reported_with_offset)
{
	uint8_t buf[32];
	struct coll c = { 0 }, all = { 0 };
	struct tc_cs_frame *d = mk(TC_CS_FRAME_MEM_ALIGN, &c);
	struct tc_cs_frame *da = mk(TC_CS_FRAME_MEM_ALIGN | TC_CS_FRAME_ALL_IDS, &all);
	struct tc_diag diag = { 0 };
	size_t n;

	frame_two_ids(buf, 0);
	frame_two_ids(buf + 16, 0);
	buf[16 + 6] = 0xff;	/* ID 0x7f */
	buf[16 + 10] = 0x01;	/* ID 0x00 */
	tc_cs_frame_feed(d, buf, 32);
	tc_cs_frame_feed(da, buf, 32);
	tc_cs_frame_errors(d, &n);
	CHECK_INT(n, 1);
	CHECK(has_err(d, TC_CS_FRAME_E_RESERVED_ID, 22, 1));
	CHECK_INT(tc_cs_frame_errors(d, &n)[0].id, 0x7f);
	CHECK_INT(tc_cs_frame_stats(d)->reserved_bytes, 3);	/* bytes 7, 8, 9 (10 is an ID) */
	CHECK_INT(tc_cs_frame_stats(d)->null_bytes, 4);	/* bytes 11..14 */
	CHECK_INT(c.s[0x7f].n, 0);
	CHECK_INT(c.s[0].n, 0);
	CHECK_INT(all.s[0x7f].n, 3);
	CHECK_INT(all.s[0].n, 4);
	tc_cs_frame_errors_to_diag(d, &diag);
	CHECK_INT(diag.n, 1);
	CHECK_STR(diag.n ? diag.msgs[0].text : "", "reserved trace ID 0x7f at offset 22");
	tc_diag_free(&diag);
	tc_cs_frame_free(d);
	tc_cs_frame_free(da);
	coll_free(&c);
	coll_free(&all);
}

TEST(truncated_buffer_reported_and_dropped)
{
	uint8_t buf[21];
	struct coll c = { 0 };
	struct tc_cs_frame *d = mk(TC_CS_FRAME_MEM_ALIGN, &c);

	frame_two_ids(buf, 1);
	memset(buf + 16, 0x21, 5);
	tc_cs_frame_feed(d, buf, sizeof(buf));
	CHECK_INT(c.s[0x10].n, 4);
	tc_cs_frame_flush(d);
	CHECK(has_err(d, TC_CS_FRAME_E_TRUNCATED, 16, 5));
	CHECK_INT(tc_cs_frame_stats(d)->dropped_bytes, 5);
	CHECK_INT(c.s[0x10].n, 4);
	/* After a flush the next byte starts a frame again. */
	tc_cs_frame_feed(d, buf, 16);
	CHECK_INT(c.s[0x11].n, 18);
	/* The frame starts at 21; the run for 0x11 at its ID byte 4 bytes in. */
	CHECK_INT(c.s[0x11].off[17], 25);
	tc_cs_frame_free(d);
	coll_free(&c);
}

TEST(tpiu_fsync_hsync_framing)
{
	/* 3 junk bytes, FSYNC, a frame with an HSYNC after its 3rd pair, 2 FSYNCs, a frame,
	 * then an FSYNC in the middle of a frame, then a final frame cut short. */
	uint8_t buf[128], f[16];
	size_t n = 0;
	struct coll c[3] = { 0 };
	struct tc_cs_frame *d;

	memcpy(buf + n, "\x7f\xff\xff", 3);
	n += 3;
	memcpy(buf + n, fsync, 4);
	n += 4;
	frame_two_ids(f, 1);
	memcpy(buf + n, f, 6);
	n += 6;
	buf[n++] = 0xff;
	buf[n++] = 0x7f;
	memcpy(buf + n, f + 6, 10);
	n += 10;
	memcpy(buf + n, fsync, 4);
	memcpy(buf + n + 4, fsync, 4);
	n += 8;
	frame_two_ids(buf + n, 0);		/* frame at 33 */
	n += 16;
	memcpy(buf + n, f, 8);			/* partial frame ... */
	memcpy(buf + n + 8, fsync, 4);		/* ... hit by an FSYNC at 57 */
	n += 12;
	frame_two_ids(buf + n, 1);		/* frame at 61 */
	n += 16;
	memcpy(buf + n, f, 6);			/* 6 bytes at 77, then end */
	n += 6;

	for (int pass = 0; pass < 3; pass++) {
		d = mk(TC_CS_FRAME_FSYNCS | TC_CS_FRAME_HSYNCS, &c[pass]);
		if (pass == 0) {
			tc_cs_frame_feed(d, buf, n);
		} else {
			/* Chunks of 1 and of 3 bytes: FSYNCs and HSYNCs straddle the calls. */
			size_t step = pass == 1 ? 1 : 3;

			for (size_t i = 0; i < n; i += step)
				tc_cs_frame_feed(d, buf + i, n - i < step ? n - i : step);
		}
		tc_cs_frame_flush(d);
		CHECK_INT(tc_cs_frame_stats(d)->unsynced_bytes, 3);
		CHECK(has_err(d, TC_CS_FRAME_E_NO_SYNC, 0, 3));
		CHECK_INT(tc_cs_frame_stats(d)->hsync_bytes, 2);
		CHECK_INT(tc_cs_frame_stats(d)->fsync_bytes, 16);
		CHECK(has_err(d, TC_CS_FRAME_E_BAD_FSYNC, 57, 4));
		CHECK(has_err(d, TC_CS_FRAME_E_TRUNCATED, 77, 6));
		CHECK_INT(tc_cs_frame_stats(d)->dropped_bytes, 8 + 6);
		CHECK_INT(tc_cs_frame_stats(d)->frames, 3);
		CHECK_INT(tc_cs_frame_stats(d)->errors, 3);
		/* 0x10: 4 + 3 + 4 bytes from the frames at 7, 33, 61. */
		CHECK_INT(c[pass].s[0x10].n, 11);
		if (c[pass].s[0x10].n == 11) {
			CHECK_INT(c[pass].s[0x10].off[0], 7);
			CHECK_INT(c[pass].s[0x10].off[4], 33);
			CHECK_INT(c[pass].s[0x10].off[7], 61);
		}
		CHECK(bytes_are(&c[pass].s[0x11], c[0].s[0x11].b, c[0].s[0x11].n));
		tc_cs_frame_free(d);
	}
	CHECK_INT(c[0].s[0x11].n, 9 + 10 + 9);
	for (int i = 0; i < 3; i++)
		coll_free(&c[i]);
}

TEST(hsync_without_flag_is_an_error)
{
	uint8_t buf[24];
	struct coll c = { 0 };
	struct tc_cs_frame *d = mk(TC_CS_FRAME_FSYNCS, &c);

	memcpy(buf, fsync, 4);
	frame_two_ids(buf + 4, 1);
	memmove(buf + 8, buf + 6, 14);
	buf[6] = 0xff;
	buf[7] = 0x7f;
	tc_cs_frame_feed(d, buf, 22);
	tc_cs_frame_flush(d);
	CHECK(has_err(d, TC_CS_FRAME_E_BAD_HSYNC, 6, 2));
	CHECK_INT(c.s[0x10].n, 4);
	CHECK_INT(c.s[0x11].n, 9);
	tc_cs_frame_free(d);
	coll_free(&c);
}

TEST(rejects_bad_flags)
{
	static const unsigned bad[] = {
		0,
		TC_CS_FRAME_ALL_IDS,
		TC_CS_FRAME_MEM_ALIGN | TC_CS_FRAME_FSYNCS,
		TC_CS_FRAME_MEM_ALIGN | TC_CS_FRAME_HSYNCS,
		TC_CS_FRAME_FSYNCS | TC_CS_FRAME_RESET_4X_FSYNC,
		0x100,
	};
	struct tc_err e;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e.msg[0] = '\0';
		CHECK(tc_cs_frame_new(bad[i], on_data, NULL, NULL, &e) == NULL);
		CHECK(strstr(e.msg, "frame deformatter") != NULL);
	}
	CHECK(tc_cs_frame_new(TC_CS_FRAME_MEM_ALIGN, NULL, NULL, NULL, &e) == NULL);
}

static void discard(void *ctx, uint8_t id, const uint8_t *data, size_t len, uint64_t off)
{
	(void)ctx, (void)id, (void)data, (void)len, (void)off;
}

TEST(random_input_every_byte_accounted_for)
{
	/* Garbage rich in ff/7f (sync look-alikes), random chunking: each input byte must end
	 * up in exactly one bucket, and ASan builds check that nothing reads out of bounds. */
	static const unsigned modes[] = {
		TC_CS_FRAME_MEM_ALIGN,
		TC_CS_FRAME_MEM_ALIGN | TC_CS_FRAME_RESET_4X_FSYNC,
		TC_CS_FRAME_FSYNCS,
		TC_CS_FRAME_HSYNCS,
		TC_CS_FRAME_FSYNCS | TC_CS_FRAME_HSYNCS,
	};
	static const uint8_t pick[] = { 0xff, 0xff, 0xff, 0x7f, 0x7f, 0x00, 0x21, 0x23 };
	uint8_t buf[4096];
	uint32_t r = 12345;

	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		for (int iter = 0; iter < 40; iter++) {
			struct tc_cs_frame *d =
				tc_cs_frame_new(modes[m], discard, NULL, NULL, NULL);
			const struct tc_cs_frame_stats *st;
			size_t len;

			CHECK(d != NULL);
			if (!d)
				return;
			r = r * 1103515245 + 12345;
			len = (r >> 8) % sizeof(buf);
			for (size_t i = 0; i < len; i++) {
				r = r * 1103515245 + 12345;
				buf[i] = (r >> 24) & 1 ? pick[(r >> 16) & 7] : (uint8_t)(r >> 8);
			}
			for (size_t i = 0, n; i < len; i += n) {
				r = r * 1103515245 + 12345;
				n = 1 + (r >> 16) % 40;
				if (n > len - i)
					n = len - i;
				tc_cs_frame_feed(d, buf + i, n);
			}
			tc_cs_frame_flush(d);
			st = tc_cs_frame_stats(d);
			CHECK_INT(st->frames * 16 + st->dropped_bytes + st->fsync_bytes +
				  st->hsync_bytes + st->unsynced_bytes, len);
			tc_cs_frame_free(d);
		}
	}
}

/* ---- OpenCSD ground truth ---- */

struct snap {
	const char *name;
	const char *ppl;	/* under opencsd/results */
	const char *bin;	/* under opencsd */
	unsigned flags;
	int dstream;		/* DSTREAM file: 512-byte blocks ending in an 8-byte footer */
};

/* Buffers as named by each snapshot's trace.ini (first buffer: what trc_pkt_lister reads). */
static const struct snap snaps[] = {
	{ "juno_r1_1", "juno_r1_1_raw.ppl.xz", "juno_r1_1/cstrace.bin", TC_CS_FRAME_MEM_ALIGN, 0 },
	{ "TC2", "TC2_raw.ppl.xz", "TC2/cstrace.bin", TC_CS_FRAME_MEM_ALIGN, 0 },
	{ "Snowball", "Snowball_raw.ppl", "Snowball/cstrace.bin", TC_CS_FRAME_MEM_ALIGN, 0 },
	{ "bugfix-exact-match", "bugfix-exact-match_raw.ppl.xz", "bugfix-exact-match/cstrace.bin",
	  TC_CS_FRAME_MEM_ALIGN, 0 },
	/* trace.ini format=dstream_coresight: OpenCSD uses FSYNCs only (no HSYNCs). */
	{ "a55-test-tpiu", "a55-test-tpiu.ppl.xz", "a55-test-tpiu/DSTREAM_0.bin",
	  TC_CS_FRAME_FSYNCS, 1 },
};

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Append the "xx xx xx" bytes at p to s (or count them into *unknown when s is NULL). */
static void put_hex(const char *p, struct idstream *s, uint64_t *unknown, uint64_t idx)
{
	for (;;) {
		while (*p == ' ')
			p++;
		int hi = hexval(p[0]), lo = hi < 0 ? -1 : hexval(p[1]);
		uint8_t b;

		if (hi < 0 || lo < 0)
			return;
		b = (uint8_t)(hi << 4 | lo);
		if (s)
			put(s, &b, 1, idx);
		else
			(*unknown)++;
		p += 2;
	}
}

/* Read the ID_DATA lines of a trc_pkt_lister -o_raw_unpacked listing into c. */
static int load_ppl(const char *path, struct coll *c)
{
	size_t len = strlen(path);
	int xz = len > 3 && !strcmp(path + len - 3, ".xz");
	char cmd[4200], *line = NULL;
	size_t cap = 0;
	FILE *f;
	struct idstream *last = NULL;
	uint64_t last_idx = 0;
	int nlines = 0, last_is_id = 0;

	if (xz) {
		snprintf(cmd, sizeof(cmd), "xzcat -- '%s'", path);
		f = popen(cmd, "r");
	} else {
		f = fopen(path, "r");
	}
	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		unsigned idx, id;
		int pos = 0;

		if (sscanf(line, "Frame Data; Index %u; ID_DATA[0x%x]; %n", &idx, &id, &pos) == 2 &&
		    pos && id < 128) {
			last = &c->s[id];
			last_idx = idx;
			put_hex(line + pos, last, NULL, idx);
			last_is_id = 1;
			nlines++;
		} else if (sscanf(line, "Frame Data; Index %u; ID_DATA[????]; %n", &idx, &pos) == 1 &&
			   pos) {
			last = NULL;
			put_hex(line + pos, NULL, &c->unknown, idx);
			last_is_id = 1;
			nlines++;
		} else if (hexval(line[0]) >= 0 && hexval(line[1]) >= 0 && line[2] == ' ') {
			/* The printer wraps after 16 bytes; only ID_DATA wraps matter. */
			if (last_is_id)
				put_hex(line, last, &c->unknown, last_idx);
		} else {
			last_is_id = 0;
		}
	}
	free(line);
	if (xz ? pclose(f) != 0 : fclose(f) != 0)
		return -1;
	return nlines;
}

static uint8_t *load_bin(const char *path, size_t *len, int dstream)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
		b = malloc((size_t)n);
		if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
			free(b);
			b = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	if (b && dstream) {
		/* DSTREAM: 504 trace bytes + 8-byte footer per 512; OpenCSD indexes trace bytes. */
		size_t o = 0;

		for (size_t i = 0; i < *len; i += 512) {
			size_t k = *len - i < 504 ? *len - i : 504;

			memmove(b + o, b + i, k);
			o += k;
		}
		*len = o;
	}
	return b;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void demux(const struct snap *sn, const uint8_t *b, size_t len, size_t chunk,
		  struct coll *c, struct tc_cs_frame_stats *st, int *truncated_at)
{
	struct tc_cs_frame *d = mk(sn->flags | TC_CS_FRAME_ALL_IDS, c);
	size_t n;
	const struct tc_cs_frame_err *e;

	for (size_t i = 0, k = 0; i < len; i += n, k++) {
		/* chunk 0: a varying odd size, so frames and FSYNCs straddle calls. */
		n = chunk ? chunk : 1 + (k * 7) % 61;
		if (n > len - i)
			n = len - i;
		tc_cs_frame_feed(d, b + i, n);
	}
	tc_cs_frame_flush(d);
	*st = *tc_cs_frame_stats(d);
	e = tc_cs_frame_errors(d, &n);
	*truncated_at = -1;
	for (size_t i = 0; i < n; i++) {
		char msg[160];

		if (e[i].kind == TC_CS_FRAME_E_TRUNCATED && *truncated_at < 0) {
			*truncated_at = (int)e[i].off;
			continue;
		}
		tc_cs_frame_err_str(&e[i], msg, sizeof(msg));
		printf("#   %s: %s\n", sn->name, msg);
	}
	tc_cs_frame_free(d);
}

static void check_snapshot(const struct snap *sn)
{
	const char *td = tc_testdata();
	char path[4096];
	struct coll want = { 0 }, got = { 0 }, got2 = { 0 };
	struct tc_cs_frame_stats st, st2;
	uint8_t *b;
	size_t len;
	int lines, trunc, trunc2, ids = 0;
	uint64_t total = 0;

	if (!td)
		SKIP("no ../shared/testdata");
	snprintf(path, sizeof(path), "%s/opencsd/results/%s", td, sn->ppl);
	lines = load_ppl(path, &want);
	CHECK(lines > 0);
	snprintf(path, sizeof(path), "%s/opencsd/%s", td, sn->bin);
	b = load_bin(path, &len, sn->dstream);
	CHECK(b != NULL);
	if (lines <= 0 || !b) {
		printf("#   cannot read %s data\n", sn->name);
		free(b);
		coll_free(&want);
		return;
	}
	/* trc_pkt_lister's own block sizes, then odd ones: the results must not differ. */
	demux(sn, b, len, sn->dstream ? 504 : 1024, &got, &st, &trunc);
	demux(sn, b, len, 0, &got2, &st2, &trunc2);

	for (int id = 0; id < 128; id++) {
		struct idstream *w = &want.s[id], *g = &got.s[id];
		size_t bad_off = 0;

		/* Same set of IDs, same bytes in the same order. */
		CHECK_INT(g->n, w->n);
		CHECK(bytes_are(g, w->b, w->n));
		CHECK(bytes_are(&got2.s[id], g->b, g->n));
		if (!w->n)
			continue;
		/* OpenCSD indexes a run by its frame start, or by the ID byte that began it. */
		for (size_t i = 0; i < w->n && i < g->n; i++)
			if (w->off[i] != g->off[i] || got2.s[id].off[i] != g->off[i])
				bad_off++;
		CHECK_INT(bad_off, 0);
		printf("#   %s: ID 0x%02x: %zu bytes, %s\n", sn->name, id, w->n,
		       g->n == w->n && bytes_are(g, w->b, w->n) && !bad_off ? "identical"
									 : "DIFFERENT");
		ids++;
		total += w->n;
	}
	CHECK_INT(st.unknown_bytes, want.unknown);
	if (!sn->dstream)
		CHECK_INT(st.frames, len / 16);
	CHECK(st.id_bytes + st.null_bytes + st.reserved_bytes + st.unknown_bytes ==
	      total + want.unknown);
	printf("#   %s: %zu input bytes, %d IDs, %llu bytes + %llu before the first ID, "
	       "all matched OpenCSD\n", sn->name, len, ids, (unsigned long long)total,
	       (unsigned long long)want.unknown);
	if (sn->dstream) {
		/* 96 x 504 bytes = 48384; FSYNC-separated 16-byte frames leave 12 at the end. */
		CHECK_INT(trunc, 48372);
		CHECK_INT(trunc2, 48372);
		CHECK(st.fsync_bytes > 0);
	} else {
		CHECK_INT(trunc, -1);
		CHECK_INT(st.errors, 0);
	}
	free(b);
	coll_free(&want);
	coll_free(&got);
	coll_free(&got2);
}

TEST(opencsd_juno_r1_1)
{
	check_snapshot(&snaps[0]);
}

TEST(opencsd_tc2)
{
	check_snapshot(&snaps[1]);
}

TEST(opencsd_snowball)
{
	check_snapshot(&snaps[2]);
}

TEST(opencsd_bugfix_exact_match)
{
	check_snapshot(&snaps[3]);
}

TEST(opencsd_a55_tpiu_dstream)
{
	check_snapshot(&snaps[4]);
}

static void count_only(void *ctx, uint8_t id, const uint8_t *data, size_t len, uint64_t off)
{
	(void)id, (void)data, (void)off;
	*(uint64_t *)ctx += len;
}

TEST(demux_speed_1mib)
{
	const char *td = tc_testdata();
	char path[4096];
	uint8_t *b;
	size_t len;
	uint64_t n = 0;
	double t0, best = 1e9;

	if (!td)
		SKIP("no ../shared/testdata");
	snprintf(path, sizeof(path), "%s/opencsd/%s", td, snaps[3].bin);
	b = load_bin(path, &len, 0);
	CHECK(b != NULL);
	if (!b)
		return;
	for (int r = 0; r < 5; r++) {
		struct tc_cs_frame *d =
			tc_cs_frame_new(TC_CS_FRAME_MEM_ALIGN, count_only, NULL, &n, NULL);

		CHECK(d != NULL);
		if (!d)
			break;
		t0 = now_ms();
		tc_cs_frame_feed(d, b, len);
		tc_cs_frame_flush(d);
		t0 = now_ms() - t0;
		if (t0 < best)
			best = t0;
		tc_cs_frame_free(d);
	}
	CHECK(n > 0);
	printf("#   bugfix-exact-match: demuxed %zu bytes in %.2f ms (best of 5)\n", len, best);
	free(b);
}
