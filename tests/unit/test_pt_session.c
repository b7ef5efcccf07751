/* Intel PT session (decoders/pt_session.c) on a perf.data written with lib/perf_write: one
 * per-CPU queue whose trace (libipt's encoder) runs the same code four times, at TSC 1000,
 * 3000, 5000 and 6000. ITRACE_START puts pid 10 on the CPU from time 1 and pid 20 from
 * 2000; pid 20 maps the code only at time 4000. So the thread and the address space must
 * follow the trace's time: pid 10 decodes, pid 20 first has no image, then decodes. (After
 * the no_image pt_flow resumes at a later PSB: the run at 5000 is skipped.) */
#include <inttypes.h>
#include <intel-pt.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decoders/pt_session.h"
#include "lib/perf_write.h"
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

static struct pt_packet pkt(enum pt_packet_type t)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = t;
	return p;
}

/* Per tsc: PSB, TSC, MODE.Exec 64, PSBEND, TIP.PGE at ip, TIP.PGD (the ret leaves). */
static int encode(uint8_t *buf, size_t cap, uint64_t ip, const uint64_t *tsc, size_t nt)
{
	struct pt_config cfg;
	struct pt_encoder *enc;
	uint64_t off = 0;
	int ret = 0;

	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + cap;
	if (!(enc = pt_alloc_encoder(&cfg)))
		return -1;
	for (size_t i = 0; i < nt && ret >= 0; i++) {
		struct pt_packet p[6] = { pkt(ppt_psb), pkt(ppt_tsc), pkt(ppt_mode), pkt(ppt_psbend),
					  pkt(ppt_tip_pge), pkt(ppt_tip_pgd) };

		p[1].payload.tsc.tsc = tsc[i];
		p[2].payload.mode.leaf = pt_mol_exec;
		p[2].payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
		p[4].payload.ip.ipc = pt_ipc_sext_48;
		p[4].payload.ip.ip = ip;
		/* The ret leaves the traced code for 0x1000. */
		p[5].payload.ip.ipc = pt_ipc_sext_48;
		p[5].payload.ip.ip = 0x1000;
		for (size_t j = 0; j < 6 && ret >= 0; j++)
			ret = pt_enc_next(enc, &p[j]);
	}
	if (ret >= 0)
		ret = pt_enc_get_offset(enc, &off);
	pt_free_encoder(enc);
	return ret < 0 ? -1 : (int)off;
}

TEST(thread_and_images_follow_trace_time)
{
	char dir[] = "/tmp/tc-pts-XXXXXX", prog[128], data[128], cmd[512];
	struct perf_event_attr a = { .type = PMU, .size = sizeof(a), .config = 1 << 10,
		.sample_period = 1, .sample_id_all = 1,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_IDENTIFIER };
	uint64_t id = 1, priv[TC_IPT_PRIV_MAX] = { 0 }, marker = 0, tsc[4] = { 1000, 3000, 5000, 6000 };
	struct tc_pw_sid sid = { .id = 1, .cpu = 0 };
	struct tc_pw_mmap2 mm = { .start = BASE, .len = 0x10000, .prot = PROT_READ | PROT_EXEC,
				  .flags = MAP_PRIVATE, .filename = prog };
	struct tc_perf_data *pd = NULL;
	struct tc_pd_record r;
	struct tc_pts *s = NULL;
	struct got g = { .n = 0 };
	struct tc_err e = { 0 };
	struct tc_pw *w;
	uint8_t trace[512];
	int n, ok;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(data, sizeof(data), "%s/pt.data", dir);
	/* Straight-line code ending in ret: one range per run. */
	snprintf(cmd, sizeof(cmd), "printf 'int tc_marker(int x) { return x * 7 + 3; }\\n"
		 "int main(int c, char **v) { (void)v; return tc_marker(c); }\\n' >%s/p.c && "
		 "gcc -O1 -fPIE -pie -o %s %s/p.c", dir, prog, dir);
	CHECK_INT(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "nm %s | awk '$3 == \"tc_marker\" { print $1 }'", prog);
	f = popen(cmd, "r");
	ok = f && fscanf(f, "%" SCNx64, &marker) == 1;
	if (f)
		pclose(f);
	CHECK(ok && marker > 0 && marker < 0x10000);
	n = encode(trace, sizeof(trace), BASE + marker, tsc, 4);
	CHECK(n > 0);
	if (!ok || n <= 0)
		goto out;

	priv[TC_IPT_PMU_TYPE] = PMU;
	priv[TC_IPT_TIME_SHIFT] = 0;	/* perf time == TSC */
	priv[TC_IPT_TIME_MULT] = 1;
	priv[TC_IPT_CAP_USER_TIME_ZERO] = 1;
	priv[TC_IPT_TSC_BIT] = 1 << 10;
	priv[TC_IPT_HAVE_SCHED_SWITCH] = 3;
	priv[TC_IPT_PER_CPU_MMAPS] = 1;
	priv[TC_IPT_TSC_CTC_D] = 1;
	CHECK_INT(tc_pw_open(&w, data, &e), 0);
	ok = !tc_pw_add_attr(w, &a, &id, 1, &e) &&
	     !tc_pw_auxtrace_info_intel_pt(w, priv, NULL, &e) &&
	     (sid.pid = sid.tid = 10, sid.time = 1, mm.pid = mm.tid = 10,
	      !tc_pw_mmap2(w, &mm, &sid, &e)) &&
	     !tc_pw_itrace_start(w, 10, 10, &sid, &e) &&
	     (sid.pid = sid.tid = 20, sid.time = 2000, !tc_pw_itrace_start(w, 20, 20, &sid, &e)) &&
	     (sid.time = 4000, mm.pid = mm.tid = 20, !tc_pw_mmap2(w, &mm, &sid, &e)) &&
	     !tc_pw_auxtrace(w, trace, (size_t)n, 0, 0, 0, (uint32_t)-1, 0, &e);
	CHECK(ok);
	CHECK_INT(tc_pw_close(w, &e), 0);
	if (!ok)
		goto out;

	CHECK_INT(tc_pd_open(&pd, data, &e), 0);
	s = tc_pts_new(&(struct tc_pts_opts){ .emit = collect, .ctx = &g }, &e);
	CHECK(s != NULL);
	if (!pd || !s)
		goto out;
	while ((n = tc_pd_next(pd, &r, &e)) > 0)
		CHECK_INT(tc_pts_record(s, pd, &r, &e), 0);
	CHECK_INT(n, 0);
	CHECK(tc_pts_is_intel_pt(s));
	CHECK_INT(tc_pts_decode(s, pd, &e), 0);
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
		CHECK_INT(tc_pts_stats(s)->nomap, 1);
		CHECK(tc_pts_stats(s)->syncs >= 2);
		CHECK_INT(tc_pts_stats(s)->queues, 1);
	}
out:
	tc_pts_free(s);
	tc_pd_close(pd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
}
