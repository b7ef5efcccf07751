/* Intel PT decoding on libipt (decoders/pt_config.c, pt_packets.c, pt_flow.c): the packets
 * of a real recording checked against perf's own packet dumper (perf report -D), the flow
 * decoder on hand-built trace over hand-written x86-64 code, and hostile input. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>

#include "decoders/pt_config.h"
#include "decoders/pt_flow.h"
#include "decoders/pt_packets.h"
#include "lib/perf_data.h"
#include "tests/unit/tc_test.h"

#define IPT "intel_pt/perf.data.intel_pt-4.14"

/* ---- collecting records ---------------------------------------------------------------- */

struct prec {
	struct tc_rec r;	/* name and text NULL: see the copies below */
	char name[16];
	char text[160];
};

struct precs {
	struct prec *v;
	size_t n, cap;
};

static void collect(void *ctx, const struct tc_rec *r)
{
	struct precs *l = ctx;
	struct prec *p;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			abort();
	}
	p = &l->v[l->n++];
	p->r = *r;
	snprintf(p->name, sizeof(p->name), "%s", r->name ? r->name : "");
	snprintf(p->text, sizeof(p->text), "%s", r->text ? r->text : "");
	/* The list moves when it grows: read name and text from the copies. */
	p->r.name = p->r.text = NULL;
}

static size_t count_type(const struct precs *l, enum tc_rec_type t)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		n += l->v[i].r.type == t;
	return n;
}

static const char *td(const char *rel)
{
	static char buf[4096];
	const char *d = tc_testdata();

	if (!d)
		return NULL;
	snprintf(buf, sizeof(buf), "%s/perfdata/%s", d, rel);
	return buf;
}

/* ---- perf's packet dump ---------------------------------------------------------------- */

/* perf's packet names and ours (ptdump's). TNT stands for both tnt.8 and tnt.64; EXSTOP and
 * PTWRITE for their _IP variants too. */
static const struct {
	const char *perf, *ipt, *ipt2;
} names[] = {
	{ "PAD", "pad", NULL },		{ "PSB", "psb", NULL },
	{ "PSBEND", "psbend", NULL },	{ "TNT", "tnt.8", "tnt.64" },
	{ "TIP", "tip", NULL },		{ "TIP.PGE", "tip.pge", NULL },
	{ "TIP.PGD", "tip.pgd", NULL },	{ "FUP", "fup", NULL },
	{ "MODE.Exec", "mode.exec", NULL }, { "MODE.TSX", "mode.tsx", NULL },
	{ "PIP", "pip", NULL },		{ "TSC", "tsc", NULL },
	{ "TMA", "tma", NULL },		{ "CBR", "cbr", NULL },
	{ "MTC", "mtc", NULL },		{ "CYC", "cyc", NULL },
	{ "VMCS", "vmcs", NULL },	{ "OVF", "ovf", NULL },
	{ "TraceSTOP", "stop", NULL },	{ "MNT", "mnt", NULL },
	{ "EXSTOP", "exstop", NULL },	{ "MWAIT", "mwait", NULL },
	{ "PWRE", "pwre", NULL },	{ "PWRX", "pwrx", NULL },
	{ "PTWRITE", "ptw", NULL },
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

static int kind_of_perf(const char *n)
{
	for (size_t i = 0; i < NNAMES; i++)
		if (!strcmp(names[i].perf, n))
			return (int)i;
	return -1;
}

static int kind_of_ipt(const char *n)
{
	for (size_t i = 0; i < NNAMES; i++)
		if (!strcmp(names[i].ipt, n) || (names[i].ipt2 && !strcmp(names[i].ipt2, n)))
			return (int)i;
	return -1;
}

struct pkt {
	uint64_t off;		/* in the AUXTRACE buffer */
	int kind;		/* index into names[] */
};

struct pbuf {
	uint64_t size;
	struct pkt *v;
	size_t n, cap;
};

static void push_pkt(struct pbuf *b, uint64_t off, int kind)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 1024;
		b->v = realloc(b->v, b->cap * sizeof(*b->v));
		if (!b->v)
			abort();
	}
	b->v[b->n++] = (struct pkt){ off, kind };
}

/* The packet lines perf prints per AUXTRACE buffer:
 * ".  00000013:  99 20<padding to 16 byte columns> MODE.TSX TXAbort:0 InTX:0". */
static int perf_packets(struct pbuf *bufs, size_t max, size_t *nbufs)
{
	char cmd[4200], line[4096];
	size_t nb = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "xzcat '%s/perfdata/perf-6.1-dump/perf.data.intel_pt-4.14.perf-report-D.txt.xz'",
		 tc_testdata());
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long size, off;
		char name[32];

		if (sscanf(line, ". ... Intel Processor Trace data: size %llu bytes", &size) == 1) {
			if (nb < max)
				bufs[nb].size = size;
			nb++;
			continue;
		}
		if (!nb || nb > max || strncmp(line, ".  ", 3) || strlen(line) < 63 ||
		    sscanf(line + 3, "%8llx:", &off) != 1 || line[11] != ':')
			continue;
		/* The name column follows 16 three-character byte columns. */
		if (sscanf(line + 62, "%31s", name) != 1)
			continue;
		push_pkt(&bufs[nb - 1], off, kind_of_perf(name));
	}
	*nbufs = nb;
	return pclose(p) ? -1 : 0;
}

/* perf's packet decoder swallows the zero (PAD) bytes after a packet until the packet is 8
 * bytes long; libipt reports each PAD. Merge ours the same way. in: PACKET records of one
 * buffer in order, with buffer-relative offsets; len: the buffer size. */
static void merge_like_perf(const struct precs *ours, size_t from, size_t to, uint64_t base,
			    struct pbuf *out)
{
	uint64_t start = 0;
	bool have = false;
	int pad = kind_of_ipt("pad");

	for (size_t i = from; i < to; i++) {
		const struct tc_rec *r = &ours->v[i].r;
		uint64_t off = r->offset - base;
		int kind = kind_of_ipt(ours->v[i].name);

		if (r->type != TC_REC_PACKET)
			continue;
		if (have && kind == pad && off - start < 8)
			continue;
		push_pkt(out, off, kind);
		start = off;
		have = true;
	}
}

struct aux {
	uint64_t file_off;	/* of the trace bytes */
	int cpu;
	size_t from, to;	/* its records in the list */
	uint64_t size;
};

TEST(pt_config_from_perf_data)
{
	struct tc_perf_data *pd;
	struct tc_pd_record r;
	struct tc_err e = { 0 };
	struct tc_pt_setup s;
	const struct tc_pd_features *f;
	bool seen = false;

	if (!td(IPT))
		SKIP("no test data");
	CHECK_INT(tc_pd_open(&pd, td(IPT), &e), 0);
	if (!pd)
		return;
	f = tc_pd_features(pd);
	printf("#   cpuid feature: %s\n", f->cpuid ? f->cpuid : "(none)");
	while (tc_pd_next(pd, &r, &e) > 0) {
		if (r.type != TC_PD_AUXTRACE_INFO)
			continue;
		seen = true;
		CHECK_INT(tc_pt_setup_from_pd(&s, pd, r.u.auxtrace_info.intel_pt, &e), 0);
		CHECK_INT(s.pmu_type, 6);
		CHECK(s.have_config);
		printf("#   config 0x%" PRIx64 " tsc %d mtc %d cyc %d noretcomp %d mtc_period %u\n",
		       s.config, s.tsc, s.mtc, s.cyc, s.noretcomp, s.mtc_period);
		CHECK(s.tc.valid);
		CHECK_INT(s.tc.time_shift, 31);
		CHECK_INT(s.tc.time_mult, 1789569706);
		CHECK_INT(s.cfg.cpuid_0x15_eax, 2);
		CHECK_INT(s.cfg.cpuid_0x15_ebx, 100);
		CHECK_INT(s.cfg.nom_freq, 12);
		CHECK_INT(s.have_sched_switch, 3);
		CHECK(s.per_cpu_mmaps && !s.snapshot_mode);
		CHECK_STR(s.filter, "");
		/* Round trip through perf time, as perf's tsc.c does it. */
		CHECK(tc_pt_perf_time_to_tsc(&s.tc, tc_pt_tsc_to_perf_time(&s.tc, 0xbc4cd2cfe8ULL)) -
		      0xbc4cd2cfe8ULL + 1 <= 2);
	}
	CHECK(seen);
	tc_pd_close(pd);
}

TEST(pt_cpu_strings)
{
	struct pt_cpu c;
	struct tc_pt_setup s;
	struct tc_intel_pt_info info = { .nr = TC_IPT_PRIV_MAX, .filter = "" };
	uint64_t config = 0;

	CHECK_INT(tc_pt_cpu_parse("GenuineIntel,6,142,9", &c), 0);
	CHECK(c.vendor == pcv_intel && c.family == 6 && c.model == 142 && c.stepping == 9);
	CHECK_INT(tc_pt_cpu_parse("AuthenticAMD,23,1,2", &c), -1);
	CHECK_INT(tc_pt_cpu_parse("GenuineIntel,6,142", &c), -1);
	CHECK_INT(tc_pt_cpu_parse("GenuineIntel,6,142,9,1", &c), -1);
	CHECK_INT(tc_pt_cpu_parse("GenuineIntel,6,1420,9", &c), -1);
	CHECK_INT(tc_pt_cpu_parse(NULL, &c), -1);

	/* Kaby Lake (6/142) has known errata in libipt: BDM70 and friends. */
	CHECK_INT(tc_pt_setup_init(&s, &info, &config, "GenuineIntel,6,142,9", NULL), 0);
	CHECK(s.cpu_known && s.errata_known);
	CHECK(s.cfg.errata.bdm70 && s.cfg.errata.skd007);
	CHECK(s.timeless);
	/* An unknown Intel model decodes without errata. */
	CHECK_INT(tc_pt_setup_init(&s, &info, &config, "GenuineIntel,6,2,0", NULL), 0);
	CHECK(s.cpu_known && !s.cfg.errata.bdm70);
	info.nr = 5;
	CHECK_INT(tc_pt_setup_init(&s, &info, NULL, NULL, NULL), -1);

	/* tsc_to_perf_time: ns = zero + tsc * mult >> shift, split to avoid overflow. */
	s.tc = (struct tc_pt_time_conv){ .time_shift = 10, .time_mult = 1536, .time_zero = 1000,
					 .valid = true };
	CHECK_INT(tc_pt_tsc_to_perf_time(&s.tc, 2048), 1000 + 3072);
	CHECK_INT(tc_pt_perf_time_to_tsc(&s.tc, 1000 + 3072), 2048);
	CHECK(tc_pt_tsc_to_perf_time(&s.tc, UINT64_MAX) > (UINT64_MAX >> 10));
	s.tc.valid = false;
	CHECK_INT(tc_pt_tsc_to_perf_time(&s.tc, 77), 77);
}

TEST(pt_packets_match_perf_dump)
{
	static struct pbuf perf[4];
	struct precs ours = { 0 };
	struct aux aux[4];
	struct tc_perf_data *pd;
	struct tc_pd_record r;
	struct tc_err e = { 0 };
	struct tc_pt_setup s;
	struct tc_ptp_stats st = { 0 };
	size_t naux = 0, nperf = 0;
	bool have_setup = false;

	if (!td(IPT))
		SKIP("no test data");
	CHECK_INT(tc_pd_open(&pd, td(IPT), &e), 0);
	if (!pd)
		return;
	while (tc_pd_next(pd, &r, &e) > 0) {
		if (r.type == TC_PD_AUXTRACE_INFO) {
			have_setup = !tc_pt_setup_from_pd(&s, pd, r.u.auxtrace_info.intel_pt, &e);
		} else if (r.type == TC_PD_AUXTRACE && naux < 4) {
			struct aux *a = &aux[naux++];

			CHECK(have_setup);
			a->file_off = r.offset + r.size;
			a->cpu = (int)r.u.auxtrace.cpu;
			a->size = r.u.auxtrace.size;
			a->from = ours.n;
			CHECK_INT(tc_ptp_decode(have_setup ? &s.cfg : NULL, r.u.auxtrace.data,
						r.u.auxtrace.size, a->file_off, a->cpu, collect,
						&ours, &st, &e), 0);
			a->to = ours.n;
		}
	}
	tc_pd_close(pd);
	CHECK_INT(naux, 2);
	CHECK_INT(st.errors, 0);
	CHECK_INT(st.unsynced_bytes, 0);
	CHECK_INT(st.syncs, 2);
	CHECK_INT(count_type(&ours, TC_REC_ERROR), 0);

	CHECK_INT(perf_packets(perf, 4, &nperf), 0);
	CHECK_INT(nperf, naux);
	for (size_t b = 0; b < naux && b < nperf; b++) {
		struct pbuf mine = { 0 };
		size_t bad = 0, want[NNAMES] = { 0 }, got[NNAMES] = { 0 }, npsb = 0;

		CHECK_INT(perf[b].size, aux[b].size);
		for (size_t i = aux[b].from; i < aux[b].to; i++) {
			const struct tc_rec *x = &ours.v[i].r;

			if (x->cpu != aux[b].cpu || x->offset < aux[b].file_off ||
			    x->offset >= aux[b].file_off + aux[b].size || x->type != TC_REC_PACKET)
				bad++;
			npsb += !strcmp(ours.v[i].name, "psb");
		}
		CHECK_INT(bad, 0);
		merge_like_perf(&ours, aux[b].from, aux[b].to, aux[b].file_off, &mine);
		CHECK_INT(mine.n, perf[b].n);
		for (size_t i = 0; i < perf[b].n && i < mine.n && bad < 5; i++) {
			if (perf[b].v[i].off != mine.v[i].off || perf[b].v[i].kind != mine.v[i].kind ||
			    mine.v[i].kind < 0) {
				printf("#   buffer %zu packet %zu: perf 0x%" PRIx64 " %s, ours 0x%"
				       PRIx64 " %s\n", b, i, perf[b].v[i].off,
				       perf[b].v[i].kind >= 0 ? names[perf[b].v[i].kind].perf : "?",
				       mine.v[i].off,
				       mine.v[i].kind >= 0 ? names[mine.v[i].kind].perf : "?");
				bad++;
			}
		}
		CHECK_INT(bad, 0);
		for (size_t i = 0; i < perf[b].n; i++)
			if (perf[b].v[i].kind >= 0)
				want[perf[b].v[i].kind]++;
		for (size_t i = 0; i < mine.n; i++)
			if (mine.v[i].kind >= 0)
				got[mine.v[i].kind]++;
		for (size_t k = 0; k < NNAMES; k++) {
			if (want[k] != got[k])
				printf("#   buffer %zu: %s perf %zu ours %zu\n", b, names[k].perf,
				       want[k], got[k]);
			CHECK_INT(got[k], want[k]);
		}
		printf("#   buffer %zu (cpu %d, %" PRIu64 " bytes): %zu packets match perf's, "
		       "%zu libipt packets, %zu PSB\n", b, aux[b].cpu, aux[b].size, mine.n,
		       aux[b].to - aux[b].from, npsb);
		free(mine.v);
		free(perf[b].v);
		perf[b].v = NULL;
	}
	/* The README's numbers: 10 PSBs in the two buffers. */
	{
		size_t npsb = 0, ntnt = 0;

		for (size_t i = 0; i < ours.n; i++) {
			npsb += !strcmp(ours.v[i].name, "psb");
			ntnt += !strncmp(ours.v[i].name, "tnt.", 4);
		}
		CHECK_INT(npsb, 10);
		CHECK_INT(ntnt, 69516);
	}
	free(ours.v);
}
