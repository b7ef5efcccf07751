/* The message collector (lib/util/diag.c): one warning per distinct problem, with a count;
 * status lines never merged; order kept. */
#include "lib/util/diag.h"
#include "tests/unit/tc_test.h"

TEST(same_text_counted_once)
{
	struct tc_diag d = { 0 };

	for (int i = 0; i < 6; i++)
		tc_diag_add(&d, "%s: memory dump left out", "kernel_dump.bin");
	tc_diag_add(&d, "another problem");
	CHECK_INT(d.n, 2);
	CHECK_STR(d.msgs[0].text, "kernel_dump.bin: memory dump left out (6 times)");
	CHECK_INT(d.msgs[0].count, 6);
	CHECK_STR(d.msgs[1].text, "another problem");
	CHECK_INT(tc_diag_warnings(&d), 2);
	tc_diag_free(&d);
	CHECK_INT(d.n, 0);
}

TEST(same_kind_first_shown)
{
	struct tc_diag d = { 0 };

	tc_diag_add_kind(&d, "reserved", "reserved trace ID 0x%02x at offset %d", 0x70, 508);
	tc_diag_add(&d, "reserved trace ID 0x74 at offset 526");	/* no kind: its own */
	for (int i = 0; i < 55; i++)
		tc_diag_add_kind(&d, "reserved", "reserved trace ID 0x7e at offset %d", 530 + i);
	tc_diag_add_kind(&d, "other", "x");
	CHECK_INT(d.n, 3);
	CHECK_STR(d.msgs[0].text, "reserved trace ID 0x70 at offset 508 (and 55 more like it)");
	CHECK_STR(d.msgs[0].first, "reserved trace ID 0x70 at offset 508");
	CHECK_STR(d.msgs[1].text, "reserved trace ID 0x74 at offset 526");
	CHECK_STR(d.msgs[2].text, "x");
	tc_diag_free(&d);
}

TEST(status_lines_not_merged)
{
	struct tc_diag d = { 0 };

	tc_diag_status(&d, "done");
	tc_diag_status(&d, "done");
	tc_diag_add(&d, "done");	/* a warning of the same text is not a status line */
	CHECK_INT(d.n, 3);
	CHECK_STR(d.msgs[1].text, "done");
	CHECK_INT(d.msgs[2].level, TC_DIAG_WARNING);
	CHECK_INT(tc_diag_warnings(&d), 1);
	tc_diag_free(&d);
}
