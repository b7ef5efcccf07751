/* perf.data feature sections (file mode) and HEADER_FEATURE payloads (pipe mode). */
#include "lib/perfdata/perf_data_int.h"

#include <errno.h>
#include <stdlib.h>

#define BUILD_ID_EVENT_MIN 36	/* header, pid, 24 bytes of id; the filename follows */
#define MISC_BUILD_ID_SIZE (1 << 15)

/* A perf "string": u32 length, then that many bytes (NUL-padded). */
static int get_string(struct tc_perf_data *pd, const uint8_t *p, size_t len, size_t *at,
		      uint64_t off, char **out, struct tc_err *e)
{
	uint32_t n;

	if (len - *at < 4 || len - *at - 4 < (n = pd_u32(p + *at)))
		return tc_err_set(e, EINVAL, "%s: string at offset 0x%llx runs past the end of "
				  "its section", pd->name, (unsigned long long)(off + *at));
	*out = strndup((const char *)p + *at + 4, n);
	if (!*out)
		return tc_err_set(e, ENOMEM, "out of memory for a feature string");
	*at += 4 + n;
	return 0;
}

int pd_add_build_id(struct tc_perf_data *pd, const uint8_t *p, size_t len, uint64_t off,
		    struct tc_err *e)
{
	struct tc_perf_data_features *f = &pd->feat;
	struct tc_perf_data_build_id *b;
	uint16_t misc = pd_u16(p + 4);

	if (len < BUILD_ID_EVENT_MIN)
		return tc_err_set(e, EINVAL, "%s: build-id entry at offset 0x%llx has size %zu, "
				  "less than %d", pd->name, (unsigned long long)off, len,
				  BUILD_ID_EVENT_MIN);
	b = realloc(f->build_ids, (f->nr_build_ids + 1) * sizeof(*b));
	if (!b)
		return tc_err_set(e, ENOMEM, "out of memory for build ids");
	f->build_ids = b;
	b = &f->build_ids[f->nr_build_ids];
	memset(b, 0, sizeof(*b));
	b->pid = (int32_t)pd_u32(p + 8);
	b->misc = misc;
	memcpy(b->id, p + 12, sizeof(b->id));
	/* Newer perf stores the id length after the 20 bytes; older ids are always 20. */
	b->size = (misc & MISC_BUILD_ID_SIZE) && p[32] <= 20 ? p[32] : 20;
	b->filename = strndup((const char *)p + BUILD_ID_EVENT_MIN, len - BUILD_ID_EVENT_MIN);
	if (!b->filename)
		return tc_err_set(e, ENOMEM, "out of memory for build ids");
	f->nr_build_ids++;
	return 0;
}

static int parse_build_ids(struct tc_perf_data *pd, const uint8_t *p, size_t len, uint64_t off,
			   struct tc_err *e)
{
	size_t at = 0;

	while (at < len) {
		uint16_t sz;

		if (len - at < 8)
			return tc_err_set(e, EINVAL, "%s: build-id entry at offset 0x%llx is "
					  "truncated", pd->name, (unsigned long long)(off + at));
		sz = pd_u16(p + at + 6);
		/* A zero size would never advance. */
		if (sz < BUILD_ID_EVENT_MIN || sz > len - at)
			return tc_err_set(e, EINVAL, "%s: build-id entry at offset 0x%llx has size "
					  "0x%x, outside 0x%x..0x%zx", pd->name,
					  (unsigned long long)(off + at), sz, BUILD_ID_EVENT_MIN,
					  len - at);
		if (pd_add_build_id(pd, p + at, sz, off + at, e))
			return -1;
		at += sz;
	}
	return 0;
}

static int parse_cmdline(struct tc_perf_data *pd, const uint8_t *p, size_t len, uint64_t off,
			 struct tc_err *e)
{
	size_t at = 4;
	uint32_t nr;

	if (len < 4)
		return tc_err_set(e, EINVAL, "%s: cmdline section at offset 0x%llx is truncated",
				  pd->name, (unsigned long long)off);
	nr = pd_u32(p);
	for (uint32_t i = 0; i < nr; i++) {
		char *s;
		int r;

		if (get_string(pd, p, len, &at, off, &s, e))
			return -1;
		r = tc_strv_push(&pd->feat.cmdline, s);
		free(s);
		if (r)
			return tc_err_set(e, ENOMEM, "out of memory for the cmdline");
	}
	return 0;
}

/* EVENT_DESC: u32 events, u32 attr size, then per event the attr, u32 ids, a perf string
 * (the name), the ids. Names go to the attrs that own the ids. */
static int parse_event_desc(struct tc_perf_data *pd, const uint8_t *p, size_t len,
			    uint64_t off, struct tc_err *e)
{
	size_t at = 8;
	uint32_t nr, sz;

	if (len < 8)
		return tc_err_set(e, EINVAL, "%s: event_desc section at offset 0x%llx is "
				  "truncated", pd->name, (unsigned long long)off);
	nr = pd_u32(p);
	sz = pd_u32(p + 4);
	for (uint32_t i = 0; i < nr; i++) {
		const struct tc_perf_data_attr *a;
		uint32_t nids;
		char *name;

		if (len - at < sz || len - at - sz < 4)
			return tc_err_set(e, EINVAL, "%s: event_desc entry %u at offset 0x%llx "
					  "runs past the end of its section", pd->name, i,
					  (unsigned long long)(off + at));
		at += sz;
		nids = pd_u32(p + at);
		at += 4;
		if (get_string(pd, p, len, &at, off, &name, e))
			return -1;
		if ((len - at) / 8 < nids) {
			free(name);
			return tc_err_set(e, EINVAL, "%s: event_desc entry %u at offset 0x%llx has "
					  "%u ids, more than its section holds", pd->name, i,
					  (unsigned long long)(off + at), nids);
		}
		a = nids ? pd_attr_by_id(pd, pd_u64(p + at)) : NULL;
		at += 8 * (size_t)nids;
		if (!a) {
			free(name);
			continue;
		}
		free(pd->attrs[a - pd->attrs].name);
		pd->attrs[a - pd->attrs].name = name;
	}
	return 0;
}

static int parse_auxtrace_index(struct tc_perf_data *pd, const uint8_t *p, size_t len,
				uint64_t off, struct tc_err *e)
{
	struct tc_perf_data_features *f = &pd->feat;
	struct tc_perf_data_auxtrace_index *x;
	uint64_t nr;

	/* perf writes a u64 count before the {offset, size} pairs; simpleperf writes the
	 * pairs alone. The length tells them apart. */
	if (len % 16 == 8 && (nr = pd_u64(p)) == (len - 8) / 16) {
		p += 8;
	} else if (len % 16 == 0) {
		nr = len / 16;
	} else {
		return tc_err_set(e, EINVAL, "%s: auxtrace index at offset 0x%llx has 0x%zx "
				  "bytes, not a count and whole entries", pd->name,
				  (unsigned long long)off, len);
	}
	if (!nr)
		return 0;
	x = realloc(f->auxtrace_index, (f->nr_auxtrace_index + nr) * sizeof(*x));
	if (!x)
		return tc_err_set(e, ENOMEM, "out of memory for the auxtrace index");
	f->auxtrace_index = x;
	for (uint64_t i = 0; i < nr; i++) {
		x[f->nr_auxtrace_index].offset = pd_u64(p + 16 * i);
		x[f->nr_auxtrace_index++].size = pd_u64(p + 8 + 16 * i);
	}
	return 0;
}

int pd_parse_feature(struct tc_perf_data *pd, unsigned feat, const uint8_t *p, size_t len,
		     uint64_t off, struct tc_err *e)
{
	struct tc_perf_data_features *f = &pd->feat;
	char **str = NULL;
	size_t at = 0;

	if (feat < TC_PERF_DATA_FEAT_BITS)
		f->present[feat / 64] |= 1ULL << (feat % 64);
	switch (feat) {
	case TC_PERF_DATA_FEAT_BUILD_ID:
		return parse_build_ids(pd, p, len, off, e);
	case TC_PERF_DATA_FEAT_CMDLINE:
		return parse_cmdline(pd, p, len, off, e);
	case TC_PERF_DATA_FEAT_AUXTRACE:
		return parse_auxtrace_index(pd, p, len, off, e);
	case TC_PERF_DATA_FEAT_EVENT_DESC:
		return parse_event_desc(pd, p, len, off, e);
	case TC_PERF_DATA_FEAT_TRACING_DATA:
		/* Kept whole: lib/perfdata/tracing_data_read.c reads it (a stream's buffer is reused). */
		free(f->tracing_data);
		f->tracing_data_len = 0;
		if (!(f->tracing_data = malloc(len ? len : 1)))
			return tc_err_set(e, ENOMEM, "out of memory for the tracing data");
		memcpy(f->tracing_data, p, len);
		f->tracing_data_len = len;
		f->tracing_data_off = off;
		return 0;
	case TC_PERF_DATA_FEAT_NRCPUS:
		if (len < 8)
			return tc_err_set(e, EINVAL, "%s: nrcpus section at offset 0x%llx is "
					  "truncated", pd->name, (unsigned long long)off);
		f->has_nrcpus = true;
		f->nr_cpus_avail = pd_u32(p);
		f->nr_cpus_online = pd_u32(p + 4);
		return 0;
	case TC_PERF_DATA_FEAT_HOSTNAME: str = &f->hostname; break;
	case TC_PERF_DATA_FEAT_OSRELEASE: str = &f->osrelease; break;
	case TC_PERF_DATA_FEAT_VERSION: str = &f->version; break;
	case TC_PERF_DATA_FEAT_ARCH: str = &f->arch; break;
	case TC_PERF_DATA_FEAT_CPUDESC: str = &f->cpudesc; break;
	case TC_PERF_DATA_FEAT_CPUID: str = &f->cpuid; break;
	default:
		return 0;	/* skipped by size */
	}
	free(*str);
	*str = NULL;
	return get_string(pd, p, len, &at, off, str, e);
}

void pd_features_free(struct tc_perf_data_features *f)
{
	for (size_t i = 0; i < f->nr_build_ids; i++)
		free(f->build_ids[i].filename);
	free(f->build_ids);
	tc_strv_free(&f->cmdline);
	free(f->hostname);
	free(f->osrelease);
	free(f->version);
	free(f->arch);
	free(f->cpudesc);
	free(f->cpuid);
	free(f->auxtrace_index);
	free(f->tracing_data);
	memset(f, 0, sizeof(*f));
}
