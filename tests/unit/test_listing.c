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
