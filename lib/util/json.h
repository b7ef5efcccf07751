/* The one JSON writer every command's -j goes through: streaming, compact (one document or
 * one object per line) or pretty-printed. Text collects in the writer's own buffer and goes
 * to the FILE whenever a top-level value is complete (or the buffer fills): decode -j writes
 * millions of records, and stdio calls per token were most of its time. A writer in batch
 * mode (tc_json_batch) keeps complete values too, until its buffer fills or tc_json_flush:
 * one write per TC_JSON_BUF bytes, for a writer that is alone on its FILE.
 *
 * The buffer also takes raw bytes (tc_json_raw_*) from a writer of records that formats
 * them itself (text listings, or a whole JSON object at depth 0): one buffer, one order. */
#ifndef TC_LIB_UTIL_JSON_H
#define TC_LIB_UTIL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TC_JSON_MAX_DEPTH 32
#define TC_JSON_BUF 65536

struct tc_json {
	FILE *f;
	bool pretty;
	int depth;
	bool need_comma[TC_JSON_MAX_DEPTH];
	bool after_key;
	bool batch;			/* complete values wait for a full buffer */
	size_t len;			/* bytes in out not yet given to f */
	char *out;			/* buf, or a bigger one (tc_json_use_buffer) */
	size_t cap;			/* out's size */
	char buf[TC_JSON_BUF];
};

void tc_json_init(struct tc_json *j, FILE *f, bool pretty);
void tc_json_obj_open(struct tc_json *j);
void tc_json_obj_close(struct tc_json *j);	/* at depth 0 also ends the line */
void tc_json_arr_open(struct tc_json *j);
void tc_json_arr_close(struct tc_json *j);
void tc_json_key(struct tc_json *j, const char *key);
void tc_json_str(struct tc_json *j, const char *s);	/* NULL writes null */
void tc_json_int(struct tc_json *j, long long v);
void tc_json_uint(struct tc_json *j, unsigned long long v);
void tc_json_hex(struct tc_json *j, unsigned long long v);	/* "0x..." string */
void tc_json_bool(struct tc_json *j, bool v);
void tc_json_double(struct tc_json *j, double v);	/* %.6g; null if not finite */
void tc_json_null(struct tc_json *j);
/* Gives what is buffered to the FILE (done by itself after each top-level value, unless
 * batched). */
void tc_json_flush(struct tc_json *j);
/* Batch mode on or off (off: what is buffered goes to the FILE now). */
void tc_json_batch(struct tc_json *j, bool on);
/* Write through buf (cap bytes, at least TC_JSON_BUF; NULL: the writer's own again), what
 * is buffered handed on first: fewer writes for a batched writer of many records. buf
 * stays the caller's, and must outlive its use. */
void tc_json_use_buffer(struct tc_json *j, char *buf, size_t cap);
/* A string value "s+0x<v in hex>" (s escaped): a symbol and its offset. */
void tc_json_str_plus_hex(struct tc_json *j, const char *s, unsigned long long v);

/* Raw bytes, no separators or state: room for n bytes (n <= TC_JSON_BUF / 4) at the end of
 * the buffer, handing what is there to the FILE first if needed; then tc_json_raw_end with
 * the end of what was written there. */
static inline char *tc_json_raw_room(struct tc_json *j, size_t n)
{
	if (__builtin_expect(j->len + n > j->cap, 0))
		tc_json_flush(j);
	return j->out + j->len;
}
static inline void tc_json_raw_end(struct tc_json *j, const char *end)
{
	j->len = (size_t)(end - j->out);
}
/* n raw bytes of any length. */
void tc_json_raw_mem(struct tc_json *j, const char *s, size_t n);
/* A quoted, escaped JSON string, raw (no separator before it). */
void tc_json_raw_str(struct tc_json *j, const char *s);
/* tc_json_str_plus_hex's value, raw. */
void tc_json_raw_str_plus_hex(struct tc_json *j, const char *s, unsigned long long v);
/* A record written raw is complete: to the FILE unless batched. */
static inline void tc_json_raw_done(struct tc_json *j)
{
	if (!j->batch)
		tc_json_flush(j);
}

/* A key that is a string literal (the macros accept nothing else): written as it is,
 * quoted at compile time, no escape scan; for the keys of records written by the million. */
void tc_json_key_lit(struct tc_json *j, const char *quoted, size_t len);
#define TC_JSON_KEY(j, k) tc_json_key_lit((j), "\"" k "\"", sizeof(k) + 1)
#define TC_JSON_KINT(j, k, v) (TC_JSON_KEY(j, k), tc_json_int((j), (v)))
#define TC_JSON_KHEX(j, k, v) (TC_JSON_KEY(j, k), tc_json_hex((j), (v)))
#define TC_JSON_KSTR(j, k, v) (TC_JSON_KEY(j, k), tc_json_str((j), (v)))

/* key + value in one call */
void tc_json_kstr(struct tc_json *j, const char *k, const char *s);
void tc_json_kint(struct tc_json *j, const char *k, long long v);
void tc_json_khex(struct tc_json *j, const char *k, unsigned long long v);
void tc_json_kbool(struct tc_json *j, const char *k, bool v);

#endif
