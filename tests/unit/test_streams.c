/* --per-thread streams (lib/output/streams.c): one file per thread, more threads than open files. */
#include <stdio.h>
#include <sys/stat.h>
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
	s = tc_streams_open(dir, true, false, &e);
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

	CHECK(tc_streams_open("/proc/no/such/dir", false, false, &e) == NULL);
	CHECK(strstr(e.msg, "cannot create directory /proc/no/such/dir") != NULL);
}

static int write_one(struct tc_streams *s, int tid, struct tc_err *e)
{
	struct tc_rec r = { .type = TC_REC_RANGE, .id = -1, .cpu = 1, .pid = 1, .tid = tid };

	return tc_streams_write(s, &r, e);
}

static long size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long)st.st_size;
}

TEST(a_link_planted_in_the_directory_is_refused_even_with_overwrite)
{
	char dir[] = "/tmp/tc-streams-XXXXXX", link[256], target[256], dangling[256];
	struct tc_streams *s;
	struct tc_err e;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(target, sizeof(target), "%s.target", dir);
	CHECK((f = fopen(target, "w")) != NULL);
	if (!f)
		return;
	fputs("precious\n", f);
	fclose(f);
	snprintf(link, sizeof(link), "%s/tid-7.txt", dir);
	CHECK_INT(symlink(target, link), 0);
	snprintf(dangling, sizeof(dangling), "%s/tid-8.txt", dir);
	CHECK_INT(symlink("/tmp/tc-streams-no-such-file-made", dangling), 0);

	/* not empty: refused as it is */
	CHECK(tc_streams_open(dir, false, false, &e) == NULL);
	CHECK(strstr(e.msg, "is not empty") != NULL);

	/* allowed to overwrite: the links are still not followed */
	s = tc_streams_open(dir, false, true, &e);
	CHECK(s != NULL);
	if (!s)
		return;
	CHECK_INT(write_one(s, 7, &e), -1);
	CHECK(strstr(e.msg, "tid-7.txt is a symbolic link") != NULL);
	CHECK_INT(write_one(s, 8, &e), -1);
	CHECK(strstr(e.msg, "tid-8.txt is a symbolic link") != NULL);
	CHECK_INT(write_one(s, 9, &e), 0);
	CHECK_INT(tc_streams_close(s, NULL, &e), 0);
	CHECK_INT((int)size_of(target), 9);
	CHECK(access("/tmp/tc-streams-no-such-file-made", F_OK) != 0);

	unlink(link);
	unlink(dangling);
	snprintf(link, sizeof(link), "%s/tid-9.txt", dir);
	unlink(link);
	unlink(target);
	CHECK_INT(rmdir(dir), 0);
}

TEST(the_directory_itself_a_link_is_refused)
{
	char dir[] = "/tmp/tc-streams-XXXXXX", link[256];
	struct tc_err e;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(link, sizeof(link), "%s.link", dir);
	CHECK_INT(symlink(dir, link), 0);
	CHECK(tc_streams_open(link, false, true, &e) == NULL);
	CHECK(strstr(e.msg, "is a symbolic link") != NULL);
	unlink(link);
	CHECK_INT(rmdir(dir), 0);
}
