/* The fast ETMv4 decoder (decoders/coresight/etm4_walk.c) out of memory: each of its growing
 * arrays (output elements, the P0 element stack, the memory contexts) refused in turn. The
 * operation says so (-1, one error record at its index), the decoder resets, and once memory
 * is there again it resynchronises at the next ASYNC and TRACE_INFO and gives ranges as
 * before. The module is compiled into this test with its allocations redirected (its public
 * names renamed, so the library's copy stays out of the way). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"

static int fail_out, fail_keys, fail_p0;	/* refuse that array's growth */

static int test_grow(void **v, size_t *cap, size_t need, size_t size);
static void *test_malloc(size_t n);

#define tc_grow test_grow
#define malloc test_malloc
#define tc_etm4_walk_new nomem_walk_new
#define tc_etm4_walk_free nomem_walk_free
#define tc_etm4_walk_op nomem_walk_op
#define tc_etm4_walk_mem_changed nomem_walk_mem_changed
#define tc_etm4_walk_unmodelled nomem_walk_unmodelled
#define tc_etm4_walk_nomem nomem_walk_nomem
#define tc_etm4_walk_undefined nomem_walk_undefined
#define tc_etm4_walk_cache_stats nomem_walk_cache_stats
#define tc_etm4_walk_mark nomem_walk_mark
#define tc_etm4_walk_as_new nomem_walk_as_new
#include "decoders/coresight/etm4_walk.c"
#undef malloc
#undef tc_grow

#include "tests/unit/tc_test.h"

static int test_grow(void **v, size_t *cap, size_t need, size_t size)
{
	if ((fail_out && size == sizeof(struct out)) || (fail_keys && size == sizeof(struct key)))
		return -1;
	return tc_grow(v, cap, need, size);
}

static void *test_malloc(size_t n)
{
	/* the P0 stacks start with 64 elements (made at creation): 128 is their growth */
	if (fail_p0 && n == 128 * sizeof(struct p0))
		return NULL;
	return malloc(n);
}

struct seen {
	int ranges, errors, no_sync;
	uint64_t err_idx;
	const char *err_text;
};

/* The code on_mem gives: nops instructions, then a branch back to 0x1000. */
static uint32_t nops = 1;

static void on_elem(void *ctx, uint64_t idx, const ocsd_generic_trace_elem *el)
{
	struct seen *s = ctx;

	(void)idx;
	if (el->elem_type == OCSD_GEN_TRC_ELEM_INSTR_RANGE) {
		s->ranges++;
		CHECK(el->st_addr == 0x1000 && el->en_addr == 0x1004 + 4 * nops &&
		      el->num_instr_range == nops + 1);
	} else if (el->elem_type == OCSD_GEN_TRC_ELEM_NO_SYNC) {
		s->no_sync++;
	}
}

/* nop (nops of them); b 0x1000 */
static uint32_t on_mem(void *ctx, uint64_t addr, uint32_t len, uint8_t *buf)
{
	(void)ctx;
	for (uint32_t i = 0; i < len; i += 4) {
		uint32_t k = (uint32_t)((addr + i - 0x1000) / 4 % (nops + 1)),
			 op = k == nops ? 0x14000000 | ((0u - nops) & 0x3ffffff) : 0xd503201f;

		memcpy(buf + i, &op, 4);
	}
	return addr >= 0x1000 && addr < 0x2000 ? len : 0;
}

static void on_err(void *ctx, uint64_t idx, const char *text)
{
	struct seen *s = ctx;

	s->errors++;
	s->err_idx = idx;
	s->err_text = text;
}

static uint64_t pos;

static int pkt(struct tc_etm4_walk *w, ocsd_etmv4_i_pkt p)
{
	return nomem_walk_op(w, OCSD_OP_DATA, pos++, &p);
}

static int sync_at_1000(struct tc_etm4_walk *w)
{
	ocsd_etmv4_i_pkt a = { .type = ETM4_PKT_I_ADDR_CTXT_L_64IS0, .v_addr.val = 0x1000 };
	int rc = 0;

	a.context.SF = 1;
	a.context.updated = 1;
	a.context.updated_c = 1;
	a.context.ctxtID = 42;
	rc |= pkt(w, (ocsd_etmv4_i_pkt){ .type = ETM4_PKT_I_ASYNC });
	rc |= pkt(w, (ocsd_etmv4_i_pkt){ .type = ETM4_PKT_I_TRACE_INFO });
	rc |= pkt(w, a);
	return rc;
}

static int atom(struct tc_etm4_walk *w)
{
	return pkt(w, (ocsd_etmv4_i_pkt){ .type = ETM4_PKT_I_ATOM_F1,
					  .atom = { .En_bits = 1, .num = 1 } });
}

static int commit(struct tc_etm4_walk *w, uint32_t n)
{
	return pkt(w, (ocsd_etmv4_i_pkt){ .type = ETM4_PKT_I_COMMIT, .commit_elements = n });
}

static struct tc_etm4_walk *new_walk(struct seen *s, uint32_t max_spec)
{
	static struct tc_etm_mem_ctx mctx = { .context_id = -1, .vmid = -1, .el = -1,
					      .secure = -1 };
	struct tc_etm4_walk_cfg cfg = { .trace_id = 0x10, .max_spec = max_spec };

	memset(s, 0, sizeof(*s));
	pos = 0;
	return nomem_walk_new(&cfg, on_elem, on_mem, on_err, s, &mctx);
}

/* Memory back: resynchronised, ranges again, no more errors. */
static void recovers(struct tc_etm4_walk *w, struct seen *s, int errors, bool commits)
{
	int ranges = s->ranges;

	fail_out = fail_keys = fail_p0 = 0;
	CHECK_INT(sync_at_1000(w), 0);
	for (int i = 0; i < 3; i++)
		CHECK_INT(atom(w), 0);
	if (commits)			/* else each atom committed itself (MAXSPEC 0) */
		CHECK_INT(commit(w, 3), 0);
	CHECK_INT(s->ranges, ranges + 3);
	CHECK_INT(s->errors, errors);
	CHECK(s->no_sync >= 1);		/* the reset's */
}

TEST(walk_out_of_memory_for_elements)
{
	struct seen s;
	struct tc_etm4_walk *w = new_walk(&s, 0);

	CHECK(w != NULL);
	fail_out = 1;			/* the very first element (NO_SYNC) finds no room */
	CHECK_INT(pkt(w, (ocsd_etmv4_i_pkt){ .type = ETM4_PKT_I_ASYNC }), -1);
	CHECK_INT(s.errors, 1);
	CHECK_INT(s.err_idx, 0);
	CHECK(s.err_text && strstr(s.err_text, "out of memory"));
	CHECK_INT(nomem_walk_nomem(w), 1);
	recovers(w, &s, 1, false);
	CHECK_INT(nomem_walk_nomem(w), 1);
	nomem_walk_free(w);
}

TEST(walk_out_of_memory_for_memory_contexts)
{
	struct seen s;
	struct tc_etm4_walk *w = new_walk(&s, 0);

	CHECK(w != NULL);
	CHECK_INT(sync_at_1000(w), 0);
	fail_keys = 1;			/* the first walk records its memory context */
	CHECK_INT(atom(w), -1);
	CHECK_INT(s.errors, 1);
	CHECK_INT(s.err_idx, 3);
	CHECK_INT(s.ranges, 0);
	recovers(w, &s, 1, false);
	CHECK_INT(s.no_sync, 2);	/* the first, then the reset's */
	nomem_walk_free(w);
}

TEST(walk_out_of_memory_for_p0_elements)
{
	struct seen s;
	struct tc_etm4_walk *w = new_walk(&s, 1000);	/* nothing commits by itself */
	int rc = 0, n;

	CHECK(w != NULL);
	CHECK_INT(sync_at_1000(w), 0);	/* the context and the address: 2 P0 elements */
	fail_p0 = 1;
	for (n = 0; n < 100 && !rc; n++)
		rc = atom(w);
	CHECK_INT(rc, -1);
	CHECK_INT(n, 63);		/* the 65th P0 element found the stack full */
	CHECK_INT(s.errors, 1);
	CHECK_INT(s.ranges, 0);
	recovers(w, &s, 1, true);
	CHECK_INT(s.no_sync, 2);
	nomem_walk_free(w);
}

/* A walk's block table (the walks of the process share a pool of them) holds nothing of the
 * walk that had it before: other code at the same address, the same memory context. */
TEST(walk_block_table_taken_again_is_empty)
{
	struct seen s;
	struct tc_etm4_walk *w = new_walk(&s, 0);

	CHECK(w != NULL);
	CHECK_INT(sync_at_1000(w), 0);
	for (int i = 0; i < 3; i++)
		CHECK_INT(atom(w), 0);
	CHECK_INT(s.ranges, 3);
	nomem_walk_free(w);
	nops = 2;			/* nop; nop; b 0x1000 */
	w = new_walk(&s, 0);
	CHECK(w != NULL);
	CHECK_INT(sync_at_1000(w), 0);
	for (int i = 0; i < 3; i++)
		CHECK_INT(atom(w), 0);
	CHECK_INT(s.ranges, 3);		/* each 0x1000-0x100c (on_elem), none a block kept */
	nomem_walk_free(w);
	nops = 1;
}
