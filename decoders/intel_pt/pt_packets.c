#include "decoders/intel_pt/pt_packets.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

const char *tc_pt_packets_name(const struct pt_packet *p)
{
	switch (p->type) {
	case ppt_pad: return "pad";
	case ppt_psb: return "psb";
	case ppt_psbend: return "psbend";
	case ppt_fup: return "fup";
	case ppt_tip: return "tip";
	case ppt_tip_pge: return "tip.pge";
	case ppt_tip_pgd: return "tip.pgd";
	case ppt_tnt_8: return "tnt.8";
	case ppt_tnt_64: return "tnt.64";
	case ppt_mode:
		if (p->payload.mode.leaf == pt_mol_exec)
			return "mode.exec";
		if (p->payload.mode.leaf == pt_mol_tsx)
			return "mode.tsx";
		return "mode";
	case ppt_pip: return "pip";
	case ppt_vmcs: return "vmcs";
	case ppt_cbr: return "cbr";
	case ppt_tsc: return "tsc";
	case ppt_tma: return "tma";
	case ppt_mtc: return "mtc";
	case ppt_cyc: return "cyc";
	case ppt_stop: return "stop";
	case ppt_ovf: return "ovf";
	case ppt_mnt: return "mnt";
	case ppt_exstop: return "exstop";
	case ppt_mwait: return "mwait";
	case ppt_pwre: return "pwre";
	case ppt_pwrx: return "pwrx";
	case ppt_ptw: return "ptw";
	case ppt_unknown: return "<unknown>";
	case ppt_invalid: break;
	}
	return "<invalid>";
}

/* The main payload as a number, and roughly ptdump's payload column as text. */
static uint64_t payload(const struct pt_packet *p, char *buf, size_t len)
{
	const char *a, *b;
	uint64_t v = 0;
	bool hex = false;	/* the text is just v in hex */

	buf[0] = 0;
	switch (p->type) {
	case ppt_fup:
	case ppt_tip:
	case ppt_tip_pge:
	case ppt_tip_pgd:
		/* The payload as compressed; the full IP needs the last-IP state. */
		v = p->payload.ip.ip;
		if (p->payload.ip.ipc == pt_ipc_suppressed)
			snprintf(buf, len, "0: suppressed");
		else
			snprintf(buf, len, "%x: %" PRIx64, p->payload.ip.ipc, v);
		break;
	case ppt_tnt_8:
	case ppt_tnt_64: {
		uint8_t n = p->payload.tnt.bit_size;
		size_t i;

		v = p->payload.tnt.payload;
		/* Oldest branch first: the most significant payload bit. */
		for (i = 0; i < n && i + 1 < len; i++)
			buf[i] = (v >> (n - 1 - i)) & 1 ? '!' : '.';
		buf[i] = 0;
		break;
	}
	case ppt_mode:
		if (p->payload.mode.leaf == pt_mol_exec) {
			a = p->payload.mode.bits.exec.csd ? "cs.d" : "";
			b = p->payload.mode.bits.exec.csl ? "cs.l" : "";
		} else {
			a = p->payload.mode.bits.tsx.intx ? "intx" : "";
			b = p->payload.mode.bits.tsx.abrt ? "abrt" : "";
		}
		snprintf(buf, len, "%s%s%s", a, *a && *b ? ", " : "", b);
		break;
	case ppt_pip:
		v = p->payload.pip.cr3;
		snprintf(buf, len, "%" PRIx64 "%s", v, p->payload.pip.nr ? ", nr" : "");
		break;
	case ppt_vmcs:
		v = p->payload.vmcs.base;
		hex = true;
		break;
	case ppt_tsc:
		v = p->payload.tsc.tsc;
		hex = true;
		break;
	case ppt_cbr:
		v = p->payload.cbr.ratio;
		hex = true;
		break;
	case ppt_tma:
		v = p->payload.tma.ctc;
		snprintf(buf, len, "%x, %x", p->payload.tma.ctc, p->payload.tma.fc);
		break;
	case ppt_mtc:
		v = p->payload.mtc.ctc;
		hex = true;
		break;
	case ppt_cyc:
		v = p->payload.cyc.value;
		hex = true;
		break;
	case ppt_mnt:
		v = p->payload.mnt.payload;
		hex = true;
		break;
	case ppt_exstop:
		v = p->payload.exstop.ip;
		snprintf(buf, len, "%s", v ? "ip" : "");
		break;
	case ppt_mwait:
		v = p->payload.mwait.hints;
		snprintf(buf, len, "%08x, %08x", p->payload.mwait.hints, p->payload.mwait.ext);
		break;
	case ppt_pwre:
		/* C-states are encoded one less than their number. */
		v = p->payload.pwre.state;
		snprintf(buf, len, "c%u.%u%s", (p->payload.pwre.state + 1) & 0xf,
			 (p->payload.pwre.sub_state + 1) & 0xf, p->payload.pwre.hw ? ", hw" : "");
		break;
	case ppt_pwrx:
		v = p->payload.pwrx.deepest;
		snprintf(buf, len, "%s%s%s: c%u, c%u", p->payload.pwrx.interrupt ? "int" : "",
			 p->payload.pwrx.store ? " st" : "",
			 p->payload.pwrx.autonomous ? " hw" : "", (p->payload.pwrx.last + 1) & 0xf,
			 (p->payload.pwrx.deepest + 1) & 0xf);
		break;
	case ppt_ptw:
		v = p->payload.ptw.payload;
		snprintf(buf, len, "%x: %" PRIx64 "%s", p->payload.ptw.plc, v,
			 p->payload.ptw.ip ? ", ip" : "");
		break;
	default:
		break;
	}
	if (hex)
		snprintf(buf, len, "%" PRIx64, v);
	return v;
}

static void emit_diag(tc_ptp_emit_fn emit, void *ctx, enum tc_rec_type type, int cpu,
		      uint64_t off, const char *text)
{
	struct tc_rec r = { .type = type, .id = -1, .cpu = cpu, .pid = -1, .tid = -1,
			    .offset = off, .text = text };

	emit(ctx, &r);
}

int tc_pt_packets_decode(const struct pt_config *base, const uint8_t *buf, size_t len,
		  uint64_t file_offset, int cpu, tc_ptp_emit_fn emit, void *ctx,
		  struct tc_pt_packets_stats *st, struct tc_err *e)
{
	struct tc_pt_packets_stats dummy = { 0 };
	struct pt_packet_decoder *dec;
	struct pt_config cfg;
	uint64_t off = 0, sync = 0, last_sync = 0;
	char text[128], msg[160];
	int ret;

	if (!st)
		st = &dummy;
	if (!len)
		return 0;
	if (base)
		cfg = *base;
	else
		pt_config_init(&cfg);
	/* libipt never writes through begin/end; its config just isn't const. */
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	dec = pt_pkt_alloc_decoder(&cfg);
	if (!dec)
		return tc_err_set(e, ENOMEM, "cannot set up libipt's packet decoder");

	ret = pt_pkt_sync_forward(dec);
	if (ret < 0 || pt_pkt_get_sync_offset(dec, &sync) < 0) {
		st->unsynced_bytes += len;
		snprintf(msg, sizeof(msg), "no PSB in %zu bytes of trace", len);
		emit_diag(emit, ctx, TC_REC_NO_SYNC, cpu, file_offset, msg);
		pt_pkt_free_decoder(dec);
		return 0;
	}
	st->syncs++;
	if (sync) {
		st->unsynced_bytes += sync;
		snprintf(msg, sizeof(msg), "%" PRIu64 " bytes before the first PSB skipped", sync);
		emit_diag(emit, ctx, TC_REC_NO_SYNC, cpu, file_offset, msg);
	}
	last_sync = sync;

	for (;;) {
		struct pt_packet p;
		struct tc_rec r = { .type = TC_REC_PACKET, .id = -1, .cpu = cpu, .pid = -1,
				    .tid = -1 };

		if (pt_pkt_get_offset(dec, &off) < 0)
			break;
		ret = pt_pkt_next(dec, &p, sizeof(p));
		if (ret == -pte_eos && off >= len)
			break;
		if (ret < 0) {
			/* libipt reports a packet cut off by the buffer end as end of stream. */
			if (ret == -pte_eos)
				snprintf(msg, sizeof(msg), "packet truncated by the end of the "
					 "buffer (%" PRIu64 " bytes left)", (uint64_t)len - off);
			else
				snprintf(msg, sizeof(msg), "%s", pt_errstr(pt_errcode(ret)));
			emit_diag(emit, ctx, TC_REC_ERROR, cpu, file_offset + off, msg);
			st->errors++;
			if (ret == -pte_eos || pt_pkt_sync_forward(dec) < 0 ||
			    pt_pkt_get_sync_offset(dec, &sync) < 0 || sync <= last_sync) {
				st->unsynced_bytes += len - off;
				break;
			}
			st->syncs++;
			st->unsynced_bytes += sync > off ? sync - off : 0;
			last_sync = sync;
			continue;
		}
		r.offset = file_offset + off;
		r.name = tc_pt_packets_name(&p);
		r.value = payload(&p, text, sizeof(text));
		r.text = text;
		emit(ctx, &r);
		st->packets++;
	}
	pt_pkt_free_decoder(dec);
	return 0;
}
