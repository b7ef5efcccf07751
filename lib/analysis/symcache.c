#include "lib/analysis/symcache.h"

#include <stdbool.h>
#include <stdlib.h>

#define SLOTS 4096	/* a power of two */
#define NONE UINT64_MAX	/* space of an empty slot, and while the number is not known */

/* What is known of pid's addr under space: sym's answer, dso's, or both. */
struct slot {
	uint64_t space;		/* NONE: empty */
	uint64_t addr, start;
	const char *name, *dso;
	int pid;
	bool has_sym, has_dso;	/* asked */
	bool known;		/* sym answered 0 */
};

struct tc_symcache {
	struct tc_symcache_opts o;
	const uint64_t *at;	/* the number, once known */
	uint64_t space;		/* as tc_symcache_refresh read it, NONE: keep nothing */
	struct slot slot[SLOTS];
};

struct tc_symcache *tc_symcache_new(const struct tc_symcache_opts *o)
{
	struct tc_symcache *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	c->o = *o;
	c->at = NULL;
	c->space = NONE;
	for (size_t i = 0; i < SLOTS; i++)
		c->slot[i].space = NONE;
	return c;
}

void tc_symcache_free(struct tc_symcache *c)
{
	free(c);
}

void tc_symcache_refresh(struct tc_symcache *c)
{
	if (!c->at)
		c->at = c->o.space(c->o.space_ctx);
	c->space = c->at && *c->at != NONE ? *c->at : NONE;
}

/* pid's addr's slot, emptied if it held another address or an older space; NULL while the
 * space is not known. */
static struct slot *slot_of(struct tc_symcache *c, int pid, uint64_t addr)
{
	uint64_t h = (addr ^ ((uint64_t)(uint32_t)pid << 32)) * 0x9e3779b97f4a7c15ull;
	struct slot *s = &c->slot[(size_t)(h >> 52) & (SLOTS - 1)];

	if (c->space == NONE)
		return NULL;
	if (s->space != c->space || s->addr != addr || s->pid != pid)
		*s = (struct slot){ .space = c->space, .addr = addr, .pid = pid };
	return s;
}

int tc_symcache_sym(void *cache, int pid, uint64_t addr, const char **name, uint64_t *start)
{
	struct tc_symcache *c = cache;
	struct slot *s = slot_of(c, pid, addr);
	const char *n = NULL;
	uint64_t st = 0;
	bool known;

	if (s && s->has_sym) {
		if (!s->known)
			return -1;
		*name = s->name;
		*start = s->start;
		return 0;
	}
	known = !c->o.sym(c->o.sym_ctx, pid, addr, &n, &st);
	if (s) {
		s->has_sym = true;
		s->known = known;
		s->name = n;
		s->start = st;
	}
	if (!known)
		return -1;
	*name = n;
	*start = st;
	return 0;
}

const char *tc_symcache_dso(void *cache, int pid, uint64_t addr)
{
	struct tc_symcache *c = cache;
	struct slot *s = slot_of(c, pid, addr);
	const char *d;

	if (s && s->has_dso)
		return s->dso;
	d = c->o.dso(c->o.dso_ctx, pid, addr);
	if (s) {
		s->has_dso = true;
		s->dso = d;
	}
	return d;
}
