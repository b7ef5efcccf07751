#include "decoders/decoders.h"

#include "decoders/coresight/cs_decoder.h"
#include "decoders/intel_pt/pt_decoder.h"

static const struct tc_decoder_ops *const formats[] = {
	&tc_cs_decoder_ops,
	&tc_pt_decoder_ops,
};

const struct tc_decoder_ops *const *tc_decoders_all(size_t *n)
{
	*n = sizeof(formats) / sizeof(formats[0]);
	return formats;
}

const struct tc_decoder_ops *tc_decoders_find(uint32_t auxtrace_type)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (formats[i]->auxtrace_type == auxtrace_type)
			return formats[i];
	return NULL;
}
