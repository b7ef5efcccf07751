/* CoreSight ETM (AUXTRACE_INFO type 3, CS_ETM) behind decoders/decoder.h: packets or
 * instruction flow through decoders/coresight/cs_perf, and what it found as messages. */
#ifndef TC_DECODERS_CORESIGHT_CS_DECODER_H
#define TC_DECODERS_CORESIGHT_CS_DECODER_H

#include "decoders/decoder.h"

extern const struct tc_decoder_ops tc_cs_decoder_ops;

#endif
