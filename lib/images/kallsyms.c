#include "lib/images/kallsyms.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ksym {
	uint64_t start, end;
	const char *name, *module;	/* into k->text */
	size_t line;			/* order in the file, for a stable sort */
	char type;
};

struct tc_kallsyms {
	char *text;
	struct ksym *v;
	size_t n;
};

static char *slurp(const char *path, struct tc_err *e)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		tc_err_sys(e, errno, "cannot open %s", path);
		return NULL;
	}
	for (;;) {
		size_t got;

		if (cap - len < 65536) {
			char *nb = realloc(buf, cap = cap ? 2 * cap : 1 << 20);

			if (!nb) {
				free(buf);
				fclose(f);
				tc_err_sys(e, ENOMEM, "%s", path);
				return NULL;
			}
			buf = nb;
		}
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
		if (!got)
			break;
	}
	if (ferror(f)) {
		tc_err_sys(e, errno ? errno : EIO, "cannot read %s", path);
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[len] = 0;
	return buf;
}

static bool wanted(char type)
{
	type = (char)toupper((unsigned char)type);
	return type == 'T' || type == 'W' || type == 'D' || type == 'B';
}

static bool is_text(char type)
{
	type = (char)toupper((unsigned char)type);
	return type == 'T' || type == 'W';
}

static int cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static bool same_module(const struct ksym *a, const struct ksym *b)
{
	if (!a->module || !b->module)
		return !a->module && !b->module;
	return !strcmp(a->module, b->module);
}

static uint64_t page_after(uint64_t a)
{
	return ((a + 4095) & ~4095ULL) + 4096;
}

struct tc_kallsyms *tc_kallsyms_open(const char *path, struct tc_err *e)
{
	struct tc_kallsyms *k = calloc(1, sizeof(*k));
	size_t cap = 0, lines = 0, nonzero = 0;
	char *p;

	if (!k || !(k->text = slurp(path, e))) {
		if (!k)
			tc_err_sys(e, ENOMEM, "%s", path);
		tc_kallsyms_free(k);
		return NULL;
	}
	for (p = k->text; *p;) {
		char *eol = strchr(p, '\n'), *end, *name, *tab;
		uint64_t addr;
		char type;

		if (eol)
			*eol = 0;
		lines++;
		addr = strtoull(p, &end, 16);
		if (end == p || (*end != ' ' && *end != '\t'))
			goto next;
		while (*end == ' ' || *end == '\t')
			end++;
		type = *end;
		if (!type || (end[1] != ' ' && end[1] != '\t'))
			goto next;
		name = end + 2;
		while (*name == ' ')
			name++;
		if (addr)
			nonzero++;
		if (!*name || !wanted(type) || name[0] == '$')
			goto next;
		if (cap == k->n) {
			struct ksym *nv = realloc(k->v, (cap = cap ? 2 * cap : 4096) * sizeof(*nv));

			if (!nv) {
				tc_err_sys(e, ENOMEM, "%s", path);
				tc_kallsyms_free(k);
				return NULL;
			}
			k->v = nv;
		}
		k->v[k->n] = (struct ksym){ addr, addr, name, NULL, lines, type };
		if ((tab = strchr(name, '\t'))) {
			char *m = tab + 1, *close;

			*tab = 0;
			if (*m == '[' && (close = strchr(m, ']'))) {
				*close = 0;
				k->v[k->n].module = m + 1;
			}
		}
		/* trailing blanks are not part of the name */
		for (char *t = name + strlen(name); t > name && isspace((unsigned char)t[-1]);)
			*--t = 0;
		k->n++;
next:
		if (!eol)
			break;
		p = eol + 1;
	}
	if (!k->n) {
		tc_err_set(e, EINVAL, "%s: no kernel symbol in it (%zu lines; not a kallsyms file?)",
			   path, lines);
		tc_kallsyms_free(k);
		return NULL;
	}
	if (!nonzero) {
		tc_err_set(e, EACCES,
			   "%s: every address is 0 (kptr_restrict hides them: read it as root, or "
			   "set /proc/sys/kernel/kptr_restrict to 0)", path);
		tc_kallsyms_free(k);
		return NULL;
	}
	qsort(k->v, k->n, sizeof(*k->v), cmp);
	/* Ends: the next symbol's start; the last of the kernel or of a module a page on. */
	for (size_t i = 0; i + 1 < k->n; i++) {
		struct ksym *a = &k->v[i], *b = &k->v[i + 1];

		a->end = same_module(a, b) ? b->start : page_after(a->start);
	}
	k->v[k->n - 1].end = page_after(k->v[k->n - 1].start);
	/* Several at one address: the last in the file stands (the only one with a length
	 * once the ends are set, which is what perf keeps); the search below finds the last
	 * symbol starting at or before an address, so the others are only found by name. */
	return k;
}

void tc_kallsyms_free(struct tc_kallsyms *k)
{
	if (!k)
		return;
	free(k->v);
	free(k->text);
	free(k);
}

size_t tc_kallsyms_count(const struct tc_kallsyms *k) { return k->n; }

int tc_kallsyms_addr(const struct tc_kallsyms *k, const char *name, uint64_t *addr)
{
	for (size_t i = 0; i < k->n; i++)
		if (is_text(k->v[i].type) && !k->v[i].module && !strcmp(k->v[i].name, name)) {
			*addr = k->v[i].start;
			return 0;
		}
	return -1;
}

const char *tc_kallsyms_find(const struct tc_kallsyms *k, uint64_t addr, uint64_t *off,
			     const char **module)
{
	size_t lo = 0, hi = k->n;
	const struct ksym *s;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &k->v[lo - 1];
	if (addr >= s->end)
		return NULL;
	*off = addr - s->start;
	if (module)
		*module = s->module;
	return s->name;
}
