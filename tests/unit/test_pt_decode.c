/* Intel PT decoding on libipt (decoders/intel_pt/pt_config.c, pt_packets.c, pt_flow.c): the packets
 * of a real recording checked against perf's own packet dumper (perf report -D), the flow
 * decoder on hand-built trace over hand-written x86-64 code, and hostile input. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>

#include "decoders/intel_pt/pt_config.h"
#include "decoders/intel_pt/pt_flow.h"
#include "decoders/intel_pt/pt_packets.h"
#include "lib/isa/x86.h"
#include "lib/perfdata/perf_data.h"
#include "tests/unit/pt_enc.h"
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
	struct tc_perf_data_record r;
	struct tc_err e = { 0 };
	struct tc_pt_setup s;
	const struct tc_perf_data_features *f;
	bool seen = false;

	if (!td(IPT))
		SKIP("no test data");
	CHECK_INT(tc_perf_data_open(&pd, td(IPT), &e), 0);
	if (!pd)
		return;
	f = tc_perf_data_features(pd);
	printf("#   cpuid feature: %s\n", f->cpuid ? f->cpuid : "(none)");
	while (tc_perf_data_next(pd, &r, &e) > 0) {
		if (r.type != TC_PERF_DATA_AUXTRACE_INFO)
			continue;
		seen = true;
		CHECK_INT(tc_pt_config_from_perf_data(&s, pd, r.u.auxtrace_info.intel_pt, &e), 0);
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
		CHECK(tc_pt_config_perf_time_to_tsc(
			      &s.tc, tc_pt_config_tsc_to_perf_time(&s.tc, 0xbc4cd2cfe8ULL)) -
			      0xbc4cd2cfe8ULL + 1 <=
		      2);
	}
	CHECK(seen);
	tc_perf_data_close(pd);
}

TEST(pt_cpu_strings)
{
	struct pt_cpu c;
	struct tc_pt_setup s;
	struct tc_intel_pt_info info = { .nr = TC_IPT_PRIV_MAX, .filter = "" };
	uint64_t config = 0;

	CHECK_INT(tc_pt_config_cpu_parse("GenuineIntel,6,142,9", &c), 0);
	CHECK(c.vendor == pcv_intel && c.family == 6 && c.model == 142 && c.stepping == 9);
	CHECK_INT(tc_pt_config_cpu_parse("AuthenticAMD,23,1,2", &c), -1);
	CHECK_INT(tc_pt_config_cpu_parse("GenuineIntel,6,142", &c), -1);
	CHECK_INT(tc_pt_config_cpu_parse("GenuineIntel,6,142,9,1", &c), -1);
	CHECK_INT(tc_pt_config_cpu_parse("GenuineIntel,6,1420,9", &c), -1);
	CHECK_INT(tc_pt_config_cpu_parse(NULL, &c), -1);

	/* Kaby Lake (6/142) has known errata in libipt: BDM70 and friends. */
	CHECK_INT(tc_pt_config_init(&s, &info, &config, "GenuineIntel,6,142,9", NULL), 0);
	CHECK(s.cpu_known && s.errata_known);
	CHECK(s.cfg.errata.bdm70 && s.cfg.errata.skd007);
	CHECK(s.timeless);
	/* An unknown Intel model decodes without errata. */
	CHECK_INT(tc_pt_config_init(&s, &info, &config, "GenuineIntel,6,2,0", NULL), 0);
	CHECK(s.cpu_known && !s.cfg.errata.bdm70);
	info.nr = 5;
	CHECK_INT(tc_pt_config_init(&s, &info, NULL, NULL, NULL), -1);

	/* tsc_to_perf_time: ns = zero + tsc * mult >> shift, split to avoid overflow. */
	s.tc = (struct tc_pt_time_conv){ .time_shift = 10, .time_mult = 1536, .time_zero = 1000,
					 .valid = true };
	CHECK_INT(tc_pt_config_tsc_to_perf_time(&s.tc, 2048), 1000 + 3072);
	CHECK_INT(tc_pt_config_perf_time_to_tsc(&s.tc, 1000 + 3072), 2048);
	CHECK(tc_pt_config_tsc_to_perf_time(&s.tc, UINT64_MAX) > (UINT64_MAX >> 10));
	s.tc.valid = false;
	CHECK_INT(tc_pt_config_tsc_to_perf_time(&s.tc, 77), 77);
}

TEST(pt_packets_match_perf_dump)
{
	static struct pbuf perf[4];
	struct precs ours = { 0 };
	struct aux aux[4];
	struct tc_perf_data *pd;
	struct tc_perf_data_record r;
	struct tc_err e = { 0 };
	struct tc_pt_setup s;
	struct tc_pt_packets_stats st = { 0 };
	size_t naux = 0, nperf = 0;
	bool have_setup = false;

	if (!td(IPT))
		SKIP("no test data");
	CHECK_INT(tc_perf_data_open(&pd, td(IPT), &e), 0);
	if (!pd)
		return;
	while (tc_perf_data_next(pd, &r, &e) > 0) {
		if (r.type == TC_PERF_DATA_AUXTRACE_INFO) {
			have_setup = !tc_pt_config_from_perf_data(&s, pd,
								  r.u.auxtrace_info.intel_pt, &e);
		} else if (r.type == TC_PERF_DATA_AUXTRACE && naux < 4) {
			struct aux *a = &aux[naux++];

			CHECK(have_setup);
			a->file_off = r.offset + r.size;
			a->cpu = (int)r.u.auxtrace.cpu;
			a->size = r.u.auxtrace.size;
			a->from = ours.n;
			CHECK_INT(tc_pt_packets_decode(have_setup ? &s.cfg : NULL,
						       r.u.auxtrace.data, r.u.auxtrace.size,
						       a->file_off, a->cpu, collect, &ours, &st,
						       &e),
				  0);
			a->to = ours.n;
		}
	}
	tc_perf_data_close(pd);
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

/* ---- flow decoding on hand-built trace ------------------------------------------------- */

#define CODE_BASE 0x400000ULL

/* x86-64, by hand:
 *   400000: 31 c0           xor  %eax,%eax
 *   400002: ff c0           inc  %eax            <- loop
 *   400004: 83 f8 03        cmp  $3,%eax
 *   400007: 75 f9           jne  400002
 *   400009: e8 03 00 00 00  call 400011
 *   40000e: 90              nop
 *   40000f: ff e0           jmp  *%rax
 *   400011: 90              nop                  <- the function
 *   400012: c3              ret */
static const uint8_t code[] = {
	0x31, 0xc0, 0xff, 0xc0, 0x83, 0xf8, 0x03, 0x75, 0xf9, 0xe8, 0x03, 0x00, 0x00, 0x00,
	0x90, 0xff, 0xe0, 0x90, 0xc3,
};

#define LOOP_BASE 0x600000

struct flow_ctx {
	struct precs recs;
	size_t reads, threads;
	uint64_t last_cr3;
	bool no_image;
};

static size_t read_code(void *ctx, int cpu, uint64_t cr3, uint64_t addr, uint8_t *buf,
			size_t len)
{
	struct flow_ctx *f = ctx;

	(void)cpu;
	(void)cr3;
	f->reads++;
	if (addr >= LOOP_BASE && addr < LOOP_BASE + 2) {	/* "jmp ." */
		static const uint8_t jmp_self[] = { 0xeb, 0xfe };
		size_t n = LOOP_BASE + 2 - addr < len ? (size_t)(LOOP_BASE + 2 - addr) : len;

		memcpy(buf, jmp_self + (addr - LOOP_BASE), n);
		return n;
	}
	if (f->no_image || addr < CODE_BASE || addr >= CODE_BASE + sizeof(code))
		return 0;
	if (len > CODE_BASE + sizeof(code) - addr)
		len = CODE_BASE + sizeof(code) - addr;
	memcpy(buf, code + (addr - CODE_BASE), len);
	return len;
}

static void thread_cb(void *ctx, int cpu, uint64_t cr3, const struct tc_pt_flow_time *t, int *pid,
		      int *tid)
{
	struct flow_ctx *f = ctx;

	(void)t;
	f->threads++;
	f->last_cr3 = cr3;
	/* A made-up mapping, so that records show what the callback said. */
	*pid = cr3 == TC_PT_FLOW_NO_CR3 ? -1 : (int)(cr3 >> 12);
	*tid = *pid < 0 ? -1 : *pid + cpu;
}

static void flow_emit(void *ctx, const struct tc_rec *r)
{
	collect(&((struct flow_ctx *)ctx)->recs, r);
}

static struct pt_packet ip_pkt(enum pt_packet_type t, enum pt_ip_compression ipc, uint64_t ip)
{
	struct pt_packet p = pkt(t);

	p.payload.ip.ipc = ipc;
	p.payload.ip.ip = ip;
	return p;
}

/* After p[0..n): MODE.Exec 64-bit, TIP.PGE to target, one TNT of bits (oldest first).
 * Returns the new count. */
static size_t enter(struct pt_packet *p, size_t n, uint64_t target, uint8_t bits,
		    uint64_t tnt)
{
	p[n] = pkt(ppt_mode);
	p[n].payload.mode.leaf = pt_mol_exec;
	p[n++].payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	p[n++] = ip_pkt(ppt_tip_pge, pt_ipc_sext_48, target);
	p[n] = pkt(ppt_tnt_8);
	p[n].payload.tnt.bit_size = bits;
	p[n++].payload.tnt.payload = tnt;
	return n;
}

/* PSB+ (TSC, PIP), MODE.exec 64-bit, TIP.PGE to target, TNT T T N T (the loop twice round,
 * out, and the compressed return), TIP.PGD with the IP suppressed. */
static int build_stream(uint8_t *buf, size_t cap, uint64_t target)
{
	struct pt_packet p[9];
	size_t n = 0;

	p[n++] = pkt(ppt_psb);
	p[n] = pkt(ppt_tsc);
	p[n++].payload.tsc.tsc = 0x123456;
	p[n] = pkt(ppt_pip);
	p[n++].payload.pip.cr3 = 0x7000;
	p[n++] = pkt(ppt_psbend);
	n = enter(p, n, target, 4, 0xd);	/* T T N T */
	p[n++] = ip_pkt(ppt_tip_pgd, pt_ipc_suppressed, 0);
	return encode_pt(buf, cap, p, n);
}

struct want {
	enum tc_rec_type type;
	uint64_t start, end;
	uint32_t insns;
	enum tc_insn_class last;
};

static void check_flow(const struct precs *l, const struct want *w, size_t nw)
{
	size_t i, bad = 0;

	CHECK_INT(l->n, nw);
	for (i = 0; i < l->n && i < nw && bad < 5; i++) {
		const struct tc_rec *r = &l->v[i].r;
		bool ok = r->type == w[i].type && r->start == w[i].start && r->end == w[i].end;

		if (w[i].type == TC_REC_RANGE)
			ok = ok && r->insns == w[i].insns && r->last_type == w[i].last &&
			     r->isa == TC_ISA_X86_64;
		if (!ok) {
			printf("#   record %zu: %s 0x%" PRIx64 " 0x%" PRIx64 " n%u c%u, expected %s "
			       "0x%" PRIx64 " 0x%" PRIx64 " n%u c%u\n", i, tc_rec_type_name(r->type),
			       r->start, r->end, r->insns, r->last_type,
			       tc_rec_type_name(w[i].type), w[i].start, w[i].end, w[i].insns,
			       w[i].last);
			bad++;
		}
	}
	CHECK_INT(bad, 0);
}

static struct tc_pt_flow_ops flow_ops(struct flow_ctx *f)
{
	return (struct tc_pt_flow_ops){ .read = read_code, .emit = flow_emit, .thread = thread_cb,
				    .ctx = f };
}

TEST(pt_flow_loop_call_ret)
{
	static const struct want w[] = {
		{ TC_REC_BRANCH, 0, 0x400000, 0, 0 },
		{ TC_REC_RANGE, 0x400000, 0x400009, 4, TC_INSN_JUMP },
		{ TC_REC_BRANCH, 0x400007, 0x400002, 0, 0 },
		{ TC_REC_RANGE, 0x400002, 0x400009, 3, TC_INSN_JUMP },
		{ TC_REC_BRANCH, 0x400007, 0x400002, 0, 0 },
		/* Not taken the third time: the range runs on through the call. */
		{ TC_REC_RANGE, 0x400002, 0x40000e, 4, TC_INSN_CALL },
		{ TC_REC_BRANCH, 0x400009, 0x400011, 0, 0 },
		{ TC_REC_RANGE, 0x400011, 0x400013, 2, TC_INSN_RET },
		{ TC_REC_BRANCH, 0x400012, 0x40000e, 0, 0 },
		{ TC_REC_RANGE, 0x40000e, 0x400011, 2, TC_INSN_JUMP },
		/* TIP.PGD: tracing stops at the indirect jump. */
		{ TC_REC_BRANCH, 0x40000f, 0, 0, 0 },
	};
	struct flow_ctx f = { 0 };
	struct tc_pt_flow_ops ops = flow_ops(&f);
	struct tc_err e = { 0 };
	struct tc_pt_flow *d;
	const struct tc_pt_flow_stats *st;
	uint8_t buf[256];
	int n = build_stream(buf, sizeof(buf), CODE_BASE);
	bool ids = true;

	CHECK(n > 0);
	d = tc_pt_flow_new(NULL, NULL, 2, &ops, &e);
	CHECK(d != NULL);
	if (!d || n <= 0)
		return;
	f.recs.n = 0;
	CHECK_INT(tc_pt_flow_feed(d, buf, (size_t)n, 0x1000, &e), 0);
	check_flow(&f.recs, w, sizeof(w) / sizeof(w[0]));
	for (size_t i = 0; i < f.recs.n; i++) {
		const struct tc_rec *r = &f.recs.v[i].r;

		/* The thread callback saw the PIP's CR3 before any record. */
		ids = ids && r->cpu == 2 && r->pid == 7 && r->tid == 9 && r->id == -1 &&
		      r->offset >= 0x1000 && r->offset <= 0x1000 + (uint64_t)n;
	}
	CHECK(ids);
	CHECK(f.threads >= 2);
	CHECK(f.last_cr3 == 0x7000);
	st = tc_pt_flow_stats(d);
	CHECK_INT(st->insns, 15);
	CHECK_INT(st->ranges, 5);
	CHECK_INT(st->branches, 6);
	CHECK_INT(st->errors, 0);
	CHECK_INT(st->syncs, 1);
	CHECK_INT(st->unsynced_bytes, 0);

	/* The same again with bytes before the PSB: skipped, said, offsets shifted. */
	{
		uint8_t buf2[300];

		memset(buf2, 0x55, 7);
		memcpy(buf2 + 7, buf, (size_t)n);
		free(f.recs.v);
		memset(&f.recs, 0, sizeof(f.recs));
		CHECK_INT(tc_pt_flow_feed(d, buf2, (size_t)n + 7, 0, &e), 0);
		CHECK(f.recs.n == sizeof(w) / sizeof(w[0]) + 1);
		CHECK(f.recs.n && f.recs.v[0].r.type == TC_REC_NO_SYNC && f.recs.v[0].r.offset == 0);
		CHECK_INT(tc_pt_flow_stats(d)->unsynced_bytes, 7);
	}
	tc_pt_flow_free(d);
	free(f.recs.v);
}

TEST(pt_flow_no_image)
{
	struct flow_ctx f = { 0 };
	struct tc_pt_flow_ops ops = flow_ops(&f);
	struct tc_err e = { 0 };
	struct tc_pt_flow *d;
	uint8_t buf[256];
	int n = build_stream(buf, sizeof(buf), 0x500000);

	d = tc_pt_flow_new(NULL, NULL, 0, &ops, &e);
	CHECK(d && n > 0);
	if (!d || n <= 0)
		return;
	CHECK_INT(tc_pt_flow_feed(d, buf, (size_t)n, 0, &e), 0);
	CHECK_INT(f.recs.n, 2);
	CHECK(f.recs.n == 2 && f.recs.v[0].r.type == TC_REC_BRANCH &&
	      f.recs.v[0].r.start == 0 && f.recs.v[0].r.end == 0x500000);
	CHECK(f.recs.n == 2 && f.recs.v[1].r.type == TC_REC_ADDR_NACC &&
	      f.recs.v[1].r.start == 0x500000);
	CHECK_INT(tc_pt_flow_stats(d)->nomap, 1);
	tc_pt_flow_free(d);
	free(f.recs.v);
}

/* An image whose code jumps to itself needs no trace: the decoder must give up, not hang
 * (found by fuzz_pt). */
TEST(pt_flow_endless_direct_jump)
{
	struct flow_ctx f = { 0 };
	struct tc_pt_flow_ops ops = flow_ops(&f);
	struct tc_err e = { 0 };
	struct tc_pt_flow *d;
	uint8_t buf[256];
	int n = build_stream(buf, sizeof(buf), LOOP_BASE);
	size_t errs = 0;

	d = tc_pt_flow_new(NULL, NULL, 0, &ops, &e);
	CHECK(d && n > 0);
	if (!d || n <= 0)
		return;
	CHECK_INT(tc_pt_flow_feed(d, buf, (size_t)n, 0, &e), 0);
	for (size_t i = 0; i < f.recs.n; i++)
		if (f.recs.v[i].r.type == TC_REC_ERROR &&
		    strstr(f.recs.v[i].text, "instructions without trace at 0x600000"))
			errs++;
	CHECK_INT(errs, 1);
	CHECK_INT(tc_pt_flow_stats(d)->errors, 1);
	tc_pt_flow_free(d);
	free(f.recs.v);
}

/* ---- hostile input ----------------------------------------------------------------------- */

static uint32_t rnd_state = 12345;

static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

/* Every ERROR / NO_SYNC / ADDR_NACC offset lies in [base, base + len]. */
static size_t bad_offsets(const struct precs *l, uint64_t base, size_t len)
{
	size_t bad = 0;

	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].r.offset < base || l->v[i].r.offset > base + len)
			bad++;
	return bad;
}

/* The same records, field by field (the texts aside)? */
static bool same_records(const struct precs *a, const struct precs *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		const struct tc_rec *x = &a->v[i].r, *y = &b->v[i].r;

		if (x->type != y->type || x->offset != y->offset || x->start != y->start ||
		    x->end != y->end || x->insns != y->insns || x->time != y->time)
			return false;
	}
	return true;
}

/* Decode buf in the smallest steps of time (as queues interleaved by time are); the number
 * of pauses. */
static size_t feed_stepwise(struct tc_pt_flow *d, const uint8_t *buf, size_t len, uint64_t off)
{
	struct tc_err e = { 0 };
	uint64_t until = 0;
	size_t pauses = 0;

	if (tc_pt_flow_begin(d, buf, len, off, &e))
		return 0;
	while (tc_pt_flow_run(d, until) == 1 && tc_pt_flow_next_time(d, &until))
		pauses++;
	return pauses;
}

TEST(pt_hostile_random_bytes)
{
	/* one buffer a round: a flow may decode those given again (pt_flow.h) */
	static uint8_t bufs[64][8192];
	struct flow_ctx f = { 0 };
	struct tc_pt_flow_ops ops = flow_ops(&f);
	struct tc_err e = { 0 };
	struct tc_pt_flow *d = tc_pt_flow_new(NULL, NULL, 1, &ops, &e);
	size_t bad = 0, errors = 0;

	CHECK(d != NULL);
	if (!d)
		return;
	for (int round = 0; round < 64; round++) {
		uint8_t *buf = bufs[round];
		struct precs l = { 0 };
		struct tc_pt_packets_stats st = { 0 };
		size_t len = 1 + rnd() % sizeof(bufs[0]);

		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rnd();
		/* Sprinkle PSBs so that decoding gets going and then meets garbage. */
		for (int k = 0; k < 4 && len > 64; k++) {
			size_t at = rnd() % (len - 18);

			for (int j = 0; j < 16; j += 2) {
				buf[at + j] = 0x02;
				buf[at + j + 1] = 0x82;
			}
			/* Half of them with a PSBEND, so that the decoders get past sync. */
			if (k & 1) {
				buf[at + 16] = 0x02;
				buf[at + 17] = 0x23;
			}
		}
		CHECK_INT(tc_pt_packets_decode(NULL, buf, len, 0x100, 1, collect, &l, &st, &e), 0);
		bad += bad_offsets(&l, 0x100, len);
		errors += st.errors + (st.unsynced_bytes > 0);
		free(l.v);

		f.recs.n = 0;
		CHECK_INT(tc_pt_flow_feed(d, buf, len, 0x100, &e), 0);
		bad += bad_offsets(&f.recs, 0x100, len);
	}
	CHECK_INT(bad, 0);
	CHECK(errors > 0);
	printf("#   64 random buffers: %" PRIu64 " flow errors, %" PRIu64 " no image, %" PRIu64
	       " syncs\n", tc_pt_flow_stats(d)->errors, tc_pt_flow_stats(d)->nomap,
	       tc_pt_flow_stats(d)->syncs);
	tc_pt_flow_free(d);
	free(f.recs.v);
}

/* Three runs of the loop, each a PSB+ with its TSC, a TIP.PGE, a later TSC inside the flow
 * and TNTs; the first two end with TIP.PGD, the last has a TIP where a TNT is due (an error).
 * Decoded at once and in the smallest steps of time (each pause holds the event or block
 * past the time): the same records, with time from the decoder and from tick events. (A
 * held block that comes with libipt's error is fuzz_pt's find: its stepwise check covers
 * it.) */
TEST(pt_flow_stepwise)
{
	static const uint64_t tsc[3][2] = { { 1000, 1500 }, { 3000, 3500 }, { 5000, 6000 } };
	struct pt_packet p[64];
	uint8_t buf[512];
	size_t n = 0;
	int len;

	for (int k = 0; k < 3; k++) {
		p[n++] = pkt(ppt_psb);
		p[n] = pkt(ppt_tsc);
		p[n++].payload.tsc.tsc = tsc[k][0];
		p[n++] = pkt(ppt_psbend);
		n = enter(p, n, CODE_BASE, 1, 1);
		p[n] = pkt(ppt_tsc);
		p[n++].payload.tsc.tsc = tsc[k][1];
		if (k == 2) {	/* a TIP where the loop's conditional branch needs a TNT */
			p[n++] = ip_pkt(ppt_tip, pt_ipc_sext_48, CODE_BASE);
			break;
		}
		p[n] = pkt(ppt_tnt_8);
		p[n].payload.tnt.bit_size = 3;
		p[n++].payload.tnt.payload = 0x5;	/* T N T: once round more, out, ret */
		p[n++] = ip_pkt(ppt_tip_pgd, pt_ipc_suppressed, 0);
	}
	len = encode_pt(buf, sizeof(buf), p, n);
	CHECK(len > 0);
	/* time from the decoder (reads ahead), then from tick events (in flow order) */
	for (int ticks = 0; ticks < 2 && len > 0; ticks++) {
		struct flow_ctx f = { 0 }, f2 = { 0 };
		struct tc_pt_flow_ops ops = flow_ops(&f), ops2 = flow_ops(&f2);
		struct tc_err e = { 0 };
		struct tc_pt_flow *d, *d2;
		size_t pauses = 0, at1500 = 0;

		ops.ticks = ops2.ticks = ticks;
		d = tc_pt_flow_new(NULL, NULL, 0, &ops, &e);
		d2 = tc_pt_flow_new(NULL, NULL, 0, &ops2, &e);
		CHECK(d && d2);
		if (d && d2) {
			CHECK_INT(tc_pt_flow_feed(d, buf, (size_t)len, 0, &e), 0);
			pauses = feed_stepwise(d2, buf, (size_t)len, 0);
			CHECK(pauses >= 4);
			CHECK(f.recs.n >= 12);
			CHECK(count_type(&f.recs, TC_REC_ERROR) == 1);
			CHECK(same_records(&f.recs, &f2.recs));
			/* The first run's first taken branch comes before its mid-flow TSC: with
			 * ticks it and its range keep time 1000, the next range has 1500 (the
			 * decoder's own time has read ahead to 1500 for both). */
			for (size_t i = 0; i < f.recs.n; i++)
				at1500 += f.recs.v[i].r.time == 1500;
			if (ticks && f.recs.n >= 4)
				CHECK(f.recs.v[1].r.type == TC_REC_RANGE && f.recs.v[1].r.time == 1000 &&
				      f.recs.v[2].r.type == TC_REC_BRANCH && f.recs.v[2].r.time == 1000 &&
				      f.recs.v[3].r.time == 1500);
			printf("#   ticks %d: %zu records, %zu pauses, %zu at time 1500\n", ticks,
			       f.recs.n, pauses, at1500);
		}
		tc_pt_flow_free(d);
		tc_pt_flow_free(d2);
		free(f.recs.v);
		free(f2.recs.v);
	}
}

TEST(pt_hostile_truncated)
{
	struct flow_ctx f = { 0 };
	struct tc_pt_flow_ops ops = flow_ops(&f);
	struct tc_err e = { 0 };
	struct tc_pt_flow *d = tc_pt_flow_new(NULL, NULL, 0, &ops, &e);
	uint8_t full[256], *cuts[257] = { 0 };	/* kept while the flow is (pt_flow.h) */
	int n = build_stream(full, sizeof(full), CODE_BASE);
	size_t bad = 0, truncated = 0;

	CHECK(d && n > 0);
	if (!d || n <= 0)
		return;
	/* Every cut of the hand-built stream: never more records than the whole gives. */
	for (int cut = 0; cut <= n; cut++) {
		uint8_t *b = cuts[cut] = malloc(cut ? (size_t)cut : 1);	/* exact size for ASan */
		struct precs l = { 0 };
		struct tc_pt_packets_stats st = { 0 };

		memcpy(b, full, (size_t)cut);
		f.recs.n = 0;
		CHECK_INT(tc_pt_flow_feed(d, b, (size_t)cut, 0, &e), 0);
		bad += bad_offsets(&f.recs, 0, (size_t)cut);
		bad += f.recs.n > 12;
		CHECK_INT(tc_pt_packets_decode(NULL, b, (size_t)cut, 0, 0, collect, &l, &st, &e),
			  0);
		bad += bad_offsets(&l, 0, (size_t)cut);
		/* A packet cut off by the end is an error at its offset. */
		for (size_t i = 0; i < l.n; i++)
			truncated += l.v[i].r.type == TC_REC_ERROR && strstr(l.v[i].text, "truncated");
		free(l.v);
	}
	CHECK_INT(bad, 0);
	CHECK(truncated > 10);
	tc_pt_flow_free(d);
	for (int cut = 0; cut <= n; cut++)
		free(cuts[cut]);
	free(f.recs.v);
}

/* The real recording with no images at all: every PSB gives a sync and then a no-image
 * stop; the packet listing of truncated real buffers ends in an error at the cut. */
TEST(pt_hostile_real_trace)
{
	struct flow_ctx f = { .no_image = true };
	struct tc_pt_flow_ops ops = flow_ops(&f);
	struct tc_perf_data *pd;
	struct tc_perf_data_record r;
	struct tc_err e = { 0 };
	struct tc_pt_setup s;
	size_t bad = 0, nbuf = 0, cut_errors = 0, cuts = 0;
	uint64_t psbs = 0;

	if (!td(IPT))
		SKIP("no test data");
	CHECK_INT(tc_perf_data_open(&pd, td(IPT), &e), 0);
	if (!pd)
		return;
	memset(&s, 0, sizeof(s));
	pt_config_init(&s.cfg);
	while (tc_perf_data_next(pd, &r, &e) > 0) {
		if (r.type == TC_PERF_DATA_AUXTRACE_INFO) {
			CHECK_INT(
				tc_pt_config_from_perf_data(&s, pd, r.u.auxtrace_info.intel_pt, &e),
				0);
		} else if (r.type == TC_PERF_DATA_AUXTRACE) {
			uint64_t off = r.offset + r.size;
			size_t len = r.u.auxtrace.size;
			struct tc_pt_flow *d =
				tc_pt_flow_new(&s.cfg, &s.tc, (int)r.u.auxtrace.cpu, &ops, &e);

			CHECK(d != NULL);
			if (!d)
				continue;
			f.recs.n = 0;
			CHECK_INT(tc_pt_flow_feed(d, r.u.auxtrace.data, len, off, &e), 0);
			bad += bad_offsets(&f.recs, off, len);
			psbs += tc_pt_flow_stats(d)->syncs;
			CHECK(tc_pt_flow_stats(d)->nomap >= 1);
			CHECK_INT(tc_pt_flow_stats(d)->insns, 0);
			tc_pt_flow_free(d);
			nbuf++;

			for (size_t cut = 1; cut < len; cut += 997 + cut / 3) {
				struct precs l = { 0 };
				uint8_t *b = malloc(cut);

				memcpy(b, r.u.auxtrace.data, cut);
				CHECK_INT(tc_pt_packets_decode(&s.cfg, b, cut, off, 0, collect, &l,
							       NULL, &e),
					  0);
				bad += bad_offsets(&l, off, cut);
				cuts++;
				if (l.n && l.v[l.n - 1].r.type == TC_REC_ERROR)
					cut_errors++;
				free(l.v);
				free(b);
			}
		}
	}
	tc_perf_data_close(pd);
	CHECK_INT(nbuf, 2);
	CHECK_INT(bad, 0);
	/* libipt's sync points are PSBs; it finds all ten the README counts. */
	CHECK_INT(psbs, 10);
	printf("#   %zu cuts of the real buffers, %zu end in a truncated-packet error\n", cuts,
	       cut_errors);
	CHECK(cut_errors > 0);
	free(f.recs.v);
}

/* OVF in the middle of the loop: a LOST record, and the flow picks up at the FUP. */
TEST(pt_flow_overflow)
{
	static const struct want tail[] = {
		{ TC_REC_LOST, 0, 0, 0, 0 },
		{ TC_REC_BRANCH, 0, 0x400011, 0, 0 },
		{ TC_REC_RANGE, 0x400011, 0x400013, 2, TC_INSN_RET },
		{ TC_REC_BRANCH, 0x400012, 0x40000e, 0, 0 },
		{ TC_REC_RANGE, 0x40000e, 0x400011, 2, TC_INSN_JUMP },
		{ TC_REC_BRANCH, 0x40000f, 0, 0, 0 },
	};
	struct flow_ctx f = { 0 };
	struct tc_pt_flow_ops ops = flow_ops(&f);
	struct tc_err e = { 0 };
	struct tc_pt_flow *d = tc_pt_flow_new(NULL, NULL, 0, &ops, &e);
	struct pt_packet p[10];
	uint8_t buf[256];
	size_t n = 0, lost = 0;
	int len;

	p[n++] = pkt(ppt_psb);
	p[n++] = pkt(ppt_psbend);
	n = enter(p, n, CODE_BASE, 1, 1);
	p[n++] = pkt(ppt_ovf);
	p[n++] = ip_pkt(ppt_fup, pt_ipc_sext_48, 0x400011);
	/* The return stack is gone after the overflow: an uncompressed return. */
	p[n++] = ip_pkt(ppt_tip, pt_ipc_sext_48, 0x40000e);
	p[n++] = ip_pkt(ppt_tip_pgd, pt_ipc_suppressed, 0);
	len = encode_pt(buf, sizeof(buf), p, n);
	CHECK(d && len > 0);
	if (!d || len <= 0)
		return;
	CHECK_INT(tc_pt_flow_feed(d, buf, (size_t)len, 0, &e), 0);
	for (size_t i = 0; i < f.recs.n; i++)
		lost += f.recs.v[i].r.type == TC_REC_LOST;
	CHECK_INT(lost, 1);
	CHECK_INT(tc_pt_flow_stats(d)->overflows, 1);
	CHECK_INT(tc_pt_flow_stats(d)->errors, 0);
	CHECK(f.recs.n >= 6);
	if (f.recs.n >= 6) {
		struct precs t = { f.recs.v + f.recs.n - 6, 6, 6 };

		check_flow(&t, tail, 6);
	}
	/* Before the OVF: trace start and the first time round the loop. libipt reports the
	 * overflow before the instruction after the taken jne, so that branch stops at 0. */
	{
		static const struct want head[] = {
			{ TC_REC_BRANCH, 0, 0x400000, 0, 0 },
			{ TC_REC_RANGE, 0x400000, 0x400009, 4, TC_INSN_JUMP },
			{ TC_REC_BRANCH, 0x400007, 0, 0, 0 },
		};
		struct precs h = { f.recs.v, f.recs.n < 3 ? f.recs.n : 3, 3 };

		CHECK_INT(f.recs.n, 9);
		check_flow(&h, head, 3);
	}
	tc_pt_flow_free(d);
	free(f.recs.v);
}

/* The fast path's record skipping and the reference (pt_flow.h): skip drops records of a type
 * (the statistics still count them), the reference makes every record, the same ones. */
TEST(pt_flow_skip_and_reference)
{
	struct flow_ctx all = { 0 }, ranges = { 0 }, ref = { 0 };
	struct tc_err e = { 0 };
	uint8_t buf[256];
	int n = build_stream(buf, sizeof(buf), CODE_BASE);
	struct flow_ctx *fs[] = { &all, &ranges, &ref };

	CHECK(n > 0);
	if (n <= 0)
		return;
	for (size_t i = 0; i < 3; i++) {
		struct tc_pt_flow_ops ops = flow_ops(fs[i]);
		struct tc_pt_flow *d;

		ops.skip = i == 0 ? 0 : 1u << TC_REC_BRANCH;
		ops.reference = i == 2;
		d = tc_pt_flow_new(NULL, NULL, 2, &ops, &e);
		CHECK(d != NULL);
		if (!d)
			continue;
		CHECK_INT(tc_pt_flow_feed(d, buf, (size_t)n, 0x1000, &e), 0);
		CHECK_INT(tc_pt_flow_stats(d)->ranges, 5);
		CHECK_INT(tc_pt_flow_stats(d)->branches, 6);
		tc_pt_flow_free(d);
	}
	CHECK_INT(all.recs.n, 11);
	CHECK_INT(ranges.recs.n, 5);
	CHECK_INT(ref.recs.n, 11);
	for (size_t i = 0, j = 0; i < all.recs.n && i < ref.recs.n; i++) {
		const struct tc_rec *a = &all.recs.v[i].r, *b = &ref.recs.v[i].r;

		CHECK(a->type == b->type && a->start == b->start && a->end == b->end &&
		      a->insns == b->insns && a->offset == b->offset && a->last_type == b->last_type &&
		      a->last_size == b->last_size && a->last_taken == b->last_taken);
		if (a->type != TC_REC_RANGE || j >= ranges.recs.n)
			continue;
		b = &ranges.recs.v[j++].r;
		CHECK(b->type == TC_REC_RANGE && a->start == b->start && a->end == b->end &&
		      a->insns == b->insns && a->offset == b->offset);
	}
	free(all.recs.v);
	free(ranges.recs.v);
	free(ref.recs.v);
}

/* x86 facts from Zydis (lib/isa/x86.c): lengths and kinds of the control transfers the
 * decoders and the emulator tell apart, prefixes, VEX, 32-bit code, short buffers. */
TEST(x86_lengths_and_kinds)
{
	static const struct {
		const char *what;
		uint8_t b[16];
		size_t n;
		bool long_mode;
		enum tc_x86_kind kind;
		unsigned len, opcode;
	} t[] = {
		{ "call rel32", { 0xe8, 1, 2, 3, 4 }, 16, true, TC_X86_CALL, 5, 0 },
		{ "call rel32, short", { 0xe8, 1, 2, 3 }, 4, true, TC_X86_OTHER, 0, 0 },
		{ "jmp rel8", { 0xeb, 5 }, 16, true, TC_X86_JMP, 2, 0 },
		{ "jmp rel32", { 0xe9, 0, 1, 0, 0 }, 16, true, TC_X86_JMP, 5, 0 },
		{ "call *%rax", { 0xff, 0xd0 }, 16, true, TC_X86_ICALL, 2, 0 },
		{ "call *%r12", { 0x41, 0xff, 0xd4 }, 16, true, TC_X86_ICALL, 3, 1 },
		{ "jmp *%rax", { 0xff, 0xe0 }, 16, true, TC_X86_IJMP, 2, 0 },
		{ "notrack jmp *(%rax)", { 0x3e, 0xff, 0x20 }, 16, true, TC_X86_IJMP, 3, 1 },
		{ "ljmp *(%rax)", { 0xff, 0x28 }, 16, true, TC_X86_FAR_JMP, 2, 0 },
		{ "lcall *(%rax)", { 0xff, 0x18 }, 16, true, TC_X86_FAR_CALL, 2, 0 },
		{ "jne rel32", { 0x0f, 0x85, 0, 1, 0, 0 }, 16, true, TC_X86_JCC, 6, 0 },
		{ "je rel8", { 0x74, 0x10 }, 16, true, TC_X86_JCC, 2, 0 },
		{ "jrcxz", { 0xe3, 0x10 }, 16, true, TC_X86_JCC, 2, 0 },
		{ "loop", { 0xe2, 0xfe }, 16, true, TC_X86_JCC, 2, 0 },
		{ "ret", { 0xc3 }, 16, true, TC_X86_RET, 1, 0 },
		{ "rep ret", { 0xf3, 0xc3 }, 16, true, TC_X86_RET, 2, 1 },
		{ "ret $8", { 0xc2, 8, 0 }, 16, true, TC_X86_RET, 3, 0 },
		{ "iretq", { 0x48, 0xcf }, 16, true, TC_X86_FAR_RET, 2, 1 },
		{ "lret", { 0xcb }, 16, true, TC_X86_FAR_RET, 1, 0 },
		{ "syscall", { 0x0f, 0x05 }, 16, true, TC_X86_SYSCALL, 2, 0 },
		{ "sysenter", { 0x0f, 0x34 }, 16, false, TC_X86_SYSCALL, 2, 0 },
		{ "sysret", { 0x0f, 0x07 }, 16, true, TC_X86_SYSRET, 2, 0 },
		{ "int3", { 0xcc }, 16, true, TC_X86_INT, 1, 0 },
		{ "int $0x80", { 0xcd, 0x80 }, 16, false, TC_X86_INT, 2, 0 },
		{ "into (32-bit)", { 0xce }, 16, false, TC_X86_INTO, 1, 0 },
		{ "ud2", { 0x0f, 0x0b }, 16, true, TC_X86_UD2, 2, 0 },
		{ "movabs $imm64, %rax", { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 }, 16, true,
		  TC_X86_OTHER, 10, 1 },
		{ "nopw 0(%rax,%rax)", { 0x66, 0x0f, 0x1f, 0x44, 0, 0 }, 16, true, TC_X86_OTHER, 6,
		  1 },
		{ "vzeroupper", { 0xc5, 0xf8, 0x77 }, 16, true, TC_X86_OTHER, 3, 0 },
		{ "vpbroadcastd (%rdi), %ymm0", { 0xc4, 0xe2, 0x7d, 0x58, 0x07 }, 16, true,
		  TC_X86_OTHER, 5, 0 },
		{ "dec %eax (32-bit)", { 0x48, 0xc3 }, 16, false, TC_X86_OTHER, 1, 0 },
		{ "ljmp $0x10, $0 (32-bit)", { 0xea, 0, 0, 0, 0, 0x10, 0 }, 16, false,
		  TC_X86_FAR_JMP, 7, 0 },
		{ "lcall $0x10, $0 (32-bit)", { 0x9a, 0, 0, 0, 0, 0x10, 0 }, 16, false,
		  TC_X86_FAR_CALL, 7, 0 },
		{ "nothing", { 0 }, 0, true, TC_X86_OTHER, 0, 0 },
	};
	struct tc_x86 *x = tc_x86_new();

	CHECK(x != NULL);
	if (!x)
		return;
	/* twice: the second time from the memo */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
			struct tc_x86_insn k = tc_x86_classify(x, t[i].b, t[i].n, t[i].long_mode);

			if (k.kind != t[i].kind || k.len != t[i].len || k.opcode != t[i].opcode)
				printf("#   %s: kind %d len %u opcode %u, expected %d %u %u\n",
				       t[i].what, k.kind, k.len, k.opcode, t[i].kind, t[i].len,
				       t[i].opcode);
			CHECK(k.kind == t[i].kind && k.len == t[i].len && k.opcode == t[i].opcode);
			CHECK_INT(tc_x86_len(x, t[i].b, t[i].n, t[i].long_mode), t[i].len);
		}
	}
	tc_x86_free(x);
}
