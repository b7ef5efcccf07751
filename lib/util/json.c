#include "lib/util/json.h"

#include <math.h>
#include <string.h>

void tc_json_flush(struct tc_json *j)
{
	if (j->len)
		fwrite(j->buf, 1, j->len, j->f);
	j->len = 0;
}

/* Room for n more bytes (n well below TC_JSON_BUF). */
static inline char *room(struct tc_json *j, size_t n)
{
	if (__builtin_expect(j->len + n > sizeof(j->buf), 0))
		tc_json_flush(j);
	return j->buf + j->len;
}

static inline void put_c(struct tc_json *j, char c)
{
	*room(j, 1) = c;
	j->len++;
}

static void put_long(struct tc_json *j, const char *s, size_t n)
{
	while (n) {
		size_t k = sizeof(j->buf) - j->len;

		if (!k) {
			tc_json_flush(j);
			k = sizeof(j->buf);
		}
		if (k > n)
			k = n;
		memcpy(j->buf + j->len, s, k);
		j->len += k;
		s += k;
		n -= k;
	}
}

static inline void put_mem(struct tc_json *j, const char *s, size_t n)
{
	if (__builtin_expect(j->len + n > sizeof(j->buf), 0)) {
		put_long(j, s, n);
		return;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
}

static void put_s(struct tc_json *j, const char *s) { put_mem(j, s, strlen(s)); }

/* A top-level value is complete: hand it on, so output keeps its order with other writes. */
static inline __attribute__((always_inline)) void value_done(struct tc_json *j)
{
	if (j->depth == 0)
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
	j->len = 0;
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

static const char hexdig[] = "0123456789abcdef";

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

static void write_string(struct tc_json *j, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	put_c(j, '"');
	for (;;) {
		/* Copy while the bytes need no escape: one pass, no strlen. */
		char *o = j->buf + j->len, *end = j->buf + sizeof(j->buf);

		while (o < end && plain(*p))
			*o++ = (char)*p++;
		j->len = (size_t)(o - j->buf);
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
	put_c(j, '"');
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

/* Numbers are written straight into the buffer, their length known first: no memcpy call
 * per number. */
static inline unsigned dec_len(unsigned long long v)
{
	unsigned n = 1;

	for (; v >= 10000; v /= 10000)
		n += 4;
	return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* "00".."99": two digits per division. */
static const char digits2[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static void put_uint(struct tc_json *j, unsigned long long v, bool neg)
{
	unsigned n = dec_len(v);
	char *o = room(j, 21), *e;

	if (neg)
		*o++ = '-';
	j->len += n + neg;
	for (e = o + n; v >= 100; v /= 100) {
		e -= 2;
		memcpy(e, digits2 + 2 * (v % 100), 2);
	}
	if (v >= 10)
		memcpy(e - 2, digits2 + 2 * v, 2);
	else
		e[-1] = (char)('0' + v);
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
	unsigned n = v ? (unsigned)(67 - __builtin_clzll(v)) / 4 : 1;	/* hex digits */
	char *o, *e;

	before_value(j);
	o = room(j, 20);
	memcpy(o, "\"0x", 3);
	o[3 + n] = '"';
	j->len += n + 4;
	/* two digits per step, then an odd leading one */
	for (e = o + 3 + n; e - 2 >= o + 3; v >>= 8) {
		e -= 2;
		e[0] = hexdig[(v >> 4) & 0xf];
		e[1] = hexdig[v & 0xf];
	}
	if (e > o + 3)
		e[-1] = hexdig[v & 0xf];
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
