/* Snapshot decode; see cs_snapshot.h. */
#include "decoders/coresight/cs_snapshot.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util/diag.h"

/* ---- configuration ---- */

/* Architecture and profile of a core type= as OpenCSD's core name map gives them. */
struct core_ap {
	const char *name;
	enum tc_etm_arch arch;
	enum tc_etm_profile prof;
};

static const struct core_ap core_map[] = {
	{ "Cortex-A77", TC_ETM_ARCH_V8R3, TC_ETM_PROFILE_A },
	{ "Cortex-A76", TC_ETM_ARCH_V8R3, TC_ETM_PROFILE_A },
	{ "Cortex-A75", TC_ETM_ARCH_V8R3, TC_ETM_PROFILE_A },
	{ "Cortex-A73", TC_ETM_ARCH_V8, TC_ETM_PROFILE_A },
	{ "Cortex-A72", TC_ETM_ARCH_V8, TC_ETM_PROFILE_A },
	{ "Cortex-A65", TC_ETM_ARCH_V8R3, TC_ETM_PROFILE_A },
	{ "Cortex-A57", TC_ETM_ARCH_V8, TC_ETM_PROFILE_A },
	{ "Cortex-A55", TC_ETM_ARCH_V8R3, TC_ETM_PROFILE_A },
	{ "Cortex-A53", TC_ETM_ARCH_V8, TC_ETM_PROFILE_A },
	{ "Cortex-A35", TC_ETM_ARCH_V8, TC_ETM_PROFILE_A },
	{ "Cortex-A32", TC_ETM_ARCH_V8, TC_ETM_PROFILE_A },
	{ "Cortex-A17", TC_ETM_ARCH_V7, TC_ETM_PROFILE_A },
	{ "Cortex-A15", TC_ETM_ARCH_V7, TC_ETM_PROFILE_A },
	{ "Cortex-A12", TC_ETM_ARCH_V7, TC_ETM_PROFILE_A },
	{ "Cortex-A9", TC_ETM_ARCH_V7, TC_ETM_PROFILE_A },
	{ "Cortex-A8", TC_ETM_ARCH_V7, TC_ETM_PROFILE_A },
	{ "Cortex-A7", TC_ETM_ARCH_V7, TC_ETM_PROFILE_A },
	{ "Cortex-A5", TC_ETM_ARCH_V7, TC_ETM_PROFILE_A },
	{ "Cortex-R52", TC_ETM_ARCH_V8, TC_ETM_PROFILE_R },
	{ "Cortex-R8", TC_ETM_ARCH_V7, TC_ETM_PROFILE_R },
	{ "Cortex-R7", TC_ETM_ARCH_V7, TC_ETM_PROFILE_R },
	{ "Cortex-R5", TC_ETM_ARCH_V7, TC_ETM_PROFILE_R },
	{ "Cortex-R4", TC_ETM_ARCH_V7, TC_ETM_PROFILE_R },
	{ "Cortex-M33", TC_ETM_ARCH_V8, TC_ETM_PROFILE_M },
	{ "Cortex-M23", TC_ETM_ARCH_V8, TC_ETM_PROFILE_M },
	{ "Cortex-M0", TC_ETM_ARCH_V7, TC_ETM_PROFILE_M },
	{ "Cortex-M0+", TC_ETM_ARCH_V7, TC_ETM_PROFILE_M },
	{ "Cortex-M3", TC_ETM_ARCH_V7, TC_ETM_PROFILE_M },
	{ "Cortex-M4", TC_ETM_ARCH_V7, TC_ETM_PROFILE_M },
};

/* Known core names, then the generic "ARMv7-A" / "ARMv8.3-R" / "ARM-AA64" forms. */
static int core_arch(const char *type, enum tc_etm_arch *arch, enum tc_etm_profile *prof)
{
	const char *dash;

	for (size_t i = 0; i < sizeof(core_map) / sizeof(core_map[0]); i++)
		if (!strcmp(type, core_map[i].name)) {
			*arch = core_map[i].arch;
			*prof = core_map[i].prof;
			return 0;
		}
	if (strcasestr(type, "aa64")) {
		*arch = TC_ETM_ARCH_AA64;
		*prof = TC_ETM_PROFILE_A;
		return 0;
	}
	if (strncmp(type, "ARMv", 4) || !(dash = strchr(type, '-')))
		return -1;
	if (type[4] == '7')
		*arch = TC_ETM_ARCH_V7;
	else if (type[4] == '8')
		*arch = !strncmp(type + 4, "8.3", 3) ? TC_ETM_ARCH_V8R3 : TC_ETM_ARCH_V8;
	else
		return -1;
	switch (dash[1]) {
	case 'A': *prof = TC_ETM_PROFILE_A; return 0;
	case 'R': *prof = TC_ETM_PROFILE_R; return 0;
	case 'M': *prof = TC_ETM_PROFILE_M; return 0;
	}
	return -1;
}

static uint32_t reg(const struct tc_snapshot_device *d, const char *name, uint32_t dflt)
{
	uint64_t v;

	return tc_snapshot_reg(d, name, &v) ? dflt : (uint32_t)v;
}

/* cpu_3, Cortex-A15_1: the number after the last '_'. */
static int cpu_number(const char *core)
{
	const char *u = strrchr(core, '_');

	if (!u || !isdigit((unsigned char)u[1]))
		return -1;
	return atoi(u + 1);
}

static int proto_of(const char *type, enum tc_etm_proto *p)
{
	if (!strncasecmp(type, "ETM4", 4) || !strncasecmp(type, "ETMv4", 5))
		*p = TC_ETM_PROTO_ETMV4;
	else if (!strncasecmp(type, "ETE", 3))
		*p = TC_ETM_PROTO_ETE;
	else if (!strncasecmp(type, "ETM3", 4) || !strncasecmp(type, "ETMv3", 5))
		*p = TC_ETM_PROTO_ETMV3;
	else if (!strncasecmp(type, "PTM", 3) || !strncasecmp(type, "PFT", 3))
		*p = TC_ETM_PROTO_PTM;
	else if (!strncasecmp(type, "STM", 3))
		*p = TC_ETM_PROTO_STM;
	else
		return -1;
	return 0;
}

int tc_cs_snapshot_cfg(const struct tc_snapshot *ss, const struct tc_snapshot_device *src,
		 struct tc_etm_cfg *cfg, struct tc_err *e)
{
	const struct tc_snapshot_device *core = tc_snapshot_core_of(ss, src->name);

	*cfg = (struct tc_etm_cfg){ .cpu = -1 };
	if (proto_of(src->type, &cfg->proto))
		return tc_err_set(e, 0, "%s: trace source type '%s' cannot be decoded", src->name,
				  src->type);
	if (cfg->proto == TC_ETM_PROTO_STM) {
		/* The reset values OpenCSD assumes where a snapshot leaves them out. */
		cfg->stmtcsr = reg(src, "STMTCSR", 0);
		cfg->stmfeat1r = reg(src, "STMFEAT1R", 0);
		cfg->stmfeat3r = reg(src, "STMFEAT3R", 0x10000);
		cfg->stmdevid = reg(src, "STMDEVID", 0xff);
		cfg->trace_id = (cfg->stmtcsr >> 16) & 0x7f;
		return 0;
	}
	if (!core)
		return tc_err_set(e, 0, "%s: no core in [core_trace_sources] for this %s source",
				  src->name, src->type);
	if (core_arch(core->type, &cfg->arch, &cfg->profile))
		return tc_err_set(e, 0, "%s: unknown core type '%s' of %s", core->name, core->type,
				  src->name);
	cfg->cpu = cpu_number(core->name);
	switch (cfg->proto) {
	case TC_ETM_PROTO_ETMV3:
	case TC_ETM_PROTO_PTM:
		cfg->etmcr = reg(src, "ETMCR", 0);
		cfg->etmidr = reg(src, "ETMIDR", 0);
		cfg->etmccer = reg(src, "ETMCCER", 0);
		cfg->etmtraceidr = reg(src, "ETMTRACEIDR", 0);
		cfg->trace_id = cfg->etmtraceidr & 0x7f;
		break;
	default:
		cfg->trcidr0 = reg(src, "TRCIDR0", 0);
		cfg->trcidr1 = reg(src, "TRCIDR1", 0);
		cfg->trcidr2 = reg(src, "TRCIDR2", 0);
		cfg->trcidr8 = reg(src, "TRCIDR8", 0);
		cfg->trcidr9 = reg(src, "TRCIDR9", 0);
		cfg->trcidr10 = reg(src, "TRCIDR10", 0);
		cfg->trcidr11 = reg(src, "TRCIDR11", 0);
		cfg->trcidr12 = reg(src, "TRCIDR12", 0);
		cfg->trcidr13 = reg(src, "TRCIDR13", 0);
		cfg->trcconfigr = reg(src, "TRCCONFIGR", 0);
		cfg->trctraceidr = reg(src, "TRCTRACEIDR", 0);
		cfg->trcdevarch = reg(src, "TRCDEVARCH", 0);
		cfg->trace_id = cfg->trctraceidr & 0x7f;
		break;
	}
	return 0;
}

/* ---- memory ---- */

struct region {
	uint64_t start, len;
	const uint8_t *p;
	void *map;
	size_t map_len;
	const char *path;		/* the snapshot's, for messages */
	uint64_t hits;			/* reads it answered */
};

struct tc_cs_snapshot_mem {
	struct region *r;
	size_t n;
	uint64_t misses, first_miss;	/* reads no dump answered */
};

/* Memory dumps are mapped, not read: the cap only keeps the address space sane. */
#define DUMP_MAX	(1ull << 36)
#define BUFFER_MAX	(1ull << 32)	/* trace buffers are read into memory */

static int map_dump(struct tc_cs_snapshot_mem *m, const struct tc_snapshot *ss,
		    const struct tc_snapshot_dump *d, struct tc_diag *notes)
{
	struct stat st;
	struct tc_err e;
	int fd = tc_snapshot_open_file(ss->dir, d->path, DUMP_MAX, &e);
	void *p;
	struct region *r;
	uint64_t len = d->length;

	if (fd < 0 && !e.errnum) {	/* refused, not missing: the message says why */
		tc_diag_add(notes, "memory dump left out: %s", e.msg);
		return 0;
	}
	if (fd < 0 || fstat(fd, &st)) {
		tc_diag_add(notes, "%s: memory dump left out: %s", d->path,
			    strerror(fd < 0 ? e.errnum : errno));
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if ((uint64_t)st.st_size <= d->offset || !len) {
		close(fd);
		tc_diag_add(notes, "%s: memory dump left out: nothing at offset %llu", d->path,
			    (unsigned long long)d->offset);
		return 0;
	}
	if (len > (uint64_t)st.st_size - d->offset)
		len = (uint64_t)st.st_size - d->offset;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		tc_diag_add(notes, "%s: memory dump left out: %s", d->path, strerror(errno));
		return 0;
	}
	r = realloc(m->r, (m->n + 1) * sizeof(*r));
	if (!r) {
		munmap(p, (size_t)st.st_size);
		return -1;
	}
	m->r = r;
	m->r[m->n++] = (struct region){ .start = d->address, .len = len,
					.p = (const uint8_t *)p + d->offset, .map = p,
					.map_len = (size_t)st.st_size, .path = d->path };
	return 0;
}

struct tc_cs_snapshot_mem *tc_cs_snapshot_mem_open(const struct tc_snapshot *ss,
						   struct tc_diag *notes, struct tc_err *e)
{
	struct tc_cs_snapshot_mem *m = calloc(1, sizeof(*m));

	if (!m)
		goto nomem;
	for (size_t i = 0; i < ss->ndevs; i++)
		for (size_t k = 0; k < ss->devs[i].ndumps; k++)
			if (map_dump(m, ss, &ss->devs[i].dumps[k], notes))
				goto nomem;
	return m;
nomem:
	tc_cs_snapshot_mem_free(m);
	tc_err_sys(e, ENOMEM, "%s: memory dumps", ss->dir);
	return NULL;
}

void tc_cs_snapshot_mem_free(struct tc_cs_snapshot_mem *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		munmap(m->r[i].map, m->r[i].map_len);
	free(m->r);
	free(m);
}

static size_t copy_from(const struct region *r, uint64_t addr, uint8_t *buf, size_t len)
{
	uint64_t avail = r->len - (addr - r->start);

	if (len > avail)
		len = (size_t)avail;
	memcpy(buf, r->p + (addr - r->start), len);
	return len;
}

static int holds(const struct region *r, uint64_t addr)
{
	return addr >= r->start && addr - r->start < r->len;
}

size_t tc_cs_snapshot_mem_read(void *ctx, const struct tc_etm_mem_ctx *mc, uint64_t addr,
			       uint8_t *buf, size_t len)
{
	struct tc_cs_snapshot_mem *m = ctx;

	(void)mc;
	/* The first dump that holds addr (a handful of dumps: a scan is enough). */
	for (size_t i = 0; i < m->n; i++)
		if (holds(&m->r[i], addr)) {
			m->r[i].hits++;
			return copy_from(&m->r[i], addr, buf, len);
		}
	if (!m->misses++)
		m->first_miss = addr;
	return 0;
}

/* A dump at a wrong address answers nothing while the decoder finds no code: name it. Dumps
 * of the same bytes at the same address (one per core) are one. */
void tc_cs_snapshot_mem_diag(const struct tc_cs_snapshot_mem *m, struct tc_diag *notes)
{
	if (!m || !m->misses)
		return;
	for (size_t i = 0; i < m->n; i++) {
		const struct region *r = &m->r[i];
		bool used = false, dup = false;

		for (size_t k = 0; k < m->n; k++)
			if (m->r[k].start == r->start && m->r[k].len == r->len &&
			    !strcmp(m->r[k].path, r->path)) {
				used |= m->r[k].hits > 0;
				dup |= k < i;
			}
		if (!used && !dup)
			tc_diag_add(notes, "memory dump %s at 0x%" PRIx64 ": no traced code was "
				    "found in it (%" PRIu64 " reads found no dump, the first at "
				    "0x%" PRIx64 ")", r->path, r->start, m->misses,
				    m->first_miss);
	}
}

/* ---- driver ---- */

#define DSTREAM_BLOCK	512	/* DSTREAM files: 504 trace bytes then an 8-byte footer */
#define DSTREAM_FOOTER	8

static uint8_t *load(const char *dir, const char *path, size_t *len, int dstream,
		     struct tc_err *e)
{
	int fd = tc_snapshot_open_file(dir, path, BUFFER_MAX, e);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "rb");
	uint8_t *b = NULL;
	struct stat st;

	if (!f) {
		if (fd >= 0) {
			tc_err_sys(e, errno, "%s: cannot open the trace buffer", path);
			close(fd);
		}
		return NULL;
	}
	if (fstat(fileno(f), &st) || !(b = malloc(st.st_size ? (size_t)st.st_size : 1)) ||
	    fread(b, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		tc_err_sys(e, errno ? errno : EIO, "%s: cannot read the trace buffer", path);
		free(b);
		fclose(f);
		return NULL;
	}
	fclose(f);
	*len = (size_t)st.st_size;
	if (dstream) {
		/* OpenCSD indexes the trace bytes only, so the footers go before anything. */
		size_t o = 0;

		for (size_t i = 0; i < *len; i += DSTREAM_BLOCK) {
			size_t k = *len - i;

			if (k > DSTREAM_BLOCK - DSTREAM_FOOTER)
				k = DSTREAM_BLOCK - DSTREAM_FOOTER;
			memmove(b + o, b + i, k);
			o += k;
		}
		*len = o;
	}
	return b;
}

/* The session has one context for records and memory; this joins the caller's and ours. */
struct joint {
	struct tc_cs_snapshot_run *run;
	struct tc_cs_snapshot_mem *mem;
};

static void joint_emit(void *ctx, const struct tc_rec *r)
{
	struct joint *j = ctx;

	j->run->emit(j->run->emit_ctx, r);
}

static size_t joint_mem(void *ctx, const struct tc_etm_mem_ctx *mc, uint64_t addr, uint8_t *buf,
			size_t len)
{
	return tc_cs_snapshot_mem_read(((struct joint *)ctx)->mem, mc, addr, buf, len);
}

static int format_of(const struct tc_snapshot *ss, const struct tc_snapshot_buffer *buf,
		     enum tc_cs_session_format *fmt, struct tc_err *e)
{
	if (!strcmp(buf->format, "coresight"))
		*fmt = TC_CS_SESSION_FRAMED;
	else if (!strcmp(buf->format, "dstream_coresight"))
		*fmt = TC_CS_SESSION_TPIU;
	else if (!strcmp(buf->format, "source_data"))
		*fmt = TC_CS_SESSION_RAW;
	else
		return tc_err_set(e, 0, "%s: buffer %s: unknown format '%s'", ss->dir, buf->name,
				  buf->format);
	return 0;
}

/* A decoder for every source of the buffer that can have one (and is wanted). */
static int add_sources(const struct tc_snapshot *ss, struct tc_cs_snapshot_run *run,
		       const struct tc_snapshot_buffer *buf, struct tc_cs_session *css,
		       struct tc_err *e)
{
	for (size_t i = 0; i < buf->nsources; i++) {
		const struct tc_snapshot_device *src = tc_snapshot_device(ss, buf->sources[i]);
		struct tc_etm_cfg cfg;
		struct tc_err ce;

		if (!src) {
			tc_diag_add(&run->notes, "%s: source %s of buffer %s has no device ini",
				    ss->dir, buf->sources[i], buf->name);
			continue;
		}
		if (tc_cs_snapshot_cfg(ss, src, &cfg, &ce)) {
			tc_diag_add(&run->notes, "%s", ce.msg);
			continue;
		}
		if (run->want_id && !run->want_id[cfg.trace_id & 0x7f])
			continue;
		if (tc_cs_session_add_source(css, &cfg, &ce)) {
			tc_diag_add(&run->notes, "%s: %s", src->name, ce.msg);
			continue;
		}
		run->sources++;
	}
	if (!run->sources && !run->want_id)
		return tc_err_set(e, 0, "%s: buffer %s: no trace source that can be decoded",
				  ss->dir, buf->name);
	return 0;
}

/* Trace of an ID no source claims (an ini with a wrong trace ID) would vanish unsaid: one
 * note, the IDs with the most bytes first (a sink's garbage scatters over many IDs). */
static void unclaimed_ids(struct tc_cs_snapshot_run *run, const struct tc_snapshot_buffer *buf,
			  const struct tc_cs_session *css)
{
	uint64_t bytes[128] = { 0 }, total = 0;
	unsigned nids = 0, shown = 0;
	char list[160] = "";
	size_t o = 0;

	for (unsigned id = 1; id < 128; id++) {
		uint64_t n = tc_cs_session_id_bytes(css, (uint8_t)id);

		if (n && !tc_cs_session_stats(css, (uint8_t)id) &&
		    (!run->want_id || run->want_id[id])) {
			bytes[id] = n;
			total += n;
			nids++;
		}
	}
	while (shown < 4 && shown < nids) {
		unsigned best = 0;

		for (unsigned id = 1; id < 128; id++)
			if (bytes[id] > bytes[best])
				best = id;
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s0x%02x (%" PRIu64 ")",
				      shown ? ", " : "", best, bytes[best]);
		bytes[best] = 0;
		shown++;
	}
	if (nids)
		tc_diag_add(&run->notes, "%" PRIu64 " bytes of trace ID%s %s%s, which no source of "
			    "buffer %s uses: not decoded", total, nids > 1 ? "s" : "", list,
			    nids > shown ? ", ..." : "", buf->name);
}

int tc_cs_snapshot_decode(const struct tc_snapshot *ss, struct tc_cs_snapshot_run *run,
			  struct tc_err *e)
{
	const struct tc_snapshot_buffer *buf = run->buffer ? tc_snapshot_buffer(ss, run->buffer)
			       : ss->nbufs ? &ss->bufs[0] : NULL;
	struct joint j = { .run = run };
	struct tc_cs_session *css = NULL;
	enum tc_cs_session_format fmt = TC_CS_SESSION_RAW;
	uint8_t *data = NULL;
	size_t len = 0;
	int rc = -1;

	run->buf = buf;
	if (!buf)
		return tc_err_set(e, 0, "%s: no trace buffer %s%s%s", ss->dir,
				  run->buffer ? "named '" : "", run->buffer ? run->buffer : "",
				  run->buffer ? "'" : "");
	if (format_of(ss, buf, &fmt, e))
		return -1;
	if (!(j.mem = tc_cs_snapshot_mem_open(ss, &run->notes, e)))
		return -1;
	if (!(data = load(ss->dir, buf->path, &len, fmt == TC_CS_SESSION_TPIU, e)) ||
	    !(css = tc_cs_session_new(run->what, joint_emit, joint_mem, &j, e)) ||
	    add_sources(ss, run, buf, css, e))
		goto out;
	tc_cs_session_feed(css, data, len, 0, fmt);
	tc_cs_session_flush(css);
	for (int id = 0; id < 128; id++) {
		const struct tc_etm_ocsd_stats *st = tc_cs_session_stats(css, (uint8_t)id);

		if (!st)
			continue;
		run->errors += st->errors;
		run->packets += st->packets;
		run->ranges += st->ranges;
		run->insns += st->insns;
	}
	unclaimed_ids(run, buf, css);
	tc_cs_session_demux_diag(css, &run->notes);
	tc_cs_session_guard_diag(css, &run->notes);
	tc_cs_snapshot_mem_diag(j.mem, &run->notes);
	rc = 0;
out:
	tc_cs_session_free(css);
	tc_cs_snapshot_mem_free(j.mem);
	free(data);
	return rc;
}
