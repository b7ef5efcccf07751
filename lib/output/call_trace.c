#include "lib/output/call_trace.h"

#include <inttypes.h>
#include <string.h>

void tc_call_trace_init(struct tc_call_trace *c, FILE *f, bool json)
{
	*c = (struct tc_call_trace){ .f = f, .json = json };
	tc_json_init(&c->j, f, false);
}

/* The function's name, else "[dso+0xoff]", else the address. */
static const char *name_of(struct tc_call_trace *c, const struct tc_rec *r, uint64_t addr,
			   char *buf, size_t len)
{
	const char *name = NULL;
	uint64_t start;
	struct tc_images_sym s;

	if (c->sym && !c->sym(c->ctx, r->pid, addr, &name, &start) && name)
		return name;
	if (c->symbolize && !c->symbolize(c->ctx, r->pid, addr, &s) && s.dso) {
		const char *base = strrchr(s.dso, '/');

		snprintf(buf, len, "[%s+0x%" PRIx64 "]", base ? base + 1 : s.dso, s.dso_off);
		return buf;
	}
	snprintf(buf, len, "0x%" PRIx64, addr);
	return buf;
}

void tc_call_trace_write(struct tc_call_trace *c, const struct tc_rec *r)
{
	bool call = r->last_type == TC_INSN_CALL;
	char buf[256];
	const char *name;
	unsigned depth = r->value > 200 ? 200 : (unsigned)r->value;

	if (r->type != TC_REC_BRANCH || (r->last_type != TC_INSN_CALL &&
					 r->last_type != TC_INSN_RET)) {
		if (c->other)
			tc_listing_write(c->other, r);
		return;
	}
	name = call ? (r->end ? name_of(c, r, r->end, buf, sizeof(buf)) : "?")
		    : name_of(c, r, r->start, buf, sizeof(buf));
	if (c->json) {
		struct tc_json *j = &c->j;

		tc_json_obj_open(j);
		TC_JSON_KSTR(j, "type", call ? "call" : "return");
		tc_listing_json_place(j, r);
		if (r->has_time) {
			TC_JSON_KEY(j, "time");
			tc_json_uint(j, r->time);
		}
		TC_JSON_KINT(j, "depth", (long long)r->value);
		TC_JSON_KHEX(j, "from", r->start);
		TC_JSON_KHEX(j, "to", r->end);
		TC_JSON_KSTR(j, "sym", name);
		tc_json_obj_close(j);
		return;
	}
	fprintf(c->f, "%10" PRIx64 " ", r->offset);
	if (r->id >= 0)
		fprintf(c->f, " id 0x%02x", r->id);
	if (r->cpu >= 0)
		fprintf(c->f, " cpu %d", r->cpu);
	if (r->tid >= 0 || r->pid >= 0)
		fprintf(c->f, " %d/%d", r->pid, r->tid);
	if (r->has_time)
		fprintf(c->f, " %" PRIu64 ".%09" PRIu64, r->time / 1000000000,
			r->time % 1000000000);
	fprintf(c->f, "  %-6s %*s%s\n", call ? "call" : "return", (int)(2 * depth), "", name);
}
