#include "lib/images/elf.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct sym {
	uint64_t addr, size;
	const char *name;	/* points into the mapped file's string table */
	unsigned shndx;		/* its section (a relocatable object's value is relative to it) */
	unsigned bind;		/* STB_LOCAL, STB_GLOBAL, STB_WEAK */
	size_t idx;		/* in the symbol table: keeps the sort stable */
};

struct tc_elf {
	char *path;
	const uint8_t *map;
	size_t size;
	Elf *elf;		/* kept open: symbol names point into its string tables */
	int machine, is64, type;
	char build_id[2 * 64 + 1];
	struct tc_elf_seg *segs;
	size_t nsegs;
	struct sym *syms;
	size_t nsyms;
	struct tc_elf_sec *secs;	/* by section index; names point into the file */
	size_t nsecs;
	int has_symtab;
	const char *debuglink;	/* .gnu_debuglink's file name (in the map), or NULL */
	struct tc_elf *debug;	/* the separate debug file the symbols come from, or NULL */
	struct sym *plt;	/* "name@plt" for PLT entries, by address; names in pltnames */
	size_t nplt;
	char *pltnames;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* Of two symbols at one address, the one perf keeps (its rules, in its order): one with a
 * size, a non-weak one, a global one, fewer leading underscores, the longer name; else the
 * first. Is b better than a? */
static bool better(const struct sym *a, const struct sym *b)
{
	size_t ua, ub, la, lb;

	if (!a->size != !b->size)
		return b->size != 0;
	if ((a->bind == STB_WEAK) != (b->bind == STB_WEAK))
		return a->bind == STB_WEAK;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return b->bind == STB_GLOBAL;
	ua = leading_underscores(a->name);
	ub = leading_underscores(b->name);
	if (ua != ub)
		return ub < ua;
	la = strlen(a->name);
	lb = strlen(b->name);
	return lb > la;
}

/* Arm's mapping symbols ($a, $d, $t, $x, optionally with a ".suffix") mark code and data
 * within functions: not names. */
static bool is_mapping_symbol(const char *name)
{
	return name[0] == '$' && strchr("adtx", name[1]) && name[1] &&
	       (!name[2] || name[2] == '.');
}

static void read_build_id(struct tc_elf *t, Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)d->d_buf + noff, "GNU", 4) || nh.n_descsz > 64)
				continue;
			for (size_t i = 0; i < nh.n_descsz; i++)
				sprintf(t->build_id + 2 * i, "%02x",
					((unsigned char *)d->d_buf)[doff + i]);
			return;
		}
	}
}

/* Function symbols from .symtab, or .dynsym when the file is stripped. */
static int read_symbols(struct tc_elf *t, Elf *elf)
{
	Elf_Scn *scn = NULL, *dyn = NULL, *use = NULL;
	GElf_Shdr sh;
	Elf_Data *d;
	size_t n;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			use = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dyn = scn;
	}
	t->has_symtab = use != NULL;
	if (!use)
		use = dyn;
	if (!use || !gelf_getshdr(use, &sh) || !sh.sh_entsize || !(d = elf_getdata(use, NULL)))
		return 0;
	n = sh.sh_size / sh.sh_entsize;
	t->syms = calloc(n ? n : 1, sizeof(*t->syms));
	if (!t->syms)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym s;
		const char *name;

		/* In a relocatable object (a kernel module) a value is an offset in its
		 * section: 0 is the section's first function. */
		/* Functions (STT_GNU_IFUNC too) and, as perf, untyped labels in code. */
		if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
		    s.st_shndx >= SHN_LORESERVE || (!s.st_value && t->type != ET_REL))
			continue;
		if (GELF_ST_TYPE(s.st_info) != STT_FUNC && GELF_ST_TYPE(s.st_info) != STT_GNU_IFUNC &&
		    (GELF_ST_TYPE(s.st_info) != STT_NOTYPE || s.st_shndx >= t->nsecs ||
		     !(t->secs[s.st_shndx].flags & SHF_EXECINSTR)))
			continue;
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if ((t->machine == EM_ARM || t->machine == EM_AARCH64) && is_mapping_symbol(name))
			continue;
		/* Thumb function symbols have bit 0 set; the code starts at the even address. */
		if (t->machine == EM_ARM)
			s.st_value &= ~1ULL;
		t->syms[t->nsyms++] = (struct sym){ s.st_value, s.st_size, name, s.st_shndx,
						    GELF_ST_BIND(s.st_info), i };
	}
	qsort(t->syms, t->nsyms, sizeof(*t->syms), cmp_sym);
	/* One name per address (a relocatable object's values are per section: keep all). */
	if (t->type != ET_REL && t->nsyms) {
		size_t k = 0;

		for (size_t i = 1; i < t->nsyms; i++) {
			if (t->syms[i].addr != t->syms[k].addr)
				t->syms[++k] = t->syms[i];
			else if (better(&t->syms[k], &t->syms[i]))
				t->syms[k] = t->syms[i];
		}
		t->nsyms = k + 1;
	}
	return 0;
}

/* Names for PLT entries, from the binary's own .rela.plt (or .rel.plt) and .dynsym, as perf
 * 6.1 gives them: the i-th relocation names the i-th entry after the PLT's header
 * ("sym@plt"; "@plt" for one without a symbol, an IRELATIVE), whatever slot it fills. */
static int read_plt(struct tc_elf *t, Elf *elf)
{
	Elf_Scn *scn = NULL, *rel = NULL, *plt = NULL;
	GElf_Shdr sh, rsh, psh, dsh;
	Elf_Data *rd, *dd;
	uint64_t head, ent, addr;
	size_t n, shstr, len = 0, k = 0;

	if (elf_getshdrstrndx(elf, &shstr))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstr, sh.sh_name)))
			continue;
		if ((sh.sh_type == SHT_RELA && !strcmp(name, ".rela.plt")) ||
		    (sh.sh_type == SHT_REL && !strcmp(name, ".rel.plt")))
			rel = scn;
		else if (sh.sh_type == SHT_PROGBITS && !strcmp(name, ".plt"))
			plt = scn;
	}
	if (!rel || !plt || !gelf_getshdr(rel, &rsh) || !gelf_getshdr(plt, &psh) ||
	    !rsh.sh_entsize || !(rd = elf_getdata(rel, NULL)) ||
	    !(scn = elf_getscn(elf, rsh.sh_link)) || !gelf_getshdr(scn, &dsh) ||
	    dsh.sh_type != SHT_DYNSYM || !(dd = elf_getdata(scn, NULL)))
		return 0;
	switch (t->machine) {
	case EM_ARM:
		head = 20, ent = 12;
		break;
	case EM_AARCH64:
		head = 32, ent = 16;
		break;
	default:
		head = ent = psh.sh_entsize;
		break;
	}
	if (!ent)
		return 0;
	n = rsh.sh_size / rsh.sh_entsize;
	if (!(t->plt = calloc(n ? n : 1, sizeof(*t->plt))))
		return -1;
	for (int pass = 0; pass < 2; pass++) {
		addr = psh.sh_addr + head;
		for (size_t i = 0; i < n; i++, addr += ent) {
			GElf_Rela ra;
			GElf_Rel r;
			GElf_Sym sym;
			size_t si;
			const char *name = NULL;

			if (rsh.sh_type == SHT_RELA)
				si = gelf_getrela(rd, (int)i, &ra) ? GELF_R_SYM(ra.r_info) : 0;
			else
				si = gelf_getrel(rd, (int)i, &r) ? GELF_R_SYM(r.r_info) : 0;
			if (si && gelf_getsym(dd, (int)si, &sym))
				name = elf_strptr(elf, dsh.sh_link, sym.st_name);
			if (!name)
				name = "";
			if (!pass) {
				len += strlen(name) + sizeof("@plt");
				continue;
			}
			t->plt[t->nplt++] = (struct sym){ addr, ent, t->pltnames + k, 0, STB_GLOBAL, i };
			k += (size_t)sprintf(t->pltnames + k, "%s@plt", name) + 1;
		}
		if (!pass && !(t->pltnames = malloc(len ? len : 1)))
			return -1;
	}
	return 0;
}

/* Section headers, by index (index 0 is the null section). */
static int read_sections(struct tc_elf *t, Elf *elf)
{
	size_t n, shstr;
	Elf_Scn *scn = NULL;

	if (elf_getshdrnum(elf, &n) || elf_getshdrstrndx(elf, &shstr) || !n)
		return 0;
	if (!(t->secs = calloc(n, sizeof(*t->secs))))
		return -1;
	t->nsecs = n;
	while ((scn = elf_nextscn(elf, scn))) {
		size_t i = elf_ndxscn(scn);
		GElf_Shdr sh;
		const char *name;

		if (i >= n || !gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstr, sh.sh_name);
		/* .gnu_debuglink: a NUL-terminated file name, then padding and a CRC. */
		if (name && !strcmp(name, ".gnu_debuglink") && sh.sh_type == SHT_PROGBITS &&
		    sh.sh_offset < t->size && sh.sh_size <= t->size - sh.sh_offset &&
		    sh.sh_size > 1 && memchr(t->map + sh.sh_offset, 0, sh.sh_size) &&
		    t->map[sh.sh_offset])
			t->debuglink = (const char *)t->map + sh.sh_offset;
		t->secs[i] = (struct tc_elf_sec){ name ? name : "", sh.sh_type, sh.sh_flags,
						  sh.sh_addr, sh.sh_size, sh.sh_offset,
						  sh.sh_addralign };
	}
	return 0;
}

static int load(struct tc_elf *t, struct tc_err *e)
{
	Elf *elf = t->elf = elf_memory((char *)t->map, t->size);
	GElf_Ehdr eh;
	size_t nph;
	int ret = -1;

	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		tc_err_set(e, EINVAL, "%s: not an ELF file (%s)", t->path, elf_errmsg(-1));
		goto out;
	}
	t->machine = eh.e_machine;
	t->type = eh.e_type;
	t->is64 = gelf_getclass(elf) == ELFCLASS64;
	if (elf_getphdrnum(elf, &nph)) {
		tc_err_set(e, EINVAL, "%s: bad program headers (%s)", t->path, elf_errmsg(-1));
		goto out;
	}
	t->segs = calloc(nph ? nph : 1, sizeof(*t->segs));
	if (!t->segs)
		goto nomem;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* Never trust a segment that claims bytes past the end of the file. */
		if (ph.p_offset > t->size || ph.p_filesz > t->size - ph.p_offset) {
			tc_err_set(
				e, EINVAL,
				"%s: segment %zu (offset 0x%llx size 0x%llx) is past the end of the file",
				t->path, i, (unsigned long long)ph.p_offset,
				(unsigned long long)ph.p_filesz);
			goto out;
		}
		t->segs[t->nsegs++] = (struct tc_elf_seg){ ph.p_vaddr, ph.p_memsz, ph.p_offset,
							   ph.p_filesz, !!(ph.p_flags & PF_X) };
	}
	/* A program or shared object without one (a corrupt e_phnum) gives no address: say so
	 * rather than map nothing. */
	if (!t->nsegs && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN)) {
		tc_err_set(e, EINVAL, "%s: no loadable segment (e_phnum %u, %zu program headers)",
			   t->path, (unsigned)eh.e_phnum, nph);
		goto out;
	}
	read_build_id(t, elf);
	if (read_sections(t, elf) || read_symbols(t, elf) || read_plt(t, elf))
		goto nomem;
	ret = 0;
	goto out;
nomem:
	tc_err_sys(e, ENOMEM, "%s", t->path);
out:
	return ret;
}

struct tc_elf *tc_elf_open(const char *path, struct tc_err *e)
{
	struct tc_elf *t = calloc(1, sizeof(*t));
	struct stat st;
	int fd;

	if (!t || !(t->path = strdup(path))) {
		free(t);
		tc_err_sys(e, ENOMEM, "%s", path);
		return NULL;
	}
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		tc_err_sys(e, errno, "cannot open %s", path);
		goto fail;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size == 0) {
		tc_err_set(e, EINVAL, "%s: not a regular, non-empty file", path);
		close(fd);
		goto fail;
	}
	t->size = (size_t)st.st_size;
	/* Private and writable: libelf may convert in place; the file is never changed. */
	t->map = mmap(NULL, t->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (t->map == MAP_FAILED) {
		t->map = NULL;
		tc_err_sys(e, errno, "cannot map %s", path);
		close(fd);
		goto fail;
	}
	close(fd);
	if (load(t, e))
		goto fail;
	return t;
fail:
	tc_elf_close(t);
	return NULL;
}

void tc_elf_close(struct tc_elf *t)
{
	if (!t)
		return;
	if (t->elf)
		elf_end(t->elf);
	if (t->map)
		munmap((void *)t->map, t->size);
	free(t->segs);
	free(t->syms);
	free(t->secs);
	free(t->path);
	free(t->plt);
	free(t->pltnames);
	tc_elf_close(t->debug);
	free(t);
}

int tc_elf_has_symtab(const struct tc_elf *t) { return t->has_symtab; }
const char *tc_elf_debuglink(const struct tc_elf *t) { return t->debuglink; }
const char *tc_elf_debug_path(const struct tc_elf *t) { return t->debug ? t->debug->path : NULL; }

int tc_elf_use_debug_file(struct tc_elf *t, struct tc_elf *debug)
{
	if (!debug->has_symtab || debug->machine != t->machine || debug->is64 != t->is64 ||
	    !*t->build_id || strcmp(debug->build_id, t->build_id))
		return -1;
	tc_elf_close(t->debug);
	free(t->syms);
	t->syms = debug->syms;
	t->nsyms = debug->nsyms;
	debug->syms = NULL;
	debug->nsyms = 0;
	t->debug = debug;
	t->has_symtab = 1;
	return 0;
}

const char *tc_elf_path(const struct tc_elf *t) { return t->path; }
size_t tc_elf_size(const struct tc_elf *t) { return t->size; }
int tc_elf_machine(const struct tc_elf *t) { return t->machine; }
int tc_elf_is_64(const struct tc_elf *t) { return t->is64; }
const char *tc_elf_build_id(const struct tc_elf *t) { return t->build_id; }
int tc_elf_type(const struct tc_elf *t) { return t->type; }

const struct tc_elf_sec *tc_elf_sections(const struct tc_elf *t, size_t *n)
{
	*n = t->nsecs;
	return t->secs;
}

size_t tc_elf_nsymbols(const struct tc_elf *t) { return t->nsyms; }

const char *tc_elf_symbol_at(const struct tc_elf *t, size_t i, uint64_t *value,
			     uint64_t *size, unsigned *shndx)
{
	if (i >= t->nsyms)
		return NULL;
	*value = t->syms[i].addr;
	*size = t->syms[i].size;
	*shndx = t->syms[i].shndx;
	return t->syms[i].name;
}

const struct tc_elf_seg *tc_elf_segments(const struct tc_elf *t, size_t *n)
{
	*n = t->nsegs;
	return t->segs;
}

size_t tc_elf_read_offset(const struct tc_elf *t, uint64_t off, void *buf, size_t len)
{
	if (off >= t->size)
		return 0;
	if (len > t->size - off)
		len = (size_t)(t->size - off);
	memcpy(buf, t->map + off, len);
	return len;
}

size_t tc_elf_read_vaddr(const struct tc_elf *t, uint64_t vaddr, void *buf, size_t len)
{
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct tc_elf_seg *s = &t->segs[i];
		uint64_t rel;

		if (vaddr < s->vaddr || vaddr - s->vaddr >= s->filesz)
			continue;
		rel = vaddr - s->vaddr;
		if (len > s->filesz - rel)
			len = (size_t)(s->filesz - rel);
		return tc_elf_read_offset(t, s->offset + rel, buf, len);
	}
	return 0;
}

int tc_elf_offset_to_vaddr(const struct tc_elf *t, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct tc_elf_seg *s = &t->segs[i];

		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = s->vaddr + (off - s->offset);
			return 0;
		}
	}
	return -1;
}

int tc_elf_symbol_addr(const struct tc_elf *t, const char *name, uint64_t *vaddr)
{
	for (size_t i = 0; i < t->nsyms; i++)
		if (!strcmp(t->syms[i].name, name)) {
			*vaddr = t->syms[i].addr;
			return 0;
		}
	return -1;
}

int tc_elf_symbol_size(const struct tc_elf *t, const char *name, uint64_t *size)
{
	for (size_t i = 0; i < t->nsyms; i++)
		if (!strcmp(t->syms[i].name, name)) {
			*size = t->syms[i].size;
			return 0;
		}
	return -1;
}

int tc_elf_vaddr_to_offset(const struct tc_elf *t, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct tc_elf_seg *s = &t->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
			*off = s->offset + (vaddr - s->vaddr);
			return 0;
		}
	}
	return -1;
}

static const char *symbol_of(const struct tc_elf *t, uint64_t vaddr, uint64_t *off);

const char *tc_elf_symbol(const struct tc_elf *t, uint64_t vaddr, uint64_t *off)
{
	const char *name = symbol_of(t, vaddr, off);

	/* PLT entries (evenly spaced) get perf's synthesized names where no symbol of the file
	 * covers them (perf finds a sizeless _init before them), and only in a file that has
	 * symbols of its own (perf synthesizes none for one without). */
	if (!name && t->nplt && t->nsyms && vaddr >= t->plt[0].addr &&
	    (vaddr - t->plt[0].addr) / t->plt[0].size < t->nplt) {
		const struct sym *p = &t->plt[(vaddr - t->plt[0].addr) / t->plt[0].size];

		*off = vaddr - p->addr;
		return p->name;
	}
	return name;
}

static const char *symbol_of(const struct tc_elf *t, uint64_t vaddr, uint64_t *off)
{
	size_t lo = 0, hi = t->nsyms;

	/* Last symbol starting at or before vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct sym *s = &t->syms[lo - 1];

	if (s->size && vaddr - s->addr >= s->size)
		return NULL;
	*off = vaddr - s->addr;
	return s->name;
}

struct symtab_find {
	const char *name;
	uint64_t value;
};

static int symtab_match(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct symtab_find *f = ctx;

	if (sym->st_shndx == SHN_UNDEF || strcmp(name, f->name))
		return 0;
	f->value = sym->st_value;
	return 1;	/* found: stop */
}

int tc_elf_symtab_value(const struct tc_elf *t, const char *name, uint64_t *value)
{
	struct symtab_find f = { .name = name };

	if (!tc_elf_each_symbol(t, symtab_match, &f))
		return -1;
	*value = f.value;
	return 0;
}

int tc_elf_each_symbol(const struct tc_elf *t,
		       int (*fn)(void *ctx, const char *name, const GElf_Sym *sym), void *ctx)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(t->elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s) ||
			    !(n = elf_strptr(t->elf, sh.sh_link, s.st_name)))
				continue;
			if (fn(ctx, n, &s))
				return -1;
		}
	}
	return 0;
}
