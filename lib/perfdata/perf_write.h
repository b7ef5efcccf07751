/* perf.data writer, file mode (PERFILE2): attrs with their ids, a data section of records
 * the caller appends in order, and feature sections written at close. Records that
 * belong to an event get the sample_id trailer the first attr asks for (sample_id_all).
 * Layouts follow tools/perf/util/header.c and the uapi perf_event.h. */
#ifndef TC_LIB_PERFDATA_PERF_WRITE_H
#define TC_LIB_PERFDATA_PERF_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "lib/perfdata/auxtrace_info.h"
#include "lib/util/err.h"

/* attr.size we write: perf 6.1 refuses attrs larger than its own (128 bytes). */
#define TC_PERF_WRITE_ATTR_SIZE 128

struct tc_perf_write;

/* Trailer fields; only those in the attr's sample_type are written. */
struct tc_perf_write_sid {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;		/* ID and IDENTIFIER */
	uint64_t stream_id;
	uint32_t cpu;
};

struct tc_perf_write_mmap2 {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	uint16_t misc;		/* PERF_RECORD_MISC_USER etc. */
	const char *filename;
};

/* One ETMv4 block of CS_ETM info (header version 1). */
struct tc_perf_write_etmv4 {
	uint32_t cpu;
	uint64_t trcconfigr, trctraceidr, trcidr0, trcidr1, trcidr2, trcidr8, trcauthstatus;
};

/* Transactional: the file is written as a temporary beside path (O_EXCL|O_NOFOLLOW) and
 * only close puts it in place. A link at path (even dangling) or a path that is not a
 * regular file is refused. */
int tc_perf_write_open(struct tc_perf_write **out, const char *path, struct tc_err *e);
/* Free everything and remove the temporary: path is left as it was. */
void tc_perf_write_abort(struct tc_perf_write *w);
/* Write the features and the header, fsync, move an existing path to path.old and rename
 * the temporary to path; free (also on error). After a full disk (ENOSPC, EFBIG, EIO,
 * EDQUOT: the writes since were dropped, not failed) the file is still put in place, cut
 * after its last whole record with consistent header sizes, and -1 returned with e naming
 * the file and how much of it was kept. */
int tc_perf_write_close(struct tc_perf_write *w, struct tc_err *e);
/* A full disk stopped the writes: what comes now is dropped (close tells how much). */
bool tc_perf_write_failed(const struct tc_perf_write *w);
/* Process-wide: fn is told, as one sentence, what a writer noticed but is no error (another
 * writer to the same path). cmd/ sets it; NULL: nobody is told. */
void tc_perf_write_set_notify(void (*fn)(void *ctx, const char *msg), void *ctx);

/* Attrs come before the first record; attr->size is forced to TC_PERF_WRITE_ATTR_SIZE. */
int tc_perf_write_add_attr(struct tc_perf_write *w, const struct perf_event_attr *attr,
			   const uint64_t *ids, size_t nr_ids, struct tc_err *e);

/* Name the attr_idx-th attr added (0-based): at close the names go into HEADER_EVENT_DESC
 * with every attr and its ids (perf script names events from there). */
int tc_perf_write_attr_name(struct tc_perf_write *w, size_t attr_idx, const char *name,
			    struct tc_err *e);

/* A whole record as given (header.size must equal len), then extra raw bytes. */
int tc_perf_write_record(struct tc_perf_write *w, const void *rec, size_t len, struct tc_err *e);
/* File offset the next record will get. */
uint64_t tc_perf_write_offset(const struct tc_perf_write *w);

int tc_perf_write_comm(struct tc_perf_write *w, uint32_t pid, uint32_t tid, const char *comm,
		       bool exec, const struct tc_perf_write_sid *sid, struct tc_err *e);
int tc_perf_write_mmap2(struct tc_perf_write *w, const struct tc_perf_write_mmap2 *m,
			const struct tc_perf_write_sid *sid, struct tc_err *e);
/* FORK, or EXIT when exit is true. */
int tc_perf_write_fork(struct tc_perf_write *w, bool exit, uint32_t pid, uint32_t ppid,
		       uint32_t tid, uint32_t ptid, uint64_t time,
		       const struct tc_perf_write_sid *sid, struct tc_err *e);
int tc_perf_write_itrace_start(struct tc_perf_write *w, uint32_t pid, uint32_t tid,
			       const struct tc_perf_write_sid *sid, struct tc_err *e);
int tc_perf_write_aux(struct tc_perf_write *w, uint64_t aux_offset, uint64_t aux_size,
		      uint64_t flags, const struct tc_perf_write_sid *sid, struct tc_err *e);
/* LOST_SAMPLES: lost records of the event sid->id names, by the kernel's count. */
int tc_perf_write_lost_samples(struct tc_perf_write *w, uint64_t lost,
			       const struct tc_perf_write_sid *sid, struct tc_err *e);

/* An AUXTRACE_INFO record of a type (TC_AUXTRACE_*) and its nr priv words, as given: the
 * layout of the words is the PMU's (record writes them through lib/record/record_ops.h). */
int tc_perf_write_auxtrace_info(struct tc_perf_write *w, uint32_t type, const uint64_t *priv,
				size_t nr, struct tc_err *e);
/* The same for the emulated tracers and test tools, from fields (layout: auxtrace_info.h).
 * Intel PT info: priv[TC_IPT_*] words, then the address filter string if any. */
int tc_perf_write_auxtrace_info_intel_pt(struct tc_perf_write *w,
					 const uint64_t priv[TC_IPT_PRIV_MAX], const char *filter,
					 struct tc_err *e);
/* CS_ETM info, header version 1, one ETMv4 block per CPU. */
int tc_perf_write_auxtrace_info_cs_etm(struct tc_perf_write *w, uint32_t pmu_type,
				       uint64_t snapshot, const struct tc_perf_write_etmv4 *cpus,
				       size_t nr_cpus, struct tc_err *e);
/* An AUXTRACE record and its trace, zero-padded to 8 bytes (the padding counts in
 * auxtrace.size, as perf writes it); the record goes into the auxtrace index. */
int tc_perf_write_auxtrace(struct tc_perf_write *w, const void *data, size_t size, uint64_t offset,
		   uint64_t reference, uint32_t idx, uint32_t tid, uint32_t cpu,
		   struct tc_err *e);

/* Features (lib/perfdata/perf_data.h TC_PERF_DATA_FEAT_*). A string feature: hostname, osrelease,
 * version, arch, cpudesc, cpuid. */
int tc_perf_write_feat_string(struct tc_perf_write *w, unsigned feat, const char *s,
			      struct tc_err *e);
/* A feature section's bytes as given (e.g. TC_PERF_DATA_FEAT_TRACING_DATA from trace_data.h). */
int tc_perf_write_feat_raw(struct tc_perf_write *w, unsigned feat, const void *data, size_t len,
		   struct tc_err *e);
int tc_perf_write_feat_nrcpus(struct tc_perf_write *w, uint32_t avail, uint32_t online,
			      struct tc_err *e);
int tc_perf_write_feat_cmdline(struct tc_perf_write *w, int argc, char *const argv[],
			       struct tc_err *e);
/* One build-id entry (size <= 20 bytes of id); misc is PERF_RECORD_MISC_USER or _KERNEL. */
int tc_perf_write_feat_build_id(struct tc_perf_write *w, int32_t pid, uint16_t misc,
				const uint8_t *id, size_t size, const char *filename,
				struct tc_err *e);

#endif
