/* The JSON writer: nesting, commas, escaping, pretty mode (lib/util/json.c). */
#include "lib/util/json.h"
#include "tests/unit/tc_test.h"

static char *render(int pretty, void (*fn)(struct tc_json *))
{
	static char buf[4096];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	struct tc_json j;

	tc_json_init(&j, f, pretty);
	fn(&j);
	fclose(f);
	return buf;
}

static void doc(struct tc_json *j)
{
	tc_json_obj_open(j);
	tc_json_kstr(j, "s", "a\"b\\c\n\x01");
	tc_json_kint(j, "i", -5);
	tc_json_khex(j, "h", 0x10);
	tc_json_key(j, "a");
	tc_json_arr_open(j);
	tc_json_bool(j, true);
	tc_json_double(j, 12.5);
	tc_json_double(j, 1.0 / 0.0);
	tc_json_null(j);
	tc_json_str(j, NULL);
	tc_json_arr_close(j);
	tc_json_key(j, "e");
	tc_json_obj_open(j);
	tc_json_obj_close(j);
	tc_json_obj_close(j);
}

static void lines(struct tc_json *j)
{
	for (int i = 0; i < 2; i++) {
		tc_json_obj_open(j);
		tc_json_kint(j, "n", i);
		tc_json_obj_close(j);
	}
}

TEST(compact_document)
{
	CHECK_STR(render(0, doc),
		  "{\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"i\":-5,\"h\":\"0x10\",\"a\":[true,12.5,null,null,null],\"e\":{}}\n");
}

TEST(json_lines)
{
	CHECK_STR(render(0, lines), "{\"n\":0}\n{\"n\":1}\n");
}

TEST(pretty_document)
{
	CHECK_STR(render(1, lines), "{\n  \"n\": 0\n}\n{\n  \"n\": 1\n}\n");
}

static void numbers(struct tc_json *j)
{
	tc_json_arr_open(j);
	tc_json_int(j, 0);
	tc_json_int(j, -9223372036854775807LL - 1);
	tc_json_uint(j, 18446744073709551615ULL);
	tc_json_hex(j, 0);
	tc_json_hex(j, 0xffffffffffffffffULL);
	tc_json_str(j, "\x7f\x1f\t\r");
	tc_json_arr_close(j);
}

TEST(number_and_escape_formats)
{
	CHECK_STR(render(0, numbers),
		  "[0,-9223372036854775808,18446744073709551615,\"0x0\",\"0xffffffffffffffff\","
		  "\"\\u007f\\u001f\\t\\r\"]\n");
}

/* Output longer than the writer's buffer, escapes straddling its end, and a top-level value
 * that must reach the FILE before anything else is written to it. */
TEST(longer_than_buffer)
{
	static char out[3 * TC_JSON_BUF + 64], s[TC_JSON_BUF + 100], want[sizeof(out)];
	FILE *f = fmemopen(out, sizeof(out), "w");
	struct tc_json j;
	size_t n = 0;

	for (size_t i = 0; i < sizeof(s) - 1; i++)
		s[i] = i % 7 == 3 ? '\n' : 'a' + i % 26;
	tc_json_init(&j, f, false);
	tc_json_arr_open(&j);
	tc_json_str(&j, s);
	tc_json_str(&j, s);
	tc_json_arr_close(&j);
	fputs("after\n", f);
	fclose(f);
	want[n++] = '[';
	for (int k = 0; k < 2; k++) {
		if (k)
			want[n++] = ',';
		want[n++] = '"';
		for (size_t i = 0; s[i]; i++) {
			if (s[i] == '\n')
				want[n++] = '\\', want[n++] = 'n';
			else
				want[n++] = s[i];
		}
		want[n++] = '"';
	}
	memcpy(want + n, "]\nafter\n", 9);
	CHECK_STR(out, want);
}

/* lib/util/fmt.h against printf, the edges and a spread of values between. */
#include <inttypes.h>
#include "lib/util/fmt.h"

static const uint64_t fmt_values[] = {
	0, 1, 9, 10, 15, 16, 99, 100, 255, 256, 999, 1000, 4095, 4096, 9999, 10000, 65535,
	99999, 100000, 0x7fffffff, 0x80000000ULL, 0xffffffffULL, 0x100000000ULL,
	99999999, 100000000, 100000001, 999999999, 1000000000, 1000000013, 999999999999ULL,
	9999999999999999ULL, 10000000000000000ULL, 10000000000000001ULL, 1234567890123456789ULL,
	12345678901234ULL, 0x560bbe29d05bULL, 0xffffffc000096a00ULL, INT64_MAX,
	(uint64_t)INT64_MAX + 1, UINT64_MAX - 1, UINT64_MAX,
};

TEST(fmt_numbers_as_printf)
{
	char got[128], want[128];
	int bad = 0;

	for (size_t i = 0; i < sizeof(fmt_values) / sizeof(fmt_values[0]) * 64; i++) {
		/* the table, then products of its neighbours and shifted values */
		uint64_t v = fmt_values[i % (sizeof(fmt_values) / sizeof(fmt_values[0]))];
		int64_t sv;
		unsigned w = (unsigned)(i / 7 % 21);

		if (i >= sizeof(fmt_values) / sizeof(fmt_values[0]))
			v = (v * 0x9e3779b97f4a7c15ULL) >> (i % 64);
		sv = (int64_t)v;
#define SAME(expr, ...)                                                         \
	do {                                                                    \
		*(expr) = 0;                                                    \
		snprintf(want, sizeof(want), __VA_ARGS__);                      \
		if (strcmp(got, want) && bad++ < 5)                             \
			printf("#   got '%s' want '%s' (%s)\n", got, want, #expr); \
	} while (0)
		SAME(tc_fmt_udec(got, v), "%" PRIu64, v);
		SAME(tc_fmt_dec(got, sv), "%" PRId64, sv);
		SAME(tc_fmt_dec(got, (int32_t)v), "%d", (int32_t)v);
		SAME(tc_fmt_hex(got, v), "%" PRIx64, v);
		SAME(tc_fmt_0xhex(got, v), "0x%" PRIx64, v);
		SAME(tc_fmt_hex_w(got, v, w, ' '), "%*" PRIx64, (int)w, v);
		SAME(tc_fmt_hex_w(got, v, w, '0'), "%0*" PRIx64, (int)w, v);
		SAME(tc_fmt_dec_w(got, sv, w, 0), "%*" PRId64, (int)w, sv);
		SAME(tc_fmt_dec_w(got, sv, w, 1), "%-*" PRId64, (int)w, sv);
		SAME(tc_fmt_dec_w(got, (int32_t)v, w, 0), "%*d", (int)w, (int32_t)v);
		SAME(tc_fmt_udec_0w(got, v, w), "%0*" PRIu64, (int)w, v);
		SAME(tc_fmt_str_w(got, "abc", 3, w, 0), "%*s", (int)w, "abc");
		SAME(tc_fmt_str_w(got, "abc", 3, w, 1), "%-*s", (int)w, "abc");
#undef SAME
	}
	CHECK_INT(bad, 0);
	CHECK_INT((int)tc_fmt_udec_len(0), 1);
	CHECK_INT((int)tc_fmt_udec_len(UINT64_MAX), 20);
	CHECK_INT((int)tc_fmt_hex_len(0), 1);
	CHECK_INT((int)tc_fmt_hex_len(UINT64_MAX), 16);
}

/* tc_fmt_udec's words of 8 digits (each lane's division by a multiply): every value below
 * 10^5, a step through the rest below 10^8, and the same as the low and middle words. */
TEST(fmt_decimal_words)
{
	char got[64], want[64];
	int bad = 0;

	for (uint64_t v = 0; v < 100000000; v += v < 100000 ? 1 : 997) {
		const uint64_t vs[] = { v, 100000000 + v, v * 100000000 + (v ^ 0x5a5a5a),
					18446744073709551615ULL - v };

		for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
			*tc_fmt_udec(got, vs[i]) = 0;
			snprintf(want, sizeof(want), "%" PRIu64, vs[i]);
			if (strcmp(got, want) && bad++ < 5)
				printf("#   got '%s' want '%s'\n", got, want);
		}
	}
	CHECK_INT(bad, 0);
}

/* Escapes found at every place in a string (the scan takes eight bytes at a time), bytes
 * of 0x80 and above as they are. */
TEST(escapes_at_every_position)
{
	static const char specials[] = { '"', '\\', '\n', '\t', '\r', 0x01, 0x1f, 0x7f };
	int bad = 0;

	for (size_t len = 1; len < 40; len++)
		for (size_t at = 0; at < len; at++)
			for (size_t k = 0; k < sizeof(specials); k++) {
				char s[48], want[320], *w = want;
				char *got;
				static char out[512];
				FILE *f = fmemopen(out, sizeof(out), "w");
				struct tc_json j;

				for (size_t i = 0; i < len; i++)
					s[i] = (char)(i % 3 == 2 ? 0xc3 + (int)i % 5 : 'a' + (int)i % 26);
				s[at] = specials[k];
				s[len] = 0;
				*w++ = '"';
				for (size_t i = 0; i < len; i++) {
					unsigned char c = (unsigned char)s[i];

					if (c == '"' || c == '\\')
						w += sprintf(w, "\\%c", c);
					else if (c == '\n')
						w += sprintf(w, "\\n");
					else if (c == '\t')
						w += sprintf(w, "\\t");
					else if (c == '\r')
						w += sprintf(w, "\\r");
					else if (c < 0x20 || c == 0x7f)
						w += sprintf(w, "\\u%04x", c);
					else
						*w++ = (char)c;
				}
				strcpy(w, "\"");
				tc_json_init(&j, f, false);
				tc_json_str(&j, s);
				fclose(f);
				got = out;
				if (strcmp(got, want) && bad++ < 3)
					printf("#   len %zu at %zu: got %s want %s", len, at, got, want);
			}
	CHECK_INT(bad, 0);
}

/* Batched: nothing reaches the FILE until the buffer fills or the flush. */
TEST(batch_keeps_values_until_flush)
{
	static char out[64];
	FILE *f = fmemopen(out, sizeof(out), "w");
	struct tc_json j;

	setvbuf(f, NULL, _IONBF, 0);
	tc_json_init(&j, f, false);
	tc_json_batch(&j, true);
	tc_json_obj_open(&j);
	TC_JSON_KINT(&j, "n", -1);
	tc_json_obj_close(&j);
	tc_json_str_plus_hex(&j, "main\"", 0x1f);
	CHECK_INT((int)ftell(f), 0);
	tc_json_flush(&j);
	CHECK_INT((int)ftell(f), 22);
	fclose(f);
	CHECK_STR(out, "{\"n\":-1}\n\"main\\\"+0x1f\"");
}
