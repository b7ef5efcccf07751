/* perf's address filters for user-space code, as `perf record --filter` takes them:
 * "filter SYM@FILE", "filter SYM/SIZE@FILE", "filter START/SIZE@FILE", comma-separated.
 * START is a link-time address in FILE (as nm prints it); SYM a function symbol of FILE
 * (its size unless SIZE is given). Resolved against the running process's mappings into
 * absolute address ranges, as the kernel programs the hardware. */
#ifndef TC_LIB_IMAGES_ADDR_FILTER_H
#define TC_LIB_IMAGES_ADDR_FILTER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/util/err.h"

/* One line of /proc/PID/maps. */
struct tc_map {
	uint64_t start, end, pgoff, ino;
	uint32_t maj, min;
	int prot;		/* PROT_READ|PROT_WRITE|PROT_EXEC */
	char *path;		/* "" for anonymous */
};

struct tc_maps {
	struct tc_map *v;
	size_t n;
};

int tc_addr_filter_maps_read(pid_t pid, struct tc_maps *out, struct tc_err *e);
void tc_addr_filter_maps_free(struct tc_maps *m);

struct tc_addr_range {
	uint64_t start, end;	/* [start, end) */
};

struct tc_addr_filter {
	struct tc_addr_range *v;
	size_t n;
	/* The same ranges as perf record writes a resolved filter ("filter 0xOFF/0xSIZE@PATH",
	 * file offsets, comma-separated): perf's decoder checks TIP.PGD targets against it. */
	char *perf;
};

/* Resolve spec for the process whose mappings are m. The executable code of each FILE
 * (matched by real path) must be mapped. */
int tc_addr_filter_resolve(const char *spec, const struct tc_maps *m, struct tc_addr_filter *out,
			   struct tc_err *e);
/* The executable mappings of path (a real path): the default region of the recorder. */
int tc_addr_filter_file(const char *path, const struct tc_maps *m, struct tc_addr_filter *out,
			struct tc_err *e);
int tc_addr_filter_has(const struct tc_addr_filter *f, uint64_t ip);
void tc_addr_filter_free(struct tc_addr_filter *f);

#endif
