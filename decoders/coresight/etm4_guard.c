/* Look-ahead for packets that crash OpenCSD 1.3.3's ETMv4 decoder; see etm4_guard.h. */
#include "decoders/coresight/etm4_guard.h"

#include <stdlib.h>

/* Where OpenCSD's ETMv4 decoder would be: waiting for an ASYNC, then for a TRACE_INFO, then
 * decoding packets into P0 elements. */
enum state { WAIT_ASYNC, WAIT_TINFO, DECODING };

struct tc_etm4_guard {
	dcd_tree_handle_t tree;
	uint32_t max_spec;	/* TRCIDR8.MAXSPEC: deeper speculation is committed at once */
	uint64_t pos;		/* bytes read so far: the shadow tree's index */
	uint64_t scan_base;	/* pos at the start of the current scan */
	enum state state;
	uint64_t atoms;		/* uncommitted atoms on the decoder's element stack */
	uint64_t unseen;	/* speculative elements TRACE_INFO says came before it */
	int addr;		/* an address element newer than the newest atom */
	int hazard;
	uint64_t hazard_idx;
	const char *why;
};

static void commit(struct tc_etm4_guard *g, uint64_t n)
{
	/* the oldest elements go first: the unseen ones, then atoms */
	uint64_t u = n < g->unseen ? n : g->unseen;

	g->unseen -= u;
	n -= u;
	g->atoms -= n < g->atoms ? n : g->atoms;
}

static void cancel(struct tc_etm4_guard *g, uint64_t n)
{
	/* the newest elements go first */
	uint64_t a = n < g->atoms ? n : g->atoms;

	g->atoms -= a;
	n -= a;
	g->unseen -= n < g->unseen ? n : g->unseen;
}

static void add_atoms(struct tc_etm4_guard *g, uint64_t n)
{
	if (!n)
		return;
	g->atoms += n;
	g->addr = 0;
	if (g->atoms + g->unseen > g->max_spec)
		commit(g, g->atoms + g->unseen - g->max_spec);
}

static void unsync(struct tc_etm4_guard *g)
{
	g->state = WAIT_ASYNC;
	g->atoms = g->unseen = 0;
	g->addr = 0;
}

static void hazard(struct tc_etm4_guard *g, ocsd_trc_index_t idx, const char *why)
{
	if (g->hazard)
		return;
	g->hazard = 1;
	g->hazard_idx = idx;
	g->why = why;
}

/* A packet that makes the decoder mispredict the newest atom: would it find one? */
static void mispredict(struct tc_etm4_guard *g, const ocsd_etmv4_i_pkt *p, ocsd_trc_index_t idx)
{
	add_atoms(g, p->atom.num);
	if (p->type != ETM4_PKT_I_MISPREDICT)
		cancel(g, p->cancel_elements);
	if (!g->atoms && (g->addr || !g->unseen))
		hazard(g, idx, "a mispredict with no speculative atom to mispredict");
}

static void decoding(struct tc_etm4_guard *g, const ocsd_etmv4_i_pkt *p, ocsd_trc_index_t idx)
{
	switch (p->type) {
	case ETM4_PKT_I_ATOM_F1:
	case ETM4_PKT_I_ATOM_F2:
	case ETM4_PKT_I_ATOM_F3:
	case ETM4_PKT_I_ATOM_F4:
	case ETM4_PKT_I_ATOM_F5:
	case ETM4_PKT_I_ATOM_F6:
		add_atoms(g, p->atom.num);
		break;
	case ETM4_PKT_I_ADDR_MATCH:
	case ETM4_PKT_I_ADDR_CTXT_L_32IS0:
	case ETM4_PKT_I_ADDR_CTXT_L_32IS1:
	case ETM4_PKT_I_ADDR_CTXT_L_64IS0:
	case ETM4_PKT_I_ADDR_CTXT_L_64IS1:
	case ETM4_PKT_I_ADDR_L_32IS0:
	case ETM4_PKT_I_ADDR_L_32IS1:
	case ETM4_PKT_I_ADDR_L_64IS0:
	case ETM4_PKT_I_ADDR_L_64IS1:
	case ETM4_PKT_I_ADDR_S_IS0:
	case ETM4_PKT_I_ADDR_S_IS1:
		g->addr = 1;
		break;
	case ETM4_PKT_I_COMMIT:
		commit(g, p->commit_elements);
		break;
	case ETM4_PKT_I_CANCEL_F1:
		cancel(g, p->cancel_elements);
		break;
	case ETM4_PKT_I_MISPREDICT:
	case ETM4_PKT_I_CANCEL_F1_MISPRED:
	case ETM4_PKT_I_CANCEL_F2:
	case ETM4_PKT_I_CANCEL_F3:
		mispredict(g, p, idx);
		break;
	case ETM4_PKT_I_DISCARD:
	case ETM4_PKT_I_OVERFLOW:
	case ETM4_PKT_I_BAD_SEQUENCE:
	case ETM4_PKT_I_BAD_TRACEMODE:
	case ETM4_PKT_I_RESERVED:
	case ETM4_PKT_I_RESERVED_CFG:
		unsync(g);
		break;
	default:
		break;
	}
}

static void on_packet(struct tc_etm4_guard *g, const ocsd_etmv4_i_pkt *p, ocsd_trc_index_t idx)
{
	switch (g->state) {
	case WAIT_ASYNC:
		if (p->type == ETM4_PKT_I_ASYNC)
			g->state = WAIT_TINFO;
		break;
	case WAIT_TINFO:
		if (p->type != ETM4_PKT_I_TRACE_INFO)
			break;
		g->state = DECODING;
		g->atoms = 0;
		g->addr = 0;
		g->unseen = p->pkt_valid.bits.spec_depth_valid ? p->curr_spec_depth : 0;
		break;
	case DECODING:
		decoding(g, p, idx);
		break;
	}
}

static ocsd_datapath_resp_t sink(const void *ctx, const ocsd_datapath_op_t op,
				 const ocsd_trc_index_t idx, const void *pkt)
{
	struct tc_etm4_guard *g = (struct tc_etm4_guard *)ctx;

	if (op == OCSD_OP_DATA && pkt && !g->hazard)
		on_packet(g, pkt, idx);
	return OCSD_RESP_CONT;
}

struct tc_etm4_guard *tc_etm4_guard_new(dcd_tree_handle_t tree, uint8_t csid,
					uint32_t max_spec)
{
	struct tc_etm4_guard *g = calloc(1, sizeof(*g));

	if (!g || ocsd_dt_attach_packet_callback(tree, csid, OCSD_C_API_CB_PKT_SINK,
						 (void *)sink, g) != OCSD_OK) {
		ocsd_destroy_dcd_tree(tree);
		free(g);
		return NULL;
	}
	g->tree = tree;
	g->max_spec = max_spec;
	return g;
}

struct tc_etm4_guard *tc_etm4_guard_new_inline(uint32_t max_spec)
{
	struct tc_etm4_guard *g = calloc(1, sizeof(*g));

	if (g)
		g->max_spec = max_spec;
	return g;
}

int tc_etm4_guard_packet(struct tc_etm4_guard *g, const ocsd_etmv4_i_pkt *p,
			 ocsd_trc_index_t idx, const char **why)
{
	if (g->hazard)
		return 0;
	on_packet(g, p, idx);
	if (!g->hazard)
		return 0;
	*why = g->why;
	return 1;
}

void tc_etm4_guard_free(struct tc_etm4_guard *g)
{
	if (!g)
		return;
	if (g->tree)
		ocsd_destroy_dcd_tree(g->tree);
	free(g);
}

int tc_etm4_guard_scan(struct tc_etm4_guard *g, const uint8_t *data, size_t len,
		       int64_t *start, const char **why)
{
	size_t done = 0;

	g->scan_base = g->pos;
	while (done < len) {
		uint32_t n = 0, want = len - done > UINT32_MAX ? UINT32_MAX : (uint32_t)(len - done);
		ocsd_datapath_resp_t resp = ocsd_dt_process_data(g->tree, OCSD_OP_DATA,
								 g->pos, want, data + done, &n);

		if (OCSD_DATA_RESP_IS_FATAL(resp)) {
			/* the full decoder meets the same bytes and reports them */
			ocsd_dt_process_data(g->tree, OCSD_OP_RESET, g->pos + n, 0, NULL, NULL);
			unsync(g);
			n = n ? n : 1;
		}
		done += n;
		g->pos += n;
		if (!n)
			break;
	}
	g->pos = g->scan_base + len;
	if (!g->hazard)
		return 0;
	*start = (int64_t)(g->hazard_idx - g->scan_base);
	*why = g->why;
	return 1;
}

void tc_etm4_guard_rewind(struct tc_etm4_guard *g, size_t cut)
{
	g->pos = g->scan_base + cut;
	tc_etm4_guard_reset(g);
}

void tc_etm4_guard_reset(struct tc_etm4_guard *g)
{
	if (g->tree)
		ocsd_dt_process_data(g->tree, OCSD_OP_RESET, g->pos, 0, NULL, NULL);
	unsync(g);
	g->hazard = 0;
}
