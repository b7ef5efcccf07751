/* PMU format terms: "config2:0-31" says which attr field and which bits a term sets. */
#ifndef TC_LIB_PMU_PMU_FORMAT_H
#define TC_LIB_PMU_PMU_FORMAT_H

#include <stdint.h>

#include "lib/util/err.h"

enum tc_pmu_field {
	TC_FIELD_CONFIG,
	TC_FIELD_CONFIG1,
	TC_FIELD_CONFIG2,
	TC_FIELD_CONFIG3,
};

struct tc_pmu_format {
	char name[64];
	char spec[128];			/* as the file holds it */
	enum tc_pmu_field field;
	uint64_t mask;			/* bits of the field this term occupies */
};

/* Parse a format file's text ("config:0-3,8"); the name is only for messages. */
int tc_pmu_format_parse(const char *name, const char *spec, struct tc_pmu_format *f,
			struct tc_err *e);

/* Spread value's low bits over f->mask (lowest bit first), as perf does.
 * Fails if value does not fit in the term's width. */
int tc_pmu_format_apply(const struct tc_pmu_format *f, uint64_t value, uint64_t *field_val,
			struct tc_err *e);

const char *tc_pmu_format_field_name(enum tc_pmu_field f);

#endif
