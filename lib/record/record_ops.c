/* The trace PMUs record knows: the one list of their operations. */
#include "lib/record/record_ops.h"

#include <stdio.h>
#include <string.h>

static const struct tc_record_ops *const all[] = {
	&tc_record_cs_etm_ops,
	&tc_record_intel_pt_ops,
};

#define NR_OPS (sizeof(all) / sizeof(all[0]))

const struct tc_record_ops *tc_record_ops_find(const struct tc_pmu *p)
{
	for (size_t i = 0; p && i < NR_OPS; i++)
		if (all[i]->kind == p->kind)
			return all[i];
	return NULL;
}

const struct tc_record_ops *tc_record_ops_by_name(const char *name)
{
	for (size_t i = 0; i < NR_OPS; i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

void tc_record_ops_names(char *buf, size_t len, bool with_sink)
{
	size_t l = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < NR_OPS && l < len; i++)
		if (!with_sink || all[i]->sink)
			l += (size_t)snprintf(buf + l, len - l, "%s%s", l ? ", " : "",
					      all[i]->name);
}
