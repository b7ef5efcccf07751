/* perf.data reader (lib/perfdata/perf_data.c, perf_records.c, perf_features.c, auxtrace_info.c):
 * real recordings checked against `perf report -D`, pipe mode via `perf inject -o -`,
 * hostile inputs, and synthesized records for layouts the real files lack. */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "lib/perfdata/perf_data.h"
#include "tests/unit/tc_test.h"

#define ETM "simpleperf-etm/perf_etm.data"
#define MISSING "simpleperf-etm/perf_with_missing_aux_data.data"
#define IPT "intel_pt/perf.data.intel_pt-4.14"

struct rec {
	uint64_t off, time;
	uint32_t type, size, cpu;	/* cpu ~0u when the record has none */
	uint64_t a, b;			/* per-type fields compared between modes */
};

struct recs {
	struct rec *v;
	size_t n, cap;
};

static const char *td(const char *rel)
{
	static char buf[8][4096];
	static int i;
	const char *d = tc_testdata();

	if (!d)
		return NULL;
	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/perfdata/%s", d, rel);
	return buf[i];
}

static void push(struct recs *l, struct rec r)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 256;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			abort();
	}
	l->v[l->n++] = r;
}

static struct rec to_rec(const struct tc_perf_data_record *r)
{
	struct rec x = { r->offset, r->sid.has_time ? r->sid.time : 0, r->type, r->size,
			 r->sid.has_cpu ? r->sid.cpu : ~0u, 0, 0 };

	switch (r->type) {
	case PERF_RECORD_AUX:
		x.a = r->u.aux.aux_offset;
		x.b = r->u.aux.aux_size;
		break;
	case TC_PERF_DATA_AUXTRACE:
		x.a = r->u.auxtrace.size;
		x.b = r->u.auxtrace.cpu;
		break;
	case PERF_RECORD_SAMPLE:
		x.a = r->u.sample.ip;
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		x.a = r->u.mmap.start;
		x.b = r->u.mmap.len;
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		x.a = r->u.sw.next_prev_tid;
		x.b = r->u.sw.out;
		break;
	}
	return x;
}

/* Read every record; returns tc_perf_data_next's final value (0 or -1). */
static int read_all(struct tc_perf_data *pd, struct recs *l, struct tc_err *e)
{
	struct tc_perf_data_record r;
	int ret;

	while ((ret = tc_perf_data_next(pd, &r, e)) > 0)
		push(l, to_rec(&r));
	return ret;
}

/* The `offset [size]: PERF_RECORD_X` lines of a perf report -D dump, by offset. */
static int by_off(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static int perf_dump(const char *file, struct recs *l, char (*names)[32], size_t max)
{
	char cmd[4200], line[4096];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "xzcat '%s/perfdata/perf-6.1-dump/%s.perf-report-D.txt.xz'",
		 tc_testdata(), file);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long cpu, time, off;
		unsigned size;
		char name[32];

		/* Offset 0 marks events perf synthesized itself (cs-etm's ATTR), not ones
		 * read from the file. */
		if (sscanf(line, "%llu %llu %llx [%x]: PERF_RECORD_%31[A-Z0-9_]", &cpu, &time,
			   &off, &size, name) != 5 || !off || l->n >= max)
			continue;
		push(l, (struct rec){ off, time, 0, size, (uint32_t)cpu, 0, 0 });
		/* Keep the name with the record through the sort: stash its index. */
		l->v[l->n - 1].a = l->n - 1;
		memcpy(names[l->n - 1], name, sizeof(name));
	}
	if (pclose(p))
		return -1;
	qsort(l->v, l->n, sizeof(*l->v), by_off);
	return 0;
}

/* Every record perf printed, ours in file order: offset, size, type name, cpu, time. */
static void check_against_dump(const char *rel, const char *dumpname, struct recs *ours)
{
	static char names[4096][32];
	struct recs perf = { 0 };
	struct tc_perf_data *pd;
	struct tc_err e = { 0 };
	size_t bad = 0;

	CHECK_INT(tc_perf_data_open(&pd, td(rel), &e), 0);
	if (!pd) {
		printf("#   %s\n", e.msg);
		return;
	}
	CHECK_INT(read_all(pd, ours, &e), 0);
	tc_perf_data_close(pd);
	CHECK_INT(perf_dump(dumpname, &perf, names, 4096), 0);
	CHECK(perf.n > 0);
	CHECK_INT(ours->n, perf.n);
	for (size_t i = 0; i < perf.n && i < ours->n && bad < 5; i++) {
		const struct rec *o = &ours->v[i], *p = &perf.v[i];
		const char *n = tc_perf_data_type_name(o->type);
		bool user = o->type >= TC_PERF_DATA_HEADER_ATTR;
		/* perf shows "cpu time" from the sample_id; user records print 0 0. */
		uint32_t cpu = user ? 0 : o->cpu;
		uint64_t time = user ? 0 : o->time;

		if (o->off != p->off || o->size != p->size || !n || strcmp(n, names[p->a]) ||
		    cpu != p->cpu || time != p->time) {
			printf("#   record %zu: ours 0x%llx [0x%x] %s cpu %u time %llu, perf 0x%llx "
			       "[0x%x] %s cpu %u time %llu\n", i, (unsigned long long)o->off,
			       o->size, n ? n : "?", cpu, (unsigned long long)time,
			       (unsigned long long)p->off, p->size, names[p->a], p->cpu,
			       (unsigned long long)p->time);
			bad++;
		}
	}
	CHECK_INT(bad, 0);
	free(perf.v);
}

static size_t count(const struct recs *l, uint32_t type)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		n += l->v[i].type == type;
	return n;
}

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
	    (buf = malloc(n)) && fread(buf, 1, n, f) == (size_t)n) {
		*len = n;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

TEST(etm_records_match_perf_dump)
{
	struct recs l = { 0 };
	struct tc_perf_data *pd;
	struct tc_perf_data_record r;
	struct tc_err e = { 0 };
	size_t flen = 0, naux = 0;
	uint8_t *file;
	const struct tc_perf_data_features *f;
	bool loop_bid = false;

	if (!td(ETM))
		SKIP("no test data");
	check_against_dump(ETM, "perf_etm.data", &l);
	CHECK_INT(count(&l, TC_PERF_DATA_AUXTRACE), 1);
	CHECK_INT(count(&l, PERF_RECORD_AUX), 4);
	CHECK_INT(count(&l, PERF_RECORD_MMAP2), 59);
	free(l.v);

	file = slurp(td(ETM), &flen);
	CHECK(file && flen == 12321);
	CHECK_INT(tc_perf_data_open(&pd, td(ETM), &e), 0);
	if (!pd || !file) {
		free(file);
		return;
	}
	CHECK(!tc_perf_data_is_pipe(pd));
	CHECK_INT(tc_perf_data_nr_attrs(pd), 1);
	CHECK_INT(tc_perf_data_attr(pd, 0)->nr_ids, 8);
	CHECK(tc_perf_data_attr(pd, 0)->attr.sample_id_all);
	f = tc_perf_data_features(pd);
	/* simpleperf writes the auxtrace index without perf's leading count. */
	CHECK_INT(f->nr_auxtrace_index, 1);
	CHECK(f->nr_auxtrace_index && f->auxtrace_index[0].offset == 0x26a8 &&
	      f->auxtrace_index[0].size == 0x30);
	CHECK_STR(f->arch, "aarch64");
	CHECK_INT(f->nr_build_ids, 8);
	for (size_t i = 0; i < f->nr_build_ids; i++) {
		static const uint8_t want[] = { 0x0c, 0x9a, 0x20, 0xbf, 0x9c, 0x00, 0x9d, 0x0e,
						0x4e, 0x8b, 0xbf, 0x9f, 0xad, 0x03, 0x00, 0xae };

		if (!strcmp(f->build_ids[i].filename, "/data/local/tmp/etm_test_loop"))
			loop_bid = !memcmp(f->build_ids[i].id, want, sizeof(want));
	}
	CHECK(loop_bid);
	CHECK(tc_perf_data_has_feature(pd, TC_PERF_DATA_FEAT_CMDLINE) && f->cmdline.n > 0);
	CHECK(tc_perf_data_has_feature(pd, 129)); /* simpleperf's own feature, skipped by size */

	while (tc_perf_data_next(pd, &r, &e) > 0) {
		if (r.type == TC_PERF_DATA_AUXTRACE_INFO) {
			const struct tc_cs_etm_info *c = r.u.auxtrace_info.cs_etm;

			CHECK_INT(r.u.auxtrace_info.type, TC_AUXTRACE_CS_ETM);
			CHECK(c != NULL);
			if (!c)
				continue;
			CHECK_INT(c->version, 1);
			CHECK_INT(c->nr_cpus, 8);
			CHECK_INT(c->pmu_type, 8);
			for (unsigned i = 0; i < c->nr_cpus; i++) {
				CHECK_INT(c->cpus[i].arch, TC_CS_ETMV4);
				CHECK(c->cpus[i].magic == TC_CS_ETMV4_MAGIC);
				CHECK_INT(c->cpus[i].cpu, i);
				CHECK_INT(c->cpus[i].trace_id, 0x10 + 2 * i);
				CHECK_INT(c->cpus[i].nr_params, 7);
				CHECK_INT(c->cpus[i].nr_raw, 10);
				CHECK(c->cpus[i].params[2] == 0x28000ea1);	/* TRCIDR0 */
				CHECK(!c->cpus[i].trace_id_unset);
			}
			CHECK(tc_auxtrace_info_cs_etm_cpu(c, 7) == &c->cpus[7]);
		} else if (r.type == TC_PERF_DATA_AUXTRACE) {
			CHECK(r.u.auxtrace.size == 0x180);
			CHECK_INT(r.u.auxtrace.cpu, 7);
			CHECK_INT(r.u.auxtrace.idx, 7);
			CHECK(r.offset == 0x26a8);
			CHECK(!memcmp(r.u.auxtrace.data, file + 0x26a8 + 0x30, 0x180));
		} else if (r.type == PERF_RECORD_AUX) {
			CHECK_INT(r.u.aux.format, 0);	/* CoreSight formatted frames */
			CHECK(!r.u.aux.truncated && !r.u.aux.partial);
			naux++;
		} else if (r.type == PERF_RECORD_COMM && r.u.comm.exec) {
			CHECK_STR(r.u.comm.comm, "etm_test_loop");
			CHECK_INT(r.u.comm.pid, 17235);
		} else if (r.type == PERF_RECORD_MMAP2 && r.offset == 0x138) {
			CHECK_STR(r.u.mmap.filename, "/data/local/tmp/simpleperf64");
			CHECK(r.u.mmap.start == 0x200000 && r.u.mmap.len == 0xc1000);
		}
	}
	CHECK_INT(naux, 4);
	tc_perf_data_close(pd);
	free(file);
}

TEST(ete_missing_aux_matches_perf_dump)
{
	struct recs l = { 0 };
	struct tc_perf_data *pd;
	struct tc_perf_data_record r;
	struct tc_err e = { 0 };
	bool seen = false;

	if (!td(MISSING))
		SKIP("no test data");
	check_against_dump(MISSING, "perf_with_missing_aux_data.data", &l);
	CHECK_INT(count(&l, PERF_RECORD_AUX), 6);
	CHECK_INT(count(&l, TC_PERF_DATA_AUXTRACE), 0);
	CHECK_INT(count(&l, PERF_RECORD_ITRACE_START), 6);
	free(l.v);
	CHECK_INT(tc_perf_data_open(&pd, td(MISSING), &e), 0);
	if (!pd)
		return;
	CHECK_INT(tc_perf_data_features(pd)->nr_auxtrace_index, 0);
	while (tc_perf_data_next(pd, &r, &e) > 0) {
		const struct tc_cs_etm_info *c = r.u.auxtrace_info.cs_etm;

		if (r.type != TC_PERF_DATA_AUXTRACE_INFO)
			continue;
		seen = true;
		CHECK(c != NULL);
		if (!c)
			continue;
		CHECK_INT(c->version, 1);
		CHECK_INT(c->nr_cpus, 8);
		CHECK_INT(c->pmu_type, 0x5f);
		for (unsigned i = 0; i < c->nr_cpus; i++) {
			CHECK_INT(c->cpus[i].arch, TC_CS_ETE);
			CHECK(c->cpus[i].magic == TC_CS_ETE_MAGIC);
			CHECK_INT(c->cpus[i].nr_params, 8);
			CHECK_INT(c->cpus[i].trace_id, 0x10 + 2 * i);
			CHECK(c->cpus[i].params[7] == 0x47724a13);	/* TRCDEVARCH */
		}
	}
	CHECK(seen);
	tc_perf_data_close(pd);
}

TEST(intel_pt_matches_perf_dump)
{
	struct recs l = { 0 };
	struct tc_perf_data *pd;
	struct tc_perf_data_record r;
	struct tc_err e = { 0 };
	const struct tc_perf_data_features *f;
	size_t nat = 0, nsample = 0;

	if (!td(IPT))
		SKIP("no test data");
	check_against_dump(IPT, "perf.data.intel_pt-4.14", &l);
	CHECK_INT(count(&l, PERF_RECORD_AUX), 10);
	CHECK_INT(count(&l, PERF_RECORD_SWITCH_CPU_WIDE), 152);
	CHECK_INT(count(&l, TC_PERF_DATA_AUXTRACE), 2);
	CHECK_INT(count(&l, PERF_RECORD_SAMPLE), 15);
	free(l.v);

	CHECK_INT(tc_perf_data_open(&pd, td(IPT), &e), 0);
	if (!pd)
		return;
	CHECK_INT(tc_perf_data_nr_attrs(pd), 4);
	CHECK_INT(tc_perf_data_attr(pd, 0)->attr.type, 6);
	f = tc_perf_data_features(pd);
	CHECK(f->has_nrcpus && f->nr_cpus_avail == 4 && f->nr_cpus_online == 4);
	CHECK_STR(f->hostname, "localhost");
	CHECK_STR(f->arch, "x86_64");
	CHECK_INT(f->nr_auxtrace_index, 2);
	CHECK(f->nr_auxtrace_index == 2 && f->auxtrace_index[1].offset == 0x7788);
	while (tc_perf_data_next(pd, &r, &e) > 0) {
		if (r.type == TC_PERF_DATA_AUXTRACE_INFO) {
			const struct tc_intel_pt_info *p = r.u.auxtrace_info.intel_pt;

			CHECK_INT(r.u.auxtrace_info.type, TC_AUXTRACE_INTEL_PT);
			CHECK(p != NULL);
			if (!p)
				continue;
			CHECK_INT(p->nr, TC_IPT_PRIV_MAX);
			CHECK_INT(p->w[TC_IPT_PMU_TYPE], 6);
			CHECK_INT(p->w[TC_IPT_TIME_SHIFT], 31);
			CHECK_INT(p->w[TC_IPT_TIME_MULT], 1789569706);
			CHECK(p->w[TC_IPT_TSC_BIT] == 0x400);
			CHECK(p->w[TC_IPT_MTC_FREQ_BITS] == 0x3c000);
			CHECK_INT(p->w[TC_IPT_TSC_CTC_N], 100);
			CHECK_INT(p->w[TC_IPT_MAX_NONTURBO_RATIO], 12);
			CHECK_STR(p->filter, "");
		} else if (r.type == TC_PERF_DATA_AUXTRACE) {
			static const uint64_t size[] = { 12240, 137728 };
			static const uint32_t cpu[] = { 0, 3 };

			if (nat < 2) {
				CHECK(r.u.auxtrace.size == size[nat]);
				CHECK_INT(r.u.auxtrace.cpu, cpu[nat]);
				CHECK_INT(r.u.auxtrace.tid, 3174);
			}
			nat++;
		} else if (r.type == PERF_RECORD_SAMPLE && r.offset == 0x6440) {
			CHECK(r.u.sample.has_ip && r.u.sample.ip == 0xffffffffb96071f4ULL);
			CHECK(r.sid.has_tid && r.sid.pid == 3174 && r.sid.tid == 3174);
			CHECK(!r.sid.has_cpu);	/* this event's sample_type has no CPU */
			CHECK(r.u.sample.has_period && r.u.sample.period == 1);
			nsample++;
		}
	}
	CHECK_INT(nat, 2);
	CHECK_INT(nsample, 1);
	tc_perf_data_close(pd);
}

/* Records other than the pipe-only header records, in order. */
static void drop_pipe_headers(struct recs *l)
{
	size_t k = 0;

	for (size_t i = 0; i < l->n; i++) {
		uint32_t t = l->v[i].type;

		if (t != TC_PERF_DATA_HEADER_ATTR && t != TC_PERF_DATA_HEADER_FEATURE &&
		    t != TC_PERF_DATA_HEADER_BUILD_ID && t != TC_PERF_DATA_HEADER_TRACING_DATA &&
		    t != TC_PERF_DATA_FINISHED_INIT && t != TC_PERF_DATA_ID_INDEX &&
		    t != TC_PERF_DATA_EVENT_UPDATE)
			l->v[k++] = l->v[i];
	}
	l->n = k;
}

static void check_same_records(struct recs *file, struct recs *pipe)
{
	size_t bad = 0;

	drop_pipe_headers(pipe);
	CHECK_INT(pipe->n, file->n);
	for (size_t i = 0; i < file->n && i < pipe->n && bad < 5; i++) {
		const struct rec *a = &file->v[i], *b = &pipe->v[i];

		if (a->type != b->type || a->size != b->size || a->cpu != b->cpu ||
		    a->time != b->time || a->a != b->a || a->b != b->b) {
			printf("#   record %zu: file 0x%llx type %u, pipe 0x%llx type %u\n", i,
			       (unsigned long long)a->off, a->type, (unsigned long long)b->off,
			       b->type);
			bad++;
		}
	}
	CHECK_INT(bad, 0);
}

/* perf inject -o - writes pipe mode. Debian's perf 6.1 does so for the Intel PT file but
 * crashes (SIGSEGV) on both simpleperf files, so only that one is converted. */
static char *make_pipe_file(void)
{
	static char path[] = "/tmp/tc_perf_pipe_XXXXXX";
	char cmd[8400];
	int fd;

	if (system("perf --version >/dev/null 2>&1"))
		return NULL;
	memcpy(path + sizeof(path) - 7, "XXXXXX", 6);
	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	close(fd);
	snprintf(cmd, sizeof(cmd), "perf inject -i '%s' -o - >'%s' 2>/dev/null", td(IPT), path);
	if (system(cmd)) {
		unlink(path);
		return NULL;
	}
	return path;
}

TEST(pipe_mode_from_perf_inject)
{
	struct recs file = { 0 }, pipe = { 0 };
	struct tc_perf_data *pd;
	struct tc_perf_data_record r;
	struct tc_err e = { 0 };
	char *path, cmd[4200];
	FILE *f;
	size_t nat = 0;

	if (!td(IPT))
		SKIP("no test data");
	path = make_pipe_file();
	if (!path)
		SKIP("perf inject is not available");

	CHECK_INT(tc_perf_data_open(&pd, td(IPT), &e), 0);
	if (pd) {
		CHECK_INT(read_all(pd, &file, &e), 0);
		tc_perf_data_close(pd);
	}

	/* 1. A FILE* stream: attrs and features arrive as records. */
	f = fopen(path, "rb");
	CHECK(f != NULL);
	CHECK_INT(tc_perf_data_open_stream(&pd, f, "pipe", &e), 0);
	if (pd) {
		CHECK(tc_perf_data_is_pipe(pd));
		CHECK_INT(tc_perf_data_nr_attrs(pd), 0);
		while (tc_perf_data_next(pd, &r, &e) > 0) {
			push(&pipe, to_rec(&r));
			if (r.type == TC_PERF_DATA_AUXTRACE) {
				/* The trace bytes were read from the stream too: same as the file. */
				CHECK(r.u.auxtrace.data[0] == 0x02 && r.u.auxtrace.data[1] == 0x82);
				nat++;
			}
			if (r.type == TC_PERF_DATA_AUXTRACE_INFO)
				CHECK(r.u.auxtrace_info.intel_pt &&
				      r.u.auxtrace_info.intel_pt->w[TC_IPT_PMU_TYPE] == 6);
		}
		CHECK_INT(e.msg[0], 0);
		CHECK_INT(tc_perf_data_nr_attrs(pd), 4);
		CHECK_INT(tc_perf_data_attr(pd, 0)->attr.type, 6);
		/* perf inject writes the features of the machine it runs on, not the
		 * input's (hostname, nrcpus), and no build ids. */
		CHECK(tc_perf_data_features(pd)->has_nrcpus);
		CHECK(tc_perf_data_features(pd)->hostname != NULL);
		CHECK(tc_perf_data_has_feature(pd, TC_PERF_DATA_FEAT_CMDLINE));
		tc_perf_data_close(pd);
	}
	if (f)
		fclose(f);
	CHECK_INT(nat, 2);
	check_same_records(&file, &pipe);

	/* 2. A real pipe through tc_perf_data_open_fd. */
	pipe.n = 0;
	snprintf(cmd, sizeof(cmd), "cat '%s'", path);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	if (f) {
		CHECK_INT(tc_perf_data_open_fd(&pd, fileno(f), "cat", &e), 0);
		if (pd) {
			CHECK_INT(read_all(pd, &pipe, &e), 0);
			tc_perf_data_close(pd);
		}
		pclose(f);
		check_same_records(&file, &pipe);
	}

	/* 3. The same bytes as a regular file (mapped). */
	pipe.n = 0;
	CHECK_INT(tc_perf_data_open(&pd, path, &e), 0);
	if (pd) {
		CHECK(tc_perf_data_is_pipe(pd));
		CHECK_INT(read_all(pd, &pipe, &e), 0);
		tc_perf_data_close(pd);
		check_same_records(&file, &pipe);
	}
	unlink(path);
	free(file.v);
	free(pipe.v);
}

/* The first warning of the last try_mem, "" if none. */
static char last_warn[256];

/* Open buf[0, len) and read it all; 0 on success (last_warn: what the reader stepped over),
 * else -1 with e->msg set. The copy is exactly len bytes so that ASan sees any read past
 * the end. */
static int try_mem(const uint8_t *buf, size_t len, bool stream, struct tc_err *e)
{
	uint8_t *copy = malloc(len ? len : 1);
	struct tc_perf_data *pd = NULL;
	struct tc_perf_data_record r;
	FILE *f = NULL;
	size_t n = 0;
	int ret;

	memcpy(copy, buf, len);
	e->msg[0] = '\0';
	if (stream) {
		f = fmemopen(copy, len ? len : 1, "rb");
		if (!len)
			fgetc(f);	/* fmemopen cannot be empty: consume the byte */
		ret = tc_perf_data_open_stream(&pd, f, "perf.data", e);
	} else {
		ret = tc_perf_data_open_mem(&pd, copy, len, "perf.data", e);
	}
	while (!ret && (ret = tc_perf_data_next(pd, &r, e)) > 0) {
		if (++n > len) {	/* every record takes 8 bytes: more means a loop */
			tc_err_set(e, 0, "looping");
			ret = -2;
			break;
		}
		ret = 0;
	}
	last_warn[0] = '\0';
	if (pd && tc_perf_data_warnings(pd)->n)
		snprintf(last_warn, sizeof(last_warn), "%s", tc_perf_data_warnings(pd)->msgs[0].text);
	tc_perf_data_close(pd);
	if (f)
		fclose(f);
	free(copy);
	return ret;
}

/* Every cut fails with a message, reads the records before it with a warning, or (pipe mode,
 * on a record boundary) reads cleanly. */
static void truncate_every_97(const char *what, const uint8_t *buf, size_t len, bool stream,
			      bool file_mode)
{
	size_t fails = 0, silent = 0, loops = 0, ok = 0, warned = 0;
	struct tc_err e;

	for (size_t cut = 0; cut < len; cut += 97) {
		int ret = try_mem(buf, cut, stream, &e);

		if (ret == -2)
			loops++;
		else if (ret < 0 && !e.msg[0])
			silent++;
		else if (ret < 0)
			fails++;
		else if (last_warn[0])
			warned++;
		else
			ok++;
	}
	printf("#   %s%s: %zu cuts failed with a message, %zu warned, %zu read cleanly\n", what,
	       stream ? " (stream)" : "", fails, warned, ok);
	CHECK_INT(loops, 0);
	CHECK_INT(silent, 0);
	if (file_mode)
		CHECK_INT(ok, 0);	/* any cut loses the header's sections: never unsaid */
	CHECK(fails + warned > 0);
	CHECK_INT(try_mem(buf, len, stream, &e), 0);
}

TEST(hostile_truncated_at_every_97th_byte)
{
	static const char *const files[] = { ETM, MISSING, IPT };
	struct tc_err e;

	if (!td(ETM))
		SKIP("no test data");
	for (size_t i = 0; i < 3; i++) {
		size_t len = 0;
		uint8_t *buf = slurp(td(files[i]), &len);

		CHECK(buf != NULL);
		if (!buf)
			continue;
		truncate_every_97(files[i], buf, len, false, true);
		free(buf);
	}
	{
		char *path = make_pipe_file();
		size_t len = 0;
		uint8_t *buf = path ? slurp(path, &len) : NULL;

		if (buf) {
			/* Pipe mode: a cut on a record boundary is a clean (short) stream. */
			truncate_every_97("pipe " IPT, buf, len, false, false);
			truncate_every_97("pipe " IPT, buf, len, true, false);
		}
		free(buf);
		if (path)
			unlink(path);
	}
	CHECK_INT(try_mem((const uint8_t *)"PERFILE2", 8, false, &e), -1);
	CHECK(strstr(e.msg, "too short") != NULL);
	CHECK_INT(try_mem((const uint8_t *)"", 0, true, &e), -1);
	CHECK(e.msg[0] != '\0');
}

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

TEST(hostile_headers_and_sizes)
{
	size_t len = 0;
	uint8_t *orig = slurp(td(ETM) ? td(ETM) : "/nonexistent", &len), *b;
	struct tc_err e;

	if (!orig)
		SKIP("no test data");
	b = malloc(len);

	/* A zero-size record at the start of the data section (0x138). */
	memcpy(b, orig, len);
	put16(b + 0x138 + 6, 0);
	CHECK_INT(try_mem(b, len, false, &e), -1);
	CHECK(strstr(e.msg, "offset 0x138") && strstr(e.msg, "size 0x0"));

	/* A record whose size runs past the data section (0x138 + 0x2720 = 0x2858). */
	memcpy(b, orig, len);
	put16(b + 0x26a8 + 6, 0x1000);
	CHECK_INT(try_mem(b, len, false, &e), -1);
	CHECK_STR(e.msg, "perf.data: record at offset 0x26a8 has size 0x1000 past the end of "
		  "the data section (0x2858)");

	/* AUXTRACE trace bytes past the data section. */
	memcpy(b, orig, len);
	put64(b + 0x26a8 + 8, 0x100000);
	CHECK_INT(try_mem(b, len, false, &e), -1);
	CHECK(strstr(e.msg, "AUXTRACE record at offset 0x26a8") && strstr(e.msg, "past the end"));

	/* Data section past EOF: a truncated file, its records read with a warning. */
	memcpy(b, orig, len);
	put64(b + 48, 0x100000);
	CHECK_INT(try_mem(b, len, false, &e), 0);
	CHECK(strstr(last_warn, "data section 0x138+0x100000 runs past the end of the file"));

	/* A huge attr count, and a nonsense attr size. */
	memcpy(b, orig, len);
	put64(b + 32, 0x90ULL * 100000000);
	CHECK_INT(try_mem(b, len, false, &e), -1);
	CHECK(strstr(e.msg, "attr section") != NULL);
	memcpy(b, orig, len);
	put64(b + 16, 0);
	CHECK_INT(try_mem(b, len, false, &e), -1);
	CHECK(strstr(e.msg, "attr size") != NULL);
	memcpy(b, orig, len);
	put32(b + 0xa8 + 4, 0xffff);	/* attr.size beyond the entry */
	CHECK_INT(try_mem(b, len, false, &e), -1);
	CHECK(strstr(e.msg, "attr 0 at offset 0xa8") != NULL);

	/* A feature section pointing past EOF (first entry: build ids): left out. */
	memcpy(b, orig, len);
	put64(b + 0x2858, len);
	CHECK_INT(try_mem(b, len, false, &e), 0);
	CHECK(strstr(last_warn, "feature 2 section") && strstr(last_warn, "left out"));

	/* CS_ETM info claiming 1000 CPUs. */
	memcpy(b, orig, len);
	put32(b + 0x408 + 0x18, 1000);
	CHECK_INT(try_mem(b, len, false, &e), -1);
	CHECK(strstr(e.msg, "AUXTRACE_INFO record at offset 0x408 is invalid") &&
	      strstr(e.msg, "1000 CPUs"));

	/* A COMM without its NUL. */
	memcpy(b, orig, len);
	memset(b + 0x3c8 + 16, 'x', 0x40 - 16 - 32);
	CHECK_INT(try_mem(b, len, false, &e), -1);
	CHECK(strstr(e.msg, "COMM record at offset 0x3c8 has an unterminated") != NULL);

	/* Not perf.data at all, and big-endian. */
	memcpy(b, orig, len);
	b[0] = 'X';
	CHECK_INT(try_mem(b, len, false, &e), -1);
	CHECK(strstr(e.msg, "PERFILE2") != NULL);
	memcpy(b, "2ELIFREP", 8);
	CHECK_INT(try_mem(b, len, false, &e), -1);
	CHECK(strstr(e.msg, "big-endian") != NULL);
	free(b);
	free(orig);
}

/* A pipe-format buffer built record by record. */
struct buf {
	uint8_t b[4096];
	size_t n;
};

static uint8_t *rec(struct buf *b, uint32_t type, uint16_t misc, size_t body)
{
	uint8_t *p = b->b + b->n;

	memset(p, 0, 8 + body);
	put32(p, type);
	put16(p + 4, misc);
	put16(p + 6, (uint16_t)(8 + body));
	b->n += 8 + body;
	return p + 8;
}

/* sample_type TID|TIME|CPU|IDENTIFIER: trailer pid, tid, time, cpu, res, id. */
static void trailer(uint8_t *end, uint32_t tid, uint64_t time, uint32_t cpu)
{
	put32(end - 32, tid);
	put32(end - 28, tid);
	put64(end - 24, time);
	put32(end - 16, cpu);
	put64(end - 8, 42);
}

TEST(synthesized_records_and_hw_id_versions)
{
	struct buf b = { .n = 16 };
	struct tc_perf_data *pd;
	struct tc_perf_data_record r;
	struct tc_err e = { 0 };
	uint8_t *q;
	int n = 0;

	memcpy(b.b, "PERFILE2", 8);
	put64(b.b + 8, 16);
	q = rec(&b, TC_PERF_DATA_HEADER_ATTR, 0, 128 + 8);
	put32(q, PERF_TYPE_HARDWARE);
	put32(q + 4, 128);
	put64(q + 24, PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER);
	put64(q + 40, 1ULL << 18);	/* sample_id_all */
	put64(q + 128, 42);
	/* v0.0: version 0 in [63:60], trace id 0x10. */
	q = rec(&b, PERF_RECORD_AUX_OUTPUT_HW_ID, 0, 8 + 32);
	put64(q, 0x10);
	trailer(q + 40, 7, 1000, 3);
	/* v0.1: minor 1 in [59:56], sink id 0x1234 in [39:8], trace id 0x22. */
	q = rec(&b, PERF_RECORD_AUX_OUTPUT_HW_ID, 0, 8 + 32);
	put64(q, (1ULL << 56) | (0x1234ULL << 8) | 0x22);
	trailer(q + 40, 7, 1001, 4);
	q = rec(&b, PERF_RECORD_AUX, 0, 24 + 32);
	put64(q, 0x100);
	put64(q + 8, 0x40);
	put64(q + 16, PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL |
		      PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW);
	trailer(q + 56, 7, 1002, 4);
	q = rec(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID, 64 + 8 + 32);
	put32(q, 7);
	put32(q + 4, 7);
	put64(q + 8, 0x400000);
	put64(q + 16, 0x1000);
	q[32] = 20;
	memset(q + 36, 0xab, 20);
	put32(q + 56, 5);
	memcpy(q + 64, "/bin/x", 7);
	trailer(q + 104, 7, 1003, 4);
	q = rec(&b, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, 32);
	trailer(q + 32, 7, 1004, 4);
	q = rec(&b, PERF_RECORD_LOST_SAMPLES, 0, 8 + 32);
	put64(q, 9);
	trailer(q + 40, 7, 1005, 4);
	q = rec(&b, PERF_RECORD_FORK, 0, 24 + 32);
	put32(q, 8);
	put32(q + 4, 7);
	trailer(q + 56, 8, 1006, 4);
	q = rec(&b, 200, 0, 16);	/* unknown: passed through */
	rec(&b, TC_PERF_DATA_FINISHED_ROUND, 0, 0);
	q = rec(&b, TC_PERF_DATA_AUXTRACE, 0, 40 + 16);	/* with its 16 trace bytes */
	put64(q, 16);
	put32(q + 32, 2);
	put16(b.b + b.n - 56 - 8 + 6, 48);	/* header.size excludes the trace */
	memset(q + 40, 0x5a, 16);

	CHECK_INT(tc_perf_data_open_mem(&pd, b.b, b.n, "synth", &e), 0);
	if (!pd)
		return;
	while (tc_perf_data_next(pd, &r, &e) > 0) {
		n++;
		if (r.type != TC_PERF_DATA_HEADER_ATTR && r.type < 64 && r.type != 200) {
			CHECK(r.attr == tc_perf_data_attr(pd, 0));
			CHECK(r.sid.has_time && r.sid.time == 999 + (uint64_t)n - 1);
			CHECK(r.sid.has_id && r.sid.id == 42);
		}
		switch (n) {
		case 1:
			CHECK_INT(r.type, TC_PERF_DATA_HEADER_ATTR);
			CHECK(r.u.header_attr.attr && r.u.header_attr.attr->nr_ids == 1);
			break;
		case 2:
			CHECK_INT(TC_CS_HW_ID_MAJOR(r.u.hw_id.hw_id), 0);
			CHECK_INT(TC_CS_HW_ID_MINOR(r.u.hw_id.hw_id), 0);
			CHECK_INT(TC_CS_HW_ID_TRACE_ID(r.u.hw_id.hw_id), 0x10);
			CHECK_INT(r.sid.cpu, 3);
			break;
		case 3:
			CHECK_INT(TC_CS_HW_ID_MINOR(r.u.hw_id.hw_id), 1);
			CHECK_INT(TC_CS_HW_ID_SINK_ID(r.u.hw_id.hw_id), 0x1234);
			CHECK_INT(TC_CS_HW_ID_TRACE_ID(r.u.hw_id.hw_id), 0x22);
			break;
		case 4:
			CHECK(r.u.aux.aux_offset == 0x100 && r.u.aux.aux_size == 0x40);
			CHECK(r.u.aux.truncated && r.u.aux.partial);
			CHECK(!r.u.aux.overwrite && !r.u.aux.collision);
			CHECK_INT(r.u.aux.format, 1);	/* raw, not formatted */
			break;
		case 5:
			CHECK(r.u.mmap.has_build_id && r.u.mmap.build_id_size == 20);
			CHECK(r.u.mmap.build_id[19] == 0xab && r.u.mmap.prot == 5);
			CHECK_STR(r.u.mmap.filename, "/bin/x");
			break;
		case 6:
			CHECK(r.u.sw.out && !r.u.sw.preempt);
			CHECK(r.sid.pid == 7 && r.sid.tid == 7);
			break;
		case 7:
			CHECK_INT(r.u.lost.lost, 9);
			break;
		case 8:
			CHECK(r.u.fork.pid == 8 && r.u.fork.ppid == 7);
			break;
		case 9:
			CHECK_INT(r.type, 200);
			CHECK_INT(r.size, 24);
			CHECK(tc_perf_data_type_name(200) == NULL);
			break;
		case 10:
			CHECK_INT(r.type, TC_PERF_DATA_FINISHED_ROUND);
			break;
		case 11:
			CHECK(r.u.auxtrace.size == 16 && r.u.auxtrace.cpu == 2);
			CHECK(r.u.auxtrace.data[0] == 0x5a && r.u.auxtrace.data[15] == 0x5a);
			break;
		}
	}
	CHECK_INT(n, 11);
	CHECK_INT(e.msg[0], 0);
	tc_perf_data_close(pd);
}

TEST(cs_etm_info_versions)
{
	/* v0: no count words; ETMv3 has 4 registers, ETMv4 7. */
	uint64_t v0[] = { 0, (8ULL << 32) | 2, 0,
			  TC_CS_ETMV3_MAGIC, 0, 0x1000, 0x12, 0x3, 0x4,
			  TC_CS_ETMV4_MAGIC, 1, 0x40, 0x14, 1, 2, 3, 4, 5 };
	/* v1: ETE with 8 params, ETMv4 with 9 (a newer writer appended two). */
	uint64_t v1[] = { 1, (9ULL << 32) | 2, 0,
			  TC_CS_ETE_MAGIC, 0, 8, 0x40, 0x10, 1, 2, 3, 4, 5, 0x47724a13,
			  TC_CS_ETMV4_MAGIC, 1, 9, 0x40, 0x12, 1, 2, 3, 4, 5, 6, 7 };
	/* v2: trace ID left for AUX_OUTPUT_HW_ID. */
	uint64_t v2[] = { 2, (9ULL << 32) | 1, 0,
			  TC_CS_ETMV4_MAGIC, 5, 7, 0x40, TC_CS_TRACE_ID_UNUSED_FLAG | 0x1a, 1, 2, 3,
			  4, 5 };
	uint64_t bad[sizeof(v1) / 8];
	struct tc_cs_etm_info c;
	struct tc_intel_pt_info p;
	struct tc_err e;
	uint64_t ipt[TC_IPT_PRIV_MAX + 2] = { 6 };

	CHECK_INT(tc_auxtrace_info_cs_etm_parse(v0, sizeof(v0) / 8, &c, &e), 0);
	CHECK(c.nr_cpus == 2 && c.pmu_type == 8 && c.version == 0);
	CHECK(c.cpus && c.cpus[0].arch == TC_CS_ETMV3 && c.cpus[0].trace_id == 0x12 &&
	      c.cpus[0].nr_params == 4 && c.cpus[0].nr_raw == 6);
	CHECK(c.cpus && c.cpus[1].arch == TC_CS_ETMV4 && c.cpus[1].trace_id == 0x14 &&
	      c.cpus[1].cpu == 1 && c.cpus[1].nr_params == 7);
	tc_auxtrace_info_cs_etm_free(&c);

	CHECK_INT(tc_auxtrace_info_cs_etm_parse(v1, sizeof(v1) / 8, &c, &e), 0);
	CHECK(c.cpus && c.cpus[0].arch == TC_CS_ETE && c.cpus[0].nr_params == 8 &&
	      c.cpus[0].params[7] == 0x47724a13 && c.cpus[0].trace_id == 0x10);
	CHECK(c.cpus && c.cpus[1].nr_params == 9 && c.cpus[1].trace_id == 0x12);
	tc_auxtrace_info_cs_etm_free(&c);

	CHECK_INT(tc_auxtrace_info_cs_etm_parse(v2, sizeof(v2) / 8, &c, &e), 0);
	CHECK(c.cpus && c.cpus[0].trace_id_unset && c.cpus[0].trace_id == 0x1a &&
	      c.cpus[0].cpu == 5);
	tc_auxtrace_info_cs_etm_free(&c);

	/* ETE is not valid in v0; unknown magic; short block; trailing words; version 3. */
	memcpy(bad, v1, sizeof(v1));
	bad[0] = 0;
	CHECK_INT(tc_auxtrace_info_cs_etm_parse(bad, sizeof(v1) / 8, &c, &e), -1);
	CHECK(strstr(e.msg, "unknown magic 0x5050505050505050") != NULL);
	memcpy(bad, v1, sizeof(v1));
	bad[14] = 0x6060606060606060ULL;
	CHECK_INT(tc_auxtrace_info_cs_etm_parse(bad, sizeof(v1) / 8, &c, &e), -1);
	CHECK(strstr(e.msg, "block 1 (word 14)") != NULL);
	memcpy(bad, v1, sizeof(v1));
	bad[5] = 1000;
	CHECK_INT(tc_auxtrace_info_cs_etm_parse(bad, sizeof(v1) / 8, &c, &e), -1);
	CHECK(strstr(e.msg, "runs past the end") != NULL);
	CHECK_INT(tc_auxtrace_info_cs_etm_parse(v1, sizeof(v1) / 8 - 1, &c, &e), -1);
	CHECK_INT(tc_auxtrace_info_cs_etm_parse(v0, sizeof(v0) / 8 - 2, &c, &e), -1);
	memcpy(bad, v1, sizeof(v1));
	bad[0] = 3;
	CHECK_INT(tc_auxtrace_info_cs_etm_parse(bad, sizeof(v1) / 8, &c, &e), -1);
	CHECK(strstr(e.msg, "version 3") != NULL);
	CHECK_INT(tc_auxtrace_info_cs_etm_parse(v1, 2, &c, &e), -1);

	/* Intel PT: a filter string after the fixed words. */
	ipt[TC_IPT_FILTER_STR_LEN] = 9;
	memcpy(&ipt[TC_IPT_PRIV_MAX], "filter @x", 10);
	CHECK_INT(tc_auxtrace_info_intel_pt_parse(ipt, TC_IPT_PRIV_MAX + 2, &p, &e), 0);
	CHECK_STR(p.filter, "filter @x");
	tc_auxtrace_info_intel_pt_free(&p);
	CHECK_INT(tc_auxtrace_info_intel_pt_parse(ipt, TC_IPT_PRIV_MAX + 1, &p, &e), -1);
	CHECK(strstr(e.msg, "filter") != NULL);
	CHECK_INT(tc_auxtrace_info_intel_pt_parse(ipt, 4, &p, &e), -1);
	CHECK_INT(tc_auxtrace_info_intel_pt_parse(ipt, 12, &p, &e), 0);	/* an old, shorter layout */
	CHECK_INT(p.nr, 12);
	tc_auxtrace_info_intel_pt_free(&p);
}

/* Bounded memory: a file-mode perf.data of one attr-less data section, written to a
 * temporary file: n AUXTRACE records of size bytes each (byte i of buffer k is
 * (i * 7 + k) & 0xff), a FINISHED_ROUND after each. Returns the path (static). */
static const char *write_aux_file(unsigned n, size_t size, uint64_t *aux_off)
{
	static char path[64];
	uint8_t h[104] = { 0 }, rec[48] = { 0 }, fin[8] = { 0 };
	uint8_t *data = malloc(size);
	uint64_t dsize = (uint64_t)n * (48 + size + 8);
	int fd;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/tc-unit-window-XXXXXX");
	if (!data || (fd = mkstemp(path)) < 0 || !(f = fdopen(fd, "wb")))
		abort();
	memcpy(h, "PERFILE2", 8);
	put64(h + 8, 104);
	put64(h + 16, 136);		/* attr_size: none follow */
	put64(h + 40, 104);		/* data */
	put64(h + 48, dsize);
	put32(rec, TC_PERF_DATA_AUXTRACE);
	put16(rec + 6, 48);
	put32(fin, TC_PERF_DATA_FINISHED_ROUND);
	put16(fin + 6, 8);
	fwrite(h, 1, sizeof(h), f);
	for (unsigned k = 0; k < n; k++) {
		for (size_t i = 0; i < size; i++)
			data[i] = (uint8_t)(i * 7 + k);
		put64(rec + 8, size);
		put64(rec + 16, (uint64_t)k * size);	/* AUX offset */
		put32(rec + 40, k);			/* cpu */
		aux_off[k] = 104 + (uint64_t)k * (48 + size + 8) + 48;
		fwrite(rec, 1, sizeof(rec), f);
		fwrite(data, 1, size, f);
		fwrite(fin, 1, sizeof(fin), f);
	}
	if (fclose(f))
		abort();
	free(data);
	return path;
}

/* Pages of the mapping that holds p in memory, from /proc/self/smaps (which walks the page
 * tables: exact, unlike statm's cached counters); -1 if it cannot be read. */
static long mapped_pages(const void *p)
{
	char line[512];
	unsigned long lo, hi, a = (unsigned long)p;
	long kb = -1;
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = a >= lo && a < hi;
		else if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
			break;
	}
	if (f)
		fclose(f);
	return kb < 0 ? -1 : kb * 1024 / sysconf(_SC_PAGESIZE);
}

/* Read path mapped, with the reader letting go of all but a page behind its cursor, and
 * from a copy in memory: the same records, byte for byte; and the trace the mapped reader
 * kept (u.auxtrace.kept) still reads the same once its pages were let go of. */
static void same_records_windowed(const char *path)
{
	size_t len, nkept = 0;
	uint8_t *copy = slurp(path, &len);
	struct tc_perf_data *pm = NULL, *pc = NULL;
	struct tc_perf_data_record a, b;
	struct tc_err e = { 0 };
	const uint8_t *kept[64];
	uint64_t kept_off[64], kept_len[64];
	size_t nrec = 0;
	int ra, rb;

	CHECK(copy != NULL);
	if (!copy)
		return;
	CHECK_INT(tc_perf_data_open(&pm, path, &e), 0);
	CHECK_INT(tc_perf_data_open_mem(&pc, copy, len, path, &e), 0);
	if (!pm || !pc)
		goto out;
	tc_perf_data_set_window(pm, 1);	/* rounds to a page: let go of nearly all */
	for (;;) {
		ra = tc_perf_data_next(pm, &a, &e);
		rb = tc_perf_data_next(pc, &b, &e);
		CHECK_INT(ra, rb);
		if (ra <= 0 || rb <= 0)
			break;
		nrec++;
		CHECK_INT(a.offset, b.offset);
		CHECK_INT(a.type, b.type);
		CHECK_INT(a.size, b.size);
		CHECK(a.size == b.size && !memcmp(a.raw, b.raw, a.size));
		if (a.type != TC_PERF_DATA_AUXTRACE || b.type != TC_PERF_DATA_AUXTRACE)
			continue;
		CHECK(a.u.auxtrace.kept && b.u.auxtrace.kept);
		CHECK_INT(a.u.auxtrace.size, b.u.auxtrace.size);
		CHECK(!memcmp(a.u.auxtrace.data, b.u.auxtrace.data, (size_t)b.u.auxtrace.size));
		if (nkept < 64) {
			kept[nkept] = a.u.auxtrace.data;
			kept_off[nkept] = (uint64_t)(b.u.auxtrace.data - copy);
			kept_len[nkept++] = a.u.auxtrace.size;
		}
	}
	CHECK_INT(ra, 0);
	CHECK(nrec > 0 && nkept > 0);
	/* the reader went past them all: each was let go of, and reads back the same */
	for (size_t i = 0; i < nkept; i++)
		CHECK(!memcmp(kept[i], copy + kept_off[i], (size_t)kept_len[i]));
out:
	tc_perf_data_close(pm);
	tc_perf_data_close(pc);
	free(copy);
}

TEST(window_reads_same_records)
{
	uint64_t off[3];
	const char *path = write_aux_file(3, 1 << 20, off);

	same_records_windowed(path);
	unlink(path);
	if (td(IPT))	/* a real recording: side-band, samples, two AUXTRACE buffers */
		same_records_windowed(td(IPT));
}

TEST(release_lets_go_of_trace_pages)
{
	enum { N = 2, SIZE = 8 << 20 };
	uint64_t off[N], sum = 0;
	const char *path = write_aux_file(N, SIZE, off);
	struct tc_perf_data *pd = NULL;
	struct tc_perf_data_record r;
	struct tc_err e = { 0 };
	const uint8_t *data[N] = { 0 };
	struct tc_perf_data_behind bh = { 0 };
	long page = sysconf(_SC_PAGESIZE), before, touched, after;
	unsigned k = 0;

	CHECK_INT(tc_perf_data_open(&pd, path, &e), 0);
	unlink(path);
	if (!pd)
		return;
	while (tc_perf_data_next(pd, &r, &e) > 0)
		if (r.type == TC_PERF_DATA_AUXTRACE && k < N) {
			CHECK(r.u.auxtrace.kept);
			CHECK_INT(r.offset + r.size, off[k]);
			data[k++] = r.u.auxtrace.data;
		}
	CHECK_INT(k, N);
	if (k != N || mapped_pages(data[0]) < 0)
		goto out;
	/* touch all of buffer 0: its pages come in; let go of it: they go */
	before = mapped_pages(data[0]);
	for (size_t i = 0; i < SIZE; i += (size_t)page)
		sum += data[0][i];
	touched = mapped_pages(data[0]);
	CHECK(touched - before >= SIZE / page - 2);
	tc_perf_data_release(pd, off[0], SIZE);
	after = mapped_pages(data[0]);
	CHECK(after - before <= 2);
	/* and it still reads the same */
	for (size_t i = 0; i < SIZE; i += 4099)
		CHECK(data[0][i] == (uint8_t)(i * 7));
	/* forward through buffer 1 with a 64 KiB window: about two windows stay, and what the
	 * kernel maps ahead of a fault (a large folio of the page cache, up to 2 MiB) */
	before = mapped_pages(data[0]);
	bh = (struct tc_perf_data_behind){ .from = off[1], .window = 64 << 10 };
	for (size_t i = 0; i < SIZE; i += (size_t)page) {
		sum += data[1][i];
		tc_perf_data_behind(pd, &bh, off[1] + i);
	}
	after = mapped_pages(data[0]);
	if (after - before > (2 * (64 << 10) + (2 << 20)) / page + 16)
		printf("#   %ld pages stayed\n", after - before);
	CHECK(after - before <= (2 * (64 << 10) + (2 << 20)) / page + 16);
	CHECK(sum > 0);
out:
	tc_perf_data_close(pd);
}
