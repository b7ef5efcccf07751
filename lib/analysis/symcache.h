/* A symboliser's answers kept (lib/analysis/callstack.h tc_sym_fn, and a dso callback): the
 * call stacks ask for the function of every range's start, a --dso or --sym filter for every
 * record's, and the same few addresses come again and again. A small direct-mapped table by
 * process and address, each answer valid while the address space number (decoders/
 * session.h tc_session_space) is the one it was found under. */
#ifndef TC_LIB_ANALYSIS_SYMCACHE_H
#define TC_LIB_ANALYSIS_SYMCACHE_H

#include <stdint.h>

#include "lib/analysis/callstack.h"

struct tc_symcache_opts {
	tc_sym_fn sym;		/* required for tc_symcache_sym */
	void *sym_ctx;
	const char *(*dso)(void *ctx, int pid, uint64_t addr);	/* for tc_symcache_dso */
	void *dso_ctx;
	/* required: where a number is kept that changes whenever sym may answer differently
	 * (the names sym gave stay valid while it is unchanged), valid as long as the cache;
	 * NULL: not known yet (nothing is kept; asked again at the next refresh) */
	const uint64_t *(*space)(void *ctx);
	void *space_ctx;
};

struct tc_symcache;

struct tc_symcache *tc_symcache_new(const struct tc_symcache_opts *o);	/* NULL on ENOMEM */
/* Read the space number now; answers until the next call are kept and found under it. Call
 * it whenever the address space may have changed: before each record is fed (the side-band
 * applies between records) and before the consumers finish. */
void tc_symcache_refresh(struct tc_symcache *c);
/* A tc_sym_fn (ctx = the cache): sym's answer, kept or asked for. */
int tc_symcache_sym(void *cache, int pid, uint64_t addr, const char **name, uint64_t *start);
/* The dso callback's answer (ctx = the cache), kept or asked for. */
const char *tc_symcache_dso(void *cache, int pid, uint64_t addr);
void tc_symcache_free(struct tc_symcache *c);

#endif
