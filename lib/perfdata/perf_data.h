/* perf.data reader: file mode (PERFILE2 with attr/data/feature sections) and pipe mode
 * (PERFILE2 with a 16-byte header; attrs and features come as records). Everything read
 * from the input is bounds-checked; errors carry the input name and file offset. */
#ifndef TC_LIB_PERFDATA_PERF_DATA_H
#define TC_LIB_PERFDATA_PERF_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/perf_event.h>

#include "lib/perfdata/auxtrace_info.h"
#include "lib/util/diag.h"
#include "lib/util/err.h"
#include "lib/util/strv.h"

/* Record types perf itself writes (user space, >= 64); the kernel's are in perf_event.h. */
enum {
	TC_PERF_DATA_HEADER_ATTR = 64,
	TC_PERF_DATA_HEADER_EVENT_TYPE = 65,
	TC_PERF_DATA_HEADER_TRACING_DATA = 66,	/* followed by tracing_data.size extra bytes */
	TC_PERF_DATA_HEADER_BUILD_ID = 67,
	TC_PERF_DATA_FINISHED_ROUND = 68,
	TC_PERF_DATA_ID_INDEX = 69,
	TC_PERF_DATA_AUXTRACE_INFO = 70,
	TC_PERF_DATA_AUXTRACE = 71,		/* followed by auxtrace.size bytes of trace */
	TC_PERF_DATA_AUXTRACE_ERROR = 72,
	TC_PERF_DATA_THREAD_MAP = 73,
	TC_PERF_DATA_CPU_MAP = 74,
	TC_PERF_DATA_STAT_CONFIG = 75,
	TC_PERF_DATA_STAT = 76,
	TC_PERF_DATA_STAT_ROUND = 77,
	TC_PERF_DATA_EVENT_UPDATE = 78,
	TC_PERF_DATA_TIME_CONV = 79,
	TC_PERF_DATA_HEADER_FEATURE = 80,
	TC_PERF_DATA_COMPRESSED = 81,
	TC_PERF_DATA_FINISHED_INIT = 82,
	TC_PERF_DATA_COMPRESSED2 = 83,	/* perf 6.15+: COMPRESSED with its data 8-byte aligned */
};

/* Feature bits (file header bitmap / HEADER_FEATURE records) that we parse. */
enum {
	TC_PERF_DATA_FEAT_TRACING_DATA = 1,
	TC_PERF_DATA_FEAT_BUILD_ID = 2,
	TC_PERF_DATA_FEAT_HOSTNAME = 3,
	TC_PERF_DATA_FEAT_OSRELEASE = 4,
	TC_PERF_DATA_FEAT_VERSION = 5,
	TC_PERF_DATA_FEAT_ARCH = 6,
	TC_PERF_DATA_FEAT_NRCPUS = 7,
	TC_PERF_DATA_FEAT_CPUDESC = 8,
	TC_PERF_DATA_FEAT_CPUID = 9,
	TC_PERF_DATA_FEAT_CMDLINE = 11,
	TC_PERF_DATA_FEAT_EVENT_DESC = 12,	/* attrs with their names and ids */
	TC_PERF_DATA_FEAT_AUXTRACE = 18,	/* index of AUXTRACE records */
	TC_PERF_DATA_FEAT_BITS = 256,
};

/* CoreSight AUX_OUTPUT_HW_ID payload: [7:0] trace ID; v0.1 adds [39:8] sink ID;
 * [59:56] minor and [63:60] major version (v0.0 used [63:60] as the only version). */
#define TC_CS_HW_ID_TRACE_ID(v)	((unsigned)((v) & 0xff))
#define TC_CS_HW_ID_SINK_ID(v)	((uint32_t)(((v) >> 8) & 0xffffffffu))
#define TC_CS_HW_ID_MINOR(v)	((unsigned)(((v) >> 56) & 0xf))
#define TC_CS_HW_ID_MAJOR(v)	((unsigned)(((v) >> 60) & 0xf))

/* AUX flags: the PMU-specific format byte; for CoreSight 0 = formatted, 1 = raw. */
#define TC_PERF_DATA_AUX_FORMAT(flags)	((unsigned)(((flags) >> 8) & 0xff))

struct tc_perf_data_attr {
	struct perf_event_attr attr;	/* zero-extended copy of the file's attr */
	uint32_t file_attr_size;	/* attr.size as written (0 means 64) */
	uint64_t *ids;
	size_t nr_ids;
	char *name;			/* from the EVENT_DESC feature, NULL without */
};

struct tc_perf_data_build_id {
	int32_t pid;
	uint16_t misc;			/* kernel/user bits */
	uint8_t size;			/* bytes of id[] in use (20 unless the file says) */
	uint8_t id[20];
	char *filename;
};

struct tc_perf_data_auxtrace_index {
	uint64_t offset;		/* file offset of an AUXTRACE record */
	uint64_t size;			/* header.size of that record (0x30), not the trace */
};

struct tc_perf_data_features {
	uint64_t present[TC_PERF_DATA_FEAT_BITS / 64];	/* every bit set in the file */
	struct tc_perf_data_build_id *build_ids;	/* feature and HEADER_BUILD_ID records */
	size_t nr_build_ids;
	struct tc_strv cmdline;
	char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
	bool has_nrcpus;
	uint32_t nr_cpus_avail, nr_cpus_online;
	struct tc_perf_data_auxtrace_index *auxtrace_index;
	size_t nr_auxtrace_index;
	/* Tracing data (event formats; lib/perfdata/tracing_data_read.h reads it): a copy of the feature
	 * section or of the bytes after a pipe's HEADER_TRACING_DATA record. */
	uint8_t *tracing_data;
	size_t tracing_data_len;
	uint64_t tracing_data_off;	/* its input offset, for messages */
};

/* The sample_id trailer of a non-sample record, or the same fields of a sample. */
struct tc_perf_data_sample_id {
	bool has_tid, has_time, has_cpu, has_id;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t id;
};

/* One record. Pointers stay valid until the next tc_perf_data_next() or tc_perf_data_close(),
 * except an AUXTRACE record's data where u.auxtrace.kept says it lasts longer. */
struct tc_perf_data_record {
	uint64_t offset;		/* file (or stream) offset of the header */
	uint32_t type;
	uint16_t misc;
	uint16_t size;			/* header.size */
	const uint8_t *raw;		/* the whole record, size bytes */
	const struct tc_perf_data_attr *attr;	/* the event it belongs to, NULL if unknown */
	struct tc_perf_data_sample_id sid;
	union {
		struct {
			uint32_t pid, tid;
			uint64_t start, len, pgoff;
			/* MMAP2 only: */
			bool has_build_id;
			uint8_t build_id_size, build_id[20];
			uint32_t maj, min;
			uint64_t ino, ino_generation;
			uint32_t prot, flags;
			const char *filename;
		} mmap;			/* MMAP and MMAP2 */
		struct {
			uint32_t pid, tid;
			const char *comm;
			bool exec;
		} comm;
		struct {
			uint32_t pid, ppid, tid, ptid;
			uint64_t time;
		} fork;			/* FORK and EXIT */
		struct {
			bool out, preempt;
			uint32_t next_prev_pid, next_prev_tid;	/* CPU_WIDE only */
		} sw;			/* SWITCH and SWITCH_CPU_WIDE */
		struct {
			uint64_t id, lost;
		} lost;			/* LOST (id 0) and LOST_SAMPLES */
		struct {
			uint64_t aux_offset, aux_size, flags;
			bool truncated, overwrite, partial, collision;
			unsigned format;	/* TC_PERF_DATA_AUX_FORMAT(flags) */
		} aux;
		struct {
			uint64_t hw_id;
		} hw_id;
		struct {
			uint32_t pid, tid;
		} itrace_start;
		struct {
			uint64_t size, offset, reference;
			uint32_t idx, tid, cpu;
			const uint8_t *data;	/* size bytes of trace after the record */
			/* data stays valid until tc_perf_data_close() (file and memory input:
			 * it points into the input), so a decoder may queue the pointer rather
			 * than a copy; false for a stream, whose buffer the next record reuses */
			bool kept;
		} auxtrace;
		struct {
			uint32_t type;
			const uint64_t *priv;	/* aligned copy of the priv words */
			size_t nr_priv;
			const struct tc_cs_etm_info *cs_etm;	/* type 3 */
			const struct tc_intel_pt_info *intel_pt;	/* type 1 */
		} auxtrace_info;
		struct {
			bool has_ip, has_addr, has_period, has_raw;
			uint64_t ip, addr, period;
			const uint8_t *raw;	/* PERF_SAMPLE_RAW: raw_size bytes, unaligned */
			uint32_t raw_size;
		} sample;		/* tid/time/cpu/id are in sid */
		struct {
			const struct tc_perf_data_attr *attr;
		} header_attr;		/* pipe mode: the attr just added */
		struct {
			uint64_t feat;
		} header_feature;	/* pipe mode: parsed into tc_perf_data_features() */
		struct {
			uint32_t size;	/* bytes after the record (also kept in features) */
		} tracing_data;
	} u;
};

struct tc_perf_data;

/* Open a path; the format (file or pipe) comes from the header. "-" reads stdin. */
int tc_perf_data_open(struct tc_perf_data **out, const char *path, struct tc_err *e);
/* Read from fd (not closed by tc_perf_data_close). File mode needs a regular file. */
int tc_perf_data_open_fd(struct tc_perf_data **out, int fd, const char *name, struct tc_err *e);
/* Pipe-mode stream from a FILE* (not closed by tc_perf_data_close). */
int tc_perf_data_open_stream(struct tc_perf_data **out, FILE *f, const char *name,
			     struct tc_err *e);
/* Borrow len bytes of memory (either mode); buf must outlive the reader. */
int tc_perf_data_open_mem(struct tc_perf_data **out, const void *buf, size_t len, const char *name,
		   struct tc_err *e);
void tc_perf_data_close(struct tc_perf_data *pd);

/* Next record: 1 and *rec filled, 0 at the end, -1 on error (the reader then stays at
 * the error; further calls return -1). */
int tc_perf_data_next(struct tc_perf_data *pd, struct tc_perf_data_record *rec, struct tc_err *e);

bool tc_perf_data_is_pipe(const struct tc_perf_data *pd);
const char *tc_perf_data_name(const struct tc_perf_data *pd);
/* File mode: the data section; pipe mode: 0 and the bytes read so far. */
uint64_t tc_perf_data_data_offset(const struct tc_perf_data *pd);
uint64_t tc_perf_data_data_size(const struct tc_perf_data *pd);
size_t tc_perf_data_nr_attrs(const struct tc_perf_data *pd);
const struct tc_perf_data_attr *tc_perf_data_attr(const struct tc_perf_data *pd, size_t i);
/* Pipe mode fills this as HEADER_FEATURE records arrive. */
const struct tc_perf_data_features *tc_perf_data_features(const struct tc_perf_data *pd);
bool tc_perf_data_has_feature(const struct tc_perf_data *pd, unsigned feat);
/* What the reader stepped over rather than give up, as perf does: a feature section it
 * could not use (left out), a file or stream that ends inside its data (the records before
 * are read). One line each, naming the file; empty if none. */
const struct tc_diag *tc_perf_data_warnings(const struct tc_perf_data *pd);

/* Bounded memory. A file is mapped whole, but only the pages in use need stay in memory:
 * those of the records being read and of the trace being decoded. The reader lets go of the
 * pages behind its own cursor as it reads; a decoder that keeps AUXTRACE data (u.auxtrace.kept)
 * lets go of the trace it has decoded with tc_perf_data_release() or, as it goes forward
 * through one buffer, tc_perf_data_behind(). Letting go never changes what a pointer reads:
 * the mapping is private and read-only, so a page let go of is read again from the file if
 * touched (madvise MADV_DONTNEED). Memory input and streams have nothing to let go of: no-op.
 *
 * Release the input bytes at file offsets [off, off + len), rounded out to whole pages (a
 * neighbour's page comes back on its next touch). It only reads pd: decoders working in
 * threads may call it at once, each with its own struct tc_perf_data_behind. */
void tc_perf_data_release(const struct tc_perf_data *pd, uint64_t off, uint64_t len);

/* How far a forward-going consumer may run ahead of what it let go of: about twice this
 * stays in memory for it, plus what its decoder reads ahead. */
#define TC_PERF_DATA_WINDOW (4u << 20)

/* A consumer's position in the input: bytes before from are let go of. */
struct tc_perf_data_behind {
	uint64_t from;
	uint64_t window;	/* TC_PERF_DATA_WINDOW unless set (tests use a small one) */
};

void tc_perf_data_behind_slow(const struct tc_perf_data *pd, struct tc_perf_data_behind *b,
			      uint64_t at);

/* The consumer is at file offset at (going forward from b->from, which the caller sets
 * where it begins): once it is two windows past from, the input up to a window behind at
 * is released. Cheap enough to call for every record decoded. */
static inline void tc_perf_data_behind(const struct tc_perf_data *pd,
				       struct tc_perf_data_behind *b, uint64_t at)
{
	uint64_t w = b->window ? b->window : TC_PERF_DATA_WINDOW;

	if (at >= b->from && at - b->from >= 2 * w)
		tc_perf_data_behind_slow(pd, b, at);
}

/* The window the reader keeps behind its cursor (TC_PERF_DATA_WINDOW unless set; tests set
 * a page or two to let go of nearly everything). */
void tc_perf_data_set_window(struct tc_perf_data *pd, uint64_t bytes);

/* "MMAP2", "AUXTRACE", ... or NULL for a type we have no name for. */
const char *tc_perf_data_type_name(uint32_t type);

#endif
