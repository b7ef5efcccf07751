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
