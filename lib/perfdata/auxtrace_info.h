/* The priv words of PERF_RECORD_AUXTRACE_INFO for CoreSight ETM (type 3) and Intel PT
 * (type 1). Both are plain u64 arrays; layouts follow tools/perf/util/cs-etm.h and
 * intel-pt.h. */
#ifndef TC_LIB_PERFDATA_AUXTRACE_INFO_H
#define TC_LIB_PERFDATA_AUXTRACE_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util/err.h"

enum {
	TC_AUXTRACE_INTEL_PT = 1,
	TC_AUXTRACE_INTEL_BTS = 2,
	TC_AUXTRACE_CS_ETM = 3,
	TC_AUXTRACE_ARM_SPE = 4,
	TC_AUXTRACE_S390_CPUMSF = 5,
	TC_AUXTRACE_HISI_PTT = 6,
};

#define TC_CS_ETMV3_MAGIC 0x3030303030303030ULL
#define TC_CS_ETMV4_MAGIC 0x4040404040404040ULL
#define TC_CS_ETE_MAGIC 0x5050505050505050ULL

/* The words of CS_ETM info as written and read: a header, then one block per CPU (magic,
 * cpu, and from version 1 the count of the registers that follow). */
enum { TC_CS_HDR_VERSION, TC_CS_HDR_PMU_TYPE_CPUS, TC_CS_HDR_SNAPSHOT, TC_CS_HDR_WORDS };
enum { TC_CS_BLK_MAGIC, TC_CS_BLK_CPU, TC_CS_BLK_NR_PARAMS, TC_CS_BLK_HDR_WORDS };
#define TC_CS_HDR_VERSION_1 1	/* the version tracectl writes */

/* The ETMv4 registers of a block, in file order. */
enum {
	TC_CS_ETMV4_TRCCONFIGR,
	TC_CS_ETMV4_TRCTRACEIDR,
	TC_CS_ETMV4_TRCIDR0,
	TC_CS_ETMV4_TRCIDR1,
	TC_CS_ETMV4_TRCIDR2,
	TC_CS_ETMV4_TRCIDR8,
	TC_CS_ETMV4_TRCAUTHSTATUS,
	TC_CS_ETMV4_NR_PARAMS,
};

/* v2 headers may leave a trace ID unset (bit 31) until AUX_OUTPUT_HW_ID supplies it. */
#define TC_CS_TRACE_ID_UNUSED_FLAG (1ULL << 31)
#define TC_CS_TRACE_ID_MASK 0x7fULL

enum tc_cs_etm_arch { TC_CS_ETMV3, TC_CS_ETMV4, TC_CS_ETE };

struct tc_cs_etm_cpu {
	enum tc_cs_etm_arch arch;
	uint64_t magic;
	uint32_t cpu;
	uint32_t trace_id;		/* TRACEIDR & 0x7f */
	bool trace_id_unset;		/* v2: bit 31 set, wait for AUX_OUTPUT_HW_ID */
	/* The ETM registers after the common block: ETMv3 ETMCR, ETMTRACEIDR, ETMCCER,
	 * ETMIDR; ETMv4 TRCCONFIGR, TRCTRACEIDR, TRCIDR0, 1, 2, 8, TRCAUTHSTATUS; ETE as
	 * ETMv4 plus TRCDEVARCH; newer writers may append more. */
	const uint64_t *params;
	size_t nr_params;
	const uint64_t *raw;		/* the whole block: magic, cpu, (nr,) params */
	size_t nr_raw;
};

struct tc_cs_etm_info {
	uint64_t version;		/* 0, 1 or 2 */
	uint32_t pmu_type, nr_cpus;
	uint64_t snapshot;
	struct tc_cs_etm_cpu *cpus;	/* nr_cpus blocks in file order */
	uint64_t *words;		/* owned copy of priv that cpus[] point into */
	size_t nr_words;
};

/* Parse CS_ETM priv words (copied). -1 with a message saying which word is wrong. */
int tc_auxtrace_info_cs_etm_parse(const uint64_t *priv, size_t nr, struct tc_cs_etm_info *out,
			 struct tc_err *e);
void tc_auxtrace_info_cs_etm_free(struct tc_cs_etm_info *info);
/* The block for a CPU, or NULL. */
const struct tc_cs_etm_cpu *tc_auxtrace_info_cs_etm_cpu(const struct tc_cs_etm_info *info,
							uint32_t cpu);

enum {
	TC_IPT_PMU_TYPE,
	TC_IPT_TIME_SHIFT,
	TC_IPT_TIME_MULT,
	TC_IPT_TIME_ZERO,
	TC_IPT_CAP_USER_TIME_ZERO,
	TC_IPT_TSC_BIT,
	TC_IPT_NORETCOMP_BIT,
	TC_IPT_HAVE_SCHED_SWITCH,
	TC_IPT_SNAPSHOT_MODE,
	TC_IPT_PER_CPU_MMAPS,
	TC_IPT_MTC_BIT,
	TC_IPT_MTC_FREQ_BITS,
	TC_IPT_TSC_CTC_N,
	TC_IPT_TSC_CTC_D,
	TC_IPT_CYC_BIT,
	TC_IPT_MAX_NONTURBO_RATIO,
	TC_IPT_FILTER_STR_LEN,
	TC_IPT_PRIV_MAX,
};

struct tc_intel_pt_info {
	/* Older perf wrote fewer words: w[i] is valid for i < nr (0 otherwise). */
	uint64_t w[TC_IPT_PRIV_MAX];
	size_t nr;
	const char *filter;		/* address filter string, "" if none */
	char *filter_owned;
};

int tc_auxtrace_info_intel_pt_parse(const uint64_t *priv, size_t nr, struct tc_intel_pt_info *out,
			   struct tc_err *e);
void tc_auxtrace_info_intel_pt_free(struct tc_intel_pt_info *info);

#endif
