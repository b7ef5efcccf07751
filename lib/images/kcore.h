/* Kernel memory from an ELF core image of it (/proc/kcore, or the copy `perf record --kcore`
 * keeps in perf.data/kcore_dir/kcore): its PT_LOAD segments give bytes at kernel virtual
 * addresses. Read with pread, a segment at a time as needed (the live /proc/kcore claims
 * terabytes and cannot be mapped). */
#ifndef TC_LIB_IMAGES_KCORE_H
#define TC_LIB_IMAGES_KCORE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/util/err.h"

struct tc_kcore;

/* NULL with e filled: unreadable, not an ELF core file, or no loadable segment. */
struct tc_kcore *tc_kcore_open(const char *path, struct tc_err *e);
void tc_kcore_close(struct tc_kcore *k);

size_t tc_kcore_nsegments(const struct tc_kcore *k);
int tc_kcore_machine(const struct tc_kcore *k);
/* Copy up to len bytes at virtual address addr; returns the count (0 where nothing is). */
size_t tc_kcore_read(struct tc_kcore *k, uint64_t addr, void *buf, size_t len);
/* Does a segment hold addr? */
int tc_kcore_has(const struct tc_kcore *k, uint64_t addr);

#endif
