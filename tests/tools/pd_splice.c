/* pd_splice: one pipe-format perf.data from two file-mode ones, for placing tracepoint
 * samples among decoded trace (tests/e2e/t63): the attrs of both (HEADER_ATTR), the
 * tracing data of the second (HEADER_TRACING_DATA), then the first file's records up to
 * and including its Nth AUXTRACE record, all of the second's, and the rest of the first.
 * The second file's event ids are moved up by 1 << 40 so that they cannot meet the first's.
 * With FROM and TO, the second file's sample times are mapped linearly onto FROM..TO (perf
 * time of the first file's trace), so that its events fall among the trace in time too.
 *
 *   pd_splice TRACE.data EVENTS.data N OUT [FROM TO]
 *
 * Test tool only: it prints and exits. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/perfdata/perf_data.h"

#define ID_SHIFT (1ULL << 40)

static FILE *out;
static uint64_t t_lo, t_hi, to_lo, to_hi;	/* sample times t_lo..t_hi to to_lo..to_hi */
static bool retime;

static void die(const char *what, const char *msg)
{
	fprintf(stderr, "pd_splice: %s: %s\n", what, msg);
	exit(2);
}

static void put(const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, out) != n)
		die("write", "short write");
}

static struct tc_perf_data *open_pd(const char *path)
{
	struct tc_perf_data *pd;
	struct tc_err e;

	if (tc_perf_data_open(&pd, path, &e))
		die(path, e.msg);
	if (tc_perf_data_is_pipe(pd))
		die(path, "a file-mode perf.data is needed");
	return pd;
}

static void put_attrs(struct tc_perf_data *pd, uint64_t shift)
{
	for (size_t i = 0; i < tc_perf_data_nr_attrs(pd); i++) {
		const struct tc_perf_data_attr *a = tc_perf_data_attr(pd, i);
		struct perf_event_header h = { .type = TC_PERF_DATA_HEADER_ATTR,
					       .size = (uint16_t)(8 + sizeof(a->attr) +
								  8 * a->nr_ids) };

		put(&h, 8);
		put(&a->attr, sizeof(a->attr));
		for (size_t k = 0; k < a->nr_ids; k++) {
			uint64_t id = a->ids[k] + shift;

			put(&id, 8);
		}
	}
}

/* One record with the bytes after it; the second file's ids moved (IDENTIFIER: first
 * word of a sample, last of a sample_id trailer). */
static void put_record(const struct tc_perf_data_record *r, uint64_t shift)
{
	uint8_t buf[65536];
	uint64_t st = r->attr ? r->attr->attr.sample_type : 0, id;

	memcpy(buf, r->raw, r->size);
	if (shift && (st & PERF_SAMPLE_IDENTIFIER) && r->size >= 16) {
		size_t at = r->type == PERF_RECORD_SAMPLE ? 8 : r->size - 8;

		if (r->type == PERF_RECORD_SAMPLE || r->attr->attr.sample_id_all) {
			memcpy(&id, buf + at, 8);
			id += shift;
			memcpy(buf + at, &id, 8);
		}
	}
	/* A sample's time: after IDENTIFIER, IP and TID, where perf puts them. */
	if (retime && r->type == PERF_RECORD_SAMPLE && (st & PERF_SAMPLE_TIME) && r->sid.has_time) {
		size_t at = 8 + 8 * !!(st & PERF_SAMPLE_IDENTIFIER) + 8 * !!(st & PERF_SAMPLE_IP) +
			    8 * !!(st & PERF_SAMPLE_TID);
		uint64_t t;

		if (at + 8 > r->size || (memcpy(&t, buf + at, 8), t != r->sid.time))
			die("retime", "sample time not where expected");
		t = to_lo + (uint64_t)((double)(t - t_lo) * (double)(to_hi - to_lo) /
				       (double)(t_hi > t_lo ? t_hi - t_lo : 1));
		memcpy(buf + at, &t, 8);
	}
	put(buf, r->size);
	if (r->type == TC_PERF_DATA_AUXTRACE)
		put(r->u.auxtrace.data, r->u.auxtrace.size);
}

static void copy_records(struct tc_perf_data *pd, uint64_t shift, long stop_after)
{
	struct tc_perf_data_record r;
	struct tc_err e;
	long n = 0;
	int ret;

	while ((ret = tc_perf_data_next(pd, &r, &e)) > 0) {
		put_record(&r, shift);
		if (r.type == TC_PERF_DATA_AUXTRACE && ++n == stop_after)
			return;
	}
	if (ret < 0)
		die(tc_perf_data_name(pd), e.msg);
}

int main(int argc, char **argv)
{
	struct tc_perf_data *tr, *ev;
	const struct tc_perf_data_features *f;
	struct perf_event_header h = { .type = TC_PERF_DATA_HEADER_TRACING_DATA, .size = 16 };
	uint32_t td[2] = { 0, 0 };
	uint64_t hdr[2] = { 0x32454c4946524550ULL, 16 };	/* "PERFILE2", pipe header size */
	static const uint8_t pad[8];

	if (argc != 5 && argc != 7) {
		fprintf(stderr, "usage: pd_splice TRACE.data EVENTS.data N OUT [FROM TO]\n");
		return 2;
	}
	tr = open_pd(argv[1]);
	if (argc == 7) {	/* the events' time span first */
		struct tc_perf_data_record r;
		struct tc_err e;

		ev = open_pd(argv[2]);
		t_lo = UINT64_MAX;
		while (tc_perf_data_next(ev, &r, &e) > 0)
			if (r.type == PERF_RECORD_SAMPLE && r.sid.has_time) {
				t_lo = r.sid.time < t_lo ? r.sid.time : t_lo;
				t_hi = r.sid.time > t_hi ? r.sid.time : t_hi;
			}
		tc_perf_data_close(ev);
		to_lo = strtoull(argv[5], NULL, 0);
		to_hi = strtoull(argv[6], NULL, 0);
		retime = t_lo <= t_hi && to_lo <= to_hi;
		if (!retime)
			die(argv[2], "no sample times, or FROM > TO");
	}
	ev = open_pd(argv[2]);
	f = tc_perf_data_features(ev);
	if (!f->tracing_data)
		die(argv[2], "no tracing data");
	if (!(out = fopen(argv[4], "wb")))
		die(argv[4], "cannot create");
	put(hdr, 16);
	put_attrs(tr, 0);
	put_attrs(ev, ID_SHIFT);
	td[0] = (uint32_t)((f->tracing_data_len + 7) & ~(size_t)7);
	put(&h, 8);
	put(td, 8);
	put(f->tracing_data, f->tracing_data_len);
	put(pad, td[0] - f->tracing_data_len);
	copy_records(tr, 0, atol(argv[3]));
	copy_records(ev, ID_SHIFT, -1);
	copy_records(tr, 0, -1);
	if (fclose(out))
		die(argv[4], "write failed");
	tc_perf_data_close(tr);
	tc_perf_data_close(ev);
	return 0;
}
