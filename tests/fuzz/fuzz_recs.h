/* The Intel PT differential targets' records (fuzz_pt_diff.c, fuzz_pt_skim.c): each
 * tc_rec serialised field by field into one byte string per decoder, to be compared whole;
 * where two differ, the records around the first difference are printed, field by field,
 * before abort(). Each target is one translation unit, so these are its own. */
#ifndef TC_TESTS_FUZZ_FUZZ_RECS_H
#define TC_TESTS_FUZZ_FUZZ_RECS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/rec.h"
#include "tests/fuzz/fuzz_check.h"

struct fuzz_recs {
	uint8_t *out;
	size_t n, cap;
	size_t *starts;		/* where each record begins in out */
	uint64_t *offs;		/* each record's offset (compared only where put) */
	size_t nrec, caprec;
	bool with_offset;	/* the offset is one of the fields */
};

#define FUZZ_RECS_FIELDS 16	/* besides the offset */

static void fuzz_recs_put(struct fuzz_recs *r, const void *p, size_t len)
{
	if (r->n + len > r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 4096;

		while (cap < r->n + len)
			cap *= 2;
		r->out = realloc(r->out, cap);
		CHECK(r->out);
		r->cap = cap;
	}
	memcpy(r->out + r->n, p, len);
	r->n += len;
}

static void fuzz_recs_put_str(struct fuzz_recs *r, const char *s)
{
	uint8_t none = 0xff;

	if (s)
		fuzz_recs_put(r, s, strlen(s) + 1);
	else
		fuzz_recs_put(r, &none, 1);
}

/* A record begins at out[start]: kept for the display of a difference. */
static void fuzz_recs_begin(struct fuzz_recs *r, size_t start, uint64_t offset)
{
	if (r->nrec == r->caprec) {
		r->caprec = r->caprec ? r->caprec * 2 : 256;
		r->starts = realloc(r->starts, r->caprec * sizeof(*r->starts));
		r->offs = realloc(r->offs, r->caprec * sizeof(*r->offs));
		CHECK(r->starts && r->offs);
	}
	r->starts[r->nrec] = start;
	r->offs[r->nrec++] = offset;
}

static void fuzz_recs_add(struct fuzz_recs *r, const struct tc_rec *rec)
{
	const uint64_t f[FUZZ_RECS_FIELDS] = {
		rec->type, (uint64_t)rec->id, (uint64_t)rec->cpu, (uint64_t)rec->pid,
		(uint64_t)rec->tid, rec->start, rec->end, rec->insns, rec->isa, (uint64_t)rec->last,
		rec->last_type, rec->last_size, rec->last_taken, rec->value, rec->has_time,
		rec->has_time ? rec->time : 0 };

	fuzz_recs_begin(r, r->n, rec->offset);
	if (r->with_offset)
		fuzz_recs_put(r, &rec->offset, sizeof(rec->offset));
	fuzz_recs_put(r, f, sizeof(f));
	fuzz_recs_put_str(r, rec->name);
	fuzz_recs_put_str(r, rec->text);
}

static void fuzz_recs_free(struct fuzz_recs *r)
{
	free(r->out);
	free(r->starts);
	free(r->offs);
}

/* Record k of r as on_rec put it. */
static void fuzz_recs_show1(const char *who, const struct fuzz_recs *r, size_t k)
{
	uint64_t f[FUZZ_RECS_FIELDS];
	size_t o;

	if (k >= r->nrec)
		return;
	o = r->starts[k] + (r->with_offset ? sizeof(uint64_t) : 0);
	if (o + sizeof(f) > r->n)
		return;
	memcpy(f, r->out + o, sizeof(f));
	fprintf(stderr, "  %s record %zu at %#llx: type %llu id %lld cpu %lld pid %lld tid %lld "
		"start %#llx end %#llx insns %llu isa %llu last %#llx/%llu/%llu taken %llu "
		"value %#llx time %s%llu\n", who, k,
		(unsigned long long)r->offs[k], (unsigned long long)f[0], (long long)f[1],
		(long long)f[2], (long long)f[3], (long long)f[4],
		(unsigned long long)f[5], (unsigned long long)f[6], (unsigned long long)f[7],
		(unsigned long long)f[8], (unsigned long long)f[9], (unsigned long long)f[10],
		(unsigned long long)f[11], (unsigned long long)f[12], (unsigned long long)f[13],
		f[14] ? "" : "(none) ", (unsigned long long)f[15]);
	for (o += sizeof(f); o < r->n && (k + 1 >= r->nrec || o < r->starts[k + 1]);
	     o += r->out[o] == 0xff ? 1 : strlen((const char *)r->out + o) + 1)
		if (r->out[o] != 0xff)
			fprintf(stderr, "    \"%s\"\n", (const char *)r->out + o);
}

/* Abort, with the records around the first difference, unless a and b are the same. */
static void fuzz_recs_same(const char *target, const char *na, const struct fuzz_recs *a,
			   const char *nb, const struct fuzz_recs *b)
{
	size_t i = 0, k = 0;

	if (a->n == b->n && (!a->n || !memcmp(a->out, b->out, a->n)))
		return;
	while (i < a->n && i < b->n && a->out[i] == b->out[i])
		i++;
	fprintf(stderr, "%s: records differ from byte %zu (%s %zu bytes, %s %zu)\n", target, i,
		na, a->n, nb, b->n);
	while (k + 1 < a->nrec && a->starts[k + 1] <= i)
		k++;
	for (size_t j = k > 2 ? k - 2 : 0; j < k + 6; j++)
		fuzz_recs_show1(na, a, j);
	for (size_t j = k > 2 ? k - 2 : 0; j < k + 6; j++)
		fuzz_recs_show1(nb, b, j);
	abort();
}

#endif
