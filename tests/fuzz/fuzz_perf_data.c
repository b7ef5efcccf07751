/* libFuzzer target for the perf.data reader (lib/perfdata/perf_data.c, perf_records.c,
 * perf_features.c, auxtrace_info.c).
 *
 * Each input is read every way the API offers, and every field of every record is touched
 * (ASan then checks each pointer the reader hands out):
 *   1. tc_perf_data_open_mem: file or pipe mode, whichever the header says;
 *   2. file mode: the same bytes from a memfd through tc_perf_data_open_fd (the mmap path);
 *   3. pipe mode: the same bytes as a stream (fmemopen + tc_perf_data_open_stream), which must
 *      give the same records, offsets and outcome as 1;
 *   4. file mode: converted to a pipe stream as perf inject would (HEADER_ATTR records for
 *      the attrs and their ids, then the data section), read from memory and as a stream:
 *      both must give the records file mode gave, in order, with the same outcome.
 * The tracing data (feature or pipe record) and raw sample data are read too (see
 * touch_tracing_data and touch_sample).
 * A reader error is fine; a crash, leak, hang, or an invariant below failing is not
 * (abort(), which libFuzzer reports). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "decoders/tp_event.h"
#include "lib/perfdata/perf_data.h"
#include "lib/perfdata/tracing_data_read.h"
#include "tests/fuzz/fuzz_check.h"

static volatile uint64_t sink;

static uint64_t touch(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	CHECK(p || !n);
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	sink += h;
	return h;
}

static void touch_str(const char *s)
{
	if (s)
		touch(s, strlen(s) + 1);
}

/* What a walk saw, for comparing two ways of reading the same records. */
#define MAX_KEEP 4096
struct rec_key {
	uint32_t type;
	uint16_t misc, size;
	uint64_t offset;
	uint64_t hash;			/* raw bytes, and AUXTRACE trace bytes */
};

struct walk {
	int ret;			/* last tc_perf_data_next: 0 end, -1 error */
	size_t n;
	struct rec_key k[MAX_KEEP];
};

static void touch_attr(const struct tc_perf_data_attr *a)
{
	CHECK(a != NULL);
	touch(&a->attr, sizeof(a->attr));
	touch(a->ids, a->nr_ids * sizeof(*a->ids));
	touch_str(a->name);
}

static void touch_features(const struct tc_perf_data *pd)
{
	const struct tc_perf_data_features *f = tc_perf_data_features(pd);

	CHECK(f != NULL);
	for (size_t i = 0; i < f->nr_build_ids; i++) {
		CHECK(f->build_ids[i].size <= 20);
		touch(f->build_ids[i].id, sizeof(f->build_ids[i].id));
		touch_str(f->build_ids[i].filename);
	}
	for (size_t i = 0; i < f->cmdline.n; i++)
		touch_str(f->cmdline.v[i]);
	touch_str(f->hostname);
	touch_str(f->osrelease);
	touch_str(f->version);
	touch_str(f->arch);
	touch_str(f->cpudesc);
	touch_str(f->cpuid);
	touch(f->auxtrace_index, f->nr_auxtrace_index * sizeof(*f->auxtrace_index));
	for (unsigned b = 0; b < TC_PERF_DATA_FEAT_BITS + 8; b++)
		sink += tc_perf_data_has_feature(pd, b);
}

static void touch_cs_etm(const struct tc_cs_etm_info *cs)
{
	touch(cs->words, cs->nr_words * 8);
	for (uint32_t i = 0; i < cs->nr_cpus; i++) {
		const struct tc_cs_etm_cpu *c = &cs->cpus[i];

		CHECK(c->raw >= cs->words && c->raw + c->nr_raw <= cs->words + cs->nr_words);
		CHECK(!c->nr_params ||
		      (c->params >= cs->words && c->params + c->nr_params <= cs->words + cs->nr_words));
		touch(c->params, c->nr_params * 8);
		touch(c->raw, c->nr_raw * 8);
		CHECK(tc_auxtrace_info_cs_etm_cpu(cs, c->cpu) != NULL);
	}
	sink += (uintptr_t)tc_auxtrace_info_cs_etm_cpu(cs, UINT32_MAX);
}

/* The bytes a string field points at must lie inside the record. */
static void check_in_rec(const struct tc_perf_data_record *r, const char *s)
{
	const uint8_t *p = (const uint8_t *)s;

	CHECK(p >= r->raw && p + strlen(s) < r->raw + r->size);
}

static uint64_t touch_record(const struct tc_perf_data_record *r)
{
	uint64_t h;

	CHECK(r->size >= 8 && r->raw != NULL);
	h = touch(r->raw, r->size);
	sink += (uintptr_t)tc_perf_data_type_name(r->type);
	if (r->attr)
		touch_attr(r->attr);
	switch (r->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		CHECK(r->u.mmap.filename != NULL);
		check_in_rec(r, r->u.mmap.filename);
		CHECK(r->u.mmap.build_id_size <= 20);
		break;
	case PERF_RECORD_COMM:
		CHECK(r->u.comm.comm != NULL);
		check_in_rec(r, r->u.comm.comm);
		break;
	case TC_PERF_DATA_AUXTRACE:
		CHECK(r->u.auxtrace.data != NULL || !r->u.auxtrace.size);
		h ^= touch(r->u.auxtrace.data, r->u.auxtrace.size);
		break;
	case TC_PERF_DATA_AUXTRACE_INFO:
		touch(r->u.auxtrace_info.priv, r->u.auxtrace_info.nr_priv * 8);
		if (r->u.auxtrace_info.cs_etm)
			touch_cs_etm(r->u.auxtrace_info.cs_etm);
		if (r->u.auxtrace_info.intel_pt) {
			const struct tc_intel_pt_info *ipt = r->u.auxtrace_info.intel_pt;

			CHECK(ipt->nr <= TC_IPT_PRIV_MAX);
			CHECK(ipt->filter != NULL);
			touch_str(ipt->filter);
		}
		break;
	case TC_PERF_DATA_HEADER_ATTR:
		touch_attr(r->u.header_attr.attr);
		break;
	default:
		break;
	}
	return h;
}

/* The tracing data's layout goes through lib/perfdata/tracing_data_read.c without libtraceevent (whose
 * format parser crashes on some corrupt formats); raw samples go through
 * decoders/tp_event.c against one fixed format of ours, so that hostile sample data meets
 * libtraceevent's printer. */
static const char demo_format[] =
	"name: demo\nID: 7\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:int value;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:__data_loc char[] msg;\toffset:28;\tsize:4;\tsigned:0;\n"
	"\tfield:u64 arr[2];\toffset:32;\tsize:16;\tsigned:0;\n\n"
	"print fmt: \"comm=%s value=%d msg=%s\", REC->comm, REC->value, __get_str(msg)\n";

static struct tc_tp_event *demo_tpe(void)
{
	static struct tc_tp_event *tpe;
	static uint8_t b[2048];
	struct tep_handle *tep;
	struct tc_err e = { 0 };
	size_t n = 0;
	uint64_t v64;
	uint32_t v32;

#define PUT(p, len) (memcpy(b + n, (p), (len)), n += (len))
	if (tpe)
		return tpe;
	PUT("\x17\x08\x44tracing0.6\0\0\x08", 16);
	v32 = 4096, PUT(&v32, 4);
	PUT("header_page\0", 12);
	v64 = 0, PUT(&v64, 8);
	PUT("header_event\0", 13);
	PUT(&v64, 8);
	v32 = 0, PUT(&v32, 4);
	v32 = 1, PUT(&v32, 4);
	PUT("demo\0", 5);
	PUT(&v32, 4);
	v64 = sizeof(demo_format) - 1, PUT(&v64, 8);
	PUT(demo_format, sizeof(demo_format) - 1);
	v32 = 0, PUT(&v32, 4);
	PUT(&v32, 4);
	v64 = 0, PUT(&v64, 8);
#undef PUT
	if (tc_tracing_data_read(&tep, b, n, 0, "demo", &e) || !(tpe = tc_tp_event_new(tep)))
		abort();	/* kept for the process's life */
	return tpe;
}

static void touch_tracing_data(const struct tc_perf_data *pd)
{
	const struct tc_perf_data_features *f = tc_perf_data_features(pd);
	struct tc_err e = { 0 };

	if (!f->tracing_data)
		return;
	touch(f->tracing_data, f->tracing_data_len);
	if (tc_tracing_data_read_check(f->tracing_data, f->tracing_data_len, f->tracing_data_off,
				       "fuzz", &e))
		CHECK(e.msg[0] && strstr(e.msg, "at offset 0x"));
}

static void touch_sample(const struct tc_perf_data_record *r)
{
	struct tc_rec out = { .cpu = -1 };
	struct tc_err e = { 0 };

	if (!r->u.sample.has_raw)
		return;
	CHECK(r->u.sample.raw >= r->raw + 8 &&
	      r->u.sample.raw + r->u.sample.raw_size <= r->raw + r->size);
	touch(r->u.sample.raw, r->u.sample.raw_size);
	if (tc_tp_event_render(demo_tpe(), 7, r->u.sample.raw, r->u.sample.raw_size, &out, &e)) {
		CHECK(e.msg[0]);
		return;
	}
	CHECK(out.type == TC_REC_EVENT && out.name && out.text);
	touch_str(out.name);
	touch_str(out.text);
	for (size_t i = 0; i < out.nfields; i++) {
		touch_str(out.fields[i].name);
		if (out.fields[i].kind == TC_FIELD_STR)
			touch_str(out.fields[i].s);
		if (out.fields[i].kind == TC_FIELD_ARRAY)
			touch(out.fields[i].arr, out.fields[i].n * 8);
	}
}

/* Read every record and everything the reader exposes. */
static void walk(struct tc_perf_data *pd, const char *how, struct walk *w)
{
	struct tc_perf_data_record rec;
	struct tc_err e = { 0 };
	uint64_t prev = 0, dend = 0;
	bool file_map = false;
	int r;

	snprintf(fuzz_ctx, sizeof(fuzz_ctx), "%s", how);
	w->n = 0;
	touch_str(tc_perf_data_name(pd));
	if (!tc_perf_data_is_pipe(pd)) {
		dend = tc_perf_data_data_offset(pd) + tc_perf_data_data_size(pd);
		CHECK(dend >= tc_perf_data_data_offset(pd));
		file_map = true;
	}
	for (size_t i = 0; i < tc_perf_data_nr_attrs(pd); i++)
		touch_attr(tc_perf_data_attr(pd, i));
	CHECK(tc_perf_data_attr(pd, tc_perf_data_nr_attrs(pd)) == NULL);
	touch_features(pd);

	while ((r = tc_perf_data_next(pd, &rec, &e)) == 1) {
		uint64_t h = touch_record(&rec);

		if (rec.type == PERF_RECORD_SAMPLE)
			touch_sample(&rec);

		CHECK(w->n == 0 || rec.offset > prev);
		prev = rec.offset;
		if (file_map)
			CHECK(rec.offset >= tc_perf_data_data_offset(pd) &&
			      rec.offset + rec.size <= dend);
		if (w->n < MAX_KEEP)
			w->k[w->n] = (struct rec_key){ rec.type, rec.misc, rec.size, rec.offset, h };
		w->n++;
	}
	CHECK(r == 0 || r == -1);
	w->ret = r;
	if (r < 0) {
		CHECK(e.msg[0] != 0);
		CHECK(strlen(e.msg) < sizeof(e.msg));
		/* The reader stays at its error. */
		CHECK(tc_perf_data_next(pd, &rec, &e) == -1 && e.msg[0]);
	} else {
		CHECK(tc_perf_data_next(pd, &rec, NULL) == 0);
	}
	/* Pipe mode adds attrs and features as it goes: look at them again. */
	for (size_t i = 0; i < tc_perf_data_nr_attrs(pd); i++)
		touch_attr(tc_perf_data_attr(pd, i));
	touch_features(pd);
	sink += tc_perf_data_data_size(pd);
	touch_tracing_data(pd);
}

/* Set when the file-mode read or its pipe conversion stepped over a truncated tail (a
 * warning, the records before it read): a file knows its data section's size, a pipe only
 * that its input ended, so one may fail on the last bytes where the other warns. The
 * records must still be the same. */
static bool file_was_cut;

/* Same records in the same order (offsets too if same_off), same outcome. Records past
 * skip_b in b are compared with a's from the start. */
static void same_walk(const struct walk *a, const struct walk *b, size_t skip_b, bool same_off)
{
	CHECK(a->ret == b->ret || file_was_cut);
	CHECK(a->n + skip_b == b->n);
	for (size_t i = 0; i < a->n && i + skip_b < MAX_KEEP && i < MAX_KEEP; i++) {
		const struct rec_key *x = &a->k[i], *y = &b->k[i + skip_b];

		CHECK(x->type == y->type && x->misc == y->misc && x->size == y->size);
		CHECK(x->hash == y->hash);
		CHECK(!same_off || x->offset == y->offset);
	}
}

static int mem_fd = -1;

static void read_fd(const uint8_t *data, size_t len, struct walk *want)
{
	static struct walk w;
	struct tc_perf_data *pd;
	struct tc_err e = { 0 };

	if (mem_fd < 0 && (mem_fd = memfd_create("fuzz_perf_data", MFD_CLOEXEC)) < 0)
		return;
	if (ftruncate(mem_fd, 0) || pwrite(mem_fd, data, len, 0) != (ssize_t)len)
		abort();
	snprintf(fuzz_ctx, sizeof(fuzz_ctx), "fd");
	if (tc_perf_data_open_fd(&pd, mem_fd, "fuzz", &e)) {
		CHECK(e.msg[0]);
		CHECK(!"opened from memory but not from an fd");
	}
	walk(pd, "fd", &w);
	tc_perf_data_close(pd);
	same_walk(want, &w, 0, true);
}

/* Pipe-mode bytes as a stream; NULL w_out: just walk. Returns -1 if it would not open. */
static int read_stream(const uint8_t *data, size_t len, struct walk *w)
{
	struct tc_perf_data *pd;
	struct tc_err e = { 0 };
	FILE *f = fmemopen((void *)data, len, "rb");
	int ret = 0;

	if (!f)
		abort();
	snprintf(fuzz_ctx, sizeof(fuzz_ctx), "stream");
	if (tc_perf_data_open_stream(&pd, f, "fuzz-stream", &e)) {
		CHECK(e.msg[0]);
		ret = -1;
	} else {
		walk(pd, "stream", w);
		tc_perf_data_close(pd);
	}
	fclose(f);
	return ret;
}

static void put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* File mode as a pipe stream: header, one HEADER_ATTR per attr, the data section. */
static uint8_t *to_pipe(struct tc_perf_data *pd, const uint8_t *data, size_t *len,
			size_t *nattr_recs)
{
	size_t n = 16, at;
	uint64_t doff = tc_perf_data_data_offset(pd), dsize = tc_perf_data_data_size(pd);
	uint8_t *b;

	for (size_t i = 0; i < tc_perf_data_nr_attrs(pd); i++) {
		const struct tc_perf_data_attr *a = tc_perf_data_attr(pd, i);
		size_t sz = 8 + sizeof(a->attr) + 8 * a->nr_ids;

		if (sz > UINT16_MAX)
			return NULL;	/* too many ids for one record: perf would fail too */
		n += sz;
	}
	b = malloc(n + dsize);
	if (!b)
		abort();
	memcpy(b, "PERFILE2", 8);
	put_u64(b + 8, 16);
	at = 16;
	for (size_t i = 0; i < tc_perf_data_nr_attrs(pd); i++) {
		const struct tc_perf_data_attr *a = tc_perf_data_attr(pd, i);
		struct perf_event_header h = { .type = TC_PERF_DATA_HEADER_ATTR,
					       .size = (uint16_t)(8 + sizeof(a->attr) +
								  8 * a->nr_ids) };

		memcpy(b + at, &h, 8);
		memcpy(b + at + 8, &a->attr, sizeof(a->attr));
		if (a->nr_ids)	/* ids may be NULL when there are none */
			memcpy(b + at + 8 + sizeof(a->attr), a->ids, 8 * a->nr_ids);
		at += h.size;
	}
	memcpy(b + at, data + doff, dsize);
	*len = at + dsize;
	*nattr_recs = tc_perf_data_nr_attrs(pd);
	return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static struct walk wm, ws, wp;
	struct tc_perf_data *pd;
	struct tc_err e = { 0 };

	file_was_cut = false;
	snprintf(fuzz_ctx, sizeof(fuzz_ctx), "mem");
	if (tc_perf_data_open_mem(&pd, data, len, "fuzz", &e)) {
		CHECK(e.msg[0] && strlen(e.msg) < sizeof(e.msg));
		CHECK(pd == NULL);
		if (len >= 16)	/* the other ways must refuse it too (fd: if it is a file) */
			CHECK(read_stream(data, len, &ws) == -1);
		return 0;
	}
	walk(pd, "mem", &wm);
	if (tc_perf_data_is_pipe(pd)) {
		CHECK(read_stream(data, len, &ws) == 0);
		same_walk(&wm, &ws, 0, true);
	} else {
		uint8_t *p;
		size_t plen, nattr;

		read_fd(data, len, &wm);
		file_was_cut = tc_perf_data_warnings(pd)->n > 0;
		/* Pipe conversion: the attrs' HEADER_ATTR records come first. */
		p = to_pipe(pd, data, &plen, &nattr);
		if (p) {
			struct tc_perf_data *pp;

			snprintf(fuzz_ctx, sizeof(fuzz_ctx), "converted pipe, mem");
			CHECK(tc_perf_data_open_mem(&pp, p, plen, "fuzz-pipe", &e) == 0);
			walk(pp, "converted pipe, mem", &wp);
			file_was_cut |= tc_perf_data_warnings(pp)->n > 0;
			tc_perf_data_close(pp);
			same_walk(&wm, &wp, nattr, false);
			file_was_cut = false;	/* pipe against pipe: the same outcome */
			CHECK(read_stream(p, plen, &ws) == 0);
			same_walk(&wp, &ws, 0, true);
			free(p);
		}
	}
	tc_perf_data_close(pd);
	return 0;
}
