/* What both emulated tracers write alike into their perf.data (lib/emulate/emu_pt.c and
 * emu_etm.c): the event, side-band record ids, the FEATURES section and build ids. The
 * trace itself, its AUXTRACE_INFO and the threads' records are each tracer's own. */
#ifndef TC_LIB_EMULATE_EMU_FILE_H
#define TC_LIB_EMULATE_EMU_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/emulate/emu.h"
#include "lib/perfdata/perf_write.h"
#include "lib/util/err.h"

/* Opens o->output with the one AUX event (PMU type, config) under ids: user space only,
 * samples with IP, TID, TIME, CPU and IDENTIFIER, sample_id_all. */
int tc_emu_file_open(struct tc_perf_write **w, const struct tc_emu_opts *o, uint32_t type,
		     uint64_t config, const uint64_t *ids, size_t nids, struct tc_err *e);

/* s for the next side-band record: thread tid, the next timestamp from *time. */
const struct tc_perf_write_sid *tc_emu_file_sid(struct tc_perf_write_sid *s, uint32_t tid,
						uint64_t *time);

/* The host the FEATURES section names. */
struct tc_emu_file_host {
	const char *hostname, *release, *arch, *cpuid;
	uint32_t nr_cpus;
};

/* FEATURES: host, perf version, CPUs and the recording command line (if any). */
int tc_emu_file_features(struct tc_perf_write *w, const struct tc_emu_opts *o,
			 const struct tc_emu_file_host *h, struct tc_err *e);

/* A user-space build id for path from its ELF's hex build id (none without one). */
int tc_emu_file_build_id(struct tc_perf_write *w, const char *hex, const char *path,
			 struct tc_err *e);

#endif
