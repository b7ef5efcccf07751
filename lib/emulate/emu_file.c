#include "lib/emulate/emu_file.h"

#include "lib/perfdata/perf_data.h"
#include "lib/util/hex.h"

int tc_emu_file_open(struct tc_perf_write **w, const struct tc_emu_opts *o, uint32_t type,
		     uint64_t config, const uint64_t *ids, size_t nids, struct tc_err *e)
{
	struct perf_event_attr a = { .type = type, .size = sizeof(a), .config = config,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER,
		.exclude_kernel = 1, .exclude_hv = 1, .sample_id_all = 1 };

	if (tc_perf_write_open(w, o->output, e))
		return -1;
	if (tc_perf_write_add_attr(*w, &a, ids, nids, e)) {
		tc_perf_write_abort(*w);
		*w = NULL;
		return -1;
	}
	return 0;
}

const struct tc_perf_write_sid *tc_emu_file_sid(struct tc_perf_write_sid *s, uint32_t tid,
						uint64_t *time)
{
	s->tid = tid;
	s->time = (*time)++;
	return s;
}

int tc_emu_file_features(struct tc_perf_write *w, const struct tc_emu_opts *o,
			 const struct tc_emu_file_host *h, struct tc_err *e)
{
	if (tc_perf_write_feat_string(w, TC_PERF_DATA_FEAT_HOSTNAME, h->hostname, e) ||
	    tc_perf_write_feat_string(w, TC_PERF_DATA_FEAT_OSRELEASE, h->release, e) ||
	    tc_perf_write_feat_string(w, TC_PERF_DATA_FEAT_VERSION, "6.1.0", e) ||
	    tc_perf_write_feat_string(w, TC_PERF_DATA_FEAT_ARCH, h->arch, e) ||
	    tc_perf_write_feat_string(w, TC_PERF_DATA_FEAT_CPUID, h->cpuid, e) ||
	    tc_perf_write_feat_nrcpus(w, h->nr_cpus, h->nr_cpus, e))
		return -1;
	if (o->rec_argc && tc_perf_write_feat_cmdline(w, o->rec_argc, o->rec_argv, e))
		return -1;
	return 0;
}

int tc_emu_file_build_id(struct tc_perf_write *w, const char *hex, const char *path,
			 struct tc_err *e)
{
	uint8_t id[20];
	size_t n = tc_hex_bytes(hex, id, sizeof(id));

	if (!n)
		return 0;
	return tc_perf_write_feat_build_id(w, -1, PERF_RECORD_MISC_USER, id, n, path, e);
}
