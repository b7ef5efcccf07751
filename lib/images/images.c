#include "lib/images/images.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <elf.h>

#include "lib/images/elf.h"
#include "lib/images/kernel.h"
#include "lib/util/blockpool.h"
#include "lib/util/grow.h"

/* A kernel module's section as placed in memory. */
struct placed {
	uint64_t addr, size, offset;
	unsigned shndx;
	bool nobits;
};

struct msym {
	uint64_t addr, size;
	const char *name;
};

/* Where a module's sections (and so its symbols) are, for the start it was mapped at. */
struct modlayout {
	uint64_t base;
	struct placed *v;
	size_t n;
	struct msym *syms;
	size_t nsyms;
};

/* One file a mapping refers to: the recorded path plus the build id it must have. Opened
 * on the first read, once; found or not, the answer is kept. */
struct file {
	char *path;
	char bid[2 * 20 + 1];	/* expected build id, lowercase hex, "" if unknown */
	bool special;		/* "[vdso]", "//anon", ...: never has a file */
	bool tried, needed;
	struct tc_elf *elf;
	struct modlayout *mod;	/* a kernel module's placement, once computed */
	char why[512];		/* why it was not found */
};

struct mapping {
	uint64_t start, end, pgoff;
	struct file *file;
};

/* The mappings of one pid, sorted by start, never overlapping. */
struct space {
	int32_t pid;
	struct mapping *v;
	size_t n, cap;
};

/* tc_images_symbol's answers for user-space addresses, by pid and address: a record
 * writer asks for the same few addresses millions of times. An answer holds while the
 * mappings stay as they are (what a file found or not found gives is kept once tried):
 * every change to them starts a new generation, and answers of older ones are not used.
 * Kernel addresses (the kernel's images are shared between address spaces) are not kept. */
#define SYM_CACHE_BITS 12

struct sym_slot {
	uint64_t addr;
	int32_t pid;
	uint32_t gen;		/* 0: empty */
	struct tc_images_sym s;
};

/* Caches come from the process's pool of huge-page chunks (8 to a 2 MiB page; one let go
 * of taken again first): with --jobs each lane has images of its own, each
 * cache filled all over (addresses hashed), and a first touch of fresh memory costs a page
 * fault per 4 KiB (10-30 us in a VM: ~50 a cache), a huge page one per 2 MiB. */
#define SYM_CACHE ((size_t)256 << 10)
_Static_assert(sizeof(struct sym_slot) << SYM_CACHE_BITS <= SYM_CACHE, "a blockpool's block");

/* An empty cache (every slot's gen 0), NULL on ENOMEM. */
static struct sym_slot *cache_new(void)
{
	struct tc_blockpool *p = tc_blockpool_shared(SYM_CACHE);
	struct sym_slot *c;

	if (!p || !(c = tc_blockpool_get(p)))
		return NULL;
	memset(c, 0, sizeof(*c) << SYM_CACHE_BITS);
	return c;
}

struct tc_images {
	char *symfs, *buildid_dir;
	struct sym_slot *cache;		/* 1 << SYM_CACHE_BITS slots, made on first use */
	uint32_t gen;			/* of the mappings, for the cache */
	struct tc_kernel *kernel;	/* borrowed */
	bool kchecked;			/* the kernel's build id was checked */
	struct file **files;
	size_t nfiles, capfiles;
	struct space *spaces;
	size_t nspaces, capspaces;
	struct tc_perf_data_build_id *bids;	/* copies; filenames owned */
	size_t nbids;
	char **missing;
	size_t nmissing;
};

static void hex(char *out, const uint8_t *id, size_t n)
{
	/* perf pads ids to 20 bytes; trailing zero bytes are padding, not id. */
	while (n && !id[n - 1])
		n--;
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * n] = 0;
}

struct tc_images *tc_images_new(const struct tc_images_opts *o)
{
	struct tc_images *im = calloc(1, sizeof(*im));

	if (!im)
		return NULL;
	if (o && o->symfs && *o->symfs && !(im->symfs = strdup(o->symfs)))
		goto fail;
	if (o && o->buildid_dir && *o->buildid_dir && !(im->buildid_dir = strdup(o->buildid_dir)))
		goto fail;
	im->kernel = o ? o->kernel : NULL;
	im->gen = 1;
	return im;
fail:
	tc_images_free(im);
	return NULL;
}

void tc_images_free(struct tc_images *im)
{
	if (!im)
		return;
	for (size_t i = 0; i < im->nfiles; i++) {
		if (im->files[i]->mod) {
			free(im->files[i]->mod->v);
			free(im->files[i]->mod->syms);
			free(im->files[i]->mod);
		}
		tc_elf_close(im->files[i]->elf);
		free(im->files[i]->path);
		free(im->files[i]);
	}
	for (size_t i = 0; i < im->nspaces; i++)
		free(im->spaces[i].v);
	for (size_t i = 0; i < im->nbids; i++)
		free(im->bids[i].filename);
	for (size_t i = 0; i < im->nmissing; i++)
		free(im->missing[i]);
	free(im->missing);
	if (im->cache)
		tc_blockpool_put(tc_blockpool_shared(SYM_CACHE), im->cache);
	free(im->bids);
	free(im->files);
	free(im->spaces);
	free(im->symfs);
	free(im->buildid_dir);
	free(im);
}

/* The mappings (or what is known of their files) changed: cached symbols are stale. */
static void changed(struct tc_images *im)
{
	if (++im->gen == 0) {	/* wrapped: no slot may look current */
		if (im->cache)
			memset(im->cache, 0, sizeof(*im->cache) << SYM_CACHE_BITS);
		im->gen = 1;
	}
}

void tc_images_add_build_ids(struct tc_images *im, const struct tc_perf_data_build_id *ids,
			     size_t n)
{
	size_t cap = im->nbids;

	changed(im);
	if (!n || tc_grow((void **)&im->bids, &cap, im->nbids + n, sizeof(*im->bids)))
		return;
	im->kchecked = false;
	for (size_t i = 0; i < n; i++) {
		struct tc_perf_data_build_id *b = &im->bids[im->nbids];

		if (!ids[i].filename)
			continue;
		*b = ids[i];
		if (!(b->filename = strdup(ids[i].filename)))
			return;
		im->nbids++;
	}
}

/* The build id the file's build-id feature gives for path ("" if none). */
static void feature_bid(const struct tc_images *im, const char *path, char *out)
{
	out[0] = 0;
	for (size_t i = 0; i < im->nbids; i++)
		if (!strcmp(im->bids[i].filename, path)) {
			size_t sz = im->bids[i].size;

			hex(out, im->bids[i].id, sz && sz <= 20 ? sz : 20);
			return;
		}
}

static bool is_special(const char *path)
{
	/* [vdso], [heap], //anon, /dev/zero (deleted), memfd:..., anon_inode:... */
	return !*path || path[0] == '[' || !strncmp(path, "//", 2) || strchr(path, '/') == NULL ||
	       strstr(path, " (deleted)") != NULL;
}

static bool is_kernel_image(const char *path)
{
	return !strncmp(path, "[kernel.kallsyms]", 17) || !strncmp(path, "[guest.kernel", 13);
}

static struct file *get_file(struct tc_images *im, const char *path, const uint8_t *bid,
			     size_t bid_len)
{
	char want[2 * 20 + 1] = "";
	struct file *f;

	if (bid && bid_len)
		hex(want, bid, bid_len > 20 ? 20 : bid_len);
	if (!want[0])
		feature_bid(im, path, want);
	for (size_t i = 0; i < im->nfiles; i++)
		if (!strcmp(im->files[i]->path, path) && !strcmp(im->files[i]->bid, want))
			return im->files[i];
	if (tc_grow((void **)&im->files, &im->capfiles, im->nfiles + 1, sizeof(*im->files)))
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return NULL;
	}
	snprintf(f->bid, sizeof(f->bid), "%s", want);
	f->special = is_special(path) && !is_kernel_image(path);
	im->files[im->nfiles++] = f;
	return f;
}

static struct space *find_space(struct tc_images *im, int32_t pid, bool create)
{
	struct space *s;

	for (size_t i = 0; i < im->nspaces; i++)
		if (im->spaces[i].pid == pid)
			return &im->spaces[i];
	if (!create || tc_grow((void **)&im->spaces, &im->capspaces, im->nspaces + 1,
			    sizeof(*im->spaces)))
		return NULL;
	s = &im->spaces[im->nspaces++];
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	return s;
}

/* Index of the first mapping ending after addr. */
static size_t lower(const struct space *s, uint64_t addr)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int insert_at(struct space *s, size_t i, const struct mapping *m)
{
	if (tc_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return -1;
	memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(*s->v));
	s->v[i] = *m;
	s->n++;
	return 0;
}

/* Cut [start, end) out of the space: what overlaps is trimmed, split or dropped. */
static int punch(struct space *s, uint64_t start, uint64_t end)
{
	size_t i = lower(s, start);

	while (i < s->n && s->v[i].start < end) {
		struct mapping *m = &s->v[i];

		if (m->start < start && m->end > end) {
			struct mapping right = *m;

			right.pgoff += end - m->start;
			right.start = end;
			m->end = start;
			return insert_at(s, i + 1, &right);
		}
		if (m->start < start) {
			m->end = start;
			i++;
		} else if (m->end > end) {
			m->pgoff += end - m->start;
			m->start = end;
			i++;
		} else {
			memmove(m, m + 1, (s->n - i - 1) * sizeof(*m));
			s->n--;
		}
	}
	return 0;
}

void tc_images_map(struct tc_images *im, int32_t pid, uint64_t start, uint64_t len,
		   uint64_t pgoff, const char *filename, const uint8_t *build_id, size_t bid_len)
{
	struct mapping m = { start, start + len, pgoff, NULL };
	struct space *s;

	if (!len || m.end < start)
		return;
	changed(im);
	/* The kernel's MMAP names its relocation reference after "]" and gives its address
	 * as pgoff: what a vmlinux or a kallsyms file is placed against. */
	if (pid == TC_IMG_PID_KERNEL && im->kernel && filename &&
	    !strncmp(filename, "[kernel.kallsyms]", 17))
		tc_kernel_set_ref(im->kernel, filename + 17, pgoff);
	if (!(m.file = get_file(im, filename ? filename : "", build_id, bid_len)))
		return;
	if (!(s = find_space(im, pid, true)) || punch(s, m.start, m.end))
		return;
	insert_at(s, lower(s, m.start), &m);
}

void tc_images_fork(struct tc_images *im, int32_t ppid, int32_t pid)
{
	struct space *p, *c;
	size_t ip;

	if (ppid == pid || !(p = find_space(im, ppid, false)))
		return;
	changed(im);
	ip = (size_t)(p - im->spaces);
	if (!(c = find_space(im, pid, true)))
		return;
	p = &im->spaces[ip];	/* the array may have moved */
	c->n = 0;
	if (tc_grow((void **)&c->v, &c->cap, p->n, sizeof(*c->v)))
		return;
	memcpy(c->v, p->v, p->n * sizeof(*c->v));
	c->n = p->n;
}

void tc_images_exec(struct tc_images *im, int32_t pid)
{
	struct space *s = find_space(im, pid, false);

	if (s) {
		s->n = 0;
		changed(im);
	}
}

static const struct mapping *lookup_in(struct tc_images *im, int32_t pid, uint64_t addr)
{
	struct space *s = find_space(im, pid, false);
	size_t i;

	if (!s)
		return NULL;
	i = lower(s, addr);
	return i < s->n && s->v[i].start <= addr ? &s->v[i] : NULL;
}

/* The mapping of addr in pid, else in the kernel's space (*kern then true). */
static const struct mapping *lookup_k(struct tc_images *im, int32_t pid, uint64_t addr,
				      bool *kern)
{
	const struct mapping *m = pid != TC_IMG_PID_KERNEL ? lookup_in(im, pid, addr) : NULL;

	*kern = !m;
	return m ? m : lookup_in(im, TC_IMG_PID_KERNEL, addr);
}

/* Does the ELF's build id match the one expected ("" accepts any)? */
static bool bid_matches(const struct file *f, const struct tc_elf *elf)
{
	const char *have = tc_elf_build_id(elf);
	size_t n = strlen(f->bid);

	/* An id recorded shorter than the file's (simpleperf keeps 16 bytes) is a prefix. */
	return !n || (strlen(have) >= n && !strncmp(have, f->bid, n));
}

static bool try_open(struct file *f, const char *path, bool need_bid)
{
	struct tc_err e;
	struct stat st;
	struct tc_elf *elf;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	if (!(elf = tc_elf_open(path, &e))) {
		snprintf(f->why, sizeof(f->why), "%s", e.msg);
		return false;
	}
	if ((need_bid && !f->bid[0]) || !bid_matches(f, elf)) {
		snprintf(f->why, sizeof(f->why), "%.300s has build id %s", path,
			 *tc_elf_build_id(elf) ? tc_elf_build_id(elf) : "(none)");
		tc_elf_close(elf);
		return false;
	}
	f->elf = elf;
	return true;
}

static bool try_debug(struct tc_elf *elf, const char *path)
{
	struct tc_err e;
	struct stat st;
	struct tc_elf *dbg;

	if (stat(path, &st) || !S_ISREG(st.st_mode) || !(dbg = tc_elf_open(path, &e)))
		return false;
	if (tc_elf_use_debug_file(elf, dbg)) {
		tc_elf_close(dbg);
		return false;
	}
	return true;
}

/* A binary without .symtab (a distribution's stripped library) takes its function symbols
 * from its separate debug file, found as perf finds it, under --symfs when given: by build
 * id, /usr/lib/debug/.build-id/xx/rest.debug; then by the name its .gnu_debuglink gives,
 * beside the recorded path, in its .debug/ directory and under /usr/lib/debug/<its
 * directory>/. The debug file's build id must be the binary's. */
static void find_debug_file(struct tc_images *im, struct file *f)
{
	const char *root = im->symfs ? im->symfs : "", *bid = tc_elf_build_id(f->elf);
	const char *link = tc_elf_debuglink(f->elf), *slash = strrchr(f->path, '/');
	int dirlen = slash ? (int)(slash - f->path) : 0;
	char path[4096];

	if (tc_elf_has_symtab(f->elf) || strlen(bid) <= 2 || is_kernel_image(f->path))
		return;
	snprintf(path, sizeof(path), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root, bid,
		 bid + 2);
	if (try_debug(f->elf, path) || !link || !*link || strchr(link, '/') || f->path[0] != '/')
		return;
	snprintf(path, sizeof(path), "%s%.*s/%s", root, dirlen, f->path, link);
	if (strcmp(path + strlen(root), f->path) && try_debug(f->elf, path))
		return;
	snprintf(path, sizeof(path), "%s%.*s/.debug/%s", root, dirlen, f->path, link);
	if (try_debug(f->elf, path))
		return;
	snprintf(path, sizeof(path), "%s/usr/lib/debug%.*s/%s", root, dirlen, f->path, link);
	try_debug(f->elf, path);
}

/* Where to look, in order: --symfs + recorded path; the build-id cache (perf's layout:
 * .build-id/xx/rest is the file or a directory holding "elf"); the recorded path itself,
 * but with --symfs only when a build id proves it is the same file. */
static void open_file(struct tc_images *im, struct file *f)
{
	char path[4096];

	f->tried = true;
	if (f->special)
		return;
	if (im->symfs) {
		snprintf(path, sizeof(path), "%s/%s", im->symfs, f->path);
		if (try_open(f, path, false))
			return;
	}
	if (im->buildid_dir && strlen(f->bid) > 2) {
		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s", im->buildid_dir, f->bid,
			 f->bid + 2);
		if (try_open(f, path, false))
			return;
		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s/elf", im->buildid_dir, f->bid,
			 f->bid + 2);
		if (try_open(f, path, false))
			return;
	}
	if (!is_kernel_image(f->path))
		try_open(f, f->path, im->symfs != NULL);
}

static void note_missing(struct tc_images *im, struct file *f)
{
	char line[4096 + 1024];
	size_t cap = im->nmissing;
	int n;

	if (f->needed)
		return;
	if (is_kernel_image(f->path) && !f->why[0])
		snprintf(f->why, sizeof(f->why), "%s",
			 im->kernel && *tc_kernel_why(im->kernel)
				 ? tc_kernel_why(im->kernel)
				 : "give the kernel's code with --vmlinux FILE or --kcore FILE");
	f->needed = true;
	/* the kernel as perf names it, whatever its MMAP's suffix (_text, _stext) */
	n = snprintf(line, sizeof(line), "%s",
		     is_kernel_image(f->path) && f->path[1] == 'k' ? "[kernel.kallsyms]" : f->path);
	if (f->bid[0])
		n += snprintf(line + n, sizeof(line) - (size_t)n, " (build id %s)", f->bid);
	if (f->special)
		snprintf(line + n, sizeof(line) - (size_t)n, " (no file: special mapping)");
	else if (f->why[0])
		snprintf(line + n, sizeof(line) - (size_t)n, " (%s)", f->why);
	if (tc_grow((void **)&im->missing, &cap, im->nmissing + 1, sizeof(*im->missing)))
		return;
	if ((im->missing[im->nmissing] = strdup(line)))
		im->nmissing++;
}

static void open_with_debug(struct tc_images *im, struct file *f)
{
	open_file(im, f);
	if (f->elf)
		find_debug_file(im, f);
}

static struct tc_elf *elf_of(struct tc_images *im, struct file *f)
{
	if (!f->tried)
		open_with_debug(im, f);
	if (!f->elf)
		note_missing(im, f);
	return f->elf;
}

/* The file if it can be found, without counting it as missing otherwise (the kernel's
 * images may serve instead). */
static struct tc_elf *elf_quiet(struct tc_images *im, struct file *f)
{
	if (!f->tried)
		open_with_debug(im, f);
	return f->elf;
}

/* The kernel's images, once checked against the recorded kernel's build id. */
static void kernel_check(struct tc_images *im)
{
	char want[2 * 20 + 1];

	if (im->kchecked)
		return;
	im->kchecked = true;
	feature_bid(im, "[kernel.kallsyms]", want);
	tc_kernel_expect_build_id(im->kernel, want);
}

static bool kernel_text(struct tc_images *im)
{
	if (!im->kernel)
		return false;
	kernel_check(im);
	return tc_kernel_has_text(im->kernel);
}

static bool kernel_syms(struct tc_images *im)
{
	if (!im->kernel)
		return false;
	kernel_check(im);
	return tc_kernel_has_symbols(im->kernel);
}

/* An address in the upper half: the kernel's, where no mapping says otherwise. */
static bool kernel_half(uint64_t addr)
{
	return addr >> 63;
}

/* The module's name as the kernel knows it: the file's name up to ".ko", '-' as '_'. */
static void module_name(const char *path, char *out, size_t len)
{
	const char *b = strrchr(path, '/');
	size_t i = 0;

	b = b ? b + 1 : path;
	if (*b == '[')
		b++;
	for (; *b && *b != ']' && strncmp(b, ".ko", 3) && i + 1 < len; b++)
		out[i++] = *b == '-' ? '_' : *b;
	out[i] = 0;
}

static int cmp_msym(const void *a, const void *b)
{
	const struct msym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void free_layout(struct modlayout *l)
{
	if (l) {
		free(l->v);
		free(l->syms);
		free(l);
	}
}

/* Place a relocatable module's sections for a module that starts at base: as this
 * machine's sysfs says when the module is loaded here at base, else as the kernel's
 * loader lays out its executable sections (section order, each at its alignment; .init
 * sections go elsewhere and are left out). Symbols follow their sections. */
static struct modlayout *layout_of(struct tc_images *im, struct file *f,
				   const struct tc_elf *elf, uint64_t base)
{
	struct modlayout *l;
	const struct tc_elf_sec *sec;
	size_t nsec, nsym = tc_elf_nsymbols(elf);
	char name[256];
	uint64_t text, size = 0;
	bool sysfs;

	if (f->mod && f->mod->base == base)
		return f->mod;
	free_layout(f->mod);
	f->mod = NULL;
	sec = tc_elf_sections(elf, &nsec);
	if (!(l = calloc(1, sizeof(*l))) || !(l->v = calloc(nsec ? nsec : 1, sizeof(*l->v))) ||
	    !(l->syms = calloc(nsym ? nsym : 1, sizeof(*l->syms)))) {
		free_layout(l);
		return NULL;
	}
	l->base = base;
	module_name(f->path, name, sizeof(name));
	sysfs = !tc_kernel_module_section(im->kernel, name, ".text", &text) && text == base;
	for (size_t i = 1; i < nsec; i++) {
		const struct tc_elf_sec *c = &sec[i];
		uint64_t at, align = c->align ? c->align : 1;

		if (!(c->flags & SHF_ALLOC) || !c->size)
			continue;
		if (sysfs) {
			if (tc_kernel_module_section(im->kernel, name, c->name, &at))
				continue;
		} else {
			if ((c->flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR) ||
			    !strncmp(c->name, ".init", 5))
				continue;
			size = (size + align - 1) / align * align;
			at = base + size;
			size += c->size;
		}
		l->v[l->n++] = (struct placed){ at, c->size, c->offset, (unsigned)i,
						c->type == SHT_NOBITS };
	}
	for (size_t i = 0; i < nsym; i++) {
		uint64_t value, sz;
		unsigned shndx;
		const char *n = tc_elf_symbol_at(elf, i, &value, &sz, &shndx);

		for (size_t j = 0; n && j < l->n; j++)
			if (l->v[j].shndx == shndx) {
				l->syms[l->nsyms++] = (struct msym){ l->v[j].addr + value, sz, n };
				break;
			}
	}
	qsort(l->syms, l->nsyms, sizeof(*l->syms), cmp_msym);
	return f->mod = l;
}

static size_t module_read(const struct modlayout *l, const struct tc_elf *elf, uint64_t addr,
			  void *buf, size_t len)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct placed *p = &l->v[i];

		if (p->nobits || addr < p->addr || addr - p->addr >= p->size)
			continue;
		if (len > p->size - (addr - p->addr))
			len = (size_t)(p->size - (addr - p->addr));
		return tc_elf_read_offset(elf, p->offset + (addr - p->addr), buf, len);
	}
	return 0;
}

static const char *module_symbol(const struct modlayout *l, uint64_t addr, uint64_t *off)
{
	size_t lo = 0, hi = l->nsyms;
	const struct msym *s;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &l->syms[lo - 1];
	if (s->size && addr - s->addr >= s->size)
		return NULL;
	*off = addr - s->addr;
	return s->name;
}

/* Does the kernel's space map a relocatable module at m? Then its layout (NULL if not). */
static struct modlayout *module_of(struct tc_images *im, const struct mapping *m, bool kern,
				   struct tc_elf *elf)
{
	if (!kern || !elf || tc_elf_type(elf) != ET_REL)
		return NULL;
	return layout_of(im, m->file, elf, m->start - m->pgoff);
}

size_t tc_images_read(struct tc_images *im, int32_t pid, uint64_t addr, void *buf, size_t len)
{
	bool kern;
	const struct mapping *m = lookup_k(im, pid, addr, &kern);
	struct modlayout *l;
	struct tc_elf *elf;
	size_t n;

	if (!m)
		return kernel_half(addr) && kernel_text(im) ? tc_kernel_read(im->kernel, addr, buf, len)
							    : 0;
	if (len > m->end - addr)
		len = (size_t)(m->end - addr);
	if (is_kernel_image(m->file->path) && kernel_text(im))
		return tc_kernel_read(im->kernel, addr, buf, len);
	/* A module's bytes: kcore holds them as the kernel relocated them. */
	if (kern && !is_kernel_image(m->file->path) && im->kernel &&
	    (n = tc_kernel_read_kcore(im->kernel, addr, buf, len)))
		return n;
	if (!(elf = elf_of(im, m->file)))
		return 0;
	/* The kernel maps [kernel.kallsyms] by address (pgoff is an address, not an offset):
	 * read vmlinux by its link-time addresses. */
	if (is_kernel_image(m->file->path))
		return tc_elf_read_vaddr(elf, addr, buf, len);
	if ((l = module_of(im, m, kern, elf)))
		return module_read(l, elf, addr, buf, len);
	/* The bytes the process saw are the file's bytes at pgoff + (addr - start). */
	return tc_elf_read_offset(elf, m->pgoff + (addr - m->start), buf, len);
}

int tc_images_span(struct tc_images *im, int32_t pid, uint64_t addr, struct tc_images_span *s)
{
	bool kern;
	const struct mapping *m = lookup_k(im, pid, addr, &kern);
	struct tc_elf *elf;
	size_t size;

	/* the kernel's space (kernel, kcore, modules placed by section) reads by address */
	if (!m || (kern && im->kernel) || is_kernel_image(m->file->path) ||
	    !(elf = elf_of(im, m->file)) || (kern && tc_elf_type(elf) == ET_REL))
		return -1;
	size = tc_elf_size(elf);
	if (m->pgoff >= size)
		return -1;
	s->path = tc_elf_path(elf);
	s->start = m->start;
	s->offset = m->pgoff;
	s->len = m->end - m->start;
	if (s->len > size - m->pgoff)
		s->len = size - m->pgoff;
	return 0;
}

/* A kernel symbol from the kernel's images: dso "[kernel.kallsyms]", or "[module]" for a
 * kallsyms module symbol. */
static int kernel_symbol(struct tc_images *im, uint64_t addr, struct tc_images_sym *s)
{
	const char *module;

	s->dso = tc_kernel_covers(im->kernel, addr) ? "[kernel.kallsyms]" : NULL;
	s->dso_off = tc_kernel_link_addr(im->kernel, addr);
	s->sym = tc_kernel_symbol(im->kernel, addr, &s->sym_off, &module);
	if (module)
		s->dso = module;
	return 0;
}

static int symbol_of(struct tc_images *im, int32_t pid, uint64_t addr, struct tc_images_sym *s,
		     bool *keep);

static inline struct sym_slot *slot_of(struct tc_images *im, int32_t pid, uint64_t addr)
{
	/* multiply, fold, multiply: addresses a fixed step apart spread too */
	uint64_t h = (addr ^ (uint64_t)(uint32_t)pid << 40) * 0x9e3779b97f4a7c15ULL;

	h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
	return &im->cache[h >> (64 - SYM_CACHE_BITS)];
}

int tc_images_symbol(struct tc_images *im, int32_t pid, uint64_t addr, struct tc_images_sym *s)
{
	struct sym_slot *c;
	bool keep = false;
	int rc;

	if (__builtin_expect(!im->cache, 0) &&
	    !(im->cache = cache_new()))
		return symbol_of(im, pid, addr, s, &keep);
	c = slot_of(im, pid, addr);
	if (c->gen == im->gen && c->addr == addr && c->pid == pid) {
		*s = c->s;
		return 0;
	}
	rc = symbol_of(im, pid, addr, s, &keep);
	if (keep && !rc) {
		c->addr = addr;
		c->pid = pid;
		c->gen = im->gen;
		c->s = *s;
	}
	return rc;
}

/* tc_images_symbol's answer; *keep where it may be cached (a user-space mapping's). */
static int symbol_of(struct tc_images *im, int32_t pid, uint64_t addr, struct tc_images_sym *s,
		     bool *keep)
{
	bool kern;
	const struct mapping *m = lookup_k(im, pid, addr, &kern);
	struct modlayout *l;
	struct tc_elf *elf;
	uint64_t off = m ? m->pgoff + (addr - m->start) : 0, va;

	memset(s, 0, sizeof(*s));
	if (!m) {
		if (!kernel_half(addr) || !kernel_syms(im))
			return -1;
		kernel_symbol(im, addr, s);
		return s->sym ? 0 : -1;
	}
	if (is_kernel_image(m->file->path) && kernel_syms(im))
		return kernel_symbol(im, addr, s);
	s->dso = m->file->path[0] ? m->file->path : NULL;
	if (is_kernel_image(m->file->path) && m->file->path[1] == 'k')
		s->dso = "[kernel.kallsyms]";
	s->dso_off = off;
	if (kern && !is_kernel_image(m->file->path)) {
		/* a module: its own symbols where its file is found, else kallsyms' (perf
		 * names a module whose file it did not know "[name]") */
		elf = m->file->special ? NULL : elf_quiet(im, m->file);
		if ((l = module_of(im, m, kern, elf))) {
			s->dso_off = addr - l->base;
			if ((s->sym = module_symbol(l, addr, &s->sym_off)))
				return 0;
		}
		/* kallsyms' symbol, if it is this module's */
		if (kernel_syms(im)) {
			const char *mod;
			char want[256];

			module_name(m->file->path, want, sizeof(want));
			s->sym = tc_kernel_symbol(im->kernel, addr, &s->sym_off, &mod);
			if (s->sym && (!mod || strlen(mod) != strlen(want) + 2 ||
				       strncmp(mod + 1, want, strlen(want))))
				s->sym = NULL;
			if (s->sym)
				return 0;
		}
		if (l || !elf)
			return 0;
	}
	*keep = !kern && !is_kernel_image(m->file->path);
	if (!(elf = elf_of(im, m->file)))
		return 0;
	/* With the ELF known, the DSO address is its link-time address (what objdump and
	 * the symbol table use); for usual PIE text that is the file offset too. */
	if (is_kernel_image(m->file->path))
		va = addr;
	else if (tc_elf_offset_to_vaddr(elf, off, &va))
		return 0;
	s->dso_off = va;
	s->sym = tc_elf_symbol(elf, va, &s->sym_off);
	return 0;
}

int tc_images_file(struct tc_images *im, int32_t pid, uint64_t addr, struct tc_images_file *f)
{
	bool kern;
	const struct mapping *m = lookup_k(im, pid, addr, &kern);
	const struct tc_elf_seg *seg;
	struct tc_elf *elf;
	size_t n;

	if (m && is_kernel_image(m->file->path) && im->kernel) {
		if (!(elf = tc_kernel_vmlinux(im->kernel)))
			return -1;
		f->dso = "[kernel.kallsyms]";
		f->vaddr = tc_kernel_link_addr(im->kernel, addr);
		seg = tc_elf_segments(elf, &n);
		f->first_load = n ? seg[0].vaddr : 0;
		f->build_id = tc_elf_build_id(elf);
		return 0;
	}
	if (!m || !m->file->path[0] || !(elf = elf_of(im, m->file)))
		return -1;
	if (kern && tc_elf_type(elf) == ET_REL)
		return -1;	/* a module: no link-time addresses */
	if (is_kernel_image(m->file->path))
		f->vaddr = addr;
	else if (tc_elf_offset_to_vaddr(elf, m->pgoff + (addr - m->start), &f->vaddr))
		return -1;
	seg = tc_elf_segments(elf, &n);
	f->first_load = n ? seg[0].vaddr : 0;
	f->dso = m->file->path;
	f->build_id = tc_elf_build_id(elf);
	return 0;
}

size_t tc_images_missing(const struct tc_images *im, const char *const **paths)
{
	*paths = (const char *const *)im->missing;
	return im->nmissing;
}

int tc_images_format_sym(struct tc_images *im, int32_t pid, uint64_t addr, char *buf,
			 size_t len)
{
	struct tc_images_sym sym;
	const char *base;

	if (tc_images_symbol(im, pid, addr, &sym))
		return -1;
	if (sym.sym) {
		snprintf(buf, len, "%s+0x%llx", sym.sym, (unsigned long long)sym.sym_off);
		return 0;
	}
	if (!sym.dso)
		return -1;
	base = strrchr(sym.dso, '/');
	snprintf(buf, len, "[%s+0x%llx]", base ? base + 1 : sym.dso,
		 (unsigned long long)sym.dso_off);
	return 0;
}
