#include "lib/perfdata/tracing_data_write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util/grow.h"
#include "lib/util/sysfs.h"

struct tbuf {
	uint8_t *p;
	size_t n, cap;
	bool oom;
};

static void put(struct tbuf *b, const void *p, size_t n)
{
	if (b->oom)
		return;
	if (tc_grow((void **)&b->p, &b->cap, b->n + n, 1)) {
		b->oom = true;
		return;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void put_u32(struct tbuf *b, uint32_t v) { put(b, &v, 4); }

/* A tracefs file whole (its size is unknown until read: tracefs reports 0), preceded by its
 * length in hdr (4 or 8) bytes. missing_ok writes an empty one for a file that is not there. */
static int put_file(struct tbuf *b, const char *path, size_t hdr, bool missing_ok,
		    struct tc_err *e)
{
	uint64_t size = 0;
	size_t at = b->n;
	char chunk[8192];
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 && !(missing_ok && errno == ENOENT))
		return tc_err_sys(e, errno, "tracing data: cannot read %s", path);
	put(b, &size, hdr);
	while (fd >= 0 && (r = read(fd, chunk, sizeof(chunk))) != 0) {
		if (r < 0) {
			int err = errno;

			close(fd);
			return tc_err_sys(e, err, "tracing data: reading %s", path);
		}
		put(b, chunk, (size_t)r);
		size += (uint64_t)r;
	}
	if (fd >= 0)
		close(fd);
	if (b->oom)
		return tc_err_set(e, ENOMEM, "out of memory for the tracing data");
	if (hdr == 4 && size > UINT32_MAX)
		return tc_err_set(e, EFBIG, "tracing data: %s is too large", path);
	if (hdr == 4) {
		uint32_t s32 = (uint32_t)size;

		memcpy(b->p + at, &s32, 4);
	} else {
		memcpy(b->p + at, &size, 8);
	}
	return 0;
}

/* The distinct systems of names[], in first-seen order; each name's system ends at ':'. */
static size_t sys_len(const char *name)
{
	const char *c = strchr(name, ':');

	return c ? (size_t)(c - name) : strlen(name);
}

static bool seen_before(const char *const *names, size_t i, bool whole)
{
	for (size_t k = 0; k < i; k++) {
		size_t l = sys_len(names[i]);

		if (whole ? !strcmp(names[k], names[i]) :
		    sys_len(names[k]) == l && !strncmp(names[k], names[i], l))
			return true;
	}
	return false;
}

int tc_tracing_data_write(const char *tracefs, const char *const *names, size_t n, uint8_t **out,
		  size_t *len, struct tc_err *e)
{
	static const uint8_t magic[10] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const union { uint32_t u; uint8_t b[4]; } probe = { .u = 1 };
	struct tbuf b = { 0 };
	char p[PATH_MAX];
	uint8_t u8;
	uint32_t nsys = 0;

	*out = NULL;
	*len = 0;
	if (!tracefs || !*tracefs)
		return tc_err_set(e, ENOENT, "tracing data: tracefs is not mounted (mount -t "
				  "tracefs nodev /sys/kernel/tracing)");
	for (size_t i = 0; i < n; i++)
		if (!strchr(names[i], ':'))
			return tc_err_set(e, EINVAL, "tracing data: '%s' is not group:name",
					  names[i]);
	put(&b, magic, sizeof(magic));
	put(&b, "0.6", 4);
	u8 = probe.b[0] != 1;		/* big-endian */
	put(&b, &u8, 1);
	u8 = (uint8_t)sizeof(long);
	put(&b, &u8, 1);
	put_u32(&b, (uint32_t)sysconf(_SC_PAGESIZE));
	put(&b, "header_page", 12);
	tc_sysfs_pathf(p, sizeof(p), "%s/events/header_page", tracefs);
	if (put_file(&b, p, 8, false, e))
		goto fail;
	put(&b, "header_event", 13);
	tc_sysfs_pathf(p, sizeof(p), "%s/events/header_event", tracefs);
	if (put_file(&b, p, 8, false, e))
		goto fail;
	/* ftrace's own events (function, print, ...) are never recorded here. */
	put_u32(&b, 0);
	for (size_t i = 0; i < n; i++)
		nsys += !seen_before(names, i, false);
	put_u32(&b, nsys);
	for (size_t i = 0; i < n; i++) {
		uint32_t count = 0;
		size_t l = sys_len(names[i]);

		if (seen_before(names, i, false))
			continue;
		put(&b, names[i], l);
		put(&b, "", 1);
		for (size_t k = i; k < n; k++)
			count += sys_len(names[k]) == l && !strncmp(names[k], names[i], l) &&
				 !seen_before(names, k, true);
		put_u32(&b, count);
		for (size_t k = i; k < n; k++) {
			if (sys_len(names[k]) != l || strncmp(names[k], names[i], l) ||
			    seen_before(names, k, true))
				continue;
			tc_sysfs_pathf(p, sizeof(p), "%s/events/%.*s/%s/format", tracefs, (int)l,
				 names[k], names[k] + l + 1);
			if (put_file(&b, p, 8, false, e))
				goto fail;
		}
	}
	put_u32(&b, 0);			/* kallsyms: none, as perf writes */
	tc_sysfs_pathf(p, sizeof(p), "%s/printk_formats", tracefs);
	if (put_file(&b, p, 4, true, e))
		goto fail;
	tc_sysfs_pathf(p, sizeof(p), "%s/saved_cmdlines", tracefs);
	if (put_file(&b, p, 8, true, e))
		goto fail;
	if (b.oom) {
		tc_err_set(e, ENOMEM, "out of memory for the tracing data");
		goto fail;
	}
	*out = b.p;
	*len = b.n;
	return 0;
fail:
	free(b.p);
	return -1;
}
