/* record's per-PMU operations (lib/record/record_ops.h) against tests/fixtures/sysfs: the
 * list, CoreSight's AUXTRACE_INFO registers read through its sysfs table, Intel PT's words,
 * and the same record bytes as the field-by-field writers of lib/perfdata/perf_write.c. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/perfdata/auxtrace_info.h"
#include "lib/perfdata/perf_write.h"
#include "lib/record/record_ops.h"
#include "tests/unit/tc_test.h"

static const char *fixture(const char *name)
{
	static char path[PATH_MAX];
	const char *top = getenv("TOP");

	snprintf(path, sizeof(path), "%s/tests/fixtures/sysfs/%s", top ? top : ".", name);
	return path;
}

static const struct tc_pmu *discover(const char *fx, const char *name, struct tc_pmu_list *l)
{
	struct tc_err e = { 0 };

	if (tc_pmu_discover(fixture(fx), l, &e))
		return NULL;
	return tc_pmu_find(l, name);
}

/* The ops' words: n of them, malloc'd (zeroed as the loop gives them). */
static uint64_t *fill(const struct tc_record_ops *ops, const struct tc_record_ops_info *in,
		      size_t *n)
{
	struct tc_err e = { 0 };
	uint64_t *w;

	*n = ops->info_words(in);
	w = calloc(*n ? *n : 1, sizeof(*w));
	if (w && ops->info_fill(in, w, &e)) {
		free(w);
		return NULL;
	}
	return w;
}

/* A file of one AUXTRACE_INFO record written one way or the other, read back whole. */
static uint8_t *file_of(int generic, uint32_t type, const uint64_t *w, size_t n,
			const struct tc_perf_write_etmv4 *etm, size_t nr_etm, size_t *len)
{
	char path[] = "/tmp/tc_rops_XXXXXX";
	struct tc_perf_write *pw;
	struct tc_err e = { 0 };
	uint8_t *buf = NULL;
	FILE *f;
	int fd = mkstemp(path), rc;

	if (fd < 0)
		return NULL;
	close(fd);
	if (tc_perf_write_open(&pw, path, &e))
		return NULL;
	if (generic)
		rc = tc_perf_write_auxtrace_info(pw, type, w, n, &e);
	else if (etm)
		rc = tc_perf_write_auxtrace_info_cs_etm(pw, (uint32_t)(w[TC_CS_HDR_PMU_TYPE_CPUS] >>
								 32), w[TC_CS_HDR_SNAPSHOT],
							etm, nr_etm, &e);
	else
		rc = tc_perf_write_auxtrace_info_intel_pt(pw, w, NULL, &e);
	if (rc)
		tc_perf_write_abort(pw);
	else if (!tc_perf_write_close(pw, &e) && (f = fopen(path, "rb"))) {
		buf = malloc(1 << 16);
		*len = buf ? fread(buf, 1, 1 << 16, f) : 0;
		fclose(f);
	}
	unlink(path);
	return buf;
}

TEST(list_finds_by_kind_and_name)
{
	char names[64];
	struct tc_pmu p = { .kind = TC_PMU_INTEL_PT };

	CHECK(tc_record_ops_find(&p) == &tc_record_intel_pt_ops);
	p.kind = TC_PMU_CS_ETM;
	CHECK(tc_record_ops_find(&p) == &tc_record_cs_etm_ops);
	CHECK(tc_record_ops_find(NULL) == NULL);
	CHECK(tc_record_ops_by_name("intel_pt") == &tc_record_intel_pt_ops);
	CHECK(tc_record_ops_by_name("emulated") == NULL);
	tc_record_ops_names(names, sizeof(names), false);
	CHECK_STR(names, "cs_etm, intel_pt");
	tc_record_ops_names(names, sizeof(names), true);
	CHECK_STR(names, "cs_etm");
	tc_record_ops_names(names, 10, false);	/* cut, still terminated */
	CHECK_STR(names, "cs_etm, i");
}

TEST(cs_etm_registers_come_from_the_sysfs_table)
{
	struct tc_pmu_list l;
	const struct tc_pmu *p = discover("juno", "cs_etm", &l);
	/* timestamp and contextid, as the plan sets them by default */
	struct perf_event_attr aux = { .type = 10, .config = (1ULL << 28) | (1ULL << 14) };
	int cpus[] = { 0, 3 };
	struct tc_record_ops_info in = { .pmu = p, .sysfs_root = fixture("juno"), .aux = &aux,
					 .cpus = cpus, .ncpus = 2, .snapshot = true };
	/* The fixture's files: cpuN/mgmt/trctraceid, trcidr/trcidr0..8, mgmt/trcauthstatus. */
	static const uint64_t want[] = {
		1, 10ULL << 32 | 2, 1,
		TC_CS_ETMV4_MAGIC, 0, 7, 0x840, 0x10, 0x28000ea1, 0x4100f403, 0x488, 0, 0xcc,
		TC_CS_ETMV4_MAGIC, 3, 7, 0x840, 0x16, 0x28000ea1, 0x4100f403, 0x488, 0, 0xcc,
	};
	struct tc_cs_etm_info info;
	struct tc_err e = { 0 };
	uint64_t *w;
	size_t n = 0;

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK(tc_record_ops_find(p) == &tc_record_cs_etm_ops);
	CHECK_INT(tc_record_cs_etm_ops.info_type, TC_AUXTRACE_CS_ETM);
	w = fill(&tc_record_cs_etm_ops, &in, &n);
	CHECK(w != NULL);
	CHECK_INT(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; w && i < n && i < sizeof(want) / sizeof(want[0]); i++)
		CHECK_INT(w[i], want[i]);
	/* and the reader takes them: trace IDs 0x10 and 0x16 */
	CHECK_INT(w ? tc_auxtrace_info_cs_etm_parse(w, n, &info, &e) : -1, 0);
	if (w && !e.msg[0]) {
		CHECK_INT(info.nr_cpus, 2);
		CHECK_INT(info.cpus[1].trace_id, 0x16);
		tc_auxtrace_info_cs_etm_free(&info);
	}
	free(w);

	/* per-thread: the header alone */
	in.ncpus = 0;
	w = fill(&tc_record_cs_etm_ops, &in, &n);
	CHECK_INT(n, TC_CS_HDR_WORDS);
	CHECK_INT(w ? w[TC_CS_HDR_PMU_TYPE_CPUS] : 0, 10ULL << 32);
	free(w);
	tc_pmu_list_free(&l);
}

/* The generic writer with the ops' words writes what the field-by-field writer (the one
 * record used before the ops) writes from the same registers. */
TEST(cs_etm_record_bytes_as_the_field_writer)
{
	struct tc_pmu_list l;
	const struct tc_pmu *p = discover("juno", "cs_etm", &l);
	struct perf_event_attr aux = { .type = 10, .config = (1ULL << 28) | (1ULL << 12) };
	int cpus[] = { 1, 5 };
	struct tc_record_ops_info in = { .pmu = p, .sysfs_root = fixture("juno"), .aux = &aux,
					 .cpus = cpus, .ncpus = 2 };
	struct tc_perf_write_etmv4 etm[2] = {
		{ .cpu = 1, .trcconfigr = 0x810, .trctraceidr = 0x12, .trcidr0 = 0x28000ea1,
		  .trcidr1 = 0x4100f403, .trcidr2 = 0x488, .trcauthstatus = 0xcc },
		{ .cpu = 5, .trcconfigr = 0x810, .trctraceidr = 0x1a, .trcidr0 = 0x28000ea1,
		  .trcidr1 = 0x4100f403, .trcidr2 = 0x488, .trcauthstatus = 0xcc },
	};
	uint8_t *a, *b;
	size_t n = 0, alen = 0, blen = 1;
	uint64_t *w;

	CHECK(p != NULL);
	if (!p)
		return;
	w = fill(&tc_record_cs_etm_ops, &in, &n);
	CHECK(w != NULL);
	if (!w)
		return;
	a = file_of(1, TC_AUXTRACE_CS_ETM, w, n, NULL, 0, &alen);
	b = file_of(0, 0, w, n, etm, 2, &blen);
	CHECK(a && b && alen > 100);
	CHECK_INT(alen, blen);
	CHECK(a && b && alen == blen && !memcmp(a, b, alen));
	free(a);
	free(b);
	free(w);
	tc_pmu_list_free(&l);
}

TEST(intel_pt_words_from_formats_and_user_page)
{
	struct tc_pmu_list l;
	const struct tc_pmu *p = discover("intel-pt", "intel_pt", &l);
	struct perf_event_attr aux = { .type = 8 };
	struct perf_event_mmap_page up = { .time_shift = 10, .time_mult = 0x123,
					   .time_zero = 0x456 };
	int cpus[] = { 0, 1 };
	struct tc_record_ops_info in = { .pmu = p, .sysfs_root = fixture("intel-pt"),
					 .aux = &aux, .cpus = cpus, .ncpus = 2 };
	uint8_t *a, *b;
	size_t n = 0, alen = 0, blen = 1;
	uint64_t *w;

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_INT(tc_record_intel_pt_ops.info_type, TC_AUXTRACE_INTEL_PT);
	CHECK(tc_record_intel_pt_ops.sink == NULL && tc_record_intel_pt_ops.busy_sinks == NULL);
	/* no ring: no time conversion */
	w = fill(&tc_record_intel_pt_ops, &in, &n);
	CHECK_INT(n, TC_IPT_PRIV_MAX);
	CHECK(w != NULL);
	if (!w)
		return;
	CHECK_INT(w[TC_IPT_PMU_TYPE], 8);
	CHECK_INT(w[TC_IPT_TIME_MULT], 0);
	CHECK_INT(w[TC_IPT_TSC_BIT], 1 << 10);		/* format/tsc: config:10 */
	CHECK_INT(w[TC_IPT_NORETCOMP_BIT], 1 << 11);
	CHECK_INT(w[TC_IPT_MTC_BIT], 1 << 9);
	CHECK_INT(w[TC_IPT_CYC_BIT], 1 << 1);
	CHECK_INT(w[TC_IPT_PER_CPU_MMAPS], 1);
	CHECK_INT(w[TC_IPT_MTC_FREQ_BITS], 3);
	CHECK_INT(w[TC_IPT_SNAPSHOT_MODE], 0);
	CHECK_INT(w[TC_IPT_FILTER_STR_LEN], 0);
	free(w);

	/* a ring's user page gives the time conversion; per-thread, snapshot */
	up.cap_user_time = 1;
	up.cap_user_time_zero = 1;
	in.up = &up;
	in.ncpus = 0;
	in.snapshot = true;
	w = fill(&tc_record_intel_pt_ops, &in, &n);
	CHECK(w != NULL);
	if (!w)
		return;
	CHECK_INT(w[TC_IPT_TIME_SHIFT], 10);
	CHECK_INT(w[TC_IPT_TIME_MULT], 0x123);
	CHECK_INT(w[TC_IPT_TIME_ZERO], 0x456);
	CHECK_INT(w[TC_IPT_CAP_USER_TIME_ZERO], 1);
	CHECK_INT(w[TC_IPT_PER_CPU_MMAPS], 0);
	CHECK_INT(w[TC_IPT_SNAPSHOT_MODE], 1);
	a = file_of(1, TC_AUXTRACE_INTEL_PT, w, n, NULL, 0, &alen);
	b = file_of(0, 0, w, n, NULL, 0, &blen);
	CHECK(a && b && alen == blen && !memcmp(a, b, alen));
	free(a);
	free(b);
	free(w);
	tc_pmu_list_free(&l);
}

TEST(cs_etm_busy_sinks_name_the_sink_and_free_ones)
{
	struct tc_pmu_list l;
	const struct tc_pmu *p = discover("juno", "cs_etm", &l);
	const char *sink = "x";
	char free_sinks[512];

	CHECK(p != NULL);
	if (!p)
		return;
	/* no --sink: the default, and every sink all CPUs reach */
	tc_record_cs_etm_ops.busy_sinks(fixture("juno"), p, 0, &sink, free_sinks,
					sizeof(free_sinks));
	CHECK(sink == NULL);
	CHECK(strstr(free_sinks, "sinks reachable from these CPUs and not held through sysfs: ")
	      == free_sinks);
	CHECK(strstr(free_sinks, "tmc_etr0") && strstr(free_sinks, "(--sink NAME)"));
	/* --sink tmc_etr0 (its hash): named, and left out of the free ones */
	tc_record_cs_etm_ops.busy_sinks(fixture("juno"), p, 0xa6509eae, &sink, free_sinks,
					sizeof(free_sinks));
	CHECK_STR(sink, "tmc_etr0");
	CHECK(strstr(free_sinks, "tmc_etr0") == NULL && strstr(free_sinks, "tmc_etf0"));
	tc_pmu_list_free(&l);
}
