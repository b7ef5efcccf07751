/* Decoded records as JSON lines and text (lib/output/listing.c): the shapes consumers rely on. */
#include "lib/output/listing.h"
#include "tests/unit/tc_test.h"

static char *render(bool json, const struct tc_rec *r)
{
	static char buf[1024];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	struct tc_listing o;

	tc_listing_init(&o, f, json);
	tc_listing_write(&o, r);
	fclose(f);
	return buf;
}

static const struct tc_rec range = {
	.type = TC_REC_RANGE, .id = 0x10, .cpu = 0, .pid = 42, .tid = 43, .offset = 1692,
	.start = 0xffffffc000096a00, .end = 0xffffffc000096a10, .insns = 4, .isa = TC_ISA_A64,
	.last = 'E',
};

TEST(range_json_line)
{
	CHECK_STR(render(true, &range),
		  "{\"type\":\"range\",\"id\":\"0x10\",\"cpu\":0,\"pid\":42,\"tid\":43,\"offset\":1692,"
		  "\"start\":\"0xffffffc000096a00\",\"end\":\"0xffffffc000096a10\",\"insns\":4,"
		  "\"isa\":\"A64\",\"last\":\"E\"}\n");
}

TEST(range_text)
{
	CHECK_STR(render(false, &range),
		  "       69c  id 0x10 cpu 0 42/43  range     0xffffffc000096a00-0xffffffc000096a10 4 A64 E\n");
}

TEST(branch_packet_and_unknowns)
{
	struct tc_rec b = { .type = TC_REC_BRANCH, .id = -1, .cpu = 3, .pid = -1, .tid = -1,
			    .offset = 7, .start = 0, .end = 0x400000 };
	struct tc_rec p = { .type = TC_REC_PACKET, .id = 0x11, .cpu = -1, .pid = -1, .tid = -1,
			    .offset = 86, .name = "I_NOT_SYNC" };

	CHECK_STR(render(true, &b),
		  "{\"type\":\"branch\",\"cpu\":3,\"offset\":7,\"from\":\"0x0\",\"to\":\"0x400000\"}\n");
	CHECK_STR(render(true, &p),
		  "{\"type\":\"packet\",\"id\":\"0x11\",\"offset\":86,\"packet\":\"I_NOT_SYNC\"}\n");
	CHECK_STR(tc_rec_type_name((enum tc_rec_type)999), "unknown");
}

/* 0x1000.. is main in /bin/app, 0x2000.. is in /lib/stripped without symbols. */
static int fake_sym(void *ctx, int pid, uint64_t addr, struct tc_images_sym *s)
{
	(void)ctx;
	(void)pid;
	*s = (struct tc_images_sym){ 0 };
	if (addr >= 0x1000 && addr < 0x1100)
		*s = (struct tc_images_sym){ .dso = "/bin/app", .sym = "main",
					     .sym_off = addr - 0x1000, .dso_off = addr - 0x1000 };
	else if (addr >= 0x2000 && addr < 0x3000)
		*s = (struct tc_images_sym){ .dso = "/lib/stripped", .dso_off = addr - 0x1000 };
	else
		return -1;
	return 0;
}

static const char *fake_comm(void *ctx, const struct tc_rec *r)
{
	(void)ctx;
	return r->pid == 42 && r->tid == 43 ? "app" : NULL;
}

/* The space number of the symbols kept (tc_listing_keep_syms). */
static uint64_t space_no = 7;

static const uint64_t *space_of(void *ctx)
{
	(void)ctx;
	return &space_no;
}

/* r written with sym and comm into buf (len bytes); then, with the symbols' forms kept,
 * three times (made, then kept, then after the space changed): the same bytes each time,
 * or what differs is what is returned. */
static char *render_sym(bool json, unsigned fields, const struct tc_rec *r, tc_symbolize_fn sym,
			tc_comm_fn comm, char *buf, size_t len)
{
	char *kept = malloc(3 * len);
	FILE *f = fmemopen(buf, len, "w");
	struct tc_listing o;
	size_t n;

	tc_listing_init(&o, f, json);
	o.sym = sym;
	o.comm = comm;
	o.fields = fields;
	tc_listing_write(&o, r);
	fclose(f);
	n = strlen(buf);
	f = fmemopen(kept, 3 * len, "w");
	tc_listing_init(&o, f, json);
	o.sym = sym;
	o.comm = comm;
	o.fields = fields;
	if (tc_listing_keep_syms(&o, space_of, NULL))
		abort();
	tc_listing_write(&o, r);
	tc_listing_write(&o, r);
	space_no++;
	tc_listing_write(&o, r);
	tc_listing_fini(&o);
	fclose(f);
	if (strlen(kept) != 3 * n || memcmp(kept, buf, n) || memcmp(kept + n, buf, n) ||
	    memcmp(kept + 2 * n, buf, n))
		snprintf(buf, len, "kept symbols wrote: %.*s", (int)(len - 32), kept);
	free(kept);
	return buf;
}

static char *render_with(bool json, unsigned fields, const struct tc_rec *r)
{
	static char buf[1024];

	return render_sym(json, fields, r, fake_sym, fake_comm, buf, sizeof(buf));
}

static const struct tc_rec br = {
	.type = TC_REC_BRANCH, .id = -1, .cpu = 1, .pid = 42, .tid = 43, .offset = 16,
	.start = 0x102c, .end = 0x2010,
};

TEST(symbols_on_both_ends)
{
	struct tc_rec gap = br, r = range;

	gap.start = 0;
	gap.end = 0x5000;	/* unmapped */
	r.start = 0x1004;
	CHECK_STR(render_with(false, 0, &br),
		  "        10  cpu 1 42/43  branch    0x102c main+0x2c (/bin/app) -> 0x2010 "
		  "[stripped+0x1010] (/lib/stripped)\n");
	CHECK_STR(render_with(false, 0, &gap),
		  "        10  cpu 1 42/43  branch    0x0 -> 0x5000\n");
	CHECK_STR(render_with(true, 0, &br),
		  "{\"type\":\"branch\",\"cpu\":1,\"pid\":42,\"tid\":43,\"offset\":16,"
		  "\"from\":\"0x102c\",\"to\":\"0x2010\",\"sym\":\"main+0x2c\",\"symoff\":44,"
		  "\"dso\":\"/bin/app\",\"dsoff\":\"0x2c\",\"to_dso\":\"/lib/stripped\",\"to_dsoff\":\"0x1010\"}\n");
	CHECK_STR(render_with(false, 0, &r),
		  "       69c  id 0x10 cpu 0 42/43  range     0x1004-0xffffffc000096a10 4 A64 E"
		  "  main+0x4 (/bin/app)\n");
}

TEST(fields_choose_columns_and_keys)
{
	unsigned f;
	char bad[16];

	CHECK_INT(tc_listing_fields_parse("ip,sym,symoff,addr,dso", &f, bad, sizeof(bad)), 0);
	/* perf script's layout */
	CHECK_STR(render_with(false, f, &br),
		  "             102c main+0x2c (/bin/app) =>             2010 [unknown] "
		  "(/lib/stripped)\n");
	CHECK_STR(render_with(true, f, &br),
		  "{\"type\":\"branch\",\"ip\":\"0x102c\",\"sym\":\"main+0x2c\",\"symoff\":44,"
		  "\"dso\":\"/bin/app\",\"addr\":\"0x2010\",\"to_dso\":\"/lib/stripped\"}\n");
	CHECK_INT(tc_listing_fields_parse("comm,tid,sym", &f, bad, sizeof(bad)), 0);
	CHECK_STR(render_with(false, f, &br), "              app      43 main\n");
	CHECK_STR(render_with(true, f, &br),
		  "{\"type\":\"branch\",\"comm\":\"app\",\"tid\":43,\"sym\":\"main\"}\n");
	CHECK_INT(tc_listing_fields_parse("ip,nope", &f, bad, sizeof(bad)), -1);
	CHECK_STR(bad, "nope");
	CHECK_INT(tc_listing_fields_parse("", &f, bad, sizeof(bad)), -1);
}

TEST(fields_keep_what_records_without_address_say)
{
	struct tc_rec p = { .type = TC_REC_ERROR, .id = -1, .cpu = 2, .pid = -1, .tid = -1,
			    .offset = 9, .text = "bad packet" };
	unsigned f;
	char bad[16];

	CHECK_INT(tc_listing_fields_parse("cpu,ip", &f, bad, sizeof(bad)), 0);
	CHECK_STR(render_with(false, f, &p), " [002] error: (bad packet)\n");
	CHECK_STR(render_with(true, f, &p),
		  "{\"type\":\"error\",\"cpu\":2,\"text\":\"bad packet\"}\n");
}

/* Edges the hand formatting must get as printf did: the largest numbers, unknown (negative)
 * pids and CPUs, strings to escape, a symbol name longer than the JSON "sym" buffer (cut at
 * 511 bytes, as it was), a long command name, text after a range. */
static char long_name[700];

static int odd_sym(void *ctx, int pid, uint64_t addr, struct tc_images_sym *s)
{
	(void)ctx;
	(void)pid;
	*s = (struct tc_images_sym){ .dso = "/odd \"dir\"\\lib\t.so", .sym = "f\n",
				     .sym_off = UINT64_MAX, .dso_off = UINT64_MAX };
	if (addr == 0x10)
		s->sym = long_name;
	return 0;
}

static const char *long_comm(void *ctx, const struct tc_rec *r)
{
	(void)ctx;
	(void)r;
	return "a-command-name-of-24-chr";
}

static char *render_odd(bool json, unsigned fields, const struct tc_rec *r)
{
	static char buf[4096];

	return render_sym(json, fields, r, odd_sym, long_comm, buf, sizeof(buf));
}

TEST(edge_values_and_escapes)
{
	struct tc_rec b = { .type = TC_REC_BRANCH, .id = 0xff, .cpu = -1, .pid = -1, .tid = 7,
			    .offset = UINT64_MAX, .start = UINT64_MAX, .end = 1, .has_time = true,
			    .time = UINT64_MAX };
	struct tc_rec r = { .type = TC_REC_RANGE, .id = -1, .cpu = 2147483647, .pid = -2147483647 - 1,
			    .tid = -1, .offset = 0, .start = 0x10, .end = 0x11, .insns = 4294967295u,
			    .isa = (enum tc_isa)77, .text = "t\"x" };
	char want[2048];
	unsigned f;
	char bad[16];

	memset(long_name, 'n', sizeof(long_name) - 1);
	CHECK_STR(render_odd(false, 0, &b),
		  "ffffffffffffffff  id 0xff -1/7  branch    0xffffffffffffffff f\n+0xffffffffffffffff "
		  "(/odd \"dir\"\\lib\t.so) -> 0x1 f\n+0xffffffffffffffff (/odd \"dir\"\\lib\t.so)\n");
	CHECK_STR(render_odd(true, 0, &b),
		  "{\"type\":\"branch\",\"id\":\"0xff\",\"tid\":7,\"offset\":-1,\"time\":18446744073709551615,"
		  "\"from\":\"0xffffffffffffffff\",\"to\":\"0x1\",\"sym\":\"f\\n+0xffffffffffffffff\","
		  "\"symoff\":18446744073709551615,\"dso\":\"/odd \\\"dir\\\"\\\\lib\\t.so\","
		  "\"dsoff\":\"0xffffffffffffffff\",\"to_sym\":\"f\\n+0xffffffffffffffff\","
		  "\"to_symoff\":18446744073709551615,\"to_dso\":\"/odd \\\"dir\\\"\\\\lib\\t.so\","
		  "\"to_dsoff\":\"0xffffffffffffffff\"}\n");
	/* the long name: text whole, JSON's "sym" cut at 511 bytes */
	snprintf(want, sizeof(want), "         0  cpu 2147483647  range     "
		 "0x10-0x11 4294967295 ? E  %s+0xffffffffffffffff (/odd \"dir\"\\lib\t.so) (t\"x)\n",
		 long_name);
	r.last = 'E';
	CHECK_STR(render_odd(false, 0, &r), want);
	snprintf(want, sizeof(want), "{\"type\":\"range\",\"cpu\":2147483647,\"offset\":0,"
		 "\"start\":\"0x10\",\"end\":\"0x11\",\"insns\":4294967295,\"isa\":\"?\",\"last\":\"E\","
		 "\"sym\":\"%.511s\",\"symoff\":18446744073709551615,"
		 "\"dso\":\"/odd \\\"dir\\\"\\\\lib\\t.so\",\"dsoff\":\"0xffffffffffffffff\","
		 "\"text\":\"t\\\"x\"}\n", long_name);
	CHECK_STR(render_odd(true, 0, &r), want);
	/* -F: a long command name, unknown pid and CPU, time */
	CHECK_INT(tc_listing_fields_parse("comm,pid,tid,cpu,time,flags,insncnt,ip,sym,dso,dsoff,addr",
					  &f, bad, sizeof(bad)), 0);
	CHECK_STR(render_odd(false, f, &b),
		  " a-command-name-of-24-chr      -1/7       [-01] 18446744073.709551615:           "
		  "       ffffffffffffffff f\n (/odd \"dir\"\\lib\t.so+0xffffffffffffffff) =>"
		  "                1 f\n (/odd \"dir\"\\lib\t.so+0xffffffffffffffff)\n");
	CHECK_STR(render_odd(true, f, &b),
		  "{\"type\":\"branch\",\"comm\":\"a-command-name-of-24-chr\",\"tid\":7,"
		  "\"time\":18446744073709551615,\"ip\":\"0xffffffffffffffff\","
		  "\"sym\":\"f\\n\",\"dso\":\"/odd \\\"dir\\\"\\\\lib\\t.so\",\"dsoff\":\"0xffffffffffffffff\","
		  "\"addr\":\"0x1\",\"to_sym\":\"f\\n\",\"to_dso\":\"/odd \\\"dir\\\"\\\\lib\\t.so\","
		  "\"to_dsoff\":\"0xffffffffffffffff\"}\n");
}

/* Records without an address: an event (time, name, text), a timestamp, an exception. */
TEST(events_and_values)
{
	static const uint64_t arr[] = { 1, 2 };
	static const struct tc_rec_field fl[] = {
		{ .name = "a", .kind = TC_FIELD_INT, .i = -5 },
		{ .name = "s", .kind = TC_FIELD_STR, .s = "x\"y" },
		{ .name = "v", .kind = TC_FIELD_ARRAY, .arr = arr, .n = 2 },
	};
	struct tc_rec ev = { .type = TC_REC_EVENT, .id = -1, .cpu = 3, .pid = -1, .tid = -1,
			     .offset = 0x99, .name = "sched:switch", .text = "a=1", .has_time = true,
			     .time = 1234567890123ULL, .fields = fl, .nfields = 3 };
	struct tc_rec ts = { .type = TC_REC_TIMESTAMP, .id = 0x12, .cpu = -1, .pid = -1,
			     .tid = -1, .offset = 5, .value = 0xabc };
	unsigned f;
	char bad[16];

	CHECK_STR(render(false, &ev),
		  "        99  cpu 3 -1/-1  event     1234.567890123 sched:switch: a=1\n");
	CHECK_STR(render(true, &ev),
		  "{\"type\":\"event\",\"cpu\":3,\"offset\":153,\"name\":\"sched:switch\","
		  "\"time\":1234567890123,\"fields\":{\"a\":-5,\"s\":\"x\\\"y\",\"v\":[1,2]},"
		  "\"text\":\"a=1\"}\n");
	CHECK_STR(render(false, &ts), "         5  id 0x12  timestamp 0xabc\n");
	CHECK_STR(render(true, &ts),
		  "{\"type\":\"timestamp\",\"id\":\"0x12\",\"offset\":5,\"value\":2748}\n");
	CHECK_INT(tc_listing_fields_parse("offset,id,cpu,time,event,ip", &f, bad, sizeof(bad)), 0);
	CHECK_STR(render_with(false, f, &ev),
		  "        99 id - [003]  1234.567890123: event: sched:switch: a=1\n");
	CHECK_STR(render_with(false, f, &ts), "         5 id 0x12 [-01] -: timestamp: 0xabc\n");
}

/* The kept forms follow what changes: the same address answered with other names (another
 * mapping: the space number moves, as a decoder's does), pids, a name too long to keep, a
 * DSO path too long for the scratch, an address without a symbol, places that change from
 * record to record, the space number moving alone. */
static char other_name[] = "other", huge_dso[9000];
static int flip;

static int changing_sym(void *ctx, int pid, uint64_t addr, struct tc_images_sym *s)
{
	(void)ctx;
	*s = (struct tc_images_sym){ .dso = "/bin/app", .sym = flip & 1 ? other_name : "main",
				     .sym_off = addr & 0xff, .dso_off = addr + (uint64_t)pid };
	if (addr == 0x3000)
		s->sym = long_name;
	if (addr == 0x4000)
		s->dso = huge_dso;
	if (addr == 0x5000)
		return -1;
	return 0;
}

static const char *comm_of(void *ctx, const struct tc_rec *r)
{
	(void)ctx;
	return r->tid % 3 ? "worker \"1\"" : r->tid % 2 ? NULL : "a-rather-long-command-name";
}

static size_t write_all(bool json, bool keep, const char *fields, char **out)
{
	static const uint64_t addrs[] = { 0x1000, 0x1004, 0x3000, 0x4000, 0x5000, 0, 0x1000 };
	char bad[32];
	size_t len = 0;
	FILE *f = open_memstream(out, &len);
	struct tc_listing o;

	memset(long_name, 'n', sizeof(long_name) - 1);
	memset(huge_dso, 'd', sizeof(huge_dso) - 1);
	flip = 0;
	space_no = 3;
	tc_listing_init(&o, f, json);
	o.sym = changing_sym;
	o.comm = comm_of;
	if (fields && tc_listing_fields_parse(fields, &o.fields, bad, sizeof(bad)))
		abort();
	if (keep && tc_listing_keep_syms(&o, space_of, NULL))
		abort();
	tc_listing_batch(&o, true);
	for (unsigned i = 0; i < 400; i++) {
		struct tc_rec r = {
			.type = i % 3 ? TC_REC_BRANCH : TC_REC_RANGE, .id = i % 5 == 4 ? 0x10 : -1,
			.cpu = i % 7 == 6 ? (int)i : -1, .pid = 40 + (int)(i / 50), .tid = 40 + (int)(i / 25),
			.offset = i / 2, .start = addrs[i % 7], .end = addrs[(i / 3) % 7],
			.insns = i, .isa = TC_ISA_X86_64, .last = i % 11 ? 'E' : '"',
			.has_time = i % 13 == 0 || i % 5 == 1,
			.time = i % 13 == 0 ? i * 1000 : 1700000000999999000ULL + i * 777,
			.text = i % 29 == 28 ? "a (note)" : NULL,
		};

		if (i % 17 == 0) {
			flip++;
			space_no++;
		}
		if (i % 41 == 0)
			space_no++;
		tc_listing_write(&o, &r);
	}
	tc_listing_flush(&o);
	tc_listing_fini(&o);
	fclose(f);
	return len;
}

/* -F's lists, with every kind of kept form: the default listing's (NULL), all fields, the
 * usual perf script ones, a DSO without symbols, no symbol field at all. */
static const char *const kept_fields[] = {
	NULL, "offset,id,comm,pid,tid,cpu,time,event,flags,insncnt,ip,sym,symoff,dso,dsoff,addr",
	"ip,addr,sym,insncnt,time,flags", "ip,dso,dsoff,addr", "comm,tid,time,ip,addr",
	"sym,symoff",
};

TEST(kept_symbols_follow_changes)
{
	for (size_t fi = 0; fi < sizeof(kept_fields) / sizeof(kept_fields[0]); fi++)
		for (int json = 0; json < 2; json++) {
			char *plain = NULL, *kept = NULL;
			size_t n = write_all(json, false, kept_fields[fi], &plain);
			size_t m = write_all(json, true, kept_fields[fi], &kept);

			CHECK(n > 400 * (fi ? 10 : 40));
			CHECK(n == m && !memcmp(plain, kept, n));
			if (!fi)
				CHECK(strstr(plain, json ? "\"last\":\"\\\"\"" : " \" "));
			if (fi < 3)
				CHECK(strstr(plain, fi == 2 ? "other" : "other+0x4"));
			if (!json && fi == 1)
				CHECK(strstr(plain, " 1700000000.999999777: branch:") &&
				      strstr(plain, " 1700000001.000003662: range:"));
			if (json && fi == 1)
				CHECK(strstr(plain, "\"time\":1700000000999999777,") &&
				      strstr(plain, "\"time\":1700000001000003662,"));
			free(plain);
			free(kept);
		}
}
