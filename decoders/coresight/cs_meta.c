#include "decoders/coresight/cs_meta.h"

#include <stdlib.h>
#include <string.h>

/* Register words after the common block, in perf's order (tools/perf/util/cs-etm.h). */
enum { V3_CR, V3_TRACEIDR, V3_CCER, V3_IDR, V3_N };
enum { V4_CONFIGR, V4_TRACEIDR, V4_IDR0, V4_IDR1, V4_IDR2, V4_IDR8, V4_AUTHSTATUS, V4_N,
       ETE_DEVARCH = V4_N, ETE_N };

static int fill(struct tc_etm_cfg *c, const struct tc_cs_etm_cpu *b, struct tc_err *e)
{
	const uint64_t *p = b->params;
	size_t need = b->arch == TC_CS_ETMV3 ? V3_N : b->arch == TC_CS_ETMV4 ? V4_N : ETE_N;

	if (b->nr_params < need)
		return tc_err_set(e, 0, "CS_ETM metadata of cpu %u: %zu register words, %zu needed",
				  b->cpu, b->nr_params, need);
	memset(c, 0, sizeof(*c));
	c->cpu = (int)b->cpu;
	c->trace_id = (uint8_t)b->trace_id;
	c->profile = TC_ETM_PROFILE_A;
	switch (b->arch) {
	case TC_CS_ETMV3:
		c->etmcr = (uint32_t)p[V3_CR];
		c->etmtraceidr = (uint32_t)p[V3_TRACEIDR];
		c->etmccer = (uint32_t)p[V3_CCER];
		c->etmidr = (uint32_t)p[V3_IDR];
		/* perf's rule: PTM if ETMIDR says so, ARMv7 A-profile either way */
		c->proto = (c->etmidr & 0x300) == 0x300 ? TC_ETM_PROTO_PTM : TC_ETM_PROTO_ETMV3;
		c->arch = TC_ETM_ARCH_V7;
		break;
	case TC_CS_ETMV4:
	case TC_CS_ETE:
		c->trcconfigr = (uint32_t)p[V4_CONFIGR];
		c->trctraceidr = (uint32_t)p[V4_TRACEIDR];
		c->trcidr0 = (uint32_t)p[V4_IDR0];
		c->trcidr1 = (uint32_t)p[V4_IDR1];
		c->trcidr2 = (uint32_t)p[V4_IDR2];
		c->trcidr8 = (uint32_t)p[V4_IDR8];
		if (b->arch == TC_CS_ETE) {
			c->proto = TC_ETM_PROTO_ETE;
			c->trcdevarch = (uint32_t)p[ETE_DEVARCH];
			c->arch = TC_ETM_ARCH_AA64;
		} else {
			c->proto = TC_ETM_PROTO_ETMV4;
			/* TRCIDR1.TRCARCHMIN >= 4 is ETM 4.4 and later: ARMv8.3+ cores */
			c->arch =
				((c->trcidr1 >> 4) & 0xf) >= 4 ? TC_ETM_ARCH_AA64 : TC_ETM_ARCH_V8;
		}
		break;
	}
	return 0;
}

int tc_cs_meta_init(struct tc_cs_meta *m, const struct tc_cs_etm_info *info, struct tc_err *e)
{
	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < TC_CS_MAX_IDS; i++)
		m->id_cpu[i] = -1;
	m->cfgs = calloc(info->nr_cpus ? info->nr_cpus : 1, sizeof(*m->cfgs));
	if (!m->cfgs)
		return tc_err_set(e, 12, "out of memory");
	for (size_t i = 0; i < info->nr_cpus; i++) {
		const struct tc_cs_etm_cpu *b = &info->cpus[i];

		if (fill(&m->cfgs[i], b, e)) {
			tc_cs_meta_free(m);
			return -1;
		}
		m->ncfgs++;
		if (!b->trace_id_unset)
			m->id_cpu[b->trace_id & (TC_CS_MAX_IDS - 1)] = (int)i;
	}
	return 0;
}

void tc_cs_meta_free(struct tc_cs_meta *m)
{
	free(m->cfgs);
	m->cfgs = NULL;
	m->ncfgs = 0;
}

int tc_cs_meta_set_id(struct tc_cs_meta *m, uint32_t cpu, uint8_t trace_id)
{
	trace_id &= TC_CS_MAX_IDS - 1;
	for (size_t i = 0; i < m->ncfgs; i++) {
		if (m->cfgs[i].cpu != (int)cpu)
			continue;
		for (size_t id = 0; id < TC_CS_MAX_IDS; id++)
			if (m->id_cpu[id] == (int)i)
				m->id_cpu[id] = -1;
		m->cfgs[i].trace_id = trace_id;
		if (m->cfgs[i].proto == TC_ETM_PROTO_ETMV3 || m->cfgs[i].proto == TC_ETM_PROTO_PTM)
			m->cfgs[i].etmtraceidr = trace_id;
		else
			m->cfgs[i].trctraceidr = trace_id;
		m->id_cpu[trace_id] = (int)i;
		return 0;
	}
	return -1;
}

const struct tc_etm_cfg *tc_cs_meta_cfg(const struct tc_cs_meta *m, uint8_t trace_id)
{
	int i = m->id_cpu[trace_id & (TC_CS_MAX_IDS - 1)];

	return i < 0 ? NULL : &m->cfgs[i];
}
