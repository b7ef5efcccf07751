/* perf's tracing data (lib/perfdata/tracing_data_read.c) and tracepoint samples through it
 * (decoders/tp_event.c): a small blob in perf's layout with one event of our own, then the
 * same blob cut short at every length and with sizes that lie. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/tp_event.h"
#include "lib/perfdata/tracing_data_read.h"
#include "lib/output/listing.h"
#include "tests/unit/tc_test.h"
#include "tests/unit/tdata_blob.h"

#define BASE 0x1000	/* the blob's pretend file offset */

static const char format[] =
	"name: demo\nID: 7\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:int value;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:__data_loc char[] msg;\toffset:28;\tsize:4;\tsigned:0;\n"
	"\tfield:u64 arr[2];\toffset:32;\tsize:16;\tsigned:0;\n\n"
	"print fmt: \"comm=%s value=%d msg=%s\", REC->comm, REC->value, __get_str(msg)\n";

static struct tdata_blob tb;

static const char *printk_text = "";	/* the printk formats build_with writes */

static void build_with(const char *fmt)
{
	tdata_blob_build(&tb, "sched", fmt, printk_text);
}

static void build(void)
{
	build_with(format);
}

/* A sample of demo: comm "abc", value -5, msg "hello" after the fixed fields, arr {1, 2}. */
static size_t sample(uint8_t *d)
{
	uint16_t type = 7;
	int32_t pid = 42, value = -5;
	uint32_t loc = (6u << 16) | 48;
	uint64_t arr[2] = { 1, 2 };

	memset(d, 0, 64);
	memcpy(d, &type, 2);
	memcpy(d + 4, &pid, 4);
	memcpy(d + 8, "abc", 3);
	memcpy(d + 24, &value, 4);
	memcpy(d + 28, &loc, 4);
	memcpy(d + 32, arr, 16);
	memcpy(d + 48, "hello", 6);
	return 54;
}

TEST(reads_and_renders_an_event)
{
	struct tep_handle *tep;
	struct tc_tp_event *t;
	struct tc_err e = { 0 };
	struct tc_rec r = { .cpu = 1, .pid = 42, .tid = 42, .has_time = true, .time = 1500000000 };
	uint8_t d[64];
	size_t n = sample(d);

	build();
	CHECK_INT(tc_tracing_data_read(&tep, tb.b, tb.len, BASE, "f", &e), 0);
	CHECK((t = tc_tp_event_new(tep)) != NULL);
	CHECK_INT(tc_tp_event_render(t, 7, d, n, &r, &e), 0);
	CHECK_INT(r.type, TC_REC_EVENT);
	CHECK_STR(r.name, "sched:demo");
	CHECK_STR(r.text, "comm=abc value=-5 msg=hello");
	CHECK_INT(r.nfields, 4);
	CHECK_STR(r.fields[0].name, "comm");
	CHECK_INT(r.fields[0].kind, TC_FIELD_STR);
	CHECK_STR(r.fields[0].s, "abc");
	CHECK_INT(r.fields[1].kind, TC_FIELD_INT);
	CHECK_INT(r.fields[1].i, -5);
	CHECK_INT(r.fields[2].kind, TC_FIELD_STR);
	CHECK_STR(r.fields[2].s, "hello");
	CHECK_INT(r.fields[3].kind, TC_FIELD_ARRAY);
	CHECK_INT(r.fields[3].n, 2);
	CHECK(r.fields[3].arr[0] == 1 && r.fields[3].arr[1] == 2);

	/* The JSON line and the text line consumers rely on. */
	{
		char buf[1024];
		FILE *f = fmemopen(buf, sizeof(buf), "w");
		struct tc_listing o;

		r.id = -1;
		r.offset = 0x40;
		tc_listing_init(&o, f, true);
		tc_listing_write(&o, &r);
		o.json = false;
		tc_listing_write(&o, &r);
		fclose(f);
		CHECK_STR(buf, "{\"type\":\"event\",\"cpu\":1,\"pid\":42,\"tid\":42,\"offset\":64,"
			  "\"name\":\"sched:demo\",\"time\":1500000000,\"fields\":{\"comm\":\"abc\","
			  "\"value\":-5,\"msg\":\"hello\",\"arr\":[1,2]},"
			  "\"text\":\"comm=abc value=-5 msg=hello\"}\n"
			  "        40  cpu 1 42/42  event     1.500000000 sched:demo: comm=abc "
			  "value=-5 msg=hello\n");
	}
	tc_tp_event_free(t);
	tc_tracing_data_read_free(tep);
}

TEST(samples_that_do_not_fit_are_refused)
{
	struct tep_handle *tep;
	struct tc_tp_event *t;
	struct tc_err e = { 0 };
	struct tc_rec r = { .type = TC_REC_RANGE };
	uint8_t d[64];
	size_t n = sample(d);
	uint32_t loc = (60u << 16) | 48;	/* msg runs past the end */

	build();
	CHECK_INT(tc_tracing_data_read(&tep, tb.b, tb.len, BASE, "f", &e), 0);
	CHECK((t = tc_tp_event_new(tep)) != NULL);
	CHECK_INT(tc_tp_event_render(t, 8, d, n, &r, &e), -1);
	CHECK(strstr(e.msg, "tracepoint id 8") != NULL);
	CHECK_INT(tc_tp_event_render(t, 7, d, 20, &r, &e), -1);
	CHECK(strstr(e.msg, "sched:demo") && strstr(e.msg, "field comm"));
	memcpy(d + 28, &loc, 4);
	CHECK_INT(tc_tp_event_render(t, 7, d, n, &r, &e), -1);
	CHECK(strstr(e.msg, "field msg") != NULL);
	CHECK_INT(r.type, TC_REC_RANGE);	/* untouched */
	tc_tp_event_free(t);
	tc_tracing_data_read_free(tep);
}

TEST(every_truncation_is_an_error_with_its_offset)
{
	struct tep_handle *tep;
	struct tc_err e;

	build();
	for (size_t len = 0; len < tb.len; len++) {
		memset(&e, 0, sizeof(e));
		CHECK_INT(tc_tracing_data_read(&tep, tb.b, len, BASE, "f", &e), -1);
		CHECK(tep == NULL);
		CHECK(strstr(e.msg, "f: tracing data at offset 0x") != NULL);
		if (tc_failed)
			break;
	}
}

TEST(sizes_that_lie_are_errors_at_their_offset)
{
	struct tep_handle *tep;
	struct tc_err e = { 0 };
	char want[80];

	build();
	memset(tb.b + tb.fmt_size_at, 0xff, 8);
	CHECK_INT(tc_tracing_data_read(&tep, tb.b, tb.len, BASE, "f", &e), -1);
	CHECK_INT(e.errnum, EINVAL);
	snprintf(want, sizeof(want), "offset 0x%zx: event format needs 0xffffffffffffffff bytes",
		 BASE + tb.fmt_size_at + 8);
	CHECK(strstr(e.msg, want) != NULL);
	build();
	tb.b[0] = 0;
	CHECK_INT(tc_tracing_data_read(&tep, tb.b, tb.len, BASE, "f", &e), -1);
	CHECK(strstr(e.msg, "offset 0x1000: no magic") != NULL);
}

/* Formats that crash libtraceevent 1.7.1's parser are refused before it sees them. */
TEST(formats_libtraceevent_cannot_take_are_refused)
{
	char bad[sizeof(format) + 8], *p;
	struct tep_handle *tep;
	struct tc_err e = { 0 };

	strcpy(bad, format);
	p = strstr(bad, "value;");
	memcpy(p, "vaxue;", 6);	/* REC->value now names no field */
	build_with(bad);
	CHECK_INT(tc_tracing_data_read(&tep, tb.b, tb.len, BASE, "f", &e), -1);
	CHECK(strstr(e.msg, "print fmt names field \"value\" that it does not define") != NULL);
	CHECK_INT(tc_tracing_data_read_check(tb.b, tb.len, BASE, "f", &e), -1);

	strcpy(bad, format);
	p = strstr(bad, "comm[16]");
	p[5] = (char)0xd9;
	build_with(bad);
	CHECK_INT(tc_tracing_data_read(&tep, tb.b, tb.len, BASE, "f", &e), -1);
	{
		char want[80];

		snprintf(want, sizeof(want), "offset 0x%zx: event format holds a byte that is not "
			 "printable ASCII", BASE + tb.fmt_size_at + 8 + (size_t)(p + 5 - bad));
		CHECK(strstr(e.msg, want) != NULL);
	}
	build();
	CHECK_INT(tc_tracing_data_read_check(tb.b, tb.len, BASE, "f", &e), 0);
}

/* The kernel writes tid -1 for a thread already gone (pid too if its process went): text
 * shows them as perf script does, JSON leaves them out. */
TEST(events_of_tasks_gone_keep_perfs_pid_and_tid)
{
	static const struct tc_rec_field fl[] = { { .name = "n", .kind = TC_FIELD_UINT, .u = 3 } };
	struct tc_rec r = { .type = TC_REC_EVENT, .id = -1, .cpu = 2, .pid = 12195, .tid = -1,
			    .offset = 0x10, .name = "s:e", .text = "n=3", .has_time = true,
			    .time = 7, .fields = fl, .nfields = 1 };
	char buf[512];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	struct tc_listing o;

	tc_listing_init(&o, f, false);
	tc_listing_write(&o, &r);
	r.pid = -1;
	tc_listing_write(&o, &r);
	o.json = true;
	tc_listing_write(&o, &r);
	fclose(f);
	CHECK_STR(buf, "        10  cpu 2 12195/-1  event     0.000000007 s:e: n=3\n"
		  "        10  cpu 2 -1/-1  event     0.000000007 s:e: n=3\n"
		  "{\"type\":\"event\",\"cpu\":2,\"offset\":16,\"name\":\"s:e\",\"time\":7,"
		  "\"fields\":{\"n\":3},\"text\":\"n=3\"}\n");
}

/* A printk format line without its quotes overflowed libtraceevent 1.7.1's heap (found by
 * fuzzing): such lines are refused at their offset; the kernel's own lines pass. */
TEST(printk_formats_are_checked_line_by_line)
{
	struct tep_handle *tep;
	struct tc_err e = { 0 };
	char want[96];

	printk_text = "0xffffffff82819e34 : \"thaw_processes\"\n0xffffffff8281ac6e : \"rcu\"\n";
	build();
	CHECK_INT(tc_tracing_data_read(&tep, tb.b, tb.len, BASE, "f", &e), 0);
	tc_tracing_data_read_free(tep);
	printk_text = "0xffffffff82819e34 : \"thaw_processes\"\n0xffffffff82853e4c : \n\"x\"\n";
	build();
	CHECK_INT(tc_tracing_data_read(&tep, tb.b, tb.len, BASE, "f", &e), -1);
	snprintf(want, sizeof(want), "offset 0x%zx: printk format line is not",
		 BASE + tb.len - 8 - strlen(printk_text) + 38);
	CHECK(strstr(e.msg, want) != NULL);
	CHECK_INT(tc_tracing_data_read_check(tb.b, tb.len, BASE, "f", &e), -1);
	printk_text = "";
}
