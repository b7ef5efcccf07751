/* Reading sysfs-style trees (the real /sys or a test fixture) with errors that name the file. */
#ifndef TC_LIB_UTIL_SYSFS_H
#define TC_LIB_UTIL_SYSFS_H

#include <stdint.h>
#include <stddef.h>

#include "lib/util/err.h"
#include "lib/util/strv.h"

/* Read a small attribute file, trailing white space removed. */
int tc_sysfs_read(const char *path, char *buf, size_t len, struct tc_err *e);

/* Read a file holding one integer (decimal, or hex with 0x; base 16 forces hex). */
int tc_sysfs_read_u64(const char *path, int base, uint64_t *val, struct tc_err *e);

/* Names in a directory, sorted, without dot entries. */
int tc_sysfs_list(const char *dir, struct tc_strv *names, struct tc_err *e);

/* Last component of what a symlink points to ("../../x/etm0" -> "etm0"). */
int tc_sysfs_link_name(const char *path, char *buf, size_t len, struct tc_err *e);

/* snprintf for paths; truncation would name the wrong file, so it yields "" instead. */
void tc_sysfs_pathf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Does this path exist (following links)? */
int tc_sysfs_exists(const char *path);

/* Parse an integer string as sysfs files hold them; -1 if it is not exactly one number. */
int tc_sysfs_parse_u64(const char *s, int base, uint64_t *val);

#endif
