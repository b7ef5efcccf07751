#include "decoders/intel_pt/pt_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/perfdata/perf_data.h"

int tc_pt_config_cpu_parse(const char *cpuid, struct pt_cpu *cpu)
{
	unsigned long v[3];
	const char *p;
	char *end;

	/* perf's x86 get_cpuid(): "%s,%u,%u,%u" with the display family and model. */
	if (!cpuid || strncmp(cpuid, "GenuineIntel,", 13))
		return -1;
	p = cpuid + 13;
	for (int i = 0; i < 3; i++) {
		errno = 0;
		v[i] = strtoul(p, &end, 10);
		if (errno || end == p || (i < 2 && *end != ',') || (i == 2 && *end))
			return -1;
		p = end + 1;
	}
	if (v[0] > UINT16_MAX || v[1] > UINT8_MAX || v[2] > UINT8_MAX)
		return -1;
	memset(cpu, 0, sizeof(*cpu));
	cpu->vendor = pcv_intel;
	cpu->family = (uint16_t)v[0];
	cpu->model = (uint8_t)v[1];
	cpu->stepping = (uint8_t)v[2];
	return 0;
}

static uint64_t word(const struct tc_intel_pt_info *info, unsigned i)
{
	return i < info->nr ? info->w[i] : 0;
}

int tc_pt_config_init(struct tc_pt_setup *s, const struct tc_intel_pt_info *info,
		     const uint64_t *config, const char *cpuid, struct tc_err *e)
{
	uint64_t freq_bits;

	memset(s, 0, sizeof(*s));
	pt_config_init(&s->cfg);
	/* perf itself refuses an info without the words up to per_cpu_mmaps. */
	if (!info || info->nr <= TC_IPT_PER_CPU_MMAPS)
		return tc_err_set(e, EINVAL,
				  "Intel PT AUXTRACE_INFO has %zu words, need at least %d",
				  info ? info->nr : 0, TC_IPT_PER_CPU_MMAPS + 1);

	s->pmu_type = (uint32_t)word(info, TC_IPT_PMU_TYPE);
	s->tc.time_shift = (uint16_t)word(info, TC_IPT_TIME_SHIFT);
	s->tc.time_mult = (uint32_t)word(info, TC_IPT_TIME_MULT);
	s->tc.time_zero = word(info, TC_IPT_TIME_ZERO);
	s->tc.valid = word(info, TC_IPT_CAP_USER_TIME_ZERO) && s->tc.time_mult &&
		      s->tc.time_shift < 64;
	s->have_sched_switch = word(info, TC_IPT_HAVE_SCHED_SWITCH);
	s->snapshot_mode = word(info, TC_IPT_SNAPSHOT_MODE);
	s->per_cpu_mmaps = word(info, TC_IPT_PER_CPU_MMAPS);
	s->tsc_ctc_n = (uint32_t)word(info, TC_IPT_TSC_CTC_N);
	s->tsc_ctc_d = (uint32_t)word(info, TC_IPT_TSC_CTC_D);
	s->max_nonturbo_ratio = (uint32_t)word(info, TC_IPT_MAX_NONTURBO_RATIO);
	s->filter = info->filter ? info->filter : "";

	/* The *_bit words are masks of the PMU format terms, not bit numbers. */
	if (config) {
		s->have_config = true;
		s->config = *config;
	}
	s->tsc = s->config & word(info, TC_IPT_TSC_BIT);
	s->noretcomp = s->config & word(info, TC_IPT_NORETCOMP_BIT);
	s->mtc = s->config & word(info, TC_IPT_MTC_BIT);
	s->cyc = s->config & word(info, TC_IPT_CYC_BIT);
	freq_bits = word(info, TC_IPT_MTC_FREQ_BITS);
	if (freq_bits)
		s->mtc_period = (unsigned)((s->config & freq_bits) >> __builtin_ctzll(freq_bits));
	s->timeless = !s->tsc || !s->tc.valid;

	/* libipt wants CPUID.15H as the CPU reports it: EAX the denominator, EBX the
	 * numerator of the TSC : core crystal clock ratio, which perf stored as d and n. */
	s->cfg.cpuid_0x15_eax = s->tsc_ctc_d;
	s->cfg.cpuid_0x15_ebx = s->tsc_ctc_n;
	s->cfg.mtc_freq = (uint8_t)s->mtc_period;
	/* MSR_PLATFORM_INFO[15:8], which is what sysfs max_nonturbo_ratio shows. */
	s->cfg.nom_freq = s->max_nonturbo_ratio <= UINT8_MAX ? (uint8_t)s->max_nonturbo_ratio : 0;

	/* The filter string names symbols or files ("filter main @ /bin/ls"); it needs the
	 * images to become IA32_RTIT_ADDRn ranges, so cfg.addr_filter stays "no filter".
	 * libipt only uses it to work around erratum SKL014. */

	if (cpuid && !tc_pt_config_cpu_parse(cpuid, &s->cfg.cpu)) {
		s->cpu_known = true;
		/* Unknown models are fine: no errata then, as for "--cpu none". */
		s->errata_known = pt_cpu_errata(&s->cfg.errata, &s->cfg.cpu) >= 0;
		if (!s->errata_known)
			memset(&s->cfg.errata, 0, sizeof(s->cfg.errata));
	}
	return 0;
}

int tc_pt_config_from_perf_data(struct tc_pt_setup *s, const struct tc_perf_data *pd,
			const struct tc_intel_pt_info *info, struct tc_err *e)
{
	const struct tc_perf_data_features *f = tc_perf_data_features(pd);
	uint64_t config = 0;
	bool found = false;
	uint32_t type = info && info->nr ? (uint32_t)info->w[TC_IPT_PMU_TYPE] : 0;

	for (size_t i = 0; i < tc_perf_data_nr_attrs(pd); i++) {
		const struct tc_perf_data_attr *a = tc_perf_data_attr(pd, i);

		if (a->attr.type == type) {
			config = a->attr.config;
			found = true;
			break;
		}
	}
	return tc_pt_config_init(s, info, found ? &config : NULL, f ? f->cpuid : NULL, e);
}

uint64_t tc_pt_config_tsc_to_perf_time(const struct tc_pt_time_conv *tc, uint64_t tsc)
{
	uint64_t quot, rem;

	if (!tc->valid)
		return tsc;
	/* Split so that the multiplication cannot overflow for large TSC values. */
	quot = tsc >> tc->time_shift;
	rem = tsc & ((1ULL << tc->time_shift) - 1);
	return tc->time_zero + quot * tc->time_mult + ((rem * tc->time_mult) >> tc->time_shift);
}

uint64_t tc_pt_config_perf_time_to_tsc(const struct tc_pt_time_conv *tc, uint64_t ns)
{
	uint64_t t, quot, rem;

	if (!tc->valid)
		return ns;
	t = ns - tc->time_zero;
	quot = t / tc->time_mult;
	rem = t % tc->time_mult;
	return (quot << tc->time_shift) + (rem << tc->time_shift) / tc->time_mult;
}
