/* Two profiles side by side (tracectl diff): all threads merged, functions matched by dso
 * and name, since addresses and thread ids change from run to run. */
#include "lib/analysis/profile.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int str_cmp(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static double change_pct(uint64_t a, uint64_t b)
{
	if (!a)
		return b ? INFINITY : 0.0;
	return 100.0 * ((double)b - (double)a) / (double)a;
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static int diff_cmp(const void *pa, const void *pb, void *key)
{
	const struct tc_profile_diff_row *a = pa, *b = pb;
	uint64_t x = 0, y = 0;
	int c;

	switch (*(const enum tc_profile_sort *)key) {
	case TC_PROFILE_BY_SELF:
		x = absdiff(a->a_self, a->b_self);
		y = absdiff(b->a_self, b->b_self);
		break;
	case TC_PROFILE_BY_TOTAL:
		x = absdiff(a->a_total, a->b_total);
		y = absdiff(b->a_total, b->b_total);
		break;
	case TC_PROFILE_BY_CALLS:
		x = absdiff(a->a_calls, a->b_calls);
		y = absdiff(b->a_calls, b->b_calls);
		break;
	case TC_PROFILE_BY_NAME:
		break;
	}
	if (x != y)
		return x < y ? 1 : -1;
	c = strcmp(a->name, b->name);
	return c ? c : str_cmp(a->dso, b->dso);
}

int tc_profile_diff(const struct tc_profile *a, const struct tc_profile *b,
		 const struct tc_profile_view *v, struct tc_profile_diff *d)
{
	struct tc_profile_view by_name = { .sort = TC_PROFILE_BY_NAME, .dso = v->dso };
	struct tc_profile_table ta, tb;
	const struct tc_profile_thread *x, *y;
	size_t i = 0, k = 0;

	*d = (struct tc_profile_diff){ .n = 0 };
	if (tc_profile_table(a, &by_name, &ta))
		return -1;
	if (tc_profile_table(b, &by_name, &tb)) {
		tc_profile_table_free(&ta);
		return -1;
	}
	x = &ta.threads[0];
	y = &tb.threads[0];
	d->a_insns = ta.insns;
	d->b_insns = tb.insns;
	d->rows = calloc(x->n + y->n + 1, sizeof(*d->rows));
	if (!d->rows) {
		tc_profile_table_free(&ta);
		tc_profile_table_free(&tb);
		return -1;
	}
	/* Both tables are in name, dso order: walk them together. */
	while (i < x->n || k < y->n) {
		const struct tc_profile_row *ra = i < x->n ? &x->rows[i] : NULL;
		const struct tc_profile_row *rb = k < y->n ? &y->rows[k] : NULL;
		struct tc_profile_diff_row r = { .name = NULL };
		int c;

		if (!ra)
			c = 1;
		else if (!rb)
			c = -1;
		else if (!(c = strcmp(ra->name, rb->name)))
			c = str_cmp(ra->dso, rb->dso);
		if (c <= 0) {
			r.name = ra->name;
			r.dso = ra->dso;
			r.a_self = ra->self;
			r.a_total = ra->total;
			r.a_calls = ra->calls;
			i++;
		}
		if (c >= 0) {
			r.name = rb->name;
			r.dso = rb->dso;
			r.b_self = rb->self;
			r.b_total = rb->total;
			r.b_calls = rb->calls;
			k++;
		}
		if (r.a_self == r.b_self && r.a_total == r.b_total && r.a_calls == r.b_calls)
			continue;
		r.self_pct = change_pct(r.a_self, r.b_self);
		r.total_pct = change_pct(r.a_total, r.b_total);
		d->rows[d->n++] = r;
	}
	/* Names point into the profiles, not the tables. */
	tc_profile_table_free(&ta);
	tc_profile_table_free(&tb);
	qsort_r(d->rows, d->n, sizeof(*d->rows), diff_cmp, (void *)&v->sort);
	if (v->limit && d->n > v->limit)
		d->n = v->limit;
	return 0;
}

void tc_profile_diff_free(struct tc_profile_diff *d)
{
	free(d->rows);
	*d = (struct tc_profile_diff){ .n = 0 };
}

const struct tc_profile_diff_row *tc_profile_diff_grew(const struct tc_profile_diff *d, double pct,
						 bool total)
{
	for (size_t i = 0; i < d->n; i++) {
		double p = total ? d->rows[i].total_pct : d->rows[i].self_pct;

		if (p > pct)
			return &d->rows[i];
	}
	return NULL;
}

static void pct_text(FILE *f, double p)
{
	if (isinf(p))
		fprintf(f, " %8s", "new");
	else
		fprintf(f, " %+7.1f%%", p);
}

void tc_profile_diff_write_text(const struct tc_profile_diff *d, FILE *f)
{
	fprintf(f, "instructions: %" PRIu64 " -> %" PRIu64 "\n", d->a_insns, d->b_insns);
	fprintf(f, "%12s %12s %12s %8s %12s %12s %12s %8s  %s\n", "self A", "self B", "change",
		"%", "total A", "total B", "change", "%", "function");
	for (size_t i = 0; i < d->n; i++) {
		const struct tc_profile_diff_row *r = &d->rows[i];

		fprintf(f, "%12" PRIu64 " %12" PRIu64 " %+12" PRId64, r->a_self, r->b_self,
			(int64_t)(r->b_self - r->a_self));
		pct_text(f, r->self_pct);
		fprintf(f, " %12" PRIu64 " %12" PRIu64 " %+12" PRId64, r->a_total, r->b_total,
			(int64_t)(r->b_total - r->a_total));
		pct_text(f, r->total_pct);
		fprintf(f, "  %s", r->name);
		if (r->dso)
			fprintf(f, " [%s]", r->dso);
		fputc('\n', f);
	}
}

static void kpct(struct tc_json *j, const char *k, double p)
{
	tc_json_key(j, k);
	tc_json_double(j, p);	/* infinite (a new function): null */
}

void tc_profile_diff_write_json(const struct tc_profile_diff *d, struct tc_json *j)
{
	tc_json_obj_open(j);
	tc_json_kint(j, "a_insns", (long long)d->a_insns);
	tc_json_kint(j, "b_insns", (long long)d->b_insns);
	tc_json_key(j, "rows");
	tc_json_arr_open(j);
	for (size_t i = 0; i < d->n; i++) {
		const struct tc_profile_diff_row *r = &d->rows[i];

		tc_json_obj_open(j);
		tc_json_kstr(j, "name", r->name);
		tc_json_kstr(j, "dso", r->dso);
		tc_json_kint(j, "a_self", (long long)r->a_self);
		tc_json_kint(j, "b_self", (long long)r->b_self);
		tc_json_kint(j, "self_change", (long long)(r->b_self - r->a_self));
		kpct(j, "self_pct", r->self_pct);
		tc_json_kint(j, "a_total", (long long)r->a_total);
		tc_json_kint(j, "b_total", (long long)r->b_total);
		tc_json_kint(j, "total_change", (long long)(r->b_total - r->a_total));
		kpct(j, "total_pct", r->total_pct);
		tc_json_kint(j, "a_calls", (long long)r->a_calls);
		tc_json_kint(j, "b_calls", (long long)r->b_calls);
		tc_json_obj_close(j);
	}
	tc_json_arr_close(j);
	tc_json_obj_close(j);
}
