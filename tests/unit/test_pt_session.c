/* Intel PT session (decoders/intel_pt/pt_session.c) on perf.data written with lib/perfdata/perf_write, trace
 * from libipt's encoder: runs of the same code, each a PSB+ with its TSC.
 * 1. One per-CPU queue, runs at TSC 1000, 3000, 5000 and 6000. ITRACE_START puts pid 10 on
 *    the CPU from time 1 and pid 20 from 2000; pid 20 maps the code only at time 4000. So
 *    the thread and the address space must follow the trace's time: pid 10 decodes, pid 20
 *    first has no image, then decodes. (After the no_image pt_flow resumes at a later PSB:
 *    the run at 5000 is skipped.)
 * 2. Two CPUs, cpu 0's runs at 1000 and 5000, cpu 1's at 3000 and 7000, each CPU's trace in
 *    one or two AUXTRACE buffers, cpu 1's first in the file: the records come out in time
 *    order (perf's order), not in file or queue order. */
#include <inttypes.h>
#include <intel-pt.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decoders/intel_pt/pt_session.h"
#include "lib/perfdata/perf_write.h"
#include "tests/unit/pt_enc.h"
#include "tests/unit/tc_test.h"

#define PMU 8
#define BASE 0x7f0000000000ULL

struct got {
	struct tc_rec r[64];
	char text[64][160];
	size_t n;
};

static void collect(void *ctx, const struct tc_rec *r)
{
	struct got *g = ctx;

	if (g->n < 64) {
		g->r[g->n] = *r;
		snprintf(g->text[g->n], sizeof(g->text[0]), "%s", r->text ? r->text : "");
		g->r[g->n].name = g->r[g->n].text = NULL;
		g->n++;
	}
}

/* Per tsc: PSB, TSC, MODE.Exec 64, PSBEND, TIP.PGE at ip, TIP.PGD (the ret leaves). */
static int encode(uint8_t *buf, size_t cap, uint64_t ip, const uint64_t *tsc, size_t nt)
{
	struct pt_packet p[6 * 4];

	if (nt > 4)
		return -1;
	for (size_t i = 0; i < nt; i++) {
		struct pt_packet *q = &p[6 * i];

		q[0] = pkt(ppt_psb);
		q[1] = pkt(ppt_tsc);
		q[1].payload.tsc.tsc = tsc[i];
		q[2] = pkt(ppt_mode);
		q[2].payload.mode.leaf = pt_mol_exec;
		q[2].payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
		q[3] = pkt(ppt_psbend);
		q[4] = pkt(ppt_tip_pge);
		q[4].payload.ip.ipc = pt_ipc_sext_48;
		q[4].payload.ip.ip = ip;
		/* The ret leaves the traced code for 0x1000. */
		q[5] = pkt(ppt_tip_pgd);
		q[5].payload.ip.ipc = pt_ipc_sext_48;
		q[5].payload.ip.ip = 0x1000;
	}
	return encode_pt(buf, cap, p, 6 * nt);
}

/* A PIE whose tc_marker is straight-line code ending in ret: one range per run. */
static int build_prog(const char *dir, char *prog, size_t len, uint64_t *marker)
{
	char cmd[512];
	FILE *f;
	int ok;

	snprintf(prog, len, "%s/prog", dir);
	snprintf(cmd, sizeof(cmd), "printf 'int tc_marker(int x) { return x * 7 + 3; }\\n"
		 "int main(int c, char **v) { (void)v; return tc_marker(c); }\\n' >%s/p.c && "
		 "gcc -O1 -fPIE -pie -o %s %s/p.c", dir, prog, dir);
	if (system(cmd))
		return -1;
	snprintf(cmd, sizeof(cmd), "nm %s | awk '$3 == \"tc_marker\" { print $1 }'", prog);
	f = popen(cmd, "r");
	ok = f && fscanf(f, "%" SCNx64, marker) == 1;
	if (f)
		pclose(f);
	return ok && *marker > 0 && *marker < 0x10000 ? 0 : -1;
}

static void intel_pt_info(uint64_t *priv)
{
	priv[TC_IPT_PMU_TYPE] = PMU;
	priv[TC_IPT_TIME_SHIFT] = 0;	/* perf time == TSC */
	priv[TC_IPT_TIME_MULT] = 1;
	priv[TC_IPT_CAP_USER_TIME_ZERO] = 1;
	priv[TC_IPT_TSC_BIT] = 1 << 10;
	priv[TC_IPT_HAVE_SCHED_SWITCH] = 3;
	priv[TC_IPT_PER_CPU_MMAPS] = 1;
	priv[TC_IPT_TSC_CTC_D] = 1;
}

/* --jobs and a lanes' writer for decode_file (the queues then format on lanes). */
static unsigned use_jobs;
static const struct tc_jobs_writer *use_writer;

/* Every record of data's Intel PT decode into g; -1 if the session fails. */
static int decode_file(const char *data, struct got *g, struct tc_pt_session **sp)
{
	struct tc_perf_data *pd = NULL;
	struct tc_perf_data_record r;
	struct tc_err e = { 0 };
	int n, ret = -1;

	*sp = NULL;
	if (tc_perf_data_open(&pd, data, &e))
		return -1;
	*sp = tc_pt_session_new(&(struct tc_pt_session_opts){ .emit = collect, .ctx = g,
							    .jobs = use_jobs, .writer = use_writer },
				&e);
	if (!*sp)
		goto out;
	while ((n = tc_perf_data_next(pd, &r, &e)) > 0)
		if (tc_pt_session_record(*sp, pd, &r, &e))
			goto out;
	if (n == 0 && tc_pt_session_is_intel_pt(*sp) && !tc_pt_session_decode(*sp, pd, &e))
		ret = 0;
out:
	if (ret)
		printf("#   %s\n", e.msg);
	tc_perf_data_close(pd);
	return ret;
}

TEST(thread_and_images_follow_trace_time)
{
	char dir[] = "/tmp/tc-pts-XXXXXX", prog[128], data[128], cmd[512];
	struct perf_event_attr a = { .type = PMU, .size = sizeof(a), .config = 1 << 10,
		.sample_period = 1, .sample_id_all = 1,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_IDENTIFIER };
	uint64_t id = 1, priv[TC_IPT_PRIV_MAX] = { 0 }, marker = 0, tsc[4] = { 1000, 3000, 5000, 6000 };
	struct tc_perf_write_sid sid = { .id = 1, .cpu = 0 };
	struct tc_perf_write_mmap2 mm = { .start = BASE,
					  .len = 0x10000,
					  .prot = PROT_READ | PROT_EXEC,
					  .flags = MAP_PRIVATE,
					  .filename = prog };
	struct tc_pt_session *s = NULL;
	struct got g = { .n = 0 };
	struct tc_err e = { 0 };
	struct tc_perf_write *w;
	uint8_t trace[512];
	int n, ok;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(data, sizeof(data), "%s/pt.data", dir);
	ok = !build_prog(dir, prog, sizeof(prog), &marker);
	CHECK(ok);
	n = ok ? encode(trace, sizeof(trace), BASE + marker, tsc, 4) : -1;
	CHECK(n > 0);
	if (!ok || n <= 0)
		goto out;

	intel_pt_info(priv);
	CHECK_INT(tc_perf_write_open(&w, data, &e), 0);
	ok = !tc_perf_write_add_attr(w, &a, &id, 1, &e) &&
	     !tc_perf_write_auxtrace_info_intel_pt(w, priv, NULL, &e) &&
	     (sid.pid = sid.tid = 10, sid.time = 1, mm.pid = mm.tid = 10,
	      !tc_perf_write_mmap2(w, &mm, &sid, &e)) &&
	     !tc_perf_write_itrace_start(w, 10, 10, &sid, &e) &&
	     (sid.pid = sid.tid = 20, sid.time = 2000,
	      !tc_perf_write_itrace_start(w, 20, 20, &sid, &e)) &&
	     (sid.time = 4000, mm.pid = mm.tid = 20, !tc_perf_write_mmap2(w, &mm, &sid, &e)) &&
	     !tc_perf_write_auxtrace(w, trace, (size_t)n, 0, 0, 0, (uint32_t)-1, 0, &e);
	CHECK(ok);
	CHECK_INT(tc_perf_write_close(w, &e), 0);
	if (!ok)
		goto out;

	CHECK_INT(decode_file(data, &g, &s), 0);
	if (!s)
		goto out;
	{
		size_t ranges10 = 0, ranges20 = 0, nomap20 = 0, other = 0;

		for (size_t i = 0; i < g.n; i++) {
			const struct tc_rec *x = &g.r[i];

			if (x->type == TC_REC_RANGE && x->tid == 10 && x->start == BASE + marker &&
			    x->last_type == TC_INSN_RET)
				ranges10++;
			else if (x->type == TC_REC_RANGE && x->tid == 20 && x->pid == 20 &&
				 x->start == BASE + marker && x->last_type == TC_INSN_RET)
				ranges20++;
			else if (x->type == TC_REC_ADDR_NACC && x->tid == 20 && x->pid == 20 &&
				 x->start == BASE + marker)
				nomap20++;
			else {
				other++;
				printf("#   unexpected %s tid %d 0x%" PRIx64 " 0x%" PRIx64 " at 0x%"
				       PRIx64 " %s\n", tc_rec_type_name(x->type), x->tid, x->start,
				       x->end, x->offset, g.text[i]);
			}
		}
		CHECK_INT(ranges10, 1);
		CHECK_INT(nomap20, 1);
		CHECK_INT(ranges20, 1);
		CHECK_INT(other, 0);
		CHECK_INT(tc_pt_session_stats(s)->nomap, 1);
		CHECK(tc_pt_session_stats(s)->syncs >= 2);
		CHECK_INT(tc_pt_session_stats(s)->queues, 1);
	}
out:
	tc_pt_session_free(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
}

/* The CPUs of g's ranges and branches, in the order they came out: "0:r 1:b ...". */
static void order_of(const struct got *g, char *out, size_t len)
{
	size_t at = 0;

	out[0] = 0;
	for (size_t i = 0; i < g->n && at + 8 < len; i++)
		if (g->r[i].type == TC_REC_RANGE || g->r[i].type == TC_REC_BRANCH)
			at += (size_t)snprintf(out + at, len - at, "%s%d:%c", at ? " " : "",
					       g->r[i].cpu, g->r[i].type == TC_REC_RANGE ? 'r' : 'b');
}

/* cpu 0 runs the code at 1000 and 5000 in one AUXTRACE buffer, cpu 1 at 3000 and 7000 in
 * one buffer each (cpu 1's come first in the file). */
static int two_cpus(const char *dir, const char *prog, uint64_t marker, struct got *g,
		    struct tc_pt_session_stats *st)
{
	struct perf_event_attr a = { .type = PMU, .size = sizeof(a), .config = 1 << 10,
		.sample_period = 1, .sample_id_all = 1,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_IDENTIFIER };
	uint64_t id[2] = { 1, 2 }, priv[TC_IPT_PRIV_MAX] = { 0 };
	static const uint64_t tsc0[2] = { 1000, 5000 }, tsc1[2] = { 3000, 7000 };
	struct tc_perf_write_sid sid = { .id = 1, .pid = 10, .tid = 10, .time = 1 };
	struct tc_perf_write_mmap2 mm = { .start = BASE,
					  .len = 0x10000,
					  .prot = PROT_READ | PROT_EXEC,
					  .flags = MAP_PRIVATE,
					  .filename = prog,
					  .pid = 10,
					  .tid = 10 };
	/* the buffers in file order: cpu 1's two, then cpu 0's */
	struct { uint8_t b[256]; int n; uint32_t cpu; uint64_t off; } buf[3] = {
		{ .cpu = 1, .off = 0 }, { .cpu = 1, .off = 128 }, { .cpu = 0, .off = 0 } };
	int ok;
	char data[128];
	struct tc_pt_session *s = NULL;
	struct tc_err e = { 0 };
	struct tc_perf_write *w;

	buf[0].n = encode(buf[0].b, sizeof(buf[0].b), BASE + marker, &tsc1[0], 1);
	buf[1].n = encode(buf[1].b, sizeof(buf[1].b), BASE + marker, &tsc1[1], 1);
	buf[2].n = encode(buf[2].b, sizeof(buf[2].b), BASE + marker, tsc0, 2);
	if (buf[0].n <= 0 || buf[1].n <= 0 || buf[2].n <= 0)
		return -1;
	snprintf(data, sizeof(data), "%s/two.data", dir);
	intel_pt_info(priv);
	if (tc_perf_write_open(&w, data, &e))
		return -1;
	ok = !tc_perf_write_add_attr(w, &a, id, 2, &e) &&
	     !tc_perf_write_auxtrace_info_intel_pt(w, priv, NULL, &e) &&
	     !tc_perf_write_mmap2(w, &mm, &sid, &e);
	for (int c = 0; c < 2 && ok; c++) {
		sid.id = id[c];
		sid.cpu = (uint32_t)c;
		ok = !tc_perf_write_itrace_start(w, 10, 10, &sid, &e);
	}
	for (int i = 0; i < 3 && ok; i++)
		ok = !tc_perf_write_auxtrace(w, buf[i].b, (size_t)buf[i].n, buf[i].off, 0,
					     buf[i].cpu, (uint32_t)-1, buf[i].cpu, &e);
	if (tc_perf_write_close(w, &e) || !ok)
		return -1;
	ok = !decode_file(data, g, &s);
	if (ok)
		*st = *tc_pt_session_stats(s);
	tc_pt_session_free(s);
	return ok ? 0 : -1;
}

TEST(queues_of_two_cpus_interleave_by_time)
{
	char dir[] = "/tmp/tc-pts-XXXXXX", prog[128], cmd[512], order[256];
	struct got g = { .n = 0 };
	struct tc_pt_session_stats st = { 0 };
	uint64_t marker = 0;

	CHECK(mkdtemp(dir) != NULL);
	CHECK_INT(build_prog(dir, prog, sizeof(prog), &marker), 0);
	CHECK_INT(two_cpus(dir, prog, marker, &g, &st), 0);
	order_of(&g, order, sizeof(order));
	/* in time order; file order and queue order are both 1 1 0 0 */
	CHECK_STR(order, "0:r 1:r 0:r 1:r");
	CHECK_INT(st.queues, 2);
	CHECK_INT(st.ranges, 4);
	CHECK_INT(st.errors + st.nomap, 0);
	for (size_t i = 0; i < g.n; i++)
		CHECK(g.r[i].type != TC_REC_RANGE || (g.r[i].tid == 10 &&
						     g.r[i].start == BASE + marker));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
}

/* A lanes' writer (decoders/jobs.h) that writes a record as order_of does and hands its
 * bytes over one at a time: a lane must take until take gives nothing, and put them in the
 * one-thread order. */
struct fake_lane {
	char buf[1024];
	size_t len, rd;
};

static char put_text[256];
static size_t put_len;

static bool fake_usable(void *ctx)
{
	(void)ctx;
	return true;
}

static void *fake_open(void *ctx, int (*sym)(void *, int, uint64_t, struct tc_images_sym *),
		       void *sym_ctx, const uint64_t *space)
{
	(void)ctx, (void)sym, (void)sym_ctx, (void)space;
	return calloc(1, sizeof(struct fake_lane));
}

static void fake_write(void *w, const struct tc_rec *r)
{
	struct fake_lane *l = w;

	if ((r->type == TC_REC_RANGE || r->type == TC_REC_BRANCH) && l->len + 8 < sizeof(l->buf))
		l->len += (size_t)snprintf(l->buf + l->len, sizeof(l->buf) - l->len, " %d:%c",
					   r->cpu, r->type == TC_REC_RANGE ? 'r' : 'b');
}

static size_t fake_take(void *w, const char **bytes, void **block)
{
	struct fake_lane *l = w;

	*block = NULL;
	if (l->rd == l->len)
		return 0;
	*bytes = l->buf + l->rd++;	/* the buffer only grows: the bytes stay put */
	return 1;
}

static void fake_close(void *w)
{
	free(w);
}

static void fake_put(void *ctx, const char *bytes, size_t n, uint64_t offset, void *block)
{
	(void)ctx, (void)offset, (void)block;
	if (put_len + n < sizeof(put_text)) {
		memcpy(put_text + put_len, bytes, n);
		put_len += n;
	}
}

TEST(queues_formatted_on_lanes_come_out_in_time_order)
{
	static const struct tc_jobs_writer fw = { .usable = fake_usable, .open = fake_open,
		.write = fake_write, .take = fake_take, .close = fake_close, .put = fake_put };
	char dir[] = "/tmp/tc-pts-XXXXXX", prog[128], cmd[512];
	struct got g = { .n = 0 };
	struct tc_pt_session_stats st = { 0 };
	uint64_t marker = 0;

	CHECK(mkdtemp(dir) != NULL);
	CHECK_INT(build_prog(dir, prog, sizeof(prog), &marker), 0);
	use_jobs = 2;
	use_writer = &fw;
	CHECK_INT(two_cpus(dir, prog, marker, &g, &st), 0);
	use_jobs = 0;
	use_writer = NULL;
	put_text[put_len] = 0;
	CHECK_STR(put_text, " 0:r 1:r 0:r 1:r");
	CHECK_INT(st.ranges, 4);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
}

/* ---- --jobs on one queue without time: segments cut at PSBs (pt_segment.c) ---- */

/* A writer that writes each range and branch with its addresses, for the comparison with
 * the records of one thread. */
struct seg_lane {
	char buf[16384];
	size_t len, rd;
};

static char seg_text[65536];
static size_t seg_len;

static void *seg_open(void *ctx, int (*sym)(void *, int, uint64_t, struct tc_images_sym *),
		      void *sym_ctx, const uint64_t *space)
{
	(void)ctx, (void)sym, (void)sym_ctx, (void)space;
	return calloc(1, sizeof(struct seg_lane));
}

static size_t seg_rec(char *b, size_t cap, const struct tc_rec *r)
{
	uint64_t t = r->has_time ? r->time : 0;

	if (r->type == TC_REC_RANGE)
		return (size_t)snprintf(b, cap, " r%" PRIx64 "-%" PRIx64 "/%u@%" PRIx64 "t%" PRIx64,
					r->start, r->end, r->insns, r->offset, t);
	if (r->type == TC_REC_BRANCH)
		return (size_t)snprintf(b, cap, " b%" PRIx64 ">%" PRIx64 "@%" PRIx64 "t%" PRIx64,
					r->start, r->end, r->offset, t);
	return (size_t)snprintf(b, cap, " %dt%" PRIx64, (int)r->type, t);
}

static void seg_write(void *w, const struct tc_rec *r)
{
	struct seg_lane *l = w;

	if (l->len + 80 < sizeof(l->buf))
		l->len += seg_rec(l->buf + l->len, sizeof(l->buf) - l->len, r);
}

static size_t seg_take(void *w, const char **bytes, void **block)
{
	struct seg_lane *l = w;
	size_t n = l->len - l->rd;

	*block = NULL;
	*bytes = l->buf + l->rd;
	l->rd = l->len;
	return n;
}

static void seg_put(void *ctx, const char *bytes, size_t n, uint64_t offset, void *block)
{
	(void)ctx, (void)offset, (void)block;
	if (seg_len + n < sizeof(seg_text)) {
		memcpy(seg_text + seg_len, bytes, n);
		seg_len += n;
	}
}

static char one_text[65536];
static size_t one_len;

static void one_collect(void *ctx, const struct tc_rec *r)
{
	(void)ctx;
	if (one_len + 80 < sizeof(one_text))
		one_len += seg_rec(one_text + one_len, sizeof(one_text) - one_len, r);
}

#define SEGS 9
#define SEG_PAD 4000	/* PADs after each PSB+: a segment each (segment_bytes) */
#define SEG_TSC 0x100000000ULL	/* timed: segment s's PSB+ has TSC SEG_TSC + s * SEG_TICKS * 2 */
#define SEG_TICKS 0x800

/* One thread's trace: tc_caller calls tc_marker (a compressed return) and returns with a
 * TIP to itself, over and over; a PSB+ every SEG_PAD bytes, with its FUP at tc_caller,
 * except the one at underflow, at tc_marker: the call before it, the return after (a
 * segment from there pops an empty stack). timed: each PSB+ with a TSC and a TMA (the
 * CTC at 2 TSC ticks each, MTCs of every CTC tick), an MTC of the next tick right after
 * its PSBEND (the decoder's time then ahead of the PSB+'s) and one more after the TIP. */
static int seg_trace(uint8_t *buf, size_t cap, uint64_t caller, uint64_t marker, int underflow,
		     bool timed)
{
	struct pt_packet *p = calloc(SEGS * (SEG_PAD + 16), sizeof(*p));
	size_t n = 0;
	int ret;

	if (!p)
		return -1;
	for (int s = 0; s < SEGS; s++) {
		uint32_t ctc = (uint32_t)s * SEG_TICKS;

		p[n++] = pkt(ppt_psb);
		if (timed) {
			p[n] = pkt(ppt_tsc);
			p[n++].payload.tsc.tsc = SEG_TSC + 2ULL * ctc;
			p[n] = pkt(ppt_tma);
			p[n++].payload.tma.ctc = (uint16_t)ctc;
		}
		p[n] = pkt(ppt_mode);
		p[n].payload.mode.leaf = pt_mol_exec;
		p[n++].payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
		if (s) {
			p[n] = pkt(ppt_fup);
			p[n].payload.ip.ipc = pt_ipc_sext_48;
			p[n++].payload.ip.ip = s == underflow ? marker : caller;
		}
		p[n++] = pkt(ppt_psbend);
		if (timed) {
			p[n] = pkt(ppt_mtc);
			p[n++].payload.mtc.ctc = (uint8_t)(ctc + 1);
		}
		if (!s) {
			p[n] = pkt(ppt_tip_pge);
			p[n].payload.ip.ipc = pt_ipc_sext_48;
			p[n++].payload.ip.ip = caller;
		}
		p[n] = pkt(ppt_tnt_8);	/* tc_marker's ret: taken */
		p[n].payload.tnt.bit_size = 1;
		p[n++].payload.tnt.payload = 1;
		p[n] = pkt(ppt_tip);	/* tc_caller's ret: to tc_caller again */
		p[n].payload.ip.ipc = pt_ipc_sext_48;
		p[n++].payload.ip.ip = caller;
		if (timed) {
			p[n] = pkt(ppt_mtc);
			p[n++].payload.mtc.ctc = (uint8_t)(ctc + 2);
		}
		for (int k = 0; k < SEG_PAD; k++)
			p[n++] = pkt(ppt_pad);
	}
	p[n] = pkt(ppt_tip_pgd);
	p[n].payload.ip.ipc = pt_ipc_sext_48;
	p[n++].payload.ip.ip = 0x1000;
	ret = encode_pt(buf, cap, p, n);
	free(p);
	return ret;
}

/* timed: with time, as perf records by default (tsc, mtc); late: prog2 mapped over prog at
 * the time of segment late's PSB+ and a tick (side-band that comes while a segment runs):
 * tc_marker's instructions there are others, its counts in the records after too. */
static int seg_file(const char *dir, const char *prog, const char *prog2, uint64_t caller,
		    uint64_t marker, int underflow, bool timed, int late, char *data, size_t dlen)
{
	struct perf_event_attr a = { .type = PMU, .size = sizeof(a), .sample_period = 1,
		.sample_id_all = 1, .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER };
	uint64_t id[1] = { 1 }, priv[TC_IPT_PRIV_MAX] = { 0 };
	struct tc_perf_write_sid sid = { .id = 1, .pid = 10, .tid = 10 };
	struct tc_perf_write_sid sid2 = { .id = 1, .pid = 10, .tid = 10,
		.time = SEG_TSC + 2ULL * ((uint64_t)late * SEG_TICKS + 1) };
	struct tc_perf_write_mmap2 mm = { .start = BASE, .len = 0x10000,
		.prot = PROT_READ | PROT_EXEC, .flags = MAP_PRIVATE, .filename = prog,
		.pid = 10, .tid = 10 };
	struct tc_perf_write_mmap2 mm2 = mm;
	size_t cap = SEGS * (SEG_PAD + 96);
	uint8_t *buf = malloc(cap);
	struct tc_perf_write *w;
	struct tc_err e = { 0 };
	int n, ok;

	if (!buf)
		return -1;
	n = seg_trace(buf, cap, BASE + caller, BASE + marker, underflow, timed);
	snprintf(data, dlen, "%s/seg%d%c%d.data", dir, underflow, timed ? 't' : 'n', late);
	intel_pt_info(priv);
	priv[TC_IPT_PER_CPU_MMAPS] = 0;
	if (timed) {
		a.config = (1 << 10) | (1 << 9);	/* tsc, mtc; mtc_period 0 */
		a.sample_type |= PERF_SAMPLE_TIME;
		priv[TC_IPT_MTC_BIT] = 1 << 9;
		priv[TC_IPT_MTC_FREQ_BITS] = 0xfULL << 14;
		priv[TC_IPT_TSC_CTC_N] = 2;
	}
	mm2.filename = prog2;
	ok = n > 0 && !tc_perf_write_open(&w, data, &e);
	if (ok) {
		ok = !tc_perf_write_add_attr(w, &a, id, 1, &e) &&
		     !tc_perf_write_auxtrace_info_intel_pt(w, priv, NULL, &e) &&
		     !tc_perf_write_mmap2(w, &mm, &sid, &e) &&
		     (!late || !tc_perf_write_mmap2(w, &mm2, &sid2, &e)) &&
		     !tc_perf_write_auxtrace(w, buf, (size_t)n, 0, 0, 0, 10, (uint32_t)-1, &e);
		ok = !tc_perf_write_close(w, &e) && ok;
	}
	free(buf);
	return ok ? 0 : -1;
}

/* data's records with one thread into one_text, with --jobs 2 on the writer into seg_text. */
/* seg_decode's --jobs 2: every segment decoded apart and joined (the joins' tests), or the
 * caller's thread decoding one in two itself (pt_segment.c's turns). */
static bool seg_workers_only = true;

static int seg_decode(const char *data, struct tc_pt_session_stats *st1,
		      struct tc_pt_session_stats *st2)
{
	static const struct tc_jobs_writer fw = { .usable = fake_usable, .open = seg_open,
		.write = seg_write, .take = seg_take, .close = fake_close, .put = seg_put };
	struct tc_pt_session_stats *st[2] = { st1, st2 };
	int ret = 0;

	one_len = seg_len = 0;
	for (int j = 0; j < 2 && !ret; j++) {
		struct tc_perf_data *pd = NULL;
		struct tc_perf_data_record r;
		struct tc_err e = { 0 };
		struct tc_pt_session *s = NULL;
		int n;

		ret = -1;
		if (tc_perf_data_open(&pd, data, &e))
			break;
		s = tc_pt_session_new(&(struct tc_pt_session_opts){ .emit = one_collect,
			.jobs = j ? 2 : 1, .writer = j ? &fw : NULL, .segment_bytes = SEG_PAD,
			.segment_workers_only = seg_workers_only },
			&e);
		while (s && (n = tc_perf_data_next(pd, &r, &e)) > 0)
			if (tc_pt_session_record(s, pd, &r, &e))
				break;
		if (s && n == 0 && !tc_pt_session_decode(s, pd, &e)) {
			*st[j] = *tc_pt_session_stats(s);
			ret = 0;
		}
		tc_pt_session_free(s);
		tc_perf_data_close(pd);
	}
	one_text[one_len] = seg_text[seg_len] = 0;
	return ret;
}

/* prog (in dir, made): a program whose tc_caller calls tc_marker; their offsets; prog2 the
 * same with tc_marker's instructions but its ret NOPs. -1 if they cannot be made. */
static int seg_prog(const char *dir, char *prog, char *prog2, size_t plen, uint64_t *caller,
		    uint64_t *marker)
{
	char cmd[768];
	FILE *f;
	int n;

	snprintf(prog, plen, "%s/prog", dir);
	snprintf(cmd, sizeof(cmd), "printf '__attribute__((noinline)) int tc_marker(int x) "
		 "{ return x * 7 + 3; }\\n__attribute__((noinline)) int tc_caller(int x) "
		 "{ return tc_marker(x) + 1; }\\nint main(int c, char **v) { (void)v; "
		 "return tc_caller(c); }\\n' >%s/p.c && gcc -O1 -fcf-protection=none -fPIE -pie "
		 "-o %s %s/p.c", dir, prog, dir);
	if (system(cmd))
		return -1;
	snprintf(cmd, sizeof(cmd), "nm %s | awk '$3 == \"tc_marker\" { m = $1 } "
		 "$3 == \"tc_caller\" { c = $1 } END { print c, m }'", prog);
	if (!(f = popen(cmd, "r")))
		return -1;
	n = fscanf(f, "%" SCNx64 " %" SCNx64, caller, marker);
	pclose(f);
	if (n != 2 || !*caller || *caller >= 0x10000 || !*marker || *marker >= 0x10000)
		return -1;
	/* (PIE: its code's file offsets are its addresses) */
	snprintf(prog2, plen, "%s/prog2", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s && n=$(nm -S %s | awk '$4 == \"tc_marker\" "
		 "{ print $2 }') && n=$((0x$n - 1)) && [ \"$n\" -gt 1 ] && "
		 "head -c \"$n\" /dev/zero | tr '\\0' '\\220' | "
		 "dd of=%s bs=1 seek=%" PRIu64 " conv=notrunc 2>/dev/null", prog, prog2, prog,
		 prog2, *marker);
	return system(cmd) ? -1 : 0;
}

/* seg_decode's two decodes (a: one thread, b: --jobs 2) came out the same, b in segments
 * (all but the first taken or decoded again in order), none of the queue again. */
static void seg_check_same(const struct tc_pt_session_stats *a,
			   const struct tc_pt_session_stats *b)
{
	CHECK(one_len > 100);
	CHECK_STR(seg_text, one_text);
	CHECK_INT(b->insns, a->insns);
	CHECK_INT(b->ranges, a->ranges);
	CHECK_INT(b->branches, a->branches);
	CHECK_INT(b->syncs, a->syncs);
	CHECK_INT(a->segments + a->segments_redone + a->segments_here, 0);
	CHECK_INT(b->segments + b->segments_redone + b->segments_here, SEGS - 1);
	CHECK_INT(b->queues_redone, 0);
}

/* data decoded again with the caller's turns (pt_segment.c: with --jobs 2 it decodes one
 * segment in two itself as the true flow, from where the one before was joined): the same,
 * 4 of the 8 segments after the first decoded so. */
static void seg_check_turns(const char *data)
{
	struct tc_pt_session_stats a = { 0 }, b = { 0 };

	seg_workers_only = false;
	CHECK_INT(seg_decode(data, &a, &b), 0);
	seg_check_same(&a, &b);
	CHECK_INT(b.segments_here, (SEGS - 1) / 2);
	seg_workers_only = true;
}

TEST(one_queue_cut_at_psbs_comes_out_as_with_one_thread)
{
	char dir[] = "/tmp/tc-pts-XXXXXX", prog[128], prog2[128], cmd[768], data[160];
	uint64_t caller = 0, marker = 0;
	struct tc_pt_session_stats a = { 0 }, b = { 0 };
	uint64_t redone;

	CHECK(mkdtemp(dir) != NULL);
	CHECK_INT(seg_prog(dir, prog, prog2, sizeof(prog), &caller, &marker), 0);

	/* every PSB+ at tc_caller: the segments after the first few (whose marks of libipt's
	 * block cache were not all known when they began) are taken */
	CHECK_INT(seg_file(dir, prog, prog2, caller, marker, -1, false, 0, data, sizeof(data)), 0);
	CHECK_INT(seg_decode(data, &a, &b), 0);
	seg_check_same(&a, &b);
	CHECK(b.segments >= 2);
	redone = b.segments_redone;
	seg_check_turns(data);

	/* one PSB+ between a call and its (compressed) return: the segment from there pops
	 * an empty stack, is dropped and decoded again in order, the same */
	CHECK_INT(seg_file(dir, prog, prog2, caller, marker, SEGS - 2, false, 0, data, sizeof(data)), 0);
	CHECK_INT(seg_decode(data, &a, &b), 0);
	seg_check_same(&a, &b);
	CHECK_INT(b.segments_redone, redone + 1);	/* that one */
	seg_check_turns(data);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
}

/* With time (one queue of a thread, perf's default): each segment's time from its PSB+,
 * the flow before it at its PSB+'s or the decoder's (an MTC right after PSBEND), as one
 * thread gives them; side-band by time: a mapping that comes while a segment runs makes
 * that one the true flow's to decode, and those in flight are made again with it. */
TEST(one_queue_with_time_cut_at_psbs_comes_out_as_with_one_thread)
{
	char dir[] = "/tmp/tc-pts-XXXXXX", prog[128], prog2[128], cmd[768], data[160];
	uint64_t caller = 0, marker = 0;
	struct tc_pt_session_stats a = { 0 }, b = { 0 };

	CHECK(mkdtemp(dir) != NULL);
	CHECK_INT(seg_prog(dir, prog, prog2, sizeof(prog), &caller, &marker), 0);
	for (int late = 0; late <= 4; late += 4) {
		CHECK_INT(seg_file(dir, prog, prog2, caller, marker, -1, true, late, data, sizeof(data)),
			  0);
		CHECK_INT(seg_decode(data, &a, &b), 0);
		seg_check_same(&a, &b);
		CHECK(strstr(one_text, "t100001002") != NULL);	/* segment 1's MTC */
		CHECK(b.segments >= 2);
		if (late)	/* the one it came in */
			CHECK(b.segments_redone >= 1);
		seg_check_turns(data);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
}
