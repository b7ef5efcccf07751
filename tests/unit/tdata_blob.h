/* perf's tracing data (HEADER_TRACING_DATA) for tests, in perf's layout: one system with one
 * event format, optional printk formats, no ftrace formats, kallsyms or saved cmdlines. */
#ifndef TC_TESTS_UNIT_TDATA_BLOB_H
#define TC_TESTS_UNIT_TDATA_BLOB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct tdata_blob {
	uint8_t b[4096];
	size_t len;
	size_t fmt_size_at;	/* where the event format's u64 size is */
};

static inline void tdata_put(struct tdata_blob *t, const void *p, size_t n)
{
	memcpy(t->b + t->len, p, n);
	t->len += n;
}

static inline void tdata_put32(struct tdata_blob *t, uint32_t v) { tdata_put(t, &v, 4); }
static inline void tdata_put64(struct tdata_blob *t, uint64_t v) { tdata_put(t, &v, 8); }

static inline void tdata_blob_build(struct tdata_blob *t, const char *system, const char *fmt,
				    const char *printk)
{
	static const uint8_t magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	static const uint8_t endian_long[] = { 0, 8 };
	static const char header_page[] =
		"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";

	t->len = 0;
	tdata_put(t, magic, sizeof(magic));
	tdata_put(t, "0.6", 4);
	tdata_put(t, endian_long, 2);
	tdata_put32(t, 4096);
	tdata_put(t, "header_page", 12);
	tdata_put64(t, sizeof(header_page) - 1);
	tdata_put(t, header_page, sizeof(header_page) - 1);
	tdata_put(t, "header_event", 13);
	tdata_put64(t, 0);
	tdata_put32(t, 0);		/* ftrace formats */
	tdata_put32(t, 1);		/* systems */
	tdata_put(t, system, strlen(system) + 1);
	tdata_put32(t, 1);
	t->fmt_size_at = t->len;
	tdata_put64(t, strlen(fmt));
	tdata_put(t, fmt, strlen(fmt));
	tdata_put32(t, 0);		/* kallsyms */
	tdata_put32(t, (uint32_t)strlen(printk));	/* printk formats */
	tdata_put(t, printk, strlen(printk));
	tdata_put64(t, 0);		/* saved cmdlines */
}

#endif
