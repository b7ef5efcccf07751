/* tracectl record --pmu emulated (cmd/record_emulated.c). */
#ifndef TC_CMD_RECORD_EMULATED_H
#define TC_CMD_RECORD_EMULATED_H

#include <stdbool.h>

#include "lib/emulate/emu.h"

/* Run o->argv (argv[0] looked up in PATH) and write o->output; fmt AUTO takes the format
 * from the program's ELF machine; config: record's --config terms (NULL: none); dry: print
 * what would run, run and write nothing. o->stop_req must be set. Returns the exit code:
 * 128+signal when stopped by one, else the program's (WEXITSTATUS or 128+its signal);
 * fatal errors exit. */
int do_record_emulated(struct tc_emu_opts *o, enum tc_emu_format fmt, const char *config,
		       bool dry);

#endif
