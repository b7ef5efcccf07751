/* perf's tracing-data feature (HEADER_TRACING_DATA, feature bit 1): the tracefs files a
 * reader needs to decode tracepoint samples' raw data, in perf's layout. Facts from
 * tools/perf/util/trace-event-info.c and trace-event-read.c (Linux 6.1), all integers in
 * the host's byte order:
 *   "\027\010\104tracing", "0.6\0", u8 big-endian, u8 sizeof(long), u32 page size;
 *   "header_page\0" u64 size + events/header_page; "header_event\0" u64 size + its file;
 *   ftrace formats: u32 count (events of the ftrace system recorded; 0) + u64 size + file;
 *   u32 systems; per system its name NUL-terminated, u32 count, per event u64 size +
 *   events/SYS/NAME/format;
 *   u32 kallsyms size (0, as perf writes since 5.x); u32 size + printk_formats;
 *   u64 size + saved_cmdlines (version 0.6 on). */
#ifndef TC_LIB_PERFDATA_TRACING_DATA_WRITE_H
#define TC_LIB_PERFDATA_TRACING_DATA_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/util/err.h"

/* Build it for the tracepoints names[] ("group:name"; repeats are fine) from the tracefs
 * mount; *out is malloc'd. A missing printk_formats or saved_cmdlines is written empty, a
 * missing header or event format is an error. */
int tc_tracing_data_write(const char *tracefs, const char *const *names, size_t n, uint8_t **out,
		  size_t *len, struct tc_err *e);

#endif
