/* Tracepoint samples through libtraceevent. Before libtraceevent sees a sample, its data
 * is checked against the format: every static field inside it, every __data_loc /
 * __rel_loc span inside it, so that a short or corrupt sample cannot make the printer read
 * past the copy. */
#include "decoders/tp_event.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "lib/util/grow.h"

struct tc_tp_event {
	struct tep_handle *tep;
	struct trace_seq seq;
	uint64_t *data;			/* the sample, 8-byte aligned */
	size_t cap_data;
	struct tc_rec_field *fields;
	size_t cap_fields;
	char *strs;			/* the fields' strings, NUL-terminated */
	size_t cap_strs;
	uint64_t *arrs;			/* the fields' array elements */
	size_t cap_arrs;
	char name[256];
};

struct tc_tp_event *tc_tp_event_new(struct tep_handle *tep)
{
	struct tc_tp_event *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->tep = tep;
	trace_seq_init(&t->seq);
	return t;
}

void tc_tp_event_free(struct tc_tp_event *t)
{
	if (!t)
		return;
	trace_seq_destroy(&t->seq);
	free(t->data);
	free(t->fields);
	free(t->strs);
	free(t->arrs);
	free(t);
}

/* Where a field's bytes are in a sample of len bytes: static fields at their offset,
 * __data_loc at (offset, length) from its u32, __rel_loc the same from the field's end. */
static int span(struct tc_tp_event *t, const struct tep_format_field *f, const uint8_t *d,
		size_t len, size_t *at, size_t *n)
{
	if ((size_t)f->offset > len || (size_t)f->size > len - (size_t)f->offset ||
	    f->offset < 0 || f->size < 0)
		return -1;
	*at = (size_t)f->offset;
	*n = (size_t)f->size;
	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		unsigned long long v;

		if (f->size != 4)
			return -1;
		v = tep_read_number(t->tep, d + f->offset, 4);
		*at = (v & 0xffff) + (f->flags & TEP_FIELD_IS_RELATIVE ? (size_t)f->offset + 4 : 0);
		*n = (size_t)(v >> 16);
		if (*at > len || *n > len - *at)
			return -1;
	}
	return 0;
}

static bool is_text(const struct tep_format_field *f)
{
	return (f->flags & TEP_FIELD_IS_STRING) ||
	       ((f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) && f->type &&
		strstr(f->type, "char") && f->elementsize <= 1);
}

static size_t elem_size(const struct tep_format_field *f, size_t n)
{
	size_t es = f->elementsize;

	if (!(f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)))
		es = n;		/* a scalar that is no machine word: its bytes */
	return es == 1 || es == 2 || es == 4 || es == 8 ? es : 1;
}

/* Check every field and size the pools; -1 names the field at fault in e. */
static int check(struct tc_tp_event *t, const struct tep_event *ev, const uint8_t *d, size_t len,
		 size_t *nf, size_t *nstr, size_t *narr, struct tc_err *e)
{
	*nf = *nstr = *narr = 0;
	for (const struct tep_format_field *f = ev->format.common_fields; f; f = f->next) {
		size_t at, n;

		if (span(t, f, d, len, &at, &n))
			return tc_err_set(e, EINVAL, "%s:%s: raw data of %zu bytes does not hold "
					  "field %s", ev->system, ev->name, len, f->name);
	}
	for (const struct tep_format_field *f = ev->format.fields; f; f = f->next) {
		size_t at, n;

		if (span(t, f, d, len, &at, &n))
			return tc_err_set(e, EINVAL, "%s:%s: raw data of %zu bytes does not hold "
					  "field %s", ev->system, ev->name, len, f->name);
		(*nf)++;
		if (is_text(f))
			*nstr += n + 1;
		else if ((f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) ||
			 !(n == 1 || n == 2 || n == 4 || n == 8))
			*narr += n / elem_size(f, n);
	}
	return 0;
}

static void fill(struct tc_tp_event *t, const struct tep_event *ev, const uint8_t *d, size_t len)
{
	size_t i = 0, si = 0, ai = 0;

	for (const struct tep_format_field *f = ev->format.fields; f; f = f->next, i++) {
		struct tc_rec_field *o = &t->fields[i];
		size_t at, n, es;

		span(t, f, d, len, &at, &n);
		memset(o, 0, sizeof(*o));
		o->name = f->name;
		if (is_text(f)) {
			size_t sl = strnlen((const char *)d + at, n);

			memcpy(t->strs + si, d + at, sl);
			t->strs[si + sl] = 0;
			o->kind = TC_FIELD_STR;
			o->s = t->strs + si;
			si += n + 1;
		} else if (!(f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) &&
			   (n == 1 || n == 2 || n == 4 || n == 8)) {
			uint64_t v = tep_read_number(t->tep, d + at, (int)n);

			if (f->flags & TEP_FIELD_IS_SIGNED) {
				unsigned sh = 64 - 8 * (unsigned)n;

				o->kind = TC_FIELD_INT;
				/* sign-extend from the field's width */
				o->i = sh ? (int64_t)(v << sh) >> sh : (int64_t)v;
			} else {
				o->kind = TC_FIELD_UINT;
				o->u = v;
			}
		} else {
			es = elem_size(f, n);
			o->kind = TC_FIELD_ARRAY;
			o->arr = t->arrs + ai;
			o->n = n / es;
			for (size_t k = 0; k < o->n; k++)
				t->arrs[ai + k] = tep_read_number(t->tep, d + at + k * es, (int)es);
			ai += o->n;
		}
	}
}

int tc_tp_event_render(struct tc_tp_event *t, uint64_t id, const uint8_t *raw, size_t len,
		  struct tc_rec *r, struct tc_err *e)
{
	struct tep_event *ev = id <= INT32_MAX ? tep_find_event(t->tep, (int)id) : NULL;
	struct tep_record rec;
	size_t nf, nstr, narr;

	if (!ev)
		return tc_err_set(e, ENOENT, "tracepoint id %llu has no format in the tracing "
				  "data", (unsigned long long)id);
	if (len > INT32_MAX)
		return tc_err_set(e, EINVAL, "%s:%s: raw data of %zu bytes", ev->system, ev->name,
				  len);
	/* An aligned copy: libtraceevent reads words in place. */
	if (tc_grow((void **)&t->data, &t->cap_data, len / 8 + 1, 8))
		return tc_err_set(e, ENOMEM, "out of memory for a tracepoint sample");
	memcpy(t->data, raw, len);
	if (check(t, ev, (const uint8_t *)t->data, len, &nf, &nstr, &narr, e))
		return -1;
	if (tc_grow((void **)&t->fields, &t->cap_fields, nf + 1, sizeof(*t->fields)) ||
	    tc_grow((void **)&t->strs, &t->cap_strs, nstr + 1, 1) ||
	    tc_grow((void **)&t->arrs, &t->cap_arrs, narr + 1, sizeof(*t->arrs)))
		return tc_err_set(e, ENOMEM, "out of memory for a tracepoint sample");
	fill(t, ev, (const uint8_t *)t->data, len);
	memset(&rec, 0, sizeof(rec));
	rec.ts = r->time;
	rec.cpu = r->cpu;
	rec.size = (int)len;
	rec.data = t->data;
	trace_seq_reset(&t->seq);
	tep_print_event(t->tep, &t->seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&t->seq);
	snprintf(t->name, sizeof(t->name), "%s:%s", ev->system, ev->name);
	r->type = TC_REC_EVENT;
	r->name = t->name;
	r->text = t->seq.buffer;
	r->fields = t->fields;
	r->nfields = nf;
	return 0;
}
