#include "lib/util/sysfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tc_sysfs_read(const char *path, char *buf, size_t len, struct tc_err *e)
{
	ssize_t n;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return tc_err_sys(e, errno, "cannot open %s", path);
	while (got + 1 < len) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int err = errno;

			close(fd);
			return tc_err_sys(e, err, "cannot read %s", path);
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	while (got && (buf[got - 1] == '\n' || buf[got - 1] == ' ' || buf[got - 1] == '\t'))
		got--;
	buf[got] = '\0';
	if (memchr(buf, '\0', got))
		return tc_err_set(e, EINVAL, "%s holds binary data, not text", path);
	return 0;
}

int tc_sysfs_parse_u64(const char *s, int base, uint64_t *val)
{
	char *end;
	unsigned long long v;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || end == s || *end)
		return -1;
	*val = v;
	return 0;
}

int tc_sysfs_read_u64(const char *path, int base, uint64_t *val, struct tc_err *e)
{
	char buf[128];

	if (tc_sysfs_read(path, buf, sizeof(buf), e))
		return -1;
	if (tc_sysfs_parse_u64(buf, base, val))
		return tc_err_set(e, EINVAL, "%s: expected a number, found '%s'", path, buf);
	return 0;
}

int tc_sysfs_list(const char *dir, struct tc_strv *names, struct tc_err *e)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return tc_err_sys(e, errno, "cannot open directory %s", dir);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (tc_strv_push(names, de->d_name)) {
			closedir(d);
			return tc_err_sys(e, ENOMEM, "listing %s", dir);
		}
	}
	closedir(d);
	tc_strv_sort(names);
	return 0;
}

int tc_sysfs_link_name(const char *path, char *buf, size_t len, struct tc_err *e)
{
	char target[4096];
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	const char *base;

	if (n < 0)
		return tc_err_sys(e, errno, "cannot read link %s", path);
	target[n] = '\0';
	while (n > 1 && target[n - 1] == '/')
		target[--n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (!*base || !strcmp(base, "..") || !strcmp(base, "."))
		return tc_err_set(e, EINVAL, "link %s points to '%s', not a device", path, target);
	if (strlen(base) >= len)
		return tc_err_set(e, ENAMETOOLONG, "link %s: target name too long", path);
	strcpy(buf, base);
	return 0;
}

int tc_sysfs_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

void tc_sysfs_pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		buf[0] = '\0';
}
