/* Intel PT (AUXTRACE_INFO type 1) behind decoders/decoder.h: instruction flow through
 * decoders/intel_pt/pt_session, or the packets of each AUXTRACE buffer as it is read
 * (decoders/intel_pt/pt_packets), and what it found as messages. */
#ifndef TC_DECODERS_INTEL_PT_PT_DECODER_H
#define TC_DECODERS_INTEL_PT_PT_DECODER_H

#include "decoders/decoder.h"

extern const struct tc_decoder_ops tc_pt_decoder_ops;

#endif
