/* qemu exec log to blocks; see qemu_exec.h. qemu's aarch64 translator ends a TB at every
 * branch, at exception-generating and some hint instructions, at a page end, or after 512
 * instructions; only branches (and ISB) are ETM waypoints. So the next TB either continues
 * the current block right after such a non-waypoint end, or is where the waypoint went. */
#include "lib/emulate/qemu_exec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/isa/a64.h"

#define PAGE		4096u
#define TB_MAX_INSNS	512
#define WP_SCAN_MAX	(1u << 16)	/* instructions looked at past a TB end for a waypoint */
#define CACHE_MIN	1024

int tc_qemu_exec_parse_line(const char *line, unsigned *cpu, uint64_t *pc)
{
	const char *p;
	unsigned long long v;
	unsigned n;

	if (sscanf(line, "Trace %u:", &n) != 1)
		return 0;
	p = strchr(line, '[');
	if (!p)
		return 0;
	p = strchr(p, '/');	/* [TB flags/PC/cflags/...] */
	if (!p || sscanf(p + 1, "%llx", &v) != 1)
		return 0;
	*pc = v;
	if (cpu)
		*cpu = n;
	return 1;
}

/* Where a scan from some address stopped. */
struct stop {
	uint64_t from, at, target;
	enum tc_a64_class cls;	/* OTHER: page end or TB size limit */
	bool ok;		/* false: code could not be read */
};

struct tc_qemu_exec {
	tc_qexec_read_fn rd;
	tc_qexec_block_fn fn;
	void *ctx;
	bool have;
	uint64_t cur;		/* start of the block being executed */
	uint64_t tb;		/* start of the last TB fed */
	struct stop *cache;	/* TB-end scans by start address (open addressing) */
	size_t cache_n, cache_used;
	struct tc_qemu_exec_stats st;
};

struct tc_qemu_exec *tc_qemu_exec_new(tc_qexec_read_fn rd, tc_qexec_block_fn fn, void *ctx,
			      struct tc_err *e)
{
	struct tc_qemu_exec *q = calloc(1, sizeof(*q));

	if (q)
		q->cache = calloc(CACHE_MIN, sizeof(*q->cache));
	if (!q || !q->cache) {
		free(q);
		tc_err_set(e, ENOMEM, "out of memory for the exec log reader");
		return NULL;
	}
	q->cache_n = CACHE_MIN;
	q->rd = rd;
	q->fn = fn;
	q->ctx = ctx;
	return q;
}

void tc_qemu_exec_free(struct tc_qemu_exec *q)
{
	if (!q)
		return;
	free(q->cache);
	free(q);
}

/* Walk from `from` to the first waypoint; with tb_rules, also stop where qemu ends a TB. */
static struct stop scan(struct tc_qemu_exec *q, uint64_t from, bool tb_rules)
{
	struct stop s = { .from = from };
	uint32_t insns[PAGE / 4];
	uint64_t a = from;
	unsigned n = 0, limit = tb_rules ? TB_MAX_INSNS : WP_SCAN_MAX;

	while (n < limit) {
		size_t want = PAGE - (a % PAGE), got = q->rd(q->ctx, a, insns, want);

		if (got < 4)
			return s;
		for (size_t k = 0; k < got / 4 && n < limit; k++, n++, a += 4) {
			s.cls = tc_a64_classify(insns[k], a, &s.target);
			s.at = a;
			if (s.cls != TC_A64_OTHER && (tb_rules || s.cls != TC_A64_TB_END)) {
				s.ok = true;
				return s;
			}
			s.cls = TC_A64_OTHER;
			if (tb_rules && ((a + 4) % PAGE == 0 || n + 1 == limit)) {
				s.ok = true;
				return s;
			}
		}
		if (got < want)
			return s;
	}
	return s;
}

static uint64_t hash(uint64_t a)
{
	a ^= a >> 29;
	a *= 0xbf58476d1ce4e5b9ull;
	return a ^ (a >> 32);
}

static struct stop tb_scan(struct tc_qemu_exec *q, uint64_t from)
{
	size_t mask = q->cache_n - 1, i = hash(from) & mask;

	for (; q->cache[i].ok; i = (i + 1) & mask)
		if (q->cache[i].from == from)
			return q->cache[i];
	struct stop s = scan(q, from, true);

	if (!s.ok)
		return s;
	q->cache[i] = s;
	if (++q->cache_used * 2 > q->cache_n) {
		struct stop *old = q->cache, *nc = calloc(q->cache_n * 2, sizeof(*nc));
		size_t on = q->cache_n;

		if (!nc)	/* keep working uncached */
			return s;
		q->cache = nc;
		q->cache_n *= 2;
		for (size_t k = 0; k < on; k++) {
			if (!old[k].ok)
				continue;
			size_t j = hash(old[k].from) & (q->cache_n - 1);

			while (q->cache[j].ok)
				j = (j + 1) & (q->cache_n - 1);
			q->cache[j] = old[k];
		}
		free(old);
	}
	return s;
}

static int deliver(struct tc_qemu_exec *q, const struct tc_etm4_enc_block *b, struct tc_err *e)
{
	q->st.blocks++;
	return q->fn(q->ctx, b, e);
}

/* The current block ends without an explained waypoint; the next one starts at pc. */
static int gap(struct tc_qemu_exec *q, uint64_t last, uint64_t pc, struct tc_err *e)
{
	struct tc_etm4_enc_block b = { .start = q->cur, .last = last, .next = last + 4,
				   .end = TC_ETM4_END_NONE };

	q->st.gaps++;
	q->cur = q->tb = pc;
	return deliver(q, &b, e);
}

/* Can the waypoint at s lead to pc? */
static bool outcome(const struct stop *s, uint64_t pc)
{
	switch (s->cls) {
	case TC_A64_BRANCH:
		return pc == s->target;
	case TC_A64_COND:
		return pc == s->target || pc == s->at + 4;
	case TC_A64_INDIRECT:
		return true;
	case TC_A64_ISB:
		return pc == s->at + 4;
	default:
		return false;
	}
}

int tc_qemu_exec_tb(struct tc_qemu_exec *q, uint64_t pc, struct tc_err *e)
{
	q->st.tbs++;
	if (!q->have) {
		q->have = true;
		q->cur = q->tb = pc;
		return 0;
	}
	struct stop s = tb_scan(q, q->tb);

	if (!s.ok)
		return gap(q, q->tb, pc, e);
	if (s.cls == TC_A64_OTHER || s.cls == TC_A64_TB_END) {
		if (pc == s.at + 4) {
			q->st.continuations++;
			q->tb = pc;
			return 0;
		}
		/* Not a plain continuation: the TB went on to a waypoint after all. */
		s = scan(q, s.at + 4, false);
		if (!s.ok)
			return gap(q, q->tb, pc, e);
	}

	struct tc_etm4_enc_block b = { .start = q->cur, .last = s.at, .next = pc };

	/* A TB qemu ended for a reason not modelled here: pc continues the block. */
	if (pc > q->tb && pc <= s.at && !outcome(&s, pc)) {
		q->st.continuations++;
		q->tb = pc;
		return 0;
	}
	switch (s.cls) {
	case TC_A64_BRANCH:
		if (pc != s.target)
			return gap(q, s.at, pc, e);
		b.end = TC_ETM4_END_TAKEN;
		break;
	case TC_A64_COND:
		if (pc == s.target)
			b.end = TC_ETM4_END_TAKEN;
		else if (pc == s.at + 4)
			b.end = TC_ETM4_END_NOT_TAKEN;
		else
			return gap(q, s.at, pc, e);
		break;
	case TC_A64_INDIRECT:
		b.end = TC_ETM4_END_INDIRECT;
		break;
	case TC_A64_ISB:
		if (pc != s.at + 4)
			return gap(q, s.at, pc, e);
		b.end = TC_ETM4_END_TAKEN;
		break;
	default:
		return gap(q, s.at, pc, e);
	}
	q->cur = q->tb = pc;
	return deliver(q, &b, e);
}

bool tc_qemu_exec_last_tb_ends_at(struct tc_qemu_exec *q, uint64_t addr)
{
	struct stop s;

	if (!q->have)
		return false;
	s = tb_scan(q, q->tb);
	return s.ok && s.at == addr;
}

int tc_qemu_exec_end(struct tc_qemu_exec *q, struct tc_err *e)
{
	if (!q->have)
		return 0;
	struct stop s = tb_scan(q, q->tb);
	struct tc_etm4_enc_block b = { .start = q->cur, .last = s.ok ? s.at : q->tb,
				   .end = TC_ETM4_END_NONE };

	b.next = b.last + 4;
	q->have = false;
	return deliver(q, &b, e);
}

const struct tc_qemu_exec_stats *tc_qemu_exec_stats(const struct tc_qemu_exec *q)
{
	return &q->st;
}
