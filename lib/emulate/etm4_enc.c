/* ETMv4 instruction trace encoder; see etm4_enc.h. Packet formats (ETMv4 architecture):
 *   A-sync        00 x11, 80
 *   TRACE_INFO    01, control byte (bit0: INFO section follows), INFO = 0 (no CC/cond/data)
 *   TRACE_ON      04
 *   EXCEPTION     06, E0 | type[4:0] << 1 | E1 << 6 (| 0x80 + byte of type[9:5])
 *   ADDR_CTXT_64  85, 8 address bytes, info (EL | SF<<4 | NS<<5 | C<<7), CONTEXTIDR LE
 *   ADDR_MATCH    90 + i: the address of the i-th most recent address packet (i < 3)
 *   ADDR_S_IS0    95, a[8:2] | more<<7 (, a[16:9]): replaces the low 9 or 17 bits
 *   ADDR_L_32IS0  9a, a[8:2], a[15:9], a[23:16], a[31:24]: replaces the low 32 bits
 *   ADDR_L_64IS0  9d, as 32 plus a[39:32] .. a[63:56]
 *   TIMESTAMP     02, ts in 7-bit groups from bit 0, bit 7 = more (a 9th byte holds 8 bits)
 *   ATOM F1/F2/F3 f6|a, d8|aa, f8|aaa (bit 0 = oldest, 1 = E); F6: c0|(n-4) = n E's,
 *                 e0|(n-3) = n E's then N.
 * Compression is against what a decoder holds: the last three address packet values,
 * cleared by TRACE_INFO. */
#include "lib/emulate/etm4_enc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"

#define ATOMS_MAX	24	/* the most one F6 packet carries */
#define SYNC_DEFAULT	4096

struct tc_etm4_enc {
	struct tc_etm4_cfg cfg;
	uint32_t ctxid;

	uint8_t *buf;		/* encoded bytes [off, n) not yet drained */
	size_t off, n, cap;
	bool oom;

	bool started;
	uint64_t pos;		/* where the decoder stands after the last block */
	size_t since_sync;	/* bytes since the last A-sync */

	uint64_t hist[3];	/* decoder's address packet history, [0] newest */
	bool hist_ok[3];
	bool sf_known;		/* a context with SF=1 was sent: 32-bit addresses keep [63:32] */

	uint32_t atoms;		/* pending atoms, bit 0 oldest, 1 = E */
	unsigned natoms;

	struct tc_etm4_enc_stats st;
};

void tc_etm4_enc_default_regs(struct tc_etm4_regs *r, uint8_t trace_id)
{
	*r = (struct tc_etm4_regs){
		.configr = 0x41,	/* bit 6: context ID tracing; bit 0 RES1 */
		.traceidr = trace_id,
		.authstatus = 0xcc,
		.idr0 = 0x28000ea1,	/* Cortex-A53 (Juno r1) */
		.idr1 = 0x4100f403,	/* ETMv4.0 */
		.idr2 = 0x00000488,	/* 64-bit IA, 32-bit CONTEXTIDR, 8-bit VMID */
	};
}

struct tc_etm4_enc *tc_etm4_enc_new(const struct tc_etm4_cfg *cfg, struct tc_err *e)
{
	struct tc_etm4_enc *enc = calloc(1, sizeof(*enc));

	if (!enc) {
		tc_err_set(e, ENOMEM, "out of memory for the ETMv4 encoder");
		return NULL;
	}
	enc->cfg = *cfg;
	if (!enc->cfg.sync_period)
		enc->cfg.sync_period = SYNC_DEFAULT;
	enc->ctxid = cfg->ctxid;
	return enc;
}

void tc_etm4_enc_free(struct tc_etm4_enc *enc)
{
	if (!enc)
		return;
	free(enc->buf);
	free(enc);
}

static void put(struct tc_etm4_enc *enc, const uint8_t *p, size_t len)
{
	if (enc->oom)
		return;
	if (enc->n + len > enc->cap) {
		if (enc->off) {
			memmove(enc->buf, enc->buf + enc->off, enc->n - enc->off);
			enc->n -= enc->off;
			enc->off = 0;
		}
		if (tc_grow((void **)&enc->buf, &enc->cap, enc->n + len, 1)) {
			enc->oom = true;
			return;
		}
	}
	memcpy(enc->buf + enc->n, p, len);
	enc->n += len;
	enc->since_sync += len;
	enc->st.bytes += len;
}

static void put1(struct tc_etm4_enc *enc, uint8_t b)
{
	put(enc, &b, 1);
}

static void hist_push(struct tc_etm4_enc *enc, uint64_t a)
{
	enc->hist[2] = enc->hist[1];
	enc->hist[1] = enc->hist[0];
	enc->hist[0] = a;
	enc->hist_ok[2] = enc->hist_ok[1];
	enc->hist_ok[1] = enc->hist_ok[0];
	enc->hist_ok[0] = true;
}

/* The 8 address bytes of a 64-bit IS0 address (also the first 4 of a 32-bit one). */
static void addr_bytes(uint8_t *p, uint64_t a)
{
	p[0] = (a >> 2) & 0x7f;
	p[1] = (a >> 9) & 0x7f;
	for (int i = 2; i < 8; i++)
		p[i] = (a >> (8 * i)) & 0xff;
}

static void emit_addr(struct tc_etm4_enc *enc, uint64_t a)
{
	uint8_t p[9];

	if (!enc->cfg.no_exact_match) {
		for (int i = 0; i < 3; i++) {
			if (enc->hist_ok[i] && enc->hist[i] == a) {
				put1(enc, 0x90 | i);
				hist_push(enc, a);
				enc->st.addr_match++;
				return;
			}
		}
	}
	uint64_t d = enc->hist_ok[0] ? a ^ enc->hist[0] : UINT64_MAX;

	if (!(d >> 9)) {
		p[0] = 0x95;
		p[1] = (a >> 2) & 0x7f;
		put(enc, p, 2);
		enc->st.addr_short++;
	} else if (!(d >> 17)) {
		p[0] = 0x95;
		p[1] = 0x80 | ((a >> 2) & 0x7f);
		p[2] = (a >> 9) & 0xff;
		put(enc, p, 3);
		enc->st.addr_short++;
	} else if (!(d >> 32) && enc->sf_known) {
		p[0] = 0x9a;
		addr_bytes(p + 1, a);
		put(enc, p, 5);
		enc->st.addr_long32++;
	} else {
		p[0] = 0x9d;
		addr_bytes(p + 1, a);
		put(enc, p, 9);
		enc->st.addr_long64++;
	}
	hist_push(enc, a);
}

static void emit_addr_ctxt(struct tc_etm4_enc *enc, uint64_t a)
{
	uint8_t p[14];

	p[0] = 0x85;
	addr_bytes(p + 1, a);
	/* EL, SF (AArch64), NS (normal world), C (CONTEXTIDR follows) */
	p[9] = (enc->cfg.el & 3) | 0x10 | 0x20 | 0x80;
	for (int i = 0; i < 4; i++)
		p[10 + i] = (enc->ctxid >> (8 * i)) & 0xff;
	put(enc, p, sizeof(p));
	hist_push(enc, a);
	enc->sf_known = true;
	enc->st.addr_ctxt++;
}

static void emit_sync(struct tc_etm4_enc *enc)
{
	static const uint8_t async[12] = { [11] = 0x80 };
	static const uint8_t tinfo[3] = { 0x01, 0x01, 0x00 };

	enc->since_sync = 0;
	put(enc, async, sizeof(async));
	put(enc, tinfo, sizeof(tinfo));
	/* TRACE_INFO clears the decoder's address history. */
	memset(enc->hist_ok, 0, sizeof(enc->hist_ok));
	enc->sf_known = false;
	enc->st.syncs++;
}

static void flush_atoms(struct tc_etm4_enc *enc)
{
	while (enc->natoms) {
		uint32_t a = enc->atoms;
		unsigned n = enc->natoms, r = 0, used;
		uint8_t b;

		while (r < n && (a >> r) & 1)
			r++;
		if (r >= 3 && r < n && r <= 23) {
			b = 0xe0 | (r - 3);	/* F6: r E's then N */
			used = r + 1;
		} else if (r >= 4) {
			used = r > ATOMS_MAX ? ATOMS_MAX : r;
			b = 0xc0 | (used - 4);	/* F6: all E */
		} else if (n >= 3) {
			b = 0xf8 | (a & 7);
			used = 3;
		} else if (n == 2) {
			b = 0xd8 | (a & 3);
			used = 2;
		} else {
			b = 0xf6 | (a & 1);
			used = 1;
		}
		put1(enc, b);
		enc->st.atom_packets++;
		enc->atoms = used < 32 ? a >> used : 0;
		enc->natoms -= used;
	}
}

static void add_atom(struct tc_etm4_enc *enc, bool taken)
{
	if (enc->natoms == ATOMS_MAX)
		flush_atoms(enc);
	enc->atoms |= (uint32_t)taken << enc->natoms;
	enc->natoms++;
	if (taken)
		enc->st.atoms_e++;
	else
		enc->st.atoms_n++;
}

static void emit_exception(struct tc_etm4_enc *enc, uint16_t type)
{
	uint8_t p[3];
	size_t n = 2;

	p[0] = 0x06;
	p[1] = 0x01 | ((type & 0x1f) << 1);	/* E1:E0 = 01: return address follows */
	if (type >> 5) {
		p[1] |= 0x80;
		p[2] = (type >> 5) & 0x1f;
		n = 3;
	}
	put(enc, p, n);
	enc->st.exceptions++;
}

static int check(struct tc_etm4_enc *enc, struct tc_err *e)
{
	if (enc->oom)
		return tc_err_set(e, ENOMEM, "out of memory for ETMv4 trace (%zu bytes held)",
				  enc->n - enc->off);
	return 0;
}

void tc_etm4_enc_gap(struct tc_etm4_enc *enc)
{
	enc->pos = UINT64_MAX;	/* no block starts there (instructions are aligned) */
}

int tc_etm4_enc_block(struct tc_etm4_enc *enc, const struct tc_etm4_enc_block *b, struct tc_err *e)
{
	enc->st.blocks++;
	if (!enc->started || b->start != enc->pos) {
		flush_atoms(enc);
		if (!enc->started)
			emit_sync(enc);
		put1(enc, 0x04);	/* TRACE_ON: a discontinuity before this address */
		enc->st.trace_ons++;
		if (!enc->started && enc->cfg.start_ts) {
			enc->started = true;
			if (tc_etm4_enc_timestamp(enc, enc->cfg.start_ts, e))
				return -1;
		}
		emit_addr_ctxt(enc, b->start);
		enc->started = true;
	} else if (enc->since_sync >= enc->cfg.sync_period) {
		/* Periodic sync at a packet boundary: the decoder's position is b->start. */
		flush_atoms(enc);
		emit_sync(enc);
		emit_addr_ctxt(enc, b->start);
	}

	switch (b->end) {
	case TC_ETM4_END_NONE:
		break;
	case TC_ETM4_END_TAKEN:
		add_atom(enc, true);
		break;
	case TC_ETM4_END_NOT_TAKEN:
		add_atom(enc, false);
		break;
	case TC_ETM4_END_INDIRECT:
		/* The target address must directly follow the E atom of the branch. */
		add_atom(enc, true);
		flush_atoms(enc);
		emit_addr(enc, b->next);
		break;
	case TC_ETM4_END_EXCEPTION:
		flush_atoms(enc);
		emit_exception(enc, b->exc_type);
		emit_addr(enc, b->exc_ret);
		emit_addr(enc, b->next);
		break;
	case TC_ETM4_END_CONTEXT:
		/* A marker: from start on the context is ctxid. */
		flush_atoms(enc);
		enc->ctxid = b->ctxid;
		emit_addr_ctxt(enc, b->start);
		enc->pos = b->start;
		return check(enc, e);
	}
	enc->pos = b->next;
	return check(enc, e);
}

int tc_etm4_enc_timestamp(struct tc_etm4_enc *enc, uint64_t ts, struct tc_err *e)
{
	uint8_t p[10];
	size_t n = 1;

	if (!enc->started)
		return 0;
	flush_atoms(enc);
	p[0] = 0x02;
	/* The whole value, as few bytes as hold it: a decoder keeps the bits above those sent,
	 * and a value that never goes down has no bits above them set. */
	while (n < 9) {
		p[n] = ts & 0x7f;
		ts >>= 7;
		if (!ts)
			break;
		p[n++] |= 0x80;
	}
	if (n == 9)
		p[n] = (uint8_t)ts;
	put(enc, p, n + 1);
	enc->st.timestamps++;
	return check(enc, e);
}

int tc_etm4_enc_flush(struct tc_etm4_enc *enc, struct tc_err *e)
{
	flush_atoms(enc);
	return check(enc, e);
}

const uint8_t *tc_etm4_enc_data(const struct tc_etm4_enc *enc, size_t *len)
{
	*len = enc->n - enc->off;
	return enc->buf ? enc->buf + enc->off : (const uint8_t *)"";
}

void tc_etm4_enc_drain(struct tc_etm4_enc *enc, size_t n)
{
	if (n > enc->n - enc->off)
		n = enc->n - enc->off;
	enc->off += n;
	if (enc->off == enc->n)
		enc->off = enc->n = 0;
}

const struct tc_etm4_enc_stats *tc_etm4_enc_stats(const struct tc_etm4_enc *enc)
{
	return &enc->st;
}
