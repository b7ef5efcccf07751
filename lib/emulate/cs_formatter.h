/* CoreSight Trace Formatter, encoder side: interleaves several trace IDs' byte streams into
 * 16-byte frames as a sink (ETB/ETF/ETR) writes them to memory. The inverse of
 * decoders/coresight/cs_frame.c. */
#ifndef TC_LIB_EMULATE_CS_FORMATTER_H
#define TC_LIB_EMULATE_CS_FORMATTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util/err.h"

struct tc_cs_formatter;

struct tc_cs_formatter *tc_cs_formatter_new(struct tc_err *e);
void tc_cs_formatter_free(struct tc_cs_formatter *f);

/* Every frame starts with an ID change (the current ID again if need be), so that the sink
 * decodes from any frame: an overwrite-mode (snapshot) ring keeps the latest frames only. */
void tc_cs_formatter_every_frame_id(struct tc_cs_formatter *f, bool on);

/* Append len bytes of trace ID id (0x01-0x6f). Returns 0, or -1 with e set. */
int tc_cs_formatter_write(struct tc_cs_formatter *f, uint8_t id, const void *data, size_t len,
		   struct tc_err *e);
/* Complete a partial frame with null-ID (0x00) padding, as a sink does on flush. */
int tc_cs_formatter_flush(struct tc_cs_formatter *f, struct tc_err *e);
/* Flush, then one whole frame of null-ID padding: the sink's last trace bytes are not in its
 * last frame (see emu_etm.c, end_sink()). */
int tc_cs_formatter_pad_frame(struct tc_cs_formatter *f, struct tc_err *e);
/* Flush, then a frame of four FSYNCs (perf separates AUX blocks of an ETR so); the next
 * byte written starts with an ID change again. */
int tc_cs_formatter_fsync4(struct tc_cs_formatter *f, struct tc_err *e);

/* The complete frames so far (a multiple of 16 bytes). */
const uint8_t *tc_cs_formatter_data(const struct tc_cs_formatter *f, size_t *len);
/* Forget the first n bytes of tc_cs_formatter_data (n a multiple of 16). */
void tc_cs_formatter_drain(struct tc_cs_formatter *f, size_t n);

#endif
