/* pd_rewrite: read a perf.data file with lib/perfdata/perf_data and write it again with
 * lib/perfdata/perf_write, rebuilding every record the writer has a helper for (side-band,
 * AUX, AUXTRACE, CS_ETM and Intel PT info) from the parsed fields and copying the rest.
 * `perf report -D` of both files must then show the same records (tests/e2e/t41).
 *
 *   pd_rewrite [-s BYTES] IN OUT
 *
 * -s: each AUXTRACE buffer written as consecutive buffers of at most BYTES (their aux
 * offsets following on), as perf writes a queue's trace in pieces when the AUX ring wraps:
 * for decoders fed one queue in several buffers (tests/e2e/t73-pt-fast).
 *
 * Test tool only: it prints and exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/perfdata/perf_data.h"
#include "lib/perfdata/perf_write.h"

static uint64_t split;	/* -s: AUXTRACE buffers of at most this many bytes; 0: as read */

static void die(const char *what, const struct tc_err *e)
{
	fprintf(stderr, "pd_rewrite: %s: %s\n", what, e->msg);
	exit(2);
}

static struct tc_perf_write_sid sid_of(const struct tc_perf_data_record *r)
{
	return (struct tc_perf_write_sid){ .pid = r->sid.pid,
					   .tid = r->sid.tid,
					   .time = r->sid.time,
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
	struct tc_perf_write_sid sid = sid_of(r);
	bool done = false;
	uint64_t at;

	switch (r->type) {
	case PERF_RECORD_COMM:
		return tc_perf_write_comm(w, r->u.comm.pid, r->u.comm.tid, r->u.comm.comm,
					  r->u.comm.exec, &sid, e);
	case PERF_RECORD_MMAP2:
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
					  r->u.fork.time, &sid, e);
	case PERF_RECORD_ITRACE_START:
		return tc_perf_write_itrace_start(w, r->u.itrace_start.pid, r->u.itrace_start.tid,
						  &sid, e);
	case PERF_RECORD_AUX:
		return tc_perf_write_aux(w, r->u.aux.aux_offset, r->u.aux.aux_size, r->u.aux.flags,
					 &sid, e);
	case TC_PERF_DATA_AUXTRACE:
		at = 0;
		do {	/* once for an empty buffer too */
			uint64_t n = r->u.auxtrace.size - at;

			if (split && n > split)
				n = split;
			if (tc_perf_write_auxtrace(w, r->u.auxtrace.data + at, n,
						   r->u.auxtrace.offset + at,
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

			return tc_perf_write_auxtrace_info_intel_pt(w, p->w, p->filter, e);
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

	if (argc == 5 && !strcmp(argv[1], "-s")) {
		split = strtoull(argv[2], NULL, 0);
		argv += 2, argc -= 2;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: pd_rewrite [-s BYTES] IN OUT\n");
		return 2;
	}
	if (tc_perf_data_open(&pd, argv[1], &e))
		die(argv[1], &e);
	if (tc_perf_write_open(&w, argv[2], &e))
		die(argv[2], &e);
	for (size_t i = 0; i < tc_perf_data_nr_attrs(pd); i++) {
		const struct tc_perf_data_attr *a = tc_perf_data_attr(pd, i);

		if (tc_perf_write_add_attr(w, &a->attr, a->ids, a->nr_ids, &e))
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
