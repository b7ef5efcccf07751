/* Kernel symbols from a /proc/kallsyms-format file ("ADDR TYPE NAME[\t[MODULE]]" lines), read
 * as perf reads one: text, weak, data and bss symbols (types T, W, D, B in either case), ARM
 * mapping symbols ("$x") left out; a symbol ends where the next one starts, except that the
 * kernel's last before a module's (or a module's last before the kernel's) ends at the next
 * page boundary plus a page; of several at one address one stands, chosen as perf does
 * (one with a length, then not weak, global, fewer leading '_', the longer name): in a
 * kallsyms file, where only the last of them has a length, the last one. */
#ifndef TC_LIB_IMAGES_KALLSYMS_H
#define TC_LIB_IMAGES_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util/err.h"

struct tc_kallsyms;

/* NULL with e filled: unreadable, no symbol at all, or every address 0 (kptr_restrict). */
struct tc_kallsyms *tc_kallsyms_open(const char *path, struct tc_err *e);
void tc_kallsyms_free(struct tc_kallsyms *k);

size_t tc_kallsyms_count(const struct tc_kallsyms *k);

/* A table built by the caller with the same rules (a vmlinux's symbols, as perf reads them):
 * add each (size 0: unknown; type a kallsyms letter; bind STB_*; strings must outlive k),
 * then finish once (kallsyms: the page rule between kernel and module symbols). */
struct tc_kallsyms *tc_kallsyms_new(void);
int tc_kallsyms_add(struct tc_kallsyms *k, uint64_t addr, uint64_t size, char type, int bind,
		    const char *name, const char *module);
void tc_kallsyms_finish(struct tc_kallsyms *k, bool kallsyms);
/* Address of the text symbol (T or W) named name, as perf finds its relocation reference
 * (_text, _stext); -1 if there is none. */
int tc_kallsyms_addr(const struct tc_kallsyms *k, const char *name, uint64_t *addr);
/* The symbol covering addr, or NULL; *off gets addr - its start, *module its module's name
 * ("[name]"; NULL for the kernel itself). Strings live as long as k. */
const char *tc_kallsyms_find(const struct tc_kallsyms *k, uint64_t addr, uint64_t *off,
			     const char **module);

#endif
