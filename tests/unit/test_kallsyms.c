/* Kernel images (lib/images/kallsyms.c, kcore.c, kernel.c) and kernel modules in the address
 * spaces (lib/images/images.c): kallsyms read with perf's rules, a vmlinux-style table, an
 * ELF core image read by virtual address, the relocation against a recording's _text, and a
 * relocatable module (compiled here with gcc) placed by its sections. */
#include <elf.h>
#include <inttypes.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/images/elf.h"
#include "lib/images/images.h"
#include "lib/images/kallsyms.h"
#include "lib/images/kcore.h"
#include "lib/images/kernel.h"
#include "tests/unit/tc_test.h"

static char dir[64];

static const char *tmpdir(void)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/tc-kallsyms-XXXXXX");
		if (!mkdtemp(dir))
			return NULL;
	}
	return dir;
}

static const char *write_file(const char *name, const void *data, size_t len)
{
	static char path[4][128];
	static int i;
	char *p = path[i++ & 3];
	FILE *f;

	snprintf(p, 128, "%s/%s", tmpdir(), name);
	f = fopen(p, "wb");
	if (!f)
		return NULL;
	fwrite(data, 1, len, f);
	fclose(f);
	return p;
}

static const char KALLSYMS[] =
	"ffffffff81000000 T startup_64\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000100 t local_fn\n"
	"ffffffff81000180 r ro_data_ignored\n"	/* r: not a perf kallsyms type */
	"ffffffff81000200 W weak_fn\n"
	"ffffffff81000280 D some_data\n"	/* D ends weak_fn */
	"ffffffff81000300 t $x\n"		/* ARM mapping symbol: left out */
	"ffffffff81000400 T last_kernel_fn\n"
	"ffffffffc0000000 t mod_a_fn\t[mod_a]\n"
	"ffffffffc0000040 t mod_a_fn2\t[mod_a]\n"
	"ffffffffc0001000 t mod_b_fn\t[mod_b]\n"
	"garbage line\n";

TEST(kallsyms_perf_rules)
{
	const char *p = write_file("kallsyms", KALLSYMS, sizeof(KALLSYMS) - 1);
	struct tc_err e;
	struct tc_kallsyms *k = p ? tc_kallsyms_open(p, &e) : NULL;
	const char *mod;
	uint64_t off, a;

	CHECK(k != NULL);
	if (!k)
		return;
	/* three at one address: the last in the file */
	CHECK_STR(tc_kallsyms_find(k, 0xffffffff81000010, &off, &mod), "_text");
	CHECK_INT(off, 0x10);
	CHECK(mod == NULL);
	/* the reference is found even where another stands */
	CHECK(!tc_kallsyms_addr(k, "_stext", &a) && a == 0xffffffff81000000);
	CHECK(!tc_kallsyms_addr(k, "_text", &a) && a == 0xffffffff81000000);
	CHECK(tc_kallsyms_addr(k, "no_such", &a) == -1);
	/* 'r' is not read: local_fn runs to weak_fn */
	CHECK_STR(tc_kallsyms_find(k, 0xffffffff810001f0, &off, NULL), "local_fn");
	CHECK_INT(off, 0xf0);
	/* a data symbol ends a text one */
	CHECK_STR(tc_kallsyms_find(k, 0xffffffff81000290, &off, NULL), "some_data");
	/* $x left out: some_data runs on */
	CHECK_STR(tc_kallsyms_find(k, 0xffffffff81000310, &off, NULL), "some_data");
	/* the kernel's last before a module's: to the page after next */
	CHECK_STR(tc_kallsyms_find(k, 0xffffffff81001fff, &off, NULL), "last_kernel_fn");
	CHECK(tc_kallsyms_find(k, 0xffffffff81002000, &off, NULL) == NULL);
	/* module symbols and their module */
	CHECK_STR(tc_kallsyms_find(k, 0xffffffffc0000044, &off, &mod), "mod_a_fn2");
	CHECK_STR(mod, "[mod_a]");
	CHECK_INT(off, 4);
	/* module to module: the next one's start (perf 6.1) */
	CHECK_STR(tc_kallsyms_find(k, 0xffffffffc0000fff, &off, &mod), "mod_a_fn2");
	CHECK_STR(tc_kallsyms_find(k, 0xffffffffc0001000, &off, &mod), "mod_b_fn");
	CHECK_STR(mod, "[mod_b]");
	/* the last one: the page after next */
	CHECK_STR(tc_kallsyms_find(k, 0xffffffffc0001fff, &off, NULL), "mod_b_fn");
	CHECK(tc_kallsyms_find(k, 0xffffffffc0002000, &off, NULL) == NULL);
	CHECK(tc_kallsyms_find(k, 0xffffffff80000000, &off, NULL) == NULL);
	tc_kallsyms_free(k);
}

TEST(kallsyms_refused)
{
	static const char zero[] = "0000000000000000 T _text\n0000000000000000 t foo\n";
	static const char none[] = "hello\nworld\n";
	struct tc_err e;
	const char *p = write_file("kallsyms.zero", zero, sizeof(zero) - 1);

	CHECK(tc_kallsyms_open(p, &e) == NULL);
	CHECK(strstr(e.msg, "kptr_restrict") != NULL);
	p = write_file("kallsyms.none", none, sizeof(none) - 1);
	CHECK(tc_kallsyms_open(p, &e) == NULL);
	CHECK(strstr(e.msg, "no kernel symbol") != NULL);
	CHECK(tc_kallsyms_open("/nonexistent/kallsyms", &e) == NULL);
}

/* A vmlinux's symbols as perf chooses among several at one address. */
TEST(kallsyms_table_choice)
{
	struct tc_kallsyms *k = tc_kallsyms_new();
	uint64_t off;

	CHECK(k != NULL);
	if (!k)
		return;
	/* sized beats unsized */
	tc_kallsyms_add(k, 0x1000, 0, 't', STB_GLOBAL, "unsized", NULL);
	tc_kallsyms_add(k, 0x1000, 0x10, 't', STB_LOCAL, "sized", NULL);
	/* both unsized: the later one gets the length (ends at the next start) */
	tc_kallsyms_add(k, 0x2000, 0, 't', STB_LOCAL, "first", NULL);
	tc_kallsyms_add(k, 0x2000, 0, 't', STB_GLOBAL, "second", NULL);
	/* both sized: global over weak, then fewer underscores, then the longer name */
	tc_kallsyms_add(k, 0x3000, 8, 't', STB_WEAK, "weak", NULL);
	tc_kallsyms_add(k, 0x3000, 8, 't', STB_GLOBAL, "__strong", NULL);
	tc_kallsyms_add(k, 0x4000, 8, 't', STB_GLOBAL, "__two", NULL);
	tc_kallsyms_add(k, 0x4000, 8, 't', STB_GLOBAL, "_one", NULL);
	tc_kallsyms_add(k, 0x5000, 8, 't', STB_GLOBAL, "short", NULL);
	tc_kallsyms_add(k, 0x5000, 8, 't', STB_GLOBAL, "longer", NULL);
	tc_kallsyms_finish(k, false);
	CHECK_STR(tc_kallsyms_find(k, 0x1004, &off, NULL), "sized");
	CHECK(tc_kallsyms_find(k, 0x1010, &off, NULL) == NULL);	/* past its size */
	CHECK_STR(tc_kallsyms_find(k, 0x2004, &off, NULL), "second");
	CHECK_STR(tc_kallsyms_find(k, 0x3000, &off, NULL), "__strong");
	CHECK_STR(tc_kallsyms_find(k, 0x4000, &off, NULL), "_one");
	CHECK_STR(tc_kallsyms_find(k, 0x5000, &off, NULL), "longer");
	tc_kallsyms_free(k);
}

/* An ELF core image: two PT_LOAD segments, the first larger than the reader's block. */
static const char *write_kcore(uint64_t va1, size_t len1, uint64_t va2, size_t len2)
{
	size_t hdr = sizeof(Elf64_Ehdr) + 3 * sizeof(Elf64_Phdr), total = hdr + len1 + len2;
	uint8_t *b = calloc(1, total);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	Elf64_Phdr *ph = (Elf64_Phdr *)(b + sizeof(*eh));
	const char *p;

	if (!b)
		return NULL;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_CORE;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 3;
	ph[0] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = hdr, .p_filesz = 0 };
	ph[1] = (Elf64_Phdr){ PT_LOAD, PF_R | PF_X, hdr, va1, 0, len1, len1, 4096 };
	ph[2] = (Elf64_Phdr){ PT_LOAD, PF_R | PF_W, hdr + len1, va2, 0, len2, len2, 4096 };
	for (size_t i = 0; i < len1 + len2; i++)
		b[hdr + i] = (uint8_t)(i * 7 + (i >> 8));
	p = write_file("kcore", b, total);
	free(b);
	return p;
}

static uint8_t pattern(size_t i) { return (uint8_t)(i * 7 + (i >> 8)); }

TEST(kcore_reads_by_address)
{
	const uint64_t va1 = 0xffffffff81000000, va2 = 0xffffffffc0000000;
	const size_t len1 = 200000, len2 = 5000;
	const char *p = write_kcore(va1, len1, va2, len2);
	struct tc_err e;
	struct tc_kcore *k = p ? tc_kcore_open(p, &e) : NULL;
	uint8_t buf[64];
	size_t n;
	int ok = 1;

	CHECK(k != NULL);
	if (!k)
		return;
	CHECK_INT(tc_kcore_nsegments(k), 2);
	CHECK_INT(tc_kcore_machine(k), EM_X86_64);
	/* across the reader's 64 KiB blocks */
	n = tc_kcore_read(k, va1 + 65536 - 10, buf, 32);
	CHECK_INT(n, 32);
	for (size_t i = 0; i < 32; i++)
		ok &= buf[i] == pattern(65536 - 10 + i);
	CHECK(ok);
	/* the end of a segment cuts a read */
	CHECK_INT(tc_kcore_read(k, va1 + len1 - 4, buf, 16), 4);
	CHECK_INT(tc_kcore_read(k, va2 + 100, buf, 1), 1);
	CHECK_INT(buf[0], pattern(len1 + 100));
	CHECK_INT(tc_kcore_read(k, va2 + len2, buf, 1), 0);
	CHECK_INT(tc_kcore_read(k, 0x1000, buf, 1), 0);
	CHECK(tc_kcore_has(k, va2) && !tc_kcore_has(k, va2 - 1));
	tc_kcore_close(k);
	/* not a core file */
	p = write_file("notcore", KALLSYMS, sizeof(KALLSYMS) - 1);
	CHECK(tc_kcore_open(p, &e) == NULL);
}

/* The kernel's images against a recording whose kernel ran elsewhere (KASLR): kallsyms of
 * that boot is shifted back, kcore of that boot read as it is. */
TEST(kernel_relocation)
{
	const uint64_t va1 = 0xffffffff81000000;
	const char *ks = write_file("kallsyms", KALLSYMS, sizeof(KALLSYMS) - 1);
	const char *kc = write_kcore(va1, 8192, 0xffffffffc0000000, 4096);
	struct tc_kernel_opts o = { .kallsyms = ks, .kcore = kc };
	struct tc_err e;
	struct tc_kernel *k = tc_kernel_open(&o, &e);
	struct tc_images *im;
	struct tc_images_sym s;
	uint8_t b;

	CHECK(k != NULL);
	if (!k)
		return;
	CHECK(tc_kernel_has_text(k) && tc_kernel_has_symbols(k));
	im = tc_images_new(&(struct tc_images_opts){ .kernel = k });
	/* the recording's kernel ran 0x2000000 higher: same symbols at shifted addresses */
	tc_images_map(im, TC_IMG_PID_KERNEL, va1 + 0x2000000, 0x1000000, va1 + 0x2000000,
		      "[kernel.kallsyms]_text", NULL, 0);
	CHECK(!tc_images_symbol(im, 1234, va1 + 0x2000000 + 0x104, &s));
	CHECK_STR(s.sym, "local_fn");
	CHECK_INT(s.sym_off, 4);
	CHECK_STR(s.dso, "[kernel.kallsyms]");
	CHECK_INT(tc_images_read(im, 1234, va1 + 0x2000000 + 0x105, &b, 1), 1);
	CHECK_INT(b, pattern(0x105));
	/* a module perf named "[mod_a]" (no file): kallsyms' symbols, where that boot
	 * loaded it (not shifted with the kernel) */
	tc_images_map(im, TC_IMG_PID_KERNEL, 0xffffffffc0000000, 0x1000, 0, "[mod_a]", NULL, 0);
	CHECK(!tc_images_symbol(im, 1234, 0xffffffffc0000044, &s));
	CHECK_STR(s.sym, "mod_a_fn2");
	CHECK_INT(s.sym_off, 4);
	CHECK_STR(s.dso, "[mod_a]");
	/* in mod_a's mapping, another module's symbol is not mod_a's */
	tc_images_map(im, TC_IMG_PID_KERNEL, 0xffffffffc0001000, 0x800, 0, "[mod_c]", NULL, 0);
	CHECK(!tc_images_symbol(im, 1234, 0xffffffffc0001004, &s) && s.sym == NULL);
	CHECK_STR(s.dso, "[mod_c]");
	/* an address past every mapping in the upper half: the kernel images still answer */
	CHECK(!tc_images_symbol(im, 1234, 0xffffffffc0001ffc, &s));
	CHECK_STR(s.sym, "mod_b_fn");
	CHECK_STR(s.dso, "[mod_b]");
	/* a reference kallsyms does not have: no symbols, and the reason */
	tc_images_map(im, TC_IMG_PID_KERNEL, va1, 0x1000000, va1, "[kernel.kallsyms]_nosuch",
		      NULL, 0);
	CHECK(!tc_images_symbol(im, 1234, va1 + 0x104, &s) && s.sym == NULL);
	CHECK(strstr(tc_kernel_why(k), "_nosuch") != NULL);
	tc_images_free(im);
	tc_kernel_free(k);
	/* a file given that cannot be used is refused, named by its option */
	o = (struct tc_kernel_opts){ .vmlinux = ks };
	CHECK(tc_kernel_open(&o, &e) == NULL);
	CHECK(strstr(e.msg, "--vmlinux") != NULL);
	/* a kcore_dir: its kcore and its kallsyms */
	{
		char d[160], cmd[1024];

		snprintf(d, sizeof(d), "%s/kcore_dir", tmpdir());
		snprintf(cmd, sizeof(cmd), "mkdir -p %s && cp %s %s/kcore && cp %s %s/kallsyms", d,
			 kc, d, ks, d);
		CHECK(!system(cmd));
		o = (struct tc_kernel_opts){ .kcore = d };
		k = tc_kernel_open(&o, &e);
		CHECK(k && tc_kernel_has_text(k) && tc_kernel_has_symbols(k));
		tc_kernel_free(k);
	}
}

/* A kernel module: a relocatable object with .text, .text.unlikely, .init.text and
 * .exit.text, placed from its start as the loader lays it out, and as sysfs says. */
TEST(module_sections)
{
	char src[160], obj[160], cmd[1024], secdir[200];
	const uint64_t base = 0xffffffffc0a00000;
	struct tc_images *im;
	struct tc_images_sym s;
	struct tc_elf *elf;
	struct tc_err e;
	const struct tc_elf_sec *sec;
	size_t nsec;
	uint64_t text = 0, unl = 0, ext = 0, size = 0, v, sz;
	unsigned shndx;
	FILE *f;

	snprintf(src, sizeof(src), "%s/m.c", tmpdir());
	snprintf(obj, sizeof(obj), "%s/my-mod.ko", tmpdir());
	f = fopen(src, "w");
	if (!f)
		SKIP("cannot write a source file");
	fputs("int first(int x) { return x + 1; }\n"
	      "int second(int x) { return x * 3; }\n"
	      "__attribute__((section(\".text.unlikely\"), noinline)) int cold_fn(int x)"
	      " { return x - 5; }\n"
	      "__attribute__((section(\".init.text\"), noinline)) int init_fn(int x)"
	      " { return x ^ 9; }\n"
	      "__attribute__((section(\".exit.text\"), noinline)) int exit_fn(int x)"
	      " { return x | 2; }\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "gcc -O1 -fno-pic -c -o %s %s 2>/dev/null", obj, src);
	if (system(cmd))
		SKIP("gcc could not build the module object");
	elf = tc_elf_open(obj, &e);
	CHECK(elf && tc_elf_type(elf) == ET_REL);
	if (!elf)
		return;
	/* the loader's order: executable, non-.init sections by index, each aligned */
	sec = tc_elf_sections(elf, &nsec);
	for (size_t i = 1; i < nsec; i++) {
		uint64_t al = sec[i].align ? sec[i].align : 1, at;

		if ((sec[i].flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR) ||
		    !sec[i].size || !strncmp(sec[i].name, ".init", 5))
			continue;
		size = (size + al - 1) / al * al;
		at = base + size;
		size += sec[i].size;
		if (!strcmp(sec[i].name, ".text"))
			text = at;
		else if (!strcmp(sec[i].name, ".text.unlikely"))
			unl = at;
		else if (!strcmp(sec[i].name, ".exit.text"))
			ext = at;
	}
	CHECK(text == base && unl > base && ext > base);
	im = tc_images_new(&(struct tc_images_opts){ 0 });
	tc_images_map(im, TC_IMG_PID_KERNEL, base, 0x4000, 0, obj, NULL, 0);
	CHECK(!tc_images_symbol(im, TC_IMG_PID_KERNEL, text, &s));
	CHECK_STR(s.sym, "first");
	CHECK_STR(s.dso, obj);
	/* second's value in .text, from the object's own symbol table */
	for (size_t i = 0; i < tc_elf_nsymbols(elf); i++)
		if (!strcmp(tc_elf_symbol_at(elf, i, &v, &sz, &shndx), "second"))
			break;
	CHECK(!tc_images_symbol(im, TC_IMG_PID_KERNEL, text + v + 1, &s));
	CHECK_STR(s.sym, "second");
	CHECK_INT(s.sym_off, 1);
	CHECK(!tc_images_symbol(im, TC_IMG_PID_KERNEL, unl, &s));
	CHECK_STR(s.sym, "cold_fn");
	CHECK(!tc_images_symbol(im, TC_IMG_PID_KERNEL, ext + 2, &s));
	CHECK_STR(s.sym, "exit_fn");
	CHECK_INT(s.sym_off, 2);
	/* bytes are the section's, not the file's at the same offset */
	{
		uint8_t a[64], b[64];
		size_t i;

		for (i = 1; i < nsec && strcmp(sec[i].name, ".text.unlikely"); i++)
			;
		/* a read ends with its section */
		CHECK(i < nsec && sec[i].size < sizeof(a));
		CHECK_INT(tc_images_read(im, TC_IMG_PID_KERNEL, unl, a, sizeof(a)), sec[i].size);
		CHECK_INT(tc_elf_read_offset(elf, sec[i].offset, b, sec[i].size), sec[i].size);
		CHECK(!memcmp(a, b, sec[i].size));
	}
	tc_images_free(im);

	/* this machine's sysfs has the module loaded at base: its addresses stand */
	snprintf(secdir, sizeof(secdir), "%s/sys/module/my_mod/sections", tmpdir());
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s && echo 0x%" PRIx64 " >%s/.text && echo 0x%" PRIx64
		 " >%s/.init.text && echo 0x%" PRIx64 " >%s/.text.unlikely", secdir, base, secdir,
		 base + 0x2000, secdir, base + 0x3000, secdir);
	CHECK(!system(cmd));
	{
		char root[160];
		struct tc_kernel *k;

		snprintf(root, sizeof(root), "%s/sys", tmpdir());
		k = tc_kernel_open(&(struct tc_kernel_opts){ .sysfs_root = root }, &e);
		CHECK(k != NULL);
		im = tc_images_new(&(struct tc_images_opts){ .kernel = k });
		tc_images_map(im, TC_IMG_PID_KERNEL, base, 0x4000, 0, obj, NULL, 0);
		CHECK(!tc_images_symbol(im, TC_IMG_PID_KERNEL, base + 0x2001, &s));
		CHECK_STR(s.sym, "init_fn");
		CHECK_INT(s.sym_off, 1);
		CHECK(!tc_images_symbol(im, TC_IMG_PID_KERNEL, base + 0x3000, &s));
		CHECK_STR(s.sym, "cold_fn");
		/* .exit.text is not in that sysfs: not placed */
		CHECK(!tc_images_symbol(im, TC_IMG_PID_KERNEL, ext + 2, &s));
		CHECK(!s.sym || strcmp(s.sym, "exit_fn"));
		tc_images_free(im);
		/* loaded elsewhere on this machine: not the recorded load, the layout stands */
		im = tc_images_new(&(struct tc_images_opts){ .kernel = k });
		tc_images_map(im, TC_IMG_PID_KERNEL, base + 0x100000, 0x4000, 0, obj, NULL, 0);
		CHECK(!tc_images_symbol(im, TC_IMG_PID_KERNEL, unl + 0x100000, &s));
		CHECK_STR(s.sym, "cold_fn");
		tc_images_free(im);
		tc_kernel_free(k);
	}
	tc_elf_close(elf);
}

TEST(zz_cleanup)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir());
	CHECK(!system(cmd));
}
