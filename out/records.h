/* Writes decoded records as a text listing or JSON lines (one object per record). */
#ifndef TC_OUT_RECORDS_H
#define TC_OUT_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../decoders/record.h"
#include "json.h"

/* Optional symboliser: fills buf with "sym+0xoff" for addr, returns 0 if found. */
typedef int (*tc_symbolize_fn)(void *ctx, uint64_t addr, char *buf, size_t len);

struct tc_rec_out {
	FILE *f;
	bool json;
	struct tc_json j;
	tc_symbolize_fn sym;
	void *sym_ctx;
};

void tc_rec_out_init(struct tc_rec_out *o, FILE *f, bool json);
void tc_rec_write(struct tc_rec_out *o, const struct tc_rec *r);

#endif
