#include "lib/images/kallsyms.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ksym {
	uint64_t start, end;
	const char *name, *module;	/* into k->text (or the caller's strings) */
	size_t line;			/* order in the file, for a stable sort */
	char type;
	uint8_t bind;			/* STB_LOCAL, STB_GLOBAL, STB_WEAK */
	bool dead;			/* lost to another at its address */
};

struct tc_kallsyms {
	char *text;
	struct ksym *v;
	size_t n, cap;
	uint64_t ref[2];		/* _text, _stext */
	bool has_ref[2];
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

static uint64_t page_after(uint64_t a)
{
	return ((a + 4095) & ~4095ULL) + 4096;
}

int tc_kallsyms_add(struct tc_kallsyms *k, uint64_t addr, uint64_t size, char type, int bind,
		    const char *name, const char *module)
{
	if (k->cap == k->n) {
		size_t cap = k->cap ? 2 * k->cap : 4096;
		struct ksym *nv = realloc(k->v, cap * sizeof(*nv));

		if (!nv)
			return -1;
		k->v = nv;
		k->cap = cap;
	}
	k->v[k->n] = (struct ksym){ addr, addr + size, name, module, k->n, type, (uint8_t)bind,
				    false };
	k->n++;
	return 0;
}

static size_t underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* perf's choice between two symbols at one address: true to keep a over b. */
static bool better(const struct ksym *a, const struct ksym *b)
{
	uint64_t la = a->end - a->start, lb = b->end - b->start;
	size_t na, nb;

	if (!la != !lb)
		return la > 0;
	if ((a->bind == STB_WEAK) != (b->bind == STB_WEAK))
		return b->bind == STB_WEAK;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL;
	if (underscores(a->name) != underscores(b->name))
		return underscores(a->name) < underscores(b->name);
	na = strlen(a->name);
	nb = strlen(b->name);
	if (na != nb)
		return na > nb;
	return !(strncmp(a->name, "SyS", 3) == 0 || strncmp(a->name, "compat_SyS", 10) == 0);
}

void tc_kallsyms_finish(struct tc_kallsyms *k, bool kallsyms)
{
	if (!k->n)
		return;
	qsort(k->v, k->n, sizeof(*k->v), cmp);
	/* A symbol without a size ends where the next one starts; in kallsyms the kernel's
	 * last before a module's (or a module's before the kernel's) a page on. */
	for (size_t i = 0; i + 1 < k->n; i++) {
		struct ksym *a = &k->v[i], *b = &k->v[i + 1];

		if (a->end != a->start)
			continue;
		if (kallsyms && !a->module != !b->module)
			a->end = page_after(a->start);
		else
			a->end = b->start;
	}
	if (k->v[k->n - 1].end == k->v[k->n - 1].start)
		k->v[k->n - 1].end = page_after(k->v[k->n - 1].start);
	/* Several at one address: one stands (perf's choice, in order). */
	for (size_t i = 0; i < k->n;) {
		size_t cur = i, j = i + 1;

		for (; j < k->n && k->v[j].start == k->v[i].start; j++) {
			if (better(&k->v[cur], &k->v[j])) {
				k->v[j].dead = true;
			} else {
				k->v[cur].dead = true;
				cur = j;
			}
		}
		i = j;
	}
	{
		size_t w = 0;

		for (size_t i = 0; i < k->n; i++)
			if (!k->v[i].dead)
				k->v[w++] = k->v[i];
		k->n = w;
	}
}

struct tc_kallsyms *tc_kallsyms_new(void)
{
	return calloc(1, sizeof(struct tc_kallsyms));
}

struct tc_kallsyms *tc_kallsyms_open(const char *path, struct tc_err *e)
{
	struct tc_kallsyms *k = calloc(1, sizeof(*k));
	size_t lines = 0, nonzero = 0;
	char *p;

	if (!k || !(k->text = slurp(path, e))) {
		if (!k)
			tc_err_sys(e, ENOMEM, "%s", path);
		tc_kallsyms_free(k);
		return NULL;
	}
	for (p = k->text; *p;) {
		char *eol = strchr(p, '\n'), *end, *name, *tab, *module = NULL;
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
		if ((tab = strchr(name, '\t'))) {
			char *m = tab + 1, *close;

			*tab = 0;
			if (*m == '[' && (close = strchr(m, ']'))) {
				close[1] = 0;
				module = m;	/* "[name]", as perf names the module */
			}
		}
		/* trailing blanks are not part of the name */
		for (char *t = name + strlen(name); t > name && isspace((unsigned char)t[-1]);)
			*--t = 0;
		if (tc_kallsyms_add(k, addr, 0, type,
				    type == 'W' || type == 'w' ? STB_WEAK
				    : isupper((unsigned char)type) ? STB_GLOBAL : STB_LOCAL,
				    name, module)) {
			tc_err_sys(e, ENOMEM, "%s", path);
			tc_kallsyms_free(k);
			return NULL;
		}
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
	/* The relocation reference is looked up among all, before some are dropped. */
	qsort(k->v, k->n, sizeof(*k->v), cmp);
	for (size_t i = 0; i < k->n; i++)
		if (is_text(k->v[i].type) && !k->v[i].module &&
		    (!strcmp(k->v[i].name, "_text") || !strcmp(k->v[i].name, "_stext")))
			k->ref[!strcmp(k->v[i].name, "_stext")] = k->v[i].start,
			k->has_ref[!strcmp(k->v[i].name, "_stext")] = true;
	tc_kallsyms_finish(k, true);
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
	int i = !strcmp(name, "_text") ? 0 : !strcmp(name, "_stext") ? 1 : -1;

	if (i >= 0 && k->has_ref[i]) {
		*addr = k->ref[i];
		return 0;
	}
	for (size_t j = 0; j < k->n; j++)
		if (is_text(k->v[j].type) && !k->v[j].module && !strcmp(k->v[j].name, name)) {
			*addr = k->v[j].start;
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
