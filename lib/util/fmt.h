/* Numbers and padded strings formatted by hand into a caller's buffer, byte for byte what
 * printf writes for the same conversion (noted beside each), for writers of millions of
 * records (lib/output/listing.c, lib/util/json.c): no format string parsed per field.
 * Each writes at o and returns the end; the caller has made room (lengths below): a
 * number may be written a word at a time, bytes past its end included (left for what
 * follows to overwrite), TC_FMT_MAX bytes at most, padding aside. */
#ifndef TC_LIB_UTIL_FMT_H
#define TC_LIB_UTIL_FMT_H

#include <stdint.h>
#include <string.h>

#define TC_FMT_MAX 24	/* the most any of these writes, sign included, unpadded */

/* Decimal digits of v. */
static inline unsigned tc_fmt_udec_len(uint64_t v)
{
	unsigned n = 1;

	for (; v >= 10000; v /= 10000)
		n += 4;
	return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* Hex digits of v (1 for 0). */
static inline unsigned tc_fmt_hex_len(uint64_t v)
{
	return v ? (unsigned)(67 - __builtin_clzll(v)) / 4 : 1;
}

/* "00".."99" */
extern const char tc_fmt_digits2[201];
extern const char tc_fmt_hexdig[17];
/* "00".."ff" */
extern const char tc_fmt_hex2[513];

/* v's n decimal digits ending at e (n = tc_fmt_udec_len(v)). */
static inline void tc_fmt_udec_at(char *e, uint64_t v)
{
	for (; v >= 100; v /= 100) {
		e -= 2;
		memcpy(e, tc_fmt_digits2 + 2 * (v % 100), 2);
	}
	if (v >= 10)
		memcpy(e - 2, tc_fmt_digits2 + 2 * v, 2);
	else
		e[-1] = (char)('0' + v);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The 8 decimal digits of v < 10^8 (leading zeros included) as the bytes of a word, the
 * first digit in its lowest byte: v split into two halves of 4 digits, each into two of 2,
 * each into two digits, every step in all lanes of the word at once (a division by a
 * constant as a multiply and a shift, exact for the lanes' ranges), no table, no branch. */
static inline uint64_t tc_fmt_dec8(uint32_t v)
{
	uint64_t x = v / 10000 | (uint64_t)(v % 10000) << 32;	/* 2 lanes < 10^4 */
	uint64_t h = ((x * 5243) >> 19) & 0x0000007f0000007fULL;	/* each / 100 */

	x = h | (x - h * 100) << 16;				/* 4 lanes < 100 */
	h = ((x * 103) >> 10) & 0x000f000f000f000fULL;		/* each / 10 */
	x = h | (x - h * 10) << 8;				/* 8 digits */
	return x + 0x3030303030303030ULL;
}

/* The digits of v < 10^8 without its leading zeros (one digit for 0) as the bytes of a
 * word, the first in its lowest byte, and their number in *n. */
static inline __attribute__((always_inline)) uint64_t tc_fmt_udec8_word(uint32_t v, unsigned *n)
{
	uint64_t w = tc_fmt_dec8(v), x = w ^ 0x3030303030303030ULL;	/* zero bytes: '0's */
	unsigned z = (unsigned)__builtin_ctzll(x | 1ULL << 56) / 8;	/* leading '0's (<= 7) */

	*n = 8 - z;
	return w >> 8 * z;
}

/* v < 10^8 at o without its leading zeros (one digit for 0): 8 bytes written. */
static inline __attribute__((always_inline)) char *tc_fmt_udec8(char *o, uint32_t v)
{
	unsigned n;
	uint64_t w = tc_fmt_udec8_word(v, &n);

	memcpy(o, &w, 8);
	return o + n;
}

/* %llu: in words of 8 digits, the first without its leading zeros; 8 bytes at least
 * written, 24 at most. */
static inline __attribute__((always_inline)) char *tc_fmt_udec(char *o, uint64_t v)
{
	uint64_t lo, mid;

	if (v < 100000000)
		return tc_fmt_udec8(o, (uint32_t)v);
	lo = tc_fmt_dec8((uint32_t)(v % 100000000));
	v /= 100000000;
	if (v < 100000000) {
		o = tc_fmt_udec8(o, (uint32_t)v);
	} else {
		mid = tc_fmt_dec8((uint32_t)(v % 100000000));
		o = tc_fmt_udec8(o, (uint32_t)(v / 100000000));
		memcpy(o, &mid, 8);
		o += 8;
	}
	memcpy(o, &lo, 8);
	return o + 8;
}
#else
/* %llu */
static inline char *tc_fmt_udec(char *o, uint64_t v)
{
	unsigned n = tc_fmt_udec_len(v);

	tc_fmt_udec_at(o + n, v);
	return o + n;
}
#endif

/* %lld (the magnitude in unsigned arithmetic: -INT64_MIN does not fit) */
static inline char *tc_fmt_dec(char *o, int64_t v)
{
	if (v < 0) {
		*o++ = '-';
		return tc_fmt_udec(o, 0ULL - (uint64_t)v);
	}
	return tc_fmt_udec(o, (uint64_t)v);
}

/* v's n hex digits ending at e (n = tc_fmt_hex_len(v)). */
static inline void tc_fmt_hex_at(char *e, uint64_t v, unsigned n)
{
	char *s = e - n;

	for (; e - 2 >= s; v >>= 8) {
		e -= 2;
		memcpy(e, tc_fmt_hex2 + 2 * (v & 0xff), 2);
	}
	if (e > s)
		e[-1] = tc_fmt_hexdig[v & 0xf];
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The 8 hex digits of v (leading zeros included) as the bytes of a word, the first digit
 * in its lowest byte: each nibble spread to a byte, then '0' or 'a' - 10 added, no table,
 * no branch. */
static inline uint64_t tc_fmt_hex8(uint32_t v)
{
	uint64_t x = v, letter;

	x = ((x & 0xffff0000ULL) << 16) | (x & 0xffffULL);
	x = ((x & 0x0000ff000000ff00ULL) << 8) | (x & 0x000000ff000000ffULL);
	x = ((x & 0x00f000f000f000f0ULL) << 4) | (x & 0x000f000f000f000fULL);
	/* byte k holds nibble k; 1 in each byte whose nibble is 10 or more */
	letter = ((x + 0x0606060606060606ULL) >> 4) & 0x0101010101010101ULL;
	x += 0x3030303030303030ULL + letter * ('a' - '0' - 10);
	return __builtin_bswap64(x);
}

/* %llx. Writes 8 bytes at o for a short v (those past the digits are left for the caller
 * to overwrite), its digits for a longer one: all made at once, the leading zeros shifted
 * out in a register (a copy through memory would stall on the stores just made). */
static inline char *tc_fmt_hex(char *o, uint64_t v)
{
	unsigned n = tc_fmt_hex_len(v);
	uint64_t lo = tc_fmt_hex8((uint32_t)v), hi;

	if (n > 8) {
		hi = tc_fmt_hex8((uint32_t)(v >> 32)) >> (8 * (16 - n));
		memcpy(o, &hi, 8);
		memcpy(o + n - 8, &lo, 8);
	} else {
		lo >>= 8 * (8 - n);
		memcpy(o, &lo, 8);
	}
	return o + n;
}
#else
/* %llx */
static inline char *tc_fmt_hex(char *o, uint64_t v)
{
	unsigned n = tc_fmt_hex_len(v);

	tc_fmt_hex_at(o + n, v, n);
	return o + n;
}
#endif

/* "0x%llx" */
static inline char *tc_fmt_0xhex(char *o, uint64_t v)
{
	o[0] = '0';
	o[1] = 'x';
	return tc_fmt_hex(o + 2, v);
}

/* %<w>llx (pad ' ') or %0<w>llx (pad '0'): right-aligned in at least w columns (w <= 64);
 * as tc_fmt_hex, 8 bytes at least after the padding. */
static inline char *tc_fmt_hex_w(char *o, uint64_t v, unsigned w, char pad)
{
	unsigned n = tc_fmt_hex_len(v);

	if (n < w) {
		memset(o, pad, w - n);
		o += w - n;
	}
	return tc_fmt_hex(o, v);
}

/* %<w>lld (left false) or %-<w>lld (left true), in at least w columns (w <= 64). */
static inline char *tc_fmt_dec_w(char *o, int64_t v, unsigned w, int left)
{
	uint64_t u = v < 0 ? 0ULL - (uint64_t)v : (uint64_t)v;
	unsigned n = tc_fmt_udec_len(u) + (v < 0);

	if (n < w && !left) {
		memset(o, ' ', w - n);
		o += w - n;
	}
	if (v < 0)
		*o = '-';
	tc_fmt_udec_at(o + n, u);
	o += n;
	if (n < w && left) {
		memset(o, ' ', w - n);
		o += w - n;
	}
	return o;
}

/* %0<w>llu: zero-padded to at least w digits (w <= 64). */
static inline char *tc_fmt_udec_0w(char *o, uint64_t v, unsigned w)
{
	unsigned n = tc_fmt_udec_len(v);

	if (n < w) {
		memset(o, '0', w - n);
		o += w - n;
	}
	tc_fmt_udec_at(o + n, v);
	return o + n;
}

/* %s, %<w>s or %-<w>s of s (len bytes): at least w columns (needs max(len, w) bytes). */
static inline char *tc_fmt_str_w(char *o, const char *s, size_t len, unsigned w, int left)
{
	size_t pad = len < w ? w - len : 0;

	if (!left && pad) {
		memset(o, ' ', pad);
		o += pad;
	}
	memcpy(o, s, len);
	o += len;
	if (left && pad) {
		memset(o, ' ', pad);
		o += pad;
	}
	return o;
}

#endif
