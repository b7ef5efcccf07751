/* Writes decoded records as a text listing or JSON lines (one object per record). */
#ifndef TC_LIB_OUTPUT_LISTING_H
#define TC_LIB_OUTPUT_LISTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "decoders/rec.h"
#include "lib/util/json.h"

/* Optional symboliser: fills buf with "sym+0xoff" for addr, returns 0 if found. */
typedef int (*tc_symbolize_fn)(void *ctx, uint64_t addr, char *buf, size_t len);

struct tc_listing {
	FILE *f;
	bool json;
	struct tc_json j;
	tc_symbolize_fn sym;
	void *sym_ctx;
};

void tc_listing_init(struct tc_listing *o, FILE *f, bool json);
void tc_listing_write(struct tc_listing *o, const struct tc_rec *r);

#endif
