#include "lib/output/show_events.h"

#include <inttypes.h>
#include <string.h>


void tc_show_events_init(struct tc_show_events *o, FILE *f, bool json)
{
	*o = (struct tc_show_events){ .f = f, .json = json };
	tc_json_init(&o->j, f, false);
}

/* One field as JSON ("key":value) or text (" key=value"). */
static void f_uint(struct tc_show_events *o, const char *k, uint64_t v)
{
	if (o->json) {
		tc_json_key(&o->j, k);
		tc_json_uint(&o->j, v);
	} else {
		fprintf(o->f, " %s=%" PRIu64, k, v);
	}
}

static void f_int(struct tc_show_events *o, const char *k, int64_t v)
{
	if (o->json)
		tc_json_kint(&o->j, k, v);
	else
		fprintf(o->f, " %s=%" PRId64, k, v);
}

static void f_hex(struct tc_show_events *o, const char *k, uint64_t v)
{
	if (o->json)
		tc_json_khex(&o->j, k, v);
	else
		fprintf(o->f, " %s=0x%" PRIx64, k, v);
}

static void f_str(struct tc_show_events *o, const char *k, const char *v)
{
	if (o->json)
		tc_json_kstr(&o->j, k, v ? v : "");
	else
		fprintf(o->f, " %s=%s", k, v ? v : "");
}

static void f_bool(struct tc_show_events *o, const char *k, bool v)
{
	if (o->json)
		tc_json_kbool(&o->j, k, v);
	else if (v)
		fprintf(o->f, " %s", k);
}

/* The pid/tid the record is about: its own (MMAP, COMM, FORK...) else the sample_id's. */
static bool rec_thread(const struct tc_perf_data_record *r, int64_t *pid, int64_t *tid)
{
	switch (r->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		*pid = r->u.mmap.pid, *tid = r->u.mmap.tid;
		return true;
	case PERF_RECORD_COMM:
		*pid = r->u.comm.pid, *tid = r->u.comm.tid;
		return true;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		*pid = r->u.fork.pid, *tid = r->u.fork.tid;
		return true;
	case PERF_RECORD_ITRACE_START:
		*pid = r->u.itrace_start.pid, *tid = r->u.itrace_start.tid;
		return true;
	}
	if (!r->sid.has_tid)
		return false;
	*pid = (int32_t)r->sid.pid, *tid = (int32_t)r->sid.tid;
	return true;
}

static void details(struct tc_show_events *o, const struct tc_perf_data_record *r)
{
	char bid[41] = "";

	switch (r->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		f_hex(o, "start", r->u.mmap.start);
		f_hex(o, "len", r->u.mmap.len);
		f_hex(o, "pgoff", r->u.mmap.pgoff);
		if (r->u.mmap.has_build_id) {
			for (unsigned i = 0; i < r->u.mmap.build_id_size && i < 20; i++)
				snprintf(bid + 2 * i, 3, "%02x", r->u.mmap.build_id[i]);
			f_str(o, "build_id", bid);
		}
		f_str(o, "filename", r->u.mmap.filename);
		break;
	case PERF_RECORD_COMM:
		f_str(o, "comm", r->u.comm.comm);
		f_bool(o, "exec", r->u.comm.exec);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		f_uint(o, "ppid", r->u.fork.ppid);
		f_uint(o, "ptid", r->u.fork.ptid);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		f_str(o, "switch", r->u.sw.out ? "out" : "in");
		f_bool(o, "preempt", r->u.sw.preempt);
		if (r->type == PERF_RECORD_SWITCH_CPU_WIDE) {
			f_uint(o, r->u.sw.out ? "next_pid" : "prev_pid", r->u.sw.next_prev_pid);
			f_uint(o, r->u.sw.out ? "next_tid" : "prev_tid", r->u.sw.next_prev_tid);
		}
		break;
	case PERF_RECORD_AUX:
		f_hex(o, "aux_offset", r->u.aux.aux_offset);
		f_hex(o, "aux_size", r->u.aux.aux_size);
		f_hex(o, "flags", r->u.aux.flags);
		f_bool(o, "truncated", r->u.aux.truncated);
		f_bool(o, "overwrite", r->u.aux.overwrite);
		f_bool(o, "partial", r->u.aux.partial);
		f_bool(o, "collision", r->u.aux.collision);
		break;
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		f_hex(o, "hw_id", r->u.hw_id.hw_id);
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		f_uint(o, "id", r->u.lost.id);
		f_uint(o, "lost", r->u.lost.lost);
		break;
	case TC_PERF_DATA_AUXTRACE:
		f_hex(o, "trace_size", r->u.auxtrace.size);
		f_hex(o, "aux_offset", r->u.auxtrace.offset);
		f_hex(o, "reference", r->u.auxtrace.reference);
		f_uint(o, "idx", r->u.auxtrace.idx);
		f_int(o, "buffer_tid", (int32_t)r->u.auxtrace.tid);
		f_int(o, "buffer_cpu", (int32_t)r->u.auxtrace.cpu);
		break;
	case TC_PERF_DATA_AUXTRACE_INFO:
		f_uint(o, "auxtrace_type", r->u.auxtrace_info.type);
		break;
	case PERF_RECORD_SAMPLE:
		if (r->attr && r->attr->name)
			f_str(o, "event", r->attr->name);
		if (r->u.sample.has_ip)
			f_hex(o, "ip", r->u.sample.ip);
		if (r->u.sample.has_addr)
			f_hex(o, "addr", r->u.sample.addr);
		if (r->u.sample.has_period)
			f_uint(o, "period", r->u.sample.period);
		if (r->u.sample.has_raw)
			f_uint(o, "raw_size", r->u.sample.raw_size);
		break;
	}
}

void tc_show_events_write(struct tc_show_events *o, const struct tc_perf_data_record *r)
{
	const char *name = tc_perf_data_type_name(r->type);
	char tn[24];
	int64_t pid, tid;
	bool thr = rec_thread(r, &pid, &tid);

	if (!name) {
		snprintf(tn, sizeof(tn), "TYPE_%u", r->type);
		name = tn;
	}
	if (o->json) {
		struct tc_json *j = &o->j;

		tc_json_obj_open(j);
		TC_JSON_KSTR(j, "type", "record");
		TC_JSON_KSTR(j, "record", name);
		TC_JSON_KINT(j, "offset", (long long)r->offset);
		TC_JSON_KINT(j, "size", r->size);
		if (r->sid.has_cpu)
			TC_JSON_KINT(j, "cpu", r->sid.cpu);
		if (thr) {
			TC_JSON_KINT(j, "pid", pid);
			TC_JSON_KINT(j, "tid", tid);
		}
		if (r->sid.has_time) {
			TC_JSON_KEY(j, "time");
			tc_json_uint(j, r->sid.time);
		}
		details(o, r);
		tc_json_obj_close(j);
		return;
	}
	fprintf(o->f, "%10" PRIx64 " [0x%x]", r->offset, r->size);
	if (r->sid.has_cpu)
		fprintf(o->f, " cpu %u", r->sid.cpu);
	if (thr)
		fprintf(o->f, " %" PRId64 "/%" PRId64, pid, tid);
	if (r->sid.has_time)
		fprintf(o->f, " %" PRIu64 ".%09" PRIu64, r->sid.time / 1000000000,
			r->sid.time % 1000000000);
	fprintf(o->f, "  %s", name);
	details(o, r);
	fputc('\n', o->f);
}
