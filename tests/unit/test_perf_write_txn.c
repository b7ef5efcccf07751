/* The perf.data writer's transaction (lib/perfdata/perf_write.c): nothing is at FILE until
 * close, an old FILE becomes FILE.old only then, abort leaves FILE alone, another writer to
 * FILE is told, and a full disk (RLIMIT_FSIZE here) leaves a FILE that reads to its last
 * whole record. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/perfdata/perf_data.h"
#include "lib/perfdata/perf_write.h"
#include "tests/unit/tc_test.h"

static char dir[64];
static char told[1024];

static void on_notify(void *ctx, const char *msg)
{
	(void)ctx;
	snprintf(told, sizeof(told), "%s", msg);
}

static const char *at(const char *name)
{
	static char p[4][128];
	static unsigned k;

	if (!dir[0] && !mkdtemp(strcpy(dir, "/tmp/tc_pwt_XXXXXX")))
		return NULL;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

static unsigned entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	unsigned n = 0;

	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static void put_text(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(s, f);
		fclose(f);
	}
}

static int is_text(const char *path, const char *s)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return !strcmp(buf, s);
}

static int begin(struct tc_perf_write **w, const char *path, struct tc_err *e)
{
	struct perf_event_attr a = { .type = 8, .sample_type = PERF_SAMPLE_TID |
		PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER, .sample_id_all = 1 };
	uint64_t id = 1;

	if (tc_perf_write_open(w, path, e))
		return -1;
	if (tc_perf_write_add_attr(*w, &a, &id, 1, e) ||
	    tc_perf_write_feat_string(*w, TC_PERF_DATA_FEAT_HOSTNAME, "host", e) ||
	    tc_perf_write_comm(*w, 1, 1, "fixture", true, NULL, e)) {
		tc_perf_write_abort(*w);
		return -1;
	}
	return 0;
}

/* Records of the file, -1 if it does not read through. */
static long records(const char *path, unsigned *auxtrace)
{
	struct tc_perf_data *pd;
	struct tc_perf_data_record r;
	struct tc_err e = { 0 };
	long n = 0;
	int rc;

	*auxtrace = 0;
	if (tc_perf_data_open(&pd, path, &e))
		return -1;
	while ((rc = tc_perf_data_next(pd, &r, &e)) == 1) {
		n++;
		*auxtrace += r.type == TC_PERF_DATA_AUXTRACE;
	}
	tc_perf_data_close(pd);
	return rc ? -1 : n;
}

TEST(nothing_at_file_until_close_old_file_kept_then)
{
	const char *f = at("perf.data"), *old = at("perf.data.old");
	struct tc_perf_write *w;
	struct tc_err e = { 0 };
	unsigned aux;

	CHECK(f != NULL);
	if (!f)
		return;
	put_text(f, "previous\n");
	put_text(old, "older\n");
	CHECK_INT(begin(&w, f, &e), 0);
	CHECK(is_text(f, "previous\n"));
	CHECK(is_text(old, "older\n"));
	CHECK_INT(entries(), 3);	/* and the temporary */
	CHECK_INT(tc_perf_write_close(w, &e), 0);
	CHECK(is_text(old, "previous\n"));
	CHECK_INT(records(f, &aux), 1);
	CHECK_INT(entries(), 2);
}

TEST(abort_leaves_file_alone_and_removes_the_temporary)
{
	const char *f = at("ab.data");
	struct tc_perf_write *w;
	struct tc_err e = { 0 };

	put_text(f, "keep\n");
	CHECK_INT(begin(&w, f, &e), 0);
	tc_perf_write_abort(w);
	CHECK(is_text(f, "keep\n"));
	CHECK(access(at("ab.data.old"), F_OK) != 0);
	unlink(f);
}

TEST(a_second_writer_to_the_same_file_is_told)
{
	const char *f = at("two.data");
	struct tc_perf_write *a, *b;
	struct tc_err e = { 0 };
	unsigned aux;

	tc_perf_write_set_notify(on_notify, NULL);
	told[0] = 0;
	CHECK_INT(begin(&a, f, &e), 0);
	CHECK_INT(begin(&b, f, &e), 0);
	CHECK_INT(tc_perf_write_close(b, &e), 0);
	CHECK(!told[0]);
	CHECK_INT(tc_perf_write_close(a, &e), 0);
	CHECK(strstr(told, "two.data was created while this recording was made") != NULL);
	CHECK_INT(records(f, &aux), 1);
	CHECK_INT(records(at("two.data.old"), &aux), 1);
	tc_perf_write_set_notify(NULL, NULL);
}

TEST(planted_links_and_non_files_are_refused)
{
	const char *f = at("link.data");
	struct tc_perf_write *w;
	struct tc_err e = { 0 };

	CHECK_INT(symlink("/nonexistent-target", f), 0);
	CHECK_INT(tc_perf_write_open(&w, f, &e), -1);
	CHECK(strstr(e.msg, "is a symbolic link") != NULL);
	unlink(f);
	CHECK_INT(tc_perf_write_open(&w, dir, &e), -1);
	CHECK(strstr(e.msg, "not a regular file") != NULL);
}

/* 100 AUXTRACE records of 1000 bytes past a 24 KiB file size limit: the file keeps the
 * whole records that leave room for the features, and reads through. */
TEST(a_full_disk_keeps_the_file_up_to_its_last_whole_record)
{
	const char *f = at("full.data");
	struct rlimit old, lim = { 24 << 10, 0 };
	struct tc_perf_write *w;
	struct tc_err e = { 0 };
	static uint8_t trace[1000];
	void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
	unsigned aux = 0;
	long n;
	int rc = 0;

	getrlimit(RLIMIT_FSIZE, &old);
	lim.rlim_max = old.rlim_max;
	CHECK_INT(begin(&w, f, &e), 0);
	CHECK_INT(setrlimit(RLIMIT_FSIZE, &lim), 0);
	for (unsigned i = 0; i < 100 && !rc; i++)
		rc = tc_perf_write_auxtrace(w, trace, sizeof(trace), i * 1000ULL, i, 0, 1, 0, &e);
	CHECK_INT(rc, 0);	/* dropped, not failed: the caller finishes */
	CHECK(tc_perf_write_failed(w));
	CHECK_INT(tc_perf_write_close(w, &e), -1);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, was);
	CHECK_INT(e.errnum, EFBIG);
	CHECK(strstr(e.msg, "full.data: File too large writing at offset") != NULL);
	CHECK(strstr(e.msg, "the file keeps its first") != NULL);
	n = records(f, &aux);
	CHECK(n > 10);
	CHECK(aux > 10 && aux < 30);
	CHECK_INT(n, (long)aux + 1);
	CHECK_INT(entries() >= 1, 1);
}

TEST(cleanup)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlink(at(de->d_name));
	if (d)
		closedir(d);
	CHECK_INT(rmdir(dir), 0);
}
