/* Trace PMU discovery (lib/pmu/pmu.c, lib/pmu/cs_topo.c, lib/util/sysfs.c) on tests/fixtures/sysfs and on
 * small trees made on the fly. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/pmu/pmu.h"
#include "lib/util/diag.h"
#include "tests/unit/tc_test.h"

static const char *fixture(const char *name)
{
	static char path[PATH_MAX];
	const char *top = getenv("TOP");

	snprintf(path, sizeof(path), "%s/tests/fixtures/sysfs/%s", top ? top : ".", name);
	return path;
}

/* Discover a fixture; NULL (and a failed check) if discovery failed. */
static const struct tc_pmu *discover(const char *name, struct tc_pmu_list *l, const char *pmu)
{
	struct tc_err e = { 0 };
	int rc = tc_pmu_discover(fixture(name), l, &e);

	CHECK_INT(rc, 0);
	if (rc) {
		printf("#   %s: %s\n", name, e.msg);
		return NULL;
	}
	return pmu ? tc_pmu_find(l, pmu) : NULL;
}

static int strv_is(const struct tc_strv *s, int n, ...)
{
	va_list ap;
	int ok = s->n == (size_t)n;

	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		const char *want = va_arg(ap, const char *);

		if (ok && strcmp(s->v[i], want))
			ok = 0;
	}
	va_end(ap);
	if (!ok) {
		printf("#   got [");
		for (size_t i = 0; i < s->n; i++)
			printf("%s%s", i ? " " : "", s->v[i]);
		printf("]\n");
	}
	return ok;
}

static int diag_has(const struct tc_diag *d, const char *a, const char *b)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->msgs[i].text, a) && (!b || strstr(d->msgs[i].text, b)))
			return 1;
	for (size_t i = 0; i < d->n; i++)
		printf("#   diag: %s\n", d->msgs[i].text);
	return 0;
}

static void check_format(const struct tc_pmu *p, const char *term, enum tc_pmu_field field,
			 uint64_t mask)
{
	const struct tc_pmu_format *f = tc_pmu_term(p, term);

	CHECK(f != NULL);
	if (!f) {
		printf("#   no format term %s\n", term);
		return;
	}
	CHECK_INT(f->field, field);
	CHECK(f->mask == mask);
	if (f->mask != mask)
		printf("#   %s: mask 0x%llx, expected 0x%llx\n", term,
		       (unsigned long long)f->mask, (unsigned long long)mask);
}

static void check_cs_formats(const struct tc_pmu *p, int contextid_bit)
{
	check_format(p, "cycacc", TC_FIELD_CONFIG, 1ULL << 12);
	check_format(p, "contextid", TC_FIELD_CONFIG, 1ULL << contextid_bit);
	check_format(p, "contextid1", TC_FIELD_CONFIG, 1ULL << 14);
	check_format(p, "contextid2", TC_FIELD_CONFIG, 1ULL << 15);
	check_format(p, "timestamp", TC_FIELD_CONFIG, 1ULL << 28);
	check_format(p, "retstack", TC_FIELD_CONFIG, 1ULL << 29);
	check_format(p, "branch_broadcast", TC_FIELD_CONFIG, 1ULL << 8);
	check_format(p, "preset", TC_FIELD_CONFIG, 0xfULL);
	check_format(p, "sinkid", TC_FIELD_CONFIG2, 0xffffffffULL);
	check_format(p, "configid", TC_FIELD_CONFIG2, 0xffffffff00000000ULL);
}

static void check_sink(const struct tc_pmu *p, const char *name, uint64_t hash)
{
	const struct tc_pmu_cs_sink *s = tc_pmu_sink(p, name);

	CHECK(s != NULL);
	if (!s)
		return;
	CHECK_INT(s->hash_ok, 1);
	CHECK(s->hash == hash);
	CHECK(s->hash_str && strtoull(s->hash_str, NULL, 16) == hash && !strncmp(s->hash_str, "0x", 2));
}

TEST(juno_cs_etm_model)
{
	struct tc_pmu_list l;
	const struct tc_pmu *p = discover("juno", &l, "cs_etm");

	CHECK(p != NULL);
	if (!p)
		goto out;
	CHECK_INT(l.n, 1);
	CHECK_INT(l.unsupported.n, 0);
	CHECK_INT(l.diag.n, 0);
	CHECK_INT(p->kind, TC_PMU_CS_ETM);
	CHECK_INT(p->type, 10);
	CHECK_INT(p->nformats, 10);
	check_cs_formats(p, 14);
	CHECK_INT(p->ncaps, 0);
	CHECK_INT(p->nsinks, 2);
	check_sink(p, "tmc_etf0", 0x97979549);
	check_sink(p, "tmc_etr0", 0xa6509eae);
	CHECK(tc_pmu_sink(p, "tpiu0") == NULL);
	CHECK_INT(p->ncpus, 6);
	for (size_t i = 0; i < p->ncpus && i < 6; i++) {
		const struct tc_pmu_cs_cpu *c = &p->cpus[i];
		char dev[16];

		snprintf(dev, sizeof(dev), "etm%zu", i);
		CHECK_INT(c->cpu, i);
		CHECK_STR(c->device, dev);
		CHECK_STR(c->etm, "ETMv4");
		CHECK_INT(c->trace_id, 0x10 + 2 * i);
		CHECK(strv_is(&c->sinks, 2, "tmc_etf0", "tmc_etr0"));
	}
	CHECK(strv_is(&p->common_sinks, 2, "tmc_etf0", "tmc_etr0"));
out:
	tc_pmu_list_free(&l);
}

TEST(ete_trbe_per_cpu_sinks)
{
	struct tc_pmu_list l;
	const struct tc_pmu *p = discover("ete-trbe", &l, "cs_etm");
	static const uint64_t hash[] = { 0x3744496a, 0x58ca323, 0xd3d4fcdc, 0xa21d5695 };

	CHECK(p != NULL);
	if (!p)
		goto out;
	CHECK_INT(l.n, 1);
	CHECK_INT(l.diag.n, 0);
	CHECK(strv_is(&l.unsupported, 1, "arm_spe_0"));
	CHECK_INT(p->type, 9);
	check_cs_formats(p, 15);
	CHECK_INT(p->nsinks, 4);
	CHECK_INT(p->ncpus, 4);
	for (size_t i = 0; i < p->ncpus && i < 4; i++) {
		const struct tc_pmu_cs_cpu *c = &p->cpus[i];
		char name[16];

		snprintf(name, sizeof(name), "trbe%zu", i);
		check_sink(p, name, hash[i]);
		CHECK(strv_is(&c->sinks, 1, name));
		snprintf(name, sizeof(name), "ete%zu", i);
		CHECK_STR(c->device, name);
		CHECK_STR(c->etm, "ETE");
		CHECK_INT(c->trace_id, 0x10 + 2 * i);
	}
	CHECK_INT(p->common_sinks.n, 0);
out:
	tc_pmu_list_free(&l);
}

TEST(tc2_ptm_and_etmv3)
{
	struct tc_pmu_list l;
	const struct tc_pmu *p = discover("tc2", &l, "cs_etm");
	static const char *const etm[] = { "PTM", "PTM", "ETMv3", "ETMv3", "ETMv3" };

	CHECK(p != NULL);
	if (!p)
		goto out;
	CHECK_INT(l.diag.n, 0);
	CHECK_INT(p->type, 8);
	check_sink(p, "etb0", 0x75d7d72c);
	CHECK_INT(p->ncpus, 5);
	for (size_t i = 0; i < p->ncpus && i < 5; i++) {
		CHECK_STR(p->cpus[i].etm, etm[i]);
		CHECK_INT(p->cpus[i].trace_id, 0x10 + 2 * i);
		CHECK(strv_is(&p->cpus[i].sinks, 1, "etb0"));
	}
	CHECK(strv_is(&p->common_sinks, 1, "etb0"));
out:
	tc_pmu_list_free(&l);
}

static const char *cap(const struct tc_pmu *p, const char *name)
{
	for (size_t i = 0; i < p->ncaps; i++)
		if (!strcmp(p->caps[i].name, name))
			return p->caps[i].value;
	return NULL;
}

TEST(intel_pt_formats_and_caps)
{
	struct tc_pmu_list l;
	const struct tc_pmu *p = discover("intel-pt", &l, "intel_pt");

	CHECK(p != NULL);
	if (!p)
		goto out;
	CHECK_INT(l.n, 1);
	CHECK_INT(l.diag.n, 0);
	CHECK(strv_is(&l.unsupported, 1, "intel_bts"));
	CHECK_INT(p->kind, TC_PMU_INTEL_PT);
	CHECK_INT(p->type, 8);
	CHECK_INT(p->nformats, 14);
	check_format(p, "pt", TC_FIELD_CONFIG, 1ULL << 0);
	check_format(p, "cyc", TC_FIELD_CONFIG, 1ULL << 1);
	check_format(p, "tsc", TC_FIELD_CONFIG, 1ULL << 10);
	check_format(p, "branch", TC_FIELD_CONFIG, 1ULL << 13);
	check_format(p, "mtc_period", TC_FIELD_CONFIG, 0xfULL << 14);
	check_format(p, "cyc_thresh", TC_FIELD_CONFIG, 0xfULL << 19);
	check_format(p, "psb_period", TC_FIELD_CONFIG, 0xfULL << 24);
	check_format(p, "event", TC_FIELD_CONFIG, 1ULL << 31);
	check_format(p, "notnt", TC_FIELD_CONFIG, 1ULL << 55);
	CHECK_INT(p->ncaps, 18);
	CHECK_STR(cap(p, "mtc_periods"), "249");
	CHECK_STR(cap(p, "cycle_thresholds"), "3fff");
	CHECK_STR(cap(p, "num_address_ranges"), "2");
	CHECK_STR(cap(p, "ptwrite"), "0");
	CHECK_INT(p->nsinks, 0);
	CHECK_INT(p->ncpus, 0);
out:
	tc_pmu_list_free(&l);
}

TEST(empty_and_missing_roots)
{
	struct tc_pmu_list l;
	struct tc_err e = { 0 };
	char path[PATH_MAX];

	discover("empty", &l, NULL);
	CHECK_INT(l.n, 0);
	CHECK_INT(l.unsupported.n, 0);
	CHECK_INT(l.diag.n, 0);
	tc_pmu_list_free(&l);

	snprintf(path, sizeof(path), "%.4000s/does-not-exist", fixture("empty"));
	CHECK_INT(tc_pmu_discover(path, &l, &e), -1);
	CHECK_INT(e.errnum, ENOENT);
	CHECK(strstr(e.msg, "does-not-exist/bus/event_source/devices") != NULL);
	tc_pmu_list_free(&l);
}

TEST(broken_type_keeps_the_rest)
{
	struct tc_pmu_list l;
	const struct tc_pmu *p = discover("broken-type", &l, "cs_etm");

	CHECK(p != NULL);
	if (!p)
		goto out;
	CHECK_INT(p->type, -1);
	CHECK_INT(l.diag.n, 1);
	CHECK(diag_has(&l.diag, "broken-type/bus/event_source/devices/cs_etm/type",
		       "PMU type unknown"));
	CHECK_INT(p->nformats, 10);
	CHECK_INT(p->nsinks, 2);
	CHECK_INT(p->ncpus, 3);
	CHECK(strv_is(&p->common_sinks, 2, "tmc_etf0", "tmc_etr0"));
out:
	tc_pmu_list_free(&l);
}

TEST(broken_format_drops_one_term)
{
	struct tc_pmu_list l;
	const struct tc_pmu *p = discover("broken-format", &l, "cs_etm");

	CHECK(p != NULL);
	if (!p)
		goto out;
	CHECK_INT(l.diag.n, 1);
	CHECK(diag_has(&l.diag, "cs_etm/format/timestamp", "'config9:banana'"));
	CHECK_INT(p->nformats, 9);
	CHECK(tc_pmu_term(p, "timestamp") == NULL);
	check_format(p, "sinkid", TC_FIELD_CONFIG2, 0xffffffffULL);
	CHECK_INT(p->type, 10);
	CHECK_INT(p->ncpus, 3);
out:
	tc_pmu_list_free(&l);
}

TEST(broken_link_dangling_cpu_and_connection)
{
	struct tc_pmu_list l;
	const struct tc_pmu *p = discover("broken-link", &l, "cs_etm");

	CHECK(p != NULL);
	if (!p)
		goto out;
	CHECK_INT(l.diag.n, 2);
	CHECK(diag_has(&l.diag, "cs_etm/cpu2: dangling link to etm2", NULL));
	CHECK(diag_has(&l.diag, "replicator0/connections/out:0: dangling link to 'tpiu0'", NULL));
	CHECK_INT(p->ncpus, 3);
	if (p->ncpus != 3)
		goto out;
	CHECK_STR(p->cpus[2].device, "etm2");
	CHECK(p->cpus[2].etm == NULL);
	CHECK_INT(p->cpus[2].trace_id, -1);
	CHECK_INT(p->cpus[2].sinks.n, 0);
	CHECK(strv_is(&p->cpus[0].sinks, 2, "tmc_etf0", "tmc_etr0"));
	CHECK(strv_is(&p->cpus[1].sinks, 2, "tmc_etf0", "tmc_etr0"));
	CHECK_INT(p->common_sinks.n, 0);
out:
	tc_pmu_list_free(&l);
}

TEST(broken_register_unknown_tracer)
{
	struct tc_pmu_list l;
	const struct tc_pmu *p = discover("broken-register", &l, "cs_etm");

	CHECK(p != NULL);
	if (!p)
		goto out;
	CHECK_INT(l.diag.n, 1);
	CHECK(diag_has(&l.diag, "cs_etm/cpu1/trcidr/trcidr0", strerror(EISDIR)));
	CHECK_INT(p->ncpus, 3);
	if (p->ncpus != 3)
		goto out;
	CHECK(p->cpus[1].etm == NULL);
	CHECK_STR(p->cpus[0].etm, "ETMv4");
	CHECK_STR(p->cpus[2].etm, "ETMv4");
	CHECK_INT(p->cpus[2].trace_id, 0x14);
	/* the graph still says where its trace would go */
	CHECK(strv_is(&p->cpus[1].sinks, 2, "tmc_etf0", "tmc_etr0"));
out:
	tc_pmu_list_free(&l);
}

/* --- small trees made here, for what the fixtures do not show ------------------------------ */

static char tree[256];

static void put(const char *content, const char *fmt, ...)
{
	char path[PATH_MAX], rel[1024];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	for (char *s = strchr(path + strlen(tree) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	if (content[0] == '>') {	/* a symlink */
		CHECK_INT(symlink(content + 1, path), 0);
		return;
	}
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(content, f);
		fclose(f);
	}
}

static void new_tree(void)
{
	snprintf(tree, sizeof(tree), "/tmp/tc-pmu-XXXXXX");
	CHECK(mkdtemp(tree) != NULL);
	put("7\n", "bus/event_source/devices/cs_etm/type");
	put("config2:0-31\n", "bus/event_source/devices/cs_etm/format/sinkid");
}

static void rm_tree(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
	CHECK_INT(system(cmd), 0);
}

static void etm4_dev(const char *name)
{
	put("0x28000ea1\n", "dev/%s/trcidr/trcidr0", name);
	put("0x47704a13\n", "dev/%s/mgmt/trcdevarch", name);
	put("0x10\n", "dev/%s/mgmt/trctraceid", name);
}

TEST(cpus_sort_numerically_and_links_are_directed)
{
	struct tc_pmu_list l;
	struct tc_err e;
	const struct tc_pmu *p;

	new_tree();
	put("0x1\n", "bus/event_source/devices/cs_etm/sinks/sinkA");
	put("0x2\n", "bus/event_source/devices/cs_etm/sinks/sinkB");
	for (int cpu = 0; cpu <= 10; cpu += 10) {
		char name[16];

		snprintf(name, sizeof(name), "etm%d", cpu);
		etm4_dev(name);
		put(cpu ? ">../../../../dev/etm10" : ">../../../../dev/etm0",
		    "bus/event_source/devices/cs_etm/cpu%d", cpu);
		put(cpu ? ">../../../dev/etm10" : ">../../../dev/etm0",
		    "bus/coresight/devices/%s", name);
	}
	put(">../../../../dev/etm2", "bus/event_source/devices/cs_etm/cpu2");
	etm4_dev("etm2");
	put(">../../../dev/etm2", "bus/coresight/devices/etm2");
	put(">../../../dev/funnel0", "bus/coresight/devices/funnel0");
	put(">../../../dev/sinkA", "bus/coresight/devices/sinkA");
	put(">../../../dev/sinkB", "bus/coresight/devices/sinkB");
	/* etm0, etm2 -> funnel0 -> sinkA; etm10 -> funnel0 and -> sinkB. Following the in:
	 * links backwards would wrongly take etm0 from funnel0 to etm10 and on to sinkB. */
	put(">../../funnel0", "dev/etm0/connections/out:0");
	put(">../../funnel0", "dev/etm2/connections/out:0");
	put(">../../funnel0", "dev/etm10/connections/out:0");
	put(">../../sinkB", "dev/etm10/connections/out:1");
	put(">../../etm0", "dev/funnel0/connections/in:0");
	put(">../../etm10", "dev/funnel0/connections/in:1");
	put(">../../etm2", "dev/funnel0/connections/in:2");
	put(">../../sinkA", "dev/funnel0/connections/out:0");
	put("1\n", "dev/funnel0/connections/nr_links");
	put(">../../funnel0", "dev/sinkA/connections/in:0");
	put(">../../etm10", "dev/sinkB/connections/in:0");

	CHECK_INT(tc_pmu_discover(tree, &l, &e), 0);
	p = tc_pmu_find(&l, "cs_etm");
	CHECK(p != NULL);
	if (p && p->ncpus == 3) {
		CHECK_INT(l.diag.n, 0);
		CHECK_INT(p->cpus[0].cpu, 0);
		CHECK_INT(p->cpus[1].cpu, 2);
		CHECK_INT(p->cpus[2].cpu, 10);
		CHECK_STR(p->cpus[2].device, "etm10");
		CHECK(strv_is(&p->cpus[0].sinks, 1, "sinkA"));
		CHECK(strv_is(&p->cpus[1].sinks, 1, "sinkA"));
		CHECK(strv_is(&p->cpus[2].sinks, 2, "sinkA", "sinkB"));
		CHECK(strv_is(&p->common_sinks, 1, "sinkA"));
	} else {
		CHECK_INT(p ? p->ncpus : 0, 3);
	}
	tc_pmu_list_free(&l);
	rm_tree();
}

TEST(bad_sink_hash_is_reported)
{
	struct tc_pmu_list l;
	struct tc_err e;
	const struct tc_pmu *p;
	const struct tc_pmu_cs_sink *s;

	new_tree();
	put("tmc_etr0\n", "bus/event_source/devices/cs_etm/sinks/tmc_etr0");
	put("0xa6509eae\n", "bus/event_source/devices/cs_etm/sinks/tmc_etf0");
	CHECK_INT(tc_pmu_discover(tree, &l, &e), 0);
	p = tc_pmu_find(&l, "cs_etm");
	CHECK(p != NULL);
	if (p) {
		CHECK_INT(p->type, 7);
		s = tc_pmu_sink(p, "tmc_etr0");
		CHECK(s && !s->hash_ok);
		CHECK(diag_has(&l.diag, "sinks/tmc_etr0: expected a hex sink hash", "'tmc_etr0'"));
		s = tc_pmu_sink(p, "tmc_etf0");
		CHECK(s && s->hash_ok && s->hash == 0xa6509eae);
		CHECK_INT(l.diag.n, 1);
	}
	tc_pmu_list_free(&l);
	rm_tree();
}
