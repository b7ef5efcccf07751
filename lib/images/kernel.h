/* The kernel's images for decoding kernel trace, as perf's --vmlinux, --kallsyms and kcore
 * give them: bytes of the kernel's text (from a vmlinux at its link addresses, or from a
 * kcore image at run-time addresses) and symbols (the vmlinux's symbol table, or a kallsyms
 * file). A recording names where its kernel ran by its kernel MMAP record,
 * "[kernel.kallsyms]_text" with pgoff the address of _text then: a vmlinux linked elsewhere
 * (KASLR) is read at address - (that - its own _text), and a kallsyms file of another boot
 * is shifted the same way, as perf does. Also where modules' sections are placed on this
 * machine (sysfs module/NAME/sections). Shared by every address space of a decode. */
#ifndef TC_LIB_IMAGES_KERNEL_H
#define TC_LIB_IMAGES_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util/err.h"

struct tc_kernel_opts {
	const char *vmlinux;		/* ELF vmlinux, or NULL */
	const char *kallsyms;		/* /proc/kallsyms-format file, or NULL */
	const char *kcore;		/* ELF core image, or a directory holding kcore and
					 * kallsyms (perf record --kcore's kcore_dir), or NULL */
	const char *sysfs_root;		/* for module/NAME/sections ("/sys"), or NULL */
};

struct tc_kernel;

/* NULL with e filled when a file given cannot be used (each is checked here, once). */
struct tc_kernel *tc_kernel_open(const struct tc_kernel_opts *o, struct tc_err *e);
void tc_kernel_free(struct tc_kernel *k);

/* Does k give the kernel's bytes, its symbols? */
bool tc_kernel_has_text(const struct tc_kernel *k);
bool tc_kernel_has_symbols(const struct tc_kernel *k);

/* The recording's relocation reference: its kernel MMAP's name after "]" ("_text") and
 * pgoff. Set before reading (name "" or NULL: none, addresses are taken as they are). */
void tc_kernel_set_ref(struct tc_kernel *k, const char *name, uint64_t addr);

/* The recorded kernel's build id (lowercase hex; "" unknown): a vmlinux of another build is
 * not used (as perf), and tc_kernel_why says so. */
void tc_kernel_expect_build_id(struct tc_kernel *k, const char *want);

/* Bytes of the kernel at run-time address addr: kcore, else the vmlinux (its file-backed
 * text, by link address); returns the count. */
size_t tc_kernel_read(struct tc_kernel *k, uint64_t addr, void *buf, size_t len);
/* Bytes at addr from kcore only (module text lives there too); 0 without kcore. */
size_t tc_kernel_read_kcore(struct tc_kernel *k, uint64_t addr, void *buf, size_t len);

/* The kernel symbol covering addr: the vmlinux's, else kallsyms' (module symbols too:
 * *module gets the module's name, NULL for the kernel itself). NULL if none. */
const char *tc_kernel_symbol(struct tc_kernel *k, uint64_t addr, uint64_t *off,
			     const char **module);
/* Is addr in the kernel's image? With a vmlinux, in one of its sections (perf's kernel map
 * is the vmlinux's, an address past it is in no DSO); without one, always. */
bool tc_kernel_covers(struct tc_kernel *k, uint64_t addr);
/* addr's link-time address in the vmlinux (addr itself without one). */
uint64_t tc_kernel_link_addr(struct tc_kernel *k, uint64_t addr);
/* The vmlinux, for its build id and path; NULL without one. */
struct tc_elf *tc_kernel_vmlinux(const struct tc_kernel *k);

/* Why kernel bytes or symbols are not there ("" if they are): for the missing-image list. */
const char *tc_kernel_why(const struct tc_kernel *k);

/* Where the kernel placed module name's section sec (sysfs module/NAME/sections/SEC);
 * -1 if this machine does not say. */
int tc_kernel_module_section(const struct tc_kernel *k, const char *name, const char *sec,
			     uint64_t *addr);

#endif
