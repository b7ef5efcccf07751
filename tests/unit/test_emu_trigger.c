/* Emulated trace-control triggers (lib/emulate/emu_trigger.c): parsing, lazy resolution
 * against mappings as a tracer learns them, lookups, and the errors that name a trigger. */
#include "lib/emulate/emu_trigger.h"
#include "tests/unit/tc_test.h"

#include <sys/mman.h>

static struct tc_map map(uint64_t start, uint64_t end, uint64_t pgoff, int prot, char *path)
{
	return (struct tc_map){ .start = start, .end = end, .pgoff = pgoff, .prot = prot,
				.path = path };
}

TEST(resolve_lazily_by_name)
{
	const char *pause[] = { "libfoo.so:0x1010" }, *resume[] = { "libbar.so:0x2004" };
	struct tc_emu_opts o = { .pause_on = pause, .npause = 1, .resume_on = resume,
				 .nresume = 1 };
	struct tc_map v[3] = {
		map(0x7000, 0x8000, 0, PROT_READ, "/lib/libfoo.so"),	/* not code */
		map(0x10000, 0x11000, 0x1000, PROT_READ | PROT_EXEC, "/lib/libfoo.so"),
		map(0x20000, 0x22000, 0x1000, PROT_READ | PROT_EXEC, "/usr/lib/libbar.so"),
	};
	struct tc_maps m = { v, 2 };
	struct tc_emu_triggers t;
	struct tc_err e = { 0 };

	CHECK_INT(tc_emu_trigger_parse(&t, &o, &e), 0);
	CHECK_INT(t.unresolved, 2);
	CHECK_INT(tc_emu_trigger_resolve(&t, &m, &e), 0);
	CHECK_INT(t.unresolved, 1);
	CHECK_INT(tc_emu_trigger_at(&t, 0x10010), TC_EMU_TRIG_PAUSE);
	CHECK_INT(tc_emu_trigger_at(&t, 0x10011), TC_EMU_TRIG_NONE);
	CHECK(tc_emu_trigger_inside(&t, 0x10000, 0x10010));
	CHECK(!tc_emu_trigger_inside(&t, 0x10010, 0x10020));	/* the start is not inside */
	CHECK_INT(tc_emu_trigger_check(&t, &e), -1);
	CHECK(strstr(e.msg, "libbar.so:0x2004") != NULL);
	m.n = 3;	/* libbar's code runs: learned */
	CHECK_INT(tc_emu_trigger_resolve(&t, &m, &e), 0);
	CHECK_INT(tc_emu_trigger_at(&t, 0x21004), TC_EMU_TRIG_RESUME);
	CHECK_INT(tc_emu_trigger_check(&t, &e), 0);
	tc_emu_trigger_free(&t);
}

TEST(errors_name_the_trigger)
{
	const char *bad[] = { "nocolon" }, *off[] = { "x:0xzz" };
	const char *both_p[] = { "a.so:0x10" }, *both_r[] = { "a.so:0x10" };
	struct tc_map v[1] = { map(0x1000, 0x2000, 0, PROT_EXEC, "/a.so") };
	struct tc_maps m = { v, 1 };
	struct tc_emu_opts o = { .pause_on = bad, .npause = 1 };
	struct tc_emu_triggers t;
	struct tc_err e = { 0 };

	CHECK_INT(tc_emu_trigger_parse(&t, &o, &e), -1);
	CHECK(strstr(e.msg, "nocolon") != NULL);
	tc_emu_trigger_free(&t);
	o.pause_on = off;
	CHECK_INT(tc_emu_trigger_parse(&t, &o, &e), -1);
	CHECK(strstr(e.msg, "0xzz") != NULL);
	tc_emu_trigger_free(&t);
	o = (struct tc_emu_opts){ .pause_on = both_p, .npause = 1, .resume_on = both_r,
				  .nresume = 1 };
	CHECK_INT(tc_emu_trigger_parse(&t, &o, &e), 0);
	CHECK_INT(tc_emu_trigger_resolve(&t, &m, &e), -1);
	CHECK(strstr(e.msg, "both pause and resume") != NULL);
	tc_emu_trigger_free(&t);
	o = (struct tc_emu_opts){ 0 };
	CHECK_INT(tc_emu_trigger_parse(&t, &o, &e), 0);
	CHECK_INT(tc_emu_trigger_at(&t, 0x1000), TC_EMU_TRIG_NONE);
	CHECK(!tc_emu_trigger_inside(&t, 0, UINT64_MAX - 1));
	tc_emu_trigger_free(&t);
}
