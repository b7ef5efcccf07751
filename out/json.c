#include "json.h"

#include <math.h>

static void newline(struct tc_json *j)
{
	if (!j->pretty)
		return;
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

/* Separator and indentation before any value or key. */
static void before_value(struct tc_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth == 0)
		return;
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
	newline(j);
}

void tc_json_init(struct tc_json *j, FILE *f, bool pretty)
{
	*j = (struct tc_json){ .f = f, .pretty = pretty };
}

static void open_(struct tc_json *j, char c)
{
	before_value(j);
	fputc(c, j->f);
	if (j->depth + 1 < TC_JSON_MAX_DEPTH)
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_(struct tc_json *j, char c)
{
	bool had = j->need_comma[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (had)
		newline(j);
	fputc(c, j->f);
	if (j->depth == 0)
		fputc('\n', j->f);
}

void tc_json_obj_open(struct tc_json *j) { open_(j, '{'); }
void tc_json_obj_close(struct tc_json *j) { close_(j, '}'); }
void tc_json_arr_open(struct tc_json *j) { open_(j, '['); }
void tc_json_arr_close(struct tc_json *j) { close_(j, ']'); }

static void write_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void tc_json_key(struct tc_json *j, const char *key)
{
	before_value(j);
	write_string(j->f, key);
	fputs(j->pretty ? ": " : ":", j->f);
	j->after_key = true;
}

void tc_json_str(struct tc_json *j, const char *s)
{
	if (!s) {
		tc_json_null(j);
		return;
	}
	before_value(j);
	write_string(j->f, s);
}

void tc_json_int(struct tc_json *j, long long v)
{
	before_value(j);
	fprintf(j->f, "%lld", v);
}

void tc_json_uint(struct tc_json *j, unsigned long long v)
{
	before_value(j);
	fprintf(j->f, "%llu", v);
}

void tc_json_hex(struct tc_json *j, unsigned long long v)
{
	before_value(j);
	fprintf(j->f, "\"0x%llx\"", v);
}

void tc_json_bool(struct tc_json *j, bool v)
{
	before_value(j);
	fputs(v ? "true" : "false", j->f);
}

void tc_json_double(struct tc_json *j, double v)
{
	if (!isfinite(v)) {
		tc_json_null(j);
		return;
	}
	before_value(j);
	fprintf(j->f, "%.6g", v);
}

void tc_json_null(struct tc_json *j)
{
	before_value(j);
	fputs("null", j->f);
}

void tc_json_kstr(struct tc_json *j, const char *k, const char *s) { tc_json_key(j, k); tc_json_str(j, s); }
void tc_json_kint(struct tc_json *j, const char *k, long long v) { tc_json_key(j, k); tc_json_int(j, v); }
void tc_json_khex(struct tc_json *j, const char *k, unsigned long long v) { tc_json_key(j, k); tc_json_hex(j, v); }
void tc_json_kbool(struct tc_json *j, const char *k, bool v) { tc_json_key(j, k); tc_json_bool(j, v); }
