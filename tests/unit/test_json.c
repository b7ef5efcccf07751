/* The JSON writer: nesting, commas, escaping, pretty mode (out/json.c). */
#include "out/json.h"
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
