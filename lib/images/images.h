/* Address spaces of traced processes, rebuilt from MMAP/MMAP2 side-band: which file is mapped
 * where in which pid, with the ELF found through --symfs, the recorded path, or the build id
 * (~/.debug/.build-id style cache and the file's build-id feature). Serves both decoders:
 * bytes at an address (for instruction following) and symbol+offset for addresses. */
#ifndef TC_LIB_IMAGES_IMAGES_H
#define TC_LIB_IMAGES_IMAGES_H

#include <stddef.h>
#include <stdint.h>

#include "lib/perfdata/perf_data.h"
#include "lib/util/err.h"

#define TC_IMG_PID_KERNEL (-1)		/* mappings of the kernel (pid -1 in perf) */

struct tc_images;

struct tc_kernel;

struct tc_images_opts {
	const char *symfs;		/* root prepended to recorded paths, or NULL */
	const char *buildid_dir;	/* build-id cache, or NULL for none */
	/* The kernel's images (--vmlinux, --kallsyms, --kcore; lib/images/kernel.h), borrowed:
	 * it must outlive the address spaces. NULL: none given. */
	struct tc_kernel *kernel;
};

struct tc_images *tc_images_new(const struct tc_images_opts *o);
void tc_images_free(struct tc_images *im);

/* Build ids known from the file's build-id feature, used to find and check images. */
void tc_images_add_build_ids(struct tc_images *im, const struct tc_perf_data_build_id *ids,
			     size_t n);
/* A mapping from an MMAP/MMAP2 record (pid -1 = kernel). Anonymous and special mappings
 * ("[vdso]", "//anon") are recorded but have no bytes. A later mapping over the same range
 * replaces the earlier one. The kernel's own ("[kernel.kallsyms]_text", pgoff the address
 * of _text) is served by the kernel images; a kernel module (a relocatable .ko, mapped
 * from its start) has its sections placed as the kernel placed them: by this machine's
 * sysfs module/NAME/sections when the module is loaded there at the recorded address,
 * else as the kernel's module loader lays them out (its executable sections, .init ones
 * aside, one after the other in section order, each aligned, from the module's start). */
void tc_images_map(struct tc_images *im, int32_t pid, uint64_t start, uint64_t len,
		   uint64_t pgoff, const char *filename, const uint8_t *build_id, size_t bid_len);
/* A child inherits its parent's mappings (FORK); exec (COMM with exec) drops them. */
void tc_images_fork(struct tc_images *im, int32_t ppid, int32_t pid);
void tc_images_exec(struct tc_images *im, int32_t pid);

/* Copy up to len bytes at addr in pid (falling back to kernel mappings); returns the count,
 * 0 when nothing is mapped there or the file cannot be found. Files open lazily, once. */
size_t tc_images_read(struct tc_images *im, int32_t pid, uint64_t addr, void *buf, size_t len);

/* The file behind addr in pid, for a reader that maps files itself (libipt's sections):
 * the found file's path, and that its bytes from offset on are at start..start+len (len
 * ends with the mapping or the file). -1 where only tc_images_read serves: nothing mapped,
 * no file found, kernel images (read by link-time address). */
struct tc_images_span {
	const char *path;
	uint64_t start, len, offset;
};
int tc_images_span(struct tc_images *im, int32_t pid, uint64_t addr, struct tc_images_span *s);

struct tc_images_sym {
	const char *dso;		/* recorded path of the mapping, NULL if none */
	const char *sym;		/* function symbol, NULL if none */
	uint64_t sym_off;		/* addr - symbol start */
	uint64_t dso_off;		/* file-relative address (as perf's "ip" in the DSO) */
};
/* 0 and *s for a mapped address, -1 otherwise. Strings live as long as im. */
int tc_images_symbol(struct tc_images *im, int32_t pid, uint64_t addr, struct tc_images_sym *s);

/* The file behind an address, for profiles keyed by binary (AutoFDO). */
struct tc_images_file {
	const char *dso;		/* recorded path */
	const char *build_id;		/* the ELF's, lower-case hex; "" if it has none */
	uint64_t vaddr;			/* addr's link-time address in the file */
	uint64_t first_load;		/* link-time address of the first PT_LOAD segment */
};
/* 0 and *f where addr is mapped to a file that was found, -1 otherwise. */
int tc_images_file(struct tc_images *im, int32_t pid, uint64_t addr, struct tc_images_file *f);

/* "sym+0xoff", or "[file+0xoff]" without a symbol, into buf; -1 if addr is not mapped. */
int tc_images_format_sym(struct tc_images *im, int32_t pid, uint64_t addr, char *buf,
			 size_t len);

/* Images that were needed but not found: one line each ("path (build id ...)"), for the
 * end-of-decode report. */
size_t tc_images_missing(const struct tc_images *im, const char *const **paths);

#endif
