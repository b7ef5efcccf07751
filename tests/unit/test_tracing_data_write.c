/* lib/perfdata/tracing_data_write.c: perf's tracing-data layout, read back field by field from a made-up
 * tracefs tree (files with known text, one of the optional ones missing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/perfdata/tracing_data_write.h"
#include "tests/unit/tc_test.h"

static char root[] = "/tmp/tc-tracedata-XXXXXX";

static void put(const char *rel, const char *text)
{
	char p[512], dir[512], *s;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", p);
	for (s = dir + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(dir, 0755);
		*s = '/';
	}
	f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A reader of the buffer: each take checks it stays inside. */
struct rd {
	const uint8_t *p;
	size_t n, at;
	int bad;
};

static const void *take(struct rd *r, size_t n)
{
	const void *q = r->p + r->at;

	if (r->n - r->at < n) {
		r->bad = 1;
		return "";
	}
	r->at += n;
	return q;
}

static uint64_t num(struct rd *r, size_t n)
{
	uint64_t v = 0;

	memcpy(&v, take(r, n), n);
	return v;
}

/* A u64-sized file whose text must be want. */
static int file_is(struct rd *r, size_t hdr, const char *want)
{
	uint64_t n = num(r, hdr);
	const char *t = take(r, n);

	return !r->bad && n == strlen(want) && !memcmp(t, want, n);
}

TEST(layout_is_perfs)
{
	const char *names[] = { "sched:sched_switch", "irq:irq_handler_entry",
				"sched:sched_wakeup", "sched:sched_switch" };
	uint8_t *buf = NULL;
	size_t len = 0;
	struct tc_err e = { 0 };
	struct rd r;
	const char *s;

	if (!mkdtemp(root))
		SKIP("no temporary directory");
	put("events/header_page", "HP\n");
	put("events/header_event", "HE\n");
	put("events/sched/sched_switch/format", "name: sched_switch\n");
	put("events/sched/sched_wakeup/format", "name: sched_wakeup\n");
	put("events/irq/irq_handler_entry/format", "name: irq_handler_entry\n");
	put("saved_cmdlines", "1 init\n");
	/* no printk_formats: written as empty */
	CHECK_INT(tc_tracing_data_write(root, names, 4, &buf, &len, &e), 0);
	r = (struct rd){ .p = buf, .n = len };
	CHECK(!memcmp(take(&r, 10), "\027\010\104tracing", 10));
	CHECK(!memcmp(take(&r, 4), "0.6", 4));
	CHECK_INT(num(&r, 1), 0);			/* little-endian host */
	CHECK_INT(num(&r, 1), sizeof(long));
	CHECK_INT(num(&r, 4), sysconf(_SC_PAGESIZE));
	CHECK(!memcmp(take(&r, 12), "header_page", 12));
	CHECK(file_is(&r, 8, "HP\n"));
	CHECK(!memcmp(take(&r, 13), "header_event", 13));
	CHECK(file_is(&r, 8, "HE\n"));
	CHECK_INT(num(&r, 4), 0);			/* ftrace formats */
	CHECK_INT(num(&r, 4), 2);			/* systems */
	s = take(&r, 6);
	CHECK(!memcmp(s, "sched", 6));
	CHECK_INT(num(&r, 4), 2);			/* the repeat counts once */
	CHECK(file_is(&r, 8, "name: sched_switch\n"));
	CHECK(file_is(&r, 8, "name: sched_wakeup\n"));
	CHECK(!memcmp(take(&r, 4), "irq", 4));
	CHECK_INT(num(&r, 4), 1);
	CHECK(file_is(&r, 8, "name: irq_handler_entry\n"));
	CHECK_INT(num(&r, 4), 0);			/* kallsyms */
	CHECK(file_is(&r, 4, ""));			/* printk_formats, missing */
	CHECK(file_is(&r, 8, "1 init\n"));		/* saved_cmdlines */
	CHECK_INT(r.at, len);
	CHECK(!r.bad);
	free(buf);

	/* A tracepoint without a format file is an error naming it. */
	names[0] = "sched:nope";
	CHECK_INT(tc_tracing_data_write(root, names, 1, &buf, &len, &e), -1);
	CHECK(strstr(e.msg, "sched/nope/format") != NULL);
	CHECK(buf == NULL);
	CHECK_INT(tc_tracing_data_write("", names, 1, &buf, &len, &e), -1);
	CHECK(strstr(e.msg, "tracefs is not mounted") != NULL);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		CHECK_INT(system(cmd), 0);
	}
}
