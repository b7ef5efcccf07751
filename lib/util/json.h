/* The one JSON writer every command's -j goes through: streaming, compact (one document or
 * one object per line) or pretty-printed. Text collects in the writer's own buffer and goes
 * to the FILE whenever a top-level value is complete (or the buffer fills): decode -j writes
 * millions of records, and stdio calls per token were most of its time. */
#ifndef TC_LIB_UTIL_JSON_H
#define TC_LIB_UTIL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TC_JSON_MAX_DEPTH 32
#define TC_JSON_BUF 4096

struct tc_json {
	FILE *f;
	bool pretty;
	int depth;
	bool need_comma[TC_JSON_MAX_DEPTH];
	bool after_key;
	size_t len;			/* bytes in buf not yet given to f */
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
/* Gives what is buffered to the FILE (done by itself after each top-level value). */
void tc_json_flush(struct tc_json *j);

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
