/* OpenCSD / DS-5 trace snapshot directories: snapshot.ini (device list), the trace metadata
 * ini it names (buffers, which source writes to which buffer, which core has which source),
 * device ini files (class, type, registers, memory dumps). Only parsing: no decoding here. */
#ifndef TC_LIB_PERFDATA_SNAPSHOT_H
#define TC_LIB_PERFDATA_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util/err.h"

struct tc_snapshot_reg {
	char *name;			/* "TRCIDR0": the key without "(0x078)" or "(size:64)" */
	uint64_t value;
};

struct tc_snapshot_dump {
	char *path;			/* full path (snapshot dir joined with file=) */
	uint64_t address;		/* address= */
	uint64_t length;		/* length=, or the file size from offset when absent */
	uint64_t offset;		/* offset= into the file, 0 when absent */
	char *space;			/* space= ("EL1N", "S", ...) or NULL */
};

struct tc_snapshot_device {
	char *name;			/* [device] name= */
	char *class_;			/* "core", "trace_source", "trace_sink", ... */
	char *type;			/* "Cortex-A53", "ETM4", "PTM1.1", "ETE", "STM", ... */
	char *ini;			/* path of its ini file */
	struct tc_snapshot_reg *regs;
	size_t nregs;
	struct tc_snapshot_dump *dumps;	/* every [dump*] section */
	size_t ndumps;
};

struct tc_snapshot_buffer {
	char *name;			/* "ETB_0" */
	char *path;			/* full path of file= */
	char *format;			/* "coresight", "source_data", "dstream_coresight" */
	char **sources;			/* device names mapped to it in [source_buffers] */
	size_t nsources;
};

struct tc_snapshot_core_src {
	char *core, *source;		/* [core_trace_sources] cpu_0=ETM_0 */
};

struct tc_snapshot {
	char *dir;
	char *version;
	struct tc_snapshot_device *devs;	/* in device_list order */
	size_t ndevs;
	struct tc_snapshot_buffer *bufs;	/* in trace_buffers order */
	size_t nbufs;
	struct tc_snapshot_core_src *core_srcs;
	size_t ncore_srcs;
};

/* True if path is a directory holding snapshot.ini. */
bool tc_snapshot_is(const char *path);
/* -1 with a message naming the file and line on error. */
int tc_snapshot_open(struct tc_snapshot **out, const char *dir, struct tc_err *e);
void tc_snapshot_free(struct tc_snapshot *ss);
/* Open a file of the snapshot in dir for reading: only a regular file of at most max
 * bytes whose real path is under dir (no device, FIFO, or link out). fd, or -1 with a
 * message naming path. */
int tc_snapshot_open_file(const char *dir, const char *path, uint64_t max, struct tc_err *e);

const struct tc_snapshot_device *tc_snapshot_device(const struct tc_snapshot *ss, const char *name);
const struct tc_snapshot_buffer *tc_snapshot_buffer(const struct tc_snapshot *ss, const char *name);
/* The core device a trace source belongs to, or NULL. */
const struct tc_snapshot_device *tc_snapshot_core_of(const struct tc_snapshot *ss,
						     const char *source);
/* 0 and *val if the device has the register (name compared case-insensitively), else -1. */
int tc_snapshot_reg(const struct tc_snapshot_device *dev, const char *name, uint64_t *val);

#endif
