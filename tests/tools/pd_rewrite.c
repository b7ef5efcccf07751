/* pd_rewrite: read a perf.data file with lib/perfdata/perf_data and write it again with
 * lib/perfdata/perf_write, rebuilding every record the writer has a helper for (side-band,
 * AUX, AUXTRACE, CS_ETM and Intel PT info) from the parsed fields and copying the rest.
 * `perf report -D` of both files must then show the same records (tests/e2e/t41).
 *
 *   pd_rewrite [-s BYTES [-G]] [-T BYTES] [-O | -R] [-P CR3] [-M N@BYTES] IN OUT
 *
 * -s: each AUXTRACE buffer written as consecutive buffers of at most BYTES (their aux
 * offsets following on), as perf writes a queue's trace in pieces when the AUX ring wraps:
 * for decoders fed one queue in several buffers (tests/e2e/t73-pt-fast, t81-pt-stream).
 * -G (with -s): each of those buffers' AUX offset one past where the one before ended, as
 * if a byte of trace were lost between them: the stream is broken there.
 * -T: Intel PT given time as perf records it by default (tsc, mtc, mtc_period=3): the
 * config gets the TSC and MTC bits, the info a CTC ratio of 2 and perf time = TSC, and
 * each AUXTRACE buffer's trace a TSC and a TMA in every PSB+ and an MTC (between packets)
 * every BYTES bytes of the trace read, the clock (for decoders' time paths: pt_skim.c).
 * Each AUXTRACE buffer's reference is the TSC at its end, as perf record's (rdtsc() when it
 * reads the buffer): perf 6.1 takes a TSC packet only against one (or an earlier time) and
 * crashes without (intel_pt_setup_queue walks on with no state, looking for a time).
 * The side-band gets times on the same clock (perf time = TSC): a thread's queues are
 * the epochs of its address space between execs, its last ones those with trace; FORK
 * and what comes before its first queue's epoch before all trace, a later epoch's COMM
 * and MMAPs in the gap (T_GAP) before that epoch's queue, ITRACE_START before its queue,
 * AUX and EXIT after it. Without this an exec, at its recorded logical time, came before
 * all trace and took the code of the trace before it (tracectl drops a thread's mappings
 * at an exec; perf keeps them). Per-thread files only (queues by tid).
 * -O (with -T): each thread's trace read is a clock of its own, all from the same start,
 * so that the threads' queues overlap in time as perf's per-CPU queues do (without it one
 * clock runs through the file: per-thread queues one after the other); decoders then
 * interleave them by time (pt_lanes.c). A thread's own queues stay one after the other.
 * -R (with -T): one clock, the queues on it in the reverse of the file's order (the last
 * to come first in time), so that their order by time is not the order they are found in
 * (pt_segment.c sorts them). For files whose queues are one buffer each.
 * -P: every PSB+ of Intel PT with a MODE.TSX (no transaction) after its PSB and a PIP of
 * CR3 (the same each time) before its PSBEND, as a real CPU's perf recording has them
 * (their status events: pt_skim.c, pt_flow.c).
 * -M (with -T): the Nth MMAP2 record (from 1) given the time the clock reads at BYTES of
 * its thread's first queue, as a library mapped while the program runs (dlopen): its code
 * has none before then (decoders' side-band by time: pt_segment.c's eras).
 *
 * Test tool only: it prints and exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "lib/perfdata/perf_data.h"
#include "lib/perfdata/perf_write.h"

static uint64_t split;	/* -s: AUXTRACE buffers of at most this many bytes; 0: as read */
static bool gaps;	/* -G: a byte lost before each (their AUX offsets) */
static uint64_t gap_n;	/* bytes lost so far */
static uint64_t timed;	/* -T: an MTC every this many bytes of trace; 0: as read */
static uint64_t paged;	/* -P: the CR3 of a PIP in every PSB+ (and a MODE.TSX); 0: none */

#define T_CFG_TSC (1ULL << 10)
#define T_CFG_MTC (1ULL << 9)
#define T_CFG_MTC_FREQ (0xfULL << 14)
#define T_MTC_FREQ 3

static uint64_t t_bytes;	/* trace read: the clock */
static bool t_own;		/* -O: each thread its own clock (t_thread.clock) */
static bool t_rev;		/* -R: the queues' places on the clock the other way round */
static uint64_t t_aux[256];	/* each queue's AUX offset so far */
static unsigned long late_n;	/* -M: this MMAP2 record (from 1) ... */
static uint64_t late_at;	/* ... at the clock's time at this many bytes of its first queue */
static unsigned long n_mmap2;

#define T_MAX 256
/* -T: the clock at each queue's start and end, a gap of T_GAP before each: 2^16 MTC
 * periods, 2^20 TSC ticks, more than perf 6.1's estimate of the time on return to user
 * space (intel-pt.c: 2 ticks for each instruction since the last timing packet) can run
 * ahead, so that perf too decodes a thread's queues one after the other. */
#define T_GAP (timed << 16)
static uint64_t t_qstart[T_MAX], t_qend[T_MAX], t_end;
static bool t_qseen[T_MAX];
static uint8_t t_qorder[T_MAX];	/* the queues as first found */
static unsigned t_nq;

/* A thread (an AUXTRACE tid) and its queues in the file's order. */
static struct t_thread {
	uint32_t tid;
	unsigned nq, execs;	/* its queues; its execs (COMM with exec) in the file */
	uint8_t q[T_MAX];
	unsigned seen_exec, seen_itrace, seen_aux;	/* so far, when writing */
	uint64_t clock;		/* -O: its trace read so far */
} t_thr[T_MAX];
static unsigned t_nthr;

static void die(const char *what, const struct tc_err *e);

static void put(uint8_t **o, size_t *n, size_t *cap, const void *p, size_t len)
{
	if (!len)
		return;
	if (*n + len > *cap) {
		*cap = (*n + len) * 2;
		if (!(*o = realloc(*o, *cap))) {
			fprintf(stderr, "pd_rewrite: out of memory\n");
			exit(2);
		}
	}
	memcpy(*o + *n, p, len);
	*n += len;
}

/* CTC ticks so far: 2^T_MTC_FREQ of them every `timed` bytes; the TSC is twice that. */
static uint64_t t_ctc(void)
{
	return t_bytes * (1u << T_MTC_FREQ) / timed;
}

/* The TSC at the clock's CTC: from 2^32 on (a 7-byte TSC packet's range), twice the CTC. */
static uint64_t t_tsc(uint64_t ctc)
{
	return (1ULL << 32) + 2 * ctc;
}

/* The TSC when the clock reads c bytes. */
static uint64_t t_time(uint64_t c)
{
	return t_tsc(c * (1u << T_MTC_FREQ) / timed);
}

static struct t_thread *t_find(uint32_t tid, bool add)
{
	for (unsigned i = 0; i < t_nthr; i++)
		if (t_thr[i].tid == tid)
			return &t_thr[i];
	if (!add)
		return NULL;
	if (t_nthr == T_MAX) {
		fprintf(stderr, "pd_rewrite: -T: more than %d threads\n", T_MAX);
		exit(2);
	}
	t_thr[t_nthr].tid = tid;
	return &t_thr[t_nthr++];
}

/* The clock for a buffer of queue q of thread th: at the queue's first buffer, after the
 * gap (first pass) or where the first pass put it. */
static uint64_t *t_clock(struct t_thread *th, uint32_t q, bool plan)
{
	uint64_t *clk = t_own ? &th->clock : &t_bytes;

	if (!t_qseen[q]) {
		t_qseen[q] = true;
		if (plan) {
			*clk += T_GAP;
			t_qstart[q] = *clk;
			t_qorder[t_nq++] = (uint8_t)q;
			if (th->nq < T_MAX)
				th->q[th->nq++] = (uint8_t)q;
		}
		*clk = t_qstart[q];
	}
	return clk;
}

/* First pass over IN: where each queue starts and ends on the clock, each thread's execs. */
static void t_plan(const char *in)
{
	struct tc_err e = { 0 };
	struct tc_perf_data *pd;
	struct tc_perf_data_record r;
	int n;

	if (tc_perf_data_open(&pd, in, &e))
		die(in, &e);
	while ((n = tc_perf_data_next(pd, &r, &e)) > 0) {
		if (r.type == TC_PERF_DATA_AUXTRACE) {
			uint32_t q = r.u.auxtrace.idx & (T_MAX - 1);
			uint64_t *clk = t_clock(t_find(r.u.auxtrace.tid, true), q, true);

			*clk += r.u.auxtrace.size;
			t_qend[q] = *clk;
			if (*clk > t_end)
				t_end = *clk;
		} else if (r.type == PERF_RECORD_COMM && r.u.comm.exec) {
			t_find(r.u.comm.tid, true)->execs++;
		}
	}
	if (n < 0)
		die(in, &e);
	tc_perf_data_close(pd);
	if (t_rev) {	/* the same lengths and gaps, the last found first */
		uint64_t clk = 0;

		for (unsigned i = t_nq; i-- > 0;) {
			uint8_t q = t_qorder[i];
			uint64_t len = t_qend[q] - t_qstart[q];

			clk += T_GAP;
			t_qstart[q] = clk;
			t_qend[q] = clk += len;
		}
	}
	t_bytes = 0;
	memset(t_qseen, 0, sizeof(t_qseen));
	for (unsigned i = 0; i < t_nthr; i++)
		t_thr[i].clock = 0;
}

/* The time of a side-band record of tid's address space epoch e (execs before it). */
static uint64_t t_epoch(uint32_t tid, unsigned e)
{
	const struct t_thread *th = t_find(tid, false);
	int first;

	if (!th || !th->nq)
		return t_tsc(0);
	first = (int)th->execs + 1 - (int)th->nq;	/* the epoch of its first queue */
	if ((int)e <= first)
		return t_tsc(0);
	for (unsigned j = 1; j < th->nq; j++)
		if (first + (int)j >= (int)e)
			return t_time(t_qstart[th->q[j]] - T_GAP / 2);
	return t_time(t_qend[th->q[th->nq - 1]] + T_GAP / 2);
}

/* Before (!after) or after the j-th queue of tid (its last if fewer), or all trace. */
static uint64_t t_queue(uint32_t tid, unsigned j, bool after)
{
	const struct t_thread *th = t_find(tid, false);

	if (!th || !th->nq)
		return after ? t_time(t_end + T_GAP / 2) : t_tsc(0);
	if (j >= th->nq)
		j = th->nq - 1;
	return after ? t_time(t_qend[th->q[j]] + T_GAP / 2)
		     : t_time(t_qstart[th->q[j]] - T_GAP / 2);
}

/* r's time on the trace's clock (-T), else as recorded. */
static uint64_t t_sb(const struct tc_perf_data_record *r)
{
	struct t_thread *th;

	if (!timed)
		return r->sid.time;
	switch (r->type) {
	case PERF_RECORD_COMM:
		th = t_find(r->u.comm.tid, false);
		if (th && r->u.comm.exec)
			th->seen_exec++;
		return t_epoch(r->u.comm.tid, th ? th->seen_exec : 0);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		th = t_find(r->u.mmap.tid, false);
		return t_epoch(r->u.mmap.tid, th ? th->seen_exec : 0);
	case PERF_RECORD_FORK:
		return t_tsc(0);
	case PERF_RECORD_EXIT:
		return t_queue(r->u.fork.tid, T_MAX, true);
	case PERF_RECORD_ITRACE_START:
		th = t_find(r->u.itrace_start.tid, false);
		return t_queue(r->u.itrace_start.tid, th ? th->seen_itrace++ : 0, false);
	case PERF_RECORD_AUX:
		th = t_find(r->sid.tid, false);
		return t_queue(r->sid.tid, th ? th->seen_aux++ : 0, true);
	}
	return r->sid.time;
}

/* The trace with timing packets (-T), PSB+s with MODE.TSX and PIP (-P); *len: its size. */
static uint8_t *retime(const uint8_t *in, size_t len, size_t *outn)
{
	struct pt_config cfg;
	struct pt_packet_decoder *pk;
	struct pt_packet pkt;
	uint8_t *o = NULL, b[8];
	size_t n = 0, cap = 0;
	uint64_t at = 0, off, mtc = 0;
	bool in_psb = false;
	int sz;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)in;
	cfg.end = (uint8_t *)in + len;
	if (!(pk = pt_pkt_alloc_decoder(&cfg)) || pt_pkt_sync_forward(pk) < 0 ||
	    pt_pkt_get_offset(pk, &off) < 0)
		off = len;
	put(&o, &n, &cap, in, off);
	t_bytes += off;
	at = off;
	while (pk && at < len && (sz = pt_pkt_next(pk, &pkt, sizeof(pkt))) > 0) {
		if (pkt.type == ppt_psbend && paged) {	/* PIP: NR 0, CR3 bits 51:5 */
			uint64_t pl = paged >> 5 << 1;

			b[0] = 0x02;
			b[1] = 0x43;
			for (int i = 0; i < 6; i++)
				b[2 + i] = (uint8_t)(pl >> (8 * i));
			put(&o, &n, &cap, b, 8);
		}
		put(&o, &n, &cap, in + at, (size_t)sz);
		at += (uint64_t)sz;
		t_bytes += (uint64_t)sz;
		if (pkt.type == ppt_psb && paged) {
			b[0] = 0x99;	/* MODE.TSX: not in a transaction */
			b[1] = 0x20;
			put(&o, &n, &cap, b, 2);
		}
		if (!timed)
			continue;
		if (pkt.type == ppt_psb) {
			uint64_t ctc = t_ctc(), tsc = t_tsc(ctc);

			b[0] = 0x19;
			for (int i = 0; i < 7; i++)
				b[1 + i] = (uint8_t)(tsc >> (8 * i));
			put(&o, &n, &cap, b, 8);
			b[0] = 0x02;
			b[1] = 0x73;
			b[2] = (uint8_t)ctc;
			b[3] = (uint8_t)(ctc >> 8);
			b[4] = b[5] = b[6] = 0;
			put(&o, &n, &cap, b, 7);
			mtc = ctc >> T_MTC_FREQ;
			in_psb = true;
			continue;
		}
		if (pkt.type == ppt_psbend)
			in_psb = false;
		if (!in_psb && t_ctc() >> T_MTC_FREQ != mtc) {
			mtc = t_ctc() >> T_MTC_FREQ;
			b[0] = 0x59;
			b[1] = (uint8_t)mtc;
			put(&o, &n, &cap, b, 2);
		}
	}
	put(&o, &n, &cap, in + at, len - at);	/* what the packet decoder did not take */
	t_bytes += len - at;
	if (pk)
		pt_pkt_free_decoder(pk);
	*outn = n;
	return o;
}

static void die(const char *what, const struct tc_err *e)
{
	fprintf(stderr, "pd_rewrite: %s: %s\n", what, e->msg);
	exit(2);
}

static struct tc_perf_write_sid sid_of(const struct tc_perf_data_record *r, uint64_t time)
{
	return (struct tc_perf_write_sid){ .pid = r->sid.pid,
					   .tid = r->sid.tid,
					   .time = time,
					   .id = r->sid.id,
					   .cpu = r->sid.cpu };
}

/* CS_ETM v1 with only ETMv4 blocks of 7 registers is what the helper writes. */
static int cs_etm(struct tc_perf_write *w, const struct tc_cs_etm_info *cs, bool *done,
		  struct tc_err *e)
{
	struct tc_perf_write_etmv4 *c;
	int rc;

	*done = false;
	if (cs->version != 1)
		return 0;
	for (uint32_t i = 0; i < cs->nr_cpus; i++)
		if (cs->cpus[i].arch != TC_CS_ETMV4 || cs->cpus[i].nr_params != 7)
			return 0;
	if (!(c = calloc(cs->nr_cpus + 1, sizeof(*c))))
		return tc_err_set(e, 12, "out of memory");
	for (uint32_t i = 0; i < cs->nr_cpus; i++) {
		const uint64_t *p = cs->cpus[i].params;

		c[i] = (struct tc_perf_write_etmv4){
			cs->cpus[i].cpu, p[0], p[1], p[2], p[3], p[4], p[5], p[6]
		};
	}
	rc = tc_perf_write_auxtrace_info_cs_etm(w, cs->pmu_type, cs->snapshot, c, cs->nr_cpus, e);
	free(c);
	*done = true;
	return rc;
}

static int one(struct tc_perf_write *w, const struct tc_perf_data_record *r, struct tc_err *e)
{
	uint64_t time = t_sb(r);
	struct tc_perf_write_sid sid = sid_of(r, time);
	bool done = false;
	uint64_t at;

	switch (r->type) {
	case PERF_RECORD_COMM:
		return tc_perf_write_comm(w, r->u.comm.pid, r->u.comm.tid, r->u.comm.comm,
					  r->u.comm.exec, &sid, e);
	case PERF_RECORD_MMAP2:
		if (++n_mmap2 == late_n) {
			const struct t_thread *th = t_find(r->u.mmap.tid, false);

			sid.time = t_time((th && th->nq ? t_qstart[th->q[0]] : 0) + late_at);
		}
		if (r->u.mmap.has_build_id)
			break;
		return tc_perf_write_mmap2(w,
					   &(struct tc_perf_write_mmap2){
						   r->u.mmap.pid, r->u.mmap.tid, r->u.mmap.start,
						   r->u.mmap.len, r->u.mmap.pgoff, r->u.mmap.maj,
						   r->u.mmap.min, r->u.mmap.ino,
						   r->u.mmap.ino_generation, r->u.mmap.prot,
						   r->u.mmap.flags, r->misc, r->u.mmap.filename },
					   &sid, e);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return tc_perf_write_fork(w, r->type == PERF_RECORD_EXIT, r->u.fork.pid,
					  r->u.fork.ppid, r->u.fork.tid, r->u.fork.ptid,
					  timed ? time : r->u.fork.time, &sid, e);
	case PERF_RECORD_ITRACE_START:
		return tc_perf_write_itrace_start(w, r->u.itrace_start.pid, r->u.itrace_start.tid,
						  &sid, e);
	case PERF_RECORD_AUX:
		return tc_perf_write_aux(w, r->u.aux.aux_offset, r->u.aux.aux_size, r->u.aux.flags,
					 &sid, e);
	case TC_PERF_DATA_AUXTRACE:
		if (timed || paged) {
			size_t n;
			uint8_t *t;
			uint64_t *aux = &t_aux[r->u.auxtrace.idx & 255], ref = r->u.auxtrace.reference;
			uint64_t *clk = NULL;
			int rc = 0;

			if (timed) {
				clk = t_clock(t_find(r->u.auxtrace.tid, true),
					      r->u.auxtrace.idx & (T_MAX - 1), false);
				t_bytes = *clk;
			}
			t = retime(r->u.auxtrace.data, r->u.auxtrace.size, &n);
			if (timed) {
				*clk = t_bytes;
				ref = t_tsc(t_ctc());	/* perf's: the TSC when it read the buffer */
			}

			at = 0;
			do {
				uint64_t k = n - at;

				if (split && k > split)
					k = split;
				rc = tc_perf_write_auxtrace(w, t + at, k, *aux + at + (gap_n += gaps),
							    ref,
							    r->u.auxtrace.idx, r->u.auxtrace.tid,
							    r->u.auxtrace.cpu, e);
				at += k;
			} while (!rc && at < n);
			*aux += n;
			free(t);
			return rc;
		}
		at = 0;
		do {	/* once for an empty buffer too */
			uint64_t n = r->u.auxtrace.size - at;

			if (split && n > split)
				n = split;
			if (tc_perf_write_auxtrace(w, r->u.auxtrace.data + at, n,
						   r->u.auxtrace.offset + at + (gap_n += gaps),
						   r->u.auxtrace.reference, r->u.auxtrace.idx,
						   r->u.auxtrace.tid, r->u.auxtrace.cpu, e))
				return -1;
			at += n;
		} while (at < r->u.auxtrace.size);
		return 0;
	case TC_PERF_DATA_AUXTRACE_INFO:
		if (r->u.auxtrace_info.cs_etm) {
			if (cs_etm(w, r->u.auxtrace_info.cs_etm, &done, e))
				return -1;
			if (done)
				return 0;
		} else if (r->u.auxtrace_info.intel_pt &&
			   r->u.auxtrace_info.intel_pt->nr == TC_IPT_PRIV_MAX) {
			const struct tc_intel_pt_info *p = r->u.auxtrace_info.intel_pt;
			uint64_t pw[TC_IPT_PRIV_MAX];

			memcpy(pw, p->w, sizeof(pw));
			if (timed) {
				pw[TC_IPT_TIME_SHIFT] = 0;
				pw[TC_IPT_TIME_MULT] = 1;
				pw[TC_IPT_TIME_ZERO] = 0;
				pw[TC_IPT_CAP_USER_TIME_ZERO] = 1;
				pw[TC_IPT_TSC_BIT] = T_CFG_TSC;
				pw[TC_IPT_MTC_BIT] = T_CFG_MTC;
				pw[TC_IPT_MTC_FREQ_BITS] = T_CFG_MTC_FREQ;
				pw[TC_IPT_TSC_CTC_N] = 2;
				pw[TC_IPT_TSC_CTC_D] = 1;
			}
			return tc_perf_write_auxtrace_info_intel_pt(w, pw, p->filter, e);
		}
		break;
	}
	return tc_perf_write_record(w, r->raw, r->size, e);
}

int main(int argc, char **argv)
{
	struct tc_err e = { 0 };
	struct tc_perf_data *pd;
	const struct tc_perf_data_features *f;
	struct tc_perf_data_record r;
	struct tc_perf_write *w;
	int n;

	for (;;) {
		if (argc >= 4 && (!strcmp(argv[1], "-O") || !strcmp(argv[1], "-G") ||
				  !strcmp(argv[1], "-R"))) {
			*(argv[1][1] == 'O' ? &t_own : argv[1][1] == 'R' ? &t_rev : &gaps) = true;
			argv++, argc--;
			continue;
		}
		if (argc >= 5 && !strcmp(argv[1], "-M")) {
			char *at;

			late_n = strtoul(argv[2], &at, 0);
			late_at = *at == '@' ? strtoull(at + 1, NULL, 0) : 0;
			argv += 2, argc -= 2;
			continue;
		}
		if (argc < 5 || (strcmp(argv[1], "-s") && strcmp(argv[1], "-T") &&
				 strcmp(argv[1], "-P")))
			break;
		*(argv[1][1] == 's' ? &split : argv[1][1] == 'T' ? &timed : &paged) =
			strtoull(argv[2], NULL, 0);
		argv += 2, argc -= 2;
	}
	if (argc != 3 || ((t_own || t_rev || late_n) && !timed) || (gaps && !split) ||
	    (t_own && t_rev)) {
		fprintf(stderr, "usage: pd_rewrite [-s BYTES [-G]] [-T BYTES] [-O | -R] [-P CR3] "
			"[-M N@BYTES] IN OUT\n");
		return 2;
	}
	if (timed)
		t_plan(argv[1]);
	if (tc_perf_data_open(&pd, argv[1], &e))
		die(argv[1], &e);
	if (tc_perf_write_open(&w, argv[2], &e))
		die(argv[2], &e);
	for (size_t i = 0; i < tc_perf_data_nr_attrs(pd); i++) {
		const struct tc_perf_data_attr *a = tc_perf_data_attr(pd, i);
		struct perf_event_attr attr = a->attr;

		if (timed && attr.type >= PERF_TYPE_MAX)	/* the PMU's (intel_pt) */
			attr.config |= T_CFG_TSC | T_CFG_MTC | (uint64_t)T_MTC_FREQ << 14;
		if (tc_perf_write_add_attr(w, &attr, a->ids, a->nr_ids, &e))
			die(argv[2], &e);
	}
	while ((n = tc_perf_data_next(pd, &r, &e)) > 0)
		if (one(w, &r, &e))
			die(argv[2], &e);
	if (n < 0)
		die(argv[1], &e);
	f = tc_perf_data_features(pd);
	if ((f->hostname &&
	     tc_perf_write_feat_string(w, TC_PERF_DATA_FEAT_HOSTNAME, f->hostname, &e)) ||
	    (f->osrelease &&
	     tc_perf_write_feat_string(w, TC_PERF_DATA_FEAT_OSRELEASE, f->osrelease, &e)) ||
	    (f->version &&
	     tc_perf_write_feat_string(w, TC_PERF_DATA_FEAT_VERSION, f->version, &e)) ||
	    (f->arch && tc_perf_write_feat_string(w, TC_PERF_DATA_FEAT_ARCH, f->arch, &e)) ||
	    (f->cpudesc &&
	     tc_perf_write_feat_string(w, TC_PERF_DATA_FEAT_CPUDESC, f->cpudesc, &e)) ||
	    (f->cpuid && tc_perf_write_feat_string(w, TC_PERF_DATA_FEAT_CPUID, f->cpuid, &e)) ||
	    (f->has_nrcpus &&
	     tc_perf_write_feat_nrcpus(w, f->nr_cpus_avail, f->nr_cpus_online, &e)) ||
	    (f->cmdline.n && tc_perf_write_feat_cmdline(w, (int)f->cmdline.n, f->cmdline.v, &e)))
		die(argv[2], &e);
	for (size_t i = 0; i < f->nr_build_ids; i++) {
		const struct tc_perf_data_build_id *b = &f->build_ids[i];

		if (tc_perf_write_feat_build_id(w, b->pid, b->misc & 0x7fff, b->id, b->size,
						b->filename, &e))
			die(argv[2], &e);
	}
	tc_perf_data_close(pd);
	if (tc_perf_write_close(w, &e))
		die(argv[2], &e);
	return 0;
}
