/* Tracepoint samples among the decoded trace. Samples are kept as copies of their raw data
 * (tc_perf_data_next's pointers last one record) and rendered only when emitted. */
#include "decoders/events.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/tp_event.h"
#include "lib/perfdata/tracing_data_read.h"
#include "lib/util/diag.h"
#include "lib/util/grow.h"

struct ev {
	uint64_t time, offset, id, ip;
	size_t attr;			/* its index in the file's attrs (for the name) */
	size_t raw_at;			/* in tc_events.raw */
	uint32_t raw_len;
	int cpu, pid, tid;
	bool has_time;
};

struct tc_events {
	void (*emit)(void *ctx, const struct tc_rec *r);
	void *ctx;
	struct ev *evs;
	size_t n, cap, next;		/* evs[next..n) not yet emitted */
	bool sorted;			/* evs[next..n) in time order */
	uint8_t *raw;
	size_t raw_len, raw_cap;
	bool tep_tried;
	struct tep_handle *tep;
	struct tc_tp_event *tpe;
	char *tep_err;			/* why the tracing data could not be read */
	uint64_t emitted, bad;
	char *first_bad;
	bool nomem;			/* the event formats found no memory */
};

struct tc_events *tc_events_new(void (*emit)(void *ctx, const struct tc_rec *r), void *ctx)
{
	struct tc_events *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->emit = emit;
	x->ctx = ctx;
	return x;
}

void tc_events_free(struct tc_events *x)
{
	if (!x)
		return;
	tc_tp_event_free(x->tpe);
	tc_tracing_data_read_free(x->tep);
	free(x->evs);
	free(x->raw);
	free(x->tep_err);
	free(x->first_bad);
	free(x);
}

int tc_events_record(struct tc_events *x, const struct tc_perf_data *pd,
		     const struct tc_perf_data_record *r, struct tc_err *e)
{
	const struct tc_perf_data_sample_id *s = &r->sid;
	struct ev *ev;

	if (r->type != PERF_RECORD_SAMPLE || !r->attr ||
	    r->attr->attr.type != PERF_TYPE_TRACEPOINT || !r->u.sample.has_raw)
		return 0;
	if (tc_grow((void **)&x->evs, &x->cap, x->n + 1, sizeof(*x->evs)) ||
	    tc_grow((void **)&x->raw, &x->raw_cap, x->raw_len + r->u.sample.raw_size + 1, 1))
		return tc_err_set(e, 0, "out of memory for tracepoint samples");
	ev = &x->evs[x->n++];
	*ev = (struct ev){ .time = s->time,
			   .has_time = s->has_time,
			   .offset = r->offset,
			   .ip = r->u.sample.has_ip ? r->u.sample.ip : 0,
			   .id = r->attr->attr.config,
			   .attr = (size_t)(r->attr - tc_perf_data_attr(pd, 0)),
			   .raw_at = x->raw_len,
			   .raw_len = r->u.sample.raw_size,
			   .cpu = s->has_cpu ? (int)s->cpu : -1,
			   .pid = s->has_tid ? (int)s->pid : -1,
			   .tid = s->has_tid ? (int)s->tid : -1 };
	memcpy(x->raw + x->raw_len, r->u.sample.raw, r->u.sample.raw_size);
	x->raw_len += r->u.sample.raw_size;
	x->sorted = false;
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;	/* file order */
}

static void load_formats(struct tc_events *x, const struct tc_perf_data *pd)
{
	const struct tc_perf_data_features *f = tc_perf_data_features(pd);
	struct tc_err e;

	x->tep_tried = true;
	if (!f->tracing_data) {
		x->tep_err = strdup("the file has no tracing data (event formats)");
		return;
	}
	if (tc_tracing_data_read(&x->tep, f->tracing_data, f->tracing_data_len, f->tracing_data_off,
			  tc_perf_data_name(pd), &e)) {
		x->tep_err = strdup(e.msg);
		return;
	}
	if (!(x->tpe = tc_tp_event_new(x->tep)))
		x->nomem = true;
}

static void emit_one(struct tc_events *x, const struct tc_perf_data *pd, const struct ev *ev)
{
	const struct tc_perf_data_attr *a = tc_perf_data_attr(pd, ev->attr);
	struct tc_rec r = { .type = TC_REC_EVENT, .id = -1, .cpu = ev->cpu, .pid = ev->pid,
			    .tid = ev->tid, .offset = ev->offset, .start = ev->ip,
			    .has_time = ev->has_time, .time = ev->time };
	struct tc_err e;

	if (!x->tpe) {
		x->bad++;
		return;
	}
	if (tc_tp_event_render(x->tpe, ev->id, x->raw + ev->raw_at, ev->raw_len, &r, &e)) {
		if (!x->bad++ && asprintf(&x->first_bad, "SAMPLE record at offset 0x%" PRIx64
					  ": %s", ev->offset, e.msg) < 0)
			x->first_bad = NULL;
		return;
	}
	/* perf script's name: the one the file gives the event (EVENT_DESC: what the user
	 * asked for, as for a uprobe), else the format's system:name. */
	if (a && a->name)
		r.name = a->name;
	x->emitted++;
	x->emit(x->ctx, &r);
}

/* Emit the kept events that come before: in the file (offset), or in time (perf time). */
static int flush(struct tc_events *x, const struct tc_perf_data *pd, bool in_time,
		 uint64_t before)
{
	if (x->next == x->n)
		return x->nomem ? -1 : 0;
	if (!x->tep_tried)
		load_formats(x, pd);
	if (x->nomem)
		return -1;
	if (!x->sorted) {
		qsort(x->evs + x->next, x->n - x->next, sizeof(*x->evs), by_time);
		x->sorted = true;
	}
	while (x->next < x->n &&
	       (in_time ? x->evs[x->next].time <= before : x->evs[x->next].offset < before))
		emit_one(x, pd, &x->evs[x->next++]);
	if (x->next == x->n) {	/* all out: the raw copies can go */
		x->n = x->next = 0;
		x->raw_len = 0;
	}
	return 0;
}

int tc_events_flush(struct tc_events *x, const struct tc_perf_data *pd, uint64_t before)
{
	return flush(x, pd, false, before);
}

int tc_events_flush_time(struct tc_events *x, const struct tc_perf_data *pd, uint64_t time)
{
	return flush(x, pd, true, time);
}

bool tc_events_waiting(const struct tc_events *x)
{
	return x->next < x->n;
}

int tc_events_finish(struct tc_events *x, const char *input, struct tc_diag *m)
{
	int problems = 0;

	if (x->tep_err) {
		tc_diag_add(m, "%s: tracepoint samples cannot be printed: %s",
			    input, x->tep_err);
		problems++;
	}
	if (x->bad && x->tpe) {
		tc_diag_add(m, "%s: %" PRIu64 " tracepoint samples do not fit "
			    "their format; the first: %s", input, x->bad,
			    x->first_bad ? x->first_bad : "?");
		problems++;
	}
	if (x->emitted || x->bad)
		tc_diag_status(m, "tracectl decode: %" PRIu64 " tracepoint events, %"
			       PRIu64 " not printed", x->emitted, x->bad);
	return problems;
}
