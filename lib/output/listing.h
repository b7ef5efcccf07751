/* Writes decoded records as a text listing or JSON lines (one object per record).
 *
 * Every address a record shows (a range's start, both ends of a branch, an address without
 * code) is followed by its symbol, offset and DSO where a symboliser is given and finds
 * them. Text: "sym+0xoff (dso)", "[file+0xoff] (dso)" without a symbol. JSON keys, added
 * beside the address keys: "sym" ("name+0xoff"), "symoff", "dso", "dsoff" (the address in
 * the file, as perf's dsoff), and for a branch's target the same with "to_" in front.
 *
 * A field list (tc_listing_fields_parse, perf script's -F names) chooses the columns of
 * the text and the keys of the JSON instead; text then follows perf script's layout. */
#ifndef TC_LIB_OUTPUT_LISTING_H
#define TC_LIB_OUTPUT_LISTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "decoders/rec.h"
#include "lib/images/images.h"
#include "lib/util/json.h"

/* Optional symboliser: fills *s for pid's addr (the record's pid, -1 unknown; dso and/or sym
 * may be NULL), returns 0 where addr is mapped, -1 otherwise. */
typedef int (*tc_symbolize_fn)(void *ctx, int pid, uint64_t addr, struct tc_images_sym *s);
/* Optional thread names: the command name of r's thread when r happened, or NULL. */
typedef const char *(*tc_comm_fn)(void *ctx, const struct tc_rec *r);

/* -F fields, in the order they are printed whatever the order given (perf script's). */
enum tc_listing_field {
	TC_LF_OFFSET,		/* tracectl: byte offset in the input */
	TC_LF_ID,		/* tracectl: CoreSight trace ID */
	TC_LF_COMM,
	TC_LF_PID,
	TC_LF_TID,
	TC_LF_CPU,
	TC_LF_TIME,
	TC_LF_EVENT,		/* the record's type ("range", "branch", ...) */
	TC_LF_FLAGS,		/* branch kind: call, return, jmp, jcc, syscall, tr strt ... */
	TC_LF_INSNCNT,		/* instructions in a range */
	TC_LF_IP,		/* a range's start, a branch's source */
	TC_LF_SYM,
	TC_LF_SYMOFF,
	TC_LF_DSO,
	TC_LF_DSOFF,
	TC_LF_ADDR,		/* a branch's target, a range's end (exclusive) */
	TC_LF_COUNT
};

/* A place's keys (record type, trace ID, CPU, pid, tid) as the writer wrote them. */
struct tc_listing_head {
	int type, id, cpu, pid, tid;	/* type -1: none */
	unsigned len;
	char b[128];
};

/* What the writer keeps of the symboliser's answers (tc_listing_keep_syms). */
struct tc_listing_syms;

struct tc_listing {
	FILE *f;
	bool json;
	struct tc_json j;
	tc_symbolize_fn sym;
	void *sym_ctx;
	tc_comm_fn comm;
	void *comm_ctx;
	unsigned fields;	/* 1u << enum tc_listing_field; 0: the default listing */
	struct tc_listing_syms *syms;	/* NULL: nothing kept */
	/* Places' keys as written, for the next records of those places: a few, for records
	 * of threads or trace IDs in turn. */
	struct tc_listing_head head[4];
	/* JSON: the last offset's digits (off >= 10^8: none kept) */
	struct {
		uint64_t v;
		unsigned len;
		char b[8];
	} off;
	/* The last time's digits but its last 8 (listing.c): times in [lo, hi) share them. */
	struct {
		uint64_t lo, hi;
		unsigned len;
		char b[16];
	} time;
	/* The last range's ISA name (listing.c): v -1 none yet. */
	struct {
		int v;
		unsigned len;
		char b[16];
	} isa;
	/* The same for -F's text: " secs." of the second [lo, hi). */
	struct {
		uint64_t lo, hi;
		unsigned len;
		char b[64];
	} text_time;
};

void tc_listing_init(struct tc_listing *o, FILE *f, bool json);
void tc_listing_write(struct tc_listing *o, const struct tc_rec *r);
/* The symbol keys (JSON) or text of the default listing and of -F's (of the fields they
 * were made for), with the address's hex digits, made once per pid and address from
 * sym's answer and kept while the number *space(space_ctx) stays the same (decoders/
 * decoder.h's space op: while it does, sym answers the same for a pid >= 0 and the names
 * keep their bytes; space answering NULL: not known yet, nothing kept, asked again later);
 * and a bigger buffer for the writer (fewer writes, batched). 0, or -1 out of memory (the
 * writer then keeps nothing). tc_listing_fini hands on what is buffered and lets go of
 * what is kept. */
int tc_listing_keep_syms(struct tc_listing *o, const uint64_t *(*space)(void *ctx),
			 void *space_ctx);
void tc_listing_fini(struct tc_listing *o);
/* Batched: records wait in the writer's buffer until it is full (one write per
 * TC_JSON_BUF bytes), for a writer alone on its FILE; tc_listing_flush hands them on, and
 * must come before anything else is written to the FILE (or the program ends). Off (the
 * default): each record goes to the FILE as it is written. */
void tc_listing_batch(struct tc_listing *o, bool on);
void tc_listing_flush(struct tc_listing *o);
/* JSON keys of where r comes from: id, cpu, pid, tid (those known) and offset. */
void tc_listing_json_place(struct tc_json *j, const struct tc_rec *r);

/* "comm,tid,ip,sym" into *fields; -1 with the first unknown name in bad (len bytes). */
int tc_listing_fields_parse(const char *list, unsigned *fields, char *bad, size_t len);
/* The field names, comma-separated, for messages and help. */
const char *tc_listing_field_names(void);

#endif
