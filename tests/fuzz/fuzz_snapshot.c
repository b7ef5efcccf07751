/* libFuzzer target for the snapshot reader (lib/perfdata/snapshot.c: ini files, device
 * registers, memory dumps) and the decode behind it (decoders/coresight/cs_snapshot.c,
 * cs_session.c, cs_frame.c, etm_ocsd.c: OpenCSD's packet processors and instruction
 * decoders, with the dumps as memory).
 *
 * An input is a small directory: entries of a name line (at most 64 bytes of [A-Za-z0-9._-],
 * others dropped), a 4-byte little-endian length and that many bytes, each written to a file
 * of that name in a fresh directory (tests/fuzz/run.sh packs the real snapshots that way:
 * their ini files and the first KiB of each buffer and dump). The directory is opened, then
 * every buffer it lists is decoded as packets and as instructions. A reader error is fine;
 * a crash, leak, hang or a record out of place is not. */
#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoders/coresight/cs_snapshot.h"
#include "lib/perfdata/snapshot.h"
#include "tests/fuzz/fuzz_check.h"

#define MAX_FILES 24

static char dir[64];
static volatile uint64_t sink;

static void clear_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		abort();
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
}

static void remove_dir(void)
{
	clear_dir();
	rmdir(dir);
}

/* Unpack the entries into dir; how many files were written. */
static int unpack(const uint8_t *p, size_t len)
{
	int n = 0;

	while (len && n < MAX_FILES) {
		char name[80], path[160];
		size_t k = 0, i = 0;
		uint32_t sz;
		FILE *f;

		while (i < len && p[i] != '\n') {
			if (k < 64 && (isalnum(p[i]) || p[i] == '.' || p[i] == '_' || p[i] == '-'))
				name[k++] = (char)p[i];
			i++;
		}
		name[k] = 0;
		if (i + 5 > len)
			break;
		memcpy(&sz, p + i + 1, 4);
		p += i + 5;
		len -= i + 5;
		if (sz > len)
			sz = (uint32_t)len;
		if (k && strcmp(name, ".") && strcmp(name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", dir, name);
			if (!(f = fopen(path, "wb")))
				abort();
			if (sz && fwrite(p, 1, sz, f) != sz)
				abort();
			fclose(f);
			n++;
		}
		p += sz;
		len -= sz;
	}
	return n;
}

struct seen {
	uint64_t n;
	unsigned what;
};

static void on_rec(void *ctx, const struct tc_rec *r)
{
	struct seen *s = ctx;

	CHECK(r->type <= TC_REC_EVENT);
	CHECK(r->id >= 0 && r->id < 128);
	if (r->type == TC_REC_PACKET) {
		CHECK(s->what & TC_ETM_PACKETS);
		CHECK(r->name != NULL);
		sink += strlen(r->name);
	}
	if (r->type == TC_REC_RANGE) {
		CHECK(s->what & TC_ETM_ELEMENTS);
		CHECK(r->end >= r->start);
	}
	if (r->text)
		sink += strlen(r->text);
	s->n++;
}

static void decode(const struct tc_snapshot *ss, const char *buffer, unsigned what)
{
	struct seen s = { .what = what };
	struct tc_cs_snapshot_run run = { .buffer = buffer, .what = what, .emit = on_rec,
					  .emit_ctx = &s };
	struct tc_err e = { 0 };

	snprintf(fuzz_ctx, sizeof(fuzz_ctx), "buffer %.40s, what %u", buffer ? buffer : "-", what);
	if (tc_cs_snapshot_decode(ss, &run, &e))
		CHECK(e.msg[0]);
	for (size_t i = 0; i < run.notes.n; i++)
		CHECK(run.notes.msgs[i].text && run.notes.msgs[i].text[0]);
	tc_diag_free(&run.notes);
	sink += s.n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct tc_snapshot *ss;
	struct tc_err e = { 0 };

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_snapshot.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		atexit(remove_dir);
	}
	clear_dir();
	unpack(data, len);
	snprintf(fuzz_ctx, sizeof(fuzz_ctx), "open");
	if (tc_snapshot_open(&ss, dir, &e)) {
		CHECK(e.msg[0]);
		return 0;
	}
	for (size_t i = 0; i < ss->ndevs; i++) {
		uint64_t v;

		sink += tc_snapshot_reg(&ss->devs[i], "TRCIDR0", &v) ? 0 : v;
	}
	decode(ss, NULL, TC_ETM_PACKETS);
	for (size_t i = 0; i < ss->nbufs && i < 4; i++) {
		decode(ss, ss->bufs[i].name, TC_ETM_PACKETS);
		decode(ss, ss->bufs[i].name, TC_ETM_ELEMENTS);
	}
	tc_snapshot_free(ss);
	return 0;
}
