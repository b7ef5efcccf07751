/* Option values parsed into what the libraries take. */
#ifndef TC_LIB_UTIL_PARSE_H
#define TC_LIB_UTIL_PARSE_H

#include <stdbool.h>

/* A CoreSight trace-ID list, "0x10,0x11", into want (IDs 0..0x7f); -1 on a bad ID (or no
 * memory to split the list). */
int tc_parse_trace_ids(const char *arg, bool want[128]);

#endif
