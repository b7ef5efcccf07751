/* Look-ahead for packets that crash OpenCSD 1.3.3's ETMv4 decoder; see etm4_guard.h. */
#include "decoders/coresight/etm4_guard.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"

/* Where OpenCSD's ETMv4 decoder would be: waiting for an ASYNC, then for a TRACE_INFO, then
 * decoding packets into P0 elements. */
enum state { WAIT_ASYNC, WAIT_TINFO, DECODING };

/* Element kinds of the exception model: what commit, cancel and mispredict tell apart. */
enum kind {
	K_ATOM,		/* P0: n atoms */
	K_EXCEP,	/* P0: needs an address element after it (context optional) */
	K_Q_NOADDR,	/* P0: a Q element whose address comes after it, likewise */
	K_P0,		/* any other P0 element (a Q element with its address) */
	K_ADDR,
	K_CTXT,
	K_KEEP,		/* timestamp, cycle count, event: a cancel keeps them */
	K_DROP,		/* trace on and the like: a cancel drops them */
};

struct elem {
	uint8_t kind;
	/* K_ATOM: atoms; K_EXCEP: 1 if its address is that of the last branch target;
	 * K_ADDR: the instruction set bit; K_CTXT: 1 if updated; K_P0 and K_Q_NOADDR (Q
	 * elements): the instruction count */
	uint32_t n;
};

enum { HAD_ISA = 1, HAD_ADDR = 2 };

struct tc_etm4_guard {
	dcd_tree_handle_t tree;
	uint32_t max_spec;	/* TRCIDR8.MAXSPEC: deeper speculation is committed at once */
	uint64_t pos;		/* bytes read so far: the shadow tree's index */
	uint64_t scan_base;	/* pos at the start of the current scan */
	enum state state;
	int hazard;
	uint64_t hazard_idx;
	const char *why;
	/* The decoder's P0 element stack as far as the commit of an exception needs it (see
	 * the exception model below): e[lo] is the oldest element, e[hi - 1] the newest. */
	struct elem *e;
	size_t lo, hi, cap;
	int64_t depth;		/* m_curr_spec_depth */
	int pending_addr;	/* an exception (or Q) waits for its address */
	/* What the decoder has set since it was made, whatever resets came since (the library
	 * never resets them, see the address model below): HAD_ISA, or HAD_ADDR with it. */
	uint8_t had;
	bool lost;		/* a packet the models do not follow came: had unknown */
};

static void unsync(struct tc_etm4_guard *g)
{
	g->state = WAIT_ASYNC;
	g->lo = g->hi = 0;
	g->depth = 0;
	g->pending_addr = 0;
}

static void hazard(struct tc_etm4_guard *g, ocsd_trc_index_t idx, const char *why)
{
	if (g->hazard)
		return;
	g->hazard = 1;
	g->hazard_idx = idx;
	g->why = why;
}

/* ---- the exception model ----
 * OpenCSD 1.3.3 commits P0 elements from the oldest (TrcPktDecodeEtmV4I::commitElements);
 * at an exception element processException() pops it, then reads the next element with
 * std::deque::back() (and, if that is a context element, pops it and reads back() again)
 * expecting the exception's address. It never checks the stack is not empty: an exception
 * committed before its address packet came (nothing after it on the stack, or a context
 * element alone) reads a pointer past the deque's end, SIGSEGV. Real trace puts the address
 * packet right after the exception packet; corrupt trace can commit the exception first (a
 * Commit packet, or TRACE_INFO's speculation depth beyond TRCIDR8.MAXSPEC auto-committing
 * at the next packet). processQElement() does the same for a Q element without address.
 *
 * So this model keeps the element stack as the decoder builds it from packets (kinds and
 * atom counts only), the speculation depth with its auto-commit, and replays commit, cancel,
 * mispredict and discard; the packet whose commit would reach such an exception is the
 * hazard. The decoder's errors that packets decide (too few elements to commit, an
 * exception followed by no address, bad and unsupported packets) reset the model as they
 * reset the decoder.
 *
 * The same model names a cancel or mispredict beyond the stack. Where the stack runs out,
 * cancelElements() counts the rest off m_unseen_spec_elem ("speculative elements at decode
 * start"), and mispredictAtom() that finds no atom checks it before its error; 1.3.3
 * declares it and never sets it (no constructor, reset or TRACE_INFO does): heap garbage
 * decides between the decoder's error and going on (under ASan 0xbebebebe: on). Real trace
 * never cancels what it did not trace; corrupt trace does. A mispredict that finds no atom
 * may also be the crash of the erase above: one hazard, either way. */

/* Room for one more element at the newest end; 0 if none (the caller names a hazard). */
static int room(struct tc_etm4_guard *g)
{
	if (g->hi < g->cap)
		return 1;
	if (g->lo) {
		memmove(g->e, g->e + g->lo, (g->hi - g->lo) * sizeof(*g->e));
		g->hi -= g->lo;
		g->lo = 0;
		if (g->hi < g->cap)
			return 1;
	}
	return tc_grow((void **)&g->e, &g->cap, g->hi + 1, sizeof(*g->e)) == 0;
}

static void push(struct tc_etm4_guard *g, enum kind k, uint32_t n, ocsd_trc_index_t idx)
{
	if (!room(g)) {
		hazard(g, idx, "a packet the exception look-ahead has no memory to follow");
		return;
	}
	g->e[g->hi++] = (struct elem){ .kind = (uint8_t)k, .n = n };
}

static size_t depth_n(const struct tc_etm4_guard *g)
{
	return g->hi - g->lo;
}

/* The decoder met an error it resets on: so does the model (the decoder waits for ASYNC). */
static void seq_error(struct tc_etm4_guard *g)
{
	unsync(g);
}

/* Up to *n of atom element e's atoms, taken off both; true when e has none left. */
static bool take_atoms(struct elem *e, int64_t *n)
{
	uint32_t k = (int64_t)e->n < *n ? e->n : (uint32_t)*n;

	e->n -= k;
	*n -= k;
	return !e->n;
}

/* ---- the address model ----
 * OpenCSD 1.3.3 never initialises the decoder's instruction address and instruction set
 * (TrcPktDecodeEtmV4I::m_instr_info), and no reset sets them (resetDecoder(), on errors and
 * OCSD_OP_RESET, only asks for a new address: m_need_addr): they are what the decoder last
 * set, or heap garbage if it never set them. Atoms walk only once an address came
 * (m_need_addr), but processException() compares the instruction address with the
 * exception's return address and walks from it to there whatever m_need_addr says: before
 * any address, from heap garbage (under ASan from 0xbebebebebebebebe: a read that fails
 * with a fatal response; with code everywhere a walk that may not end). An exception whose
 * address is the last branch target sets the address instead, but with neither context nor
 * instruction set bit takes the instruction set from the one the decoder has (A64 or not).
 * processQElement() walks its instruction count from the address too. So their commit is a
 * hazard while the decoder never had what they read. What sets them: a committed address
 * element (both), a committed updated context, an exception's context (the instruction
 * set), a branch-target exception and a Q element (both); a return stack pop and the walks
 * come after an address only. */

/* Why committing exception e (followed by a context element if ctx, then address a) reads
 * what the decoder never set, or NULL; the decoder's state after it if not. */
static const char *excep_unset(struct tc_etm4_guard *g, const struct elem *e, bool ctx,
			       const struct elem *a)
{
	if (g->lost)
		return NULL;
	if (!e->n && !(g->had & HAD_ADDR))
		return "a commit of an exception before the decoder had any address";
	if (e->n && !ctx && !a->n && !g->had)
		return "a commit of an exception before the decoder had any instruction set";
	if (e->n)
		g->had = HAD_ADDR | HAD_ISA;
	else if (ctx)
		g->had |= HAD_ISA;
	return NULL;
}

/* The same for a Q element e with its own address: it walks its instruction count from
 * the decoder's address. (One without its own address is a hazard whatever the decoder
 * had: processQElement() deletes the popped Q element, with the address and context after
 * it, and then reads its count and index, and the context, from the freed memory; 1.3.3.) */
static const char *q_unset(struct tc_etm4_guard *g, const struct elem *e)
{
	if (!g->lost && e->n && !(g->had & HAD_ADDR))
		return "a commit of a Q element before the decoder had any address";
	g->had = HAD_ADDR | HAD_ISA;
	return NULL;
}

/* Commit n P0 elements from the oldest; 0, or -1 when the decoder resets (or a hazard). */
static int x_commit(struct tc_etm4_guard *g, int64_t n, ocsd_trc_index_t idx)
{
	int64_t req = n;

	while (n > 0) {
		struct elem *e;

		if (!depth_n(g)) {
			seq_error(g);	/* "Not enough elements to commit" */
			return -1;
		}
		e = &g->e[g->lo];
		switch (e->kind) {
		case K_ATOM:
			if (take_atoms(e, &n))
				g->lo++;
			break;
		case K_EXCEP:
		case K_Q_NOADDR: {
			size_t next = g->lo + 1;
			const char *why;

			if (next < g->hi && g->e[next].kind == K_CTXT)
				next++;
			if (next >= g->hi) {
				hazard(g, idx, e->kind == K_EXCEP
						       ? "a commit of an exception before its address"
						       : "a commit of a Q element before its address");
				return -1;
			}
			if (g->e[next].kind != K_ADDR) {
				seq_error(g);	/* "Address missing in exception packet." */
				return -1;
			}
			why = e->kind == K_Q_NOADDR
				      ? "a commit of a Q element without its own address"
				      : excep_unset(g, e, next > g->lo + 1, &g->e[next]);
			if (why) {
				hazard(g, idx, why);
				return -1;
			}
			g->lo = next + 1;	/* the address goes with the commit's last pop */
			n--;
			break;
		}
		case K_P0: {
			const char *why = q_unset(g, e);

			if (why) {
				hazard(g, idx, why);
				return -1;
			}
			/* processQElement() pops the Q element, and the commit's pop after it
			 * deletes the next oldest element too, whatever it is */
			g->lo += g->lo + 1 < g->hi ? 2 : 1;
			n--;
			break;
		}
		case K_ADDR:
			g->had = HAD_ADDR | HAD_ISA;
			g->lo++;
			break;
		case K_CTXT:
			if (e->n)
				g->had |= HAD_ISA;	/* an updated context sets it */
			g->lo++;
			break;
		default:
			g->lo++;
			break;
		}
	}
	g->depth -= req;
	return 0;
}

/* Cancel n P0 elements from the newest. Timestamps, cycle counts and events met on the way
 * stay, in their order, in front of what is left (the library sets them aside and puts them
 * back); other elements met go. False if the stack ran out first (see above). */
static bool x_cancel(struct tc_etm4_guard *g, int64_t n)
{
	size_t i = g->hi, top = g->hi, kept = g->hi;	/* kept ones gather in [kept, top) */

	g->depth -= n;
	while (n > 0 && i > g->lo) {
		struct elem *e = &g->e[i - 1];

		switch (e->kind) {
		case K_ATOM:
			if (take_atoms(e, &n))
				i--;
			break;
		case K_EXCEP:
		case K_Q_NOADDR:
		case K_P0:
			i--;
			n--;
			break;
		case K_KEEP:
			g->e[--kept] = *e;	/* kept >= i: a place already read */
			i--;
			break;
		default:
			i--;
			break;
		}
	}
	if (n > 0)
		return false;	/* the rest would count m_unseen_spec_elem down */
	if (top > kept)
		memmove(g->e + i, g->e + kept, (top - kept) * sizeof(*g->e));
	g->hi = i + (top - kept);
	return true;
}

/* From the newest element: erase address elements until an atom (whose newest atom is
 * flipped, which changes no count). The erase keeps the library's old iterator: libstdc++'s
 * deque::erase moves the shorter side, so in the back half the element after is skipped,
 * and erasing the oldest element there leaves the iterator past end(): it reads beyond the
 * deque (SIGSEGV). False if no atom is met: that crash, or a read of m_unseen_spec_elem. */
static bool x_mispredict(struct tc_etm4_guard *g)
{
	size_t i = 0;	/* from the newest: element g->hi - 1 - i */

	while (i < depth_n(g)) {
		size_t at = g->hi - 1 - i, n = depth_n(g);

		if (g->e[at].kind == K_ATOM)
			return true;
		if (g->e[at].kind != K_ADDR) {
			i++;
			continue;
		}
		if (i < n / 2) {
			/* the newer side moves down one */
			memmove(g->e + at, g->e + at + 1, i * sizeof(*g->e));
			g->hi--;
		} else {
			/* the older side moves up one: the next element is skipped */
			memmove(g->e + g->lo + 1, g->e + g->lo, (at - g->lo) * sizeof(*g->e));
			g->lo++;
			i++;
		}
	}
	return false;
}

/* OpenCSD 1.3.3's memory read cache (TrcMemAccCache::blockInCache) takes a read as in a
 * page it holds when the page starts at or below the address and ends at or past the
 * address plus the read's length: from the last 4 bytes of the address space that sum
 * wraps to 0, so any page it holds answers (not only the one there), and the read copies
 * from the address less that page's start past the page: SIGSEGV, or bytes from elsewhere.
 * The decoder reads its instructions 4 bytes at a time; it gets there from an address (a
 * walk into the last page from below reads that page first: the one there answers), so an
 * address packet (or a Q element's) giving one is a hazard. (A direct branch from the
 * first bytes of the address space back past 0 gets there too: no code is there.) */
#define LAST_WORD 0xfffffffffffffffcull
#define LAST_WORD_WHY "an address in the last 4 bytes of the address space"

/* One packet in the decoding state. */
static void x_packet(struct tc_etm4_guard *g, const ocsd_etmv4_i_pkt *p, ocsd_trc_index_t idx)
{
	int is_addr = 0, mispredict = 0, discard = 0;
	int64_t commit = 0, cancel = 0;

	switch (p->type) {
	case ETM4_PKT_I_ASYNC:
	case ETM4_PKT_I_IGNORE:
	case ETM4_PKT_I_TRACE_INFO:
	case ETM4_PKT_I_FUNC_RET:	/* P0 on v8-M only */
		break;
	case ETM4_PKT_I_TRACE_ON:
	case ETM4_PKT_I_EXCEPT_RTN:	/* P0 on v7-M only */
		push(g, K_DROP, 0, idx);
		break;
	case ETM4_PKT_I_ATOM_F1:
	case ETM4_PKT_I_ATOM_F2:
	case ETM4_PKT_I_ATOM_F3:
	case ETM4_PKT_I_ATOM_F4:
	case ETM4_PKT_I_ATOM_F5:
	case ETM4_PKT_I_ATOM_F6:
		push(g, K_ATOM, p->atom.num, idx);
		g->depth += p->atom.num;
		break;
	case ETM4_PKT_I_CTXT:
		push(g, K_CTXT, p->context.updated, idx);
		break;
	case ETM4_PKT_I_ADDR_CTXT_L_32IS0:
	case ETM4_PKT_I_ADDR_CTXT_L_32IS1:
	case ETM4_PKT_I_ADDR_CTXT_L_64IS0:
	case ETM4_PKT_I_ADDR_CTXT_L_64IS1:
		push(g, K_CTXT, p->context.updated, idx);
		/* fall through */
	case ETM4_PKT_I_ADDR_MATCH:
	case ETM4_PKT_I_ADDR_L_32IS0:
	case ETM4_PKT_I_ADDR_L_32IS1:
	case ETM4_PKT_I_ADDR_L_64IS0:
	case ETM4_PKT_I_ADDR_L_64IS1:
	case ETM4_PKT_I_ADDR_S_IS0:
	case ETM4_PKT_I_ADDR_S_IS1:
		if (p->v_addr.val >= LAST_WORD) {
			hazard(g, idx, LAST_WORD_WHY);
			return;
		}
		push(g, K_ADDR, p->v_addr_ISA, idx);
		is_addr = 1;
		break;
	case ETM4_PKT_I_EXCEPT:
		push(g, K_EXCEP, p->exception_info.addr_interp == 0x2, idx);
		g->pending_addr = 1;
		break;
	case ETM4_PKT_I_Q:
		if (p->Q_pkt.addr_present && p->v_addr.val >= LAST_WORD) {
			hazard(g, idx, LAST_WORD_WHY);
			return;
		}
		if (p->Q_pkt.addr_present) {
			push(g, K_P0, p->Q_pkt.q_count, idx);
			g->depth++;
		} else {
			push(g, K_Q_NOADDR, p->Q_pkt.q_count, idx);
			g->pending_addr = 1;
		}
		break;
	case ETM4_PKT_I_EVENT:
	case ETM4_PKT_I_CCNT_F1:
	case ETM4_PKT_I_CCNT_F2:
	case ETM4_PKT_I_CCNT_F3:
	case ETM4_PKT_I_TIMESTAMP:
		push(g, K_KEEP, 0, idx);
		break;
	case ETM4_PKT_I_MISPREDICT:
	case ETM4_PKT_I_CANCEL_F1_MISPRED:
	case ETM4_PKT_I_CANCEL_F2:
	case ETM4_PKT_I_CANCEL_F3:
		mispredict = 1;
		if (p->atom.num) {
			push(g, K_ATOM, p->atom.num, idx);
			g->depth += p->atom.num;
		}
		/* fall through */
	case ETM4_PKT_I_CANCEL_F1:
		cancel = (int32_t)p->cancel_elements;
		break;
	case ETM4_PKT_I_COMMIT:
		commit = (int32_t)p->commit_elements;
		break;
	case ETM4_PKT_I_OVERFLOW:
	case ETM4_PKT_I_DISCARD:
		g->depth = 0;
		discard = 1;
		break;
	case ETE_PKT_I_PE_RESET:
		/* 1.3.3's decoder has no case for it: "Unknown packet type", a bad packet and
		 * a reset. (Only exception packets make exception elements: the PE reset
		 * branch of its processException() is never taken.) */
		seq_error(g);
		return;
	case ETE_PKT_I_TRANS_COMMIT:
	case ETE_PKT_I_TRANS_FAIL:
		/* not P0: a memory transaction element at its commit, which sets nothing the
		 * models follow; a cancel drops it */
		push(g, K_DROP, 0, idx);
		break;
	case ETE_PKT_I_TS_MARKER:
		push(g, K_KEEP, 0, idx);	/* a marker: a cancel keeps it */
		break;
	case ETE_PKT_I_TRANS_ST:	/* P0 or not as TRCIDR0.COMMTRANS says */
	case ETE_PKT_I_SRC_ADDR_MATCH:
	case ETE_PKT_I_SRC_ADDR_S_IS0:
	case ETE_PKT_I_SRC_ADDR_S_IS1:
	case ETE_PKT_I_SRC_ADDR_L_32IS0:
	case ETE_PKT_I_SRC_ADDR_L_32IS1:
	case ETE_PKT_I_SRC_ADDR_L_64IS0:
	case ETE_PKT_I_SRC_ADDR_L_64IS1:
		/* ETE's elements the models do not follow (the decoder goes on, the models
		 * wait for the next sync; a source address walks from the decoder's address
		 * and ISA): from here on what the decoder has set is not known, and the
		 * address model names nothing */
		g->lost = true;
		seq_error(g);
		return;
	default:
		/* bad packets, reserved headers, data trace and conditional packets the
		 * decoder does not support: its error, and a reset */
		seq_error(g);
		return;
	}
	if (g->hazard)
		return;
	/* The library keeps these counts in an int: from 2^31 on (corrupt) a cancel grows
	 * atom counts and counts m_unseen_spec_elem down for ever, a commit commits all */
	if (commit < 0 || cancel < 0) {
		hazard(g, idx, "a commit or cancel count beyond INT_MAX");
		return;
	}
	if (is_addr && g->pending_addr) {
		g->depth++;
		g->pending_addr = 0;
	}
	if (g->depth > (int64_t)g->max_spec)
		commit = g->depth - g->max_spec;
	if (commit > 0 && x_commit(g, commit, idx))
		return;
	if (cancel > 0 && !x_cancel(g, cancel)) {
		hazard(g, idx, "a cancel of more elements than are speculative");
		return;
	}
	if (mispredict && !x_mispredict(g)) {
		hazard(g, idx, "a mispredict with no speculative atom to mispredict");
		return;
	}
	if (discard)
		unsync(g);
}

/* The next packet (no hazard named yet). The decoder never sees a hazard's packet: nor
 * what its commits set before the hazard (had goes back). */
static void on_packet(struct tc_etm4_guard *g, const ocsd_etmv4_i_pkt *p, ocsd_trc_index_t idx)
{
	uint8_t had = g->had;

	switch (g->state) {
	case WAIT_ASYNC:
		if (p->type == ETM4_PKT_I_ASYNC)
			g->state = WAIT_TINFO;
		break;
	case WAIT_TINFO:
		if (p->type != ETM4_PKT_I_TRACE_INFO)
			break;
		g->state = DECODING;
		g->lo = g->hi = 0;
		g->depth = (int32_t)(p->pkt_valid.bits.spec_depth_valid ? p->curr_spec_depth : 0);
		g->pending_addr = 0;
		if (p->trace_info.bits.in_trans_state)
			push(g, K_DROP, 0, idx);	/* ETE: a transaction marker, not P0 */
		break;
	case DECODING:
		x_packet(g, p, idx);
		if (g->hazard)
			g->had = had;
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
	free(g->e);
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
