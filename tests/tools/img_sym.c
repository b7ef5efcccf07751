/* img_sym: the address spaces a decoder builds from a perf.data's MMAP records
 * (lib/images/images.c), with the kernel's images (lib/images/kernel.c), asked for the
 * symbol and bytes at addresses read from stdin, one hex address a line:
 *
 *   img_sym [--vmlinux F] [--kallsyms F] [--kcore F|DIR] [--symfs DIR] [--sysfs-root DIR]
 *           [--bytes N] [--pid PID] PERF.DATA <addresses
 *
 * prints "ADDR SYM+0xOFF DSO" ("?" for no symbol, "-" for no DSO), then with --bytes the
 * first N bytes there in hex ("none" if none). Test tool only: it prints and exits. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/images/images.h"
#include "lib/images/kernel.h"
#include "lib/perfdata/perf_data.h"

static void die(const char *what, const struct tc_err *e)
{
	fprintf(stderr, "img_sym: %s: %s\n", what, e->msg);
	exit(2);
}

int main(int argc, char **argv)
{
	struct tc_kernel_opts ko = { 0 };
	struct tc_images_opts io = { 0 };
	struct tc_err e = { 0 };
	struct tc_perf_data *pd;
	struct tc_perf_data_record r;
	struct tc_kernel *k;
	struct tc_images *im;
	const char *input = NULL;
	size_t nbytes = 0;
	int32_t pid = TC_IMG_PID_KERNEL;
	char line[256];
	int n;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--vmlinux") && v)
			ko.vmlinux = argv[++i];
		else if (!strcmp(a, "--kallsyms") && v)
			ko.kallsyms = argv[++i];
		else if (!strcmp(a, "--kcore") && v)
			ko.kcore = argv[++i];
		else if (!strcmp(a, "--sysfs-root") && v)
			ko.sysfs_root = argv[++i];
		else if (!strcmp(a, "--symfs") && v)
			io.symfs = argv[++i];
		else if (!strcmp(a, "--bytes") && v)
			nbytes = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--pid") && v)
			pid = (int32_t)strtol(argv[++i], NULL, 0);
		else if (a[0] != '-' && !input)
			input = a;
		else {
			fprintf(stderr, "usage: img_sym [--vmlinux F] [--kallsyms F] [--kcore F] "
					"[--symfs DIR] [--sysfs-root DIR] [--bytes N] [--pid PID] "
					"PERF.DATA <addresses\n");
			return 2;
		}
	}
	if (!input) {
		fprintf(stderr, "img_sym: no perf.data\n");
		return 2;
	}
	if (!(k = tc_kernel_open(&ko, &e)))
		die("kernel images", &e);
	io.kernel = k;
	if (!(im = tc_images_new(&io)))
		return 2;
	if (tc_perf_data_open(&pd, input, &e))
		die(input, &e);
	tc_images_add_build_ids(im, tc_perf_data_features(pd)->build_ids,
				tc_perf_data_features(pd)->nr_build_ids);
	while ((n = tc_perf_data_next(pd, &r, &e)) > 0)
		if (r.type == PERF_RECORD_MMAP || r.type == PERF_RECORD_MMAP2)
			tc_images_map(im, (int32_t)r.u.mmap.pid, r.u.mmap.start, r.u.mmap.len,
				      r.u.mmap.pgoff, r.u.mmap.filename,
				      r.u.mmap.has_build_id ? r.u.mmap.build_id : NULL,
				      r.u.mmap.has_build_id ? r.u.mmap.build_id_size : 0);
	if (n < 0)
		die(input, &e);
	while (fgets(line, sizeof(line), stdin)) {
		struct tc_images_sym s;
		uint64_t addr = strtoull(line, NULL, 16);
		uint8_t buf[64];

		if (line[0] == '\n')
			continue;
		if (tc_images_symbol(im, pid, addr, &s))
			memset(&s, 0, sizeof(s));
		printf("%" PRIx64 " ", addr);
		if (s.sym)
			printf("%s+0x%" PRIx64, s.sym, s.sym_off);
		else
			printf("?");
		printf(" %s", s.dso ? s.dso : "-");
		if (nbytes) {
			size_t got = tc_images_read(im, pid, addr, buf,
						    nbytes < sizeof(buf) ? nbytes : sizeof(buf));

			printf(" ");
			if (!got)
				printf("none");
			for (size_t i = 0; i < got; i++)
				printf("%02x", buf[i]);
		}
		printf("\n");
	}
	tc_perf_data_close(pd);
	tc_images_free(im);
	tc_kernel_free(k);
	return 0;
}
