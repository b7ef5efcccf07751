/* Decoder configurations from perf's CS_ETM AUXTRACE_INFO: one struct tc_etm_cfg per CPU from
 * its ETMv3/PTM, ETMv4 or ETE register block, and the trace ID -> CPU map, which
 * AUX_OUTPUT_HW_ID records may fill in or override (header v2, dynamic trace IDs). */
#ifndef TC_DECODERS_CORESIGHT_CS_META_H
#define TC_DECODERS_CORESIGHT_CS_META_H

#include "decoders/coresight/etm_ocsd.h"
#include "lib/perfdata/auxtrace_info.h"

#define TC_CS_MAX_IDS 128

struct tc_cs_meta {
	struct tc_etm_cfg *cfgs;	/* one per CPU block, in file order */
	size_t ncfgs;
	int id_cpu[TC_CS_MAX_IDS];	/* trace ID -> index into cfgs, -1 none */
};

/* -1 with a message naming the CPU whose block is short. */
int tc_cs_meta_init(struct tc_cs_meta *m, const struct tc_cs_etm_info *info, struct tc_err *e);
void tc_cs_meta_free(struct tc_cs_meta *m);
/* AUX_OUTPUT_HW_ID on cpu: that CPU's ETM now writes trace_id. -1 if the CPU is unknown. */
int tc_cs_meta_set_id(struct tc_cs_meta *m, uint32_t cpu, uint8_t trace_id);
/* The configuration decoding trace_id, or NULL. */
const struct tc_etm_cfg *tc_cs_meta_cfg(const struct tc_cs_meta *m, uint8_t trace_id);

#endif
