/* Intel PT decoder setup from a perf.data file: the AUXTRACE_INFO type 1 words (perf's
 * intel-pt layout), the intel_pt event's attr.config and the cpuid feature string become
 * libipt's struct pt_config; plus perf's TSC <-> perf time conversion. */
#ifndef TC_DECODERS_INTEL_PT_PT_CONFIG_H
#define TC_DECODERS_INTEL_PT_PT_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <intel-pt.h>

#include "lib/perfdata/auxtrace_info.h"
#include "lib/util/err.h"

struct tc_perf_data;

/* perf_event_mmap_page's time_shift/time_mult/time_zero as perf recorded them. */
struct tc_pt_time_conv {
	uint16_t time_shift;
	uint32_t time_mult;
	uint64_t time_zero;
	bool valid;		/* cap_user_time_zero and time_mult != 0 */
};

struct tc_pt_setup {
	/* begin/end are NULL: each decode sets them to its buffer. */
	struct pt_config cfg;
	struct tc_pt_time_conv tc;

	uint32_t pmu_type;
	uint64_t config;	/* attr.config of the intel_pt event (0 if none found) */
	bool have_config;	/* an attr with type == pmu_type was found */
	/* Event config bits, by the masks the file recorded (perf's tsc/mtc/cyc terms). */
	bool tsc, mtc, cyc, noretcomp;
	unsigned mtc_period;	/* IA32_RTIT_CTL.MTCFreq from the config */
	/* perf decodes without time when there is no TSC or no usable conversion. */
	bool timeless;

	uint64_t have_sched_switch;	/* 0 none, 1 sched_switch, 2 SWITCH, 3 SWITCH_CPU_WIDE */
	bool snapshot_mode, per_cpu_mmaps;
	uint32_t tsc_ctc_n, tsc_ctc_d;	/* CPUID.15H EBX / EAX */
	uint32_t max_nonturbo_ratio;
	const char *filter;	/* address filter string ("" if none); not mapped, see .c */

	bool cpu_known;		/* cfg.cpu came from a cpuid string */
	bool errata_known;	/* libipt knows that CPU (pt_cpu_errata succeeded) */
};

/* Parse perf's x86 cpuid feature string "GenuineIntel,6,142,9" (vendor, display family,
 * display model, stepping) into a libipt cpu. -1 if it is not an Intel one in that form. */
int tc_pt_config_cpu_parse(const char *cpuid, struct pt_cpu *cpu);

/* Build the setup. config: attr.config of the intel_pt event, NULL if not known (then the
 * event bits read as clear). cpuid: the cpuid feature string, NULL if the file has none
 * (then libipt decodes "by the spec", without errata). -1 only for an unusable info. */
int tc_pt_config_init(struct tc_pt_setup *s, const struct tc_intel_pt_info *info,
		     const uint64_t *config, const char *cpuid, struct tc_err *e);

/* The same, with the config and cpuid taken from pd (the first attr of type pmu_type and
 * tc_perf_data_features()->cpuid). In pipe mode call it once the features have been read. */
int tc_pt_config_from_perf_data(struct tc_pt_setup *s, const struct tc_perf_data *pd,
			const struct tc_intel_pt_info *info, struct tc_err *e);

/* perf's tsc_to_perf_time / perf_time_to_tsc (tools/perf/util/tsc.c). Without a valid
 * conversion they return their argument. */
uint64_t tc_pt_config_tsc_to_perf_time(const struct tc_pt_time_conv *tc, uint64_t tsc);
uint64_t tc_pt_config_perf_time_to_tsc(const struct tc_pt_time_conv *tc, uint64_t ns);

#endif
