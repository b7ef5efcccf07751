#include "lib/output/listing.h"

#include <inttypes.h>
#include <string.h>

static const char *const field_names[TC_LF_COUNT] = {
	[TC_LF_OFFSET] = "offset", [TC_LF_ID] = "id", [TC_LF_COMM] = "comm",
	[TC_LF_PID] = "pid", [TC_LF_TID] = "tid", [TC_LF_CPU] = "cpu", [TC_LF_TIME] = "time",
	[TC_LF_EVENT] = "event", [TC_LF_FLAGS] = "flags", [TC_LF_INSNCNT] = "insncnt",
	[TC_LF_IP] = "ip", [TC_LF_SYM] = "sym", [TC_LF_SYMOFF] = "symoff", [TC_LF_DSO] = "dso",
	[TC_LF_DSOFF] = "dsoff", [TC_LF_ADDR] = "addr",
};

void tc_listing_init(struct tc_listing *o, FILE *f, bool json)
{
	*o = (struct tc_listing){ .f = f, .json = json };
	tc_json_init(&o->j, f, false);
}

int tc_listing_fields_parse(const char *list, unsigned *fields, char *bad, size_t len)
{
	const char *p = list;

	*fields = 0;
	do {
		size_t n = strcspn(p, ",");
		int k = -1;

		for (int i = 0; i < TC_LF_COUNT && k < 0; i++)
			if (strlen(field_names[i]) == n && !strncmp(p, field_names[i], n))
				k = i;
		if (k < 0) {
			snprintf(bad, len, "%.*s", (int)n, p);
			return -1;
		}
		*fields |= 1u << k;
		p += n;
	} while (*p++ == ',');
	return 0;
}

const char *tc_listing_field_names(void)
{
	static char all[256];

	if (!*all)
		for (int i = 0; i < TC_LF_COUNT; i++)
			snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s%s", i ? "," : "",
				 field_names[i]);
	return all;
}

static bool has(const struct tc_listing *o, enum tc_listing_field f)
{
	return o->fields & (1u << f);
}

/* The symbol and DSO of addr, or false where none is known (no symboliser, address 0 at
 * a trace gap, nothing mapped there). */
static bool lookup(const struct tc_listing *o, int pid, uint64_t addr, struct tc_images_sym *s)
{
	memset(s, 0, sizeof(*s));
	return o->sym && addr && !o->sym(o->sym_ctx, pid, addr, s) && (s->sym || s->dso);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* Does the record have an address to show (ip: an event's where it was sampled), and a
 * second one (addr)? */
static bool ip_of(const struct tc_rec *r, uint64_t *ip)
{
	*ip = r->start;
	return r->type == TC_REC_RANGE || r->type == TC_REC_BRANCH ||
	       r->type == TC_REC_ADDR_NACC || (r->type == TC_REC_EVENT && r->start);
}

static bool addr_of(const struct tc_rec *r, uint64_t *addr)
{
	*addr = r->end;
	return r->type == TC_REC_RANGE || r->type == TC_REC_BRANCH;
}

/* perf's branch flags where the record tells them: a range's last instruction, a branch
 * from or to a gap. "" where not known. */
static const char *flags_of(const struct tc_rec *r)
{
	if (r->type == TC_REC_BRANCH)
		return !r->start ? "tr strt" : !r->end ? "tr end" : "";
	if (r->type != TC_REC_RANGE)
		return "";
	switch ((enum tc_insn_class)r->last_type) {
	case TC_INSN_JUMP:
	case TC_INSN_JUMP_IND: return "jmp";
	case TC_INSN_CALL: return "call";
	case TC_INSN_RET: return "return";
	case TC_INSN_SYSCALL: return "syscall";
	case TC_INSN_EXC_RET: return "sysret";
	default: return "";
	}
}

/* JSON: "sym" ("name+0xoff", or "name" without symoff), "symoff", "dso", "dsoff", each with
 * prefix ("" or "to_"). all: the default listing's keys (every one). */
static void json_sym(const struct tc_listing *o, int pid, uint64_t addr, const char *prefix,
		     bool all)
{
	struct tc_json *j = (struct tc_json *)&o->j;
	struct tc_images_sym s;
	char key[16], buf[512];

	if (!lookup(o, pid, addr, &s))
		return;
	if (s.sym && (all || has(o, TC_LF_SYM))) {
		if (all || has(o, TC_LF_SYMOFF))
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, s.sym, s.sym_off);
		else
			snprintf(buf, sizeof(buf), "%s", s.sym);
		snprintf(key, sizeof(key), "%ssym", prefix);
		tc_json_kstr(j, key, buf);
	}
	if (s.sym && (all || has(o, TC_LF_SYMOFF))) {
		snprintf(key, sizeof(key), "%ssymoff", prefix);
		tc_json_key(j, key);
		tc_json_uint(j, s.sym_off);
	}
	if (s.dso && (all || has(o, TC_LF_DSO))) {
		snprintf(key, sizeof(key), "%sdso", prefix);
		tc_json_kstr(j, key, s.dso);
	}
	if (s.dso && (all || has(o, TC_LF_DSOFF))) {	/* an address: hex, as the others */
		snprintf(key, sizeof(key), "%sdsoff", prefix);
		tc_json_khex(j, key, s.dso_off);
	}
}

void tc_listing_json_place(struct tc_json *j, const struct tc_rec *r)
{
	if (r->id >= 0)
		TC_JSON_KHEX(j, "id", (unsigned)r->id);
	if (r->cpu >= 0)
		TC_JSON_KINT(j, "cpu", r->cpu);
	if (r->pid >= 0)
		TC_JSON_KINT(j, "pid", r->pid);
	if (r->tid >= 0)
		TC_JSON_KINT(j, "tid", r->tid);
	TC_JSON_KINT(j, "offset", (long long)r->offset);
}

static void json_common(struct tc_json *j, const struct tc_rec *r)
{
	TC_JSON_KSTR(j, "type", tc_rec_type_name(r->type));
	tc_listing_json_place(j, r);
	if (r->has_time && r->type != TC_REC_EVENT) {	/* an event's goes after its name */
		tc_json_key(j, "time");
		tc_json_uint(j, r->time);
	}
}

/* EVENT: {"name":..,"time":..,"fields":{..}}; arrays of numbers, strings, integers. */
static void json_fields(struct tc_json *j, const struct tc_rec *r, bool time)
{
	tc_json_kstr(j, "name", r->name);
	if (time && r->has_time) {
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

/* What a record without an address says, after its common keys (both JSON forms). */
static void json_detail(struct tc_json *j, const struct tc_rec *r, bool event_time)
{
	switch (r->type) {
	case TC_REC_PACKET:
	case TC_REC_OTHER:
		tc_json_kstr(j, r->type == TC_REC_PACKET ? "packet" : "name", r->name);
		break;
	case TC_REC_EVENT:
		json_fields(j, r, event_time);
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
}

static void write_json(struct tc_listing *o, const struct tc_rec *r)
{
	struct tc_json *j = &o->j;

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
		json_sym(o, r->pid, r->start, "", true);
		break;
	case TC_REC_BRANCH:
		TC_JSON_KHEX(j, "from", r->start);
		TC_JSON_KHEX(j, "to", r->end);
		json_sym(o, r->pid, r->start, "", true);
		json_sym(o, r->pid, r->end, "to_", true);
		break;
	case TC_REC_ADDR_NACC:
		tc_json_khex(j, "addr", r->start);
		json_sym(o, r->pid, r->start, "", true);
		break;
	default:
		break;
	}
	json_detail(j, r, true);
	tc_json_obj_close(j);
}

/* -F: the chosen keys; "type" always, so that records can be told apart. */
static void write_json_fields(struct tc_listing *o, const struct tc_rec *r)
{
	struct tc_json *j = &o->j;
	const char *comm = o->comm ? o->comm(o->comm_ctx, r) : NULL;
	uint64_t ip, addr;

	tc_json_obj_open(j);
	TC_JSON_KSTR(j, "type", tc_rec_type_name(r->type));
	if (has(o, TC_LF_OFFSET))
		TC_JSON_KINT(j, "offset", (long long)r->offset);
	if (has(o, TC_LF_ID) && r->id >= 0)
		TC_JSON_KHEX(j, "id", (unsigned)r->id);
	if (has(o, TC_LF_COMM) && comm)
		tc_json_kstr(j, "comm", comm);
	if (has(o, TC_LF_PID) && r->pid >= 0)
		TC_JSON_KINT(j, "pid", r->pid);
	if (has(o, TC_LF_TID) && r->tid >= 0)
		TC_JSON_KINT(j, "tid", r->tid);
	if (has(o, TC_LF_CPU) && r->cpu >= 0)
		TC_JSON_KINT(j, "cpu", r->cpu);
	if (has(o, TC_LF_TIME) && r->has_time) {
		tc_json_key(j, "time");
		tc_json_uint(j, r->time);
	}
	if (has(o, TC_LF_FLAGS) && *flags_of(r))
		tc_json_kstr(j, "flags", flags_of(r));
	if (has(o, TC_LF_INSNCNT) && r->type == TC_REC_RANGE)
		TC_JSON_KINT(j, "insncnt", r->insns);
	if (ip_of(r, &ip)) {
		if (has(o, TC_LF_IP))
			TC_JSON_KHEX(j, "ip", ip);
		json_sym(o, r->pid, ip, "", false);
	}
	if (has(o, TC_LF_ADDR) && addr_of(r, &addr)) {
		TC_JSON_KHEX(j, "addr", addr);
		if (r->type == TC_REC_BRANCH)
			json_sym(o, r->pid, addr, "to_", false);
	}
	json_detail(j, r, has(o, TC_LF_TIME));
	tc_json_obj_close(j);
}

/* Default text: " sym+0xoff (dso)", " [file+0xoff] (dso)" without a symbol. */
static void text_sym(const struct tc_listing *o, int pid, uint64_t addr, const char *sep)
{
	struct tc_images_sym s;

	if (!lookup(o, pid, addr, &s))
		return;
	if (s.sym)
		fprintf(o->f, "%s%s+0x%" PRIx64, sep, s.sym, s.sym_off);
	else
		fprintf(o->f, "%s[%s+0x%" PRIx64 "]", sep, base_name(s.dso), s.dso_off);
	if (s.dso)
		fprintf(o->f, " (%s)", s.dso);
}

/* What a record without an address says (both text forms). */
static void text_detail(FILE *f, const struct tc_rec *r)
{
	switch (r->type) {
	case TC_REC_PACKET:
	case TC_REC_OTHER:
		fprintf(f, " %s", r->name ? r->name : "?");
		break;
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
}

static void write_text(struct tc_listing *o, const struct tc_rec *r)
{
	FILE *f = o->f;

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
		text_sym(o, r->pid, r->start, "  ");
		break;
	case TC_REC_BRANCH:
		fprintf(f, " 0x%" PRIx64, r->start);
		text_sym(o, r->pid, r->start, " ");
		fprintf(f, " -> 0x%" PRIx64, r->end);
		text_sym(o, r->pid, r->end, " ");
		break;
	case TC_REC_ADDR_NACC:
		fprintf(f, " 0x%" PRIx64, r->start);
		text_sym(o, r->pid, r->start, " ");
		break;
	case TC_REC_EVENT:
		/* perf script's "secs.nsecs: name: text" */
		if (r->has_time)
			fprintf(f, " %" PRIu64 ".%09" PRIu64, r->time / 1000000000,
				r->time % 1000000000);
		fprintf(f, " %s: %s\n", r->name ? r->name : "?", r->text ? r->text : "");
		return;
	default:
		break;
	}
	text_detail(f, r);
	fputc('\n', f);
}

/* -F text, perf script's layout: " ip sym+0xoff (dso)", "[unknown]" where not known. */
static void text_fields_sym(const struct tc_listing *o, int pid, uint64_t addr)
{
	struct tc_images_sym s;
	bool found = lookup(o, pid, addr, &s);

	if (has(o, TC_LF_SYM)) {
		if (found && s.sym) {
			fprintf(o->f, " %s", s.sym);
			if (has(o, TC_LF_SYMOFF))
				fprintf(o->f, "+0x%" PRIx64, s.sym_off);
		} else {
			fputs(" [unknown]", o->f);
		}
	}
	if (has(o, TC_LF_DSO) || has(o, TC_LF_DSOFF)) {
		if (!found || !s.dso)
			fputs(" ([unknown])", o->f);
		else if (has(o, TC_LF_DSOFF))
			fprintf(o->f, " (%s+0x%" PRIx64 ")", s.dso, s.dso_off);
		else
			fprintf(o->f, " (%s)", s.dso);
	}
}

static void write_text_fields(struct tc_listing *o, const struct tc_rec *r)
{
	FILE *f = o->f;
	const char *comm = NULL;
	uint64_t ip, addr;
	bool any_ip = ip_of(r, &ip);

	if (has(o, TC_LF_COMM))
		comm = o->comm ? o->comm(o->comm_ctx, r) : NULL;
	if (has(o, TC_LF_OFFSET))
		fprintf(f, "%10" PRIx64, r->offset);
	if (has(o, TC_LF_ID))
		r->id >= 0 ? fprintf(f, " id 0x%02x", r->id) : fprintf(f, " id -");
	if (has(o, TC_LF_COMM))
		fprintf(f, " %16s", comm ? comm : "[unknown]");
	if (has(o, TC_LF_PID) && has(o, TC_LF_TID))
		fprintf(f, " %7d/%-7d", r->pid, r->tid);
	else if (has(o, TC_LF_PID) || has(o, TC_LF_TID))
		fprintf(f, " %7d", has(o, TC_LF_PID) ? r->pid : r->tid);
	if (has(o, TC_LF_CPU))
		fprintf(f, " [%03d]", r->cpu);
	if (has(o, TC_LF_TIME)) {
		if (r->has_time)
			fprintf(f, " %5" PRIu64 ".%09" PRIu64 ":", r->time / 1000000000,
				r->time % 1000000000);
		else
			fputs(" -:", f);
	}
	if (has(o, TC_LF_EVENT) || !(any_ip || r->type == TC_REC_EVENT))	/* else implied */
		fprintf(f, " %s:", tc_rec_type_name(r->type));
	if (has(o, TC_LF_FLAGS))
		fprintf(f, " %10s", flags_of(r));
	if (has(o, TC_LF_INSNCNT))
		r->type == TC_REC_RANGE ? fprintf(f, " %5u", r->insns) : fprintf(f, " %5s", "");
	if (any_ip) {
		if (has(o, TC_LF_IP))
			fprintf(f, " %16" PRIx64, ip);
		text_fields_sym(o, r->pid, ip);
		if (has(o, TC_LF_ADDR) && addr_of(r, &addr)) {
			fprintf(f, r->type == TC_REC_BRANCH ? " => %16" PRIx64 : " .. %16" PRIx64,
				addr);
			if (r->type == TC_REC_BRANCH)
				text_fields_sym(o, r->pid, addr);
		}
	}
	if (r->type == TC_REC_EVENT) {
		fprintf(f, " %s: %s", r->name ? r->name : "?", r->text ? r->text : "");
	} else {
		text_detail(f, r);
	}
	fputc('\n', f);
}

void tc_listing_write(struct tc_listing *o, const struct tc_rec *r)
{
	if (o->fields)
		(o->json ? write_json_fields : write_text_fields)(o, r);
	else
		(o->json ? write_json : write_text)(o, r);
}
