/* record for Intel PT (intel_pt): perf's default terms, the online CPUs, no sinks, and the
 * AUXTRACE_INFO words perf's intel-pt.c writes (time conversion, the bits of the format
 * terms a decoder needs). */
#include "lib/perfdata/auxtrace_info.h"
#include "lib/record/record_ops.h"

static size_t info_words(const struct tc_record_ops_info *in)
{
	(void)in;
	return TC_IPT_PRIV_MAX;
}

/* The lowest bit of a format term's mask (how perf gives a term's position), 0 if none. */
static uint64_t term_bit(const struct tc_pmu *p, const char *term)
{
	const struct tc_pmu_format *f = tc_pmu_term(p, term);

	return f ? f->mask & -f->mask : 0;
}

/* No address filter: TC_IPT_FILTER_STR_LEN stays 0 and no string follows. */
static int info_fill(const struct tc_record_ops_info *in, uint64_t *w, struct tc_err *e)
{
	const struct perf_event_mmap_page *up = in->up;

	(void)e;
	w[TC_IPT_PMU_TYPE] = in->aux->type;
	if (up && up->cap_user_time) {
		w[TC_IPT_TIME_SHIFT] = up->time_shift;
		w[TC_IPT_TIME_MULT] = up->time_mult;
		w[TC_IPT_TIME_ZERO] = up->time_zero;
	}
	w[TC_IPT_CAP_USER_TIME_ZERO] = up ? up->cap_user_time_zero : 0;
	w[TC_IPT_TSC_BIT] = term_bit(in->pmu, "tsc");
	w[TC_IPT_NORETCOMP_BIT] = term_bit(in->pmu, "noretcomp");
	w[TC_IPT_MTC_BIT] = term_bit(in->pmu, "mtc");
	w[TC_IPT_CYC_BIT] = term_bit(in->pmu, "cyc");
	w[TC_IPT_HAVE_SCHED_SWITCH] = 0; /* context_switch records, not sched_switch */
	w[TC_IPT_SNAPSHOT_MODE] = in->snapshot;
	w[TC_IPT_PER_CPU_MMAPS] = in->ncpus != 0;
	w[TC_IPT_MTC_FREQ_BITS] = 3;
	return 0;
}

/* perf's default_config: branches with TSC, MTC and PSB periods (caps permitting). */
static const struct tc_record_ops_term terms[] = {
	{ "pt", 1, NULL },
	{ "branch", 1, NULL },
	{ "tsc", 1, NULL },
	{ "mtc", 1, "mtc" },
	{ "mtc_period", 3, "mtc" },
	{ "psb_period", 3, "psb_cyc" },
	{ NULL, 0, NULL },
};

const struct tc_record_ops tc_record_intel_pt_ops = {
	.name = "intel_pt",
	.kind = TC_PMU_INTEL_PT,
	.terms = terms,
	.info_type = TC_AUXTRACE_INTEL_PT,
	.info_words = info_words,
	.info_fill = info_fill,
	.snapshot_head_wraps = true,
};
