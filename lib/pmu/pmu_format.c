#include "lib/pmu/pmu_format.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const field_names[] = { "config", "config1", "config2", "config3" };

const char *tc_pmu_format_field_name(enum tc_pmu_field f)
{
	return field_names[f];
}

static int parse_bit(const char **p, unsigned *bit)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)**p))
		return -1;
	v = strtoul(*p, &end, 10);
	if (v > 63)
		return -1;
	*bit = (unsigned)v;
	*p = end;
	return 0;
}

int tc_pmu_format_parse(const char *name, const char *spec, struct tc_pmu_format *f,
			struct tc_err *e)
{
	const char *colon = strchr(spec, ':');
	const char *p;
	size_t flen;
	int field = -1;

	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	snprintf(f->spec, sizeof(f->spec), "%s", spec);
	if (!colon)
		goto bad;
	flen = (size_t)(colon - spec);
	for (int i = 0; i < 4; i++)
		if (strlen(field_names[i]) == flen && !strncmp(spec, field_names[i], flen))
			field = i;
	if (field < 0)
		goto bad;
	f->field = (enum tc_pmu_field)field;
	p = colon + 1;
	for (;;) {
		unsigned lo, hi;

		if (parse_bit(&p, &lo))
			goto bad;
		hi = lo;
		if (*p == '-') {
			p++;
			if (parse_bit(&p, &hi) || hi < lo)
				goto bad;
		}
		for (unsigned b = lo; b <= hi; b++)
			f->mask |= 1ULL << b;
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '\0')
			break;
		goto bad;
	}
	return 0;
bad:
	return tc_err_set(e, EINVAL,
			  "format term '%s' is '%s', expected config[123]:BIT[-BIT][,...]",
			  name, spec);
}

int tc_pmu_format_apply(const struct tc_pmu_format *f, uint64_t value, uint64_t *field_val,
			struct tc_err *e)
{
	uint64_t out = 0, v = value;

	for (unsigned b = 0; b < 64; b++) {
		if (!(f->mask & (1ULL << b)))
			continue;
		if (v & 1)
			out |= 1ULL << b;
		v >>= 1;
	}
	if (v)
		return tc_err_set(e, ERANGE, "value 0x%llx does not fit term '%s' (%s)",
				  (unsigned long long)value, f->name, f->spec);
	*field_val |= out;
	return 0;
}
