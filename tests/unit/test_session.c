/* The decode session (decoders/session.c) on perf.data files built here with
 * lib/perfdata/perf_write: the account of lost and missing AUX data and its messages,
 * the decoder chosen by the AUXTRACE_INFO type and the error for a type no decoder takes,
 * tracepoint samples among the trace in order, the progress and stop hooks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoders/coresight/cs_decoder.h"
#include "decoders/decoders.h"
#include "decoders/intel_pt/pt_decoder.h"
#include "decoders/session.h"
#include "lib/perfdata/perf_data.h"
#include "lib/perfdata/perf_write.h"
#include "lib/util/diag.h"
#include "tests/unit/tc_test.h"
#include "tests/unit/tdata_blob.h"

#define PT_TYPE 8
#define ID 42
#define TP_ID 43
#define TP_EVENT 7	/* the tracepoint's format ID */

static char *tmpname(void)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/tc_sess_XXXXXX");
	fd = mkstemp(path);
	if (fd >= 0)
		close(fd);
	return fd >= 0 ? path : NULL;
}

/* What a session emitted: record types, offsets, and EVENT texts. */
struct got {
	int n;
	enum tc_rec_type type[256];
	uint64_t offset[256];
	char text[256][32];
};

static void collect(void *ctx, const struct tc_rec *r)
{
	struct got *g = ctx;

	if (g->n >= 256)
		return;
	g->type[g->n] = r->type;
	g->offset[g->n] = r->offset;
	snprintf(g->text[g->n], sizeof(g->text[0]), "%s", r->text ? r->text : "");
	g->n++;
}

struct watch {
	int begin, end, stops, buffers;
	uint64_t buffer_size;
	bool stop;
};

static void w_begin(void *ctx) { ((struct watch *)ctx)->begin++; }
static void w_end(void *ctx) { ((struct watch *)ctx)->end++; }

static void w_buffer(void *ctx, uint64_t offset, uint64_t size)
{
	struct watch *w = ctx;

	(void)offset;
	w->buffers++;
	w->buffer_size += size;
}

static bool w_stop(void *ctx)
{
	struct watch *w = ctx;

	w->stops++;
	return w->stop;
}

/* Run a session over path; messages into m. */
static int run(const char *path, bool packets, struct got *g, struct watch *w,
	       struct tc_diag *m, struct tc_err *e, struct tc_session **keep)
{
	struct tc_session_opts o = { .input = path, .packets = packets };
	struct tc_session_progress p = { .begin = w_begin, .buffer = w_buffer, .end = w_end,
					 .stop = w_stop, .ctx = w };
	struct tc_session *s = tc_session_new(&o, collect, g);
	int rc;

	if (!s)
		return -2;
	rc = tc_session_run(s, &p, m, e);
	if (keep)
		*keep = s;
	else
		tc_session_free(s);
	return rc;
}

static const struct tc_perf_write_sid sid = { .pid = 100, .tid = 101, .time = 5, .id = ID,
					      .cpu = 0 };

static struct tc_perf_write *open_with_attrs(const char *path, bool tracepoint,
					     struct tc_err *e)
{
	struct perf_event_attr a = { .type = PT_TYPE, .sample_type = PERF_SAMPLE_IDENTIFIER |
		PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU, .sample_id_all = 1 };
	struct perf_event_attr t = a;
	uint64_t id = ID, tid = TP_ID;
	struct tc_perf_write *w;

	t.type = PERF_TYPE_TRACEPOINT;
	t.config = TP_EVENT;
	t.sample_type |= PERF_SAMPLE_RAW;
	if (tc_perf_write_open(&w, path, e))
		return NULL;
	if (tc_perf_write_add_attr(w, &a, &id, 1, e) ||
	    (tracepoint && tc_perf_write_add_attr(w, &t, &tid, 1, e))) {
		tc_perf_write_abort(w);
		return NULL;
	}
	return w;
}

/* Announced, truncated, compressed and lost data; no AUXTRACE_INFO, no trace. */
static int write_lossy(const char *path, uint64_t *first_aux, uint64_t *compressed,
		       struct tc_err *e)
{
	struct { struct perf_event_header h; uint64_t data; } z = {
		{ .type = TC_PERF_DATA_COMPRESSED, .size = sizeof(z) }, 0 };
	struct tc_perf_write *w = open_with_attrs(path, false, e);

	if (!w)
		return -1;
	if (tc_perf_write_comm(w, 100, 101, "fixture", false, &sid, e))
		goto fail;
	*first_aux = tc_perf_write_offset(w);
	if (tc_perf_write_aux(w, 0, 64, PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL, &sid, e) ||
	    tc_perf_write_aux(w, 64, 0, PERF_AUX_FLAG_TRUNCATED, &sid, e) ||
	    tc_perf_write_lost_samples(w, 5, &sid, e))
		goto fail;
	*compressed = tc_perf_write_offset(w);
	if (tc_perf_write_record(w, &z, sizeof(z), e))
		goto fail;
	return tc_perf_write_close(w, e);
fail:
	tc_perf_write_abort(w);
	return -1;
}

TEST(lost_and_missing_aux_data_are_warned_about_in_order)
{
	struct tc_err e = { 0 };
	struct tc_diag m = { 0 };
	struct got g = { 0 };
	struct watch w = { 0 };
	struct tc_session *s = NULL;
	const char *path = tmpname();
	uint64_t aux_at = 0, z_at = 0;
	char want[256];

	CHECK(path != NULL);
	if (!path)
		return;
	CHECK_INT(write_lossy(path, &aux_at, &z_at, &e), 0);
	CHECK_INT(run(path, false, &g, &w, &m, &e, &s), 4);
	CHECK_INT(m.n, 4);
	if (m.n == 4) {
		for (size_t i = 0; i < 4; i++)
			CHECK_INT(m.msgs[i].level, TC_DIAG_WARNING);
		snprintf(want, sizeof(want), "%s: 2 AUX records announce 64 bytes of trace, but "
			 "the file holds no AUXTRACE data: the trace is missing", path);
		CHECK_STR(m.msgs[0].text, want);
		snprintf(want, sizeof(want), "%s: AUX records flagged truncated 2 (1 of them "
			 "empty), partial 1, collision 0", path);
		CHECK_STR(m.msgs[1].text, want);
		snprintf(want, sizeof(want), "%s: 1 COMPRESSED records from offset 0x%llx (perf "
			 "record -z): tracectl does not decompress zstd, so the records inside "
			 "them are not decoded; record without -z", path, (unsigned long long)z_at);
		CHECK_STR(m.msgs[2].text, want);
		snprintf(want, sizeof(want), "%s: 5 records lost by the kernel's count (1 "
			 "LOST_SAMPLES records)", path);
		CHECK_STR(m.msgs[3].text, want);
	}
	/* The missing trace is a record too, where the first AUX record is. */
	CHECK_INT(g.n, 1);
	CHECK_INT(g.type[0], TC_REC_LOST);
	CHECK_INT(g.offset[0], aux_at);
	/* Thread names outlive the run, for the analyses. */
	CHECK_STR(tc_session_comm(s, 100, 101), "fixture");
	CHECK(tc_session_comm(s, 100, 102) == NULL);
	/* No decoder was chosen: nothing to look symbols up in. */
	CHECK_INT(tc_session_sym(s, 100, 0x1000, &(const char *){ NULL }, &(uint64_t){ 0 }), -1);
	CHECK(tc_session_dso(s, 100, 0x1000) == NULL);
	CHECK_INT(w.begin, 1);
	CHECK_INT(w.end, 1);
	CHECK_INT(w.stops, 5);	/* once a record */
	tc_session_free(s);
	tc_diag_free(&m);
	unlink(path);
}

TEST(the_stop_hook_ends_reading)
{
	struct tc_err e = { 0 };
	struct tc_diag m = { 0 };
	struct got g = { 0 };
	struct watch w = { .stop = true };
	const char *path = tmpname();
	uint64_t aux_at, z_at;

	CHECK(path != NULL);
	if (!path)
		return;
	CHECK_INT(write_lossy(path, &aux_at, &z_at, &e), 0);
	/* Only the COMM was read: no AUX record counted, nothing to warn about. */
	CHECK_INT(run(path, false, &g, &w, &m, &e, NULL), 0);
	CHECK_INT(w.stops, 1);
	CHECK_INT(m.n, 0);
	CHECK_INT(g.n, 0);
	CHECK_INT(w.end, 1);
	tc_diag_free(&m);
	unlink(path);
}

/* An AUXTRACE_INFO of type `type` (perf's layout: type, reserved, private words; none for
 * type 0) and one buffer of trace. */
static int write_typed(const char *path, uint32_t type, const void *trace, size_t len,
		       struct tc_err *e)
{
	struct { struct perf_event_header h; uint32_t type, reserved; uint64_t priv[2]; } info = {
		{ .type = TC_PERF_DATA_AUXTRACE_INFO, .size = sizeof(info) }, type, 0, { 0 } };
	struct tc_perf_write *w = open_with_attrs(path, false, e);

	if (!w)
		return -1;
	if ((type && tc_perf_write_record(w, &info, sizeof(info), e)) ||
	    tc_perf_write_auxtrace(w, trace, len, 0, 1, 0, 101, 0, e)) {
		tc_perf_write_abort(w);
		return -1;
	}
	return tc_perf_write_close(w, e);
}

TEST(a_trace_type_no_decoder_takes_is_an_error)
{
	static const uint8_t junk[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct tc_err e = { 0 };
	struct tc_diag m = { 0 };
	struct got g = { 0 };
	struct watch w = { 0 };
	const char *path = tmpname();
	char want[256];

	CHECK(tc_decoders_find(TC_AUXTRACE_ARM_SPE) == NULL);
	CHECK(path != NULL);
	if (!path)
		return;
	CHECK_INT(write_typed(path, TC_AUXTRACE_ARM_SPE, junk, sizeof(junk), &e), 0);
	CHECK_INT(run(path, false, &g, &w, &m, &e, NULL), -1);
	snprintf(want, sizeof(want), "%s: AUX trace of unknown kind (AUXTRACE_INFO type 4): "
		 "cannot decode", path);
	CHECK_STR(e.msg, want);
	CHECK_INT(m.n, 0);
	CHECK_INT(w.buffers, 1);
	CHECK_INT(w.buffer_size, 8);
	/* Packets too: listing none without a word would look like an empty trace. */
	CHECK_INT(run(path, true, &g, &w, &m, &e, NULL), -1);
	CHECK_STR(e.msg, want);
	CHECK_INT(g.n, 0);
	tc_diag_free(&m);
	unlink(path);
}

TEST(trace_without_an_auxtrace_info_is_an_error_also_for_packets)
{
	static const uint8_t junk[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct tc_err e = { 0 };
	struct tc_diag m = { 0 };
	struct got g = { 0 };
	struct watch w = { 0 };
	const char *path = tmpname();
	char want[256];

	CHECK(path != NULL);
	if (!path)
		return;
	CHECK_INT(write_typed(path, 0, junk, sizeof(junk), &e), 0);
	snprintf(want, sizeof(want), "%s: AUX trace (1 AUXTRACE records) but no AUXTRACE_INFO "
		 "record saying what kind: cannot decode", path);
	for (int packets = 0; packets < 2; packets++) {
		CHECK_INT(run(path, packets, &g, &w, &m, &e, NULL), -1);
		CHECK_STR(e.msg, want);
	}
	tc_diag_free(&m);
	unlink(path);
}

TEST(the_decoder_is_the_one_for_the_files_trace_type)
{
	size_t n;
	const struct tc_decoder_ops *const *all = tc_decoders_all(&n);

	CHECK(tc_decoders_find(TC_AUXTRACE_INTEL_PT) == &tc_pt_decoder_ops);
	CHECK(tc_decoders_find(TC_AUXTRACE_CS_ETM) == &tc_cs_decoder_ops);
	CHECK_INT(n, 2);
	for (size_t i = 0; i < n; i++) {
		CHECK(all[i]->new && all[i]->process && all[i]->finish && all[i]->free &&
		      all[i]->symbolize && all[i]->sym && all[i]->dso && all[i]->images_at);
		for (size_t j = 0; j < i; j++)
			CHECK(all[i]->auxtrace_type != all[j]->auxtrace_type);
	}
}

/* perf's tracing data with one event, test:tick (ID TP_EVENT): "value=%d". */
static const char format[] =
	"name: tick\nID: 7\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:int value;\toffset:8;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"value=%d\", REC->value\n";

static struct tdata_blob tb;

/* A sample of test:tick at time with value. */
static int put_tick(struct tc_perf_write *w, uint64_t time, int32_t value, struct tc_err *e)
{
	struct {
		struct perf_event_header h;
		uint64_t id;
		uint32_t pid, tid;
		uint64_t time;
		uint32_t cpu, res;
		uint32_t raw_size;
		uint8_t raw[12];
	} __attribute__((packed)) s = {
		{ .type = PERF_RECORD_SAMPLE, .size = sizeof(s) }, TP_ID, 100, 101, time, 0, 0,
		12, { 0 } };
	uint16_t type = TP_EVENT;

	memcpy(s.raw, &type, 2);
	memcpy(s.raw + 8, &value, 4);
	return tc_perf_write_record(w, &s, sizeof(s), e);
}

/* Intel PT: samples at times 30 and 20 before the trace, one at 10 after it. */
static int write_ticks(const char *path, struct tc_err *e)
{
	static const uint8_t psb[18] = { 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
					 2, 0x82, 2, 0x82, 2, 0x23 };	/* PSB, PSBEND */
	uint64_t priv[TC_IPT_PRIV_MAX] = { PT_TYPE };
	struct tc_perf_write *w = open_with_attrs(path, true, e);

	if (!w)
		return -1;
	tdata_blob_build(&tb, "test", format, "");
	if (tc_perf_write_auxtrace_info_intel_pt(w, priv, NULL, e) ||
	    put_tick(w, 30, 1, e) || put_tick(w, 20, 2, e) ||
	    tc_perf_write_auxtrace(w, psb, sizeof(psb), 0, 1, 0, 101, 0, e) ||
	    put_tick(w, 10, 3, e) ||
	    tc_perf_write_feat_raw(w, TC_PERF_DATA_FEAT_TRACING_DATA, tb.b, tb.len, e)) {
		tc_perf_write_abort(w);
		return -1;
	}
	return tc_perf_write_close(w, e);
}

TEST(tracepoint_samples_come_in_time_order_before_the_trace_after_them)
{
	struct tc_err e = { 0 };
	struct tc_diag m = { 0 };
	struct got g = { 0 };
	struct watch w = { 0 };
	const char *path = tmpname();
	int first_packet = -1, last_packet = -1;

	CHECK(path != NULL);
	if (!path)
		return;
	CHECK_INT(write_ticks(path, &e), 0);
	CHECK_INT(run(path, true, &g, &w, &m, &e, NULL), 0);
	if (e.msg[0])
		printf("#   %s\n", e.msg);
	for (int i = 0; i < g.n; i++)
		if (g.type[i] == TC_REC_PACKET) {
			if (first_packet < 0)
				first_packet = i;
			last_packet = i;
		}
	/* The two samples from before the trace in the file, by time; the packets; the
	 * sample from after it. */
	CHECK_INT(first_packet, 2);
	CHECK_INT(last_packet, g.n - 2);
	CHECK_INT(g.type[0], TC_REC_EVENT);
	CHECK_STR(g.text[0], "value=2");
	CHECK_INT(g.type[1], TC_REC_EVENT);
	CHECK_STR(g.text[1], "value=1");
	CHECK_INT(g.type[g.n - 1], TC_REC_EVENT);
	CHECK_STR(g.text[g.n - 1], "value=3");
	/* Intel PT's packets were listed: its status line, then the tracepoints'. */
	CHECK_INT(m.n, 2);
	if (m.n == 2) {
		CHECK_INT(m.msgs[0].level, TC_DIAG_STATUS);
		CHECK(strstr(m.msgs[0].text, "tracectl decode: 1 AUXTRACE buffers (24 bytes), "
			     "0 AUX records, ") == m.msgs[0].text);
		CHECK_INT(m.msgs[1].level, TC_DIAG_STATUS);
		CHECK_STR(m.msgs[1].text, "tracectl decode: 3 tracepoint events, 0 not printed");
	}
	tc_diag_free(&m);
	unlink(path);
}

/* The flow decoders' status lines tell them apart: Intel PT counts queues, CoreSight
 * blocks. */
TEST(each_trace_type_gets_its_own_decoder)
{
	static const uint8_t psb[16] = { 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
					 2, 0x82, 2, 0x82 };
	uint64_t priv[TC_IPT_PRIV_MAX] = { PT_TYPE };
	struct tc_perf_write_etmv4 etm = { .cpu = 0, .trctraceidr = 0x10,
					   .trcidr0 = 0x28000ea1 };
	struct tc_err e = { 0 };
	struct tc_diag m = { 0 };
	struct got g = { 0 };
	struct watch w = { 0 };
	struct tc_perf_write *pw;
	const char *path = tmpname();

	CHECK(path != NULL);
	if (!path)
		return;
	for (int pt = 1; pt >= 0; pt--) {
		CHECK((pw = open_with_attrs(path, false, &e)) != NULL);
		if (!pw)
			break;
		CHECK_INT(pt ? tc_perf_write_auxtrace_info_intel_pt(pw, priv, NULL, &e)
			     : tc_perf_write_auxtrace_info_cs_etm(pw, PT_TYPE, 0, &etm, 1, &e), 0);
		CHECK_INT(tc_perf_write_auxtrace(pw, psb, sizeof(psb), 0, 1, 0, 101, 0, &e), 0);
		CHECK_INT(tc_perf_write_close(pw, &e), 0);
		CHECK(run(path, false, &g, &w, &m, &e, NULL) >= 0);
		if (m.n) {
			const char *status = m.msgs[m.n - 1].text;

			CHECK_INT(m.msgs[m.n - 1].level, TC_DIAG_STATUS);
			CHECK(strstr(status, "tracectl decode: 1 AUXTRACE buffers (16 bytes") ==
			      status);
			CHECK((strstr(status, " in 1 queues,") != NULL) == pt);
			CHECK((strstr(status, " blocks),") != NULL) == !pt);
		} else {
			CHECK(m.n > 0);
		}
		tc_diag_free(&m);
		g.n = 0;
	}
	unlink(path);
}

/* A directory with snapshot.ini is a snapshot: perf.data options do not apply. */
TEST(a_snapshot_directory_is_no_perf_data)
{
	char dir[] = "/tmp/tc_sess_snap_XXXXXX", ini[64];
	struct tc_session_opts o = { .branches = true };
	struct tc_err e = { 0 };
	struct tc_diag m = { 0 };
	struct got g = { 0 };
	struct watch w = { 0 };
	struct tc_session_progress p = { .begin = w_begin, .end = w_end, .ctx = &w };
	struct tc_session *s;
	FILE *f;

	if (!mkdtemp(dir))
		SKIP("no temporary directory");
	snprintf(ini, sizeof(ini), "%s/snapshot.ini", dir);
	CHECK((f = fopen(ini, "w")) != NULL);
	if (f)
		fclose(f);
	o.input = dir;
	CHECK((s = tc_session_new(&o, collect, &g)) != NULL);
	if (s) {
		CHECK_INT(tc_session_run(s, &p, &m, &e), -1);
		CHECK_STR(e.msg, "--branches is for perf.data recordings, not snapshot "
			  "directories");
		CHECK_INT(w.begin, 0);	/* no perf.data progress */
		tc_session_free(s);
	}
	tc_diag_free(&m);
	unlink(ini);
	rmdir(dir);
}
