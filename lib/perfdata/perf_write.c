/* perf.data writer (file mode): header, attrs and ids, data records, feature sections. */
#include "lib/perfdata/perf_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/perfdata/perf_data.h"
#include "lib/util/grow.h"

#define PW_MAGIC 0x32454c4946524550ULL	/* "PERFILE2" */
#define PW_HDR_SIZE 104
#define PW_NAME_ALIGN 64		/* feature strings and build-id names */
#define PW_MISC_BUILD_ID_SIZE (1 << 15)
#define PW_MAX_RECORD 0xffff
#define PW_OUT_SIZE (64 * 1024)	/* write buffer */

struct pw_buf {
	uint8_t *p;
	size_t n, cap;
};

struct pw_attr {
	uint8_t attr[TC_PERF_WRITE_ATTR_SIZE];
	uint64_t sample_type;
	bool sample_id_all;
	uint64_t *ids;
	size_t nr_ids;
	char *name;			/* for HEADER_EVENT_DESC, NULL: none given */
};

struct tc_perf_write {
	char *path;
	char *tmp;			/* the file being written, renamed to path at close */
	int fd;
	struct stat at_open;		/* path when the temporary was made */
	bool existed;			/* path existed then (it becomes path.old) */
	uint8_t *out;			/* write buffer */
	size_t nout;
	uint64_t flushed;		/* bytes the file holds */
	int werr;			/* ENOSPC, EFBIG, EIO...: what stopped the writes */
	uint64_t wfail_at;		/* the offset the first failed write was for */
	uint64_t pos;			/* bytes written so far */
	bool data_started;
	uint64_t attrs_off, attrs_size, data_off;
	struct pw_attr *attrs;
	size_t nr_attrs;
	struct pw_buf feat[TC_PERF_DATA_FEAT_BITS];
	uint64_t present[TC_PERF_DATA_FEAT_BITS / 64];
	uint32_t nr_cmdline;
	struct pw_buf index;		/* {offset, size} pairs of AUXTRACE records */
	size_t nr_index;
	uint8_t rec[PW_MAX_RECORD + 1];	/* the record being built */
	size_t rlen;
};

static int buf_put(struct pw_buf *b, const void *p, size_t n, struct tc_err *e)
{
	if (tc_grow((void **)&b->p, &b->cap, b->n + n, 1))
		return tc_err_set(e, ENOMEM, "out of memory for a perf.data section");
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
	return 0;
}

static void (*notify_fn)(void *ctx, const char *msg);
static void *notify_ctx;

void tc_perf_write_set_notify(void (*fn)(void *ctx, const char *msg), void *ctx)
{
	notify_fn = fn;
	notify_ctx = ctx;
}

static void notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void notify(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!notify_fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	notify_fn(notify_ctx, msg);
}

/* Errors after which the file written so far is still worth keeping: the disk is full or
 * failing, or the file hit RLIMIT_FSIZE. */
static bool space_err(int err)
{
	return err == ENOSPC || err == EFBIG || err == EIO || err == EDQUOT;
}

/* The buffer to the file; 0 or the errno that stopped it (w->flushed: what the file holds). */
static int flush_out(struct tc_perf_write *w)
{
	size_t off = 0;

	while (off < w->nout) {
		ssize_t n = write(w->fd, w->out + off, w->nout - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			w->nout = 0;
			return n < 0 ? errno : EIO;
		}
		off += (size_t)n;
		w->flushed += (uint64_t)n;
	}
	w->nout = 0;
	return 0;
}

/* A full disk does not fail the caller: the writes are dropped from there on and close
 * keeps the file up to its last whole record (salvage). Other errors fail at once. */
static int flush_or_fail(struct tc_perf_write *w, struct tc_err *e)
{
	int err = w->werr ? 0 : flush_out(w);

	if (!err)
		return 0;
	if (!space_err(err))
		return tc_err_sys(e, err, "%s: write at offset 0x%llx", w->path,
				  (unsigned long long)w->flushed);
	w->werr = err;
	w->wfail_at = w->flushed;
	return 0;
}

static int put(struct tc_perf_write *w, const void *p, size_t n, struct tc_err *e)
{
	const uint8_t *b = p;

	while (n) {
		size_t k = PW_OUT_SIZE - w->nout < n ? PW_OUT_SIZE - w->nout : n;

		if (!w->werr)
			memcpy(w->out + w->nout, b, k);
		w->nout += k;
		w->pos += k;
		b += k;
		n -= k;
		if (w->werr)
			w->nout = 0;
		else if (w->nout == PW_OUT_SIZE && flush_or_fail(w, e))
			return -1;
	}
	return 0;
}

static int put_zero(struct tc_perf_write *w, size_t n, struct tc_err *e)
{
	static const uint8_t z[64];

	while (n) {
		size_t k = n < sizeof(z) ? n : sizeof(z);

		if (put(w, z, k, e))
			return -1;
		n -= k;
	}
	return 0;
}

/* The temporary beside path (same directory: the final rename stays in one file system).
 * O_EXCL|O_NOFOLLOW: never a file or link someone planted under that name. */
static int make_tmp(struct tc_perf_write *w)
{
	static unsigned seq;

	for (int tries = 0; tries < 100; tries++) {
		free(w->tmp);
		if (asprintf(&w->tmp, "%s.tmp-%d-%u", w->path, (int)getpid(), seq++) < 0) {
			w->tmp = NULL;
			errno = ENOMEM;
			return -1;
		}
		w->fd = open(w->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (w->fd >= 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	free(w->tmp);
	w->tmp = NULL;
	return -1;
}

int tc_perf_write_open(struct tc_perf_write **out, const char *path, struct tc_err *e)
{
	struct tc_perf_write *w = calloc(1, sizeof(*w));
	struct stat sb;

	*out = NULL;
	if (!w || !(w->path = strdup(path)) || !(w->out = malloc(PW_OUT_SIZE))) {
		if (w)
			free(w->path);
		free(w);
		return tc_err_set(e, ENOMEM, "out of memory opening %s", path);
	}
	w->fd = -1;
	if (!lstat(path, &sb)) {
		/* A link at path, even a dangling one, is neither written through nor replaced
		 * (someone else's: it may point anywhere). */
		if (S_ISLNK(sb.st_mode)) {
			tc_perf_write_abort(w);
			return tc_err_set(e, 0, "%s is a symbolic link: not writing through it "
					  "(remove it or give another file)", path);
		}
		if (!S_ISREG(sb.st_mode)) {
			tc_perf_write_abort(w);
			return tc_err_set(e, 0, "%s is not a regular file: not replacing it", path);
		}
		w->existed = true;
		w->at_open = sb;
	} else if (errno != ENOENT) {
		int err = errno;

		tc_perf_write_abort(w);
		return tc_err_sys(e, err, "%s", path);
	}
	if (make_tmp(w)) {
		int err = errno;

		tc_perf_write_abort(w);
		return tc_err_sys(e, err, "%s: cannot create", path);
	}
	/* The header is rewritten at close, once the sections are known. */
	if (put_zero(w, PW_HDR_SIZE, e)) {
		tc_perf_write_abort(w);
		return -1;
	}
	*out = w;
	return 0;
}

static void free_writer(struct tc_perf_write *w)
{
	for (size_t i = 0; i < w->nr_attrs; i++) {
		free(w->attrs[i].ids);
		free(w->attrs[i].name);
	}
	free(w->attrs);
	for (size_t i = 0; i < TC_PERF_DATA_FEAT_BITS; i++)
		free(w->feat[i].p);
	free(w->index.p);
	free(w->out);
	free(w->tmp);
	free(w->path);
	free(w);
}

void tc_perf_write_abort(struct tc_perf_write *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	if (w->tmp)
		unlink(w->tmp);
	free_writer(w);
}

bool tc_perf_write_failed(const struct tc_perf_write *w)
{
	return w->werr != 0;
}

int tc_perf_write_add_attr(struct tc_perf_write *w, const struct perf_event_attr *attr,
			   const uint64_t *ids, size_t nr_ids, struct tc_err *e)
{
	struct pw_attr *a;
	struct perf_event_attr copy;

	if (w->data_started)
		return tc_err_set(e, EINVAL, "%s: attrs must come before the first record",
				  w->path);
	a = realloc(w->attrs, (w->nr_attrs + 1) * sizeof(*a));
	if (!a)
		return tc_err_set(e, ENOMEM, "out of memory for attrs");
	w->attrs = a;
	a = &w->attrs[w->nr_attrs];
	memset(a, 0, sizeof(*a));
	memset(&copy, 0, sizeof(copy));
	memcpy(&copy, attr,
	       sizeof(copy) < TC_PERF_WRITE_ATTR_SIZE ? sizeof(copy) : TC_PERF_WRITE_ATTR_SIZE);
	copy.size = TC_PERF_WRITE_ATTR_SIZE;
	memcpy(a->attr, &copy,
	       sizeof(copy) < TC_PERF_WRITE_ATTR_SIZE ? sizeof(copy) : TC_PERF_WRITE_ATTR_SIZE);
	a->sample_type = attr->sample_type;
	a->sample_id_all = attr->sample_id_all;
	if (nr_ids) {
		if (!(a->ids = malloc(nr_ids * sizeof(*ids))))
			return tc_err_set(e, ENOMEM, "out of memory for attr ids");
		memcpy(a->ids, ids, nr_ids * sizeof(*ids));
	}
	a->nr_ids = nr_ids;
	w->nr_attrs++;
	return 0;
}

int tc_perf_write_attr_name(struct tc_perf_write *w, size_t attr_idx, const char *name,
			    struct tc_err *e)
{
	char *dup;

	if (attr_idx >= w->nr_attrs)
		return tc_err_set(e, EINVAL, "%s: no attr %zu to name", w->path, attr_idx);
	if (!(dup = strdup(name)))
		return tc_err_set(e, ENOMEM, "out of memory for an event name");
	free(w->attrs[attr_idx].name);
	w->attrs[attr_idx].name = dup;
	return 0;
}

/* Ids, then the attrs pointing at them; the data section follows. */
static int start_data(struct tc_perf_write *w, struct tc_err *e)
{
	uint64_t ids_off = w->pos;

	if (w->data_started)
		return 0;
	for (size_t i = 0; i < w->nr_attrs; i++)
		if (put(w, w->attrs[i].ids, w->attrs[i].nr_ids * 8, e))
			return -1;
	w->attrs_off = w->pos;
	for (size_t i = 0; i < w->nr_attrs; i++) {
		uint64_t sec[2] = { ids_off, w->attrs[i].nr_ids * 8 };

		if (put(w, w->attrs[i].attr, TC_PERF_WRITE_ATTR_SIZE, e) ||
		    put(w, sec, sizeof(sec), e))
			return -1;
		ids_off += sec[1];
	}
	w->attrs_size = w->pos - w->attrs_off;
	w->data_off = w->pos;
	w->data_started = true;
	return 0;
}

uint64_t tc_perf_write_offset(const struct tc_perf_write *w)
{
	/* Before the first record the attrs still have to be written. */
	uint64_t n = w->pos;

	if (!w->data_started)
		for (size_t i = 0; i < w->nr_attrs; i++)
			n += w->attrs[i].nr_ids * 8 + TC_PERF_WRITE_ATTR_SIZE + 16;
	return n;
}

int tc_perf_write_record(struct tc_perf_write *w, const void *rec, size_t len, struct tc_err *e)
{
	struct perf_event_header h;

	if (len < sizeof(h) || len > PW_MAX_RECORD || len % 8)
		return tc_err_set(e, EINVAL, "%s: record of %zu bytes is not 8..0xfff8 in steps "
				  "of 8", w->path, len);
	memcpy(&h, rec, sizeof(h));
	if (h.size != len)
		return tc_err_set(e, EINVAL, "%s: record header says %u bytes, given %zu",
				  w->path, h.size, len);
	if (start_data(w, e))
		return -1;
	return put(w, rec, len, e);
}

/* Record building in w->rec: begin, append fields, end with trailer and size. */
static void rb_begin(struct tc_perf_write *w, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = 0 };

	memcpy(w->rec, &h, sizeof(h));
	w->rlen = sizeof(h);
}

static void rb_put(struct tc_perf_write *w, const void *p, size_t n)
{
	/* Callers bound their variable parts well below the record limit. */
	memcpy(w->rec + w->rlen, p, n);
	w->rlen += n;
}

static void rb_u32(struct tc_perf_write *w, uint32_t v) { rb_put(w, &v, 4); }
static void rb_u64(struct tc_perf_write *w, uint64_t v) { rb_put(w, &v, 8); }

/* A NUL-terminated string padded with zeros to 8 bytes. */
static int rb_str(struct tc_perf_write *w, const char *s, size_t max, struct tc_err *e)
{
	size_t n = strlen(s) + 1, pad = (8 - n % 8) % 8;

	if (n > max)
		return tc_err_set(e, EINVAL, "%s: name of %zu bytes is too long for a record",
				  w->path, n - 1);
	rb_put(w, s, n);
	memset(w->rec + w->rlen, 0, pad);
	w->rlen += pad;
	return 0;
}

static int rb_end(struct tc_perf_write *w, const struct tc_perf_write_sid *sid, struct tc_err *e)
{
	struct tc_perf_write_sid none = { 0 };
	uint16_t size;

	if (w->nr_attrs && w->attrs[0].sample_id_all) {
		uint64_t st = w->attrs[0].sample_type;

		if (!sid)
			sid = &none;
		if (st & PERF_SAMPLE_TID) {
			rb_u32(w, sid->pid);
			rb_u32(w, sid->tid);
		}
		if (st & PERF_SAMPLE_TIME)
			rb_u64(w, sid->time);
		if (st & PERF_SAMPLE_ID)
			rb_u64(w, sid->id);
		if (st & PERF_SAMPLE_STREAM_ID)
			rb_u64(w, sid->stream_id);
		if (st & PERF_SAMPLE_CPU) {
			rb_u32(w, sid->cpu);
			rb_u32(w, 0);
		}
		if (st & PERF_SAMPLE_IDENTIFIER)
			rb_u64(w, sid->id);
	}
	size = (uint16_t)w->rlen;
	memcpy(w->rec + 6, &size, sizeof(size));
	return tc_perf_write_record(w, w->rec, w->rlen, e);
}

int tc_perf_write_comm(struct tc_perf_write *w, uint32_t pid, uint32_t tid, const char *comm,
		       bool exec, const struct tc_perf_write_sid *sid, struct tc_err *e)
{
	/* The kernel leaves the cpumode bits of COMM at 0. */
	rb_begin(w, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
	rb_u32(w, pid);
	rb_u32(w, tid);
	if (rb_str(w, comm, 4096, e))
		return -1;
	return rb_end(w, sid, e);
}

int tc_perf_write_mmap2(struct tc_perf_write *w, const struct tc_perf_write_mmap2 *m,
			const struct tc_perf_write_sid *sid, struct tc_err *e)
{
	rb_begin(w, PERF_RECORD_MMAP2, m->misc ? m->misc : PERF_RECORD_MISC_USER);
	rb_u32(w, m->pid);
	rb_u32(w, m->tid);
	rb_u64(w, m->start);
	rb_u64(w, m->len);
	rb_u64(w, m->pgoff);
	rb_u32(w, m->maj);
	rb_u32(w, m->min);
	rb_u64(w, m->ino);
	rb_u64(w, m->ino_generation);
	rb_u32(w, m->prot);
	rb_u32(w, m->flags);
	if (rb_str(w, m->filename, 4096, e))
		return -1;
	return rb_end(w, sid, e);
}

int tc_perf_write_fork(struct tc_perf_write *w, bool exit, uint32_t pid, uint32_t ppid,
		       uint32_t tid, uint32_t ptid, uint64_t time,
		       const struct tc_perf_write_sid *sid, struct tc_err *e)
{
	rb_begin(w, exit ? PERF_RECORD_EXIT : PERF_RECORD_FORK, 0);
	rb_u32(w, pid);
	rb_u32(w, ppid);
	rb_u32(w, tid);
	rb_u32(w, ptid);
	rb_u64(w, time);
	return rb_end(w, sid, e);
}

int tc_perf_write_itrace_start(struct tc_perf_write *w, uint32_t pid, uint32_t tid,
			       const struct tc_perf_write_sid *sid, struct tc_err *e)
{
	rb_begin(w, PERF_RECORD_ITRACE_START, 0);
	rb_u32(w, pid);
	rb_u32(w, tid);
	return rb_end(w, sid, e);
}

int tc_perf_write_aux(struct tc_perf_write *w, uint64_t aux_offset, uint64_t aux_size,
		      uint64_t flags, const struct tc_perf_write_sid *sid, struct tc_err *e)
{
	rb_begin(w, PERF_RECORD_AUX, 0);
	rb_u64(w, aux_offset);
	rb_u64(w, aux_size);
	rb_u64(w, flags);
	return rb_end(w, sid, e);
}

int tc_perf_write_lost_samples(struct tc_perf_write *w, uint64_t lost,
			       const struct tc_perf_write_sid *sid, struct tc_err *e)
{
	rb_begin(w, PERF_RECORD_LOST_SAMPLES, 0);
	rb_u64(w, lost);
	return rb_end(w, sid, e);
}

static void info_begin(struct tc_perf_write *w, uint32_t type)
{
	rb_begin(w, TC_PERF_DATA_AUXTRACE_INFO, 0);
	rb_u32(w, type);
	rb_u32(w, 0);
}

static int info_end(struct tc_perf_write *w, struct tc_err *e)
{
	uint16_t size = (uint16_t)w->rlen;

	memcpy(w->rec + 6, &size, sizeof(size));
	return tc_perf_write_record(w, w->rec, w->rlen, e);
}

int tc_perf_write_auxtrace_info(struct tc_perf_write *w, uint32_t type, const uint64_t *priv,
				size_t nr, struct tc_err *e)
{
	/* The header, type and reserved words and nr words must fit the 16-bit size. */
	if (nr > (PW_MAX_RECORD - 16) / 8)
		return tc_err_set(e, EINVAL, "%s: %zu words do not fit one AUXTRACE_INFO record",
				  w->path, nr);
	info_begin(w, type);
	for (size_t i = 0; i < nr; i++)
		rb_u64(w, priv[i]);
	return info_end(w, e);
}

int tc_perf_write_auxtrace_info_intel_pt(struct tc_perf_write *w,
					 const uint64_t priv[TC_IPT_PRIV_MAX], const char *filter,
					 struct tc_err *e)
{
	size_t flen = filter ? strlen(filter) : 0;

	info_begin(w, TC_AUXTRACE_INTEL_PT);
	for (int i = 0; i < TC_IPT_PRIV_MAX; i++)
		rb_u64(w, i == TC_IPT_FILTER_STR_LEN ? flen : priv[i]);
	/* perf reads roundup(len + 1, 8) bytes and wants them NUL-terminated. */
	if (flen && rb_str(w, filter, 32768, e))
		return -1;
	return info_end(w, e);
}

int tc_perf_write_auxtrace_info_cs_etm(struct tc_perf_write *w, uint32_t pmu_type,
				       uint64_t snapshot, const struct tc_perf_write_etmv4 *cpus,
				       size_t nr_cpus, struct tc_err *e)
{
	enum { BLOCK = TC_CS_BLK_HDR_WORDS + TC_CS_ETMV4_NR_PARAMS };

	/* The header words and a block per CPU must fit the 16-bit record size. */
	if (nr_cpus > (PW_MAX_RECORD - 16 - 8 * TC_CS_HDR_WORDS) / (8 * BLOCK))
		return tc_err_set(e, EINVAL, "%s: %zu CPUs do not fit one AUXTRACE_INFO record",
				  w->path, nr_cpus);
	info_begin(w, TC_AUXTRACE_CS_ETM);
	rb_u64(w, TC_CS_HDR_VERSION_1);
	rb_u64(w, (uint64_t)pmu_type << 32 | nr_cpus);
	rb_u64(w, snapshot);
	for (size_t i = 0; i < nr_cpus; i++) {
		const struct tc_perf_write_etmv4 *c = &cpus[i];

		rb_u64(w, TC_CS_ETMV4_MAGIC);
		rb_u64(w, c->cpu);
		rb_u64(w, TC_CS_ETMV4_NR_PARAMS);
		rb_u64(w, c->trcconfigr);
		rb_u64(w, c->trctraceidr);
		rb_u64(w, c->trcidr0);
		rb_u64(w, c->trcidr1);
		rb_u64(w, c->trcidr2);
		rb_u64(w, c->trcidr8);
		rb_u64(w, c->trcauthstatus);
	}
	return info_end(w, e);
}

int tc_perf_write_auxtrace(struct tc_perf_write *w, const void *data, size_t size, uint64_t offset,
		   uint64_t reference, uint32_t idx, uint32_t tid, uint32_t cpu,
		   struct tc_err *e)
{
	size_t pad = (8 - size % 8) % 8;
	uint64_t at = tc_perf_write_offset(w), ent[2];

	rb_begin(w, TC_PERF_DATA_AUXTRACE, 0);
	rb_u64(w, size + pad);
	rb_u64(w, offset);
	rb_u64(w, reference);
	rb_u32(w, idx);
	rb_u32(w, tid);
	rb_u32(w, cpu);
	rb_u32(w, 0);
	if (info_end(w, e) || put(w, data, size, e) || put_zero(w, pad, e))
		return -1;
	ent[0] = at;
	ent[1] = w->rlen;
	if (buf_put(&w->index, ent, sizeof(ent), e))
		return -1;
	w->nr_index++;
	return 0;
}

static void mark(struct tc_perf_write *w, unsigned feat)
{
	w->present[feat / 64] |= 1ULL << (feat % 64);
}

/* perf's string: u32 length (NAME_ALIGN-padded, with the NUL), then the bytes. */
static int feat_str(struct pw_buf *b, const char *s, struct tc_err *e)
{
	static const uint8_t z[PW_NAME_ALIGN];
	size_t n = strlen(s) + 1, len = (n + PW_NAME_ALIGN - 1) / PW_NAME_ALIGN * PW_NAME_ALIGN;
	uint32_t l = (uint32_t)len;

	return buf_put(b, &l, 4, e) || buf_put(b, s, n, e) || buf_put(b, z, len - n, e) ? -1 : 0;
}

int tc_perf_write_feat_string(struct tc_perf_write *w, unsigned feat, const char *s,
			      struct tc_err *e)
{
	switch (feat) {
	case TC_PERF_DATA_FEAT_HOSTNAME:
	case TC_PERF_DATA_FEAT_OSRELEASE:
	case TC_PERF_DATA_FEAT_VERSION:
	case TC_PERF_DATA_FEAT_ARCH: case TC_PERF_DATA_FEAT_CPUDESC: case TC_PERF_DATA_FEAT_CPUID:
		break;
	default:
		return tc_err_set(e, EINVAL, "feature %u is not a string feature", feat);
	}
	w->feat[feat].n = 0;
	mark(w, feat);
	return feat_str(&w->feat[feat], s, e);
}

int tc_perf_write_feat_raw(struct tc_perf_write *w, unsigned feat, const void *data, size_t len,
		   struct tc_err *e)
{
	if (feat == 0 || feat >= TC_PERF_DATA_FEAT_BITS)
		return tc_err_set(e, EINVAL, "no feature bit %u", feat);
	w->feat[feat].n = 0;
	mark(w, feat);
	return buf_put(&w->feat[feat], data, len, e);
}

int tc_perf_write_feat_nrcpus(struct tc_perf_write *w, uint32_t avail, uint32_t online,
			      struct tc_err *e)
{
	uint32_t v[2] = { avail, online };

	w->feat[TC_PERF_DATA_FEAT_NRCPUS].n = 0;
	mark(w, TC_PERF_DATA_FEAT_NRCPUS);
	return buf_put(&w->feat[TC_PERF_DATA_FEAT_NRCPUS], v, sizeof(v), e);
}

int tc_perf_write_feat_cmdline(struct tc_perf_write *w, int argc, char *const argv[],
			       struct tc_err *e)
{
	struct pw_buf *b = &w->feat[TC_PERF_DATA_FEAT_CMDLINE];
	uint32_t nr = argc > 0 ? (uint32_t)argc : 0;

	b->n = 0;
	mark(w, TC_PERF_DATA_FEAT_CMDLINE);
	if (buf_put(b, &nr, 4, e))
		return -1;
	for (uint32_t i = 0; i < nr; i++)
		if (feat_str(b, argv[i], e))
			return -1;
	return 0;
}

int tc_perf_write_feat_build_id(struct tc_perf_write *w, int32_t pid, uint16_t misc,
				const uint8_t *id, size_t size, const char *filename,
				struct tc_err *e)
{
	static const uint8_t z[PW_NAME_ALIGN];
	struct pw_buf *b = &w->feat[TC_PERF_DATA_FEAT_BUILD_ID];
	size_t n = strlen(filename) + 1, len = (n + PW_NAME_ALIGN - 1) / PW_NAME_ALIGN *
		PW_NAME_ALIGN;
	uint8_t bid[24] = { 0 };
	struct perf_event_header h = { .type = TC_PERF_DATA_HEADER_BUILD_ID,
				       .misc = misc | PW_MISC_BUILD_ID_SIZE };

	if (size > 20 || 36 + len > PW_MAX_RECORD)
		return tc_err_set(e, EINVAL, "build id of %zu bytes for %s: ids hold at most 20 "
				  "bytes, names at most 0xffb0", size, filename);
	h.size = (uint16_t)(36 + len);
	memcpy(bid, id, size);
	bid[20] = (uint8_t)size;
	mark(w, TC_PERF_DATA_FEAT_BUILD_ID);
	return buf_put(b, &h, sizeof(h), e) || buf_put(b, &pid, 4, e) ||
	       buf_put(b, bid, sizeof(bid), e) || buf_put(b, filename, n, e) ||
	       buf_put(b, z, len - n, e) ? -1 : 0;
}

/* perf's layout: u32 events, u32 attr size; per event the attr, u32 ids, the name as a
 * feature string, the ids. Written when any attr was named. */
static int event_desc(struct tc_perf_write *w, struct tc_err *e)
{
	struct pw_buf *b = &w->feat[TC_PERF_DATA_FEAT_EVENT_DESC];
	uint32_t hdr[2] = { (uint32_t)w->nr_attrs, TC_PERF_WRITE_ATTR_SIZE };
	bool named = false;

	for (size_t i = 0; i < w->nr_attrs; i++)
		named |= w->attrs[i].name != NULL;
	if (!named)
		return 0;
	b->n = 0;
	mark(w, TC_PERF_DATA_FEAT_EVENT_DESC);
	if (buf_put(b, hdr, sizeof(hdr), e))
		return -1;
	for (size_t i = 0; i < w->nr_attrs; i++) {
		const struct pw_attr *a = &w->attrs[i];
		uint32_t nr = (uint32_t)a->nr_ids;

		if (buf_put(b, a->attr, TC_PERF_WRITE_ATTR_SIZE, e) || buf_put(b, &nr, 4, e) ||
		    feat_str(b, a->name ? a->name : "", e) ||
		    buf_put(b, a->ids, a->nr_ids * 8, e))
			return -1;
	}
	return 0;
}

/* The AUXTRACE feature: the index of the first nidx AUXTRACE records. */
static int index_feat(struct tc_perf_write *w, size_t nidx, struct tc_err *e)
{
	struct pw_buf *b = &w->feat[TC_PERF_DATA_FEAT_AUXTRACE];
	uint64_t n = nidx;

	b->n = 0;
	w->present[TC_PERF_DATA_FEAT_AUXTRACE / 64] &= ~(1ULL << (TC_PERF_DATA_FEAT_AUXTRACE % 64));
	if (!nidx)
		return 0;
	mark(w, TC_PERF_DATA_FEAT_AUXTRACE);
	return buf_put(b, &n, 8, e) || buf_put(b, w->index.p, nidx * 16, e) ? -1 : 0;
}

static bool has_feat(const struct tc_perf_write *w, unsigned f)
{
	return w->present[f / 64] & (1ULL << (f % 64));
}

/* Bytes the feature sections take, with an index of nidx AUXTRACE records. */
static uint64_t feat_bytes(const struct tc_perf_write *w, size_t nidx)
{
	uint64_t n = 0;

	for (unsigned f = 0; f < TC_PERF_DATA_FEAT_BITS; f++)
		if (f != TC_PERF_DATA_FEAT_AUXTRACE && has_feat(w, f))
			n += 16 + w->feat[f].n;
	return n + (nidx ? 16 + 8 + 16 * (uint64_t)nidx : 0);
}

/* After the data: one {offset, size} per set feature bit, then the sections. */
static int write_features(struct tc_perf_write *w, struct tc_err *e)
{
	size_t nr = 0;
	uint64_t off;

	if (event_desc(w, e) || index_feat(w, w->nr_index, e))
		return -1;
	for (unsigned f = 0; f < TC_PERF_DATA_FEAT_BITS; f++)
		nr += has_feat(w, f);
	off = w->pos + nr * 16;
	for (unsigned f = 0; f < TC_PERF_DATA_FEAT_BITS; f++) {
		uint64_t sec[2];

		if (!has_feat(w, f))
			continue;
		sec[0] = off;
		sec[1] = w->feat[f].n;
		if (put(w, sec, sizeof(sec), e))
			return -1;
		off += sec[1];
	}
	for (unsigned f = 0; f < TC_PERF_DATA_FEAT_BITS; f++)
		if (has_feat(w, f) && put(w, w->feat[f].p, w->feat[f].n, e))
			return -1;
	return flush_or_fail(w, e);
}

/* The writes stopped at w->flushed bytes (full disk): keep the data records that are whole
 * there, as many as leave room for the features (the space the dropped records held is
 * theirs), and the features; without room for them, the records alone. *data_end is where
 * the data section ends now; msg says what was kept. */
static int salvage(struct tc_perf_write *w, uint64_t *data_end, char *msg, size_t len,
		   struct tc_err *e)
{
	uint64_t limit = w->flushed, off = w->data_off, best = 0, plain = off, want = w->pos;
	uint64_t nrec = 0, best_rec = 0, plain_rec = 0;
	size_t nidx = 0, best_idx = 0;
	bool fits = false;
	int err = w->werr;

	if (!w->data_started || limit < w->data_off)
		return tc_err_sys(e, err, "%s: writing at offset 0x%llx: nothing could be kept "
				  "(the attrs alone need 0x%llx bytes)", w->path,
				  (unsigned long long)w->wfail_at,
				  (unsigned long long)tc_perf_write_offset(w));
	if (event_desc(w, e))
		return -1;
	if (off + feat_bytes(w, 0) <= limit)
		fits = true, best = off;
	for (;;) {
		struct perf_event_header h;
		uint64_t size, aux = 0;

		if (off + sizeof(h) > limit || pread(w->fd, &h, sizeof(h), (off_t)off) !=
		    (ssize_t)sizeof(h) || h.size < sizeof(h))
			break;
		size = h.size;
		if (h.type == TC_PERF_DATA_AUXTRACE &&
		    (h.size < 16 || pread(w->fd, &aux, 8, (off_t)off + 8) != 8))
			break;
		if (off + size + aux > limit)
			break;
		off += size + aux;
		nrec++;
		/* index entries are in file order: those of records kept so far */
		while (nidx < w->nr_index && ((uint64_t *)w->index.p)[2 * nidx] < off)
			nidx++;
		plain = off;
		plain_rec = nrec;
		if (off + feat_bytes(w, nidx) <= limit)
			fits = true, best = off, best_rec = nrec, best_idx = nidx;
	}
	if (!fits) {
		memset(w->present, 0, sizeof(w->present));
		best = plain, best_rec = plain_rec, best_idx = 0;
	}
	w->nr_index = best_idx;
	w->index.n = best_idx * 16;
	if (ftruncate(w->fd, (off_t)best) || lseek(w->fd, (off_t)best, SEEK_SET) < 0)
		return tc_err_sys(e, errno, "%s: truncating after a failed write", w->path);
	w->flushed = w->pos = best;
	w->werr = 0;
	w->nout = 0;
	*data_end = best;
	if (fits && (write_features(w, e) || w->werr)) {
		/* no room after all: the records alone */
		if (ftruncate(w->fd, (off_t)best))
			return tc_err_sys(e, errno, "%s: truncating after a failed write", w->path);
		memset(w->present, 0, sizeof(w->present));
		fits = false;
	}
	snprintf(msg, len, "%s: %s writing at offset 0x%llx: the file keeps its first %llu "
		 "records (%llu of %llu bytes of data, up to the last whole record%s); the rest "
		 "of the recording is lost", w->path, strerror(err),
		 (unsigned long long)w->wfail_at, (unsigned long long)best_rec,
		 (unsigned long long)(best - w->data_off),
		 (unsigned long long)(want > w->data_off ? want - w->data_off : 0),
		 fits ? "" : ", without its feature sections");
	w->werr = err;
	return 0;
}

/* Path is replaced by the finished temporary; an existing one becomes path.old first. A
 * path that is not what it was when the temporary was made had another writer. */
static int commit(struct tc_perf_write *w, struct tc_err *e)
{
	char *old = NULL, *dir, *slash;
	struct stat now;
	bool there = !lstat(w->path, &now);
	int dfd;

	if (asprintf(&old, "%s.old", w->path) < 0)
		return tc_err_set(e, ENOMEM, "out of memory");
	if (there != w->existed ||
	    (there && (now.st_dev != w->at_open.st_dev || now.st_ino != w->at_open.st_ino ||
		       now.st_size != w->at_open.st_size ||
		       now.st_mtim.tv_sec != w->at_open.st_mtim.tv_sec ||
		       now.st_mtim.tv_nsec != w->at_open.st_mtim.tv_nsec)))
		notify("%s %s while this recording was made (another writer to the same file?)%s",
		       w->path, !there ? "was removed" : w->existed ? "was replaced or written" :
		       "was created", there ? "; that file is now the .old one" : "");
	if (there && rename(w->path, old)) {
		tc_err_sys(e, errno, "renaming the existing %s to %s", w->path, old);
		free(old);
		return -1;
	}
	free(old);
	if (rename(w->tmp, w->path))
		return tc_err_sys(e, errno, "renaming %s to %s", w->tmp, w->path);
	free(w->tmp);
	w->tmp = NULL;
	/* the renames themselves on disk */
	if ((dir = strdup(w->path))) {
		slash = strrchr(dir, '/');
		if (slash)
			slash[slash == dir] = '\0';
		dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
		free(dir);
	}
	return 0;
}

int tc_perf_write_close(struct tc_perf_write *w, struct tc_err *e)
{
	uint64_t h[PW_HDR_SIZE / 8] = { 0 }, data_end = 0;
	char kept[512] = "";
	int rc = -1;

	if (start_data(w, e))
		goto fail;
	if (!w->werr) {
		data_end = w->pos;
		if (write_features(w, e))
			goto fail;
	}
	if (w->werr && salvage(w, &data_end, kept, sizeof(kept), e))
		goto fail;
	h[0] = PW_MAGIC;
	h[1] = PW_HDR_SIZE;
	h[2] = TC_PERF_WRITE_ATTR_SIZE + 16;
	h[3] = w->attrs_off;
	h[4] = w->attrs_size;
	h[5] = w->data_off;
	h[6] = data_end - w->data_off;
	/* h[7], h[8]: the event_types section, unused. */
	memcpy(&h[9], w->present, sizeof(w->present));
	/* over the zeros written at open: this takes no new space */
	if (pwrite(w->fd, h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
		tc_err_sys(e, errno, "%s: writing the header", w->path);
		goto fail;
	}
	if (fsync(w->fd) && !kept[0])
		snprintf(kept, sizeof(kept), "%s: fsync: %s (the file may not be whole on disk)",
			 w->path, strerror(errno));
	close(w->fd);
	w->fd = -1;
	if (commit(w, e))
		goto fail;
	rc = 0;
	if (kept[0])
		rc = tc_err_set(e, w->werr ? w->werr : EIO, "%s", kept);
	free_writer(w);
	return rc;
fail:
	tc_perf_write_abort(w);
	return -1;
}
