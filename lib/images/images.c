#include "lib/images/images.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/images/elf.h"
#include "lib/util/grow.h"

/* One file a mapping refers to: the recorded path plus the build id it must have. Opened
 * on the first read, once; found or not, the answer is kept. */
struct file {
	char *path;
	char bid[2 * 20 + 1];	/* expected build id, lowercase hex, "" if unknown */
	bool special;		/* "[vdso]", "//anon", ...: never has a file */
	bool tried, needed;
	struct tc_elf *elf;
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

struct tc_images {
	char *symfs, *buildid_dir;
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
	free(im->bids);
	free(im->files);
	free(im->spaces);
	free(im->symfs);
	free(im->buildid_dir);
	free(im);
}

void tc_images_add_build_ids(struct tc_images *im, const struct tc_perf_data_build_id *ids,
			     size_t n)
{
	size_t cap = im->nbids;

	if (!n || tc_grow((void **)&im->bids, &cap, im->nbids + n, sizeof(*im->bids)))
		return;
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

	if (s)
		s->n = 0;
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

static const struct mapping *lookup(struct tc_images *im, int32_t pid, uint64_t addr)
{
	const struct mapping *m = pid != TC_IMG_PID_KERNEL ? lookup_in(im, pid, addr) : NULL;

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
	if (!is_kernel_image(f->path) && try_open(f, f->path, im->symfs != NULL))
		return;
}

static void note_missing(struct tc_images *im, struct file *f)
{
	char line[4096 + 1024];
	size_t cap = im->nmissing;
	int n;

	if (f->needed)
		return;
	f->needed = true;
	n = snprintf(line, sizeof(line), "%s", f->path);
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

static struct tc_elf *elf_of(struct tc_images *im, struct file *f)
{
	if (!f->tried)
		open_file(im, f);
	if (!f->elf)
		note_missing(im, f);
	return f->elf;
}

size_t tc_images_read(struct tc_images *im, int32_t pid, uint64_t addr, void *buf, size_t len)
{
	const struct mapping *m = lookup(im, pid, addr);
	struct tc_elf *elf;

	if (!m || !(elf = elf_of(im, m->file)))
		return 0;
	if (len > m->end - addr)
		len = (size_t)(m->end - addr);
	/* The kernel maps [kernel.kallsyms] by address (pgoff is an address, not an offset):
	 * read vmlinux by its link-time addresses. */
	if (is_kernel_image(m->file->path))
		return tc_elf_read_vaddr(elf, addr, buf, len);
	/* The bytes the process saw are the file's bytes at pgoff + (addr - start). */
	return tc_elf_read_offset(elf, m->pgoff + (addr - m->start), buf, len);
}

int tc_images_span(struct tc_images *im, int32_t pid, uint64_t addr, struct tc_images_span *s)
{
	const struct mapping *m = lookup(im, pid, addr);
	struct tc_elf *elf;
	size_t size;

	if (!m || !(elf = elf_of(im, m->file)) || is_kernel_image(m->file->path))
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

int tc_images_symbol(struct tc_images *im, int32_t pid, uint64_t addr, struct tc_images_sym *s)
{
	const struct mapping *m = lookup(im, pid, addr);
	struct tc_elf *elf;
	uint64_t off = m ? m->pgoff + (addr - m->start) : 0, va;

	memset(s, 0, sizeof(*s));
	if (!m)
		return -1;
	s->dso = m->file->path[0] ? m->file->path : NULL;
	s->dso_off = off;
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
	const struct mapping *m = lookup(im, pid, addr);
	const struct tc_elf_seg *seg;
	struct tc_elf *elf;
	size_t n;

	if (!m || !m->file->path[0] || !(elf = elf_of(im, m->file)))
		return -1;
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
