/* AUXTRACE_INFO priv words: CoreSight ETM per-CPU metadata and Intel PT settings. */
#include "lib/perfdata/auxtrace_info.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Version 0 blocks have no count word; their register count is fixed per arch. */
#define CS_ETMV3_NR_PARAMS_V0 4
#define CS_ETMV4_NR_PARAMS_V0 TC_CS_ETMV4_NR_PARAMS

static const char *arch_name(enum tc_cs_etm_arch a)
{
	return a == TC_CS_ETMV3 ? "ETMv3" : a == TC_CS_ETMV4 ? "ETMv4" : "ETE";
}

int tc_auxtrace_info_cs_etm_parse(const uint64_t *priv, size_t nr, struct tc_cs_etm_info *out,
			 struct tc_err *e)
{
	size_t pos;

	memset(out, 0, sizeof(*out));
	if (nr < TC_CS_HDR_WORDS)
		return tc_err_set(e, EINVAL, "CS_ETM info has %zu words, the header needs %d",
				  nr, TC_CS_HDR_WORDS);
	out->version = priv[TC_CS_HDR_VERSION];
	if (out->version > 2)
		return tc_err_set(e, EINVAL, "CS_ETM info header version %llu is not 0, 1 or 2",
				  (unsigned long long)out->version);
	out->pmu_type = (uint32_t)(priv[TC_CS_HDR_PMU_TYPE_CPUS] >> 32);
	out->nr_cpus = (uint32_t)priv[TC_CS_HDR_PMU_TYPE_CPUS];
	out->snapshot = priv[TC_CS_HDR_SNAPSHOT];
	/* Each block takes at least 3 words, which bounds a hostile CPU count. */
	if (out->nr_cpus > (nr - TC_CS_HDR_WORDS) / 3)
		return tc_err_set(e, EINVAL, "CS_ETM info claims %u CPUs but has only %zu words",
				  out->nr_cpus, nr);
	out->words = malloc(nr * sizeof(*priv) + 1);
	out->cpus = calloc(out->nr_cpus ? out->nr_cpus : 1, sizeof(*out->cpus));
	if (!out->words || !out->cpus) {
		tc_auxtrace_info_cs_etm_free(out);
		return tc_err_set(e, ENOMEM, "out of memory for CS_ETM info");
	}
	memcpy(out->words, priv, nr * sizeof(*priv));
	out->nr_words = nr;

	pos = TC_CS_HDR_WORDS;
	for (uint32_t i = 0; i < out->nr_cpus; i++) {
		struct tc_cs_etm_cpu *c = &out->cpus[i];
		/* Version 0 blocks end their header before the count word. */
		size_t hdr = out->version == 0 ? TC_CS_BLK_NR_PARAMS : TC_CS_BLK_HDR_WORDS, np;
		uint64_t nw;

		if (nr - pos < hdr)
			goto short_block;
		c->magic = out->words[pos + TC_CS_BLK_MAGIC];
		if (c->magic == TC_CS_ETMV3_MAGIC)
			c->arch = TC_CS_ETMV3;
		else if (c->magic == TC_CS_ETMV4_MAGIC)
			c->arch = TC_CS_ETMV4;
		else if (c->magic == TC_CS_ETE_MAGIC && out->version > 0)
			c->arch = TC_CS_ETE;
		else {
			tc_err_set(e, EINVAL, "CS_ETM info block %u (word %zu) has unknown magic "
				   "0x%016llx for header version %llu", i, pos,
				   (unsigned long long)c->magic, (unsigned long long)out->version);
			tc_auxtrace_info_cs_etm_free(out);
			return -1;
		}
		c->cpu = (uint32_t)out->words[pos + TC_CS_BLK_CPU];
		if (out->version == 0)
			np = c->arch == TC_CS_ETMV3 ? CS_ETMV3_NR_PARAMS_V0 : CS_ETMV4_NR_PARAMS_V0;
		else {
			nw = out->words[pos + TC_CS_BLK_NR_PARAMS];
			np = nw > nr ? nr : (size_t)nw;
		}
		if (nr - pos - hdr < np)
			goto short_block;
		/* Both TRACEIDR layouts keep the trace ID register second. */
		if (np < 2) {
			tc_err_set(e, EINVAL, "CS_ETM info block %u (%s, cpu %u) has %zu "
				   "parameters, too few for a trace ID", i, arch_name(c->arch),
				   c->cpu, np);
			tc_auxtrace_info_cs_etm_free(out);
			return -1;
		}
		c->raw = &out->words[pos];
		c->nr_raw = hdr + np;
		c->params = &out->words[pos + hdr];
		c->nr_params = np;
		c->trace_id = (uint32_t)(c->params[1] & TC_CS_TRACE_ID_MASK);
		c->trace_id_unset =
			out->version >= 2 && (c->params[1] & TC_CS_TRACE_ID_UNUSED_FLAG);
		pos += hdr + np;
		continue;
short_block:
		tc_err_set(e, EINVAL, "CS_ETM info block %u at word %zu runs past the end "
			   "(%zu words)", i, pos, nr);
		tc_auxtrace_info_cs_etm_free(out);
		return -1;
	}
	if (pos != nr) {
		tc_err_set(e, EINVAL, "CS_ETM info has %zu words after its %u CPU blocks",
			   nr - pos, out->nr_cpus);
		tc_auxtrace_info_cs_etm_free(out);
		return -1;
	}
	return 0;
}

void tc_auxtrace_info_cs_etm_free(struct tc_cs_etm_info *info)
{
	free(info->cpus);
	free(info->words);
	memset(info, 0, sizeof(*info));
}

const struct tc_cs_etm_cpu *tc_auxtrace_info_cs_etm_cpu(const struct tc_cs_etm_info *info,
							uint32_t cpu)
{
	for (uint32_t i = 0; i < info->nr_cpus; i++)
		if (info->cpus[i].cpu == cpu)
			return &info->cpus[i];
	return NULL;
}

int tc_auxtrace_info_intel_pt_parse(const uint64_t *priv, size_t nr, struct tc_intel_pt_info *out,
			   struct tc_err *e)
{
	size_t len, words;
	const char *s;

	memset(out, 0, sizeof(*out));
	out->filter = "";
	/* perf 4.x wrote fewer words; the first few are needed for anything useful. */
	if (nr < TC_IPT_PER_CPU_MMAPS + 1)
		return tc_err_set(e, EINVAL, "Intel PT info has %zu words, need at least %d",
				  nr, TC_IPT_PER_CPU_MMAPS + 1);
	out->nr = nr < TC_IPT_PRIV_MAX ? nr : TC_IPT_PRIV_MAX;
	memcpy(out->w, priv, out->nr * sizeof(*priv));
	if (out->nr < TC_IPT_PRIV_MAX || !out->w[TC_IPT_FILTER_STR_LEN])
		return 0;
	len = out->w[TC_IPT_FILTER_STR_LEN] > nr * 8 ? nr * 8
						     : (size_t)out->w[TC_IPT_FILTER_STR_LEN];
	/* The string and its NUL are padded to whole words after the fixed ones. */
	words = (len + 1 + 7) / 8;
	if (nr - TC_IPT_PRIV_MAX < words)
		return tc_err_set(e, EINVAL, "Intel PT filter string of %llu bytes runs past "
				  "the %zu info words",
				  (unsigned long long)out->w[TC_IPT_FILTER_STR_LEN], nr);
	s = (const char *)&priv[TC_IPT_PRIV_MAX];
	out->filter_owned = strndup(s, len);
	if (!out->filter_owned)
		return tc_err_set(e, ENOMEM, "out of memory for the Intel PT filter");
	out->filter = out->filter_owned;
	return 0;
}

void tc_auxtrace_info_intel_pt_free(struct tc_intel_pt_info *info)
{
	free(info->filter_owned);
	memset(info, 0, sizeof(*info));
	info->filter = "";
}
