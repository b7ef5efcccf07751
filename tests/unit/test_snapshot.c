/* Snapshot reader (lib/perfdata/snapshot.c): every OpenCSD snapshot in ../shared/testdata parses, with
 * the devices, buffers, sources and dumps their ini files hold; broken inis give file:line. */
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/perfdata/snapshot.h"
#include "tests/unit/tc_test.h"

struct want {
	const char *dir;
	size_t ndevs, nbufs;
	const char *buf0, *format0;
	size_t nsources0;	/* sources mapped to the first buffer */
	const char *src;	/* one trace source, its type and its core's type */
	const char *src_type, *core_type;
	const char *reg;	/* a register of src and its value */
	uint64_t reg_val;
	size_t core_dumps;	/* dumps of src's core */
};

static const struct want snaps[] = {
	{ "juno_r1_1", 13, 2, "ETB_0", "coresight", 6, "ETM_0", "ETM4", "Cortex-A53",
	  "TRCIDR0", 0x28000EA1, 1 },
	{ "TC2", 11, 1, "ETB_0", "coresight", 6, "ETM_0", "ETM3.5", "Cortex-A7", "ETMCR",
	  0x10001860, 1 },
	{ "Snowball", 0, 1, "ETB_0", "coresight", 0, NULL, NULL, NULL, NULL, 0, 0 },
	{ "bugfix-exact-match", 0, 1, "etr_0", "coresight", 6, "etm_2", NULL, NULL,
	  "TRCTRACEIDR", 0x14, 5 },
	{ "a57_single_step", 0, 1, NULL, "coresight", 0, NULL, NULL, NULL, NULL, 0, 0 },
	{ "juno-uname-001", 0, 1, "ETB_0", "coresight", 0, NULL, NULL, NULL, NULL, 0, 4 },
	{ "stm_only", 1, 1, NULL, "coresight", 1, NULL, NULL, NULL, NULL, 0, 0 },
	{ "stm_only-juno", 0, 1, NULL, "coresight", 1, NULL, NULL, NULL, NULL, 0, 0 },
	{ "stm-issue-27", 0, 1, NULL, "coresight", 1, NULL, NULL, NULL, NULL, 0, 0 },
	{ "a55-test-tpiu", 2, 1, "DSTREAM_0", "dstream_coresight", 1, "CSETM_0", "ETM4.2",
	  "Cortex-A55", "TRCIDR0", 0x08000CA1, 1 },
	{ "trace_cov_a15", 6, 1, "PTM_0_2", "source_data", 1, "PTM_0_2", NULL, "Cortex-A15",
	  NULL, 0, 9 },
	{ "init-short-addr", 0, 1, NULL, "source_data", 1, NULL, NULL, NULL, NULL, 0, 0 },
	{ "ete/ete_ip", 2, 1, "ETB_1", "source_data", 1, "ETE_0_s1", "ETE", "ARM-AA64",
	  "TRCDEVARCH", 0x47705a13, 8 },
	{ "ete/event_test", 2, 1, NULL, "source_data", 1, NULL, "ETE", NULL, NULL, 0, 0 },
};

static void check_one(const char *td, const struct want *w)
{
	char dir[4096];
	struct tc_snapshot *ss = NULL;
	struct tc_err e = { 0 };
	size_t nregs = 0, ndumps = 0, nsrc_devs = 0;

	snprintf(dir, sizeof(dir), "%s/opencsd/%s", td, w->dir);
	CHECK(tc_snapshot_is(dir));
	if (tc_snapshot_open(&ss, dir, &e)) {
		printf("#   %s: %s\n", w->dir, e.msg);
		CHECK(0);
		return;
	}
	CHECK_STR(ss->version, "1.0");
	CHECK(ss->ndevs > 0);
	if (w->ndevs)
		CHECK_INT(ss->ndevs, w->ndevs);
	CHECK_INT(ss->nbufs, w->nbufs);
	CHECK(ss->nbufs > 0 && ss->bufs[0].name && ss->bufs[0].path);
	if (!ss->nbufs)
		goto out;
	if (w->buf0)
		CHECK_STR(ss->bufs[0].name, w->buf0);
	CHECK_STR(ss->bufs[0].format, w->format0);
	CHECK(access(ss->bufs[0].path, R_OK) == 0);
	if (w->nsources0)
		CHECK_INT(ss->bufs[0].nsources, w->nsources0);
	/* Every source of every buffer is a device of class trace_source. */
	for (size_t b = 0; b < ss->nbufs; b++)
		for (size_t i = 0; i < ss->bufs[b].nsources; i++) {
			const struct tc_snapshot_device *d =
				tc_snapshot_device(ss, ss->bufs[b].sources[i]);

			CHECK(d != NULL);
			if (d && !strcmp(d->class_, "trace_source"))
				nsrc_devs++;
			else
				printf("#   %s: source %s is not a trace_source device\n", w->dir,
				       ss->bufs[b].sources[i]);
		}
	CHECK(nsrc_devs > 0);
	for (size_t i = 0; i < ss->ndevs; i++) {
		nregs += ss->devs[i].nregs;
		for (size_t k = 0; k < ss->devs[i].ndumps; k++) {
			const struct tc_snapshot_dump *d = &ss->devs[i].dumps[k];

			ndumps++;
			CHECK(d->path != NULL);
			/* Present files have a length (given or from the file). */
			if (d->path && access(d->path, R_OK) == 0)
				CHECK(d->length > 0);
		}
	}
	CHECK(nregs > 0);
	if (w->src) {
		const struct tc_snapshot_device *src = tc_snapshot_device(ss, w->src);
		const struct tc_snapshot_device *core = tc_snapshot_core_of(ss, w->src);
		uint64_t v = 0;

		CHECK(src != NULL);
		CHECK(core != NULL);
		if (src && w->src_type)
			CHECK_STR(src->type, w->src_type);
		if (core && w->core_type)
			CHECK_STR(core->type, w->core_type);
		if (core && w->core_dumps)
			CHECK_INT(core->ndumps, w->core_dumps);
		if (src && w->reg) {
			CHECK_INT(tc_snapshot_reg(src, w->reg, &v), 0);
			CHECK_INT(v, w->reg_val);
		}
		if (src)
			CHECK_INT(tc_snapshot_reg(src, "NOSUCHREG", &v), -1);
	} else if (w->src_type) {
		CHECK_STR(tc_snapshot_device(ss, ss->bufs[0].sources[0])->type, w->src_type);
	}
	printf("#   %s: %zu devices, %zu buffers, %zu registers, %zu dumps\n", w->dir, ss->ndevs,
	       ss->nbufs, nregs, ndumps);
out:
	tc_snapshot_free(ss);
}

TEST(every_opencsd_snapshot_parses)
{
	const char *td = tc_testdata();

	if (!td)
		SKIP("no ../shared/testdata");
	for (size_t i = 0; i < sizeof(snaps) / sizeof(snaps[0]); i++)
		check_one(td, &snaps[i]);
}

TEST(dump_details)
{
	const char *td = tc_testdata();
	char dir[4096];
	struct tc_snapshot *ss;
	struct tc_err e;
	const struct tc_snapshot_device *c;

	if (!td)
		SKIP("no ../shared/testdata");
	/* trace_cov_a15: dumps without length= take the file size; space= kept. */
	snprintf(dir, sizeof(dir), "%s/opencsd/trace_cov_a15", td);
	CHECK_INT(tc_snapshot_open(&ss, dir, &e), 0);
	c = tc_snapshot_core_of(ss, "PTM_0_2");
	CHECK(c && c->ndumps == 9);
	if (c && c->ndumps == 9) {
		struct stat st;

		CHECK_INT(c->dumps[1].address, 0x80000278);
		CHECK_STR(c->dumps[1].space, "S");
		CHECK(stat(c->dumps[1].path, &st) == 0);
		CHECK_INT(c->dumps[1].length, st.st_size);
		CHECK_INT(c->dumps[1].offset, 0);
	}
	tc_snapshot_free(ss);
	/* juno_r1_1: the 64-bit PC register, its "(size:64)" suffix dropped. */
	snprintf(dir, sizeof(dir), "%s/opencsd/juno_r1_1", td);
	CHECK_INT(tc_snapshot_open(&ss, dir, &e), 0);
	c = tc_snapshot_device(ss, "cpu_0");
	CHECK(c != NULL);
	if (c) {
		uint64_t v = 0;

		CHECK_INT(tc_snapshot_reg(c, "pc", &v), 0);
		CHECK(v == 0xFFFFFFC000081000ull);
		CHECK_INT(c->dumps[0].length, 0x50000);
	}
	CHECK_STR(tc_snapshot_buffer(ss, "ETB_1")->sources[0], "STM_12");
	CHECK(tc_snapshot_buffer(ss, "nope") == NULL);
	tc_snapshot_free(ss);
}

static void put_file(const char *dir, const char *name, const char *text)
{
	char p[4200];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

static void expect_err(const char *dir, const char *want)
{
	struct tc_snapshot *ss = NULL;
	struct tc_err e = { 0 };

	CHECK_INT(tc_snapshot_open(&ss, dir, &e), -1);
	CHECK(ss == NULL);
	if (!strstr(e.msg, want)) {
		printf("#   message '%s' lacks '%s'\n", e.msg, want);
		CHECK(0);
	}
}

TEST(broken_inis_name_file_and_line)
{
	char dir[] = "/tmp/tc_snapXXXXXX";
	char want[4200];

	if (!mkdtemp(dir))
		abort();
	CHECK(!tc_snapshot_is(dir));
	snprintf(want, sizeof(want), "%s/snapshot.ini: cannot open", dir);
	expect_err(dir, want);

	put_file(dir, "snapshot.ini", "[snapshot]\nversion=1.0\n[device_list]\ndevice0=d.ini\n"
				      "[trace]\nmetadata=trace.ini\n");
	CHECK(tc_snapshot_is(dir));
	snprintf(want, sizeof(want), "%s/d.ini: cannot open", dir);
	expect_err(dir, want);

	put_file(dir, "d.ini", "[device]\nname=ETM_0\nclass=trace_source\ntype=ETM4\n[regs]\n"
			       "TRCIDR0(0x078)=zz\n");
	snprintf(want, sizeof(want), "%s/d.ini:6: TRCIDR0(0x078): 'zz' is not a number", dir);
	expect_err(dir, want);

	put_file(dir, "d.ini", "[device]\nname=ETM_0\nclass=trace_source\ntype=ETM4\n[regs]\n"
			       "TRCIDR0\n");
	snprintf(want, sizeof(want), "%s/d.ini:6: expected key=value", dir);
	expect_err(dir, want);

	put_file(dir, "d.ini", "[device]\nname=ETM_0\nclass=trace_source\ntype=ETM4\n"
			       "[dump]\naddress=0x1000\n");
	snprintf(want, sizeof(want), "%s/d.ini:5: dump section without file=", dir);
	expect_err(dir, want);

	put_file(dir, "d.ini", "[device]\nname=ETM_0\nclass=trace_source\ntype=ETM4\n[regs]\n"
			       "TRCIDR0(0x078)=0x1\n");
	snprintf(want, sizeof(want), "%s/trace.ini: cannot open", dir);
	expect_err(dir, want);

	put_file(dir, "trace.ini", "[trace_buffers]\nbuffers=buffer0\n[buffer0\nname=B\n");
	snprintf(want, sizeof(want), "%s/trace.ini:3: bad section header", dir);
	expect_err(dir, want);

	put_file(dir, "trace.ini", "[trace_buffers]\nbuffers=buffer0\n[buffer0]\nname=B\n");
	expect_err(dir, "buffer section [buffer0] needs name=, file= and format=");

	put_file(dir, "trace.ini", "[trace_buffers]\nbuffers=buffer0\n[buffer0]\nname=B\n"
				   "file=b.bin\nformat=source_data\n[source_buffers]\nETM_0=B\n");
	{
		struct tc_snapshot *ss;
		struct tc_err e;

		CHECK_INT(tc_snapshot_open(&ss, dir, &e), 0);
		CHECK_INT(ss->nbufs, 1);
		CHECK_INT(ss->bufs[0].nsources, 1);
		CHECK_STR(ss->devs[0].regs[0].name, "TRCIDR0");
		tc_snapshot_free(ss);
	}
	{
		char cmd[200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		CHECK(system(cmd) == 0);
	}
}
