/* perf.data tracing data (feature HEADER_TRACING_DATA, or the bytes after a pipe's
 * HEADER_TRACING_DATA record): the recorded tracepoints' formats, read into a libtraceevent
 * handle so that raw samples can be printed (decoders/tp_event.h). Layout, in the file's
 * byte order: magic 23 08 68 "tracing", version string, big-endian and long-size bytes,
 * u32 page size; "header_page" u64 size + text; "header_event" u64 size + text; u32 count of
 * ftrace formats (u64 size + text each); u32 count of systems, each a name string, u32
 * count of formats (u64 size + text each); u32 size + kallsyms text; u32 size + printk
 * formats; from version 0.6 u64 size + saved cmdlines. */
#ifndef TC_LIB_PERFDATA_TRACING_DATA_READ_H
#define TC_LIB_PERFDATA_TRACING_DATA_READ_H

#include <stddef.h>
#include <stdint.h>

#include "lib/util/err.h"

struct tep_handle;

/* Parse len bytes at p; off is their input offset and name the input, for messages (which
 * give the offset of the part at fault). Every length is checked against what is left. */
int tc_tracing_data_read(struct tep_handle **out, const uint8_t *p, size_t len, uint64_t off,
		  const char *name, struct tc_err *e);
void tc_tracing_data_read_free(struct tep_handle *tep);
/* The same reading and checks without libtraceevent: its format parser (1.7.1) is not safe
 * on every corrupt format that passes our checks, so fuzzing stops short of it. */
int tc_tracing_data_read_check(const uint8_t *p, size_t len, uint64_t off, const char *name,
		   struct tc_err *e);

#endif
