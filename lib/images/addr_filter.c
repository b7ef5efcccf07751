#include "lib/images/addr_filter.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/images/elf.h"
#include "lib/util/grow.h"

void tc_addr_filter_maps_free(struct tc_maps *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

int tc_addr_filter_maps_read(pid_t pid, struct tc_maps *out, struct tc_err *e)
{
	char path[64], line[PATH_MAX + 128];
	size_t cap = 0;
	FILE *f;

	out->v = NULL;
	out->n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "r")))
		return tc_err_sys(e, errno, "%s", path);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, en, off, ino;
		unsigned maj, min;
		char perm[8], name[PATH_MAX];
		struct tc_map *m;
		int n;

		name[0] = 0;
		n = sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &s, &en, perm, &off, &maj,
			   &min, &ino, name);
		if (n < 7)
			continue;
		if (tc_grow((void **)&out->v, &cap, out->n + 1, sizeof(*out->v)))
			goto nomem;
		m = &out->v[out->n];
		*m = (struct tc_map){ s, en, off, ino, maj, min, 0, strdup(name) };
		if (!m->path)
			goto nomem;
		m->prot = (perm[0] == 'r' ? PROT_READ : 0) | (perm[1] == 'w' ? PROT_WRITE : 0) |
			(perm[2] == 'x' ? PROT_EXEC : 0);
		out->n++;
	}
	fclose(f);
	return 0;
nomem:
	fclose(f);
	tc_addr_filter_maps_free(out);
	return tc_err_set(e, ENOMEM, "out of memory reading %s", path);
}

void tc_addr_filter_free(struct tc_addr_filter *f)
{
	free(f->v);
	free(f->perf);
	f->v = NULL;
	f->perf = NULL;
	f->n = 0;
}

int tc_addr_filter_has(const struct tc_addr_filter *f, uint64_t ip)
{
	for (size_t i = 0; i < f->n; i++)
		if (ip >= f->v[i].start && ip < f->v[i].end)
			return 1;
	return 0;
}

/* A range at runtime address s, file offset off of path. */
static int add_range(struct tc_addr_filter *f, uint64_t s, uint64_t en, uint64_t off,
		     const char *path, struct tc_err *e)
{
	struct tc_addr_range *nv = realloc(f->v, (f->n + 1) * sizeof(*nv));
	char *str = NULL;

	if (!nv)
		return tc_err_set(e, ENOMEM, "out of memory");
	f->v = nv;
	if (asprintf(&str, "%s%sfilter 0x%llx/0x%llx@%s", f->perf ? f->perf : "",
		     f->perf ? "," : "", (unsigned long long)off, (unsigned long long)(en - s),
		     path) < 0)
		return tc_err_set(e, ENOMEM, "out of memory");
	free(f->perf);
	f->perf = str;
	f->v[f->n++] = (struct tc_addr_range){ s, en };
	return 0;
}

int tc_addr_filter_file(const char *path, const struct tc_maps *m, struct tc_addr_filter *out,
			struct tc_err *e)
{
	size_t before = out->n;

	for (size_t i = 0; i < m->n; i++)
		if ((m->v[i].prot & PROT_EXEC) && !strcmp(m->v[i].path, path) &&
		    add_range(out, m->v[i].start, m->v[i].end, m->v[i].pgoff, path, e))
			return -1;
	if (out->n == before)
		return tc_err_set(e, ENOENT, "%s has no executable mapping in the process", path);
	return 0;
}

/* Link-time address of FILE to where the process has it: through the file offset and the
 * mapping that holds it. */
static int to_runtime(const struct tc_elf *elf, const char *path, const struct tc_maps *m,
		      uint64_t vaddr, uint64_t *out, uint64_t *offp, struct tc_err *e)
{
	uint64_t off;

	if (tc_elf_vaddr_to_offset(elf, vaddr, &off))
		return tc_err_set(e, EINVAL, "0x%llx is not in a loaded part of %s",
				  (unsigned long long)vaddr, path);
	for (size_t i = 0; i < m->n; i++) {
		const struct tc_map *x = &m->v[i];

		if (!strcmp(x->path, path) && off >= x->pgoff &&
		    off < x->pgoff + (x->end - x->start)) {
			*out = x->start + (off - x->pgoff);
			*offp = off;
			return 0;
		}
	}
	return tc_err_set(e, ENOENT, "%s is not mapped at 0x%llx in the process", path,
			  (unsigned long long)vaddr);
}

static int one_filter(char *item, const struct tc_maps *m, struct tc_addr_filter *out,
		      struct tc_err *e)
{
	char *at, *what, *slash, *end, real[PATH_MAX];
	uint64_t start, size = 0, rs = 0, off = 0;
	struct tc_elf *elf;
	bool sized = false;
	int rc = -1;

	while (*item == ' ')
		item++;
	if (strncmp(item, "filter", 6) || (item[6] != ' ' && item[6] != '\t'))
		return tc_err_set(e, EINVAL, "'%s': only 'filter ...@FILE' address filters are "
				  "supported", item);
	what = item + 7;
	while (*what == ' ')
		what++;
	if (!(at = strchr(what, '@')) || !at[1])
		return tc_err_set(e, EINVAL, "'%s': the filter needs @FILE", item);
	*at = 0;
	for (end = at; end > what && end[-1] == ' '; end--)
		end[-1] = 0;
	for (end = at + 1 + strlen(at + 1); end > at + 1 && end[-1] == ' '; end--)
		end[-1] = 0;
	if (!realpath(at + 1, real))
		return tc_err_sys(e, errno, "filter file %s", at + 1);
	if ((slash = strchr(what, '/'))) {
		*slash = 0;
		size = strtoull(slash + 1, &end, 0);
		if (*end || !size)
			return tc_err_set(e, EINVAL, "'%s': bad size '%s'", item, slash + 1);
		sized = true;
	}
	if (!(elf = tc_elf_open(real, e)))
		return -1;
	start = strtoull(what, &end, 0);
	if (*end || end == what) {
		/* A symbol: its address, and its size from the symbol table unless given. */
		if (tc_elf_symbol_addr(elf, what, &start)) {
			tc_err_set(e, ENOENT, "filter: no function '%s' in %s", what, real);
			goto out;
		}
		if (!sized) {
			tc_elf_symbol_size(elf, what, &size);
			if (!size) {
				tc_err_set(e, EINVAL, "filter: '%s' in %s has no size", what, real);
				goto out;
			}
		}
	} else if (!sized) {
		tc_err_set(e, EINVAL, "'%s': an address filter needs START/SIZE", item);
		goto out;
	}
	if (to_runtime(elf, real, m, start, &rs, &off, e))
		goto out;
	rc = add_range(out, rs, rs + size, off, real, e);
out:
	tc_elf_close(elf);
	return rc;
}

int tc_addr_filter_resolve(const char *spec, const struct tc_maps *m, struct tc_addr_filter *out,
			   struct tc_err *e)
{
	char *copy = strdup(spec), *save = NULL, *item;
	int rc = 0;

	if (!copy)
		return tc_err_set(e, ENOMEM, "out of memory");
	for (item = strtok_r(copy, ",", &save); item && !rc; item = strtok_r(NULL, ",", &save))
		rc = one_filter(item, m, out, e);
	free(copy);
	if (!rc && !out->n)
		rc = tc_err_set(e, EINVAL, "empty address filter '%s'", spec);
	return rc;
}
