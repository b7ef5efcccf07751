#include "lib/emulate/pt_enc.h"

#include <errno.h>
#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"

static int new_encoder(struct tc_pt_enc *x, uint64_t off, struct tc_err *e)
{
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.begin = x->buf;
	cfg.end = x->buf + x->cap;
	if (!(x->enc = pt_alloc_encoder(&cfg)) || pt_enc_sync_set(x->enc, off) < 0)
		return tc_err_set(e, ENOMEM, "cannot create a libipt encoder");
	return 0;
}

int tc_pt_enc_init(struct tc_pt_enc *x, bool retcomp, uint64_t psb_every, struct tc_err *e)
{
	memset(x, 0, sizeof(*x));
	x->retcomp = retcomp;
	x->psb_every = psb_every ? psb_every : 4096;
	x->cap = 1 << 16;
	if (!(x->buf = calloc(1, x->cap)))
		return tc_err_set(e, ENOMEM, "out of memory");
	return new_encoder(x, 0, e);
}

void tc_pt_enc_fini(struct tc_pt_enc *x)
{
	if (x->enc)
		pt_free_encoder(x->enc);
	free(x->buf);
	memset(x, 0, sizeof(*x));
}

uint64_t tc_pt_enc_offset(const struct tc_pt_enc *x)
{
	uint64_t off = 0;

	pt_enc_get_offset(x->enc, &off);
	return off;
}

void tc_pt_enc_ring(struct tc_pt_enc *x, uint64_t size)
{
	x->ring = size;
}

/* Ring mode: drop all but the latest x->ring bytes (done in bulk: a move per ring's worth). */
static int trim(struct tc_pt_enc *x, struct tc_err *e)
{
	uint64_t off = tc_pt_enc_offset(x), drop;

	if (!x->ring || off < 2 * x->ring)
		return 0;
	drop = off - x->ring;
	memmove(x->buf, x->buf + drop, x->ring);
	memset(x->buf + x->ring, 0, x->cap - x->ring);
	x->base += drop;
	x->next_psb = x->next_psb > drop ? x->next_psb - drop : 0;
	pt_free_encoder(x->enc);
	x->enc = NULL;
	return new_encoder(x, x->ring, e);
}

static int emit(struct tc_pt_enc *x, const struct pt_packet *p, struct tc_err *e)
{
	int n;

	/* libipt's encoder writes into a fixed buffer: on its end, a new encoder over a
	 * bigger copy continues at the same offset. */
	while ((n = pt_enc_next(x->enc, p)) == -pte_eos) {
		uint64_t off = tc_pt_enc_offset(x);
		size_t old = x->cap;

		if (tc_grow((void **)&x->buf, &x->cap, old + 1, 1))
			return tc_err_set(e, ENOMEM, "out of memory for Intel PT trace");
		memset(x->buf + old, 0, x->cap - old);
		pt_free_encoder(x->enc);
		x->enc = NULL;
		if (new_encoder(x, off, e))
			return -1;
	}
	if (n < 0)
		return tc_err_set(e, EINVAL, "libipt encoder: %s (packet type %d)",
				  pt_errstr(pt_errcode(n)), p->type);
	x->packets++;
	return trim(x, e);
}

int tc_pt_enc_flush_tnt(struct tc_pt_enc *x, struct tc_err *e)
{
	struct pt_packet p = { 0 };

	if (!x->nr_tnt)
		return 0;
	p.type = x->nr_tnt <= 6 ? ppt_tnt_8 : ppt_tnt_64;
	p.payload.tnt.bit_size = (uint8_t)x->nr_tnt;
	p.payload.tnt.payload = x->tnt;
	x->tnt = 0;
	x->nr_tnt = 0;
	return emit(x, &p, e);
}

int tc_pt_enc_tnt_bit(struct tc_pt_enc *x, bool taken, struct tc_err *e)
{
	/* The oldest branch is the most significant bit. */
	x->tnt = x->tnt << 1 | taken;
	if (++x->nr_tnt == 47)
		return tc_pt_enc_flush_tnt(x, e);
	return 0;
}

/* whole: the IP in full (sext48), not compressed against the last one */
static int ip_packet(struct tc_pt_enc *x, int type, uint64_t ip, bool whole, struct tc_err *e)
{
	struct pt_packet p = { 0 };

	if (tc_pt_enc_flush_tnt(x, e))
		return -1;
	p.type = (enum pt_packet_type)type;
	if (whole) {
		p.payload.ip.ipc = pt_ipc_sext_48;
		p.payload.ip.ip = ip & ((1ULL << 48) - 1);
	} else if ((ip >> 16) == (x->last_ip >> 16)) {
		p.payload.ip.ipc = pt_ipc_update_16;
		p.payload.ip.ip = ip & 0xffff;
	} else if ((ip >> 32) == (x->last_ip >> 32)) {
		p.payload.ip.ipc = pt_ipc_update_32;
		p.payload.ip.ip = ip & 0xffffffffu;
	} else {
		p.payload.ip.ipc = pt_ipc_sext_48;
		p.payload.ip.ip = ip & ((1ULL << 48) - 1);
	}
	x->last_ip = ip;
	return emit(x, &p, e);
}

int tc_pt_enc_ip(struct tc_pt_enc *x, int type, uint64_t ip, struct tc_err *e)
{
	return ip_packet(x, type, ip, false, e);
}

int tc_pt_enc_pgd_noip(struct tc_pt_enc *x, struct tc_err *e)
{
	struct pt_packet p = { 0 };

	if (tc_pt_enc_flush_tnt(x, e))
		return -1;
	p.type = ppt_tip_pgd;
	p.payload.ip.ipc = pt_ipc_suppressed;
	x->depth = 0;
	return emit(x, &p, e);
}

int tc_pt_enc_psb(struct tc_pt_enc *x, bool enabled, uint64_t ip, struct tc_err *e)
{
	struct pt_packet p = { 0 };

	if (tc_pt_enc_flush_tnt(x, e))
		return -1;
	p.type = ppt_psb;
	if (emit(x, &p, e))
		return -1;
	x->last_ip = 0;
	x->depth = 0;
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	/* The FUP whole, as the hardware writes it: perf takes it in before it forgets the
	 * last IP at the PSB (so a compressed one would keep the old upper bytes), libipt
	 * after. */
	if (emit(x, &p, e) || (enabled && ip_packet(x, ppt_fup, ip, true, e)))
		return -1;
	memset(&p, 0, sizeof(p));
	p.type = ppt_psbend;
	if (emit(x, &p, e))
		return -1;
	x->next_psb = tc_pt_enc_offset(x) + x->psb_every;
	return 0;
}

int tc_pt_enc_psb_due(struct tc_pt_enc *x, uint64_t ip, struct tc_err *e)
{
	/* the offset moves only with a packet: asked once per block, it need not be read */
	if (x->packets == x->psb_checked)
		return 0;
	x->psb_checked = x->packets;
	return tc_pt_enc_offset(x) >= x->next_psb ? tc_pt_enc_psb(x, true, ip, e) : 0;
}

void tc_pt_enc_push_ret(struct tc_pt_enc *x, uint64_t ret)
{
	if (x->depth == TC_PT_RET_STACK) {
		memmove(x->stack, x->stack + 1, (TC_PT_RET_STACK - 1) * sizeof(x->stack[0]));
		x->depth--;
	}
	x->stack[x->depth++] = ret;
}

bool tc_pt_enc_pop_ret(struct tc_pt_enc *x, uint64_t to)
{
	if (!x->retcomp || !x->depth || x->stack[x->depth - 1] != to)
		return false;
	x->depth--;
	return true;
}
