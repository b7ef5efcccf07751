/* BOLT pre-aggregated branches (bolt.h). */
#include "lib/output/bolt.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The pairs sorted, for a stable file. */
static struct tc_branch_profile_pair *sorted(const struct tc_branch_profile_pair *v, size_t n)
{
	struct tc_branch_profile_pair *s = malloc((n ? n : 1) * sizeof(*s));

	if (s) {
		memcpy(s, v, n * sizeof(*s));
		qsort(s, n, sizeof(*s), tc_branch_profile_pair_cmp);
	}
	return s;
}

int tc_bolt_write(const struct tc_branch_profile_bin *b, FILE *f)
{
	struct tc_branch_profile_pair *r = sorted(b->ranges, b->nranges);
	struct tc_branch_profile_pair *br = sorted(b->branches, b->nbranches);
	int rc = r && br ? 0 : -1;

	for (size_t i = 0; r && i < b->nranges; i++)
		fprintf(f, "F %" PRIx64 " %" PRIx64 " %" PRIu64 "\n", r[i].a, r[i].b, r[i].n);
	for (size_t i = 0; br && i < b->nbranches; i++)
		fprintf(f, "B %" PRIx64 " %" PRIx64 " %" PRIu64 " 0\n", br[i].a, br[i].b,
			br[i].n);
	free(r);
	free(br);
	return rc || ferror(f) ? -1 : 0;
}
