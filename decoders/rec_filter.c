#include "decoders/rec_filter.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"
#include "lib/util/strv.h"

struct span {
	long lo, hi;
};

struct spans {
	struct span *v;
	size_t n, cap;
};

struct gap {
	int key;
	bool dropped;
};

struct tc_rec_filter {
	bool time;
	uint64_t t_start, t_end;	/* inclusive; 0 / UINT64_MAX where open */
	struct spans cpu, pid, tid;
	struct tc_strv comm, dso, sym;
	bool dso_names_only;		/* --dso chooses profiles, keeps every record */
	const char **dso_list;		/* NULL-terminated view of dso */
	struct tc_rec_filter_src src;
	struct gap *gaps;
	size_t ngaps, cgaps, last_gap;
};

struct tc_rec_filter *tc_rec_filter_new(void)
{
	struct tc_rec_filter *f = calloc(1, sizeof(*f));

	if (f)
		f->t_end = UINT64_MAX;
	return f;
}

void tc_rec_filter_free(struct tc_rec_filter *f)
{
	if (!f)
		return;
	free(f->cpu.v);
	free(f->pid.v);
	free(f->tid.v);
	tc_strv_free(&f->comm);
	tc_strv_free(&f->dso);
	tc_strv_free(&f->sym);
	free(f->dso_list);
	free(f->gaps);
	free(f);
}

/* "secs[.fraction]" into nanoseconds; -1 when it is not one. */
static int parse_secs(const char *s, size_t len, uint64_t *ns)
{
	uint64_t secs = 0, frac = 0;
	size_t i = 0, digits = 0;

	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
		if (secs > (UINT64_MAX / 1000000000 - 9) / 10)
			return -1;
		secs = secs * 10 + (uint64_t)(s[i] - '0');
	}
	if (!digits)
		return -1;
	if (i < len && s[i] == '.') {
		size_t fd = 0;

		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, fd++)
			if (fd < 9)
				frac = frac * 10 + (uint64_t)(s[i] - '0');
		if (!fd)
			return -1;
		for (; fd < 9; fd++)
			frac *= 10;
	}
	if (i != len)
		return -1;
	*ns = secs * 1000000000 + frac;
	return 0;
}

static int parse_time(struct tc_rec_filter *f, const char *arg, struct tc_err *e)
{
	const char *comma = strchr(arg, ',');
	uint64_t a = 0, b = UINT64_MAX;

	if (!comma || strchr(comma + 1, ',') ||
	    (comma > arg && parse_secs(arg, (size_t)(comma - arg), &a)) ||
	    (comma[1] && parse_secs(comma + 1, strlen(comma + 1), &b)) || a > b)
		return tc_err_set(e, 0, "bad --time '%s' (START,END in seconds as perf script "
				  "prints them, e.g. 1234.5,1234.75; either may be left out)", arg);
	f->time = true;
	f->t_start = a;
	f->t_end = b;
	return 0;
}

/* "1,3-5": numbers >= 0 and ranges of them. */
static int parse_spans(struct spans *s, const char *what, const char *arg, struct tc_err *e)
{
	const char *p = arg;

	for (;;) {
		char *end;
		long lo, hi;

		errno = 0;
		lo = strtol(p, &end, 10);
		if (errno || end == p || lo < 0 || *p == '+' || *p == '-')
			goto bad;
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
			if (errno || end == p || hi < lo || *p == '+' || *p == '-')
				goto bad;
		}
		if (lo > INT_MAX || hi > INT_MAX)
			goto bad;
		if (tc_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
			return tc_err_set(e, ENOMEM, "out of memory");
		s->v[s->n++] = (struct span){ lo, hi };
		if (!*end)
			return 0;
		if (*end != ',')
			goto bad;
		p = end + 1;
	}
bad:
	return tc_err_set(e, 0, "bad --%s '%s' (numbers and ranges: 1,3-5)", what, arg);
}

static int parse_names(struct tc_strv *v, const char *what, const char *arg,
		       struct tc_err *e)
{
	const char *p = arg;

	for (;;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		char *name;
		int rc;

		if (!len)
			return tc_err_set(e, 0, "bad --%s '%s' (an empty name)", what, arg);
		if (!(name = strndup(p, len)))
			return tc_err_set(e, ENOMEM, "out of memory");
		rc = tc_strv_push(v, name);
		free(name);
		if (rc)
			return tc_err_set(e, ENOMEM, "out of memory");
		if (!c)
			return 0;
		p = c + 1;
	}
}

int tc_rec_filter_add(struct tc_rec_filter *f, enum tc_rec_filter_key k, const char *arg,
		      struct tc_err *e)
{
	switch (k) {
	case TC_REC_FILTER_TIME: return parse_time(f, arg, e);
	case TC_REC_FILTER_CPU: return parse_spans(&f->cpu, "cpu", arg, e);
	case TC_REC_FILTER_PID: return parse_spans(&f->pid, "pid", arg, e);
	case TC_REC_FILTER_TID: return parse_spans(&f->tid, "tid", arg, e);
	case TC_REC_FILTER_COMM: return parse_names(&f->comm, "comm", arg, e);
	case TC_REC_FILTER_SYM: return parse_names(&f->sym, "sym", arg, e);
	case TC_REC_FILTER_DSO:
		if (parse_names(&f->dso, "dso", arg, e))
			return -1;
		free(f->dso_list);
		if (!(f->dso_list = calloc(f->dso.n + 1, sizeof(*f->dso_list))))
			return tc_err_set(e, ENOMEM, "out of memory");
		for (size_t i = 0; i < f->dso.n; i++)
			f->dso_list[i] = f->dso.v[i];
		return 0;
	}
	return tc_err_set(e, 0, "unknown filter");
}

bool tc_rec_filter_has(const struct tc_rec_filter *f, enum tc_rec_filter_key k)
{
	switch (k) {
	case TC_REC_FILTER_TIME: return f->time;
	case TC_REC_FILTER_CPU: return f->cpu.n;
	case TC_REC_FILTER_PID: return f->pid.n;
	case TC_REC_FILTER_TID: return f->tid.n;
	case TC_REC_FILTER_COMM: return f->comm.n;
	case TC_REC_FILTER_DSO: return f->dso.n;
	case TC_REC_FILTER_SYM: return f->sym.n;
	}
	return false;
}

const char *const *tc_rec_filter_dsos(const struct tc_rec_filter *f)
{
	static const char *const none[] = { NULL };

	return f->dso_list ? (const char *const *)f->dso_list : none;
}

void tc_rec_filter_dso_off(struct tc_rec_filter *f)
{
	f->dso_names_only = true;
}

void tc_rec_filter_source(struct tc_rec_filter *f, const struct tc_rec_filter_src *src)
{
	f->src = *src;
}

bool tc_rec_filter_dso_is(const char *path, const char *name)
{
	const char *base = strrchr(path, '/');

	return !strcmp(path, name) || (base && !strcmp(base + 1, name));
}

const char *tc_rec_filter_comm(const struct tc_rec_filter *f, const struct tc_rec *r)
{
	return f->src.comm && r->tid >= 0 ? f->src.comm(f->src.ctx, r) : NULL;
}

static bool in_spans(const struct spans *s, int v)
{
	if (v < 0)
		return false;
	for (size_t i = 0; i < s->n; i++)
		if (v >= s->v[i].lo && v <= s->v[i].hi)
			return true;
	return false;
}

/* The address a record is at, false where it has none. */
static bool rec_addr(const struct tc_rec *r, uint64_t *addr)
{
	switch (r->type) {
	case TC_REC_RANGE:
	case TC_REC_BRANCH:
	case TC_REC_ADDR_NACC:
		*addr = r->start;
		return r->start != 0;
	default:
		return false;
	}
}

static bool keep_dso(const struct tc_rec_filter *f, const struct tc_rec *r, uint64_t addr)
{
	const char *d = f->src.dso ? f->src.dso(f->src.ctx, r->pid, addr) : NULL;

	for (size_t i = 0; d && i < f->dso.n; i++)
		if (tc_rec_filter_dso_is(d, f->dso.v[i]))
			return true;
	return false;
}

static bool keep_sym(const struct tc_rec_filter *f, const struct tc_rec *r, uint64_t addr)
{
	const char *name = NULL;
	uint64_t start;

	if (!f->src.sym || f->src.sym(f->src.ctx, r->pid, addr, &name, &start) || !name)
		return false;
	return tc_strv_has(&f->sym, name);
}

bool tc_rec_filter_keep(const struct tc_rec_filter *f, const struct tc_rec *r)
{
	uint64_t addr = 0;
	bool has_addr;

	if (!f)
		return true;
	if (f->time && (!r->has_time || r->time < f->t_start || r->time > f->t_end))
		return false;
	if (f->cpu.n && !in_spans(&f->cpu, r->cpu))
		return false;
	if (f->pid.n && !in_spans(&f->pid, r->pid))
		return false;
	if (f->tid.n && !in_spans(&f->tid, r->tid))
		return false;
	if (f->comm.n) {
		const char *c = tc_rec_filter_comm(f, r);

		if (!c || !tc_strv_has(&f->comm, c))
			return false;
	}
	if ((f->dso.n && !f->dso_names_only) || f->sym.n) {
		has_addr = rec_addr(r, &addr);
		if (f->dso.n && !f->dso_names_only && (!has_addr || !keep_dso(f, r, addr)))
			return false;
		if (f->sym.n && (!has_addr || !keep_sym(f, r, addr)))
			return false;
	}
	return true;
}

/* The flow a record belongs to, as the call stacks key threads (lib/analysis/callstack.c). */
static int flow_key(const struct tc_rec *r)
{
	return r->tid >= 0 ? r->tid : r->cpu >= 0 ? -2 - r->cpu : INT_MIN;
}

static struct gap *gap_of(struct tc_rec_filter *f, int key)
{
	if (f->last_gap < f->ngaps && f->gaps[f->last_gap].key == key)
		return &f->gaps[f->last_gap];
	for (size_t i = 0; i < f->ngaps; i++)
		if (f->gaps[i].key == key) {
			f->last_gap = i;
			return &f->gaps[i];
		}
	if (tc_grow((void **)&f->gaps, &f->cgaps, f->ngaps + 1, sizeof(*f->gaps)))
		return NULL;
	f->gaps[f->ngaps] = (struct gap){ .key = key };
	f->last_gap = f->ngaps;
	return &f->gaps[f->ngaps++];
}

int tc_rec_filter_pass(struct tc_rec_filter *f, const struct tc_rec *r,
		       void (*emit)(void *ctx, const struct tc_rec *r), void *ctx)
{
	int key = flow_key(r);
	bool keep = tc_rec_filter_keep(f, r);
	struct gap *g;

	if (!f || key == INT_MIN || r->type == TC_REC_EVENT || r->type == TC_REC_PACKET) {
		if (keep)
			emit(ctx, r);
		return 0;
	}
	if (!(g = gap_of(f, key)))
		return -1;
	if (!keep) {
		g->dropped = true;
		return 0;
	}
	if (g->dropped && r->type != TC_REC_TRACE_ON) {
		struct tc_rec on = { .type = TC_REC_TRACE_ON, .id = r->id, .cpu = r->cpu,
				     .pid = r->pid, .tid = r->tid, .offset = r->offset,
				     .has_time = r->has_time, .time = r->time,
				     .text = "left out by a filter" };

		emit(ctx, &on);
	}
	g->dropped = false;
	emit(ctx, r);
	return 0;
}
