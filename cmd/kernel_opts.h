/* The kernel-image options decode, report and diff share (--vmlinux, --kallsyms, --kcore):
 * their table rows and their parsing, so the three commands say the same. */
#ifndef TC_CMD_KERNEL_OPTS_H
#define TC_CMD_KERNEL_OPTS_H

#include "lib/images/kernel.h"

/* Three rows of an option table, with keys key, key + 1, key + 2. */
#define TC_KERNEL_OPT_ROWS(key)                                                              \
	{ "vmlinux", (key), 1, "FILE", "kernel trace: the kernel's code and symbols from the "  \
	  "ELF vmlinux FILE (placed against the recording's _text, as perf does)" },            \
	{ "kallsyms", (key) + 1, 1, "FILE", "kernel trace: kernel and module symbols from FILE " \
	  "in /proc/kallsyms' format" },                                                        \
	{ "kcore", (key) + 2, 1, "FILE", "kernel trace: the kernel's and modules' code from an " \
	  "ELF core image (/proc/kcore, or perf record --kcore's kcore_dir: its kcore and "     \
	  "kallsyms)" }

/* 1 when key is one of the three (its value kept in k), 0 otherwise. */
static inline int tc_kernel_opt(int key, int base, const char *arg, struct tc_kernel_opts *k)
{
	if (key == base)
		k->vmlinux = arg;
	else if (key == base + 1)
		k->kallsyms = arg;
	else if (key == base + 2)
		k->kcore = arg;
	else
		return 0;
	return 1;
}

#endif
