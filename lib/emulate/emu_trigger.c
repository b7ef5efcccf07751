#include "lib/emulate/emu_trigger.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/images/elf.h"

static int add(struct tc_emu_triggers *t, const char *spec, enum tc_emu_trigger_kind kind,
	       struct tc_err *e)
{
	const char *colon = strrchr(spec, ':'), *where;
	struct tc_emu_trigger *x = &t->v[t->n];
	char file[PATH_MAX], *end;

	if (!colon || colon == spec || !colon[1])
		return tc_err_set(e, EINVAL, "bad trigger '%s' in emulated mode: use FILE:SYMBOL "
				  "or FILE:0xOFFSET (a code location, as a uprobe)", spec);
	where = colon + 1;
	memset(x, 0, sizeof(*x));
	x->spec = spec;
	x->kind = kind;
	snprintf(file, sizeof(file), "%.*s", (int)(colon - spec), spec);
	/* a path names one file (mappings show real paths); a bare name any mapped one */
	if (strchr(file, '/') ? !(x->file = realpath(file, NULL)) : !(x->file = strdup(file)))
		return errno == ENOMEM ? tc_err_set(e, ENOMEM, "out of memory") :
		       tc_err_sys(e, errno, "trigger '%s': %s", spec, file);
	t->n++;
	if (!strncmp(where, "0x", 2)) {
		errno = 0;
		x->off = strtoull(where, &end, 16);
		if (*end || errno || end == where + 2)
			return tc_err_set(e, EINVAL, "trigger '%s': bad file offset '%s'", spec,
					  where);
	} else if (!(x->sym = strdup(where))) {
		return tc_err_set(e, ENOMEM, "out of memory");
	}
	return 0;
}

int tc_emu_trigger_parse(struct tc_emu_triggers *t, const struct tc_emu_opts *o,
			 struct tc_err *e)
{
	memset(t, 0, sizeof(*t));
	t->lo = UINT64_MAX;
	if (!o->npause && !o->nresume && !o->nsnapshot_on)
		return 0;
	if (o->nsnapshot_on && !o->snapshot_size)
		return tc_err_set(e, EINVAL, "snapshot trigger '%s' without snapshot mode (-S)",
				  o->snapshot_on[0]);
	if (!(t->v = calloc(o->npause + o->nresume + o->nsnapshot_on, sizeof(*t->v))))
		return tc_err_set(e, ENOMEM, "out of memory");
	for (size_t i = 0; i < o->npause; i++)
		if (add(t, o->pause_on[i], TC_EMU_TRIG_PAUSE, e))
			return -1;
	for (size_t i = 0; i < o->nresume; i++)
		if (add(t, o->resume_on[i], TC_EMU_TRIG_RESUME, e))
			return -1;
	for (size_t i = 0; i < o->nsnapshot_on; i++, t->nsnap++)
		if (add(t, o->snapshot_on[i], TC_EMU_TRIG_SNAPSHOT, e))
			return -1;
	t->unresolved = t->n;
	return 0;
}

void tc_emu_trigger_free(struct tc_emu_triggers *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].file);
		free(t->v[i].sym);
	}
	free(t->v);
	memset(t, 0, sizeof(*t));
}

static bool names(const struct tc_emu_trigger *x, const char *path)
{
	const char *slash;

	if (x->file[0] == '/')
		return !strcmp(x->file, path);
	slash = strrchr(path, '/');
	return slash && !strcmp(slash + 1, x->file);
}

/* SYMBOL's file offset, from the file a mapping shows. */
static int sym_offset(struct tc_emu_trigger *x, const char *path, struct tc_err *e)
{
	struct tc_elf *elf = tc_elf_open(path, e);
	uint64_t vaddr;
	int rc = 0;

	if (!elf)
		return -1;
	if (tc_elf_symbol_addr(elf, x->sym, &vaddr))
		rc = tc_err_set(e, ENOENT, "trigger '%s': no function '%s' in %s", x->spec,
				x->sym, path);
	else if (tc_elf_vaddr_to_offset(elf, vaddr, &x->off))
		rc = tc_err_set(e, ENOENT, "trigger '%s': function '%s' at 0x%llx is not in a "
				"loaded part of %s", x->spec, x->sym, (unsigned long long)vaddr,
				path);
	tc_elf_close(elf);
	if (!rc) {
		free(x->sym);
		x->sym = NULL;	/* an offset now */
	}
	return rc;
}

int tc_emu_trigger_resolve(struct tc_emu_triggers *t, const struct tc_maps *m,
			   struct tc_err *e)
{
	for (size_t i = 0; i < t->n && t->unresolved; i++) {
		struct tc_emu_trigger *x = &t->v[i];

		for (size_t k = t->maps_seen; k < m->n && !x->resolved; k++) {
			const struct tc_map *p = &m->v[k];

			if (!(p->prot & PROT_EXEC) || !names(x, p->path))
				continue;
			if (x->sym && sym_offset(x, p->path, e))
				return -1;
			if (x->off < p->pgoff || x->off - p->pgoff >= p->end - p->start)
				continue;
			x->addr = p->start + (x->off - p->pgoff);
			x->resolved = true;
			t->unresolved--;
			t->lo = x->addr < t->lo ? x->addr : t->lo;
			t->hi = x->addr > t->hi ? x->addr : t->hi;
		}
	}
	t->maps_seen = m->n;
	for (size_t i = 0; i < t->n; i++)
		for (size_t k = 0; k < i; k++)
			if (t->v[i].resolved && t->v[k].resolved && t->v[i].addr == t->v[k].addr &&
			    t->v[i].kind != t->v[k].kind && t->v[i].kind != TC_EMU_TRIG_SNAPSHOT &&
			    t->v[k].kind != TC_EMU_TRIG_SNAPSHOT)
				return tc_err_set(e, EINVAL, "triggers '%s' and '%s' are the same "
						  "instruction (0x%llx): it cannot both pause and "
						  "resume", t->v[k].spec, t->v[i].spec,
						  (unsigned long long)t->v[i].addr);
	return 0;
}

int tc_emu_trigger_check(const struct tc_emu_triggers *t, struct tc_err *e)
{
	for (size_t i = 0; i < t->n; i++)
		if (!t->v[i].resolved)
			return tc_err_set(e, ENOENT, "trigger '%s': the program ran no code of a "
					  "file %s%s holding that location (emulated triggers are code "
					  "locations, FILE:SYMBOL or FILE:0xOFFSET)", t->v[i].spec,
					  t->v[i].file[0] == '/' ? "" : "named ", t->v[i].file);
	return 0;
}
