/* Format-term parsing and value placement (lib/pmu/pmu_format.c). */
#include "lib/pmu/pmu_format.h"
#include "tests/unit/tc_test.h"

TEST(parses_range_single_and_list)
{
	struct tc_pmu_format f;
	struct tc_err e;

	CHECK_INT(tc_pmu_format_parse("sinkid", "config2:0-31", &f, &e), 0);
	CHECK_INT(f.field, TC_FIELD_CONFIG2);
	CHECK(f.mask == 0xffffffffULL);
	CHECK_INT(tc_pmu_format_parse("cycacc", "config:12", &f, &e), 0);
	CHECK(f.field == TC_FIELD_CONFIG && f.mask == 1ULL << 12);
	CHECK_INT(tc_pmu_format_parse("odd", "config1:0-3,8,62-63", &f, &e), 0);
	CHECK(f.field == TC_FIELD_CONFIG1 && f.mask == (0xfULL | 1ULL << 8 | 3ULL << 62));
	CHECK_INT(tc_pmu_format_parse("cc", "config3:0-11", &f, &e), 0);
	CHECK_INT(f.field, TC_FIELD_CONFIG3);
}

TEST(rejects_garbage_with_a_message)
{
	static const char *const bad[] = {
		"", "config", "config:", "config:64", "config:5-3", "conf:1", "config:1,",
		"config:1-", "config4:1", "config:1 2", "config:-1", "hello world",
	};
	struct tc_pmu_format f;
	struct tc_err e;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e.msg[0] = '\0';
		CHECK_INT(tc_pmu_format_parse("t", bad[i], &f, &e), -1);
		CHECK(strstr(e.msg, "format term 't'") != NULL);
	}
}

TEST(apply_spreads_value_over_mask)
{
	struct tc_pmu_format f;
	struct tc_err e;
	uint64_t v = 0;

	tc_pmu_format_parse("x", "config:0-1,4-5", &f, &e);
	CHECK_INT(tc_pmu_format_apply(&f, 0xb, &v, &e), 0);	/* 0b1011 -> bits 0,1,5 */
	CHECK(v == 0x23);
	v = 0;
	CHECK_INT(tc_pmu_format_apply(&f, 0x10, &v, &e), -1);	/* needs 5 bits, term has 4 */
	CHECK(strstr(e.msg, "does not fit") != NULL);
	tc_pmu_format_parse("sinkid", "config2:0-31", &f, &e);
	v = 0;
	CHECK_INT(tc_pmu_format_apply(&f, 0xc28a4bb1, &v, &e), 0);
	CHECK(v == 0xc28a4bb1);
}
