/* A symboliser's answers kept (lib/analysis/callstack.h tc_sym_fn): the call stacks ask for
 * the function of every range's start, and the same few addresses come again and again. A
 * small direct-mapped table by process and address, each answer valid while the address
 * space number (decoders/session.h tc_session_space) is the one it was found under. */
#ifndef TC_LIB_ANALYSIS_SYMCACHE_H
#define TC_LIB_ANALYSIS_SYMCACHE_H

#include <stdint.h>

#include "lib/analysis/callstack.h"

#define TC_SYMCACHE_SPACE_ANY UINT64_MAX	/* space number unknown: keep nothing */

struct tc_symcache_opts {
	tc_sym_fn sym;		/* required */
	void *sym_ctx;
	/* required: changes whenever sym may answer differently, and the names sym gave stay
	 * valid while it is unchanged; TC_SYMCACHE_SPACE_ANY: the answer is not kept */
	uint64_t (*space)(void *ctx);
	void *space_ctx;
};

struct tc_symcache;

struct tc_symcache *tc_symcache_new(const struct tc_symcache_opts *o);	/* NULL on ENOMEM */
/* A tc_sym_fn (ctx = the cache): sym's answer, kept or asked for. */
int tc_symcache_sym(void *cache, int pid, uint64_t addr, const char **name, uint64_t *start);
void tc_symcache_free(struct tc_symcache *c);

#endif
