/* perf's tracing data into libtraceevent (layout in lib/perfdata/tracing_data_read.h). Every size read
 * from the input is checked against the bytes left before anything is copied or parsed. */
#include "lib/perfdata/tracing_data_read.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

struct rd {
	const uint8_t *p;
	size_t len, at;
	uint64_t off;		/* input offset of p[0] */
	const char *name;
	bool swap;		/* file written big-endian */
};

static int bad(struct rd *r, struct tc_err *e, const char *what)
{
	return tc_err_set(e, EINVAL, "%s: tracing data at offset 0x%llx: %s", r->name,
			  (unsigned long long)(r->off + r->at), what);
}

static int need(struct rd *r, uint64_t n, const char *what, struct tc_err *e)
{
	char m[160];

	if (n <= r->len - r->at)
		return 0;
	snprintf(m, sizeof(m), "%s needs 0x%llx bytes, only 0x%zx are left", what,
		 (unsigned long long)n, r->len - r->at);
	return bad(r, e, m);
}

static int get_u32(struct rd *r, const char *what, uint32_t *v, struct tc_err *e)
{
	if (need(r, 4, what, e))
		return -1;
	memcpy(v, r->p + r->at, 4);
	if (r->swap)
		*v = __builtin_bswap32(*v);
	r->at += 4;
	return 0;
}

static int get_u64(struct rd *r, const char *what, uint64_t *v, struct tc_err *e)
{
	if (need(r, 8, what, e))
		return -1;
	memcpy(v, r->p + r->at, 8);
	if (r->swap)
		*v = __builtin_bswap64(*v);
	r->at += 8;
	return 0;
}

/* A NUL-terminated string in place; *s points into the input. */
static int get_str(struct rd *r, const char *what, const char **s, struct tc_err *e)
{
	const uint8_t *z = memchr(r->p + r->at, 0, r->len - r->at);
	char m[96];

	if (!z) {
		snprintf(m, sizeof(m), "%s has no terminating NUL", what);
		return bad(r, e, m);
	}
	*s = (const char *)r->p + r->at;
	r->at = (size_t)(z - r->p) + 1;
	return 0;
}

/* n bytes as a NUL-terminated copy (libtraceevent's text parsers want one). */
static int get_text(struct rd *r, uint64_t n, const char *what, char **out, struct tc_err *e)
{
	if (need(r, n, what, e))
		return -1;
	if (!(*out = malloc(n + 1)))
		return tc_err_set(e, ENOMEM, "out of memory for the tracing data");
	memcpy(*out, r->p + r->at, n);
	(*out)[n] = 0;
	r->at += n;
	return 0;
}

static int expect_tag(struct rd *r, const char *tag, struct tc_err *e)
{
	size_t n = strlen(tag) + 1;
	char m[96];

	if (r->len - r->at < n || memcmp(r->p + r->at, tag, n)) {
		snprintf(m, sizeof(m), "no \"%s\" tag", tag);
		return bad(r, e, m);
	}
	r->at += n;
	return 0;
}

static int read_header_page(struct rd *r, struct tep_handle *tep, struct tc_err *e)
{
	uint64_t n;
	char *text;
	int ret;

	if (expect_tag(r, "header_page", e) || get_u64(r, "header_page size", &n, e) ||
	    get_text(r, n, "header_page", &text, e))
		return -1;
	/* The page header's commit field is a kernel long: it, not the file's claim, gives
	 * the long size when it parses (perf does the same). */
	ret = tep ? tep_parse_header_page(tep, text, (unsigned long)n, tep_get_long_size(tep)) : -1;
	free(text);
	if (!ret)
		tep_set_long_size(tep, tep_get_header_page_size(tep));
	if (expect_tag(r, "header_event", e) || get_u64(r, "header_event size", &n, e) ||
	    need(r, n, "header_event", e))
		return -1;
	r->at += n;	/* the event header of old kernels: nothing to read now */
	return 0;
}

/* Is the identifier at p (length n) a field of the format text? */
static bool has_field(const char *text, const char *p, size_t n)
{
	for (const char *l = strstr(text, "field:"); l; l = strstr(l + 1, "field:")) {
		const char *semi = strchr(l, ';'), *end;

		if (!semi)
			return false;
		end = semi;
		if (end > l && end[-1] == ']')	/* an array: the name is before "[...]" */
			while (end > l && *end != '[')
				end--;
		if ((size_t)(end - l) > n && !memcmp(end - n, p, n)) {
			char before = *(end - n - 1);

			if (!isalnum((unsigned char)before) && before != '_')
				return true;
		}
	}
	return false;
}

/* libtraceevent 1.7.1 dereferences NULL parsing a print fmt that names a field the format
 * does not have (found by fuzzing): refuse such a format first. */
static int check_format(struct rd *r, const char *text, size_t len, size_t at,
			struct tc_err *e)
{
	const char *pf = strstr(text, "print fmt:");

	/* The kernel writes formats in ASCII; libtraceevent's tokenizer crashes on some
	 * other bytes (a non-ASCII array size, found by fuzzing). */
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if ((c < 0x20 && c != '\t' && c != '\n') || c > 0x7e) {
			r->at = at + i;
			return bad(r, e, "event format holds a byte that is not printable ASCII");
		}
	}
	for (const char *p = pf; p && (p = strstr(p, "REC->")); ) {
		size_t n = 0;

		p += 5;
		while (isalnum((unsigned char)p[n]) || p[n] == '_')
			n++;
		if (!n || !has_field(text, p, n)) {
			char m[128];

			r->at = at;
			snprintf(m, sizeof(m), "event format's print fmt names field \"%.*s\" that "
				 "it does not define", (int)(n < 40 ? n : 40), p);
			return bad(r, e, m);
		}
		p += n;
	}
	return 0;
}

/* count formats of u64 size + text each, for one system. */
static int read_formats(struct rd *r, struct tep_handle *tep, const char *sys, uint32_t count,
			struct tc_err *e)
{
	for (uint32_t i = 0; i < count; i++) {
		uint64_t n;
		size_t at;
		char *text;

		if (get_u64(r, "event format size", &n, e))
			return -1;
		at = r->at;
		if (get_text(r, n, "event format", &text, e))
			return -1;
		if (check_format(r, text, (size_t)n, at, e)) {
			free(text);
			return -1;
		}
		/* A format libtraceevent cannot parse leaves its event unknown: its samples
		 * then say so, the rest still print. */
		if (tep)
			tep_parse_event(tep, text, (unsigned long)n, sys);
		free(text);
	}
	return 0;
}

static int read_events(struct rd *r, struct tep_handle *tep, struct tc_err *e)
{
	uint32_t count, systems;

	if (get_u32(r, "ftrace format count", &count, e) ||
	    read_formats(r, tep, "ftrace", count, e) ||
	    get_u32(r, "system count", &systems, e))
		return -1;
	for (uint32_t s = 0; s < systems; s++) {
		const char *sys = NULL;

		if (get_str(r, "system name", &sys, e) ||
		    get_u32(r, "event format count", &count, e) ||
		    read_formats(r, tep, sys, count, e))
			return -1;
	}
	return 0;
}

/* libtraceevent 1.7.1 reads before a printk format it is given without its quotes (found
 * by fuzzing): every line must be the kernel's `0xADDR : "FORMAT"`. at: the text's offset. */
static int check_printk(struct rd *r, const char *text, size_t at, struct tc_err *e)
{
	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n'), *end = nl ? nl : l + strlen(l);
		const char *colon = memchr(l, ':', (size_t)(end - l));

		if (end > l && (strncmp(l, "0x", 2) || !colon || end - colon < 4 ||
				colon[1] != ' ' || colon[2] != '"' || end[-1] != '"')) {
			r->at = at + (size_t)(l - text);
			return bad(r, e, "printk format line is not 0xADDR : \"FORMAT\"");
		}
		l = nl ? nl + 1 : end;
	}
	return 0;
}

/* kallsyms (u32 size; perf since 5.x writes 0), printk formats (u32), saved cmdlines
 * (u64, from version 0.6). */
static int read_tables(struct rd *r, struct tep_handle *tep, bool cmdlines, struct tc_err *e)
{
	uint32_t n32;
	uint64_t n64;
	char *text;
	int ret = 0;

	if (get_u32(r, "kallsyms size", &n32, e) || get_text(r, n32, "kallsyms", &text, e))
		return -1;
	if (n32 && tep)
		ret = tep_parse_kallsyms(tep, text);
	free(text);
	if (ret)
		return bad(r, e, "kallsyms could not be parsed");
	if (get_u32(r, "printk formats size", &n32, e) ||
	    get_text(r, n32, "printk formats", &text, e))
		return -1;
	if (check_printk(r, text, r->at - n32, e)) {
		free(text);
		return -1;
	}
	if (n32 && tep)
		ret = tep_parse_printk_formats(tep, text);
	free(text);
	if (ret)
		return bad(r, e, "printk formats could not be parsed");
	if (!cmdlines)
		return 0;
	if (get_u64(r, "saved cmdlines size", &n64, e) ||
	    get_text(r, n64, "saved cmdlines", &text, e))
		return -1;
	if (n64 && tep)
		ret = tep_parse_saved_cmdlines(tep, text);
	free(text);
	return ret ? bad(r, e, "saved cmdlines could not be parsed") : 0;
}

/* Read the layout; with check_only, without handing anything to libtraceevent. */
static int tdata_read(struct tep_handle **out, bool check_only, const uint8_t *p, size_t len,
		      uint64_t off, const char *name, struct tc_err *e)
{
	static const uint8_t magic[10] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	struct rd r = { .p = p, .len = len, .off = off, .name = name };
	struct tep_handle *tep = NULL;
	const char *version = NULL;
	uint32_t page_size;
	uint8_t big, long_size;

	if (out)
		*out = NULL;
	if (len < sizeof(magic) || memcmp(p, magic, sizeof(magic)))
		return bad(&r, e, "no magic (17 08 44 \"tracing\")");
	r.at = sizeof(magic);
	if (get_str(&r, "version", &version, e) || need(&r, 2, "byte order and long size", e))
		return -1;
	big = p[r.at];
	long_size = p[r.at + 1];
	r.at += 2;
	if (big > 1 || (long_size != 4 && long_size != 8))
		return bad(&r, e, "byte order or long size byte out of range");
	r.swap = big;	/* this reader runs little-endian only (as does the rest) */
	if (get_u32(&r, "page size", &page_size, e))
		return -1;
	if (!page_size)
		return bad(&r, e, "page size 0");
	if (!check_only) {
		if (!(tep = tep_alloc()))
			return tc_err_set(e, ENOMEM, "out of memory for the tracing data");
		tep_set_file_bigendian(tep, big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
		tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
		tep_set_long_size(tep, long_size);
		tep_set_page_size(tep, (int)page_size);
	}
	if (read_header_page(&r, tep, e) || read_events(&r, tep, e) ||
	    read_tables(&r, tep, strtod(version, NULL) >= 0.6, e)) {
		if (tep)
			tep_free(tep);
		return -1;
	}
	if (out)
		*out = tep;
	return 0;
}

int tc_tracing_data_read(struct tep_handle **out, const uint8_t *p, size_t len, uint64_t off,
		  const char *name, struct tc_err *e)
{
	return tdata_read(out, false, p, len, off, name, e);
}

int tc_tracing_data_read_check(const uint8_t *p, size_t len, uint64_t off, const char *name,
		   struct tc_err *e)
{
	return tdata_read(NULL, true, p, len, off, name, e);
}

void tc_tracing_data_read_free(struct tep_handle *tep)
{
	if (tep)
		tep_free(tep);
}
