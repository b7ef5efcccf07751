/* AutoFDO text (autofdo.h). */
#include "lib/output/autofdo.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The pairs relative to base, sorted; ranges keep only pairs at or above base, branches
 * need only from there (a target below it becomes 0). */
static int write_pairs(const struct tc_branch_profile_pair *in, size_t nin, uint64_t base,
		       bool branches, FILE *f)
{
	struct tc_branch_profile_pair *v = malloc((nin ? nin : 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return -1;
	for (size_t i = 0; i < nin; i++) {
		struct tc_branch_profile_pair p = in[i];

		if (p.a < base || (!branches && p.b < base))
			continue;
		p.a -= base;
		p.b = p.b >= base ? p.b - base : 0;
		v[n++] = p;
	}
	qsort(v, n, sizeof(*v), tc_branch_profile_pair_cmp);
	fprintf(f, "%zu\n", n);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%" PRIx64 "%s%" PRIx64 ":%" PRIu64 "\n", v[i].a, branches ? "->" : "-",
			v[i].b, v[i].n);
	free(v);
	return 0;
}

int tc_autofdo_write(const struct tc_branch_profile_bin *bins, size_t n, FILE *f)
{
	int rc = 0;

	if (n > 1)
		fprintf(f,
			"// Please split this file. AutoFDO only accepts profile for one binary.\n");
	for (size_t i = 0; i < n; i++) {
		const struct tc_branch_profile_bin *b = &bins[i];
		size_t len = strlen(b->build_id);

		rc |= write_pairs(b->ranges, b->nranges, b->base, false, f);
		fprintf(f, "0\n");
		rc |= write_pairs(b->branches, b->nbranches, b->base, true, f);
		/* 20 bytes, zero-padded (shorter ids, as the 16-byte ones of lld) */
		fprintf(f, "// build_id: 0x%s%.*s\n// %s\n\n", b->build_id,
			len < 40 ? (int)(40 - len) : 0, "0000000000000000000000000000000000000000",
			b->dso);
	}
	return rc || ferror(f) ? -1 : 0;
}
