/* Fast ETMv4 instruction-trace decoder; see etm4_walk.h. The state machine follows the
 * behaviour of OpenCSD 1.3.3's TrcPktDecodeEtmV4I as documented by its source (states,
 * element stack, resolution order, error resets), which is what "identical records" needs;
 * the instruction walk is our own, over lib/isa/a64.c and a block cache. */
#include "decoders/coresight/etm4_walk.h"

#include <stdlib.h>
#include <string.h>

#include "lib/isa/a64.h"
#include "lib/util/blockpool.h"
#include "lib/util/grow.h"

/* ---- the P0 element stack: index 0 is the newest element (the deque's front) ---- */

enum p0_type { P0_ATOM, P0_ADDR, P0_CTXT, P0_TRC_ON, P0_EXCEP, P0_EXCEP_RET, P0_EVENT, P0_TS,
	       P0_CC, P0_TS_CC, P0_TRANS_INIT };

struct p0 {
	uint8_t type;
	bool is_p0;
	uint64_t idx;			/* index of the packet it came from */
	union {
		struct { uint32_t bits; int num; } atom;
		struct { uint64_t val; uint8_t isa; } addr;
		struct { etmv4_context_t c; uint8_t is; } ctx;
		struct { uint16_t num; bool same; } exc;
		uint32_t param[3];
	};
};

struct p0_stack {
	struct p0 *e;
	unsigned cap, head, n;		/* ring: element i at e[(head + i) & (cap - 1)] */
};

static struct p0 *at(struct p0_stack *s, unsigned i)
{
	return &s->e[(s->head + i) & (s->cap - 1)];
}

static bool grow(struct p0_stack *s)
{
	unsigned cap = s->cap ? s->cap * 2 : 64;
	struct p0 *e = malloc(cap * sizeof(*e));

	if (!e)
		return false;
	for (unsigned i = 0; i < s->n; i++)
		e[i] = *at(s, i);
	free(s->e);
	s->e = e;
	s->cap = cap;
	s->head = 0;
	return true;
}

/* NULL: no memory (the stack unchanged). */
static struct p0 *push_front(struct p0_stack *s)
{
	if (s->n == s->cap && !grow(s))
		return NULL;
	s->head = (s->head - 1) & (s->cap - 1);
	s->n++;
	return at(s, 0);
}

static struct p0 *back(struct p0_stack *s)
{
	return s->n ? at(s, s->n - 1) : NULL;
}

static void pop_back(struct p0_stack *s)
{
	if (s->n)
		s->n--;
}

static void pop_front(struct p0_stack *s)
{
	if (s->n) {
		s->head = (s->head + 1) & (s->cap - 1);
		s->n--;
	}
}

/* Remove element i while iterating from the front; returns the index the iteration goes on
 * from. The library erases from a std::deque and keeps its old iterator: libstdc++ moves the
 * shorter side, so when i is in the back half the element after i is skipped. */
static unsigned erase_iter(struct p0_stack *s, unsigned i)
{
	if (i < (s->n >> 1)) {
		for (unsigned j = i; j > 0; j--)
			*at(s, j) = *at(s, j - 1);
		pop_front(s);
		return i;
	}
	for (unsigned j = i; j + 1 < s->n; j++)
		*at(s, j) = *at(s, j + 1);
	pop_back(s);
	return i + 1;
}

/* ---- OpenCSD's memory read cache, modelled: 12 pages of 256 bytes, most recent first ---- */

#define PAGES 12
#define PAGE_SIZE 256

struct page {
	uint64_t st;
	uint32_t len;
	uint32_t key;			/* memory context the page was read in */
	uint8_t data[PAGE_SIZE];
};

/* ---- block cache: walk results from a start address to the next waypoint ---- */

#define BLK_BITS 14		/* 16384 blocks (512 KiB), taken at the first walk */

/* A block ends at start + 4 * n (kept only so, walk()); an empty slot is all zero. */
struct blk {
	uint64_t naddr;			/* ~start */
	uint64_t target;		/* direct branch target */
	uint32_t key;
	uint32_t n;			/* instructions, the waypoint included; 0 empty */
	uint8_t type, sub, link, cond;	/* the waypoint, as OpenCSD's ocsd_instr_info */
};

#define BLK_TABLE (sizeof(struct blk) << BLK_BITS)
_Static_assert((BLK_TABLE & (BLK_TABLE - 1)) == 0 && BLK_TABLE <= (2u << 20),
	       "a block table is a blockpool's block");

/* Memory contexts seen: the callback's answer is a function of these. */
struct key {
	int64_t context_id, vmid, last_ctx;
	int el, secure;
};

/* ---- output element list (OpenCSD's OcsdGenElemStack) ---- */

struct out {
	ocsd_generic_trace_elem el;
	uint64_t idx;
};

enum state { NO_SYNC, WAIT_SYNC, WAIT_TINFO, DECODE_PKTS, RESOLVE_ELEM };

struct instr {
	uint64_t addr;			/* next instruction to decode */
	ocsd_isa isa, next_isa;
	ocsd_instr_type type;
	ocsd_instr_subtype sub;
	uint8_t size, link, cond;
	uint64_t branch;
};

struct tc_etm4_walk {
	struct tc_etm4_walk_cfg cfg;
	tc_etm4_walk_elem_fn elem;
	tc_etm4_walk_mem_fn mem;
	tc_etm4_walk_err_fn err;
	void *ctx;
	const struct tc_etm_mem_ctx *mctx;

	/* decoder state */
	enum state state;
	unsync_info_t unsync;
	uint64_t idx;			/* index of the packet being processed */
	const ocsd_etmv4_i_pkt *pkt;
	bool is_secure, is_64bit;
	uint8_t last_is;
	int spec_depth, max_spec;
	bool need_ctxt, need_addr, pending_addr, prev_overflow;
	/* commit and cancel apart: decode_packet stores commit (4 bytes) and res_pending()
	 * then tests both; side by side the compiler tests them with one 8-byte load, which
	 * cannot be forwarded from the 4-byte store (a stall per packet) */
	struct { int commit; bool mispredict; int cancel; bool discard; } res;
	/* OpenCSD never initialises its instruction address and ISA (m_instr_info) and no
	 * reset sets them: a commit that would read them unset the guard stops before
	 * (etm4_guard.h), so here they start as 0 and A32 and no output shows that */
	struct instr ii;
	struct { bool active, pop_pending; int head, n; uint64_t addr[16]; ocsd_isa isa[16]; } rs;
	struct p0_stack stk, temp;

	/* output */
	struct out *out;
	size_t nout, cap_out;
	ocsd_generic_trace_elem persist;	/* isa and context carried from element to element */

	/* memory */
	struct page pages[PAGES];
	int mru, next_new;
	bool acc_curr;
	struct key *keys;
	uint32_t nkeys, cur_key;
	size_t cap_keys;
	bool key_dirty;
	int64_t last_ctx;		/* last non-zero context ID given out (cs_perf's thread) */

	struct blk *blk;
	uint64_t hits, misses, unmodelled;
	/* tc_etm4_walk_mark: the elements' context ID is still the one from before the mark;
	 * a context element since showed it */
	bool ctx_before_mark, ctx_shown;
	uint64_t undefined_at_mark;
	/* ... the instruction address: set ever, before the mark, since; an exception since
	 * read the one from before it */
	bool addr_ever, addr_before_mark, addr_since_mark, addr_read_before;
	uint64_t undefined;		/* where the library reads a member it never set */
	uint64_t resets;		/* decoder resets so far (errors among them) */
	/* Out of memory (an element, a P0 element or a memory context found no room): what
	 * was being done stops; at the end of the operation recover() says so with an error
	 * record and resets, where the library would give a fatal error. */
	bool oom;
	uint64_t nomem;			/* times that happened */
};

static bool res_pending(const struct tc_etm4_walk *w)
{
	return w->res.commit || w->res.cancel || w->res.mispredict || w->res.discard;
}

static void clear_res(struct tc_etm4_walk *w)
{
	w->res.commit = w->res.cancel = 0;
	w->res.mispredict = w->res.discard = false;
}

/* ---- output ---- */

/* A new element, or NULL (no memory: w->oom set, callers stop what they do). */
static ocsd_generic_trace_elem *add_elem(struct tc_etm4_walk *w, uint64_t idx)
{
	struct out *o;

	if (w->nout == w->cap_out &&
	    tc_grow((void **)&w->out, &w->cap_out, w->nout + 1, sizeof(*w->out))) {
		w->oom = true;
		return NULL;
	}
	o = &w->out[w->nout];
	/* the new element starts as the last one was (OpenCSD reuses its element objects):
	 * isa and context persist; the type and the rest are set by whoever adds it */
	if (w->nout)
		o->el = w->out[w->nout - 1].el;
	else
		o->el = w->persist;
	o->idx = idx;
	w->nout++;
	return &o->el;
}

static void set_type(ocsd_generic_trace_elem *el, ocsd_gen_trc_elem_t t)
{
	el->elem_type = t;
	el->flag_bits = 0;
	el->exception_number = 0;
	el->ptr_extended_data = NULL;
}

static ocsd_generic_trace_elem *add_type(struct tc_etm4_walk *w, uint64_t idx,
					 ocsd_gen_trc_elem_t t)
{
	ocsd_generic_trace_elem *el = add_elem(w, idx);

	if (el)
		set_type(el, t);
	return el;
}

static void out_reset(struct tc_etm4_walk *w)
{
	if (w->nout)
		w->persist = w->out[w->nout - 1].el;
	w->nout = 0;
}

static void key_update(struct tc_etm4_walk *w);

static void send(struct tc_etm4_walk *w)
{
	for (size_t i = 0; i < w->nout; i++) {
		const ocsd_generic_trace_elem *el = &w->out[i].el;

		w->elem(w->ctx, w->out[i].idx, el);
		if (el->elem_type == OCSD_GEN_TRC_ELEM_PE_CONTEXT) {
			if (el->context.ctxt_id_valid && el->context.context_id)
				w->last_ctx = el->context.context_id;
			w->key_dirty = true;
		}
	}
	out_reset(w);
}

/* ---- memory ---- */

static void mem_invalidate(struct tc_etm4_walk *w)
{
	for (int i = 0; i < PAGES; i++)
		w->pages[i].len = 0, w->pages[i].st = 0;
	w->mru = w->next_new = 0;
}

static void key_update(struct tc_etm4_walk *w)
{
	struct key k = { w->mctx->context_id, w->mctx->vmid, w->last_ctx, w->mctx->el,
			 w->mctx->secure };
	uint32_t i;

	w->key_dirty = false;
	if (w->mctx->context_id > 0)
		k.last_ctx = 0;	/* the callback does not look at it then */
	for (i = 0; i < w->nkeys; i++)
		if (!memcmp(&w->keys[i], &k, sizeof(k)))
			break;
	if (i == w->nkeys) {
		if (tc_grow((void **)&w->keys, &w->cap_keys, (size_t)w->nkeys + 1,
			    sizeof(*w->keys))) {
			w->oom = true;		/* cur_key stays; nothing is read until recover() */
			w->key_dirty = true;
			return;
		}
		w->keys[w->nkeys++] = k;
	}
	/* pages read in the old context may still answer, as in the library: each page
	 * knows its context, and walks over pages of another one are not cached */
	w->cur_key = i;
}

static bool in_page(const struct page *p, uint64_t addr)
{
	return p->st <= addr && p->st + p->len >= addr + 4;
}

/* One 4-byte read as the library's cache does it: the page holding it, or NULL (no
 * memory). */
static struct page *read_page(struct tc_etm4_walk *w, uint64_t addr)
{
	struct page *p;

	/* The library's page check (start <= addr && start + len >= addr + 4) wraps in the
	 * last 4 bytes of the address space: any page passes and it copies from before the
	 * page's data. Undefined: no memory here (corrupt trace only). */
	if (addr > UINT64_MAX - 4) {
		w->undefined++;
		return NULL;
	}

	if (!w->acc_curr) {
		mem_invalidate(w);
		w->acc_curr = true;
	}
	for (int t = 0; t < PAGES; t++) {
		if (in_page(&w->pages[w->mru], addr))
			return &w->pages[w->mru];
		if (++w->mru == PAGES)
			w->mru = 0;
	}
	w->mru = w->next_new;
	p = &w->pages[w->mru];
	if (w->key_dirty)
		key_update(w);
	if (w->oom)
		return NULL;
	p->len = w->mem ? w->mem(w->ctx, addr, PAGE_SIZE, p->data) : 0;
	if (p->len > PAGE_SIZE)
		p->len = 0;
	if (p->len) {
		p->st = addr;
		p->key = w->cur_key;
		if (++w->next_new == PAGES)
			w->next_new = 0;
	}
	return in_page(p, addr) ? p : NULL;
}

static uint32_t opcode_at(const struct page *p, uint64_t addr)
{
	const uint8_t *b = &p->data[addr - p->st];

	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* ---- instruction decode (OpenCSD's ocsd_instr_info for A64) ---- */

static void decode(struct tc_etm4_walk *w, uint32_t op)
{
	struct tc_a64_wp_info i;
	static const ocsd_instr_type types[] = {
		[TC_A64_WP_NONE] = OCSD_INSTR_OTHER, [TC_A64_WP_DIRECT] = OCSD_INSTR_BR,
		[TC_A64_WP_INDIRECT] = OCSD_INSTR_BR_INDIRECT, [TC_A64_WP_ISB] = OCSD_INSTR_ISB,
		[TC_A64_WP_DSB_DMB] = OCSD_INSTR_DSB_DMB, [TC_A64_WP_WFI_WFE] = OCSD_INSTR_WFI_WFE,
		[TC_A64_WP_TSTART] = OCSD_INSTR_TSTART,
	};
	static const ocsd_instr_subtype subs[] = {
		[TC_A64_SUB_NONE] = OCSD_S_INSTR_NONE, [TC_A64_SUB_LINK] = OCSD_S_INSTR_BR_LINK,
		[TC_A64_SUB_RET] = OCSD_S_INSTR_V8_RET, [TC_A64_SUB_ERET] = OCSD_S_INSTR_V8_ERET,
	};

	tc_a64_waypoint(op, w->ii.addr, w->cfg.a64_flags, &i);
	w->ii.size = 4;
	w->ii.type = types[i.wp];
	w->ii.sub = subs[i.sub];
	w->ii.link = i.link;
	w->ii.cond = i.cond;
	w->ii.next_isa = w->ii.isa;
	if (i.wp == TC_A64_WP_DIRECT)
		w->ii.branch = i.target;
}

/* ---- the walk ---- */

enum wp_res { WP_NOT_FOUND, WP_FOUND, WP_NACC, WP_UNMODELLED, WP_NOMEM };

/* st and en apart: walk() stores them one at a time and its callers read them at once
 * after it returns; side by side the compiler reads both with one 16-byte load, which
 * cannot be forwarded from two 8-byte stores (a stall per range) */
struct range {
	uint64_t st;
	uint32_t n;
	uint64_t en;
};

static void blk_clear(struct tc_etm4_walk *w)
{
	if (w->blk)
		memset(w->blk, 0, BLK_TABLE);
}

/* Block tables come from the process's pool of huge-page chunks (4 tables to a 2 MiB
 * page), a table let go of taken again first: each ID's walk fills its table all over
 * (addresses hashed), and a first touch of fresh memory costs a page fault per 4 KiB
 * (10-30 us in a VM: 160 per ID), a huge page one per 2 MiB. False: none. */
static bool blk_table(struct tc_etm4_walk *w)
{
	struct tc_blockpool *p = tc_blockpool_shared(BLK_TABLE);

	if (!p || !(w->blk = tc_blockpool_get(p)))
		return false;
	blk_clear(w);	/* another walk's table, perhaps */
	return true;
}

/* The trace ID in the hash too: the walks' tables lie 512 KiB apart in a huge page, and
 * CPUs running the same code would put its blocks in the same slots of each, the same
 * cache sets. */
static struct blk *blk_slot(struct tc_etm4_walk *w, uint64_t addr, uint32_t key)
{
	uint64_t h = (addr >> 2) ^
		     ((uint64_t)(key ^ (uint32_t)w->cfg.trace_id << 24) * 0x9e3779b97f4a7c15ull);

	h ^= h >> 29;
	return &w->blk[(h * 0xbf58476d1ce4e5b9ull) >> (64 - BLK_BITS)];
}

/* The reads the library makes for n instructions from addr, through the modelled cache.
 * Returns how many of them found memory read in the current context (all n: fine). */
static uint32_t touch(struct tc_etm4_walk *w, uint64_t addr, uint32_t n, bool *nacc)
{
	uint32_t k = 0;

	*nacc = false;
	while (k < n) {
		uint64_t a = addr + 4ull * k;
		struct page *p = read_page(w, a);
		uint64_t fit;

		if (!p) {
			*nacc = true;
			return k;
		}
		if (p->key != w->cur_key)
			return k;
		fit = (p->st + p->len - a) / 4;	/* reads that stay in this page */
		k += fit < n - k ? (uint32_t)fit : n - k;
	}
	return k;
}

/* Follow instructions from w->ii.addr to the next waypoint (to_addr: until the address after
 * an instruction is target instead), as the library's traceInstrToWP. */
static enum wp_res walk(struct tc_etm4_walk *w, struct range *r, bool to_addr, uint64_t target)
{
	uint64_t start;
	bool cacheable;

	r->st = r->en = w->ii.addr;
	r->n = 0;
	if (w->ii.isa != ocsd_isa_aarch64)
		return WP_UNMODELLED;
	if (w->key_dirty)
		key_update(w);
	if (w->oom)
		return WP_NOMEM;
	start = w->ii.addr;
	cacheable = !to_addr;
	if (cacheable && !w->blk && !blk_table(w))
		cacheable = false;	/* slower, not wrong */
	if (cacheable) {
		struct blk *b = blk_slot(w, start, w->cur_key);

		if (b->naddr == ~start && b->key == w->cur_key && b->n) {
			bool nacc;
			uint32_t k = touch(w, start, b->n, &nacc);

			if (k == b->n) {
				w->hits++;
				w->ii.addr = start + 4ull * b->n;
				w->ii.size = 4;
				w->ii.type = (ocsd_instr_type)b->type;
				w->ii.sub = (ocsd_instr_subtype)b->sub;
				w->ii.link = b->link;
				w->ii.cond = b->cond;
				w->ii.next_isa = w->ii.isa;
				if (b->type == OCSD_INSTR_BR)
					w->ii.branch = b->target;
				r->n = b->n;
				r->en = w->ii.addr;
				return WP_FOUND;
			}
			/* the reads before k were plain instructions */
			if (k) {
				w->ii.addr = start + 4ull * k;
				w->ii.size = 4;
				w->ii.type = OCSD_INSTR_OTHER;
				w->ii.sub = OCSD_S_INSTR_NONE;
				w->ii.link = w->ii.cond = 0;
				w->ii.next_isa = w->ii.isa;
				r->n = k;
			}
			if (nacc) {
				r->en = w->ii.addr;
				return w->oom ? WP_NOMEM : WP_NACC;
			}
			cacheable = false;	/* a page from another context: read it */
		}
	}
	w->misses++;
	for (;;) {
		struct page *p = read_page(w, w->ii.addr);

		if (!p) {
			r->en = w->ii.addr;
			return w->oom ? WP_NOMEM : WP_NACC;
		}
		if (p->key != w->cur_key)
			cacheable = false;
		decode(w, opcode_at(p, w->ii.addr));
		w->ii.addr += w->ii.size;
		r->n++;
		if (to_addr ? w->ii.addr == target : w->ii.type != OCSD_INSTR_OTHER)
			break;
	}
	r->en = w->ii.addr;
	if (cacheable && r->n && start + 4ull * r->n == r->en) {
		struct blk *b = blk_slot(w, start, w->cur_key);

		*b = (struct blk){ .naddr = ~start, .target = w->ii.branch,
				   .key = w->cur_key, .n = r->n, .type = (uint8_t)w->ii.type,
				   .sub = (uint8_t)w->ii.sub, .link = w->ii.link,
				   .cond = w->ii.cond };
	}
	return WP_FOUND;
}

/* ---- return stack ---- */

static void rs_push(struct tc_etm4_walk *w, uint64_t addr, ocsd_isa isa)
{
	if (!w->rs.active)
		return;
	w->rs.head = (w->rs.head + 1) & 0xf;
	w->rs.addr[w->rs.head] = addr;
	w->rs.isa[w->rs.head] = isa;
	if (++w->rs.n > 16)
		w->rs.n = 16;
	w->rs.pop_pending = false;
}

static void rs_flush(struct tc_etm4_walk *w)
{
	w->rs.n = 0;
	w->rs.pop_pending = false;
}

/* ---- errors: the library logs them, resets and waits for sync again ---- */

static void reset_decoder(struct tc_etm4_walk *w)
{
	w->resets++;
	w->state = NO_SYNC;
	w->is_secure = true;
	w->is_64bit = false;
	w->spec_depth = 0;
	w->need_ctxt = w->need_addr = true;
	w->pending_addr = false;
	w->prev_overflow = false;
	w->stk.n = 0;
	out_reset(w);
	w->last_is = 0;
	clear_res(w);
}

static void packet_error(struct tc_etm4_walk *w)
{
	reset_decoder(w);
	w->state = NO_SYNC;
	w->unsync = UNSYNC_BAD_PACKET;
}

static void unmodelled(struct tc_etm4_walk *w, uint64_t idx, const char *what)
{
	w->unmodelled++;
	if (w->err)
		w->err(w->ctx, idx, what);
	packet_error(w);
}

/* The instruction address was just set from the trace. */
static void got_addr(struct tc_etm4_walk *w)
{
	w->need_addr = false;
	w->addr_ever = w->addr_since_mark = true;
}

static void rs_pop(struct tc_etm4_walk *w)
{
	if (!w->rs.pop_pending)
		return;
	/* pop_pending is only ever set with the stack active */
	uint64_t addr = (uint64_t)-1;
	ocsd_isa isa = w->ii.isa;

	if (w->rs.n > 0) {
		addr = w->rs.addr[w->rs.head];
		isa = w->rs.isa[w->rs.head];
		w->rs.head = (w->rs.head - 1) & 0xf;
	}
	w->rs.n--;
	w->rs.pop_pending = false;
	if (w->rs.n < 0) {
		packet_error(w);	/* "Trace Return Stack Overflow" */
		return;
	}
	w->ii.addr = addr;
	w->ii.isa = isa;
	got_addr(w);
}

/* ---- elements ---- */

static ocsd_isa calc_isa(bool sf, uint8_t is)
{
	return sf ? ocsd_isa_aarch64 : is == 0 ? ocsd_isa_arm : ocsd_isa_thumb2;
}

static void set_range(struct tc_etm4_walk *w, ocsd_generic_trace_elem *el, const struct range *r,
		      bool exec)
{
	set_type(el, OCSD_GEN_TRC_ELEM_INSTR_RANGE);
	el->last_instr_exec = exec;
	el->last_i_type = w->ii.type;
	el->last_i_subtype = w->ii.sub;
	el->last_instr_sz = w->ii.size & 7;
	el->isa = w->ii.isa > ocsd_isa_unknown ? ocsd_isa_unknown : w->ii.isa;
	el->last_instr_cond = w->ii.cond;
	el->st_addr = r->st;
	el->en_addr = r->en;
	el->num_instr_range = r->n;
	if (exec)
		w->ii.isa = w->ii.next_isa;
}

static void update_context(struct tc_etm4_walk *w, const struct p0 *c, ocsd_generic_trace_elem *el)
{
	const etmv4_context_t *x = &c->ctx.c;

	set_type(el, OCSD_GEN_TRC_ELEM_PE_CONTEXT);
	w->is_64bit = x->SF != 0;
	el->context.bits64 = x->SF;
	w->is_secure = x->NS == 0;
	if (x->NSE)
		el->context.security_level = x->NS ? ocsd_sec_realm : ocsd_sec_root;
	else
		el->context.security_level = x->NS ? ocsd_sec_nonsecure : ocsd_sec_secure;
	el->context.exception_level = (ocsd_ex_level)x->EL;
	el->context.el_valid = 1;
	if (x->updated_c) {
		el->context.ctxt_id_valid = 1;
		el->context.context_id = x->ctxtID;
		w->ctx_before_mark = false;
	} else if (w->ctx_before_mark) {
		w->ctx_shown = true;
	}
	if (x->updated_v) {
		el->context.vmid_valid = 1;
		el->context.vmid = x->VMID;
	}
	el->isa = w->ii.isa = calc_isa(w->is_64bit, c->ctx.is);
	w->need_ctxt = false;
}

static void ts_cc_event(struct tc_etm4_walk *w, const struct p0 *e)
{
	ocsd_generic_trace_elem *el;

	switch (e->type) {
	case P0_EVENT:
		if (!(el = add_type(w, e->idx, OCSD_GEN_TRC_ELEM_EVENT)))
			return;
		el->trace_event.ev_type = EVENT_NUMBERED;
		el->trace_event.ev_number = e->param[0];
		break;
	case P0_TS:
	case P0_TS_CC:
		if (!(el = add_type(w, e->idx, OCSD_GEN_TRC_ELEM_TIMESTAMP)))
			return;
		el->timestamp = (uint64_t)e->param[0] | (uint64_t)e->param[1] << 32;
		if (e->type == P0_TS_CC) {
			el->has_cc = 1;
			el->cycle_count = e->param[2];
		}
		break;
	case P0_CC:
		if (!(el = add_type(w, e->idx, OCSD_GEN_TRC_ELEM_CYCLE_COUNT)))
			return;
		el->has_cc = 1;
		el->cycle_count = e->param[0];
		break;
	default:
		break;
	}
}

static void trans_elem(struct tc_etm4_walk *w, const struct p0 *e)
{
	ocsd_generic_trace_elem *el = add_type(w, e->idx, OCSD_GEN_TRC_ELEM_MEMTRANS);

	if (el)
		el->mem_trans = OCSD_MEM_TRANS_TRACE_INIT;
}

static void process_atom(struct tc_etm4_walk *w, ocsd_atm_val atom, uint64_t idx)
{
	struct range r;
	enum wp_res res;
	ocsd_generic_trace_elem *el;

	if (!(el = add_elem(w, idx)))
		return;
	res = walk(w, &r, false, 0);
	if (res == WP_UNMODELLED || res == WP_NOMEM) {
		w->nout--;
		if (res == WP_UNMODELLED)
			unmodelled(w, idx, "ETMv4 fast decoder: code that is not A64 "
				   "(use --decoder=reference)");
		return;
	}
	if (res == WP_FOUND) {
		uint64_t next = w->ii.addr;

		if (w->ii.type == OCSD_INSTR_BR && atom == ATOM_E) {
			w->ii.addr = w->ii.branch;
			if (w->ii.link)
				rs_push(w, next, w->ii.isa);
		} else if (w->ii.type == OCSD_INSTR_BR_INDIRECT && atom == ATOM_E) {
			w->need_addr = true;
			if (w->ii.link)
				rs_push(w, next, w->ii.isa);
			if (w->rs.active)
				w->rs.pop_pending = true;
		}
		set_range(w, el, &r, atom == ATOM_E);
		return;
	}
	w->need_addr = true;
	if (r.st != r.en) {
		set_range(w, el, &r, true);
		if (!(el = add_elem(w, idx)))
			return;
	}
	set_type(el, OCSD_GEN_TRC_ELEM_ADDR_NACC);
	el->st_addr = w->ii.addr;
}

static void process_exception(struct tc_etm4_walk *w)
{
	struct p0 exc = *back(&w->stk), ctx, *e;
	bool have_ctx = false;
	uint64_t ret;
	enum wp_res res = WP_NOT_FOUND;
	ocsd_generic_trace_elem *el;

	/* it reads the instruction address (and ISA) whatever need_addr says */
	if (w->addr_before_mark && !w->addr_since_mark)
		w->addr_read_before = true;
	pop_back(&w->stk);
	e = back(&w->stk);
	if (e && e->type == P0_CTXT) {
		ctx = *e;
		have_ctx = true;
		pop_back(&w->stk);
		e = back(&w->stk);
	}
	if (!e || e->type != P0_ADDR) {
		packet_error(w);	/* "Address missing in exception packet." */
		return;
	}
	ret = e->addr.val;
	if (exc.exc.same) {
		bool b64 = w->ii.isa == ocsd_isa_aarch64;

		if (have_ctx)
			b64 = ctx.ctx.c.SF;
		w->ii.addr = ret;
		w->ii.isa = e->addr.isa == 0 ? (b64 ? ocsd_isa_aarch64 : ocsd_isa_arm)
					     : ocsd_isa_thumb2;
		got_addr(w);
	}
	/* The library compares its instruction address with the return address and walks
	 * from it whatever need_addr says; before the decoder ever had an address (or, for
	 * the branch-target kind without context or IS bit, an ISA) the guard stopped it. */
	if (!(el = add_elem(w, exc.idx)))
		return;
	if (have_ctx) {
		update_context(w, &ctx, el);
		if (!(el = add_elem(w, exc.idx)))
			return;
	}
	if (w->ii.addr != ret) {
		struct range r;
		bool out = false;

		res = walk(w, &r, true, ret);
		if (res == WP_NOMEM)
			return;
		if (res == WP_UNMODELLED) {
			unmodelled(w, exc.idx,
				   "ETMv4 fast decoder: code that is not A64 (use --decoder=reference)");
			return;
		}
		if (res == WP_FOUND) {
			set_range(w, el, &r, true);
			out = true;
		} else {
			w->need_addr = true;
			if (r.st != r.en) {
				set_range(w, el, &r, true);
				out = true;
			}
		}
		if (out && !(el = add_elem(w, exc.idx)))
			return;
	}
	if (res == WP_NACC) {
		set_type(el, OCSD_GEN_TRC_ELEM_ADDR_NACC);
		el->st_addr = w->ii.addr;
		if (!(el = add_elem(w, exc.idx)))
			return;
	}
	set_type(el, OCSD_GEN_TRC_ELEM_EXCEPTION);
	el->en_addr = ret;
	el->excep_ret_addr = 1;
	el->excep_ret_addr_br_tgt = exc.exc.same;
	el->exception_number = exc.exc.num;
}

static void commit_elements(struct tc_etm4_walk *w)
{
	int req = w->res.commit;
	uint64_t err_idx = 0;
	bool flush = false;

	out_reset(w);
	while (w->res.commit && !flush && !w->oom) {
		struct p0 *e = back(&w->stk);
		bool pop = true;

		if (!e) {
			(void)err_idx;
			packet_error(w);	/* "Not enough elements to commit" */
			continue;
		}
		err_idx = e->idx;
		switch (e->type) {
		case P0_TRC_ON: {
			ocsd_generic_trace_elem *el = add_type(w, e->idx, OCSD_GEN_TRC_ELEM_TRACE_ON);

			if (!el)
				break;
			el->trace_on_reason = w->prev_overflow ? TRACE_ON_OVERFLOW : TRACE_ON_NORMAL;
			w->prev_overflow = false;
			rs_flush(w);
			break;
		}
		case P0_ADDR:
			w->rs.pop_pending = false;
			w->ii.addr = e->addr.val;
			w->ii.isa = calc_isa(w->is_64bit, e->addr.isa);
			got_addr(w);
			break;
		case P0_CTXT:
			if (e->ctx.c.updated) {
				ocsd_generic_trace_elem *el = add_elem(w, e->idx);

				if (!el)
					break;
				update_context(w, e, el);
				flush = true;
				w->acc_curr = false;	/* invalidates the read cache */
			}
			break;
		case P0_EVENT:
		case P0_TS:
		case P0_CC:
		case P0_TS_CC:
			ts_cc_event(w, e);
			break;
		case P0_ATOM: {
			uint64_t idx = e->idx;

			uint64_t resets = w->resets;

			while (e->atom.num && w->res.commit) {
				ocsd_atm_val a = (e->atom.bits & 1) ? ATOM_E : ATOM_N;

				e->atom.num--;
				e->atom.bits >>= 1;
				rs_pop(w);
				if (w->resets == resets && !w->need_ctxt && !w->need_addr)
					process_atom(w, a, idx);
				if (w->oom)
					break;
				if (w->resets != resets) {
					/* the return stack overflowed (the library resets and
					 * reads the element it freed), or code we do not model:
					 * stop with the stack empty */
					pop = false;
					w->res.commit = 0;
					break;
				}
				w->res.commit--;
			}
			if (w->resets == resets && e->atom.num)
				pop = false;
			break;
		}
		case P0_EXCEP: {
			uint64_t resets = w->resets;

			rs_pop(w);
			if (w->resets != resets) {
				w->res.commit = 0;
				break;
			}
			process_exception(w);
			w->res.commit--;
			break;
		}
		case P0_EXCEP_RET:
			add_type(w, e->idx, OCSD_GEN_TRC_ELEM_EXCEPTION_RET);
			if (e->is_p0)
				w->res.commit--;
			break;
		case P0_TRANS_INIT:
			trans_elem(w, e);
			break;
		}
		if (pop)
			pop_back(&w->stk);
	}
	w->spec_depth -= req - w->res.commit;
}

static void cancel_elements(struct tc_etm4_walk *w)
{
	bool done = false;
	int req = w->res.cancel;

	w->temp.n = 0;
	while (w->res.cancel) {
		if (!done) {
			if (!w->stk.n) {
				done = true;
				continue;
			}
			struct p0 *e = at(&w->stk, 0);

			if (e->is_p0) {
				if (e->type == P0_ATOM) {
					int rm = w->res.cancel <= e->atom.num ? w->res.cancel
									      : e->atom.num;

					/* the library's count is a uint8_t: a cancel count
					 * beyond INT_MAX (corrupt) wraps it, never grows it */
					e->atom.num = (uint8_t)(e->atom.num - rm);
					w->res.cancel -= rm;
					if (!e->atom.num)
						pop_front(&w->stk);
				} else {
					w->res.cancel--;
					pop_front(&w->stk);
				}
			} else {
				switch (e->type) {
				case P0_EVENT:
				case P0_TS:
				case P0_CC:
				case P0_TS_CC:
					/* kept: to the back of temp, in the order met */
					if (w->temp.n == w->temp.cap && !grow(&w->temp)) {
						w->oom = true;	/* this one is lost */
						pop_front(&w->stk);
						break;
					}
					*at(&w->temp, w->temp.n++) = *e;
					pop_front(&w->stk);
					break;
				default:
					pop_front(&w->stk);
					break;
				}
			}
			if (!w->stk.n)
				done = true;
		} else {
			/* The library would count down m_unseen_spec_elem, which it never
			 * sets: the guard (etm4_guard.h) stops before such a packet, unless
			 * its model lost the decoder (an error that depends on the code).
			 * Undefined then; with 0 there (the sane value), its error. */
			w->undefined++;
			packet_error(w);	/* "Not enough elements to cancel" */
			w->res.cancel = 0;
			break;
		}
	}
	while (w->temp.n) {
		/* room for them: each came off this stack above */
		struct p0 *e = push_front(&w->stk);

		if (!e) {
			w->oom = true;
			w->temp.n = 0;
			break;
		}
		*e = *at(&w->temp, w->temp.n - 1);
		w->temp.n--;
	}
	w->spec_depth -= req - w->res.cancel;
}

static void mispredict(struct tc_etm4_walk *w)
{
	bool found = false;
	unsigned i = 0;

	while (i < w->stk.n) {
		struct p0 *e = at(&w->stk, i++);

		if (e->type == P0_ATOM) {
			e->atom.bits ^= 1u << ((e->atom.num - 1) & 31);
			found = true;
			break;
		}
		if (e->type == P0_ADDR)
			i = erase_iter(&w->stk, i - 1);
	}
	if (!found) {
		/* m_unseen_spec_elem again (or the library's crash), as in cancel_elements */
		w->undefined++;
		packet_error(w);	/* "Not found mispredict atom" */
	}
	w->res.mispredict = false;
}

static void discard_elements(struct tc_etm4_walk *w)
{
	struct p0 *e;

	while ((e = back(&w->stk))) {
		ts_cc_event(w, e);
		pop_back(&w->stk);
	}
	clear_res(w);
	w->spec_depth = 0;
	w->state = NO_SYNC;
	w->unsync = w->prev_overflow ? UNSYNC_OVERFLOW : UNSYNC_DISCARD;
	w->need_ctxt = w->need_addr = true;
	w->pending_addr = false;
}

static void resolve(struct tc_etm4_walk *w)
{
	for (;;) {
		if (w->oom)
			return;		/* recover() ends it */
		if (w->nout)
			send(w);
		else if (res_pending(w)) {
			if (w->res.commit)
				commit_elements(w);
			if (!w->res.commit) {
				if (w->res.cancel)
					cancel_elements(w);
				if (w->res.mispredict)
					mispredict(w);
				if (w->res.discard)
					discard_elements(w);
			}
		}
		if (!w->nout && !res_pending(w)) {
			if (w->state == RESOLVE_ELEM)
				w->state = DECODE_PKTS;
			return;
		}
	}
}

/* ---- packets ---- */

/* A new P0 element, or NULL (no memory: w->oom set, the packet's other effects dropped
 * by recover()). */
static struct p0 *push(struct tc_etm4_walk *w, enum p0_type t, bool is_p0)
{
	struct p0 *e = push_front(&w->stk);

	if (!e) {
		w->oom = true;
		return NULL;
	}
	e->type = (uint8_t)t;
	e->is_p0 = is_p0;
	e->idx = w->idx;
	return e;
}

static uint32_t pkt_cc(const ocsd_etmv4_i_pkt *p)
{
	return p->pkt_valid.bits.cc_valid ? p->cycle_count : 0;
}

static void decode_packet(struct tc_etm4_walk *w)
{
	const ocsd_etmv4_i_pkt *p = w->pkt;
	bool is_addr = false;
	struct p0 *e;

	switch (p->type) {
	case ETM4_PKT_I_ASYNC:
	case ETM4_PKT_I_IGNORE:
		break;
	case ETM4_PKT_I_TRACE_INFO:
		rs_flush(w);
		break;
	case ETM4_PKT_I_TRACE_ON:
		push(w, P0_TRC_ON, false);
		break;
	case ETM4_PKT_I_ATOM_F1:
	case ETM4_PKT_I_ATOM_F2:
	case ETM4_PKT_I_ATOM_F3:
	case ETM4_PKT_I_ATOM_F4:
	case ETM4_PKT_I_ATOM_F5:
	case ETM4_PKT_I_ATOM_F6:
		if (!(e = push(w, P0_ATOM, true)))
			break;
		e->atom.bits = p->atom.En_bits;
		e->atom.num = p->atom.num;
		w->spec_depth += p->atom.num;
		break;
	case ETM4_PKT_I_CTXT:
		if (!(e = push(w, P0_CTXT, false)))
			break;
		e->ctx.c = p->context;
		e->ctx.is = w->last_is;
		break;
	case ETM4_PKT_I_ADDR_CTXT_L_64IS0:
	case ETM4_PKT_I_ADDR_CTXT_L_64IS1:
	case ETM4_PKT_I_ADDR_CTXT_L_32IS0:
	case ETM4_PKT_I_ADDR_CTXT_L_32IS1:
		w->last_is = p->v_addr_ISA;
		if (!(e = push(w, P0_CTXT, false)))
			break;
		e->ctx.c = p->context;
		e->ctx.is = w->last_is;
		/* fall through */
	case ETM4_PKT_I_ADDR_MATCH:
	case ETM4_PKT_I_ADDR_L_32IS0:
	case ETM4_PKT_I_ADDR_L_32IS1:
	case ETM4_PKT_I_ADDR_L_64IS0:
	case ETM4_PKT_I_ADDR_L_64IS1:
	case ETM4_PKT_I_ADDR_S_IS0:
	case ETM4_PKT_I_ADDR_S_IS1:
		w->last_is = p->v_addr_ISA;
		if (!(e = push(w, P0_ADDR, false)))
			break;
		e->addr.val = p->v_addr.val;
		e->addr.isa = p->v_addr_ISA;
		is_addr = true;
		break;
	case ETM4_PKT_I_EXCEPT:
		if (!(e = push(w, P0_EXCEP, true)))
			break;
		e->exc.num = (uint16_t)p->exception_info.exceptionType;
		e->exc.same = p->exception_info.addr_interp == 0x2;
		w->pending_addr = true;
		break;
	case ETM4_PKT_I_EXCEPT_RTN:
		push(w, P0_EXCEP_RET, false);	/* P0 on v7-M only */
		break;
	case ETM4_PKT_I_FUNC_RET:
		break;				/* v8-M only */
	case ETM4_PKT_I_EVENT:
		if (!(e = push(w, P0_EVENT, false)))
			break;
		e->param[0] = p->event_val;
		break;
	case ETM4_PKT_I_CCNT_F1:
	case ETM4_PKT_I_CCNT_F2:
	case ETM4_PKT_I_CCNT_F3:
		if (!(e = push(w, P0_CC, false)))
			break;
		e->param[0] = pkt_cc(p);
		break;
	case ETM4_PKT_I_TIMESTAMP: {
		uint64_t ts = p->pkt_valid.bits.ts_valid ? p->ts.timestamp : 0;

		if (!(e = push(w, w->cfg.cci ? P0_TS_CC : P0_TS, false)))
			break;
		e->param[0] = (uint32_t)ts;
		e->param[1] = (uint32_t)(ts >> 32);
		e->param[2] = w->cfg.cci ? pkt_cc(p) : 0;
		break;
	}
	case ETM4_PKT_I_MISPREDICT:
	case ETM4_PKT_I_CANCEL_F1_MISPRED:
	case ETM4_PKT_I_CANCEL_F2:
	case ETM4_PKT_I_CANCEL_F3:
		w->res.mispredict = true;
		if (p->atom.num) {
			if (!(e = push(w, P0_ATOM, true)))
				break;
			e->atom.bits = p->atom.En_bits;
			e->atom.num = p->atom.num;
			w->spec_depth += p->atom.num;
		}
		/* fall through */
	case ETM4_PKT_I_CANCEL_F1:
		w->res.cancel = (int)p->cancel_elements;
		break;
	case ETM4_PKT_I_COMMIT:
		w->res.commit = (int)p->commit_elements;
		break;
	case ETM4_PKT_I_OVERFLOW:
		w->prev_overflow = true;
		/* fall through */
	case ETM4_PKT_I_DISCARD:
		w->spec_depth = 0;
		w->res.discard = true;
		break;
	case ETM4_PKT_I_COND_FLUSH:
	case ETM4_PKT_I_COND_I_F1:
	case ETM4_PKT_I_COND_I_F2:
	case ETM4_PKT_I_COND_I_F3:
	case ETM4_PKT_I_COND_RES_F1:
	case ETM4_PKT_I_COND_RES_F2:
	case ETM4_PKT_I_COND_RES_F3:
	case ETM4_PKT_I_COND_RES_F4:
	case ETM4_PKT_I_NUM_DS_MKR:
	case ETM4_PKT_I_UNNUM_DS_MKR:
	case ETE_PKT_I_COMMIT_WIN_MV:
		packet_error(w);		/* unsupported: logged, decoder reset */
		break;
	case ETM4_PKT_I_Q:
	case ETE_PKT_I_SRC_ADDR_MATCH:
	case ETE_PKT_I_SRC_ADDR_S_IS0:
	case ETE_PKT_I_SRC_ADDR_S_IS1:
	case ETE_PKT_I_SRC_ADDR_L_32IS0:
	case ETE_PKT_I_SRC_ADDR_L_32IS1:
	case ETE_PKT_I_SRC_ADDR_L_64IS0:
	case ETE_PKT_I_SRC_ADDR_L_64IS1:
	case ETE_PKT_I_TS_MARKER:
	case ETE_PKT_I_TRANS_ST:
	case ETE_PKT_I_TRANS_COMMIT:
	case ETE_PKT_I_TRANS_FAIL:
		unmodelled(w, w->idx, "ETMv4 fast decoder: a packet it does not model "
			   "(use --decoder=reference)");
		break;
	default:			/* bad packets and anything unknown */
		packet_error(w);
		break;
	}
	if (w->oom)
		return;
	if (is_addr && w->pending_addr) {
		w->spec_depth++;
		w->pending_addr = false;
	}
	if (w->spec_depth > w->max_spec)
		w->res.commit = w->spec_depth - w->max_spec;
	if (res_pending(w))
		w->state = RESOLVE_ELEM;
}

static void process_packet(struct tc_etm4_walk *w)
{
	for (;;) {
		switch (w->state) {
		case NO_SYNC: {
			ocsd_generic_trace_elem *el;

			out_reset(w);
			if (!(el = add_type(w, w->idx, OCSD_GEN_TRC_ELEM_NO_SYNC)))
				return;
			el->unsync_eot_info = w->unsync;
			send(w);
			w->state = WAIT_SYNC;
			break;
		}
		case WAIT_SYNC:
			if (w->pkt->type == ETM4_PKT_I_ASYNC)
				w->state = WAIT_TINFO;
			return;
		case WAIT_TINFO:
			w->need_ctxt = w->need_addr = true;
			if (w->pkt->type == ETM4_PKT_I_TRACE_INFO) {
				const ocsd_etmv4_i_pkt *p = w->pkt;

				w->spec_depth = p->pkt_valid.bits.spec_depth_valid
							? (int)p->curr_spec_depth : 0;
				if (p->trace_info.bits.in_trans_state)
					push(w, P0_TRANS_INIT, false);
				w->state = DECODE_PKTS;
				rs_flush(w);
			}
			return;
		case DECODE_PKTS:
			decode_packet(w);
			if (w->state != RESOLVE_ELEM || w->oom)
				return;
			break;
		case RESOLVE_ELEM:
			resolve(w);
			if (w->state == DECODE_PKTS || w->oom)
				return;
			break;
		}
	}
}

static void on_eot(struct tc_etm4_walk *w)
{
	struct p0 *e;
	ocsd_generic_trace_elem *el;

	if (!w->nout)
		out_reset(w);
	while ((e = back(&w->stk))) {
		switch (e->type) {
		case P0_ATOM:
		case P0_TRC_ON:
		case P0_EXCEP:
		case P0_EXCEP_RET:
			w->stk.n = 0;
			break;
		case P0_EVENT:
		case P0_TS:
		case P0_CC:
		case P0_TS_CC:
			ts_cc_event(w, e);
			break;
		default:
			break;
		}
		pop_back(&w->stk);
	}
	if (w->oom)
		return;
	if (!(el = add_type(w, w->idx, OCSD_GEN_TRC_ELEM_EO_TRACE)))
		return;
	el->unsync_eot_info = w->prev_overflow ? UNSYNC_OVERFLOW : UNSYNC_EOT;
	send(w);
}

/* Out of memory during an operation: the elements not yet given out belong to what was cut
 * short, so they go; an error record says so, and the decoder is reset as after a bad
 * packet (it waits for the next sync). The caches go too: a memory context may have been
 * left unrecorded. */
static void recover(struct tc_etm4_walk *w, uint64_t index)
{
	w->oom = false;
	w->nomem++;
	out_reset(w);
	w->temp.n = 0;
	if (w->err)
		w->err(w->ctx, index, "ETMv4 fast decoder: out of memory; decoder reset");
	packet_error(w);
	w->key_dirty = true;
	w->acc_curr = false;
	mem_invalidate(w);
	blk_clear(w);
}

int tc_etm4_walk_op(struct tc_etm4_walk *w, ocsd_datapath_op_t op, uint64_t index,
		    const ocsd_etmv4_i_pkt *pkt)
{
	switch (op) {
	case OCSD_OP_DATA:
		if (!pkt)
			return 0;
		w->pkt = pkt;
		w->idx = index;
		process_packet(w);
		break;
	case OCSD_OP_EOT:
		on_eot(w);
		break;
	case OCSD_OP_FLUSH:
		if (w->state == RESOLVE_ELEM)
			resolve(w);
		else
			send(w);
		break;
	case OCSD_OP_RESET:
		w->unsync = UNSYNC_RESET_DECODER;
		reset_decoder(w);
		break;
	}
	if (!w->oom)
		return 0;
	recover(w, index);
	return -1;
}

struct tc_etm4_walk *tc_etm4_walk_new(const struct tc_etm4_walk_cfg *cfg,
				      tc_etm4_walk_elem_fn elem, tc_etm4_walk_mem_fn mem,
				      tc_etm4_walk_err_fn err, void *ctx,
				      const struct tc_etm_mem_ctx *mctx)
{
	struct tc_etm4_walk *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	if (!grow(&w->stk) || !grow(&w->temp)) {
		tc_etm4_walk_free(w);
		return NULL;
	}
	w->cfg = *cfg;
	w->elem = elem;
	w->mem = mem;
	w->err = err;
	w->ctx = ctx;
	w->mctx = mctx;
	w->max_spec = (int)cfg->max_spec;
	w->rs.active = cfg->ret_stack;
	w->ii.isa = ocsd_isa_arm;
	w->ii.type = OCSD_INSTR_OTHER;
	w->persist.isa = ocsd_isa_unknown;
	w->persist.st_addr = w->persist.en_addr = (uint64_t)-1;
	w->key_dirty = true;
	w->unsync = UNSYNC_INIT_DECODER;
	reset_decoder(w);
	return w;
}

void tc_etm4_walk_free(struct tc_etm4_walk *w)
{
	if (!w)
		return;
	free(w->stk.e);
	free(w->temp.e);
	free(w->out);
	free(w->keys);
	if (w->blk)
		tc_blockpool_put(tc_blockpool_shared(BLK_TABLE), w->blk);
	free(w);
}

void tc_etm4_walk_mem_changed(struct tc_etm4_walk *w)
{
	w->acc_curr = false;
	mem_invalidate(w);
	blk_clear(w);
}

void tc_etm4_walk_mark(struct tc_etm4_walk *w)
{
	const ocsd_generic_trace_elem *el = w->nout ? &w->out[w->nout - 1].el : &w->persist;

	w->ctx_before_mark = el->context.ctxt_id_valid;
	w->ctx_shown = false;
	w->undefined_at_mark = w->undefined;
	w->addr_before_mark = w->addr_ever;
	w->addr_since_mark = w->addr_read_before = false;
}

bool tc_etm4_walk_as_new(const struct tc_etm4_walk *w)
{
	return !w->ctx_before_mark && !w->ctx_shown && w->undefined == w->undefined_at_mark &&
	       !w->addr_read_before;
}

uint64_t tc_etm4_walk_unmodelled(const struct tc_etm4_walk *w)
{
	return w->unmodelled;
}

uint64_t tc_etm4_walk_nomem(const struct tc_etm4_walk *w)
{
	return w->nomem;
}

uint64_t tc_etm4_walk_undefined(const struct tc_etm4_walk *w)
{
	return w->undefined;
}

void tc_etm4_walk_cache_stats(const struct tc_etm4_walk *w, uint64_t *hits, uint64_t *misses)
{
	*hits = w->hits;
	*misses = w->misses;
}
