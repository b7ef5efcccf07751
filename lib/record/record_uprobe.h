/* Uprobes that a traced task's new threads and children inherit. The kernel's uprobe PMU
 * reads attr.uprobe_path (config1, a pointer) from the current task's memory whenever it
 * initialises an event, and an inherited copy is initialised inside the traced task's
 * fork/clone, where that pointer means nothing: the copy fails and so does the fork
 * ("Cannot fork"; seen on 6.1 and 6.18). So record defines such a uprobe in tracefs's
 * uprobe_events ("p:GROUP/EVENT PATH:0xOFFSET", as perf probe does) and opens it as a
 * tracepoint, whose copies need no path; it is removed ("-:GROUP/EVENT") when done. */
#ifndef TC_LIB_RECORD_RECORD_UPROBE_H
#define TC_LIB_RECORD_RECORD_UPROBE_H

#include <stdint.h>

#include "lib/util/err.h"

/* A record's probes are in group TC_UPROBE_GROUP followed by its pid. */
#define TC_UPROBE_GROUP "tracectl_"

/* Define GROUP/EVENT at path's file offset off; *id is its tracepoint id. */
int tc_record_uprobe_tp_add(const char *tracefs, const char *group, const char *event,
		     const char *path, uint64_t off, uint64_t *id, struct tc_err *e);
/* Remove it (after every event on it is closed). */
int tc_record_uprobe_tp_del(const char *tracefs, const char *group, const char *event,
		     struct tc_err *e);
/* Remove the probes of tracectl records that are gone: a SIGKILLed record leaves its
 * probes, and nothing else removes them. *removed counts them, *pid_seen is one such
 * record's pid. */
int tc_record_uprobe_reap(const char *tracefs, unsigned *removed, int *pid_seen, struct tc_err *e);

#endif
