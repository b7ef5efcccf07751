/* wr_bench: the record writer's speed (lib/output/listing.c), alone: N synthetic branch or
 * range records written as decode writes them, to standard output, and the rate on stderr:
 *
 *   wr_bench [-j] [-n N] [--ranges] [--etm] [--fields LIST] [--unbatched] [--sym ELF]
 *            [--no-keep] >/dev/null
 *
 * -j JSON lines (else text); --ranges range records (else branches); --etm records with a
 * trace ID and CPU, as CoreSight's (four in turn); --fields -F's LIST; --unbatched hands
 * each record to stdio (decode and its per-thread streams batch); --sym ELF symbolizes
 * through the address spaces (lib/images/images.c) with ELF mapped in one process,
 * addresses at its functions (else a symbolizer that returns one fixed answer, the writer
 * alone); the writer keeps the symbols' forms as decode's does (tc_listing_keep_syms: the
 * address space never changes here), or not with --no-keep. Prints
 * "wr_bench: N records, B bytes in C s CPU (W s wall): R M records/s, M MB/s" (rates by
 * CPU time: the machine may be shared). Timings only, not a test. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "lib/images/elf.h"
#include "lib/images/images.h"
#include "lib/output/listing.h"

#define PID 4242
#define NADDR 256

static int fixed_sym(void *ctx, int pid, uint64_t addr, struct tc_images_sym *s)
{
	(void)ctx;
	(void)pid;
	*s = (struct tc_images_sym){ .dso = "/usr/lib/x86_64-linux-gnu/libc.so.6",
				     .sym = "__libc_start_main", .sym_off = addr & 0xff,
				     .dso_off = addr & 0xfffff };
	return 0;
}

static int images_sym(void *ctx, int pid, uint64_t addr, struct tc_images_sym *s)
{
	return tc_images_symbol(ctx, pid, addr, s);
}

/* The space number: the mappings are made before the first record and stay. */
static const uint64_t *space_of(void *ctx)
{
	static const uint64_t space = 1;

	(void)ctx;
	return &space;
}

/* Counts what the writer gives stdout, on its way to /dev/null or wherever. */
static unsigned long long nbytes;

static ssize_t count_write(void *c, const char *buf, size_t n)
{
	FILE *f = c;

	nbytes += n;
	return (ssize_t)fwrite(buf, 1, n, f);
}

static double now(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void usage(void)
{
	fprintf(stderr, "usage: wr_bench [-j] [-n N] [--ranges] [--etm] [--fields LIST] "
			"[--unbatched] [--sym ELF] [--no-keep]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	bool json = false, ranges = false, etm = false, batch = true, keep = true;
	const char *elf_path = NULL, *fields = NULL;
	unsigned long long n = 10000000;
	uint64_t addrs[NADDR];
	struct tc_images *im = NULL;
	struct tc_listing o;
	double t0, t1, c0, c1;
	FILE *out;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-j"))
			json = true;
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--ranges"))
			ranges = true;
		else if (!strcmp(argv[i], "--etm"))
			etm = true;
		else if (!strcmp(argv[i], "--unbatched"))
			batch = false;
		else if (!strcmp(argv[i], "--no-keep"))
			keep = false;
		else if (!strcmp(argv[i], "--fields") && i + 1 < argc)
			fields = argv[++i];
		else if (!strcmp(argv[i], "--sym") && i + 1 < argc)
			elf_path = argv[++i];
		else
			usage();
	}
	/* a FILE that counts what reaches it, over stdout unbuffered */
	setvbuf(stdout, NULL, _IONBF, 0);
	out = fopencookie(stdout, "w", (cookie_io_functions_t){ .write = count_write });
	if (!out)
		return 2;
	tc_listing_init(&o, out, json);
	if (fields) {
		char bad[64];

		if (tc_listing_fields_parse(fields, &o.fields, bad, sizeof(bad))) {
			fprintf(stderr, "wr_bench: unknown field %s\n", bad);
			return 2;
		}
	}
	for (size_t i = 0; i < NADDR; i++)
		addrs[i] = 0x7f0000001000ULL + i * 0x37;
	if (elf_path) {
		/* the ELF mapped whole at base, from offset 0; addresses in its functions */
		const uint64_t base = 0x555555554000ULL;
		struct tc_err e;
		struct tc_elf *elf = tc_elf_open(elf_path, &e);
		struct stat st;
		size_t k = 0, nsym;

		if (!elf || stat(elf_path, &st)) {
			fprintf(stderr, "wr_bench: %s: %s\n", elf_path, elf ? "cannot stat" : e.msg);
			return 2;
		}
		nsym = tc_elf_nsymbols(elf);
		for (size_t i = 0; nsym && k < NADDR; i++) {
			uint64_t value, size, off;
			unsigned shndx;

			if (!tc_elf_symbol_at(elf, i % nsym, &value, &size, &shndx) ||
			    tc_elf_vaddr_to_offset(elf, value + (i / nsym) % (size ? size : 1), &off))
				continue;
			addrs[k++] = base + off;
			if (i > 64 * NADDR)
				break;
		}
		tc_elf_close(elf);
		if (!k) {
			fprintf(stderr, "wr_bench: %s has no function symbols\n", elf_path);
			return 2;
		}
		for (size_t i = k; i < NADDR; i++)
			addrs[i] = addrs[i % k];
		if (!(im = tc_images_new(NULL)))
			return 2;
		tc_images_map(im, PID, base, (uint64_t)st.st_size, 0, elf_path, NULL, 0);
		o.sym = images_sym;
		o.sym_ctx = im;
	} else {
		o.sym = fixed_sym;
	}
	if (keep && tc_listing_keep_syms(&o, space_of, NULL))
		return 2;
	tc_listing_batch(&o, batch);
	t0 = now(CLOCK_MONOTONIC);
	c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	for (unsigned long long i = 0; i < n; i++) {
		struct tc_rec r = {
			.type = ranges ? TC_REC_RANGE : TC_REC_BRANCH, .id = etm ? 0x10 + (int)(i & 3) : -1,
			.cpu = etm ? (int)(i & 3) : -1, .pid = PID, .tid = PID + (etm ? (int)(i & 3) : 0),
			.offset = 0x400 + i / 8, .start = addrs[i % NADDR],
			.end = addrs[(i * 7 + 3) % NADDR], .insns = (uint32_t)(i % 37) + 1,
			.isa = etm ? TC_ISA_A64 : TC_ISA_X86_64, .last = 'E',
			.last_type = (uint8_t)(i % 5), .has_time = !etm, .time = 1000000000ULL + i * 13,
		};

		tc_listing_write(&o, &r);
	}
	tc_listing_flush(&o);
	fflush(out);
	c1 = now(CLOCK_PROCESS_CPUTIME_ID);
	t1 = now(CLOCK_MONOTONIC);
	fprintf(stderr, "wr_bench: %llu records, %llu bytes in %.3f s CPU (%.3f s wall): "
		"%.2f M records/s, %.0f MB/s\n", n, nbytes, c1 - c0, t1 - t0,
		(double)n / (c1 - c0) / 1e6, (double)nbytes / (c1 - c0) / 1e6);
	tc_listing_fini(&o);
	tc_images_free(im);
	return ferror(out) || ferror(stdout) ? 1 : 0;
}
