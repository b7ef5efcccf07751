/* Branch profiles per binary (branch_profile.h). */
#include "lib/output/branch_profile.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/isa/a64.h"
#include "lib/isa/x86.h"
#include "lib/util/grow.h"
#include "lib/util/hash.h"

/* (a, b) -> count. */
struct pair_count {
	uint64_t a, b, n;
};

/* The pairs go to the sort in the hash's slot order, as they always did: pairs equal after
 * rebasing (targets below the base become 0) come out as before. */
struct pair_map {
	struct pair_count *v;
	size_t n, cap;
	struct tc_hash h;
};

struct binary {
	const char *dso, *build_id;
	uint64_t base;		/* first PT_LOAD vaddr */
	struct pair_map ranges, branches;
};

/* The range of a trace stream waiting for its branch target. */
struct pending {
	long key;
	bool valid, taken, wait_fix;
	size_t bin;
	uint64_t start, end, to;
};

/* Ranges left out: no binary was found for their start. */
struct dropped {
	const char *dso;	/* the decoder's string; NULL: no mapping there */
	uint64_t n, lo, hi;	/* ranges, lowest and highest start */
};

struct tc_branch_profile {
	struct tc_branch_profile_opts o;
	uint64_t ranges;	/* every range fed */
	struct dropped *drop;
	size_t ndrop, cdrop;
	struct binary *bins;
	size_t nbins, cbins;
	struct pending *st;
	size_t nst, cst;
	struct tc_branch_profile_bin *out;	/* what finish hands over */
	bool failed;
	struct tc_x86 *x86;	/* made at the first x86 range */
};

static uint64_t hash2(uint64_t a, uint64_t b)
{
	uint64_t h =
		a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL) * 0xc2b2ae3d27d4eb4fULL;

	return h ^ (h >> 29);
}

static bool pair_eq(const void *v, size_t i, const void *key)
{
	const struct pair_count *p = &((const struct pair_count *)v)[i], *k = key;

	return p->a == k->a && p->b == k->b;
}

static int map_add(struct pair_map *m, uint64_t a, uint64_t b)
{
	struct pair_count key = { a, b, 1 };
	uint64_t h = hash2(a, b);
	size_t i;

	/* room first, found or not: the slot order stays the one profiles were written in */
	if (tc_hash_reserve(&m->h))
		return -1;
	i = tc_hash_find(&m->h, h, pair_eq, m->v, &key);
	if (i != TC_HASH_NONE) {
		m->v[i].n++;
		return 0;
	}
	if (tc_grow((void **)&m->v, &m->cap, m->n + 1, sizeof(*m->v)) ||
	    tc_hash_add(&m->h, h, m->n))
		return -1;
	m->v[m->n++] = key;
	return 0;
}

static void map_free(struct pair_map *m)
{
	free(m->v);
	tc_hash_free(&m->h);
}

struct tc_branch_profile *tc_branch_profile_new(const struct tc_branch_profile_opts *o)
{
	struct tc_branch_profile *a = calloc(1, sizeof(*a));

	if (a)
		a->o = *o;
	return a;
}

void tc_branch_profile_free(struct tc_branch_profile *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nbins; i++) {
		map_free(&a->bins[i].ranges);
		map_free(&a->bins[i].branches);
	}
	free(a->bins);
	for (size_t i = 0; a->out && i < a->nbins; i++) {
		free(a->out[i].ranges);
		free(a->out[i].branches);
	}
	free(a->out);
	free(a->st);
	free(a->drop);
	tc_x86_free(a->x86);
	free(a);
}

static long stream_key(const struct tc_rec *r)
{
	return r->id >= 0 ? r->id : 0x10000L + r->tid;
}

static struct pending *stream(struct tc_branch_profile *a, const struct tc_rec *r)
{
	long key = stream_key(r);
	struct pending *p;

	for (size_t i = 0; i < a->nst; i++)
		if (a->st[i].key == key)
			return &a->st[i];
	if (tc_grow((void **)&a->st, &a->cst, a->nst + 1, sizeof(*a->st)))
		return NULL;
	p = &a->st[a->nst++];
	*p = (struct pending){ .key = key };
	return p;
}

static int binary_of(struct tc_branch_profile *a, const struct tc_images_file *f, size_t *idx)
{
	for (size_t i = 0; i < a->nbins; i++)
		if (!strcmp(a->bins[i].dso, f->dso) && !strcmp(a->bins[i].build_id, f->build_id)) {
			*idx = i;
			return 0;
		}
	if (tc_grow((void **)&a->bins, &a->cbins, a->nbins + 1, sizeof(*a->bins)))
		return -1;
	a->bins[a->nbins] = (struct binary){ .dso = f->dso, .build_id = f->build_id,
					     .base = f->first_load };
	*idx = a->nbins++;
	return 0;
}

static int flush(struct tc_branch_profile *a, struct pending *p)
{
	struct binary *b;
	int rc = 0;

	if (!p->valid)
		return 0;
	b = &a->bins[p->bin];
	p->valid = p->wait_fix = false;
	rc |= map_add(&b->ranges, p->start, p->end);
	if (p->taken)
		rc |= map_add(&b->branches, p->end, p->to);
	return rc;
}

/* Whether the range's last instruction is a direct branch, and its target (0 unknown). */
static bool direct_branch(struct tc_branch_profile *a, const struct tc_rec *r, uint64_t *target)
{
	uint64_t pc = r->end - r->last_size;
	uint8_t b[4] = { 0 };
	enum tc_a64_class c;

	*target = 0;
	if (r->isa == TC_ISA_A64) {
		if (a->o.read(a->o.ctx, r->pid, pc, b, 4) != 4)
			return r->last_type == TC_INSN_JUMP;
		c = tc_a64_classify((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
				    (uint32_t)b[3] << 24, pc, target);
		return c == TC_A64_BRANCH || c == TC_A64_COND;
	}
	if (r->isa == TC_ISA_X86_64 || r->isa == TC_ISA_X86_32) {
		/* direct: call rel32, jmp rel, jcc rel8/rel32, loop/jrcxz (libipt's classes
		 * do not tell direct jumps from indirect ones); no prefixes, the rest of b
		 * zero */
		uint8_t x[16] = { 0 };
		struct tc_x86_insn k;

		if (!r->last_size || a->o.read(a->o.ctx, r->pid, pc, x, 2) < 1 ||
		    (!a->x86 && !(a->x86 = tc_x86_new())))
			return false;
		k = tc_x86_classify(a->x86, x, sizeof(x), r->isa == TC_ISA_X86_64);
		return !k.opcode && (k.kind == TC_X86_CALL || k.kind == TC_X86_JMP ||
				     (k.kind == TC_X86_JCC && (x[0] != 0x0f || r->last_size >= 2)));
	}
	return r->last_type == TC_INSN_JUMP;
}

/* A range without its binary: counted by recorded path. */
static int drop(struct tc_branch_profile *a, const struct tc_rec *r)
{
	const char *dso = a->o.dso ? a->o.dso(a->o.ctx, r->pid, r->start) : NULL;
	struct dropped *d = NULL;

	for (size_t i = 0; i < a->ndrop && !d; i++)
		if (a->drop[i].dso == dso || (dso && a->drop[i].dso && !strcmp(a->drop[i].dso, dso)))
			d = &a->drop[i];
	if (!d) {
		if (tc_grow((void **)&a->drop, &a->cdrop, a->ndrop + 1, sizeof(*a->drop)))
			return -1;
		d = &a->drop[a->ndrop++];
		*d = (struct dropped){ dso, 0, r->start, r->start };
	}
	d->n++;
	d->lo = r->start < d->lo ? r->start : d->lo;
	d->hi = r->start > d->hi ? r->start : d->hi;
	return 0;
}

static int range(struct tc_branch_profile *a, const struct tc_rec *r)
{
	struct pending *p = stream(a, r);
	struct tc_images_file f;
	uint64_t target;
	bool branch;
	size_t bin;
	int rc = 0;

	if (!p)
		return -1;
	a->ranges++;
	if (a->o.file(a->o.ctx, r->pid, r->start, &f))
		return flush(a, p) | drop(a, r);
	if (p->valid && p->wait_fix)
		p->to = f.vaddr;
	rc |= flush(a, p);
	if (binary_of(a, &f, &bin))
		return -1;
	p->valid = true;
	p->bin = bin;
	p->start = f.vaddr;
	p->end = f.vaddr + (r->end - r->last_size - r->start);
	branch = r->last_type != TC_INSN_OTHER;
	p->taken = branch && r->last_taken;
	p->to = 0;
	if (p->taken && direct_branch(a, r, &target)) {
		/* the same file's addresses, as simpleperf takes them */
		p->to = target ? f.vaddr + (target - r->start) : 0;
		p->wait_fix = true;
	}
	return rc;
}

int tc_branch_profile_feed(struct tc_branch_profile *a, const struct tc_rec *r)
{
	struct pending *p;
	int rc = 0;

	switch (r->type) {
	case TC_REC_RANGE:
		rc = range(a, r);
		break;
	case TC_REC_TRACE_ON:
		if (!(p = stream(a, r)))
			rc = -1;
		else
			rc = flush(a, p);
		break;
	default:
		break;
	}
	if (rc)
		a->failed = true;
	return rc;
}


int tc_branch_profile_pair_cmp(const void *x, const void *y)
{
	const struct tc_branch_profile_pair *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return p->b < q->b ? -1 : p->b > q->b;
}

static int cmp_drop(const void *x, const void *y)
{
	const struct dropped *p = x, *q = y;

	return p->n != q->n ? (p->n < q->n ? 1 : -1) : p->lo < q->lo ? -1 : p->lo > q->lo;
}

/* A recorded path for a message: control bytes escaped (\xNN), at most 120 bytes kept. */
static void safe_path(char *out, size_t size, const char *s)
{
	size_t n = 0;

	for (; *s && n + 5 < size && n < 120; s++) {
		unsigned char c = (unsigned char)*s;

		n += (size_t)snprintf(out + n, size - n, c < 0x20 || c == 0x7f ? "\\x%02x" : "%c",
				      c);
	}
	out[n] = 0;
}

uint64_t tc_branch_profile_warn(struct tc_branch_profile *a, const char *format,
				struct tc_diag *d)
{
	char buf[1024];
	size_t len = 0, shown = 0;
	uint64_t n = 0;

	for (size_t i = 0; i < a->ndrop; i++)
		n += a->drop[i].n;
	if (!n)
		return 0;
	qsort(a->drop, a->ndrop, sizeof(*a->drop), cmp_drop);
	buf[0] = 0;
	/* a line, not a list: the most dropped first, the rest counted */
	for (size_t i = 0; i < a->ndrop && len + 200 < sizeof(buf); i++, shown++) {
		const struct dropped *x = &a->drop[i];
		char path[160];
		int k;

		safe_path(path, sizeof(path), x->dso ? x->dso : "no file mapped");
		k = snprintf(buf + len, sizeof(buf) - len, "%s%s (%llu, 0x%llx-0x%llx)",
			     i ? ", " : "", path,
			     (unsigned long long)x->n, (unsigned long long)x->lo,
			     (unsigned long long)x->hi);
		if (k < 0 || (size_t)k >= sizeof(buf) - len)
			break;
		len += (size_t)k;
	}
	if (shown < a->ndrop)
		snprintf(buf + len, sizeof(buf) - len, " and %zu more", a->ndrop - shown);
	tc_diag_add(d, "--format %s: %llu of %llu instruction ranges left out, their binary "
		    "not found (none mapped there, or --symfs DIR has it): %s", format,
		    (unsigned long long)n, (unsigned long long)a->ranges, buf);
	return n;
}

static int cmp_bin(const void *x, const void *y)
{
	return strcmp(((const struct binary *)x)->dso, ((const struct binary *)y)->dso);
}

/* The map's pairs in slot order: how the profiles were always written, so pairs that a
 * writer makes equal (a target below the base becomes 0) keep their order into its sort. */
static struct tc_branch_profile_pair *slot_order(const struct pair_map *m)
{
	struct tc_branch_profile_pair *v = malloc((m->n ? m->n : 1) * sizeof(*v));
	size_t n = 0, pos = 0, i;

	if (!v)
		return NULL;
	while ((i = tc_hash_next(&m->h, &pos)) != TC_HASH_NONE)
		v[n++] = (struct tc_branch_profile_pair){ m->v[i].a, m->v[i].b, m->v[i].n };
	return v;
}

int tc_branch_profile_finish(struct tc_branch_profile *a, const struct tc_branch_profile_bin **bins,
			     size_t *n)
{
	int rc = a->failed ? -1 : 0;

	*bins = NULL;
	*n = 0;
	for (size_t i = 0; i < a->nst; i++)
		rc |= flush(a, &a->st[i]);
	if (a->nbins)
		qsort(a->bins, a->nbins, sizeof(*a->bins), cmp_bin);
	free(a->out);
	if (!(a->out = calloc(a->nbins ? a->nbins : 1, sizeof(*a->out))))
		return -1;
	for (size_t i = 0; i < a->nbins; i++) {
		const struct binary *b = &a->bins[i];
		struct tc_branch_profile_bin *o = &a->out[i];

		*o = (struct tc_branch_profile_bin){ .dso = b->dso, .build_id = b->build_id,
			.base = b->base, .nranges = b->ranges.n, .nbranches = b->branches.n };
		o->ranges = slot_order(&b->ranges);
		o->branches = slot_order(&b->branches);
		if (!o->ranges || !o->branches)
			rc = -1;
	}
	*bins = a->out;
	*n = a->nbins;
	return rc;
}
