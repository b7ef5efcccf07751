#include "lib/util/json.h"

#include <math.h>
#include <string.h>

#include "lib/util/fmt.h"

void tc_json_flush(struct tc_json *j)
{
	if (j->len && j->f)	/* a writer without a FILE is a scratch buffer its user empties */
		fwrite(j->out, 1, j->len, j->f);
	j->len = 0;
}

void tc_json_batch(struct tc_json *j, bool on)
{
	j->batch = on;
	if (!on)
		tc_json_flush(j);
}

/* Room for n more bytes (n well below TC_JSON_BUF). */
static inline char *room(struct tc_json *j, size_t n)
{
	return tc_json_raw_room(j, n);
}

static inline void put_c(struct tc_json *j, char c)
{
	*room(j, 1) = c;
	j->len++;
}

static void put_long(struct tc_json *j, const char *s, size_t n)
{
	while (n) {
		size_t k = j->cap - j->len;

		if (!k) {
			tc_json_flush(j);
			k = j->cap;
		}
		if (k > n)
			k = n;
		memcpy(j->out + j->len, s, k);
		j->len += k;
		s += k;
		n -= k;
	}
}

static inline void put_mem(struct tc_json *j, const char *s, size_t n)
{
	if (__builtin_expect(j->len + n > j->cap, 0)) {
		put_long(j, s, n);
		return;
	}
	memcpy(j->out + j->len, s, n);
	j->len += n;
}

static void put_s(struct tc_json *j, const char *s) { put_mem(j, s, strlen(s)); }

/* A top-level value is complete: hand it on, so output keeps its order with other writes
 * (a batched writer is alone on its FILE: it waits for a full buffer). */
static inline __attribute__((always_inline)) void value_done(struct tc_json *j)
{
	if (j->depth == 0 && !j->batch)
		tc_json_flush(j);
}

static void newline(struct tc_json *j)
{
	if (!j->pretty)
		return;
	put_c(j, '\n');
	for (int i = 0; i < j->depth; i++)
		put_mem(j, "  ", 2);
}

/* Separator and indentation before any value or key: in every token, so inlined. */
static inline __attribute__((always_inline)) void before_value(struct tc_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth == 0)
		return;
	if (j->need_comma[j->depth])
		put_c(j, ',');
	j->need_comma[j->depth] = true;
	newline(j);
}

void tc_json_init(struct tc_json *j, FILE *f, bool pretty)
{
	j->f = f;
	j->pretty = pretty;
	j->depth = 0;
	memset(j->need_comma, 0, sizeof(j->need_comma));
	j->after_key = false;
	j->batch = false;
	j->len = 0;
	j->out = j->buf;
	j->cap = sizeof(j->buf);
}

void tc_json_use_buffer(struct tc_json *j, char *buf, size_t cap)
{
	tc_json_flush(j);
	j->out = buf ? buf : j->buf;
	j->cap = buf ? cap : sizeof(j->buf);
}

static void open_(struct tc_json *j, char c)
{
	before_value(j);
	put_c(j, c);
	if (j->depth + 1 < TC_JSON_MAX_DEPTH)
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_(struct tc_json *j, char c)
{
	bool had = j->need_comma[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (had)
		newline(j);
	put_c(j, c);
	if (j->depth == 0)
		put_c(j, '\n');
	value_done(j);
}

void tc_json_obj_open(struct tc_json *j) { open_(j, '{'); }
void tc_json_obj_close(struct tc_json *j) { close_(j, '}'); }
void tc_json_arr_open(struct tc_json *j) { open_(j, '['); }
void tc_json_arr_close(struct tc_json *j) { close_(j, ']'); }

#define hexdig tc_fmt_hexdig

/* Bytes a JSON string cannot hold as they are (and its end): control bytes, DEL, '"', '\\'. */
static const bool special[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	['"'] = 1, ['\\'] = 1, [0x7f] = 1,
};

static inline bool plain(unsigned char c)
{
	return !special[c];
}

/* s's bytes, escaped, without quotes. */
/* Bytes before the first that needs an escape among s's n: eight at a time (a byte below
 * 0x20, '"', '\\' or 0x7f in a word shows as its high bit in the test). */
static size_t plain_run(const unsigned char *s, size_t n)
{
	const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w, q, b, d;

		memcpy(&w, s + i, 8);
		q = w ^ (ones * '"');
		b = w ^ (ones * '\\');
		d = w ^ (ones * 0x7f);
		/* a byte of w below 0x20, a zero byte of q, b or d */
		if ((((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b) |
		     ((d - ones) & ~d)) & high)
			break;
	}
	while (i < n && plain(s[i]))
		i++;
	return i;
}

static void write_body(struct tc_json *j, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), k = plain_run(p, n);

	/* the usual string: nothing to escape, room for it */
	if (__builtin_expect(k == n && j->len + n <= j->cap, 1)) {
		memcpy(j->out + j->len, s, n);
		j->len += n;
		return;
	}
	for (;;) {
		/* Copy while the bytes need no escape: one pass, no strlen. */
		char *o = j->out + j->len, *end = j->out + j->cap;

		while (o < end && plain(*p))
			*o++ = (char)*p++;
		j->len = (size_t)(o - j->out);
		if (!*p)
			break;
		if (plain(*p)) {	/* the buffer is full */
			tc_json_flush(j);
			continue;
		}
		o = room(j, 6);
		o[0] = '\\';
		switch (*p) {
		case '"': o[1] = '"'; j->len += 2; break;
		case '\\': o[1] = '\\'; j->len += 2; break;
		case '\n': o[1] = 'n'; j->len += 2; break;
		case '\r': o[1] = 'r'; j->len += 2; break;
		case '\t': o[1] = 't'; j->len += 2; break;
		default:
			memcpy(o + 1, "u00", 3);
			o[4] = hexdig[*p >> 4];
			o[5] = hexdig[*p & 0xf];
			j->len += 6;
		}
		p++;
	}
}

static void write_string(struct tc_json *j, const char *s)
{
	put_c(j, '"');
	write_body(j, s);
	put_c(j, '"');
}

void tc_json_raw_str(struct tc_json *j, const char *s)
{
	write_string(j, s);
}

void tc_json_raw_mem(struct tc_json *j, const char *s, size_t n)
{
	put_mem(j, s, n);
}

void tc_json_raw_str_plus_hex(struct tc_json *j, const char *s, unsigned long long v)
{
	char *o;

	put_c(j, '"');
	write_body(j, s);
	o = room(j, 24);
	memcpy(o, "+0x", 3);
	o = tc_fmt_hex(o + 3, v);
	*o++ = '"';
	tc_json_raw_end(j, o);
}

void tc_json_str_plus_hex(struct tc_json *j, const char *s, unsigned long long v)
{
	before_value(j);
	tc_json_raw_str_plus_hex(j, s, v);
	value_done(j);
}

void tc_json_key(struct tc_json *j, const char *key)
{
	before_value(j);
	write_string(j, key);
	if (j->pretty)
		put_mem(j, ": ", 2);
	else
		put_c(j, ':');
	j->after_key = true;
}

void tc_json_key_lit(struct tc_json *j, const char *quoted, size_t len)
{
	before_value(j);
	put_mem(j, quoted, len);
	if (j->pretty)
		put_mem(j, ": ", 2);
	else
		put_c(j, ':');
	j->after_key = true;
}

void tc_json_str(struct tc_json *j, const char *s)
{
	if (!s) {
		tc_json_null(j);
		return;
	}
	before_value(j);
	write_string(j, s);
	value_done(j);
}

/* Numbers are written straight into the buffer (lib/util/fmt.h). */
static void put_uint(struct tc_json *j, unsigned long long v, bool neg)
{
	char *o = room(j, 21);

	if (neg)
		*o++ = '-';
	tc_json_raw_end(j, tc_fmt_udec(o, v));
}

void tc_json_int(struct tc_json *j, long long v)
{
	before_value(j);
	/* The magnitude in unsigned arithmetic: -LLONG_MIN does not fit a long long. */
	put_uint(j, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v, v < 0);
	value_done(j);
}

void tc_json_uint(struct tc_json *j, unsigned long long v)
{
	before_value(j);
	put_uint(j, v, false);
	value_done(j);
}

void tc_json_hex(struct tc_json *j, unsigned long long v)
{
	char *o;

	before_value(j);
	o = room(j, 20);
	memcpy(o, "\"0x", 3);
	o = tc_fmt_hex(o + 3, v);
	*o++ = '"';
	tc_json_raw_end(j, o);
	value_done(j);
}

void tc_json_bool(struct tc_json *j, bool v)
{
	before_value(j);
	put_s(j, v ? "true" : "false");
	value_done(j);
}

void tc_json_double(struct tc_json *j, double v)
{
	char t[32];
	int n;

	if (!isfinite(v)) {
		tc_json_null(j);
		return;
	}
	before_value(j);
	n = snprintf(t, sizeof(t), "%.6g", v);
	put_mem(j, t, n > 0 ? (size_t)n : 0);
	value_done(j);
}

void tc_json_null(struct tc_json *j)
{
	before_value(j);
	put_mem(j, "null", 4);
	value_done(j);
}

void tc_json_kstr(struct tc_json *j, const char *k, const char *s)
{
	tc_json_key(j, k);
	tc_json_str(j, s);
}
void tc_json_kint(struct tc_json *j, const char *k, long long v)
{
	tc_json_key(j, k);
	tc_json_int(j, v);
}
void tc_json_khex(struct tc_json *j, const char *k, unsigned long long v)
{
	tc_json_key(j, k);
	tc_json_hex(j, v);
}
void tc_json_kbool(struct tc_json *j, const char *k, bool v)
{
	tc_json_key(j, k);
	tc_json_bool(j, v);
}
