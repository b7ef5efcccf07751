/* libFuzzer target for ELF and image loading (lib/images/elf.c through libelf, images.c):
 * the input is written to a file and opened as an ELF; every segment, symbol and the build
 * id are looked at, bytes are read at every segment's start and end, and the file is
 * mapped into an address space (lib/images) and read and symbolised there. A refused file
 * is fine; a crash, leak, hang or an answer outside the file is not. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/images/elf.h"
#include "lib/images/images.h"
#include "tests/fuzz/fuzz_check.h"

static char path[64];
static volatile uint64_t sink;

static void remove_file(void)
{
	unlink(path);
}

static void look(struct tc_elf *elf)
{
	const struct tc_elf_seg *seg = NULL;
	uint8_t buf[64];
	size_t n;

	seg = tc_elf_segments(elf, &n);
	CHECK(seg || !n);
	sink += (uint64_t)tc_elf_machine(elf) + (uint64_t)tc_elf_is_64(elf);
	if (tc_elf_build_id(elf))
		CHECK(strlen(tc_elf_build_id(elf)) <= 64);
	for (size_t i = 0; i < n && i < 64; i++) {
		uint64_t at[3] = { seg[i].vaddr, seg[i].vaddr + seg[i].filesz - 1,
				   seg[i].vaddr + seg[i].filesz / 2 };

		CHECK(seg[i].offset <= tc_elf_size(elf) &&
		      seg[i].filesz <= tc_elf_size(elf) - seg[i].offset);
		for (int k = 0; k < 3; k++) {
			uint64_t off, va, so;
			size_t got = tc_elf_read_vaddr(elf, at[k], buf, sizeof(buf));
			const char *sym;

			CHECK(got <= sizeof(buf));
			for (size_t j = 0; j < got; j++)
				sink += buf[j];
			if (!tc_elf_vaddr_to_offset(elf, at[k], &off)) {
				CHECK(off < tc_elf_size(elf));
				got = tc_elf_read_offset(elf, off, buf, sizeof(buf));
				CHECK(got <= sizeof(buf));
				if (!tc_elf_offset_to_vaddr(elf, off, &va))
					sink += va;
			}
			if ((sym = tc_elf_symbol(elf, at[k], &so))) {
				uint64_t a;

				sink += strlen(sym) + so;
				if (!tc_elf_symbol_addr(elf, sym, &a))
					sink += a;
				if (!tc_elf_symbol_size(elf, sym, &a))
					sink += a;
			}
		}
	}
}

/* The same file mapped at its first segment in a process, as an MMAP record would. */
static void through_images(const struct tc_elf *elf)
{
	const struct tc_elf_seg *seg;
	struct tc_images *im = tc_images_new(NULL);
	struct tc_images_sym s;
	uint8_t buf[32];
	size_t n;

	CHECK(im != NULL);
	seg = tc_elf_segments(elf, &n);
	tc_images_map(im, 7, seg[0].vaddr, seg[0].memsz ? seg[0].memsz : 1, seg[0].offset, path,
		      NULL, 0);
	CHECK(tc_images_read(im, 7, seg[0].vaddr, buf, sizeof(buf)) <= sizeof(buf));
	if (!tc_images_symbol(im, 7, seg[0].vaddr, &s) && s.sym)
		sink += strlen(s.sym);
	tc_images_free(im);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const struct tc_elf_seg *seg;
	struct tc_err e = { 0 };
	struct tc_elf *elf;
	size_t n;
	FILE *f;

	if (!path[0]) {
		int fd;

		snprintf(path, sizeof(path), "/tmp/fuzz_elf.XXXXXX");
		if ((fd = mkstemp(path)) < 0)
			abort();
		close(fd);
		atexit(remove_file);
	}
	if (!(f = fopen(path, "wb")) || (len && fwrite(data, 1, len, f) != len))
		abort();
	fclose(f);
	if (!(elf = tc_elf_open(path, &e))) {
		CHECK(e.msg[0]);
		return 0;
	}
	CHECK(tc_elf_size(elf) == len);
	look(elf);
	seg = tc_elf_segments(elf, &n);
	if (n && seg[0].filesz)
		through_images(elf);
	tc_elf_close(elf);
	return 0;
}
