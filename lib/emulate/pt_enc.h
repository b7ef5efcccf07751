/* Intel PT packet stream of one traced thread, written with libipt's encoder the way the
 * hardware would: TNT bits gathered, IP packets compressed against the last IP, PSB+
 * periodically, and the return-compression stack the decoder keeps in step with. */
#ifndef TC_LIB_EMULATE_PT_ENC_H
#define TC_LIB_EMULATE_PT_ENC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util/err.h"

#define TC_PT_RET_STACK 64

struct tc_pt_enc {
	struct pt_encoder *enc;
	uint8_t *buf;
	size_t cap;
	uint64_t last_ip;
	uint64_t tnt;
	unsigned nr_tnt;
	bool retcomp;		/* compress returns into TNT bits (config has no DisRETC) */
	uint64_t stack[TC_PT_RET_STACK];
	unsigned depth;
	uint64_t psb_every, next_psb;
	unsigned long packets;
	unsigned long psb_checked;	/* packets when tc_pt_enc_psb_due last looked */
	uint64_t ring;		/* snapshot mode: only the latest ring bytes are kept (0: all) */
	uint64_t base;		/* trace bytes dropped before buf[0] (ring mode) */
};

/* psb_every: bytes between PSB+ (0: 4096). */
int tc_pt_enc_init(struct tc_pt_enc *x, bool retcomp, uint64_t psb_every, struct tc_err *e);
void tc_pt_enc_fini(struct tc_pt_enc *x);
/* Snapshot mode: keep only the latest size bytes of the trace (memory stays under about
 * twice that), as an AUX buffer in overwrite mode holds them. */
void tc_pt_enc_ring(struct tc_pt_enc *x, uint64_t size);
/* Bytes in x->buf (the trace is x->buf[0..offset); in ring mode the latest, from stream
 * position x->base). */
uint64_t tc_pt_enc_offset(const struct tc_pt_enc *x);

int tc_pt_enc_flush_tnt(struct tc_pt_enc *x, struct tc_err *e);
int tc_pt_enc_tnt_bit(struct tc_pt_enc *x, bool taken, struct tc_err *e);
/* TIP, TIP.PGE, TIP.PGD or FUP (libipt packet types) with ip compressed against the last. */
int tc_pt_enc_ip(struct tc_pt_enc *x, int type, uint64_t ip, struct tc_err *e);
/* TIP.PGD with the IP suppressed (tracing stops where a far transfer leaves user space). */
int tc_pt_enc_pgd_noip(struct tc_pt_enc *x, struct tc_err *e);
/* PSB+ (MODE.Exec 64-bit, a FUP of ip when tracing is enabled); the last IP and the
 * return stack start afresh. */
int tc_pt_enc_psb(struct tc_pt_enc *x, bool enabled, uint64_t ip, struct tc_err *e);
/* PSB+ when psb_every bytes have passed since the last. */
int tc_pt_enc_psb_due(struct tc_pt_enc *x, uint64_t ip, struct tc_err *e);
void tc_pt_enc_push_ret(struct tc_pt_enc *x, uint64_t ret);
/* True (and popped) when a return to to is compressible into a TNT bit. */
bool tc_pt_enc_pop_ret(struct tc_pt_enc *x, uint64_t to);

#endif
