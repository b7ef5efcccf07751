/* tracectl record --pmu emulated (cmd/record_emulated.c). */
#ifndef TC_CMD_RECORD_EMULATED_H
#define TC_CMD_RECORD_EMULATED_H

#include "lib/emulate/emu.h"

/* Run o->argv (argv[0] looked up in PATH) and write o->output; fmt AUTO takes the format
 * from the program's ELF machine. Returns the exit code; fatal errors exit. */
int do_record_emulated(struct tc_emu_opts *o, enum tc_emu_format fmt);

#endif
