/* --per-thread streams (lib/output/streams.c): one file per thread, more threads than open files. */
#include <unistd.h>

#include "lib/output/streams.h"
#include "tests/unit/tc_test.h"

static int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = 0, c;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

TEST(one_file_per_thread_even_past_the_open_limit)
{
	char dir[] = "/tmp/tc-streams-XXXXXX", path[256];
	struct tc_streams *s;
	struct tc_err e;
	unsigned n = 0;

	CHECK(mkdtemp(dir) != NULL);
	s = tc_streams_open(dir, true, &e);
	CHECK(s != NULL);
	if (!s)
		return;
	/* 300 threads, 3 records each, interleaved so files must be closed and reopened. */
	for (int round = 0; round < 3; round++)
		for (int t = 0; t < 300; t++) {
			struct tc_rec r = { .type = TC_REC_RANGE, .id = -1, .cpu = 1, .pid = 1,
					    .tid = t, .start = 0x1000, .end = 0x1010, .insns = 4 };

			CHECK_INT(tc_streams_write(s, &r, &e), 0);
		}
	{
		struct tc_rec r = { .type = TC_REC_RANGE, .id = 0x10, .cpu = -1, .pid = -1, .tid = -1 };

		CHECK_INT(tc_streams_write(s, &r, &e), 0);
	}
	CHECK_INT(tc_streams_close(s, &n, &e), 0);
	CHECK_INT(n, 301);
	snprintf(path, sizeof(path), "%s/tid-0.jsonl", dir);
	CHECK_INT(count_lines(path), 3);
	snprintf(path, sizeof(path), "%s/tid-299.jsonl", dir);
	CHECK_INT(count_lines(path), 3);
	snprintf(path, sizeof(path), "%s/id-0x10.jsonl", dir);
	CHECK_INT(count_lines(path), 1);
	for (int t = 0; t < 300; t++) {
		snprintf(path, sizeof(path), "%s/tid-%d.jsonl", dir, t);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/id-0x10.jsonl", dir);
	unlink(path);
	CHECK_INT(rmdir(dir), 0);
}

TEST(unwritable_directory_is_an_error)
{
	struct tc_err e;

	CHECK(tc_streams_open("/proc/no/such/dir", false, &e) == NULL);
	CHECK(strstr(e.msg, "cannot create directory /proc/no/such/dir") != NULL);
}
