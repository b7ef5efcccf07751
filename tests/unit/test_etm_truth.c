/* Ground truth for the ETMv4 encoder: a real aarch64 program's executed path, from
 * `qemu-aarch64 -d exec,nochain`, becomes blocks (lib/emulate/qemu_exec), ETMv4 trace per run
 * (lib/emulate/etm4_enc, one trace ID each) and one formatted sink buffer (lib/emulate/cs_formatter); OpenCSD's
 * trc_pkt_lister decodes the snapshot, and its instruction ranges must be the executed blocks,
 * exactly and in order, per trace ID. */
#include "tests/unit/tc_test.h"

#include "decoders/coresight/cs_frame.h"
#include "lib/emulate/cs_formatter.h"
#include "lib/images/elf.h"
#include "lib/isa/a64.h"
#include "lib/emulate/etm4_enc.h"
#include "lib/emulate/qemu_exec.h"
#include "tests/unit/etm_snap.h"

#include <inttypes.h>
#include <stdint.h>
#include <time.h>

#define NRUN 4

struct range {
	uint64_t start, end;	/* end: after the last instruction */
	char atom;		/* 'E' or 'N' */
};

struct ranges {
	struct range *v;
	size_t n, cap;
};

static void ranges_add(struct ranges *r, uint64_t start, uint64_t end, char atom)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 1024;
		r->v = realloc(r->v, r->cap * sizeof(*r->v));
	}
	r->v[r->n++] = (struct range){ start, end, atom };
}

struct run {
	uint8_t id;
	const char *arg;
	uint64_t *tbs;		/* TB starts from the exec log */
	size_t ntbs, next;
	struct tc_qemu_exec *q;
	struct tc_etm4_enc *enc;
	struct ranges want, got;
	struct ranges ours;	/* `tracectl decode -i` of the same snapshot */
	bool filter;		/* trace only the fixture's own code (gaps: TRACE_ON) */
	size_t nindirect;	/* blocks ending in an indirect branch */
	uint64_t sink_bytes;	/* this ID's bytes as cs_frame deformats the sink buffer */
	size_t nblocks, inject_at;	/* an IRQ is taken in block inject_at (if nonzero) */
	size_t ctx_at;		/* CONTEXTIDR becomes 0x4242 before block ctx_at (if nonzero) */
	size_t got_ctx;		/* OpenCSD's context elements with 0x4242 */
	bool injected;
	uint64_t exc_ret;	/* the injected exception's preferred return address */
	size_t got_exc;		/* OpenCSD's exception elements with that address, IRQ */
	uint64_t lo, hi;
};

static struct tc_elf *elf;

static size_t read_code(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	return tc_elf_read_vaddr(elf, addr, buf, len);
}

static int on_block(void *ctx, const struct tc_etm4_enc_block *b, struct tc_err *e)
{
	struct run *r = ctx;

	if (b->end == TC_ETM4_END_NONE && r->next < r->ntbs)
		printf("#   ID 0x%02x: block %" PRIx64 "-%" PRIx64 " without a waypoint (TB %zu of %zu)\n",
		       r->id, b->start, b->last, r->next, r->ntbs);
	if (r->filter && (b->start < r->lo || b->start >= r->hi))
		return 0;
	r->nblocks++;
	if (r->ctx_at && r->nblocks == r->ctx_at) {
		struct tc_etm4_enc_block c = { .start = b->start, .end = TC_ETM4_END_CONTEXT,
					   .ctxid = 0x4242 };

		if (tc_etm4_enc_block(r->enc, &c, e))
			return -1;
	}
	if (r->inject_at && r->nblocks >= r->inject_at && !r->injected &&
	    b->end != TC_ETM4_END_NONE && b->last >= b->start + 8) {
		/* An interrupt after two instructions; the handler is where the block went. */
		struct tc_etm4_enc_block x = *b;

		x.end = TC_ETM4_END_EXCEPTION;
		x.exc_type = 0xe;
		x.exc_ret = b->start + 8;
		r->injected = true;
		ranges_add(&r->want, b->start, b->start + 8, 'E');
		r->exc_ret = x.exc_ret;
		return tc_etm4_enc_block(r->enc, &x, e);
	}
	r->nindirect += b->end == TC_ETM4_END_INDIRECT;
	if (b->end == TC_ETM4_END_TAKEN || b->end == TC_ETM4_END_INDIRECT)
		ranges_add(&r->want, b->start, b->last + 4, 'E');
	else if (b->end == TC_ETM4_END_NOT_TAKEN)
		ranges_add(&r->want, b->start, b->last + 4, 'N');
	return tc_etm4_enc_block(r->enc, b, e);
}

static int load_log(struct run *r, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	size_t cap = 0;
	uint64_t pc;
	unsigned cpu;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!tc_qemu_exec_parse_line(line, &cpu, &pc))
			continue;
		if (cpu != 0) {		/* the fixture has one thread */
			fclose(f);
			return -2;
		}
		if (r->ntbs == cap) {
			cap = cap ? cap * 2 : 4096;
			r->tbs = realloc(r->tbs, cap * sizeof(*r->tbs));
		}
		r->tbs[r->ntbs++] = pc;
	}
	fclose(f);
	return 0;
}

/* "Idx:N; ID:10; OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0xS:[0xE] num_i(n) last_sz(4)
 * (ISA=A64) E BR  )" lines into per-ID ranges; returns lines that look like errors. */
static int parse_ranges(const char *log, struct run *runs, int nrun)
{
	int errors = 0;

	for (const char *p = log; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[512];
		unsigned id;
		unsigned long long s, en;
		const char *isa;

		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, p, len);
		line[len] = 0;
		if (strstr(line, "ERROR") || strstr(line, "Error") || strstr(line, "BAD_") ||
		    (strstr(line, "NO_SYNC") && !strstr(line, "[init-decoder]")) || strstr(line, "ADDR_NACC") ||
		    strstr(line, "I_RESERVED") || strstr(line, "I_INCOMPLETE")) {
			if (errors++ < 5)
				printf("#   trc_pkt_lister: %s\n", line);
			continue;
		}
		unsigned num;

		if (sscanf(line, "Idx:%*u; ID:%x; OCSD_GEN_TRC_ELEM_PE_CONTEXT(", &id) == 1 &&
		    strstr(line, "CTXTID=0x4242;")) {
			for (int i = 0; i < nrun; i++)
				runs[i].got_ctx += runs[i].id == id;
			continue;
		}

		if (sscanf(line, "Idx:%*u; ID:%x; OCSD_GEN_TRC_ELEM_EXCEPTION(pref ret addr:%llx; "
			   "excep num (%x)", &id, &s, &num) == 3) {
			for (int i = 0; i < nrun; i++)
				if (runs[i].id == id && runs[i].exc_ret == s && num == 0xe)
					runs[i].got_exc++;
			continue;
		}
		if (sscanf(line, "Idx:%*u; ID:%x; OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=%llx:[%llx]",
			   &id, &s, &en) != 3)
			continue;
		isa = strstr(line, "(ISA=A64) ");
		for (int i = 0; i < nrun; i++)
			if (runs[i].id == id)
				ranges_add(&runs[i].got, s, en, isa ? isa[10] : '?');
	}
	return errors;
}

struct demux {
	struct run *runs;
	uint8_t last_id;
	size_t switches;
};

static void on_data(void *ctx, uint8_t id, const uint8_t *data, size_t len, uint64_t off)
{
	struct demux *d = ctx;

	(void)data;
	(void)off;
	d->switches += id != d->last_id;
	d->last_id = id;
	for (int i = 0; i < NRUN; i++)
		if (d->runs[i].id == id)
			d->runs[i].sink_bytes += len;
}

/* Our own decoder on the snapshot, when the test runs with tracectl built: its lines
 * "IDX  id 0xNN cpu N  range     0xS-0xE COUNT A64 E". Returns 0, 1 without $TRACECTL (run
 * outside tests/run.sh), or -1 if it failed. */
static int tracectl_ranges(const char *dir, struct run *runs, int nrun)
{
	const char *tc = getenv("TRACECTL");
	char cmd[2048], line[512];
	FILE *p;

	if (!tc)
		return 1;
	snprintf(cmd, sizeof(cmd), "'%s' decode -i '%s' 2>/dev/null", tc, dir);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		unsigned id;
		unsigned long long s, en;
		char atom;

		if (sscanf(line, "%*s id %x cpu %*d range %llx-%llx %*u A64 %c", &id, &s, &en,
			   &atom) != 4)
			continue;
		for (int i = 0; i < nrun; i++)
			if (runs[i].id == id)
				ranges_add(&runs[i].ours, s, en, atom);
	}
	return pclose(p) == 0 ? 0 : -1;
}

static size_t same_prefix(const struct ranges *a, const struct ranges *b)
{
	size_t n = 0;

	while (n < a->n && n < b->n && a->v[n].start == b->v[n].start &&
	       a->v[n].end == b->v[n].end && a->v[n].atom == b->v[n].atom)
		n++;
	return n;
}

static int sh(const char *fmt, const char *a, const char *b, const char *c)
{
	char cmd[16384];

	snprintf(cmd, sizeof(cmd), fmt, a, b, c);
	return system(cmd);
}

static uint64_t sym_addr(const char *name)
{
	/* The fixture's own functions lie between these two symbols' neighbours; a linear
	 * search over the segment is enough for a test. */
	size_t n;
	const struct tc_elf_seg *segs = tc_elf_segments(elf, &n);
	uint64_t off;

	for (size_t i = 0; i < n; i++) {
		if (!segs[i].exec)
			continue;
		for (uint64_t a = segs[i].vaddr; a < segs[i].vaddr + segs[i].filesz; a += 4) {
			const char *s = tc_elf_symbol(elf, a, &off);

			if (s && !off && !strcmp(s, name))
				return a;
		}
	}
	return 0;
}

TEST(qemu_path_decodes_exactly)
{
	static const char *args[NRUN] = { "7", "12", "30", "9" };
	static const uint8_t ids[NRUN] = { 0x10, 0x11, 0x12, 0x13 };
	char dir[] = "/tmp/tc-etmtruth-XXXXXX", path[1024], prog[1024];
	const char *top = getenv("TOP") ? getenv("TOP") : ".";
	struct run runs[NRUN];
	struct tc_err e = { 0 };
	struct tc_cs_formatter *fmt;
	struct snap_dump dumps[8];
	uint8_t *dump_mem[8];
	int ndumps = 0;

	if (!have_cmd("qemu-aarch64") || !have_cmd("aarch64-linux-gnu-gcc") ||
	    !have_cmd("trc_pkt_lister"))
		SKIP("needs qemu-aarch64 (qemu-user), gcc-aarch64-linux-gnu, trc_pkt_lister");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(prog, sizeof(prog), "%s/paths", dir);
	snprintf(path, sizeof(path), "%s/tests/fixtures/etm/paths.c", top);
	if (sh("aarch64-linux-gnu-gcc -O2 -static -o '%s' '%s'%s", prog, path, "")) {
		CHECK(!"cross compile failed");
		return;
	}
	elf = tc_elf_open(prog, &e);
	CHECK(elf != NULL);
	if (!elf)
		return;

	memset(runs, 0, sizeof(runs));
	for (int i = 0; i < NRUN; i++) {
		struct tc_etm4_cfg cfg = { .ctxid = 1000 + i, .sync_period = i == 3 ? 128 : 256u << i };

		runs[i].id = ids[i];
		runs[i].arg = args[i];
		snprintf(path, sizeof(path), "%s/exec%d.log", dir, i);
		/* The exit status is the program's result; the log is what counts. */
		sh("qemu-aarch64 -d exec,nochain -D '%s' '%s' %s >/dev/null", path, prog, args[i]);
		CHECK_INT(load_log(&runs[i], path), 0);
		CHECK(runs[i].ntbs > 1000);
		runs[i].enc = tc_etm4_enc_new(&cfg, &e);
		runs[i].q = tc_qemu_exec_new(read_code, on_block, &runs[i], &e);
	}
	/* The last run traces only main..pick-ish code: everything else is a gap. */
	runs[1].inject_at = 2000;
	runs[2].ctx_at = 3000;
	runs[3].filter = true;
	runs[3].lo = sym_addr("main");
	runs[3].hi = runs[3].lo + 0x1000;
	CHECK(runs[3].lo != 0);

	/* Feed the runs in random slices, so the sink interleaves IDs as real ETMs would. */
	fmt = tc_cs_formatter_new(&e);
	uint32_t rng = 1;
	struct timespec t0, t1;
	size_t total_tbs = 0;

	for (int i = 0; i < NRUN; i++)
		total_tbs += runs[i].ntbs;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int left = 0;

		for (int i = 0; i < NRUN; i++)
			left += runs[i].next < runs[i].ntbs;
		if (!left)
			break;
		rng = rng * 1103515245 + 12345;
		struct run *r = &runs[(rng >> 16) % NRUN];
		size_t k = 1 + (rng >> 8) % 40;
		const uint8_t *d;
		size_t n;

		for (; k && r->next < r->ntbs; k--)
			if (tc_qemu_exec_tb(r->q, r->tbs[r->next++], &e))
				break;
		if (r->next == r->ntbs) {
			CHECK_INT(tc_qemu_exec_end(r->q, &e), 0);
			CHECK_INT(tc_etm4_enc_flush(r->enc, &e), 0);
		}
		d = tc_etm4_enc_data(r->enc, &n);
		CHECK_INT(tc_cs_formatter_write(fmt, r->id, d, n, &e), 0);
		tc_etm4_enc_drain(r->enc, n);
	}
	CHECK_INT(tc_cs_formatter_flush(fmt, &e), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;

	printf("#   blocks + ETMv4 + formatter: %zu TBs in %.2f ms (%.1f M TBs/s)\n", total_tbs,
	       secs * 1e3, secs > 0 ? total_tbs / secs / 1e6 : 0.0);

	size_t nsegs;
	const struct tc_elf_seg *segs = tc_elf_segments(elf, &nsegs);

	for (size_t i = 0; i < nsegs && ndumps < 8; i++) {
		if (!segs[i].exec)
			continue;
		dump_mem[ndumps] = malloc(segs[i].filesz);
		dumps[ndumps] = (struct snap_dump){ segs[i].vaddr, dump_mem[ndumps],
						   tc_elf_read_vaddr(elf, segs[i].vaddr,
								     dump_mem[ndumps], segs[i].filesz) };
		ndumps++;
	}
	CHECK(ndumps > 0);

	size_t blen;
	const uint8_t *buf = tc_cs_formatter_data(fmt, &blen);

	/* The sink really interleaves the IDs, and our deformatter gets each one's bytes. */
	struct demux dm = { .runs = runs };
	struct tc_cs_frame *csf = tc_cs_frame_new(TC_CS_FRAME_MEM_ALIGN, on_data, NULL, &dm, &e);

	tc_cs_frame_feed(csf, buf, blen);
	tc_cs_frame_flush(csf);
	CHECK_INT(tc_cs_frame_stats(csf)->errors, 0);
	tc_cs_frame_free(csf);
	printf("#   sink buffer: %zu bytes, %zu trace ID switches\n", blen, dm.switches);
	CHECK(dm.switches > 100);

	CHECK_INT(snap_write(dir, buf, blen, ids, NRUN, dumps, ndumps), 0);
	char *log = snap_list(dir, "-decode");

	CHECK(log != NULL);
	if (log)
		CHECK_INT(parse_ranges(log, runs, NRUN), 0);
	int ours = tracectl_ranges(dir, runs, NRUN);

	if (ours > 0)
		printf("#   TRACECTL unset: tracectl decode -i not compared\n");
	CHECK(ours >= 0);
	for (int i = 0; i < NRUN; i++) {
		struct run *r = &runs[i];
		const struct tc_qemu_exec_stats *qs = tc_qemu_exec_stats(r->q);
		const struct tc_etm4_enc_stats *es = tc_etm4_enc_stats(r->enc);
		size_t same = 0;

		same = same_prefix(&r->want, &r->got);
		printf("#   ID 0x%02x (arg %s%s): %zu TBs -> %" PRIu64 " blocks, %" PRIu64
		       " continuations, %" PRIu64 " gaps, %zu indirect; ranges expected %zu, decoded %zu, "
		       "equal prefix %zu\n", r->id, r->arg, r->filter ? ", filtered" : "",
		       r->ntbs, qs->blocks, qs->continuations, qs->gaps, r->nindirect, r->want.n, r->got.n, same);
		printf("#     %" PRIu64 " bytes: atoms E %" PRIu64 " N %" PRIu64 " in %" PRIu64
		       " packets; addresses: match %" PRIu64 " short %" PRIu64 " long32 %" PRIu64
		       " long64 %" PRIu64 " addr+ctxt %" PRIu64 "; syncs %" PRIu64 " trace-on %"
		       PRIu64 "\n", es->bytes, es->atoms_e, es->atoms_n, es->atom_packets,
		       es->addr_match, es->addr_short, es->addr_long32, es->addr_long64,
		       es->addr_ctxt, es->syncs, es->trace_ons);
		if (same < r->want.n && same < r->got.n)
			printf("#     first difference: expected %" PRIx64 "-%" PRIx64 " %c, decoded %"
			       PRIx64 "-%" PRIx64 " %c\n", r->want.v[same].start, r->want.v[same].end,
			       r->want.v[same].atom, r->got.v[same].start, r->got.v[same].end,
			       r->got.v[same].atom);
		if (!ours) {
			printf("#     tracectl decode -i: %zu ranges, equal prefix %zu\n", r->ours.n,
			       same_prefix(&r->want, &r->ours));
			CHECK_INT(r->ours.n, r->want.n);
			CHECK_INT(same_prefix(&r->want, &r->ours), r->want.n);
		}
		free(r->ours.v);
		CHECK_INT(qs->gaps, 0);
		CHECK(r->want.n > (r->filter ? 300u : 5000u));
		CHECK_INT(r->got.n, r->want.n);
		CHECK_INT(same, r->want.n);
		CHECK_INT(r->got_exc, r->inject_at ? 1 : 0);
		/* Periodic syncs restate the context, so it may show again after the change. */
		CHECK(r->ctx_at ? r->got_ctx >= 1 : r->got_ctx == 0);
		CHECK_INT(r->sink_bytes, es->bytes);
		CHECK(r->nindirect > (r->filter ? 10u : 100u));
		CHECK_INT(es->exceptions, r->inject_at ? 1 : 0);
		if (r->filter)
			CHECK(es->trace_ons > 1);
		else
			CHECK_INT(es->trace_ons, 1);
		CHECK(es->syncs > 1);
		tc_qemu_exec_free(r->q);
		tc_etm4_enc_free(r->enc);
		free(r->tbs);
		free(r->want.v);
		free(r->got.v);
	}
	free(log);
	tc_cs_formatter_free(fmt);
	for (int i = 0; i < ndumps; i++)
		free(dump_mem[i]);
	tc_elf_close(elf);
	if (!getenv("KEEP"))
		CHECK_INT(sh("rm -rf '%s'%s%s", dir, "", ""), 0);
}

TEST(qemu_exec_lines_and_a64_classes)
{
	unsigned cpu = 99;
	uint64_t pc = 0, t = 0;

	CHECK_INT(tc_qemu_exec_parse_line(
			  "Trace 2: 0x7fe612200540 [0000000001009331/0000000000400828/"
			  "00000001/00000200] __libc_start_main\n",
			  &cpu, &pc),
		  1);
	CHECK_INT(cpu, 2);
	CHECK_INT(pc, 0x400828);
	CHECK_INT(tc_qemu_exec_parse_line("IN: main\n", &cpu, &pc), 0);
	CHECK_INT(tc_qemu_exec_parse_line("Trace 0: 0x7fe612200540 garbled\n", NULL, &pc), 0);

	/* Encodings as objdump shows them. */
	CHECK_INT(tc_a64_classify(0x97fffcc8, 0x400f90, &t), TC_A64_BRANCH);	/* bl 4002b0 */
	CHECK_INT(t, 0x4002b0);
	CHECK_INT(tc_a64_classify(0x94007214, 0x400fa0, &t), TC_A64_BRANCH);	/* bl 41d7f0 */
	CHECK_INT(t, 0x41d7f0);
	CHECK_INT(tc_a64_classify(0x54ffffa1, 0x1000, &t), TC_A64_COND);	/* b.ne -0xc */
	CHECK_INT(t, 0xff4);
	CHECK_INT(tc_a64_classify(0xb4000040, 0x1000, &t), TC_A64_COND);	/* cbz x0, +8 */
	CHECK_INT(t, 0x1008);
	CHECK_INT(tc_a64_classify(0x37080040, 0x1000, &t), TC_A64_COND);	/* tbnz w0, #1, +8 */
	CHECK_INT(t, 0x1008);
	CHECK_INT(tc_a64_classify(0xd61f0200, 0, &t), TC_A64_INDIRECT);	/* br x16 */
	CHECK_INT(tc_a64_classify(0xd63f0060, 0, &t), TC_A64_INDIRECT);	/* blr x3 */
	CHECK_INT(tc_a64_classify(0xd65f03c0, 0, &t), TC_A64_INDIRECT);	/* ret */
	CHECK_INT(tc_a64_classify(0xd65f0bff, 0, &t), TC_A64_INDIRECT);	/* retaa */
	CHECK_INT(tc_a64_classify(0xd5033fdf, 0, &t), TC_A64_ISB);		/* isb */
	CHECK_INT(tc_a64_classify(0xd4000001, 0, &t), TC_A64_TB_END);	/* svc #0 */
	CHECK_INT(tc_a64_classify(0xd51bd053, 0, &t), TC_A64_TB_END);	/* msr tpidr_el0, x19 */
	CHECK_INT(tc_a64_classify(0xd503201f, 0, &t), TC_A64_OTHER);	/* nop */
	CHECK_INT(tc_a64_classify(0x91006360, 0, &t), TC_A64_OTHER);	/* add x0, x27, #0x18 */
}
