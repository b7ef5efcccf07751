/* Trace-control triggers of an emulated recording (record's --pause-on / --resume-on /
 * --snapshot-on): code
 * locations in uprobe syntax, FILE:SYMBOL or FILE:0xOFFSET (a file offset, as a uprobe's),
 * FILE a path or the name of a file the program maps. Each becomes a guest address once the
 * file's executable mapping holding it is known; tracers resolve them again as they learn
 * mappings (lazily, like an address filter) and ask, per instruction they reach, whether it
 * pauses or resumes the thread's trace. */
#ifndef TC_LIB_EMULATE_EMU_TRIGGER_H
#define TC_LIB_EMULATE_EMU_TRIGGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/emulate/emu.h"
#include "lib/images/addr_filter.h"
#include "lib/util/err.h"

enum tc_emu_trigger_kind { TC_EMU_TRIG_NONE, TC_EMU_TRIG_PAUSE, TC_EMU_TRIG_RESUME,
			   TC_EMU_TRIG_SNAPSHOT };

struct tc_emu_trigger {
	const char *spec;	/* as given, for messages */
	char *file;		/* FILE: a real path when it had a slash, else a name */
	char *sym;		/* SYMBOL, or NULL for an offset */
	uint64_t off;		/* file offset (from SYMBOL once its file is found) */
	enum tc_emu_trigger_kind kind;
	bool resolved;
	uint64_t addr;		/* guest address, once resolved */
};

struct tc_emu_triggers {
	struct tc_emu_trigger *v;
	size_t n, unresolved;
	size_t nsnap;		/* of them, snapshot triggers */
	size_t maps_seen;	/* mappings looked at by the last tc_emu_trigger_resolve */
	uint64_t lo, hi;	/* resolved addresses lie in [lo, hi] (a quick miss) */
};

/* o's pause_on, resume_on and snapshot_on. */
int tc_emu_trigger_parse(struct tc_emu_triggers *t, const struct tc_emu_opts *o,
			 struct tc_err *e);
void tc_emu_trigger_free(struct tc_emu_triggers *t);
/* Resolve what m's executable mappings now allow; m only grows between calls. */
int tc_emu_trigger_resolve(struct tc_emu_triggers *t, const struct tc_maps *m,
			   struct tc_err *e);
/* The end of the run: an error naming a trigger that never resolved. */
int tc_emu_trigger_check(const struct tc_emu_triggers *t, struct tc_err *e);

/* What the instruction at addr does to the trace: pause, resume or neither (a snapshot
 * trigger there is tc_emu_trigger_snap_at's). */
static inline enum tc_emu_trigger_kind tc_emu_trigger_at(const struct tc_emu_triggers *t,
							 uint64_t addr)
{
	if (addr < t->lo || addr > t->hi)
		return TC_EMU_TRIG_NONE;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].resolved && t->v[i].addr == addr &&
		    t->v[i].kind != TC_EMU_TRIG_SNAPSHOT)
			return t->v[i].kind;
	return TC_EMU_TRIG_NONE;
}

/* Does reaching an instruction in [a, b] take a snapshot? */
static inline bool tc_emu_trigger_snap_in(const struct tc_emu_triggers *t, uint64_t a,
					  uint64_t b)
{
	if (!t->nsnap || b < t->lo || a > t->hi)
		return false;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].resolved && t->v[i].kind == TC_EMU_TRIG_SNAPSHOT &&
		    t->v[i].addr >= a && t->v[i].addr <= b)
			return true;
	return false;
}

/* A trigger in (a, b]: a block [a, b] must be followed instruction by instruction. */
static inline bool tc_emu_trigger_inside(const struct tc_emu_triggers *t, uint64_t a,
					 uint64_t b)
{
	if (b < t->lo || a >= t->hi)
		return false;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].resolved && t->v[i].addr > a && t->v[i].addr <= b)
			return true;
	return false;
}

#endif
