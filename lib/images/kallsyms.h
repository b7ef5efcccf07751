/* Kernel symbols from a /proc/kallsyms-format file ("ADDR TYPE NAME[\t[MODULE]]" lines), read
 * as perf reads one: text, weak, data and bss symbols (types T, W, D, B in either case), ARM
 * mapping symbols ("$x") left out; a symbol ends where the next one starts, except that the
 * last one of the kernel or of a module ends at the next page boundary plus a page; of
 * several symbols at one address the last one in the file stands. */
#ifndef TC_LIB_IMAGES_KALLSYMS_H
#define TC_LIB_IMAGES_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/util/err.h"

struct tc_kallsyms;

/* NULL with e filled: unreadable, no symbol at all, or every address 0 (kptr_restrict). */
struct tc_kallsyms *tc_kallsyms_open(const char *path, struct tc_err *e);
void tc_kallsyms_free(struct tc_kallsyms *k);

size_t tc_kallsyms_count(const struct tc_kallsyms *k);
/* Address of the text symbol (T or W) named name, as perf finds its relocation reference
 * (_text, _stext); -1 if there is none. */
int tc_kallsyms_addr(const struct tc_kallsyms *k, const char *name, uint64_t *addr);
/* The symbol covering addr, or NULL; *off gets addr - its start, *module its module's name
 * (NULL for the kernel itself). Strings live as long as k. */
const char *tc_kallsyms_find(const struct tc_kallsyms *k, uint64_t addr, uint64_t *off,
			     const char **module);

#endif
