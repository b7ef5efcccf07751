#include "lib/output/listing.h"

#include <inttypes.h>

void tc_listing_init(struct tc_listing *o, FILE *f, bool json)
{
	*o = (struct tc_listing){ .f = f, .json = json };
	tc_json_init(&o->j, f, false);
}

static void json_common(struct tc_json *j, const struct tc_rec *r)
{
	TC_JSON_KSTR(j, "type", tc_rec_type_name(r->type));
	if (r->id >= 0)
		TC_JSON_KHEX(j, "id", (unsigned)r->id);
	if (r->cpu >= 0)
		TC_JSON_KINT(j, "cpu", r->cpu);
	if (r->pid >= 0)
		TC_JSON_KINT(j, "pid", r->pid);
	if (r->tid >= 0)
		TC_JSON_KINT(j, "tid", r->tid);
	TC_JSON_KINT(j, "offset", (long long)r->offset);
	if (r->has_time && r->type != TC_REC_EVENT) {	/* an event's goes after its name */
		tc_json_key(j, "time");
		tc_json_uint(j, r->time);
	}
}

/* EVENT: {"name":..,"time":..,"fields":{..}}; arrays of numbers, strings, integers. */
static void json_fields(struct tc_json *j, const struct tc_rec *r)
{
	tc_json_kstr(j, "name", r->name);
	if (r->has_time) {
		tc_json_key(j, "time");
		tc_json_uint(j, r->time);
	}
	tc_json_key(j, "fields");
	tc_json_obj_open(j);
	for (size_t i = 0; i < r->nfields; i++) {
		const struct tc_rec_field *f = &r->fields[i];

		tc_json_key(j, f->name);
		switch (f->kind) {
		case TC_FIELD_INT: tc_json_int(j, f->i); break;
		case TC_FIELD_UINT: tc_json_uint(j, f->u); break;
		case TC_FIELD_STR: tc_json_str(j, f->s); break;
		case TC_FIELD_ARRAY:
			tc_json_arr_open(j);
			for (size_t k = 0; k < f->n; k++)
				tc_json_uint(j, f->arr[k]);
			tc_json_arr_close(j);
			break;
		}
	}
	tc_json_obj_close(j);
}

static void write_json(struct tc_listing *o, const struct tc_rec *r)
{
	struct tc_json *j = &o->j;
	char sym[256];

	tc_json_obj_open(j);
	json_common(j, r);
	switch (r->type) {
	case TC_REC_RANGE:
		TC_JSON_KHEX(j, "start", r->start);
		TC_JSON_KHEX(j, "end", r->end);
		TC_JSON_KINT(j, "insns", r->insns);
		TC_JSON_KSTR(j, "isa", tc_rec_isa_name(r->isa));
		if (r->last) {
			char last[2] = { r->last, 0 };

			tc_json_kstr(j, "last", last);
		}
		if (o->sym && !o->sym(o->sym_ctx, r->start, sym, sizeof(sym)))
			tc_json_kstr(j, "sym", sym);
		break;
	case TC_REC_BRANCH:
		TC_JSON_KHEX(j, "from", r->start);
		TC_JSON_KHEX(j, "to", r->end);
		break;
	case TC_REC_PACKET:
	case TC_REC_OTHER:
		tc_json_kstr(j, r->type == TC_REC_PACKET ? "packet" : "name", r->name);
		break;
	case TC_REC_ADDR_NACC:
		tc_json_khex(j, "addr", r->start);
		break;
	case TC_REC_EVENT:
		json_fields(j, r);
		break;
	case TC_REC_TIMESTAMP:
	case TC_REC_EXCEPTION:
	case TC_REC_CONTEXT:
		tc_json_key(j, "value");
		tc_json_uint(j, r->value);
		break;
	default:
		break;
	}
	if (r->text && *r->text)
		tc_json_kstr(j, "text", r->text);
	tc_json_obj_close(j);
}

static void write_text(struct tc_listing *o, const struct tc_rec *r)
{
	FILE *f = o->f;
	char sym[256];

	fprintf(f, "%10" PRIx64 " ", r->offset);
	if (r->id >= 0)
		fprintf(f, " id 0x%02x", r->id);
	if (r->cpu >= 0)
		fprintf(f, " cpu %d", r->cpu);
	/* Events always, as perf script: the kernel writes -1 for a task already gone (the
	 * thread, or its process too). */
	if (r->tid >= 0 || r->pid >= 0 || r->type == TC_REC_EVENT)
		fprintf(f, " %d/%d", r->pid, r->tid);
	fprintf(f, "  %-9s", tc_rec_type_name(r->type));
	switch (r->type) {
	case TC_REC_RANGE:
		fprintf(f, " 0x%" PRIx64 "-0x%" PRIx64 " %u %s %c", r->start, r->end, r->insns,
			tc_rec_isa_name(r->isa), r->last ? r->last : '?');
		if (o->sym && !o->sym(o->sym_ctx, r->start, sym, sizeof(sym)))
			fprintf(f, "  %s", sym);
		break;
	case TC_REC_BRANCH:
		fprintf(f, " 0x%" PRIx64 " -> 0x%" PRIx64, r->start, r->end);
		break;
	case TC_REC_PACKET:
	case TC_REC_OTHER:
		fprintf(f, " %s", r->name ? r->name : "?");
		break;
	case TC_REC_ADDR_NACC:
		fprintf(f, " 0x%" PRIx64, r->start);
		break;
	case TC_REC_EVENT:
		/* perf script's "secs.nsecs: name: text" */
		if (r->has_time)
			fprintf(f, " %" PRIu64 ".%09" PRIu64, r->time / 1000000000,
				r->time % 1000000000);
		fprintf(f, " %s: %s\n", r->name ? r->name : "?", r->text ? r->text : "");
		return;
	case TC_REC_TIMESTAMP:
	case TC_REC_EXCEPTION:
	case TC_REC_CONTEXT:
		fprintf(f, " 0x%" PRIx64, r->value);
		break;
	default:
		break;
	}
	if (r->text && *r->text)
		fprintf(f, " (%s)", r->text);
	fputc('\n', f);
}

void tc_listing_write(struct tc_listing *o, const struct tc_rec *r)
{
	if (o->json)
		write_json(o, r);
	else
		write_text(o, r);
}
