#include "lib/output/listing.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/fmt.h"

/* Every record is formatted by hand into the JSON writer's buffer (lib/util/json.h's raw
 * bytes, the text listing's too), numbers by lib/util/fmt.h, keys as bytes known at compile
 * time; the buffer goes to the FILE after each record, or, batched, when it is full
 * (tc_listing_batch). The output is byte for byte what printf made of the formats noted. */
static const char *const field_names[TC_LF_COUNT] = {
	[TC_LF_OFFSET] = "offset", [TC_LF_ID] = "id", [TC_LF_COMM] = "comm",
	[TC_LF_PID] = "pid", [TC_LF_TID] = "tid", [TC_LF_CPU] = "cpu", [TC_LF_TIME] = "time",
	[TC_LF_EVENT] = "event", [TC_LF_FLAGS] = "flags", [TC_LF_INSNCNT] = "insncnt",
	[TC_LF_IP] = "ip", [TC_LF_SYM] = "sym", [TC_LF_SYMOFF] = "symoff", [TC_LF_DSO] = "dso",
	[TC_LF_DSOFF] = "dsoff", [TC_LF_ADDR] = "addr",
};

void tc_listing_init(struct tc_listing *o, FILE *f, bool json)
{
	/* member by member: the writer's buffer needs no clearing */
	o->f = f;
	o->json = json;
	o->sym = NULL;
	o->sym_ctx = NULL;
	o->comm = NULL;
	o->comm_ctx = NULL;
	o->fields = 0;
	o->syms = NULL;
	o->head.type = -1;
	tc_json_init(&o->j, f, false);
}

void tc_listing_batch(struct tc_listing *o, bool on)
{
	tc_json_batch(&o->j, on);
}

void tc_listing_flush(struct tc_listing *o)
{
	tc_json_flush(&o->j);
}

/* Room for the fixed-size part of what comes next (at most ROOM bytes). */
#define ROOM 512

static inline char *jroom(struct tc_json *j)
{
	return tc_json_raw_room(j, ROOM);
}

static inline char *room(struct tc_listing *o)
{
	return jroom(&o->j);
}

static inline void done(struct tc_listing *o, const char *end)
{
	tc_json_raw_end(&o->j, end);
}

/* A string of any length. */
static inline void jput_mem(struct tc_json *j, const char *s, size_t n)
{
	if (__builtin_expect(n <= ROOM, 1)) {
		char *p = jroom(j);

		memcpy(p, s, n);
		tc_json_raw_end(j, p + n);
	} else {
		tc_json_raw_mem(j, s, n);
	}
}

static inline void put_mem(struct tc_listing *o, const char *s, size_t n)
{
	jput_mem(&o->j, s, n);
}

/* n bytes of s (n <= cap), 32 at a time: both s and p have room for n rounded up to 32. */
static inline char *copy32(char *p, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i += 32)
		memcpy(p + i, s + i, 32);
	return p + n;
}

static inline void put_str(struct tc_listing *o, const char *s)
{
	put_mem(o, s, strlen(s));
}

/* printf's own formatting, for what is rare. */
__attribute__((format(printf, 2, 3))) static void put_fmt(struct tc_listing *o,
							   const char *fmt, ...)
{
	char t[256], *b = t;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(t, sizeof(t), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(t)) {
		if (!(b = malloc((size_t)n + 1)))
			return;
		va_start(ap, fmt);
		vsnprintf(b, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	put_mem(o, b, (size_t)n);
	if (b != t)
		free(b);
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

static bool has_f(unsigned fields, enum tc_listing_field f)
{
	return fields & (1u << f);
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

/* JSON keys of an address's symbol: "sym", "symoff", "dso", "dsoff", or with "to_". */
struct sym_keys {
	const char *sym, *symoff, *dso, *dsoff;	/* ',' + quoted key + ':' */
	unsigned lsym, lsymoff, ldso, ldsoff;
};

#define K(k) "," "\"" k "\"" ":"
#define KEYS(p) { K(p "sym"), K(p "symoff"), K(p "dso"), K(p "dsoff"), \
		  sizeof(K(p "sym")) - 1, sizeof(K(p "symoff")) - 1, sizeof(K(p "dso")) - 1, \
		  sizeof(K(p "dsoff")) - 1 }
static const struct sym_keys keys_from = KEYS(""), keys_to = KEYS("to_");

/* JSON's "sym" value was "name+0xoff" (or "name") made in a 512-byte buffer: a longer one
 * was cut at 511 bytes, and still is. */
#define SYM_BUF 512

static void json_sym_value(struct tc_json *j, const struct tc_images_sym *s, bool off)
{
	size_t n = strlen(s->sym);
	char buf[SYM_BUF];

	if (n + (off ? 3 + tc_fmt_hex_len(s->sym_off) : 0) < SYM_BUF) {
		if (off)
			tc_json_raw_str_plus_hex(j, s->sym, s->sym_off);
		else
			tc_json_raw_str(j, s->sym);
		return;
	}
	if (off)
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, s->sym, s->sym_off);
	else {
		memcpy(buf, s->sym, SYM_BUF - 1);
		buf[SYM_BUF - 1] = 0;
	}
	tc_json_raw_str(j, buf);
}

/* JSON, raw, of answer s: "sym" ("name+0xoff", or "name" without symoff), "symoff",
 * "dso", "dsoff", keys from k. all: the default listing's keys (every one), else those of
 * fields. Inside an object, after a member. */
static void json_sym_of(struct tc_json *j, unsigned fields, const struct tc_images_sym *s,
			const struct sym_keys *k, bool all)
{
	bool sym = s->sym && (all || has_f(fields, TC_LF_SYM));
	bool symoff = s->sym && (all || has_f(fields, TC_LF_SYMOFF));
	char *p;

	if (sym) {
		jput_mem(j, k->sym, k->lsym);
		json_sym_value(j, s, symoff);
	}
	if (symoff) {
		p = jroom(j);
		memcpy(p, k->symoff, k->lsymoff);
		tc_json_raw_end(j, tc_fmt_udec(p + k->lsymoff, s->sym_off));
	}
	if (s->dso && (all || has_f(fields, TC_LF_DSO))) {
		jput_mem(j, k->dso, k->ldso);
		tc_json_raw_str(j, s->dso);
	}
	if (s->dso && (all || has_f(fields, TC_LF_DSOFF))) {	/* an address: hex, as the others */
		p = jroom(j);
		memcpy(p, k->dsoff, k->ldsoff);
		p += k->ldsoff;
		memcpy(p, "\"0x", 3);
		p = tc_fmt_hex(p + 3, s->dso_off);
		*p++ = '"';
		tc_json_raw_end(j, p);
	}
}

/* json_sym_of for pid's addr. */
static void json_sym(struct tc_listing *o, int pid, uint64_t addr, const struct sym_keys *k,
		     bool all)
{
	struct tc_images_sym s;

	if (lookup(o, pid, addr, &s))
		json_sym_of(&o->j, o->fields, &s, k, all);
}

/* Raw JSON pieces: ,"key": then a value. */
#define LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) + sizeof(s) - 1)

static inline char *json_hex(char *p, uint64_t v)
{
	*p++ = '"';
	p = tc_fmt_0xhex(p, v);
	*p++ = '"';
	return p;
}

/* Default text of answer s: "<sep>sym+0xoff (dso)", "<sep>[file+0xoff] (dso)" without a
 * symbol. */
static void text_sym_of(struct tc_json *j, const struct tc_images_sym *s, const char *sep,
			size_t lsep)
{
	const char *name = s->sym ? s->sym : base_name(s->dso);
	size_t n = strlen(name), d = s->dso ? strlen(s->dso) : 0;
	char *p;

	if (n + d < TC_JSON_BUF / 4 - 64) {	/* the usual: all of it in one piece */
		p = tc_json_raw_room(j, n + d + 64);
		memcpy(p, sep, lsep);
		p += lsep;
		if (!s->sym)
			*p++ = '[';
		memcpy(p, name, n);
		p = LIT(p + n, "+0x");
		p = tc_fmt_hex(p, s->sym ? s->sym_off : s->dso_off);
		if (!s->sym)
			*p++ = ']';
		if (s->dso) {
			p = LIT(p, " (");
			memcpy(p, s->dso, d);
			p += d;
			*p++ = ')';
		}
		tc_json_raw_end(j, p);
		return;
	}
	jput_mem(j, sep, lsep);
	if (!s->sym)
		jput_mem(j, "[", 1);
	jput_mem(j, name, n);
	p = jroom(j);
	p = LIT(p, "+0x");
	p = tc_fmt_hex(p, s->sym ? s->sym_off : s->dso_off);
	if (!s->sym)
		*p++ = ']';
	tc_json_raw_end(j, p);
	if (s->dso) {
		jput_mem(j, " (", 2);
		jput_mem(j, s->dso, d);
		jput_mem(j, ")", 1);
	}
}

/* What tc_listing_keep_syms keeps: for each form (kind), those of recent addresses (two
 * slots a set, the newer first), made from sym's answer for pid's addr under the space
 * number: the decoder's promise (decoders/decoder.h) is that the answer, and the bytes of
 * its names, stay while the number does. No symbolizer call for an address kept. */
#define FRAG_BITS 10		/* slots a kind: 1 << FRAG_BITS */
#define FRAG_CAP 192		/* a multiple of 32; longer forms are made each time */
#define FRAG_SCRATCH 8192	/* names longer than this together: written directly */
#define NO_SPACE UINT64_MAX	/* the number while it is not known */

enum { FK_JSON_FROM, FK_JSON_TO, FK_TEXT_RANGE, FK_TEXT_AT, FK_COUNT };

struct frag {
	uint64_t space, addr;		/* addr 0: empty (never asked: no symbol there) */
	int32_t pid;
	uint32_t len;			/* 0: no symbol known */
	char b[FRAG_CAP];
};

struct tc_listing_syms {
	const uint64_t *(*space)(void *ctx);
	void *space_ctx;
	const uint64_t *at;		/* the number, once known */
	struct frag *t[FK_COUNT];	/* 1 << FRAG_BITS slots each, made on first use */
	/* Forms are made here, then copied: with FRAG_SCRATCH, never full (it has no FILE). */
	struct tc_json scratch;
	/* The writer's buffer meanwhile: a batched decode writes a quarter as often. */
	char out[4 * TC_JSON_BUF];
};

int tc_listing_keep_syms(struct tc_listing *o, const uint64_t *(*space)(void *ctx),
			 void *space_ctx)
{
	struct tc_listing_syms *c;

	tc_listing_fini(o);
	if (!space)
		return 0;
	if (!(c = calloc(1, sizeof(*c))))
		return -1;
	c->space = space;
	c->space_ctx = space_ctx;
	tc_json_init(&c->scratch, NULL, false);
	tc_json_use_buffer(&o->j, c->out, sizeof(c->out));
	o->syms = c;
	return 0;
}

void tc_listing_fini(struct tc_listing *o)
{
	if (!o->syms)
		return;
	tc_json_use_buffer(&o->j, NULL, 0);	/* what is in it goes to the FILE first */
	for (int k = 0; k < FK_COUNT; k++)
		free(o->syms->t[k]);
	free(o->syms);
	o->syms = NULL;
}

/* Kind k's set of slots for addr (two: the newer first), NULL while it has none. Addresses
 * a few bytes apart spread over the sets: multiply, fold, multiply. */
static inline struct frag *frag_set(const struct tc_listing_syms *c, int k, uint64_t addr)
{
	uint64_t h = addr * 0x9e3779b97f4a7c15ULL;

	if (!c->t[k])
		return NULL;
	h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
	return &c->t[k][(h >> (64 - FRAG_BITS + 1)) << 1];
}

/* Ask for kind k's slots of addr before they are needed (a record's addresses, at its
 * start): read while the record's other keys are written. */
static inline void frag_prefetch(const struct tc_listing *o, int k, uint64_t addr)
{
	const struct frag *f;

	if (o->syms && (f = frag_set(o->syms, k, addr))) {
		__builtin_prefetch(f);
		__builtin_prefetch((const char *)f + 64);
		__builtin_prefetch((const char *)f + 128);
		__builtin_prefetch((const char *)f + 192);
		__builtin_prefetch(f + 1);
	}
}

/* The default listing's form of answer s, kind k. */
static void make_frag(struct tc_json *j, int k, const struct tc_images_sym *s)
{
	switch (k) {
	case FK_JSON_FROM: json_sym_of(j, 0, s, &keys_from, true); break;
	case FK_JSON_TO: json_sym_of(j, 0, s, &keys_to, true); break;
	case FK_TEXT_RANGE: text_sym_of(j, s, "  ", 2); break;
	default: text_sym_of(j, s, " ", 1); break;
	}
}

/* The space number now, NO_SPACE while not known. */
static inline uint64_t space_now(struct tc_listing_syms *c)
{
	if (!c->at)
		c->at = c->space(c->space_ctx);
	return c->at ? *c->at : NO_SPACE;
}

/* The default listing's symbol of pid's addr, kind k's form: kept bytes where it can. */
static void put_sym(struct tc_listing *o, int k, int pid, uint64_t addr)
{
	struct tc_listing_syms *c = o->syms;
	struct tc_images_sym s;
	struct frag *f = NULL;
	uint64_t space;
	const char *b;
	size_t n;

	if (c && pid >= 0 && addr && (space = space_now(c)) != NO_SPACE &&
	    (c->t[k] || (c->t[k] = calloc((size_t)1 << FRAG_BITS, sizeof(struct frag))))) {
		f = frag_set(c, k, addr);
		for (int w = 0; w < 2; w++)
			if (f[w].addr == addr && f[w].pid == pid && f[w].space == space) {
				if (f[w].len)
					done(o, copy32(tc_json_raw_room(&o->j, FRAG_CAP), f[w].b,
						       f[w].len));
				return;
			}
	}
	if (!lookup(o, pid, addr, &s)) {
		n = 0;
		b = NULL;
	} else if (!c || (s.sym ? strlen(s.sym) : 0) + (s.dso ? strlen(s.dso) : 0) > FRAG_SCRATCH) {
		make_frag(&o->j, k, &s);
		return;
	} else {
		c->scratch.len = 0;
		make_frag(&c->scratch, k, &s);
		n = c->scratch.len;
		b = c->scratch.out;
		if (n <= FRAG_CAP)
			done(o, copy32(tc_json_raw_room(&o->j, FRAG_CAP), b, n));
		else
			put_mem(o, b, n);
	}
	/* kept under the number as it is after the answer (which may have made spaces) */
	if (f && n <= FRAG_CAP && (space = space_now(c)) != NO_SPACE) {
		if (f[0].addr)
			f[1] = f[0];	/* the older slot goes */
		f->space = space;
		f->addr = addr;
		f->pid = pid;
		f->len = (uint32_t)n;
		if (n)
			memcpy(f->b, b, n);
	}
}

/* Is r's place the last record's (o->head)? */
static inline bool same_place(const struct tc_listing *o, const struct tc_rec *r)
{
	return o->head.type == (int)r->type && o->head.pid == r->pid && o->head.tid == r->tid &&
	       o->head.id == r->id && o->head.cpu == r->cpu;
}

static inline void set_place(struct tc_listing *o, const struct tc_rec *r, const char *end)
{
	o->head.type = (int)r->type;
	o->head.id = r->id;
	o->head.cpu = r->cpu;
	o->head.pid = r->pid;
	o->head.tid = r->tid;
	o->head.len = (unsigned)(end - o->head.b);
}

/* The type and place keys of tc_listing_json_place, raw: '{' and what follows, up to the
 * offset's value. */
static char *json_place(char *p, const struct tc_rec *r, const char *type, size_t tlen)
{
	p = LIT(p, "{\"type\":\"");
	memcpy(p, type, tlen);
	p += tlen;
	*p++ = '"';
	if (r->id >= 0) {
		p = LIT(p, ",\"id\":");
		p = json_hex(p, (unsigned)r->id);
	}
	if (r->cpu >= 0) {
		p = LIT(p, ",\"cpu\":");
		p = tc_fmt_dec(p, r->cpu);
	}
	if (r->pid >= 0) {
		p = LIT(p, ",\"pid\":");
		p = tc_fmt_dec(p, r->pid);
	}
	if (r->tid >= 0) {
		p = LIT(p, ",\"tid\":");
		p = tc_fmt_dec(p, r->tid);
	}
	return LIT(p, ",\"offset\":");
}

/* json_place and the offset: the last record's bytes where its place was the same. */
static inline char *json_head(struct tc_listing *o, char *p, const struct tc_rec *r,
			      const char *type, size_t tlen)
{
	if (!same_place(o, r))
		set_place(o, r, json_place(o->head.b, r, type, tlen));
	p = copy32(p, o->head.b, o->head.len);
	return tc_fmt_dec(p, (long long)r->offset);
}

/* A range or a branch without text, the records written by the million: raw. */
static void write_json_flow(struct tc_listing *o, const struct tc_rec *r)
{
	char *p = room(o);

	frag_prefetch(o, FK_JSON_FROM, r->start);
	if (r->type != TC_REC_RANGE)
		frag_prefetch(o, FK_JSON_TO, r->end);
	if (r->type == TC_REC_RANGE)
		p = json_head(o, p, r, "range", 5);
	else
		p = json_head(o, p, r, "branch", 6);
	if (r->has_time) {
		p = LIT(p, ",\"time\":");
		p = tc_fmt_udec(p, r->time);
	}
	if (r->type == TC_REC_RANGE) {
		const char *isa = tc_rec_isa_name(r->isa);

		p = LIT(p, ",\"start\":");
		p = json_hex(p, r->start);
		p = LIT(p, ",\"end\":");
		p = json_hex(p, r->end);
		p = LIT(p, ",\"insns\":");
		p = tc_fmt_udec(p, r->insns);
		p = LIT(p, ",\"isa\":\"");
		p = tc_fmt_str_w(p, isa, strlen(isa), 0, 0);
		*p++ = '"';
		if (r->last) {
			unsigned char c = (unsigned char)r->last;
			char last[2] = { r->last, 0 };

			p = LIT(p, ",\"last\":");
			if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f) {	/* no escape */
				*p++ = '"';
				*p++ = r->last;
				*p++ = '"';
				done(o, p);
			} else {
				done(o, p);
				tc_json_raw_str(&o->j, last);
			}
		} else {
			done(o, p);
		}
		put_sym(o, FK_JSON_FROM, r->pid, r->start);
	} else {
		p = LIT(p, ",\"from\":");
		p = json_hex(p, r->start);
		p = LIT(p, ",\"to\":");
		p = json_hex(p, r->end);
		done(o, p);
		put_sym(o, FK_JSON_FROM, r->pid, r->start);
		put_sym(o, FK_JSON_TO, r->pid, r->end);
	}
	p = room(o);
	p = LIT(p, "}\n");
	done(o, p);
	tc_json_raw_done(&o->j);
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
		TC_JSON_KEY(j, "time");
		tc_json_uint(j, r->time);
	}
}

/* EVENT: {"name":..,"time":..,"fields":{..}}; arrays of numbers, strings, integers. */
static void json_fields(struct tc_json *j, const struct tc_rec *r, bool time)
{
	TC_JSON_KSTR(j, "name", r->name);
	if (time && r->has_time) {
		TC_JSON_KEY(j, "time");
		tc_json_uint(j, r->time);
	}
	TC_JSON_KEY(j, "fields");
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
		TC_JSON_KSTR(j, "packet", r->name);
		break;
	case TC_REC_OTHER:
		TC_JSON_KSTR(j, "name", r->name);
		break;
	case TC_REC_EVENT:
		json_fields(j, r, event_time);
		break;
	case TC_REC_TIMESTAMP:
	case TC_REC_EXCEPTION:
	case TC_REC_CONTEXT:
		TC_JSON_KEY(j, "value");
		tc_json_uint(j, r->value);
		break;
	default:
		break;
	}
	if (r->text && *r->text)
		TC_JSON_KSTR(j, "text", r->text);
}

/* Raw members (json_sym) inside an object the writer has open: its last member was
 * written through the writer, so a comma is due, as json_sym writes. */
static void write_json(struct tc_listing *o, const struct tc_rec *r)
{
	struct tc_json *j = &o->j;

	if ((r->type == TC_REC_RANGE || r->type == TC_REC_BRANCH) && !(r->text && *r->text)) {
		write_json_flow(o, r);
		return;
	}
	tc_json_obj_open(j);
	json_common(j, r);
	if (r->type == TC_REC_ADDR_NACC) {
		TC_JSON_KHEX(j, "addr", r->start);
		json_sym(o, r->pid, r->start, &keys_from, true);
	} else if (r->type == TC_REC_RANGE || r->type == TC_REC_BRANCH) {
		/* with text: as write_json_flow, through the writer */
		if (r->type == TC_REC_RANGE) {
			TC_JSON_KHEX(j, "start", r->start);
			TC_JSON_KHEX(j, "end", r->end);
			TC_JSON_KINT(j, "insns", r->insns);
			TC_JSON_KSTR(j, "isa", tc_rec_isa_name(r->isa));
			if (r->last) {
				char last[2] = { r->last, 0 };

				TC_JSON_KSTR(j, "last", last);
			}
			json_sym(o, r->pid, r->start, &keys_from, true);
		} else {
			TC_JSON_KHEX(j, "from", r->start);
			TC_JSON_KHEX(j, "to", r->end);
			json_sym(o, r->pid, r->start, &keys_from, true);
			json_sym(o, r->pid, r->end, &keys_to, true);
		}
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
		TC_JSON_KSTR(j, "comm", comm);
	if (has(o, TC_LF_PID) && r->pid >= 0)
		TC_JSON_KINT(j, "pid", r->pid);
	if (has(o, TC_LF_TID) && r->tid >= 0)
		TC_JSON_KINT(j, "tid", r->tid);
	if (has(o, TC_LF_CPU) && r->cpu >= 0)
		TC_JSON_KINT(j, "cpu", r->cpu);
	if (has(o, TC_LF_TIME) && r->has_time) {
		TC_JSON_KEY(j, "time");
		tc_json_uint(j, r->time);
	}
	if (has(o, TC_LF_FLAGS) && *flags_of(r))
		TC_JSON_KSTR(j, "flags", flags_of(r));
	if (has(o, TC_LF_INSNCNT) && r->type == TC_REC_RANGE)
		TC_JSON_KINT(j, "insncnt", r->insns);
	if (ip_of(r, &ip)) {
		if (has(o, TC_LF_IP))
			TC_JSON_KHEX(j, "ip", ip);
		json_sym(o, r->pid, ip, &keys_from, false);
	}
	if (has(o, TC_LF_ADDR) && addr_of(r, &addr)) {
		TC_JSON_KHEX(j, "addr", addr);
		if (r->type == TC_REC_BRANCH)
			json_sym(o, r->pid, addr, &keys_to, false);
	}
	json_detail(j, r, has(o, TC_LF_TIME));
	tc_json_obj_close(j);
}

/* What a record without an address says (both text forms). */
static void text_detail(struct tc_listing *o, const struct tc_rec *r)
{
	char *p;

	switch (r->type) {
	case TC_REC_PACKET:
	case TC_REC_OTHER:		/* " %s" */
		put_mem(o, " ", 1);
		put_str(o, r->name ? r->name : "?");
		break;
	case TC_REC_TIMESTAMP:
	case TC_REC_EXCEPTION:
	case TC_REC_CONTEXT:		/* " 0x%" PRIx64 */
		p = room(o);
		*p++ = ' ';
		done(o, tc_fmt_0xhex(p, r->value));
		break;
	default:
		break;
	}
	if (r->text && *r->text) {	/* " (%s)" */
		put_mem(o, " (", 2);
		put_str(o, r->text);
		put_mem(o, ")", 1);
	}
}

/* " %" PRIu64 ".%09" PRIu64: perf time as seconds.nanoseconds */
static char *text_time(char *p, uint64_t t, unsigned w)
{
	*p++ = ' ';
	p = tc_fmt_dec_w(p, (int64_t)(t / 1000000000), w, 0);
	*p++ = '.';
	return tc_fmt_udec_0w(p, t % 1000000000, 9);
}

/* The text's place after the offset: " ", id, cpu, pid/tid, type. */
static char *text_place(char *p, const struct tc_rec *r)
{
	const char *type = tc_rec_type_name(r->type);

	*p++ = ' ';
	if (r->id >= 0) {				/* " id 0x%02x" */
		p = LIT(p, " id 0x");
		p = tc_fmt_hex_w(p, (unsigned)r->id, 2, '0');
	}
	if (r->cpu >= 0) {				/* " cpu %d" */
		p = LIT(p, " cpu ");
		p = tc_fmt_dec(p, r->cpu);
	}
	/* Events always, as perf script: the kernel writes -1 for a task already gone (the
	 * thread, or its process too). " %d/%d" */
	if (r->tid >= 0 || r->pid >= 0 || r->type == TC_REC_EVENT) {
		*p++ = ' ';
		p = tc_fmt_dec(p, r->pid);
		*p++ = '/';
		p = tc_fmt_dec(p, r->tid);
	}
	p = LIT(p, "  ");				/* "  %-9s" */
	return tc_fmt_str_w(p, type, strlen(type), 9, 1);
}

static void write_text(struct tc_listing *o, const struct tc_rec *r)
{
	char *p = room(o);

	if (r->type == TC_REC_RANGE) {
		frag_prefetch(o, FK_TEXT_RANGE, r->start);
	} else if (r->type == TC_REC_BRANCH) {
		frag_prefetch(o, FK_TEXT_AT, r->start);
		frag_prefetch(o, FK_TEXT_AT, r->end);
	}
	p = tc_fmt_hex_w(p, r->offset, 10, ' ');	/* "%10" PRIx64 " " */
	if (!same_place(o, r))
		set_place(o, r, text_place(o->head.b, r));
	p = copy32(p, o->head.b, o->head.len);
	switch (r->type) {
	case TC_REC_RANGE: {		/* " 0x%" PRIx64 "-0x%" PRIx64 " %u %s %c" */
		const char *isa = tc_rec_isa_name(r->isa);

		*p++ = ' ';
		p = tc_fmt_0xhex(p, r->start);
		*p++ = '-';
		p = tc_fmt_0xhex(p, r->end);
		*p++ = ' ';
		p = tc_fmt_udec(p, r->insns);
		*p++ = ' ';
		p = tc_fmt_str_w(p, isa, strlen(isa), 0, 0);
		*p++ = ' ';
		*p++ = r->last ? r->last : '?';
		done(o, p);
		put_sym(o, FK_TEXT_RANGE, r->pid, r->start);
		break;
	}
	case TC_REC_BRANCH:		/* " 0x%" PRIx64 ... " -> 0x%" PRIx64 ... */
		*p++ = ' ';
		done(o, tc_fmt_0xhex(p, r->start));
		put_sym(o, FK_TEXT_AT, r->pid, r->start);
		p = room(o);
		p = LIT(p, " -> ");
		done(o, tc_fmt_0xhex(p, r->end));
		put_sym(o, FK_TEXT_AT, r->pid, r->end);
		break;
	case TC_REC_ADDR_NACC:
		*p++ = ' ';
		done(o, tc_fmt_0xhex(p, r->start));
		put_sym(o, FK_TEXT_AT, r->pid, r->start);
		break;
	case TC_REC_EVENT:
		/* perf script's "secs.nsecs: name: text": " %s: %s\n" */
		if (r->has_time)
			p = text_time(p, r->time, 0);
		done(o, p);
		put_mem(o, " ", 1);
		put_str(o, r->name ? r->name : "?");
		put_mem(o, ": ", 2);
		put_str(o, r->text ? r->text : "");
		put_mem(o, "\n", 1);
		tc_json_raw_done(&o->j);
		return;
	default:
		done(o, p);
		break;
	}
	text_detail(o, r);
	put_mem(o, "\n", 1);
	tc_json_raw_done(&o->j);
}

/* -F text, perf script's layout: " ip sym+0xoff (dso)", "[unknown]" where not known. */
static void text_fields_sym(struct tc_listing *o, int pid, uint64_t addr)
{
	struct tc_images_sym s;
	bool found = lookup(o, pid, addr, &s);
	char *p;

	if (has(o, TC_LF_SYM)) {
		if (found && s.sym) {		/* " %s", "+0x%" PRIx64 */
			put_mem(o, " ", 1);
			put_str(o, s.sym);
			if (has(o, TC_LF_SYMOFF)) {
				p = room(o);
				p = LIT(p, "+0x");
				done(o, tc_fmt_hex(p, s.sym_off));
			}
		} else {
			put_mem(o, " [unknown]", 10);
		}
	}
	if (has(o, TC_LF_DSO) || has(o, TC_LF_DSOFF)) {
		if (!found || !s.dso) {
			put_mem(o, " ([unknown])", 12);
		} else if (has(o, TC_LF_DSOFF)) {	/* " (%s+0x%" PRIx64 ")" */
			put_mem(o, " (", 2);
			put_str(o, s.dso);
			p = room(o);
			p = LIT(p, "+0x");
			p = tc_fmt_hex(p, s.dso_off);
			*p++ = ')';
			done(o, p);
		} else {			/* " (%s)" */
			put_mem(o, " (", 2);
			put_str(o, s.dso);
			put_mem(o, ")", 1);
		}
	}
}

static void write_text_fields(struct tc_listing *o, const struct tc_rec *r)
{
	const char *comm = NULL;
	uint64_t ip, addr;
	bool any_ip = ip_of(r, &ip);
	char *p;

	if (has(o, TC_LF_COMM))
		comm = o->comm ? o->comm(o->comm_ctx, r) : NULL;
	p = room(o);
	if (has(o, TC_LF_OFFSET))			/* "%10" PRIx64 */
		p = tc_fmt_hex_w(p, r->offset, 10, ' ');
	if (has(o, TC_LF_ID)) {				/* " id 0x%02x", " id -" */
		if (r->id >= 0) {
			p = LIT(p, " id 0x");
			p = tc_fmt_hex_w(p, (unsigned)r->id, 2, '0');
		} else {
			p = LIT(p, " id -");
		}
	}
	done(o, p);
	if (has(o, TC_LF_COMM)) {			/* " %16s" */
		const char *c = comm ? comm : "[unknown]";
		size_t n = strlen(c);

		if (n < 16) {
			p = room(o);
			*p++ = ' ';
			done(o, tc_fmt_str_w(p, c, n, 16, 0));
		} else {
			put_mem(o, " ", 1);
			put_mem(o, c, n);
		}
	}
	p = room(o);
	if (has(o, TC_LF_PID) && has(o, TC_LF_TID)) {	/* " %7d/%-7d" */
		*p++ = ' ';
		p = tc_fmt_dec_w(p, r->pid, 7, 0);
		*p++ = '/';
		p = tc_fmt_dec_w(p, r->tid, 7, 1);
	} else if (has(o, TC_LF_PID) || has(o, TC_LF_TID)) {	/* " %7d" */
		*p++ = ' ';
		p = tc_fmt_dec_w(p, has(o, TC_LF_PID) ? r->pid : r->tid, 7, 0);
	}
	if (has(o, TC_LF_CPU)) {			/* " [%03d]" */
		if (r->cpu >= 0) {
			p = LIT(p, " [");
			p = tc_fmt_udec_0w(p, (unsigned)r->cpu, 3);
			*p++ = ']';
		} else {
			done(o, p);
			put_fmt(o, " [%03d]", r->cpu);
			p = room(o);
		}
	}
	if (has(o, TC_LF_TIME)) {	/* " %5" PRIu64 ".%09" PRIu64 ":", " -:" */
		if (r->has_time) {
			p = text_time(p, r->time, 5);
			*p++ = ':';
		} else {
			p = LIT(p, " -:");
		}
	}
	if (has(o, TC_LF_EVENT) || !(any_ip || r->type == TC_REC_EVENT)) {	/* " %s:" */
		const char *type = tc_rec_type_name(r->type);

		*p++ = ' ';
		p = tc_fmt_str_w(p, type, strlen(type), 0, 0);
		*p++ = ':';
	}
	if (has(o, TC_LF_FLAGS)) {			/* " %10s" */
		const char *fl = flags_of(r);

		*p++ = ' ';
		p = tc_fmt_str_w(p, fl, strlen(fl), 10, 0);
	}
	if (has(o, TC_LF_INSNCNT)) {			/* " %5u", " %5s" of "" */
		*p++ = ' ';
		if (r->type == TC_REC_RANGE)
			p = tc_fmt_dec_w(p, r->insns, 5, 0);
		else
			p = LIT(p, "     ");
	}
	done(o, p);
	if (any_ip) {
		if (has(o, TC_LF_IP)) {			/* " %16" PRIx64 */
			p = room(o);
			*p++ = ' ';
			done(o, tc_fmt_hex_w(p, ip, 16, ' '));
		}
		text_fields_sym(o, r->pid, ip);
		if (has(o, TC_LF_ADDR) && addr_of(r, &addr)) {	/* " => %16" PRIx64 */
			p = room(o);
			p = r->type == TC_REC_BRANCH ? LIT(p, " => ") : LIT(p, " .. ");
			done(o, tc_fmt_hex_w(p, addr, 16, ' '));
			if (r->type == TC_REC_BRANCH)
				text_fields_sym(o, r->pid, addr);
		}
	}
	if (r->type == TC_REC_EVENT) {			/* " %s: %s" */
		put_mem(o, " ", 1);
		put_str(o, r->name ? r->name : "?");
		put_mem(o, ": ", 2);
		put_str(o, r->text ? r->text : "");
	} else {
		text_detail(o, r);
	}
	put_mem(o, "\n", 1);
	tc_json_raw_done(&o->j);
}

void tc_listing_write(struct tc_listing *o, const struct tc_rec *r)
{
	if (o->fields)
		(o->json ? write_json_fields : write_text_fields)(o, r);
	else
		(o->json ? write_json : write_text)(o, r);
}
