/* perf.data records: fetching (from memory or a stream), sample_id trailers, and the
 * per-type fields. Sizes are checked before any field is read. */
#include "lib/perfdata/perf_data_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#define HDR 8			/* struct perf_event_header */
#define AUXTRACE_SIZE 48	/* header + size, offset, reference, idx, tid, cpu, reserved */
#define STREAM_MAX_EXTRA (1ULL << 34)	/* sanity bound on trace bytes after a record */

static const char *const type_names[] = {
	[PERF_RECORD_MMAP] = "MMAP",
	[PERF_RECORD_LOST] = "LOST",
	[PERF_RECORD_COMM] = "COMM",
	[PERF_RECORD_EXIT] = "EXIT",
	[PERF_RECORD_THROTTLE] = "THROTTLE",
	[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
	[PERF_RECORD_FORK] = "FORK",
	[PERF_RECORD_READ] = "READ",
	[PERF_RECORD_SAMPLE] = "SAMPLE",
	[PERF_RECORD_MMAP2] = "MMAP2",
	[PERF_RECORD_AUX] = "AUX",
	[PERF_RECORD_ITRACE_START] = "ITRACE_START",
	[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
	[PERF_RECORD_SWITCH] = "SWITCH",
	[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[PERF_RECORD_NAMESPACES] = "NAMESPACES",
	[PERF_RECORD_KSYMBOL] = "KSYMBOL",
	[PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
	[PERF_RECORD_CGROUP] = "CGROUP",
	[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
	[PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	[TC_PERF_DATA_HEADER_ATTR] = "HEADER_ATTR",
	[TC_PERF_DATA_HEADER_EVENT_TYPE] = "HEADER_EVENT_TYPE",
	[TC_PERF_DATA_HEADER_TRACING_DATA] = "HEADER_TRACING_DATA",
	[TC_PERF_DATA_HEADER_BUILD_ID] = "HEADER_BUILD_ID",
	[TC_PERF_DATA_FINISHED_ROUND] = "FINISHED_ROUND",
	[TC_PERF_DATA_ID_INDEX] = "ID_INDEX",
	[TC_PERF_DATA_AUXTRACE_INFO] = "AUXTRACE_INFO",
	[TC_PERF_DATA_AUXTRACE] = "AUXTRACE",
	[TC_PERF_DATA_AUXTRACE_ERROR] = "AUXTRACE_ERROR",
	[TC_PERF_DATA_THREAD_MAP] = "THREAD_MAP",
	[TC_PERF_DATA_CPU_MAP] = "CPU_MAP",
	[TC_PERF_DATA_STAT_CONFIG] = "STAT_CONFIG",
	[TC_PERF_DATA_STAT] = "STAT",
	[TC_PERF_DATA_STAT_ROUND] = "STAT_ROUND",
	[TC_PERF_DATA_EVENT_UPDATE] = "EVENT_UPDATE",
	[TC_PERF_DATA_TIME_CONV] = "TIME_CONV",
	[TC_PERF_DATA_HEADER_FEATURE] = "HEADER_FEATURE",
	[TC_PERF_DATA_COMPRESSED] = "COMPRESSED",
	[TC_PERF_DATA_FINISHED_INIT] = "FINISHED_INIT",
	[TC_PERF_DATA_COMPRESSED2] = "COMPRESSED2",
};

const char *tc_perf_data_type_name(uint32_t type)
{
	return type < sizeof(type_names) / sizeof(type_names[0]) ? type_names[type] : NULL;
}

/* "NAME: TYPE record at offset 0x..: <what>". */
__attribute__((format(printf, 4, 5)))
static int rec_err(struct tc_perf_data *pd, struct tc_err *e, const struct tc_perf_data_record *r,
		   const char *fmt, ...)
{
	char what[400], tn[32];
	const char *n = tc_perf_data_type_name(r->type);
	va_list ap;

	if (!n) {
		snprintf(tn, sizeof(tn), "type %u", r->type);
		n = tn;
	}
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return tc_err_set(e, EINVAL, "%s: %s record at offset 0x%llx %s", pd->name, n,
			  (unsigned long long)r->offset, what);
}

/* Bytes that follow a record outside its header.size (trace data, tracing data). */
static int extra_size(struct tc_perf_data *pd, const struct tc_perf_data_record *r,
		      const uint8_t *p, uint64_t *extra, struct tc_err *e)
{
	*extra = 0;
	if (r->type == TC_PERF_DATA_AUXTRACE) {
		if (r->size < AUXTRACE_SIZE)
			return rec_err(pd, e, r, "has size 0x%x, less than 0x%x", r->size,
				       AUXTRACE_SIZE);
		*extra = pd_u64(p + HDR);
	} else if (r->type == TC_PERF_DATA_HEADER_TRACING_DATA) {
		if (r->size < HDR + 4)
			return rec_err(pd, e, r, "has size 0x%x, less than 0x%x", r->size, HDR + 4);
		*extra = pd_u32(p + HDR);
	}
	return 0;
}

/* The input ends inside the record at pd->pos: the ones before it are what there is. */
static int cut_off(struct tc_perf_data *pd, uint64_t left)
{
	tc_diag_add(&pd->warn, "%s: the input ends inside the record at offset 0x%llx: its "
		    "%llu bytes there are left out", pd->name, (unsigned long long)pd->pos,
		    (unsigned long long)left);
	pd->pos = pd->data_off + pd->data_size;
	return 0;
}

static int fetch_map(struct tc_perf_data *pd, struct tc_perf_data_record *r,
		     const uint8_t **extra_p, uint64_t *extra, struct tc_err *e)
{
	uint64_t end = pd->data_off + pd->data_size, left = end - pd->pos;
	const uint8_t *p = pd->map + pd->pos;

	if (pd->pos >= end)
		return 0;
	r->offset = pd->pos;
	tc_perf_data_behind(pd, &pd->cursor, pd->pos);
	if (left < HDR) {
		if (pd->cut)
			return cut_off(pd, left);
		return tc_err_set(e, EINVAL, "%s: record at offset 0x%llx is cut off: %llu bytes "
				  "left in the data section, a header needs %d", pd->name,
				  (unsigned long long)pd->pos, (unsigned long long)left, HDR);
	}
	r->type = pd_u32(p);
	r->misc = pd_u16(p + 4);
	r->size = pd_u16(p + 6);
	/* A size below the header would make no progress: refuse instead of looping. Past
	 * the end of a truncated file's data the rest is not records: what came before is. */
	if (r->size < HDR && pd->cut && !pd->pipe) {
		tc_diag_add(&pd->warn, "%s: no record at offset 0x%llx (size 0x%x): its %llu "
			    "bytes up to the end of the file are left out", pd->name,
			    (unsigned long long)pd->pos, r->size, (unsigned long long)left);
		pd->pos = end;
		return 0;
	}
	if (r->size < HDR)
		return rec_err(pd, e, r, "has size 0x%x, less than its 8-byte header", r->size);
	if (r->size > left) {
		if (pd->cut)
			return cut_off(pd, left);
		return tc_err_set(e, EINVAL, "%s: record at offset 0x%llx has size 0x%x past the "
				  "end of the data section (0x%llx)", pd->name,
				  (unsigned long long)pd->pos, r->size, (unsigned long long)end);
	}
	if (extra_size(pd, r, p, extra, e))
		return -1;
	if (*extra > left - r->size) {
		if (pd->pipe && *extra > STREAM_MAX_EXTRA)	/* as a stream would say */
			return rec_err(pd, e, r, "claims 0x%llx bytes follow it",
				       (unsigned long long)*extra);
		if (pd->cut)
			return cut_off(pd, left);
		return rec_err(pd, e, r, "is followed by 0x%llx bytes that run past the end of "
			       "the data section (0x%llx)", (unsigned long long)*extra,
			       (unsigned long long)end);
	}
	r->raw = p;
	*extra_p = p + r->size;
	pd->pos += r->size + *extra;
	return 1;
}

/* Read exactly n bytes into pd->buf at at, growing the buffer only as data arrives so
 * that a hostile size on a short stream costs no more memory than the stream has. */
static int stream_read(struct tc_perf_data *pd, size_t at, uint64_t n, const char *what,
		       struct tc_err *e)
{
	uint64_t done = 0;

	while (done < n) {
		size_t want, got;

		if (at + done == pd->cap) {
			size_t cap = pd->cap ? pd->cap * 2 : 65536;
			uint8_t *b;

			if (cap > at + n)
				cap = at + n;
			b = realloc(pd->buf, cap);
			if (!b)
				return tc_err_set(e, ENOMEM, "%s: out of memory reading %s",
						  pd->name, what);
			pd->buf = b;
			pd->cap = cap;
		}
		want = pd->cap - (at + done);
		if (want > n - done)
			want = n - done;
		got = fread(pd->buf + at + done, 1, want, pd->sf);
		done += got;
		pd->spos += got;
		if (got < want) {
			if (ferror(pd->sf))
				return tc_err_sys(e, errno, "%s: reading %s at offset 0x%llx",
						  pd->name, what, (unsigned long long)pd->spos);
			if (!done && !at)
				return 0;	/* clean end between records */
			pd->eof_inside = true;
			return tc_err_set(e, EINVAL, "%s: stream ends at offset 0x%llx inside %s "
					  "(%llu of %llu bytes)", pd->name,
					  (unsigned long long)pd->spos, what,
					  (unsigned long long)done, (unsigned long long)n);
		}
	}
	return 1;
}

/* As cut_off, for a stream. */
static int stream_cut(struct tc_perf_data *pd, uint64_t off)
{
	tc_diag_add(&pd->warn, "%s: the input ends inside the record at offset 0x%llx: its "
		    "%llu bytes there are left out", pd->name, (unsigned long long)off,
		    (unsigned long long)(pd->spos - off));
	return 0;
}

static int fetch_stream(struct tc_perf_data *pd, struct tc_perf_data_record *r,
			const uint8_t **extra_p, uint64_t *extra, struct tc_err *e)
{
	char what[64];
	int ret;

	r->offset = pd->spos;
	ret = stream_read(pd, 0, HDR, "a record header", e);
	if (ret < 0 && pd->eof_inside)
		return stream_cut(pd, r->offset);
	if (ret <= 0)
		return ret;
	r->type = pd_u32(pd->buf);
	r->misc = pd_u16(pd->buf + 4);
	r->size = pd_u16(pd->buf + 6);
	if (r->size < HDR)
		return rec_err(pd, e, r, "has size 0x%x, less than its 8-byte header", r->size);
	snprintf(what, sizeof(what), "the record at 0x%llx", (unsigned long long)r->offset);
	if (stream_read(pd, HDR, r->size - HDR, what, e) <= 0)
		return pd->eof_inside ? stream_cut(pd, r->offset) : -1;
	if (extra_size(pd, r, pd->buf, extra, e))
		return -1;
	if (*extra > STREAM_MAX_EXTRA)
		return rec_err(pd, e, r, "claims 0x%llx bytes follow it",
			       (unsigned long long)*extra);
	snprintf(what, sizeof(what), "the data after the record at 0x%llx",
		 (unsigned long long)r->offset);
	if (*extra && stream_read(pd, r->size, *extra, what, e) <= 0)
		return pd->eof_inside ? stream_cut(pd, r->offset) : -1;
	r->raw = pd->buf;
	*extra_p = pd->buf + r->size;
	pd->pos = pd->spos;
	return 1;
}

#define ST(x) PERF_SAMPLE_##x

static unsigned bits(uint64_t v)
{
	return (unsigned)__builtin_popcountll(v);
}

/* Which attr does this record belong to? Uses the id when the layout has one. */
static const struct tc_perf_data_attr *find_attr(struct tc_perf_data *pd,
						 const struct tc_perf_data_record *r,
						 const uint8_t *body, size_t blen)
{
	const struct tc_perf_data_attr *a0 = pd->attrs, *a;
	uint64_t st;
	size_t at = SIZE_MAX;

	if (!pd->nr_attrs)
		return NULL;
	if (pd->nr_attrs == 1)
		return a0;
	st = a0->attr.sample_type;
	/* perf requires every event to keep the id in the same place. */
	if (r->type == PERF_RECORD_SAMPLE) {
		if (st & ST(IDENTIFIER))
			at = 0;
		else if (st & ST(ID))
			at = 8 * bits(st & (ST(IP) | ST(TID) | ST(TIME) | ST(ADDR)));
	} else if (r->type < TC_PERF_DATA_HEADER_ATTR && a0->attr.sample_id_all) {
		size_t back = 0;

		if (st & ST(IDENTIFIER))
			back = 8;
		else if (st & ST(ID))
			back = 8 * (1 + bits(st & (ST(CPU) | ST(STREAM_ID))));
		if (back && back <= blen)
			at = blen - back;
	}
	if (at != SIZE_MAX && at + 8 <= blen) {
		uint64_t id = pd_u64(body + at);

		/* perf's own synthesized records (MMAP, COMM of running tasks) carry id 0
		 * and belong to the first event, as perf itself assumes. */
		if (!id)
			return a0;
		if ((a = pd_attr_by_id(pd, id)))
			return a;
	}
	for (size_t i = 1; i < pd->nr_attrs; i++)
		if (pd->attrs[i].attr.sample_type != st ||
		    pd->attrs[i].attr.sample_id_all != a0->attr.sample_id_all)
			return NULL;
	return a0;	/* all alike: any will do for the layout */
}

/* TID and TIME, then ID, STREAM_ID and CPU: the same order in a sample and in the
 * sample_id trailer (the sample puts ADDR between the two runs). */
static const uint8_t *read_tid_time(uint64_t st, struct tc_perf_data_record *r, const uint8_t *q)
{
	if (st & ST(TID)) {
		r->sid.has_tid = true;
		r->sid.pid = pd_u32(q);
		r->sid.tid = pd_u32(q + 4);
		q += 8;
	}
	if (st & ST(TIME)) {
		r->sid.has_time = true;
		r->sid.time = pd_u64(q);
		q += 8;
	}
	return q;
}

static const uint8_t *read_id_cpu(uint64_t st, struct tc_perf_data_record *r, const uint8_t *q)
{
	if (st & ST(ID)) {
		r->sid.has_id = true;
		r->sid.id = pd_u64(q);
		q += 8;
	}
	if (st & ST(STREAM_ID))
		q += 8;
	if (st & ST(CPU)) {
		r->sid.has_cpu = true;
		r->sid.cpu = pd_u32(q);
		q += 8;
	}
	return q;
}

/* Strip and parse the sample_id trailer; *blen shrinks to the body proper. */
static int parse_trailer(struct tc_perf_data *pd, struct tc_perf_data_record *r,
			 const uint8_t *body, size_t *blen, struct tc_err *e)
{
	uint64_t st;
	size_t n;
	const uint8_t *q;

	if (!r->attr || !r->attr->attr.sample_id_all || r->type >= TC_PERF_DATA_HEADER_ATTR ||
	    r->type == PERF_RECORD_SAMPLE)
		return 0;
	st = r->attr->attr.sample_type;
	n = 8 * bits(st & (ST(TID) | ST(TIME) | ST(ID) | ST(STREAM_ID) | ST(CPU) | ST(IDENTIFIER)));
	if (n > *blen)
		return rec_err(pd, e, r, "has size 0x%x, too small for its 0x%zx-byte sample_id "
			       "trailer", r->size, n);
	q = body + *blen - n;
	*blen -= n;
	q = read_tid_time(st, r, q);
	q = read_id_cpu(st, r, q);
	if (st & ST(IDENTIFIER)) {
		r->sid.has_id = true;
		r->sid.id = pd_u64(q);
	}
	return 0;
}

/* Bytes of a READ value: one counter or a group, as read_format lays them out. */
static int read_value_size(struct tc_perf_data *pd, const struct tc_perf_data_record *r,
			   const uint8_t *q, size_t left, size_t *size, struct tc_err *e)
{
	uint64_t rf = r->attr->attr.read_format, nr = 1;
	size_t each = 8 * (1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST));
	size_t head = 8 * (!!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			   !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING));

	if (rf & PERF_FORMAT_GROUP) {
		if (left < 8)
			return rec_err(pd, e, r, "is cut off in its read "
				       "group");
		nr = pd_u64(q);
		head += 8;
		if (nr > (left - 8) / each)
			return rec_err(pd, e, r, "has a read group of %llu "
				       "values in %zu bytes", (unsigned long long)nr, left);
	}
	*size = head + (size_t)nr * each;
	if (*size > left)
		return rec_err(pd, e, r, "is cut off in its read value");
	return 0;
}

/* After PERIOD: READ, CALLCHAIN, then RAW (u32 size, bytes) -- what tracepoints carry. */
static int parse_sample_raw(struct tc_perf_data *pd, struct tc_perf_data_record *r, uint64_t st,
			    const uint8_t *q, size_t left, struct tc_err *e)
{
	size_t n = 0;
	uint32_t raw;

	if (st & ST(READ)) {
		if (read_value_size(pd, r, q, left, &n, e))
			return -1;
		q += n;
		left -= n;
	}
	if (st & ST(CALLCHAIN)) {
		uint64_t nr;

		if (left < 8 || (nr = pd_u64(q)) > (left - 8) / 8)
			return rec_err(pd, e, r, "has a call chain longer than the record");
		q += 8 + 8 * nr;
		left -= 8 + 8 * nr;
	}
	if (left < 4 || (raw = pd_u32(q)) > left - 4)
		return rec_err(pd, e, r, "has raw data (at +0x%llx) longer than the record",
			       (unsigned long long)(q - r->raw));
	r->u.sample.has_raw = true;
	r->u.sample.raw_size = raw;
	r->u.sample.raw = q + 4;
	return 0;
}

static int parse_sample(struct tc_perf_data *pd, struct tc_perf_data_record *r, const uint8_t *q,
			size_t blen, struct tc_err *e)
{
	uint64_t st;
	size_t need;

	if (!r->attr)
		return 0;	/* layout unknown: raw bytes only */
	st = r->attr->attr.sample_type;
	need = 8 * bits(st & (ST(IDENTIFIER) | ST(IP) | ST(TID) | ST(TIME) | ST(ADDR) | ST(ID) |
			      ST(STREAM_ID) | ST(CPU) | ST(PERIOD)));
	if (need > blen)
		return rec_err(pd, e, r, "has size 0x%x, too small for its sample fields "
			       "(0x%zx bytes)", r->size, need + HDR);
	if (st & ST(IDENTIFIER)) {
		r->sid.has_id = true;
		r->sid.id = pd_u64(q);
		q += 8;
	}
	if (st & ST(IP)) {
		r->u.sample.has_ip = true;
		r->u.sample.ip = pd_u64(q);
		q += 8;
	}
	q = read_tid_time(st, r, q);
	if (st & ST(ADDR)) {
		r->u.sample.has_addr = true;
		r->u.sample.addr = pd_u64(q);
		q += 8;
	}
	q = read_id_cpu(st, r, q);
	if (st & ST(PERIOD)) {
		r->u.sample.has_period = true;
		r->u.sample.period = pd_u64(q);
		q += 8;
	}
	if (st & ST(RAW))
		return parse_sample_raw(pd, r, st, q, blen - need, e);
	return 0;
}

/* A NUL-terminated string filling the rest of a body, or NULL. */
static const char *cstr(const uint8_t *p, size_t len)
{
	return len && memchr(p, 0, len) ? (const char *)p : NULL;
}

static int parse_auxtrace_info(struct tc_perf_data *pd, struct tc_perf_data_record *r,
			       const uint8_t *q, size_t blen, struct tc_err *e)
{
	size_t nr = (blen - 8) / 8;
	struct tc_err sub = { 0 };
	int ret = 0;

	r->u.auxtrace_info.type = pd_u32(q);
	/* Copy the words so they are aligned whatever the record's file offset. */
	if (nr > pd->cap_priv) {
		uint64_t *w = realloc(pd->priv, nr * sizeof(*w));

		if (!w)
			return tc_err_set(e, ENOMEM, "out of memory for AUXTRACE_INFO");
		pd->priv = w;
		pd->cap_priv = nr;
	}
	if (nr)
		memcpy(pd->priv, q + 8, nr * 8);
	r->u.auxtrace_info.priv = pd->priv;
	r->u.auxtrace_info.nr_priv = nr;
	if (r->u.auxtrace_info.type == TC_AUXTRACE_CS_ETM) {
		ret = tc_auxtrace_info_cs_etm_parse(pd->priv, nr, &pd->cs, &sub);
		r->u.auxtrace_info.cs_etm = ret ? NULL : &pd->cs;
	} else if (r->u.auxtrace_info.type == TC_AUXTRACE_INTEL_PT) {
		ret = tc_auxtrace_info_intel_pt_parse(pd->priv, nr, &pd->ipt, &sub);
		r->u.auxtrace_info.intel_pt = ret ? NULL : &pd->ipt;
	}
	return ret ? rec_err(pd, e, r, "is invalid: %s", sub.msg) : 0;
}

static int parse_header_attr(struct tc_perf_data *pd, struct tc_perf_data_record *r,
			     const uint8_t *q, size_t blen, struct tc_err *e)
{
	const struct tc_perf_data_attr *a;
	uint32_t asz;

	if (blen < PERF_ATTR_SIZE_VER0)
		return rec_err(pd, e, r, "has size 0x%x, too small for an attr", r->size);
	asz = pd_u32(q + 4) ? pd_u32(q + 4) : PERF_ATTR_SIZE_VER0;
	if (asz < PERF_ATTR_SIZE_VER0 || asz > blen)
		return rec_err(pd, e, r, "has an attr of size 0x%x in a 0x%zx-byte body", asz,
			       blen);
	if (pd_add_attr(pd, q, asz, r->offset + HDR, &a, e) ||
	    pd_add_ids(pd, pd->nr_attrs - 1, q + asz, (blen - asz) / 8, e))
		return -1;
	r->u.header_attr.attr = &pd->attrs[pd->nr_attrs - 1];
	return 0;
}

/* Minimum body size (after the header, without the trailer) per type. */
static size_t min_body(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_MMAP: return 32 + 1;
	case PERF_RECORD_MMAP2: return 64 + 1;
	case PERF_RECORD_COMM: return 8 + 1;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: return 24;
	case PERF_RECORD_SWITCH_CPU_WIDE: return 8;
	case PERF_RECORD_LOST: return 16;
	case PERF_RECORD_LOST_SAMPLES: return 8;
	case PERF_RECORD_AUX: return 24;
	case PERF_RECORD_AUX_OUTPUT_HW_ID: return 8;
	case PERF_RECORD_ITRACE_START: return 8;
	case TC_PERF_DATA_AUXTRACE_INFO: return 8;
	case TC_PERF_DATA_AUXTRACE: return AUXTRACE_SIZE - HDR;
	case TC_PERF_DATA_HEADER_FEATURE: return 8;
	default: return 0;
	}
}

static int parse_body(struct tc_perf_data *pd, struct tc_perf_data_record *r,
		      const uint8_t *extra_p, struct tc_err *e)
{
	const uint8_t *q = r->raw + HDR;
	size_t blen = r->size - HDR;

	r->attr = r->type < TC_PERF_DATA_HEADER_ATTR ? find_attr(pd, r, q, blen) : NULL;
	if (r->type == PERF_RECORD_SAMPLE)
		return parse_sample(pd, r, q, blen, e);
	if (parse_trailer(pd, r, q, &blen, e))
		return -1;
	if (blen < min_body(r->type))
		return rec_err(pd, e, r, "has size 0x%x, too small for its fields", r->size);

	switch (r->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		size_t fn = r->type == PERF_RECORD_MMAP ? 32 : 64;

		r->u.mmap.pid = pd_u32(q);
		r->u.mmap.tid = pd_u32(q + 4);
		r->u.mmap.start = pd_u64(q + 8);
		r->u.mmap.len = pd_u64(q + 16);
		r->u.mmap.pgoff = pd_u64(q + 24);
		if (r->type == PERF_RECORD_MMAP2) {
			if (r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
				r->u.mmap.has_build_id = true;
				r->u.mmap.build_id_size = q[32] <= 20 ? q[32] : 20;
				memcpy(r->u.mmap.build_id, q + 36, 20);
			} else {
				r->u.mmap.maj = pd_u32(q + 32);
				r->u.mmap.min = pd_u32(q + 36);
				r->u.mmap.ino = pd_u64(q + 40);
				r->u.mmap.ino_generation = pd_u64(q + 48);
			}
			r->u.mmap.prot = pd_u32(q + 56);
			r->u.mmap.flags = pd_u32(q + 60);
		}
		r->u.mmap.filename = cstr(q + fn, blen - fn);
		if (!r->u.mmap.filename)
			return rec_err(pd, e, r, "has an unterminated file name");
		break;
	}
	case PERF_RECORD_COMM:
		r->u.comm.pid = pd_u32(q);
		r->u.comm.tid = pd_u32(q + 4);
		r->u.comm.exec = r->misc & PERF_RECORD_MISC_COMM_EXEC;
		r->u.comm.comm = cstr(q + 8, blen - 8);
		if (!r->u.comm.comm)
			return rec_err(pd, e, r, "has an unterminated command name");
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		r->u.fork.pid = pd_u32(q);
		r->u.fork.ppid = pd_u32(q + 4);
		r->u.fork.tid = pd_u32(q + 8);
		r->u.fork.ptid = pd_u32(q + 12);
		r->u.fork.time = pd_u64(q + 16);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		r->u.sw.out = r->misc & PERF_RECORD_MISC_SWITCH_OUT;
		r->u.sw.preempt = r->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT;
		if (r->type == PERF_RECORD_SWITCH_CPU_WIDE) {
			r->u.sw.next_prev_pid = pd_u32(q);
			r->u.sw.next_prev_tid = pd_u32(q + 4);
		}
		break;
	case PERF_RECORD_LOST:
		r->u.lost.id = pd_u64(q);
		r->u.lost.lost = pd_u64(q + 8);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		r->u.lost.lost = pd_u64(q);
		break;
	case PERF_RECORD_AUX:
		r->u.aux.aux_offset = pd_u64(q);
		r->u.aux.aux_size = pd_u64(q + 8);
		r->u.aux.flags = pd_u64(q + 16);
		r->u.aux.truncated = r->u.aux.flags & PERF_AUX_FLAG_TRUNCATED;
		r->u.aux.overwrite = r->u.aux.flags & PERF_AUX_FLAG_OVERWRITE;
		r->u.aux.partial = r->u.aux.flags & PERF_AUX_FLAG_PARTIAL;
		r->u.aux.collision = r->u.aux.flags & PERF_AUX_FLAG_COLLISION;
		r->u.aux.format = TC_PERF_DATA_AUX_FORMAT(r->u.aux.flags);
		break;
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		r->u.hw_id.hw_id = pd_u64(q);
		break;
	case PERF_RECORD_ITRACE_START:
		r->u.itrace_start.pid = pd_u32(q);
		r->u.itrace_start.tid = pd_u32(q + 4);
		break;
	case TC_PERF_DATA_AUXTRACE:
		r->u.auxtrace.size = pd_u64(q);
		r->u.auxtrace.offset = pd_u64(q + 8);
		r->u.auxtrace.reference = pd_u64(q + 16);
		r->u.auxtrace.idx = pd_u32(q + 24);
		r->u.auxtrace.tid = pd_u32(q + 28);
		r->u.auxtrace.cpu = pd_u32(q + 32);
		r->u.auxtrace.data = extra_p;
		r->u.auxtrace.kept = !pd->stream;
		break;
	case TC_PERF_DATA_AUXTRACE_INFO:
		return parse_auxtrace_info(pd, r, q, blen, e);
	case TC_PERF_DATA_HEADER_ATTR:
		return parse_header_attr(pd, r, q, blen, e);
	case TC_PERF_DATA_HEADER_FEATURE:
		r->u.header_feature.feat = pd_u64(q);
		if (r->u.header_feature.feat >= TC_PERF_DATA_FEAT_BITS)
			return rec_err(pd, e, r, "names feature %llu, beyond the %d known bits",
				       (unsigned long long)r->u.header_feature.feat,
				       TC_PERF_DATA_FEAT_BITS);
		return pd_parse_feature(pd, (unsigned)r->u.header_feature.feat, q + 8, blen - 8,
					r->offset + HDR + 8, e);
	case TC_PERF_DATA_HEADER_BUILD_ID:
		return pd_add_build_id(pd, r->raw, r->size, r->offset, e);
	case TC_PERF_DATA_HEADER_TRACING_DATA:
		r->u.tracing_data.size = pd_u32(q);
		return pd_parse_feature(pd, TC_PERF_DATA_FEAT_TRACING_DATA, extra_p,
					r->u.tracing_data.size, r->offset + r->size, e);
	default:
		break;	/* FINISHED_ROUND and others: header and raw bytes only */
	}
	return 0;
}

int tc_perf_data_next(struct tc_perf_data *pd, struct tc_perf_data_record *rec, struct tc_err *e)
{
	const uint8_t *extra_p = NULL;
	uint64_t extra = 0;
	int ret;

	if (pd->failed) {
		if (e)
			*e = pd->fail;
		return -1;
	}
	if (pd->done)
		return 0;
	memset(rec, 0, sizeof(*rec));
	tc_auxtrace_info_cs_etm_free(&pd->cs);
	tc_auxtrace_info_intel_pt_free(&pd->ipt);
	ret = pd->stream ? fetch_stream(pd, rec, &extra_p, &extra, &pd->fail)
			 : fetch_map(pd, rec, &extra_p, &extra, &pd->fail);
	if (ret > 0 && parse_body(pd, rec, extra_p, &pd->fail))
		ret = -1;
	if (ret < 0) {
		pd->failed = true;
		if (e)
			*e = pd->fail;
		return -1;
	}
	if (!ret)
		pd->done = true;
	return ret;
}
