/* The trace formats tracectl decodes: the one list of them (decoders/decoders.c). */
#ifndef TC_DECODERS_DECODERS_H
#define TC_DECODERS_DECODERS_H

#include <stddef.h>
#include <stdint.h>

#include "decoders/decoder.h"

/* Every format, n of them. */
const struct tc_decoder_ops *const *tc_decoders_all(size_t *n);
/* The format whose AUXTRACE_INFO type this is, or NULL. */
const struct tc_decoder_ops *tc_decoders_find(uint32_t auxtrace_type);

#endif
