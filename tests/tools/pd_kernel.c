/* pd_kernel: a recording whose traced program is mapped as the kernel. The MMAP/MMAP2 record
 * of PATH becomes the kernel's ([kernel.kallsyms]SYM, pid -1, pgoff the run-time address of
 * SYM): decoding it with --vmlinux PATH (or a kallsyms or kcore made from PATH) must give
 * what decoding the original gives with PATH found as a user binary, through the kernel's
 * images. Every other record is copied. Features are left out.
 *
 *   pd_kernel IN OUT PATH SYM ADDR
 *
 * Test tool only: it prints and exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/perfdata/perf_data.h"
#include "lib/perfdata/perf_write.h"

static void die(const char *what, const struct tc_err *e)
{
	fprintf(stderr, "pd_kernel: %s: %s\n", what, e->msg);
	exit(2);
}

int main(int argc, char **argv)
{
	struct tc_err e = { 0 };
	struct tc_perf_data *pd;
	struct tc_perf_data_record r;
	struct tc_perf_write *w;
	char name[256];
	int n, done = 0;

	if (argc != 6) {
		fprintf(stderr, "usage: pd_kernel IN OUT PATH SYM ADDR\n");
		return 2;
	}
	snprintf(name, sizeof(name), "[kernel.kallsyms]%s", argv[4]);
	if (tc_perf_data_open(&pd, argv[1], &e))
		die(argv[1], &e);
	if (tc_perf_write_open(&w, argv[2], &e))
		die(argv[2], &e);
	for (size_t i = 0; i < tc_perf_data_nr_attrs(pd); i++) {
		const struct tc_perf_data_attr *a = tc_perf_data_attr(pd, i);

		if (tc_perf_write_add_attr(w, &a->attr, a->ids, a->nr_ids, &e))
			die(argv[2], &e);
	}
	while ((n = tc_perf_data_next(pd, &r, &e)) > 0) {
		struct tc_perf_write_sid sid = { .pid = r.sid.pid, .tid = r.sid.tid,
						 .time = r.sid.time, .id = r.sid.id,
						 .cpu = r.sid.cpu };
		int rc;

		if ((r.type == PERF_RECORD_MMAP || r.type == PERF_RECORD_MMAP2) &&
		    !strcmp(r.u.mmap.filename, argv[3])) {
			rc = tc_perf_write_mmap2(w,
				&(struct tc_perf_write_mmap2){ (uint32_t)-1, 0, r.u.mmap.start,
							       r.u.mmap.len,
							       strtoull(argv[5], NULL, 0), 0, 0, 0,
							       0, 5, 2, 1 /* KERNEL */, name },
				&sid, &e);
			done++;
		} else if (r.type == TC_PERF_DATA_AUXTRACE) {
			rc = tc_perf_write_auxtrace(w, r.u.auxtrace.data, r.u.auxtrace.size,
						    r.u.auxtrace.offset, r.u.auxtrace.reference,
						    r.u.auxtrace.idx, r.u.auxtrace.tid,
						    r.u.auxtrace.cpu, &e);
		} else {
			rc = tc_perf_write_record(w, r.raw, r.size, &e);
		}
		if (rc)
			die(argv[2], &e);
	}
	if (n < 0)
		die(argv[1], &e);
	if (!done) {
		fprintf(stderr, "pd_kernel: no mapping of %s in %s\n", argv[3], argv[1]);
		return 2;
	}
	tc_perf_data_close(pd);
	if (tc_perf_write_close(w, &e))
		die(argv[2], &e);
	return 0;
}
