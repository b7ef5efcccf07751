/* Address spaces (lib/images/images.c): mappings from MMAP/MMAP2, files found through --symfs, the
 * recorded path and a build-id cache, bytes and symbols by address, fork/exec, the list of
 * images that could not be found. ELF files are compiled here with gcc, and the aarch64
 * etm_test_loop is mapped as perf_etm.data's MMAP2 records map it. */
#include <elf.h>
#include <inttypes.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/images/elf.h"
#include "lib/images/images.h"
#include "lib/perfdata/perf_data.h"
#include "tests/unit/tc_test.h"

#define BASE 0x555555554000ULL

/* A temp dir holding a small PIE built by gcc: prog (with a build id), and its file bytes. */
struct built {
	char dir[64], prog[128];
	uint8_t *bytes;
	size_t size;
	uint64_t marker;	/* link-time address of tc_marker, from nm */
};

static int build(struct built *b)
{
	char cmd[512], src[160];
	FILE *f;
	struct stat st;
	int ok;

	snprintf(b->dir, sizeof(b->dir), "/tmp/tc-images-XXXXXX");
	if (!mkdtemp(b->dir))
		return -1;
	snprintf(src, sizeof(src), "%s/p.c", b->dir);
	snprintf(b->prog, sizeof(b->prog), "%s/prog", b->dir);
	f = fopen(src, "w");
	if (!f)
		return -1;
	fputs("int tc_marker(int x) { return x * 7 + 3; }\n"
	      "int main(int c, char **v) { (void)v; return tc_marker(c); }\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "gcc -O1 -fPIE -pie -Wl,--build-id -o %s %s 2>/dev/null",
		 b->prog, src);
	if (system(cmd))
		return -1;
	snprintf(cmd, sizeof(cmd), "nm %s | awk '$3 == \"tc_marker\" { print $1 }'", b->prog);
	f = popen(cmd, "r");
	ok = f && fscanf(f, "%" SCNx64, &b->marker) == 1;
	if (f)
		pclose(f);
	if (!ok || stat(b->prog, &st))
		return -1;
	b->size = (size_t)st.st_size;
	b->bytes = malloc(b->size);
	f = fopen(b->prog, "rb");
	ok = f && b->bytes && fread(b->bytes, 1, b->size, f) == b->size;
	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

static void unbuild(struct built *b)
{
	char cmd[160];

	free(b->bytes);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", b->dir);
	if (system(cmd))
		printf("#   could not remove %s\n", b->dir);
}

/* Map each PT_LOAD at BASE as ld.so does: page-aligned start, pgoff the aligned offset. */
static void map_like_ldso(struct tc_images *im, int32_t pid, const char *path,
			  const struct tc_elf *elf)
{
	size_t n;
	const struct tc_elf_seg *s = tc_elf_segments(elf, &n);

	for (size_t i = 0; i < n; i++) {
		uint64_t va = s[i].vaddr & ~0xfffULL, off = s[i].offset & ~0xfffULL;
		uint64_t len = ((s[i].vaddr + s[i].filesz + 0xfff) & ~0xfffULL) - va;

		tc_images_map(im, pid, BASE + va, len, off, path, NULL, 0);
	}
}

TEST(pie_bytes_and_symbols_from_recorded_path)
{
	struct built b = { 0 };
	struct tc_images *im;
	struct tc_elf *elf;
	struct tc_err e;
	struct tc_images_sym s;
	const char *const *miss;
	uint8_t buf[64];
	size_t n, nsegs, checked = 0;

	if (build(&b)) {
		unbuild(&b);
		CHECK(!"gcc could not build the test program");
		return;
	}
	elf = tc_elf_open(b.prog, &e);
	CHECK(elf != NULL);
	im = tc_images_new(&(struct tc_images_opts){ 0 });
	if (!elf || !im)
		goto out;
	map_like_ldso(im, 100, b.prog, elf);
	/* Every file-backed byte of every segment reads back as the file's byte. */
	tc_elf_segments(elf, &nsegs);
	for (size_t i = 0; i < nsegs; i++) {
		const struct tc_elf_seg *sg = &tc_elf_segments(elf, &nsegs)[i];

		for (uint64_t o = 0; o < sg->filesz; o += 61) {
			size_t want = sg->filesz - o < sizeof(buf) ? (size_t)(sg->filesz - o) : sizeof(buf);

			n = tc_images_read(im, 100, BASE + sg->vaddr + o, buf, want);
			CHECK_INT(n, want);
			if (n != want || memcmp(buf, b.bytes + sg->offset + o, n)) {
				CHECK(!"bytes differ from the file's");
				break;
			}
			checked++;
		}
	}
	CHECK(checked > 10);
	/* The function resolves by name at its run-time address, with the DSO address. */
	CHECK_INT(tc_images_symbol(im, 100, BASE + b.marker + 3, &s), 0);
	CHECK_STR(s.sym, "tc_marker");
	CHECK_INT(s.sym_off, 3);
	CHECK_STR(s.dso, b.prog);
	CHECK_INT(s.dso_off, b.marker + 3);
	/* Another pid and an unmapped address have nothing. */
	CHECK_INT(tc_images_read(im, 101, BASE + b.marker, buf, 4), 0);
	CHECK_INT(tc_images_symbol(im, 100, 0x1000, &s), -1);
	CHECK_INT(tc_images_missing(im, &miss), 0);
out:
	tc_elf_close(elf);
	tc_images_free(im);
	unbuild(&b);
}

TEST(fork_exec_replace_and_kernel_fallback)
{
	struct built b = { 0 };
	struct tc_images *im = tc_images_new(&(struct tc_images_opts){ 0 });
	uint8_t buf[16];
	uint64_t at;

	if (build(&b)) {
		unbuild(&b);
		CHECK(!"gcc could not build the test program");
		tc_images_free(im);
		return;
	}
	at = BASE + b.marker;
	/* One mapping of the whole file; a kernel mapping of it elsewhere. */
	tc_images_map(im, 7, BASE, b.size, 0, b.prog, NULL, 0);
	tc_images_map(im, TC_IMG_PID_KERNEL, 0xffff800000000000ULL, b.size, 0, b.prog, NULL, 0);
	CHECK_INT(tc_images_read(im, 7, at, buf, 16), 16);
	CHECK(!memcmp(buf, b.bytes + b.marker, 16));
	/* Any pid, even unknown, sees the kernel's mappings. */
	CHECK_INT(tc_images_read(im, 1234, 0xffff800000000010ULL, buf, 4), 4);
	CHECK(!memcmp(buf, b.bytes + 0x10, 4));
	CHECK_INT(tc_images_read(im, -1, 0xffff800000000010ULL, buf, 4), 4);
	/* Reads stop at the end of a mapping. */
	CHECK_INT(tc_images_read(im, 7, BASE + b.size - 5, buf, 16), 5);
	/* The child inherits, exec drops, the parent keeps its own. */
	tc_images_fork(im, 7, 8);
	CHECK_INT(tc_images_read(im, 8, at, buf, 16), 16);
	tc_images_exec(im, 8);
	CHECK_INT(tc_images_read(im, 8, at, buf, 16), 0);
	CHECK_INT(tc_images_read(im, 7, at, buf, 16), 16);
	/* A mapping over the middle splits the old one; its right part keeps its offsets. */
	tc_images_map(im, 7, BASE + 0x1000, 0x1000, 0, "//anon", NULL, 0);
	CHECK_INT(tc_images_read(im, 7, BASE + 0x1800, buf, 4), 0);
	CHECK_INT(tc_images_read(im, 7, BASE + 0x0ffe, buf, 4), 2);
	CHECK_INT(tc_images_read(im, 7, BASE + 0x2000, buf, 8), 8);
	CHECK(!memcmp(buf, b.bytes + 0x2000, 8));
	CHECK_INT(tc_images_read(im, 7, BASE + 0x10, buf, 4), 4);
	CHECK(!memcmp(buf, b.bytes + 0x10, 4));
	{
		const char *const *miss;

		CHECK_INT(tc_images_missing(im, &miss), 1);
		CHECK(strstr(miss[0], "//anon") != NULL);
	}
	tc_images_free(im);
	unbuild(&b);
}

/* tc_images_symbol keeps its answers by pid and address: every change of the mappings
 * (a new mapping over one, fork, exec) must show in the next answer, asked again and again. */
TEST(symbol_answers_follow_mapping_changes)
{
	struct built b = { 0 };
	struct tc_images *im = tc_images_new(&(struct tc_images_opts){ 0 });
	struct tc_images_sym s;
	uint64_t at;

	if (build(&b)) {
		unbuild(&b);
		CHECK(!"gcc could not build the test program");
		tc_images_free(im);
		return;
	}
	at = BASE + b.marker + 2;
	tc_images_map(im, 7, BASE, b.size, 0, b.prog, NULL, 0);
	for (int k = 0; k < 3; k++) {
		CHECK_INT(tc_images_symbol(im, 7, at, &s), 0);
		CHECK_STR(s.sym ? s.sym : "(none)", "tc_marker");
		CHECK_INT((int)s.sym_off, 2);
		CHECK_STR(s.dso, b.prog);
	}
	/* another pid: not mapped there (no kernel) */
	CHECK_INT(tc_images_symbol(im, 9, at, &s), -1);
	/* fork: the child's answer; exec: none in the child, the parent's unchanged */
	tc_images_fork(im, 7, 9);
	CHECK_INT(tc_images_symbol(im, 9, at, &s), 0);
	CHECK_STR(s.sym ? s.sym : "(none)", "tc_marker");
	tc_images_exec(im, 9);
	CHECK_INT(tc_images_symbol(im, 9, at, &s), -1);
	CHECK_INT(tc_images_symbol(im, 7, at, &s), 0);
	/* a mapping over it: the new file's answer (no symbols, another offset) */
	tc_images_map(im, 7, at & ~0xfffULL, 0x1000, 0x5000, "//anon", NULL, 0);
	CHECK_INT(tc_images_symbol(im, 7, at, &s), 0);
	CHECK(s.sym == NULL);
	CHECK_STR(s.dso, "//anon");
	CHECK_INT((int)s.dso_off, (int)(0x5000 + (at & 0xfff)));
	/* and back */
	tc_images_map(im, 7, BASE, b.size, 0, b.prog, NULL, 0);
	CHECK_INT(tc_images_symbol(im, 7, at, &s), 0);
	CHECK_STR(s.sym ? s.sym : "(none)", "tc_marker");
	/* many addresses through the same slots: each asked twice here (the second answer
	 * kept) is what a fresh set of the same mappings answers when first asked */
	{
		struct tc_images *fresh = tc_images_new(&(struct tc_images_opts){ 0 });

		tc_images_map(fresh, 7, BASE, b.size, 0, b.prog, NULL, 0);
		for (uint64_t a = BASE; a < BASE + b.size + 0x40; a += 0x8) {
			struct tc_images_sym t;
			int r1 = tc_images_symbol(im, 7, a, &s), r2 = tc_images_symbol(im, 7, a, &s);
			int r3 = tc_images_symbol(fresh, 7, a, &t);

			if (r1 != r3 || r2 != r3 || s.sym_off != t.sym_off ||
			    s.dso_off != t.dso_off || strcmp(s.sym ? s.sym : "-", t.sym ? t.sym : "-") ||
			    strcmp(s.dso ? s.dso : "-", t.dso ? t.dso : "-")) {
				CHECK(!"a kept answer differs from a fresh one");
				break;
			}
		}
		tc_images_free(fresh);
	}
	tc_images_free(im);
	unbuild(&b);
}

TEST(build_id_cache_mismatch_and_missing_list)
{
	struct built b = { 0 };
	struct tc_images *im;
	struct tc_elf *elf;
	struct tc_err e;
	const char *const *miss;
	char cache[256], link[1024], bid[41];
	uint8_t raw[20], other[20] = { 1, 2, 3 }, buf[8];

	if (build(&b)) {
		unbuild(&b);
		CHECK(!"gcc could not build the test program");
		return;
	}
	elf = tc_elf_open(b.prog, &e);
	CHECK(elf != NULL && strlen(tc_elf_build_id(elf)) == 40);
	if (!elf)
		goto out;
	snprintf(bid, sizeof(bid), "%s", tc_elf_build_id(elf));
	for (int i = 0; i < 20; i++)
		sscanf(bid + 2 * i, "%2hhx", &raw[i]);
	/* perf's cache: <dir>/.build-id/xx/<rest> -> the file. */
	snprintf(cache, sizeof(cache), "%s/cache/.build-id/%.2s", b.dir, bid);
	snprintf(link, sizeof(link), "mkdir -p %s && ln -s %s %s/%s", cache, b.prog, cache, bid + 2);
	CHECK_INT(system(link), 0);
	snprintf(cache, sizeof(cache), "%s/cache", b.dir);
	im = tc_images_new(&(struct tc_images_opts){ .symfs = "/nonexistent-symfs",
						   .buildid_dir = cache });
	/* Recorded under a path that does not exist: found by the MMAP2 build id. */
	tc_images_map(im, 1, BASE, b.size, 0, "/gone/prog", raw, 20);
	CHECK_INT(tc_images_read(im, 1, BASE + b.marker, buf, 8), 8);
	CHECK(!memcmp(buf, b.bytes + b.marker, 8));
	/* The same via the build-id feature. */
	{
		struct tc_perf_data_build_id fb = { .pid = -1,
						    .size = 20,
						    .filename = "/gone/prog2" };

		memcpy(fb.id, raw, 20);
		tc_images_add_build_ids(im, &fb, 1);
	}
	tc_images_map(im, 2, BASE, b.size, 0, "/gone/prog2", NULL, 0);
	CHECK_INT(tc_images_read(im, 2, BASE + b.marker, buf, 8), 8);
	/* The recorded path exists but has another build id: not used, and said why. With
	 * --symfs the recorded path needs a build id to be trusted. */
	tc_images_map(im, 3, BASE, b.size, 0, b.prog, other, 20);
	tc_images_map(im, 4, BASE, b.size, 0, "/lib/never/there.so", NULL, 0);
	CHECK_INT(tc_images_read(im, 3, BASE + b.marker, buf, 8), 0);
	CHECK_INT(tc_images_read(im, 3, BASE + b.marker + 8, buf, 8), 0);
	CHECK_INT(tc_images_read(im, 4, BASE, buf, 8), 0);
	CHECK_INT(tc_images_missing(im, &miss), 2);
	if (tc_images_missing(im, &miss) == 2) {
		CHECK(strstr(miss[0], b.prog) && strstr(miss[0], "build id 010203") &&
		      strstr(miss[0], bid));
		CHECK_STR(miss[1], "/lib/never/there.so");
	}
	tc_images_free(im);
out:
	tc_elf_close(elf);
	unbuild(&b);
}

/* perf_etm.data maps /data/local/tmp/etm_test_loop with four MMAP2 records (the first
 * covering all three pages, then the text and data pages over it, then the data page made
 * read-only by RELRO); simpleperf's build-id
 * feature names its 16-byte build id. */
TEST(etm_test_loop_through_symfs_and_perf_etm_mmaps)
{
	const char *td = tc_testdata();
	char path[8192 + 256], sym[128], bin[4096];
	struct tc_perf_data *pd;
	struct tc_perf_data_record r;
	struct tc_images *im;
	struct tc_images_sym s;
	struct tc_err e;
	const char *const *miss;
	uint8_t buf[0x100], file[0x100];
	uint64_t base = 0;
	int n, maps = 0;
	FILE *f;

	if (!td)
		SKIP("no test data");
	snprintf(bin, sizeof(bin), "%s/perfdata/simpleperf-etm/etm_test_loop", td);
	if (bin[0] != '/') {
		char cwd[2048];

		CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
		snprintf(bin, sizeof(bin), "%s/%s/perfdata/simpleperf-etm/etm_test_loop", cwd, td);
	}
	snprintf(sym, sizeof(sym), "/tmp/tc-symfs-XXXXXX");
	CHECK(mkdtemp(sym) != NULL);
	snprintf(path, sizeof(path), "mkdir -p %s/data/local/tmp && ln -s %s %s/data/local/tmp/",
		 sym, bin, sym);
	CHECK_INT(system(path), 0);
	snprintf(path, sizeof(path), "%s/perfdata/simpleperf-etm/perf_etm.data", td);
	CHECK_INT(tc_perf_data_open(&pd, path, &e), 0);
	im = tc_images_new(&(struct tc_images_opts){ .symfs = sym });
	if (!im || !pd)
		goto out;
	tc_images_add_build_ids(im, tc_perf_data_features(pd)->build_ids,
				tc_perf_data_features(pd)->nr_build_ids);
	while ((n = tc_perf_data_next(pd, &r, &e)) > 0) {
		if (r.type != PERF_RECORD_MMAP2)
			continue;
		tc_images_map(im, (int32_t)r.u.mmap.pid, r.u.mmap.start, r.u.mmap.len,
			      r.u.mmap.pgoff, r.u.mmap.filename,
			      r.u.mmap.has_build_id ? r.u.mmap.build_id : NULL,
			      r.u.mmap.has_build_id ? r.u.mmap.build_id_size : 0);
		if (!strcmp(r.u.mmap.filename, "/data/local/tmp/etm_test_loop")) {
			maps++;
			if (!r.u.mmap.pgoff)
				base = r.u.mmap.start;
		}
	}
	CHECK_INT(n, 0);
	CHECK_INT(maps, 4);
	CHECK(base == 0x582b2b0000ULL);
	/* The text page (file offset 0x1000, 0xf0 bytes of code) reads as the file does. */
	f = fopen(bin, "rb");
	CHECK(f && !fseek(f, 0x1000, SEEK_SET) && fread(file, 1, 0xf0, f) == 0xf0);
	if (f)
		fclose(f);
	CHECK_INT(tc_images_read(im, 17235, base + 0x1000, buf, 0xf0), 0xf0);
	CHECK(!memcmp(buf, file, 0xf0));
	/* Its ELF header shows through the first page. */
	CHECK_INT(tc_images_read(im, 17235, base, buf, 4), 4);
	CHECK(!memcmp(buf, "\177ELF", 4));
	/* Stripped: no symbol, but the DSO and its address (perf_inject.data's 1000-1004). */
	CHECK_INT(tc_images_symbol(im, 17235, base + 0x1000, &s), 0);
	CHECK_STR(s.dso, "/data/local/tmp/etm_test_loop");
	CHECK_INT(s.dso_off, 0x1000);
	/* The other images (linker64, libc++, ...) are not here, and are listed when needed. */
	CHECK_INT(tc_images_read(im, 17235, 0x72746ce000ULL, buf, 4), 0);
	CHECK_INT(tc_images_missing(im, &miss), 1);
	if (tc_images_missing(im, &miss) == 1)
		CHECK_STR(miss[0], "/apex/com.android.runtime/bin/linker64 (build id "
				   "e5119e5d35568a2d3038aa96374e457c)");
out:
	tc_images_free(im);
	tc_perf_data_close(pd);
	snprintf(path, sizeof(path), "rm -rf %s", sym);
	CHECK_INT(system(path), 0);
}
