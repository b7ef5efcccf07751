/* libFuzzer target for the output formatters (lib/output/listing.c text and JSON,
 * branch_profile.c with autofdo.c and bolt.c, and through lib/analysis folded.c, chrome.c, svg.c and the report tables):
 * the input is a stream of decoded records (14 bytes each: type, IDs, addresses, counts,
 * instruction class) and, after a 0xff 0xff marker, a pool of strings that packet names,
 * error texts, symbol names, thread names and binary paths are cut from (control bytes,
 * quotes, '<', invalid UTF-8 and all). Every format is written to memory; the JSON ones
 * (listing, chrome, report) must hold no raw control byte. A crash, leak, hang or such a
 * byte is a finding. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/analysis/analysis.h"
#include "lib/output/autofdo.h"
#include "lib/output/bolt.h"
#include "lib/output/branch_profile.h"
#include "lib/output/listing.h"
#include "tests/fuzz/fuzz_check.h"

#define REC 14
#define MAX_RECS 2048

static const uint8_t *pool;
static size_t pool_len;
static char strs[16][48];

/* String k of the pool (NUL-terminated copies of 0..47 bytes). */
static const char *str(unsigned k)
{
	size_t at, n;

	k &= 15;
	if (!pool_len)
		return k & 1 ? "" : "main";
	at = (k * 37) % pool_len;
	n = pool[at] % 48;
	if (n > pool_len - at - 1)
		n = pool_len - at - 1;
	memcpy(strs[k], pool + at + 1, n);
	strs[k][n] = 0;
	return strs[k];
}

static int sym(void *ctx, int pid, uint64_t addr, const char **name, uint64_t *start)
{
	(void)ctx;
	if ((addr >> 8 & 7) == 7)
		return -1;
	*name = str((unsigned)(addr >> 8) + (unsigned)pid);
	*start = addr & ~0xffULL;
	return 0;
}

static const char *dso(void *ctx, int pid, uint64_t addr)
{
	(void)ctx;
	(void)pid;
	return addr & 0x8000 ? str(9) : NULL;
}

static const char *comm(void *ctx, int pid, int tid)
{
	(void)ctx;
	(void)pid;
	return tid & 1 ? str((unsigned)tid) : NULL;
}

static const char *rec_comm(void *ctx, const struct tc_rec *r)
{
	return comm(ctx, r->pid, r->tid);
}

static int symbolize(void *ctx, int pid, uint64_t addr, struct tc_images_sym *s)
{
	(void)pid;
	const char *n;
	uint64_t start;

	*s = (struct tc_images_sym){ .dso = dso(ctx, 1, addr), .dso_off = addr & 0xfff };
	if (sym(ctx, 1, addr, &n, &start))
		return s->dso ? 0 : -1;
	s->sym = n;
	s->sym_off = addr - start;
	return 0;
}

/* Two binaries: addresses below 0x8000 and above, with hostile paths. */
static int file(void *ctx, int pid, uint64_t addr, struct tc_images_file *f)
{
	(void)ctx;
	(void)pid;
	if ((addr >> 12 & 7) == 3)
		return -1;
	f->dso = addr & 0x8000 ? str(10) : str(11);
	f->build_id = addr & 0x8000 ? "" : "0c9a20bf9c009d0e4e8bbf9fad0300ae";
	f->first_load = addr & 0x8000 ? 0x8000 : 0x1000;
	f->vaddr = addr;
	return 0;
}

static size_t read_mem(void *ctx, int pid, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	(void)pid;
	for (size_t i = 0; i < len; i++)
		((uint8_t *)buf)[i] = (uint8_t)((addr + i) * 0x9d);
	return len;
}

static void to_rec(const uint8_t *p, struct tc_rec *r)
{
	uint16_t a, b;

	memset(r, 0, sizeof(*r));
	r->type = (enum tc_rec_type)(p[0] % (TC_REC_EVENT + 1));
	r->id = p[1] & 0x80 ? -1 : p[1];
	r->cpu = (p[2] & 7) - 1;
	r->tid = (p[2] >> 3 & 7) - 1;
	r->pid = r->tid < 0 ? -1 : r->tid / 2 + 1;
	memcpy(&a, p + 3, 2);
	memcpy(&b, p + 5, 2);
	r->start = 0x1000 + a;
	r->end = r->start + (b & 0x3ff);
	r->offset = p[7];
	r->insns = p[8];
	r->isa = (enum tc_isa)(p[9] % 6);
	r->last = p[10] & 1 ? 'E' : 'N';
	r->last_type = p[10] >> 1 & 7;
	r->last_size = p[10] >> 4 & 0xf;
	r->last_taken = p[11] & 1;
	r->value = p[11] >> 1;
	r->has_time = p[12] & 1;
	r->time = (uint64_t)p[12] * 1000 + p[13];
	if (r->type == TC_REC_PACKET || r->type == TC_REC_OTHER || r->type == TC_REC_EVENT)
		r->name = str(p[13]);
	if (p[13] & 0x10)
		r->text = str(p[13] >> 4);
}

static bool json_clean(const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20 && buf[i] != '\n')
			return false;
	return true;
}

static void analysis(enum tc_analysis_format fmt, const struct tc_rec *v, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct tc_analysis_opts o = { .format = fmt, .f = f, .sym = sym, .dso = dso,
				      .comm = comm, .tid = -1, .cpu = -1, .title = str(3),
				      .thread_roots = n & 1 };
	struct tc_analysis *a;

	CHECK(f != NULL);
	snprintf(fuzz_ctx, sizeof(fuzz_ctx), "analysis %d", (int)fmt);
	o.view.per_thread = n & 2;
	o.view.limit = n & 4 ? 3 : 0;
	a = tc_analysis_new(&o);
	CHECK(a != NULL);
	for (size_t i = 0; i < n; i++)
		tc_analysis_feed(a, &v[i]);
	CHECK(tc_analysis_finish(a) == 0);
	if (fmt == TC_ANALYSIS_PROFILE)
		CHECK(tc_analysis_profile(a) != NULL);
	tc_analysis_free(a);
	fclose(f);
	if (fmt == TC_ANALYSIS_CHROME || fmt == TC_ANALYSIS_REPORT_JSON)
		CHECK(json_clean(buf, len));
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static struct tc_rec v[MAX_RECS];
	size_t n = 0, recs = len;
	struct tc_listing out;
	struct tc_branch_profile *bp;
	const struct tc_branch_profile_bin *bins;
	size_t nbins;
	char *buf = NULL;
	size_t blen = 0;
	FILE *f;

	for (size_t i = 0; i + 1 < len; i++)
		if (data[i] == 0xff && data[i + 1] == 0xff) {
			recs = i;
			break;
		}
	pool = recs < len ? data + recs + 2 : NULL;
	pool_len = recs < len ? len - recs - 2 : 0;
	for (size_t i = 0; i + REC <= recs && n < MAX_RECS; i += REC)
		to_rec(data + i, &v[n++]);

	for (int json = 0; json < 2; json++) {
		snprintf(fuzz_ctx, sizeof(fuzz_ctx), "listing, json %d", json);
		CHECK((f = open_memstream(&buf, &blen)) != NULL);
		tc_listing_init(&out, f, json);
		out.sym = n & 8 ? symbolize : NULL;
		out.comm = n & 16 ? rec_comm : NULL;
		out.fields = n & 32 ? (unsigned)(data[0] | data[len - 1] << 8) : 0;
		for (size_t i = 0; i < n; i++)
			tc_listing_write(&out, &v[i]);
		fclose(f);
		if (json)
			CHECK(json_clean(buf, blen));
		free(buf);
		buf = NULL;
	}

	snprintf(fuzz_ctx, sizeof(fuzz_ctx), "autofdo, bolt");
	bp = tc_branch_profile_new(&(struct tc_branch_profile_opts){ .file = file,
								   .read = read_mem });
	CHECK(bp != NULL);
	for (size_t i = 0; i < n; i++)
		tc_branch_profile_feed(bp, &v[i]);
	CHECK(tc_branch_profile_finish(bp, &bins, &nbins) == 0);
	CHECK((f = open_memstream(&buf, &blen)) != NULL);
	CHECK(tc_autofdo_write(bins, nbins, f) == 0);
	for (size_t i = 0; i < nbins; i++)
		CHECK(tc_bolt_write(&bins[i], f) == 0);
	fclose(f);
	free(buf);
	buf = NULL;
	tc_branch_profile_free(bp);

	for (int fmt = TC_ANALYSIS_FOLDED; fmt <= TC_ANALYSIS_PROFILE; fmt++)
		analysis((enum tc_analysis_format)fmt, v, n);
	return 0;
}
