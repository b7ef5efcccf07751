/* Hand-built Intel PT for unit tests: libipt's encoder over a packet list. */
#ifndef TC_TESTS_UNIT_PT_ENC_H
#define TC_TESTS_UNIT_PT_ENC_H

#include <stddef.h>
#include <stdint.h>

#include <intel-pt.h>

#include <string.h>

/* A packet of type t, the rest zero. */
static inline struct pt_packet pkt(enum pt_packet_type t)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = t;
	return p;
}

/* Encode packets into buf; returns the bytes written or -1. */
static inline int encode_pt(uint8_t *buf, size_t cap, const struct pt_packet *pk, size_t n)
{
	struct pt_config cfg;
	struct pt_encoder *enc;
	uint64_t off = 0;
	int ret = 0;

	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + cap;
	enc = pt_alloc_encoder(&cfg);
	if (!enc)
		return -1;
	for (size_t i = 0; i < n && ret >= 0; i++)
		ret = pt_enc_next(enc, &pk[i]);
	if (ret >= 0)
		ret = pt_enc_get_offset(enc, &off) < 0 ? -1 : (int)off;
	pt_free_encoder(enc);
	return ret < 0 ? -1 : ret;
}

#endif
