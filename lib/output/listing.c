#include "lib/output/listing.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/blockpool.h"
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
	for (size_t i = 0; i < sizeof(o->head) / sizeof(o->head[0]); i++)
		o->head[i].type = -1;
	o->off.v = UINT64_MAX;
	o->isa.v = -1;
	o->time.lo = o->time.hi = 0;
	o->text_time.lo = o->text_time.hi = 0;
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

/* n bytes of s (n <= 128), both s and p with room for 128: 64 bytes at a time, a copy of
 * one length or two whatever n (a branch on the length would be mispredicted). */
static inline char *copy64(char *p, const char *s, size_t n)
{
	memcpy(p, s, 32);
	memcpy(p + 32, s + 32, 32);
	if (n > 64) {
		memcpy(p + 64, s + 64, 32);
		memcpy(p + 96, s + 96, 32);
	}
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
 * from or to a gap. "" where not known. Each with its length and as text -F writes it
 * (" %10s"; 16 bytes may be copied from it, or from its name there). */
struct flags {
	const char *name;
	unsigned len;
	char text[32];
};

enum { FL_NONE, FL_TR_STRT, FL_TR_END, FL_JMP, FL_CALL, FL_RETURN, FL_SYSCALL, FL_SYSRET };

static const struct flags flags_tab[] = {
	[FL_NONE] = { "", 0, "           " },
	[FL_TR_STRT] = { "tr strt", 7, "    tr strt" },
	[FL_TR_END] = { "tr end", 6, "     tr end" },
	[FL_JMP] = { "jmp", 3, "        jmp" },
	[FL_CALL] = { "call", 4, "       call" },
	[FL_RETURN] = { "return", 6, "     return" },
	[FL_SYSCALL] = { "syscall", 7, "    syscall" },
	[FL_SYSRET] = { "sysret", 6, "     sysret" },
};

static const struct flags *flags_of(const struct tc_rec *r)
{
	if (r->type == TC_REC_BRANCH)
		return &flags_tab[!r->start ? FL_TR_STRT : !r->end ? FL_TR_END : FL_NONE];
	if (r->type != TC_REC_RANGE)
		return &flags_tab[FL_NONE];
	switch ((enum tc_insn_class)r->last_type) {
	case TC_INSN_JUMP:
	case TC_INSN_JUMP_IND: return &flags_tab[FL_JMP];
	case TC_INSN_CALL: return &flags_tab[FL_CALL];
	case TC_INSN_RET: return &flags_tab[FL_RETURN];
	case TC_INSN_SYSCALL: return &flags_tab[FL_SYSCALL];
	case TC_INSN_EXC_RET: return &flags_tab[FL_SYSRET];
	default: return &flags_tab[FL_NONE];
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

/* What tc_listing_keep_syms keeps: for each form (kind), those of recent addresses, made
 * from sym's answer for pid's addr while the space number stays: the decoder's promise
 * (decoders/decoder.h) is that the answer, and the bytes of its names, stay while the
 * number does. No symbolizer call for an address kept.
 *
 * A kind's slots are in sets of FRAG_WAYS; a set's tags (address, pid, the era they were
 * made in, length) fill one cache line, apart from the forms' bytes, so that finding an
 * address reads one line, and a form's bytes are read only when they are written out. An
 * era is a run of records under one space number: a new number starts a new era, and
 * every tag of an older one is empty (no table to clear). */
#define FRAG_SET_BITS 8		/* sets a kind: 1 << FRAG_SET_BITS */
#define FRAG_WAYS 4
#define FRAG_CAP 192		/* a multiple of 32; longer forms are made each time */
#define FRAG_SCRATCH 8192	/* names longer than this together: written directly */
#define FRAG_ERA_MAX 0xffff	/* eras wrap: the tags are cleared then */

/* The default listing's forms, then -F's (of the fields they were made for). */
enum { FK_JSON_FROM, FK_JSON_TO, FK_TEXT_RANGE, FK_TEXT_AT, FK_F_JSON_FROM, FK_F_JSON_TO,
       FK_F_TEXT, FK_COUNT };

/* A set: its addresses (0: empty; an address in one way at most) and their keys. */
struct frag_set {
	uint64_t addr[FRAG_WAYS];
	uint64_t key[FRAG_WAYS];	/* tag_key(pid, era) | length << 48 (0: no symbol known) */
} __attribute__((aligned(64)));

/* A tag's pid and era (0: empty), as its key holds them. */
static inline uint64_t tag_key(int pid, unsigned era)
{
	return (uint32_t)pid | (uint64_t)era << 32;
}

struct frag_kind {
	struct frag_set set[1 << FRAG_SET_BITS];
	/* slot set * FRAG_WAYS + way: the address's hex digits (%llx, the bytes after them
	 * unspecified), a set's in one cache line; the form's bytes */
	char hex[(1 << FRAG_SET_BITS) * FRAG_WAYS][16];
	char b[(1 << FRAG_SET_BITS) * FRAG_WAYS][FRAG_CAP];
	unsigned next;			/* the way a full set gives up next */
};

/* Tables come from the process's pool of huge-page chunks (8 to a 2 MiB page; a table
 * let go of taken again first): a listing per lane has two or more, each
 * filled all over (addresses hashed), and a first touch of fresh memory costs a page
 * fault per 4 KiB (10-30 us in a VM: ~50 a table), a huge page one per 2 MiB. */
#define FRAG_TABLE ((size_t)256 << 10)
_Static_assert(sizeof(struct frag_kind) <= FRAG_TABLE, "a table is a blockpool's block");

/* A table with its tags empty: a slot's hex and bytes are written before they are read
 * (a tag names them). */
static struct frag_kind *frag_table(void)
{
	struct tc_blockpool *p = tc_blockpool_shared(FRAG_TABLE);
	struct frag_kind *t;

	if (!p || !(t = tc_blockpool_get(p)))
		return NULL;
	memset(t->set, 0, sizeof(t->set));
	t->next = 0;
	return t;
}

struct tc_listing_syms {
	const uint64_t *(*space)(void *ctx);
	void *space_ctx;
	const uint64_t *at;		/* the number, once known */
	uint64_t seen;			/* its value in era */
	unsigned era;			/* 0 while the number is not known */
	unsigned fields;		/* -F's forms were made for these */
	struct frag_kind *t[FK_COUNT];	/* made on first use */
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
		if (o->syms->t[k])
			tc_blockpool_put(tc_blockpool_shared(FRAG_TABLE), o->syms->t[k]);
	free(o->syms);
	o->syms = NULL;
}

/* The set of addr: its bits spread by a multiply (addresses a few bytes apart land
 * apart), the top ones taken. */
static inline unsigned frag_set_of(uint64_t addr)
{
	return (unsigned)((addr * 0x9e3779b97f4a7c15ULL) >> (64 - FRAG_SET_BITS));
}

/* The era now: a new one when the space number has changed; 0 while it is not known. */
static inline unsigned era_now(struct tc_listing_syms *c)
{
	if (__builtin_expect(!c->at, 0)) {
		if (!(c->at = c->space(c->space_ctx)))
			return 0;
		c->seen = *c->at;
		c->era = 1;
	}
	if (__builtin_expect(*c->at != c->seen, 0)) {
		c->seen = *c->at;
		if (++c->era > FRAG_ERA_MAX) {
			for (int k = 0; k < FK_COUNT; k++)
				if (c->t[k])
					memset(c->t[k]->set, 0, sizeof(c->t[k]->set));
			c->era = 1;
		}
	}
	return c->era;
}

/* The key of pid's forms in this era (the same for every address of a record): 0 where
 * none are kept (nothing kept, pid unknown, space number not known yet; -F's forms (f)
 * made for other fields). */
static inline __attribute__((always_inline)) uint64_t frag_key(const struct tc_listing *o,
							       int pid, bool f)
{
	struct tc_listing_syms *c = o->syms;
	unsigned era;

	if (!c || pid < 0 || !(era = era_now(c)) || (f && c->fields != o->fields))
		return 0;
	return tag_key(pid, era);
}

/* Kind k's kept form of addr under key (frag_key: not 0): its bytes in *b, addr's hex
 * digits in *hex and its length, or -1 where none is kept. */
static inline __attribute__((always_inline)) long frag_find(const struct tc_listing *o, int k,
							    uint64_t key, uint64_t addr,
							    const char **b, const char **hex)
{
	const struct frag_kind *t = o->syms->t[k];
	const struct frag_set *set;
	unsigned i, w, hit;

	if (!t)
		return -1;
	i = frag_set_of(addr);
	set = &t->set[i];
	/* the ways compared side by side, the one that matches taken without a branch on
	 * which; an empty one (address 0) has key 0, never a key asked for */
	hit = (unsigned)(set->addr[0] == addr) | (unsigned)(set->addr[1] == addr) << 1 |
	      (unsigned)(set->addr[2] == addr) << 2 | (unsigned)(set->addr[3] == addr) << 3;
	if (!hit)
		return -1;
	w = (unsigned)__builtin_ctz(hit);
	if ((set->key[w] ^ key) << 16)
		return -1;
	*b = t->b[i * FRAG_WAYS + w];
	*hex = t->hex[i * FRAG_WAYS + w];
	return (long)(set->key[w] >> 48);
}

/* -F text of answer s (NULL: none), perf script's layout: " sym+0xoff (dso)",
 * "[unknown]" where not known. */
static void text_fields_sym_of(struct tc_json *j, unsigned fields, const struct tc_images_sym *s)
{
	char *p;

	if (has_f(fields, TC_LF_SYM)) {
		if (s && s->sym) {		/* " %s", "+0x%" PRIx64 */
			jput_mem(j, " ", 1);
			jput_mem(j, s->sym, strlen(s->sym));
			if (has_f(fields, TC_LF_SYMOFF)) {
				p = jroom(j);
				p = LIT(p, "+0x");
				tc_json_raw_end(j, tc_fmt_hex(p, s->sym_off));
			}
		} else {
			jput_mem(j, " [unknown]", 10);
		}
	}
	if (has_f(fields, TC_LF_DSO) || has_f(fields, TC_LF_DSOFF)) {
		if (!s || !s->dso) {
			jput_mem(j, " ([unknown])", 12);
		} else if (has_f(fields, TC_LF_DSOFF)) {	/* " (%s+0x%" PRIx64 ")" */
			jput_mem(j, " (", 2);
			jput_mem(j, s->dso, strlen(s->dso));
			p = jroom(j);
			p = LIT(p, "+0x");
			p = tc_fmt_hex(p, s->dso_off);
			*p++ = ')';
			tc_json_raw_end(j, p);
		} else {			/* " (%s)" */
			jput_mem(j, " (", 2);
			jput_mem(j, s->dso, strlen(s->dso));
			jput_mem(j, ")", 1);
		}
	}
}

/* Kind k's form of answer s (NULL: no symbol known) for a listing of fields. */
static void make_frag(struct tc_json *j, int k, unsigned fields, const struct tc_images_sym *s)
{
	if (k == FK_F_TEXT) {
		text_fields_sym_of(j, fields, s);
		return;
	}
	if (!s)
		return;
	switch (k) {
	case FK_JSON_FROM: json_sym_of(j, 0, s, &keys_from, true); break;
	case FK_JSON_TO: json_sym_of(j, 0, s, &keys_to, true); break;
	case FK_F_JSON_FROM: json_sym_of(j, fields, s, &keys_from, false); break;
	case FK_F_JSON_TO: json_sym_of(j, fields, s, &keys_to, false); break;
	case FK_TEXT_RANGE: text_sym_of(j, s, "  ", 2); break;
	default: text_sym_of(j, s, " ", 1); break;
	}
}

/* The default listing's symbol of pid's addr, kind k's form, where frag_find has none:
 * asked of the symboliser, written, and kept where it can be. */
static __attribute__((noinline)) void put_sym_new(struct tc_listing *o, int k, int pid,
						  uint64_t addr)
{
	struct tc_listing_syms *c = o->syms;
	struct tc_images_sym s;
	struct frag_set *set;
	bool found = lookup(o, pid, addr, &s);
	unsigned era, i, w;
	const char *b;
	size_t n;

	if (!c || (found && (s.sym ? strlen(s.sym) : 0) + (s.dso ? strlen(s.dso) : 0) >
			    FRAG_SCRATCH)) {
		make_frag(&o->j, k, o->fields, found ? &s : NULL);
		return;
	}
	c->scratch.len = 0;
	make_frag(&c->scratch, k, o->fields, found ? &s : NULL);
	n = c->scratch.len;
	b = c->scratch.out;
	if (n <= FRAG_CAP)
		done(o, copy32(tc_json_raw_room(&o->j, FRAG_CAP), b, n));
	else
		put_mem(o, b, n);
	if (k >= FK_F_JSON_FROM && c->fields != o->fields) {	/* -F's forms made anew */
		for (int f = FK_F_JSON_FROM; f < FK_COUNT; f++)
			if (c->t[f])
				memset(c->t[f]->set, 0, sizeof(c->t[f]->set));
		c->fields = o->fields;
	}
	/* kept in the era as it is after the answer (which may have made spaces) */
	if (pid < 0 || !addr || n > FRAG_CAP || !(era = era_now(c)))
		return;
	if (!c->t[k]) {
		if (!(c->t[k] = frag_table()))
			return;
	}
	/* the way of addr (another pid's, or another era's), else one of another era (or
	 * empty), else each in turn */
	i = frag_set_of(addr);
	set = &c->t[k]->set[i];
	for (w = 0; w < FRAG_WAYS && set->addr[w] != addr; w++)
		;
	for (unsigned v = 0; v < FRAG_WAYS && w == FRAG_WAYS; v++)
		if ((set->key[v] >> 32 & 0xffff) != era)
			w = v;
	if (w == FRAG_WAYS)
		w = c->t[k]->next++ % FRAG_WAYS;
	set->addr[w] = addr;
	set->key[w] = tag_key(pid, era) | (uint64_t)n << 48;
	tc_fmt_hex(c->t[k]->hex[i * FRAG_WAYS + w], addr);
	if (n)
		memcpy(c->t[k]->b[i * FRAG_WAYS + w], b, n);
}

/* Kind k's kept form of pid's addr, found before it is written (frag_find, its bytes
 * asked for meanwhile): b NULL where none is kept. */
struct frag_ref {
	const char *b;
	const char *hex;	/* the address's hex digits */
	size_t len;
};

/* "0x%llx" of v, its digits from f where it was found. */
static inline char *hex0x_of(char *p, uint64_t v, const struct frag_ref *f)
{
	if (!f->b)
		return tc_fmt_0xhex(p, v);
	p = LIT(p, "0x");
	memcpy(p, f->hex, 16);
	return p + tc_fmt_hex_len(v);
}

/* json_hex of v, its digits from f where it was found (kept with v's form). */
static inline char *json_hex_of(char *p, uint64_t v, const struct frag_ref *f)
{
	if (!f->b)
		return json_hex(p, v);
	*p++ = '"';
	p = hex0x_of(p, v, f);
	*p++ = '"';
	return p;
}

/* "%16llx" of v, its digits from f where it was found. */
static inline char *hex16_of(char *p, uint64_t v, const struct frag_ref *f)
{
	unsigned n;

	if (!f->b)
		return tc_fmt_hex_w(p, v, 16, ' ');
	n = tc_fmt_hex_len(v);
	memset(p, ' ', 16);
	memcpy(p + 16 - n, f->hex, 16);
	return p + 16;
}

static inline __attribute__((always_inline)) struct frag_ref frag_get(const struct tc_listing *o,
								       int k, uint64_t key,
								       uint64_t addr)
{
	struct frag_ref f = { NULL, NULL, 0 };
	long n;

	if (key && (n = frag_find(o, k, key, addr, &f.b, &f.hex)) >= 0) {
		f.len = (size_t)n;
		__builtin_prefetch(f.b);
		__builtin_prefetch(f.b + 64);
		__builtin_prefetch(f.b + 128);
	} else {
		f.b = NULL;
	}
	return f;
}

/* The default listing's symbol of pid's addr, kind k's form, at p in the writer's buffer
 * (FRAG_CAP bytes of room): f's kept bytes where frag_get found them, else through
 * put_sym_new. Returns where the record goes on, with FRAG_CAP + more bytes of room after
 * it. */
static inline char *put_sym_at(struct tc_listing *o, char *p, struct frag_ref f, int k, int pid,
			       uint64_t addr, size_t more)
{
	if (__builtin_expect(f.b != NULL, 1)) {
		/* 64 bytes at a time: one to three steps */
		for (size_t i = 0; i < f.len; i += 64) {
			memcpy(p + i, f.b + i, 32);
			memcpy(p + i + 32, f.b + i + 32, 32);
		}
		return p + f.len;
	}
	done(o, p);
	put_sym_new(o, k, pid, addr);
	return tc_json_raw_room(&o->j, FRAG_CAP + more);
}

/* The same, in the writer's buffer as it is. */
static void put_sym(struct tc_listing *o, int k, int pid, uint64_t addr)
{
	done(o, put_sym_at(o, room(o), frag_get(o, k, frag_key(o, pid, k >= FK_F_JSON_FROM), addr),
			   k, pid, addr, 0));
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

static char *text_place(char *p, const struct tc_rec *r);

/* The place keys of r kept in o->head (its slot by a sum of the place's numbers), made
 * where they are not: JSON's (json_place: type is the record type's name, tlen long) or
 * text's (text_place). */
static inline __attribute__((always_inline)) const struct tc_listing_head *
head_of(struct tc_listing *o, const struct tc_rec *r, bool json, const char *type, size_t tlen)
{
	unsigned i = ((unsigned)r->id + (unsigned)r->cpu * 7 + (unsigned)r->tid * 13 +
		      (unsigned)r->pid * 5 + (unsigned)r->type * 31) %
		     (unsigned)(sizeof(o->head) / sizeof(o->head[0]));
	struct tc_listing_head *h = &o->head[i];

	if (__builtin_expect(h->type != (int)r->type || h->pid != r->pid || h->tid != r->tid ||
			     h->id != r->id || h->cpu != r->cpu, 0)) {
		h->len = (unsigned)((json ? json_place(h->b, r, type, tlen) : text_place(h->b, r)) -
				    h->b);
		h->type = (int)r->type;
		h->id = r->id;
		h->cpu = r->cpu;
		h->pid = r->pid;
		h->tid = r->tid;
	}
	return h;
}

/* json_place and the offset: the last record's bytes where its place was the same. */
static inline char *json_head(struct tc_listing *o, char *p, const struct tc_rec *r,
			      const char *type, size_t tlen)
{
	const struct tc_listing_head *h = head_of(o, r, true, type, tlen);
	uint64_t off = r->offset;

	p = copy64(p, h->b, h->len);
	/* records of one offset follow each other (a packet's branches) */
	if (off == o->off.v && off < 100000000) {	/* (v's first value is not) */
		memcpy(p, o->off.b, 8);
		return p + o->off.len;
	}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (off < 100000000) {
		uint64_t w = tc_fmt_udec8_word((uint32_t)off, &o->off.len);

		o->off.v = off;
		memcpy(o->off.b, &w, 8);
		memcpy(p, &w, 8);
		return p + o->off.len;
	}
#endif
	return tc_fmt_dec(p, (long long)off);
}

/* Room for a range's or branch's keys before and between its symbols' (the head, at
 * most 128 bytes, and numbers: well below). */
#define FLOW_ROOM 384

/* %llu of a time t, at p: times are near each other from record to record, and those of
 * one span of 10^8 ns share their digits but the last 8, kept (o->time). */
static inline __attribute__((always_inline)) char *put_time(struct tc_listing *o, char *p,
							  uint64_t t)
{
	uint64_t lo;

	if (__builtin_expect(t - o->time.lo >= o->time.hi - o->time.lo, 0)) {
		if (t < 100000000)
			return tc_fmt_udec(p, t);
		o->time.lo = t - t % 100000000;
		o->time.hi = o->time.lo + 100000000;
		o->time.len = (unsigned)(tc_fmt_udec(o->time.b, t / 100000000) - o->time.b);
	}
	memcpy(p, o->time.b, 16);
	p += o->time.len;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	lo = tc_fmt_dec8((uint32_t)(t - o->time.lo));
	memcpy(p, &lo, 8);
	return p + 8;
#else
	(void)lo;
	return tc_fmt_udec_0w(p, t - o->time.lo, 8);
#endif
}

/* r's ISA name at p (tc_rec_isa_name's), from the last range's where it is the same. */
static inline char *put_isa(struct tc_listing *o, char *p, const struct tc_rec *r)
{
	if ((int)r->isa != o->isa.v) {
		const char *isa = tc_rec_isa_name(r->isa);
		size_t n = strlen(isa);

		if (n >= sizeof(o->isa.b))
			return tc_fmt_str_w(p, isa, n, 0, 0);
		memcpy(o->isa.b, isa, n);
		o->isa.len = (unsigned)n;
		o->isa.v = (int)r->isa;
	}
	memcpy(p, o->isa.b, sizeof(o->isa.b));
	return p + o->isa.len;
}

/* A range or a branch without text, the records written by the million: raw, in one pass
 * through the buffer (room made once, unless a symbol is not kept). */
static void write_json_flow(struct tc_listing *o, const struct tc_rec *r)
{
	bool range = r->type == TC_REC_RANGE;
	char *p = tc_json_raw_room(&o->j, FLOW_ROOM + 2 * FRAG_CAP);
	/* the symbols' kept bytes found first, read while the keys before them are written */
	uint64_t key = frag_key(o, r->pid, false);
	struct frag_ref from = frag_get(o, FK_JSON_FROM, key, r->start), to = { NULL, NULL, 0 };

	if (!range)
		to = frag_get(o, FK_JSON_TO, key, r->end);
	if (range)
		p = json_head(o, p, r, "range", 5);
	else
		p = json_head(o, p, r, "branch", 6);
	if (r->has_time) {
		p = LIT(p, ",\"time\":");
		p = put_time(o, p, r->time);
	}
	if (range) {
		unsigned char c = (unsigned char)r->last;

		p = LIT(p, ",\"start\":");
		p = json_hex_of(p, r->start, &from);
		p = LIT(p, ",\"end\":");
		p = json_hex(p, r->end);
		p = LIT(p, ",\"insns\":");
		p = tc_fmt_udec(p, r->insns);
		p = LIT(p, ",\"isa\":\"");
		p = put_isa(o, p, r);
		*p++ = '"';
		if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f) {	/* no escape */
			p = LIT(p, ",\"last\":\"");
			*p++ = r->last;
			*p++ = '"';
		} else if (c) {
			char last[2] = { r->last, 0 };

			p = LIT(p, ",\"last\":");
			done(o, p);
			tc_json_raw_str(&o->j, last);
			p = tc_json_raw_room(&o->j, FRAG_CAP + 2);
		}
		p = put_sym_at(o, p, from, FK_JSON_FROM, r->pid, r->start, 2);
	} else {
		p = LIT(p, ",\"from\":");
		p = json_hex_of(p, r->start, &from);
		p = LIT(p, ",\"to\":");
		p = json_hex_of(p, r->end, &to);
		p = put_sym_at(o, p, from, FK_JSON_FROM, r->pid, r->start, FRAG_CAP + 2);
		if (!from.b)	/* the symboliser was asked: the space number may have moved */
			to = frag_get(o, FK_JSON_TO, frag_key(o, r->pid, false), r->end);
		p = put_sym_at(o, p, to, FK_JSON_TO, r->pid, r->end, 2);
	}
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

/* -F's fields that show an address's symbol (text and JSON). */
#define SYM_FIELDS (1u << TC_LF_SYM | 1u << TC_LF_SYMOFF | 1u << TC_LF_DSO | 1u << TC_LF_DSOFF)

/* -F JSON of a range or branch without text, raw in one pass (write_json_fields' keys). */
static void write_json_fields_flow(struct tc_listing *o, const struct tc_rec *r,
				   const char *comm)
{
	bool range = r->type == TC_REC_RANGE, syms = o->fields & SYM_FIELDS;
	bool to_sym = syms && !range && has(o, TC_LF_ADDR);
	struct frag_ref from = { NULL, NULL, 0 }, to = { NULL, NULL, 0 };
	uint64_t key = syms ? frag_key(o, r->pid, true) : 0;
	const struct flags *fl;
	char *p;

	if (syms)
		from = frag_get(o, FK_F_JSON_FROM, key, r->start);
	if (to_sym)
		to = frag_get(o, FK_F_JSON_TO, key, r->end);
	p = tc_json_raw_room(&o->j, FLOW_ROOM + 2 * FRAG_CAP);
	p = range ? LIT(p, "{\"type\":\"range\"") : LIT(p, "{\"type\":\"branch\"");
	if (has(o, TC_LF_OFFSET)) {
		p = LIT(p, ",\"offset\":");
		p = tc_fmt_dec(p, (long long)r->offset);
	}
	if (has(o, TC_LF_ID) && r->id >= 0) {
		p = LIT(p, ",\"id\":");
		p = json_hex(p, (unsigned)r->id);
	}
	if (has(o, TC_LF_COMM) && comm) {
		p = LIT(p, ",\"comm\":");
		done(o, p);
		tc_json_raw_str(&o->j, comm);
		p = tc_json_raw_room(&o->j, FLOW_ROOM + 2 * FRAG_CAP);
	}
	if (has(o, TC_LF_PID) && r->pid >= 0) {
		p = LIT(p, ",\"pid\":");
		p = tc_fmt_dec(p, r->pid);
	}
	if (has(o, TC_LF_TID) && r->tid >= 0) {
		p = LIT(p, ",\"tid\":");
		p = tc_fmt_dec(p, r->tid);
	}
	if (has(o, TC_LF_CPU) && r->cpu >= 0) {
		p = LIT(p, ",\"cpu\":");
		p = tc_fmt_dec(p, r->cpu);
	}
	if (has(o, TC_LF_TIME) && r->has_time) {
		p = LIT(p, ",\"time\":");
		p = put_time(o, p, r->time);
	}
	if (has(o, TC_LF_FLAGS) && (fl = flags_of(r))->len) {	/* no escapes in these */
		p = LIT(p, ",\"flags\":\"");
		memcpy(p, fl->text + 11 - fl->len, 16);
		p += fl->len;
		*p++ = '"';
	}
	if (has(o, TC_LF_INSNCNT) && range) {
		p = LIT(p, ",\"insncnt\":");
		p = tc_fmt_udec(p, r->insns);
	}
	if (has(o, TC_LF_IP)) {
		p = LIT(p, ",\"ip\":");
		p = json_hex_of(p, r->start, &from);
	}
	if (syms)
		p = put_sym_at(o, p, from, FK_F_JSON_FROM, r->pid, r->start, FLOW_ROOM);
	if (has(o, TC_LF_ADDR)) {
		p = LIT(p, ",\"addr\":");
		p = json_hex_of(p, r->end, &to);	/* kept apart from from's */
		if (to_sym) {
			if (!from.b)	/* asked of the symboliser: perhaps moved */
				to = frag_get(o, FK_F_JSON_TO, frag_key(o, r->pid, true),
					      r->end);
			p = put_sym_at(o, p, to, FK_F_JSON_TO, r->pid, r->end, 2);
		}
	}
	p = LIT(p, "}\n");
	done(o, p);
	tc_json_raw_done(&o->j);
}

/* -F: the chosen keys; "type" always, so that records can be told apart. */
static void write_json_fields(struct tc_listing *o, const struct tc_rec *r)
{
	struct tc_json *j = &o->j;
	const char *comm = o->comm ? o->comm(o->comm_ctx, r) : NULL;
	uint64_t ip, addr;

	if ((r->type == TC_REC_RANGE || r->type == TC_REC_BRANCH) && !(r->text && *r->text)) {
		write_json_fields_flow(o, r, comm);
		return;
	}
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
	if (has(o, TC_LF_FLAGS) && flags_of(r)->len)
		TC_JSON_KSTR(j, "flags", flags_of(r)->name);
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

/* text_time(p, t, 5) of a time t, the seconds' part kept for times of one second
 * (o->text_time). */
static inline char *put_text_time(struct tc_listing *o, char *p, uint64_t t)
{
	uint64_t ns;

	if (__builtin_expect(t - o->text_time.lo >= o->text_time.hi - o->text_time.lo, 0)) {
		o->text_time.lo = t - t % 1000000000;
		o->text_time.hi = o->text_time.lo + 1000000000;
		o->text_time.len = (unsigned)(text_time(o->text_time.b, t, 5) - 9 -
					      o->text_time.b);
	}
	memcpy(p, o->text_time.b, 32);
	p += o->text_time.len;
	ns = t - o->text_time.lo;
	*p++ = (char)('0' + ns / 100000000);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	ns = tc_fmt_dec8((uint32_t)(ns % 100000000));
	memcpy(p, &ns, 8);
	return p + 8;
#else
	return tc_fmt_udec_0w(p, ns % 100000000, 8);
#endif
}

/* A range or a branch without text, in one pass as write_json_flow. */
static void write_text_flow(struct tc_listing *o, const struct tc_rec *r)
{
	bool range = r->type == TC_REC_RANGE;
	char *p = tc_json_raw_room(&o->j, FLOW_ROOM + 2 * FRAG_CAP);
	uint64_t key = frag_key(o, r->pid, false);
	struct frag_ref from = frag_get(o, range ? FK_TEXT_RANGE : FK_TEXT_AT, key, r->start);
	struct frag_ref to = { NULL, NULL, 0 };
	const struct tc_listing_head *h;

	if (!range)
		to = frag_get(o, FK_TEXT_AT, key, r->end);
	p = tc_fmt_hex_w(p, r->offset, 10, ' ');	/* "%10" PRIx64 " " */
	h = head_of(o, r, false, NULL, 0);
	p = copy64(p, h->b, h->len);
	*p++ = ' ';
	p = hex0x_of(p, r->start, &from);
	if (range) {			/* " 0x%" PRIx64 "-0x%" PRIx64 " %u %s %c" */
		*p++ = '-';
		p = tc_fmt_0xhex(p, r->end);
		*p++ = ' ';
		p = tc_fmt_udec(p, r->insns);
		*p++ = ' ';
		p = put_isa(o, p, r);
		*p++ = ' ';
		*p++ = r->last ? r->last : '?';
		p = put_sym_at(o, p, from, FK_TEXT_RANGE, r->pid, r->start, 1);
	} else {			/* " 0x%" PRIx64 ... " -> 0x%" PRIx64 ... */
		p = put_sym_at(o, p, from, FK_TEXT_AT, r->pid, r->start, FLOW_ROOM);
		if (!from.b)	/* asked of the symboliser: to's slot may be another's now */
			to = frag_get(o, FK_TEXT_AT, frag_key(o, r->pid, false), r->end);
		p = LIT(p, " -> ");
		p = hex0x_of(p, r->end, &to);
		p = put_sym_at(o, p, to, FK_TEXT_AT, r->pid, r->end, 1);
	}
	*p++ = '\n';
	done(o, p);
	tc_json_raw_done(&o->j);
}

static void write_text(struct tc_listing *o, const struct tc_rec *r)
{
	const struct tc_listing_head *h;
	char *p;

	if ((r->type == TC_REC_RANGE || r->type == TC_REC_BRANCH) && !(r->text && *r->text)) {
		write_text_flow(o, r);
		return;
	}
	p = room(o);
	p = tc_fmt_hex_w(p, r->offset, 10, ' ');	/* "%10" PRIx64 " " */
	h = head_of(o, r, false, NULL, 0);
	p = copy64(p, h->b, h->len);
	switch (r->type) {
	case TC_REC_RANGE: {		/* " 0x%" PRIx64 "-0x%" PRIx64 " %u %s %c" */
		*p++ = ' ';
		p = tc_fmt_0xhex(p, r->start);
		*p++ = '-';
		p = tc_fmt_0xhex(p, r->end);
		*p++ = ' ';
		p = tc_fmt_udec(p, r->insns);
		*p++ = ' ';
		p = put_isa(o, p, r);
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

static void write_text_fields(struct tc_listing *o, const struct tc_rec *r)
{
	const char *comm = NULL;
	uint64_t ip, addr;
	bool any_ip = ip_of(r, &ip), to_sym;
	/* what text_fields_sym_of writes: nothing without these */
	bool syms = o->fields & (1u << TC_LF_SYM | 1u << TC_LF_DSO | 1u << TC_LF_DSOFF);
	struct frag_ref from = { NULL, NULL, 0 }, to = { NULL, NULL, 0 };
	uint64_t key;
	char *p;

	if (has(o, TC_LF_COMM))
		comm = o->comm ? o->comm(o->comm_ctx, r) : NULL;
	to_sym = syms && any_ip && has(o, TC_LF_ADDR) && r->type == TC_REC_BRANCH;
	/* the symbols' kept bytes found first, read while the columns before them are made */
	key = syms && any_ip ? frag_key(o, r->pid, true) : 0;
	if (syms && any_ip)
		from = frag_get(o, FK_F_TEXT, key, ip);
	if (to_sym)
		to = frag_get(o, FK_F_TEXT, key, r->end);
	p = tc_json_raw_room(&o->j, FLOW_ROOM + 2 * FRAG_CAP);
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
	if (has(o, TC_LF_COMM)) {			/* " %16s" */
		const char *c = comm ? comm : "[unknown]";
		size_t n = strlen(c);

		*p++ = ' ';
		if (n < 16) {
			p = tc_fmt_str_w(p, c, n, 16, 0);
		} else {
			done(o, p);
			put_mem(o, c, n);
			p = tc_json_raw_room(&o->j, FLOW_ROOM + 2 * FRAG_CAP);
		}
	}
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
			p = tc_json_raw_room(&o->j, FLOW_ROOM + 2 * FRAG_CAP);
		}
	}
	if (has(o, TC_LF_TIME)) {	/* " %5" PRIu64 ".%09" PRIu64 ":", " -:" */
		if (r->has_time) {
			p = put_text_time(o, p, r->time);
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
		memcpy(p, flags_of(r)->text, 16);
		p += 11;
	}
	if (has(o, TC_LF_INSNCNT)) {			/* " %5u", " %5s" of "" */
		*p++ = ' ';
		if (r->type == TC_REC_RANGE)
			p = tc_fmt_dec_w(p, r->insns, 5, 0);
		else
			p = LIT(p, "     ");
	}
	if (any_ip) {
		if (has(o, TC_LF_IP)) {			/* " %16" PRIx64 */
			*p++ = ' ';
			p = hex16_of(p, ip, &from);
		}
		if (syms)
			p = put_sym_at(o, p, from, FK_F_TEXT, r->pid, ip, FLOW_ROOM);
		/* from asked of the symboliser: to's slot may be another's now */
		if (to_sym && !from.b)
			to = frag_get(o, FK_F_TEXT, frag_key(o, r->pid, true), r->end);
		if (has(o, TC_LF_ADDR) && addr_of(r, &addr)) {	/* " => %16" PRIx64 */
			p = r->type == TC_REC_BRANCH ? LIT(p, " => ") : LIT(p, " .. ");
			p = hex16_of(p, addr, &to);	/* to: a branch's only */
			if (to_sym)
				p = put_sym_at(o, p, to, FK_F_TEXT, r->pid, r->end, 0);
		}
	}
	if (r->type == TC_REC_EVENT) {			/* " %s: %s" */
		done(o, p);
		put_mem(o, " ", 1);
		put_str(o, r->name ? r->name : "?");
		put_mem(o, ": ", 2);
		put_str(o, r->text ? r->text : "");
		put_mem(o, "\n", 1);
	} else if (r->text || (r->type != TC_REC_RANGE && r->type != TC_REC_BRANCH)) {
		done(o, p);
		text_detail(o, r);
		put_mem(o, "\n", 1);
	} else {	/* a range or branch: nothing more */
		*p++ = '\n';
		done(o, p);
	}
	tc_json_raw_done(&o->j);
}

void tc_listing_write(struct tc_listing *o, const struct tc_rec *r)
{
	if (o->fields)
		(o->json ? write_json_fields : write_text_fields)(o, r);
	else
		(o->json ? write_json : write_text)(o, r);
}
