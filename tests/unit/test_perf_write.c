/* perf.data writer (lib/perfdata/perf_write.c): every record helper and feature read back through
 * our reader; `perf report -D` on the same file is in tests/e2e/t40-pt-truth.sh. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/perfdata/perf_data.h"
#include "lib/perfdata/perf_write.h"
#include "tests/unit/tc_test.h"

#define PT_TYPE 8
#define ID 42

static char *tmpname(void)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/tc_pw_XXXXXX");
	fd = mkstemp(path);
	if (fd >= 0) {
		close(fd);
		unlink(path);	/* a name only: an existing file would become .old */
	}
	return fd >= 0 ? path : NULL;
}

static int write_all(const char *path, struct tc_err *e)
{
	struct perf_event_attr a = { .type = PT_TYPE, .sample_type = PERF_SAMPLE_IP |
		PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER,
		.sample_id_all = 1 };
	uint64_t ids[] = { ID, ID + 1 }, priv[TC_IPT_PRIV_MAX] = { PT_TYPE, 1, 2, 3 };
	struct tc_perf_write_sid sid = { .pid = 100, .tid = 101, .time = 5, .id = ID, .cpu = 3 };
	struct tc_perf_write_mmap2 m = { .pid = 100, .tid = 101, .start = 0x400000, .len = 0x2000,
				 .pgoff = 0x1000, .maj = 8, .min = 1, .ino = 77, .prot = 5,
				 .flags = 2, .filename = "/usr/bin/true" };
	struct tc_perf_write_etmv4 etm[2] = {
		{ .cpu = 0, .trctraceidr = 0x10, .trcidr0 = 0x28000ea1 },
		{ .cpu = 1, .trctraceidr = 0x12 }
	};
	static const uint8_t trace[13] = { 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
					   2 };
	static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef };
	char *argv[] = { "pt_truth", "-o", "x" };
	struct tc_perf_write *w;

	if (tc_perf_write_open(&w, path, e))
		return -1;
	if (tc_perf_write_add_attr(w, &a, ids, 2, e) ||
	    tc_perf_write_auxtrace_info_intel_pt(w, priv, "filter 0x1/2", e) ||
	    tc_perf_write_auxtrace_info_cs_etm(w, 9, 0, etm, 2, e) ||
	    tc_perf_write_comm(w, 100, 101, "fixture", true, &sid, e) ||
	    tc_perf_write_mmap2(w, &m, &sid, e) ||
	    tc_perf_write_fork(w, false, 100, 1, 101, 1, 4, &sid, e) ||
	    tc_perf_write_itrace_start(w, 100, 101, &sid, e) ||
	    tc_perf_write_aux(w, 0, 16, 0, &sid, e) ||
	    tc_perf_write_auxtrace(w, trace, sizeof(trace), 0, 7, 0, 101, 3, e) ||
	    tc_perf_write_fork(w, true, 100, 1, 101, 1, 6, &sid, e) ||
	    tc_perf_write_feat_string(w, TC_PERF_DATA_FEAT_HOSTNAME, "host", e) ||
	    tc_perf_write_feat_string(w, TC_PERF_DATA_FEAT_CPUID, "GenuineIntel,6,78,3", e) ||
	    tc_perf_write_feat_nrcpus(w, 4, 2, e) || tc_perf_write_feat_cmdline(w, 3, argv, e) ||
	    tc_perf_write_feat_build_id(w, -1, PERF_RECORD_MISC_USER, bid, 20, "/usr/bin/true",
					e)) {
		tc_perf_write_abort(w);
		return -1;
	}
	return tc_perf_write_close(w, e);
}

TEST(round_trip_through_reader)
{
	struct tc_err e = { 0 };
	struct tc_perf_data *pd;
	struct tc_perf_data_record r;
	const struct tc_perf_data_features *f;
	const char *path = tmpname();
	uint32_t types[16];
	int n = 0, rc;

	CHECK(path != NULL);
	if (!path)
		return;
	CHECK_INT(write_all(path, &e), 0);
	if (e.msg[0])
		printf("#   %s\n", e.msg);
	CHECK_INT(tc_perf_data_open(&pd, path, &e), 0);
	if (!pd) {
		printf("#   %s\n", e.msg);
		unlink(path);
		return;
	}
	CHECK(!tc_perf_data_is_pipe(pd));
	CHECK_INT(tc_perf_data_nr_attrs(pd), 1);
	CHECK_INT(tc_perf_data_attr(pd, 0)->attr.type, PT_TYPE);
	CHECK_INT(tc_perf_data_attr(pd, 0)->file_attr_size, TC_PERF_WRITE_ATTR_SIZE);
	CHECK_INT(tc_perf_data_attr(pd, 0)->nr_ids, 2);
	CHECK_INT(tc_perf_data_attr(pd, 0)->ids[1], ID + 1);
	while ((rc = tc_perf_data_next(pd, &r, &e)) == 1 && n < 16) {
		types[n++] = r.type;
		if (r.type < TC_PERF_DATA_HEADER_ATTR) {
			CHECK(r.sid.has_tid && r.sid.has_time && r.sid.has_cpu && r.sid.has_id);
			CHECK_INT(r.sid.tid, 101);
			CHECK_INT(r.sid.cpu, 3);
			CHECK_INT(r.sid.id, ID);
			CHECK(r.attr == tc_perf_data_attr(pd, 0));
		}
		switch (r.type) {
		case TC_PERF_DATA_AUXTRACE_INFO:
			if (r.u.auxtrace_info.type == TC_AUXTRACE_INTEL_PT) {
				CHECK(r.u.auxtrace_info.intel_pt != NULL);
				if (!r.u.auxtrace_info.intel_pt)
					break;
				CHECK_INT(r.u.auxtrace_info.intel_pt->w[TC_IPT_TIME_ZERO], 3);
				CHECK_STR(r.u.auxtrace_info.intel_pt->filter, "filter 0x1/2");
			} else {
				const struct tc_cs_etm_info *cs = r.u.auxtrace_info.cs_etm;

				CHECK(cs != NULL);
				if (!cs)
					break;
				CHECK_INT(cs->version, 1);
				CHECK_INT(cs->pmu_type, 9);
				CHECK_INT(cs->nr_cpus, 2);
				CHECK_INT(cs->cpus[1].trace_id, 0x12);
				CHECK_INT(cs->cpus[0].nr_params, 7);
				CHECK_INT(cs->cpus[0].params[2], 0x28000ea1);
			}
			break;
		case PERF_RECORD_COMM:
			CHECK_STR(r.u.comm.comm, "fixture");
			CHECK(r.u.comm.exec);
			break;
		case PERF_RECORD_MMAP2:
			CHECK_STR(r.u.mmap.filename, "/usr/bin/true");
			CHECK_INT(r.u.mmap.start, 0x400000);
			CHECK_INT(r.u.mmap.pgoff, 0x1000);
			CHECK_INT(r.u.mmap.ino, 77);
			CHECK_INT(r.u.mmap.prot, 5);
			break;
		case PERF_RECORD_FORK:
		case PERF_RECORD_EXIT:
			CHECK_INT(r.u.fork.tid, 101);
			CHECK_INT(r.u.fork.ppid, 1);
			break;
		case PERF_RECORD_AUX:
			CHECK_INT(r.u.aux.aux_size, 16);
			break;
		case TC_PERF_DATA_AUXTRACE:
			CHECK_INT(r.u.auxtrace.size, 16);	/* 13 bytes padded */
			CHECK_INT(r.u.auxtrace.reference, 7);
			CHECK_INT(r.u.auxtrace.tid, 101);
			CHECK_INT(r.u.auxtrace.cpu, 3);
			CHECK_INT(r.u.auxtrace.data[12], 2);
			CHECK_INT(r.u.auxtrace.data[15], 0);
			f = tc_perf_data_features(pd);
			CHECK_INT(f->nr_auxtrace_index, 1);
			if (f->nr_auxtrace_index) {
				CHECK_INT(f->auxtrace_index[0].offset, r.offset);
				CHECK_INT(f->auxtrace_index[0].size, 0x30);
			}
			break;
		}
	}
	CHECK_INT(rc, 0);
	if (rc < 0)
		printf("#   %s\n", e.msg);
	CHECK_INT(n, 9);
	if (n == 9) {
		CHECK_INT(types[0], TC_PERF_DATA_AUXTRACE_INFO);
		CHECK_INT(types[3], PERF_RECORD_MMAP2);
		CHECK_INT(types[5], PERF_RECORD_ITRACE_START);
		CHECK_INT(types[7], TC_PERF_DATA_AUXTRACE);
		CHECK_INT(types[8], PERF_RECORD_EXIT);
	}
	f = tc_perf_data_features(pd);
	CHECK_STR(f->hostname, "host");
	CHECK_STR(f->cpuid, "GenuineIntel,6,78,3");
	CHECK(f->has_nrcpus && f->nr_cpus_avail == 4 && f->nr_cpus_online == 2);
	CHECK_INT(f->cmdline.n, 3);
	if (f->cmdline.n == 3)
		CHECK_STR(f->cmdline.v[2], "x");
	CHECK_INT(f->nr_build_ids, 1);
	if (f->nr_build_ids) {
		CHECK_STR(f->build_ids[0].filename, "/usr/bin/true");
		CHECK_INT(f->build_ids[0].size, 20);
		CHECK_INT(f->build_ids[0].id[3], 0xef);
	}
	CHECK(tc_perf_data_has_feature(pd, TC_PERF_DATA_FEAT_AUXTRACE));
	CHECK(!tc_perf_data_has_feature(pd, TC_PERF_DATA_FEAT_ARCH));
	tc_perf_data_close(pd);
	unlink(path);
}

TEST(errors_are_reported_not_printed)
{
	struct tc_err e = { 0 };
	struct tc_perf_write *w;
	struct perf_event_attr a = { .type = 1 };
	uint64_t bad[2] = { 0x0001000000000000ULL, 0 };	/* type 0, size 1 */
	const char *path = tmpname();

	CHECK_INT(tc_perf_write_open(&w, "/nonexistent/dir/perf.data", &e), -1);
	CHECK_INT(e.errnum, ENOENT);
	CHECK(path != NULL);
	if (!path || tc_perf_write_open(&w, path, &e))
		return;
	CHECK_INT(tc_perf_write_record(w, bad, sizeof(bad), &e), -1);
	CHECK(strstr(e.msg, "header says") != NULL);
	CHECK_INT(tc_perf_write_comm(w, 1, 1, "x", false, NULL, &e), 0);
	CHECK_INT(tc_perf_write_add_attr(w, &a, NULL, 0, &e), -1);
	CHECK(strstr(e.msg, "before the first record") != NULL);
	CHECK_INT(tc_perf_write_feat_string(w, TC_PERF_DATA_FEAT_NRCPUS, "x", &e), -1);
	CHECK_INT(tc_perf_write_close(w, &e), 0);
	unlink(path);
}

/* The generic AUXTRACE_INFO writer: a type and its words as given, read back by the reader;
 * words past the 16-bit record size are refused. */
TEST(auxtrace_info_of_n_words)
{
	static uint64_t big[8190];
	uint64_t cs[TC_CS_HDR_WORDS + TC_CS_BLK_HDR_WORDS + TC_CS_ETMV4_NR_PARAMS] = {
		[TC_CS_HDR_VERSION] = TC_CS_HDR_VERSION_1,
		[TC_CS_HDR_PMU_TYPE_CPUS] = 9ULL << 32 | 1,
		[TC_CS_HDR_WORDS + TC_CS_BLK_MAGIC] = TC_CS_ETMV4_MAGIC,
		[TC_CS_HDR_WORDS + TC_CS_BLK_CPU] = 2,
		[TC_CS_HDR_WORDS + TC_CS_BLK_NR_PARAMS] = TC_CS_ETMV4_NR_PARAMS,
		[TC_CS_HDR_WORDS + TC_CS_BLK_HDR_WORDS + TC_CS_ETMV4_TRCTRACEIDR] = 0x14,
	};
	struct tc_err e = { 0 };
	struct tc_perf_write *w;
	struct tc_perf_data *pd;
	struct tc_perf_data_record r;
	const char *path = tmpname();
	int n = 0;

	CHECK(path != NULL);
	if (!path || tc_perf_write_open(&w, path, &e))
		return;
	CHECK_INT(tc_perf_write_auxtrace_info(w, TC_AUXTRACE_CS_ETM, big, 8190, &e), -1);
	CHECK(strstr(e.msg, "8190 words do not fit") != NULL);
	CHECK_INT(tc_perf_write_auxtrace_info(w, TC_AUXTRACE_CS_ETM, cs, sizeof(cs) / 8, &e), 0);
	CHECK_INT(tc_perf_write_close(w, &e), 0);
	CHECK_INT(tc_perf_data_open(&pd, path, &e), 0);
	while (pd && tc_perf_data_next(pd, &r, &e) == 1) {
		n++;
		CHECK_INT(r.type, TC_PERF_DATA_AUXTRACE_INFO);
		CHECK_INT(r.u.auxtrace_info.type, TC_AUXTRACE_CS_ETM);
		CHECK(r.u.auxtrace_info.cs_etm != NULL);
		if (r.u.auxtrace_info.cs_etm) {
			CHECK_INT(r.u.auxtrace_info.cs_etm->cpus[0].cpu, 2);
			CHECK_INT(r.u.auxtrace_info.cs_etm->cpus[0].trace_id, 0x14);
		}
	}
	CHECK_INT(n, 1);
	if (pd)
		tc_perf_data_close(pd);
	unlink(path);
}
