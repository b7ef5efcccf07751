/* The symboliser's answers kept per address space (lib/analysis/symcache.c): asked once
 * while the space number stands, asked again once it moves (a mapping changed), never kept
 * while the number is not known. */
#include <stdbool.h>
#include <stdint.h>

#include "lib/analysis/symcache.h"
#include "tests/unit/tc_test.h"

/* A symboliser whose answers change with the "mappings": an exec puts another function at
 * the same address, as the e2e recordings with execve do. */
struct world {
	bool known;		/* the space number is known */
	uint64_t space;
	int generation;		/* 0: foo at 0x1000, 1: bar at 0x1000 (0x3000 never mapped) */
	int asked;
};

static int world_sym(void *ctx, int pid, uint64_t addr, const char **name, uint64_t *start)
{
	struct world *w = ctx;

	w->asked++;
	if (pid != 7 || addr < 0x1000 || addr >= 0x2000)
		return -1;
	*name = w->generation ? "bar" : "foo";
	*start = w->generation ? 0x1800 : 0x1000;
	return addr >= *start ? 0 : -1;
}

static const char *world_dso(void *ctx, int pid, uint64_t addr)
{
	struct world *w = ctx;

	w->asked++;
	if (pid != 7 || addr < 0x1000 || addr >= 0x2000)
		return NULL;
	return w->generation ? "/bin/after" : "/bin/before";
}

static const uint64_t *world_space(void *ctx)
{
	struct world *w = ctx;

	return w->known ? &w->space : NULL;
}

static struct tc_symcache *cache(struct world *w)
{
	return tc_symcache_new(&(struct tc_symcache_opts){ .sym = world_sym, .sym_ctx = w,
							   .dso = world_dso, .dso_ctx = w,
							   .space = world_space, .space_ctx = w });
}

TEST(kept_while_the_space_stands)
{
	struct world w = { .known = true };
	struct tc_symcache *c = cache(&w);
	const char *name = NULL;
	uint64_t start = 0;

	CHECK(c != NULL);
	tc_symcache_refresh(c);
	for (int i = 0; i < 5; i++) {
		CHECK_INT(tc_symcache_sym(c, 7, 0x1900, &name, &start), 0);
		CHECK_STR(name, "foo");
		CHECK_INT(start, 0x1000);
		CHECK_INT(tc_symcache_sym(c, 7, 0x3000, &name, &start), -1);
	}
	CHECK_INT(w.asked, 2);
	/* another process, same address: its own answer */
	CHECK_INT(tc_symcache_sym(c, 8, 0x1900, &name, &start), -1);
	CHECK_INT(w.asked, 3);
	tc_symcache_free(c);
}

TEST(asked_again_once_the_space_moves)
{
	struct world w = { .known = true };
	struct tc_symcache *c = cache(&w);
	const char *name = NULL;
	uint64_t start = 0;

	tc_symcache_refresh(c);
	CHECK_INT(tc_symcache_sym(c, 7, 0x1900, &name, &start), 0);
	CHECK_INT(tc_symcache_sym(c, 7, 0x1100, &name, &start), 0);
	/* exec: the same addresses now hold another function, or none */
	w.generation = 1;
	w.space++;
	tc_symcache_refresh(c);
	CHECK_INT(tc_symcache_sym(c, 7, 0x1900, &name, &start), 0);
	CHECK_STR(name, "bar");
	CHECK_INT(start, 0x1800);
	CHECK_INT(tc_symcache_sym(c, 7, 0x1100, &name, &start), -1);
	CHECK_INT(w.asked, 4);
	/* without a refresh the number is not read again: the caller refreshes per record */
	tc_symcache_free(c);
}

TEST(nothing_kept_while_the_space_is_unknown)
{
	struct world w = { .known = false };
	struct tc_symcache *c = cache(&w);
	const char *name = NULL;
	uint64_t start = 0;

	tc_symcache_refresh(c);
	CHECK_INT(tc_symcache_sym(c, 7, 0x1900, &name, &start), 0);
	CHECK_INT(tc_symcache_sym(c, 7, 0x1900, &name, &start), 0);
	CHECK_INT(w.asked, 2);
	/* known from now on (a decoder was picked) */
	w.known = true;
	tc_symcache_refresh(c);
	CHECK_INT(tc_symcache_sym(c, 7, 0x1900, &name, &start), 0);
	CHECK_INT(tc_symcache_sym(c, 7, 0x1900, &name, &start), 0);
	CHECK_INT(w.asked, 3);
	tc_symcache_free(c);
}

TEST(colliding_addresses_do_not_mix)
{
	struct world w = { .known = true };
	struct tc_symcache *c = cache(&w);
	const char *name = NULL;
	uint64_t start = 0;

	tc_symcache_refresh(c);
	/* many addresses: whatever shares a slot, each answer is its own */
	for (uint64_t a = 0x1000; a < 0x2000; a += 4) {
		CHECK_INT(tc_symcache_sym(c, 7, a, &name, &start), 0);
		CHECK_INT(start, 0x1000);
	}
	for (uint64_t a = 0x3000; a < 0x4000; a += 4)
		CHECK_INT(tc_symcache_sym(c, 7, a, &name, &start), -1);
	tc_symcache_free(c);
}

TEST(dso_answers_beside_the_symbols)
{
	struct world w = { .known = true };
	struct tc_symcache *c = cache(&w);
	const char *name = NULL;
	uint64_t start = 0;

	tc_symcache_refresh(c);
	CHECK_STR(tc_symcache_dso(c, 7, 0x1900), "/bin/before");
	CHECK_INT(tc_symcache_sym(c, 7, 0x1900, &name, &start), 0);
	CHECK_STR(tc_symcache_dso(c, 7, 0x1900), "/bin/before");
	CHECK_INT(tc_symcache_sym(c, 7, 0x1900, &name, &start), 0);
	CHECK(tc_symcache_dso(c, 7, 0x3000) == NULL);
	CHECK(tc_symcache_dso(c, 7, 0x3000) == NULL);
	CHECK_INT(w.asked, 3);
	w.generation = 1;
	w.space++;
	tc_symcache_refresh(c);
	CHECK_STR(tc_symcache_dso(c, 7, 0x1900), "/bin/after");
	CHECK_INT(tc_symcache_sym(c, 7, 0x1900, &name, &start), 0);
	CHECK_STR(name, "bar");
	CHECK_INT(w.asked, 5);
	tc_symcache_free(c);
}
