/* ELF images (lib/images/elf.c): build id, segments, bytes by address, symbols. */
#include <elf.h>
#include <unistd.h>

#include "lib/images/elf.h"
#include "tests/unit/tc_test.h"

TEST(simpleperf_etm_test_loop)
{
	const char *td = tc_testdata();
	char path[4096];
	struct tc_elf *elf;
	struct tc_err e;
	uint64_t off, va;
	uint8_t insn[4];
	const char *name;
	size_t n;

	if (!td)
		SKIP("no test data");
	snprintf(path, sizeof(path), "%s/perfdata/simpleperf-etm/etm_test_loop", td);
	elf = tc_elf_open(path, &e);
	CHECK(elf != NULL);
	if (!elf)
		return;
	/* The README names this build id. */
	CHECK_STR(tc_elf_build_id(elf), "0c9a20bf9c009d0e4e8bbf9fad0300ae");
	CHECK_INT(tc_elf_machine(elf), EM_AARCH64);
	CHECK(tc_elf_segments(elf, &n) != NULL && n >= 2);
	/* Whatever symbol covers an executable address must give that address back. */
	for (size_t i = 0; i < n; i++) {
		const struct tc_elf_seg *s = &tc_elf_segments(elf, &n)[i];

		if (!s->exec)
			continue;
		CHECK_INT(tc_elf_read_vaddr(elf, s->vaddr, insn, 4), 4);
		CHECK_INT(tc_elf_offset_to_vaddr(elf, s->offset, &va), 0);
		CHECK(va == s->vaddr);
	}
	name = tc_elf_symbol(elf, 0, &off);
	CHECK(name == NULL);
	tc_elf_close(elf);
}

int tc_test_marker_function(int x);
int tc_test_marker_function(int x)
{
	return x * 3 + 1;
}

TEST(own_binary_symbols_and_bytes)
{
	struct tc_elf *elf;
	struct tc_err e;
	uint64_t off;
	const char *name;
	size_t n;
	const struct tc_elf_seg *segs;

	/* /proc/self/exe is this test program. */
	elf = tc_elf_open("/proc/self/exe", &e);
	CHECK(elf != NULL);
	if (!elf)
		return;
	segs = tc_elf_segments(elf, &n);
	/* PIE: link-time address = run-time address - load base; find our function by name. */
	CHECK(n > 0);
	{
		uint64_t target = 0;

		/* its executable segments, whatever their size (a sanitizer's build is large) */
		for (size_t i = 0; i < n && !target; i++)
			for (uint64_t a = segs[i].vaddr;
			     segs[i].exec && a < segs[i].vaddr + segs[i].memsz && !target; a++) {
				name = tc_elf_symbol(elf, a, &off);
				if (name && !strcmp(name, "tc_test_marker_function") && off == 0)
					target = a;
			}
		CHECK(target != 0);
		name = tc_elf_symbol(elf, target + 2, &off);
		CHECK_STR(name, "tc_test_marker_function");
		CHECK_INT(off, 2);
	}
	CHECK_INT(tc_elf_machine(elf), EM_X86_64);
	CHECK(strlen(tc_elf_build_id(elf)) == 40);
	tc_elf_close(elf);
}

TEST(not_elf_and_missing_files)
{
	struct tc_err e;
	char tmp[] = "/tmp/tc-elf-XXXXXX";
	int fd = mkstemp(tmp);

	CHECK(fd >= 0);
	CHECK(write(fd, "\177ELF garbage that is not an ELF header at all......", 52) == 52);
	close(fd);
	CHECK(tc_elf_open(tmp, &e) == NULL);
	CHECK(strstr(e.msg, "not an ELF file") != NULL);
	unlink(tmp);
	CHECK(tc_elf_open("/no/such/file", &e) == NULL);
	CHECK(strstr(e.msg, "cannot open /no/such/file") != NULL);
}

/* Symbols from a separate debug file: only one of the same build id with a .symtab is taken;
 * the binary's own code stays. The system's ld.so with its debug file when installed. */
TEST(separate_debug_file)
{
	struct tc_err e;
	struct tc_elf *self = tc_elf_open("/proc/self/exe", &e), *dbg, *other, *ld;
	const char *td = tc_testdata();
	char path[4096];
	uint64_t va, off;

	CHECK(self != NULL);
	if (!self)
		return;
	CHECK(tc_elf_has_symtab(self));
	CHECK(tc_elf_debug_path(self) == NULL);
	CHECK_INT(tc_elf_symbol_addr(self, "tc_test_marker_function", &va), 0);
	/* Its own twin is a debug file of the same build id. */
	dbg = tc_elf_open("/proc/self/exe", &e);
	CHECK(dbg != NULL);
	if (dbg) {
		CHECK_INT(tc_elf_use_debug_file(self, dbg), 0);
		CHECK_STR(tc_elf_debug_path(self), "/proc/self/exe");
		CHECK_STR(tc_elf_symbol(self, va + 1, &off), "tc_test_marker_function");
		CHECK_INT(off, 1);
	}
	/* Another build id (and machine) is refused and stays the caller's. */
	if (td) {
		snprintf(path, sizeof(path), "%s/perfdata/simpleperf-etm/etm_test_loop", td);
		other = tc_elf_open(path, &e);
		CHECK(other != NULL);
		if (other) {
			CHECK_INT(tc_elf_use_debug_file(self, other), -1);
			CHECK(!tc_elf_has_symtab(other));
			tc_elf_close(other);
		}
	}
	tc_elf_close(self);

	ld = tc_elf_open("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", &e);
	if (!ld)
		SKIP("no /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
	if (tc_elf_has_symtab(ld) || strlen(tc_elf_build_id(ld)) < 3) {
		tc_elf_close(ld);
		SKIP("ld.so is not stripped or has no build id");
	}
	CHECK(tc_elf_debuglink(ld) != NULL);
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", tc_elf_build_id(ld),
		 tc_elf_build_id(ld) + 2);
	if (!(dbg = tc_elf_open(path, NULL))) {
		tc_elf_close(ld);
		SKIP("no debug file for ld.so (libc6-dbg)");
	}
	CHECK(tc_elf_symbol_addr(ld, "_dl_start", &va) != 0);
	CHECK_INT(tc_elf_use_debug_file(ld, dbg), 0);
	CHECK_INT(tc_elf_symbol_addr(ld, "_dl_start", &va), 0);
	CHECK_STR(tc_elf_symbol(ld, va + 4, &off), "_dl_start");
	tc_elf_close(ld);
}
