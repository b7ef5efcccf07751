#include "lib/emu.h"

#include <errno.h>

int tc_emu_etm_record(const struct tc_emu_opts *o, struct tc_emu_stats *st, struct tc_err *e)
{
	(void)o;
	(void)st;
	return tc_err_set(e, ENOTSUP, "emulated ETM is not there yet");
}
