/* Internals shared by perf_data.c (open, header, attrs), perf_features.c and
 * perf_records.c. Not for use outside these files. */
#ifndef TC_LIB_PERFDATA_PERF_DATA_INT_H
#define TC_LIB_PERFDATA_PERF_DATA_INT_H

#include <string.h>

#include "lib/perfdata/perf_data.h"

#define PD_PIPE_HDR_SIZE 16
#define PD_FILE_HDR_SIZE 104

struct pd_id {
	uint64_t id;
	size_t attr;
};

struct tc_perf_data {
	char *name;
	bool pipe;			/* pipe format: attrs/features come as records */
	bool stream;			/* read sequentially from sfd/sf, else from map */
	/* Whole input in memory (mmap or borrowed). */
	const uint8_t *map;
	size_t map_len;
	bool mapped;
	size_t page;			/* the page size, for releasing mapped pages */
	struct tc_perf_data_behind cursor;	/* pages behind the records read are let go */
	int fd;				/* closed at the end when own_fd */
	bool own_fd;
	/* Stream input. */
	FILE *sf;
	uint64_t spos;			/* bytes consumed so far */
	uint8_t *buf;
	size_t cap;
	/* Records: [data_off, data_off + data_size) in map mode. */
	uint64_t data_off, data_size, pos;
	bool failed, done;
	struct tc_err fail;
	bool cut;			/* the input may end inside the data: not fatal */
	bool eof_inside;		/* a stream ended inside a record */
	struct tc_diag warn;

	struct tc_perf_data_attr *attrs;
	size_t nr_attrs, cap_attrs;
	struct pd_id *ids;
	size_t nr_ids, cap_ids;
	bool ids_sorted;

	struct tc_perf_data_features feat;

	/* Scratch owned by the current record. */
	uint64_t *priv;
	size_t cap_priv;
	struct tc_cs_etm_info cs;
	struct tc_intel_pt_info ipt;
};

static inline uint16_t pd_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t pd_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t pd_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Add an attr from raw bytes (attr then, for file mode, nothing else); ids separately. */
int pd_add_attr(struct tc_perf_data *pd, const uint8_t *p, size_t len, uint64_t off,
		const struct tc_perf_data_attr **out, struct tc_err *e);
int pd_add_ids(struct tc_perf_data *pd, size_t attr, const uint8_t *p, size_t nr, struct tc_err *e);
/* Parse one feature section's bytes; off is its file offset for messages. */
int pd_parse_feature(struct tc_perf_data *pd, unsigned feat, const uint8_t *p, size_t len,
		     uint64_t off, struct tc_err *e);
int pd_add_build_id(struct tc_perf_data *pd, const uint8_t *p, size_t len, uint64_t off,
		    struct tc_err *e);
void pd_features_free(struct tc_perf_data_features *f);
const struct tc_perf_data_attr *pd_attr_by_id(struct tc_perf_data *pd, uint64_t id);

#endif
