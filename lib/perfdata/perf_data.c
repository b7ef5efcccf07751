/* perf.data: opening (file, fd, stream, memory), the file header, attrs and their ids. */
#include "lib/perfdata/perf_data_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util/grow.h"

#define PD_MAGIC 0x32454c4946524550ULL		/* "PERFILE2" read little-endian */
#define PD_MAGIC_SWAPPED 0x50455246494c4532ULL	/* written on a big-endian host */

static struct tc_perf_data *pd_new(const char *name, struct tc_err *e)
{
	struct tc_perf_data *pd = calloc(1, sizeof(*pd));

	if (!pd || !(pd->name = strdup(name ? name : "perf.data"))) {
		free(pd);
		tc_err_set(e, ENOMEM, "out of memory opening %s", name ? name : "perf.data");
		return NULL;
	}
	pd->fd = -1;
	return pd;
}

/* Check magic and header size; says whether this is the pipe format. */
static int check_magic(struct tc_perf_data *pd, const uint8_t *p, uint64_t avail,
		       struct tc_err *e)
{
	uint64_t magic, size;

	if (avail < PD_PIPE_HDR_SIZE)
		return tc_err_set(e, EINVAL, "%s: %llu bytes is too short for a perf.data header",
				  pd->name, (unsigned long long)avail);
	magic = pd_u64(p);
	size = pd_u64(p + 8);
	if (magic == PD_MAGIC_SWAPPED)
		return tc_err_set(e, ENOTSUP, "%s: big-endian perf.data is not supported",
				  pd->name);
	if (!memcmp(p, "PERFFILE", 8))
		return tc_err_set(e, ENOTSUP, "%s: perf.data version 1 (PERFFILE) is not "
				  "supported", pd->name);
	if (magic != PD_MAGIC)
		return tc_err_set(e, EINVAL, "%s: not a perf.data file (no PERFILE2 magic)",
				  pd->name);
	if (size == PD_PIPE_HDR_SIZE) {
		pd->pipe = true;
		return 0;
	}
	if (size < PD_FILE_HDR_SIZE)
		return tc_err_set(e, EINVAL, "%s: header size 0x%llx is neither 0x10 (pipe) "
				  "nor at least 0x%x (file)", pd->name,
				  (unsigned long long)size, PD_FILE_HDR_SIZE);
	pd->pipe = false;
	return 0;
}

/* Is [off, off + size) inside the mapped input? Overflow-safe. */
static bool in_map(const struct tc_perf_data *pd, uint64_t off, uint64_t size)
{
	return off <= pd->map_len && size <= pd->map_len - off;
}

static int read_attrs(struct tc_perf_data *pd, const uint8_t *h, struct tc_err *e)
{
	uint64_t attr_size = pd_u64(h + 16), off = pd_u64(h + 24), size = pd_u64(h + 32);
	uint64_t nr;

	if (!size)
		return 0;
	if (!in_map(pd, off, size))
		return tc_err_set(e, EINVAL, "%s: attr section 0x%llx+0x%llx runs past the end "
				  "of the file (0x%zx)", pd->name, (unsigned long long)off,
				  (unsigned long long)size, pd->map_len);
	if (attr_size < PERF_ATTR_SIZE_VER0 + 16 || size % attr_size)
		return tc_err_set(e, EINVAL, "%s: attr section size 0x%llx is not a multiple "
				  "of a valid attr size (0x%llx)", pd->name,
				  (unsigned long long)size, (unsigned long long)attr_size);
	nr = size / attr_size;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t a = off + i * attr_size, ids_off, ids_size;
		const uint8_t *p = pd->map + a;
		uint32_t asz = pd_u32(p + 4) ? pd_u32(p + 4) : PERF_ATTR_SIZE_VER0;
		const struct tc_perf_data_attr *attr;

		/* The ids section follows the attr's own size, inside the entry's stride. */
		if (asz < PERF_ATTR_SIZE_VER0 || asz > attr_size - 16)
			return tc_err_set(e, EINVAL, "%s: attr %llu at offset 0x%llx has size "
					  "0x%x, not within 0x%x..0x%llx", pd->name,
					  (unsigned long long)i, (unsigned long long)a, asz,
					  PERF_ATTR_SIZE_VER0, (unsigned long long)attr_size - 16);
		if (pd_add_attr(pd, p, asz, a, &attr, e))
			return -1;
		ids_off = pd_u64(p + asz);
		ids_size = pd_u64(p + asz + 8);
		if (!in_map(pd, ids_off, ids_size) || ids_size % 8)
			return tc_err_set(e, EINVAL, "%s: ids of attr %llu (0x%llx+0x%llx) are "
					  "outside the file (0x%zx) or not whole u64s", pd->name,
					  (unsigned long long)i, (unsigned long long)ids_off,
					  (unsigned long long)ids_size, pd->map_len);
		if (pd_add_ids(pd, pd->nr_attrs - 1, pd->map + ids_off, ids_size / 8, e))
			return -1;
	}
	return 0;
}

static void drop_feature(struct tc_perf_data *pd, unsigned f)
{
	pd->feat.present[f / 64] &= ~(1ULL << (f % 64));
}

/* A feature that cannot be read is left out with a warning, as perf does: the records do
 * not need it. Only running out of memory is fatal. */
static int read_features(struct tc_perf_data *pd, struct tc_err *e)
{
	uint64_t tab = pd->data_off + pd->data_size;
	size_t n = 0;

	for (unsigned f = 0; f < TC_PERF_DATA_FEAT_BITS; f++) {
		uint64_t off, size;
		struct tc_err fe = { 0 };

		if (!(pd->feat.present[f / 64] & (1ULL << (f % 64))))
			continue;
		/* One {offset, size} per set bit, in bit order, right after the data. */
		if (!in_map(pd, tab + n * 16, 16)) {
			tc_diag_add(&pd->warn, "%s: feature table entry for feature %u at offset "
				    "0x%llx is past the end of the file (0x%zx): features from "
				    "%u on left out", pd->name, f,
				    (unsigned long long)(tab + n * 16), pd->map_len, f);
			for (; f < TC_PERF_DATA_FEAT_BITS; f++)
				drop_feature(pd, f);
			return 0;
		}
		off = pd_u64(pd->map + tab + n * 16);
		size = pd_u64(pd->map + tab + n * 16 + 8);
		n++;
		if (!in_map(pd, off, size)) {
			tc_diag_add(&pd->warn, "%s: feature %u section 0x%llx+0x%llx runs past the "
				    "end of the file (0x%zx): left out", pd->name, f,
				    (unsigned long long)off, (unsigned long long)size,
				    pd->map_len);
			drop_feature(pd, f);
			continue;
		}
		if (pd_parse_feature(pd, f, pd->map + off, size, off, &fe)) {
			if (fe.errnum == ENOMEM) {
				*e = fe;
				return -1;
			}
			tc_diag_add(&pd->warn, "%s: left out", fe.msg);
			drop_feature(pd, f);
		}
	}
	return 0;
}

static int read_file_header(struct tc_perf_data *pd, struct tc_err *e)
{
	const uint8_t *h = pd->map;

	if (pd->map_len < PD_FILE_HDR_SIZE)
		return tc_err_set(e, EINVAL, "%s: file of 0x%zx bytes is shorter than its "
				  "header (0x%x)", pd->name, pd->map_len, PD_FILE_HDR_SIZE);
	pd->data_off = pd_u64(h + 40);
	pd->data_size = pd_u64(h + 48);
	/* A file cut short (a full disk, a copy interrupted): the records that are there. */
	if (pd->data_off >= PD_FILE_HDR_SIZE && pd->data_off <= pd->map_len &&
	    !in_map(pd, pd->data_off, pd->data_size)) {
		tc_diag_add(&pd->warn, "%s: data section 0x%llx+0x%llx runs past the end of the "
			    "file (0x%zx): the file is truncated; the records before its end are "
			    "read", pd->name, (unsigned long long)pd->data_off,
			    (unsigned long long)pd->data_size, pd->map_len);
		pd->data_size = pd->map_len - pd->data_off;
		pd->cut = true;
	}
	if (!in_map(pd, pd->data_off, pd->data_size))
		return tc_err_set(e, EINVAL, "%s: data section 0x%llx+0x%llx runs past the end "
				  "of the file (0x%zx)", pd->name,
				  (unsigned long long)pd->data_off,
				  (unsigned long long)pd->data_size, pd->map_len);
	memcpy(pd->feat.present, h + 72, sizeof(pd->feat.present));
	if (read_attrs(pd, h, e) || read_features(pd, e))
		return -1;
	pd->pos = pd->data_off;
	return 0;
}

/* Map mode: the whole input is in pd->map. */
static int open_map(struct tc_perf_data *pd, struct tc_err *e)
{
	if (check_magic(pd, pd->map, pd->map_len, e))
		return -1;
	if (pd->pipe) {
		pd->data_off = pd->pos = PD_PIPE_HDR_SIZE;
		pd->data_size = pd->map_len - PD_PIPE_HDR_SIZE;
		pd->cut = true;	/* a pipe's data ends where the input does */
		return 0;
	}
	return read_file_header(pd, e);
}

static int open_stream(struct tc_perf_data *pd, struct tc_err *e)
{
	uint8_t h[PD_PIPE_HDR_SIZE];
	size_t got = fread(h, 1, sizeof(h), pd->sf);

	if (got < sizeof(h) && ferror(pd->sf))
		return tc_err_sys(e, errno, "%s: reading the header", pd->name);
	if (check_magic(pd, h, got, e))
		return -1;
	if (!pd->pipe)
		return tc_err_set(e, EINVAL, "%s: file-mode perf.data needs a seekable file, "
				  "not a pipe", pd->name);
	pd->stream = true;
	pd->spos = pd->data_off = pd->pos = PD_PIPE_HDR_SIZE;
	return 0;
}

int tc_perf_data_open_mem(struct tc_perf_data **out, const void *buf, size_t len, const char *name,
		   struct tc_err *e)
{
	struct tc_perf_data *pd = pd_new(name, e);

	*out = NULL;
	if (!pd)
		return -1;
	pd->map = buf;
	pd->map_len = len;
	if (open_map(pd, e)) {
		tc_perf_data_close(pd);
		return -1;
	}
	*out = pd;
	return 0;
}

int tc_perf_data_open_stream(struct tc_perf_data **out, FILE *f, const char *name, struct tc_err *e)
{
	struct tc_perf_data *pd = pd_new(name, e);

	*out = NULL;
	if (!pd)
		return -1;
	pd->sf = f;
	if (open_stream(pd, e)) {
		tc_perf_data_close(pd);
		return -1;
	}
	*out = pd;
	return 0;
}

static int open_fd(struct tc_perf_data **out, int fd, bool own, const char *name,
		   struct tc_err *e)
{
	struct tc_perf_data *pd = pd_new(name, e);
	struct stat st;
	int dupfd;

	*out = NULL;
	if (!pd) {
		if (own)
			close(fd);
		return -1;
	}
	pd->fd = fd;
	pd->own_fd = own;
	if (fstat(fd, &st)) {
		tc_err_sys(e, errno, "%s", pd->name);
		goto fail;
	}
	if (S_ISREG(st.st_mode)) {
		void *m;

		if (st.st_size < PD_PIPE_HDR_SIZE) {
			tc_err_set(e, EINVAL, "%s: %lld bytes is too short for a perf.data header",
				   pd->name, (long long)st.st_size);
			goto fail;
		}
		m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			tc_err_sys(e, errno, "%s: mmap", pd->name);
			goto fail;
		}
		pd->map = m;
		pd->map_len = st.st_size;
		pd->mapped = true;
		pd->page = (size_t)sysconf(_SC_PAGESIZE);
		if (open_map(pd, e))
			goto fail;
		*out = pd;
		return 0;
	}
	/* A pipe or socket: read it as a stream through our own FILE on a dup. */
	dupfd = dup(fd);
	if (dupfd < 0 || !(pd->sf = fdopen(dupfd, "rb"))) {
		tc_err_sys(e, errno, "%s", pd->name);
		if (dupfd >= 0)
			close(dupfd);
		goto fail;
	}
	if (open_stream(pd, e))
		goto fail;
	*out = pd;
	return 0;
fail:
	tc_perf_data_close(pd);
	return -1;
}

int tc_perf_data_open_fd(struct tc_perf_data **out, int fd, const char *name, struct tc_err *e)
{
	return open_fd(out, fd, false, name, e);
}

int tc_perf_data_open(struct tc_perf_data **out, const char *path, struct tc_err *e)
{
	int fd;

	*out = NULL;
	if (!strcmp(path, "-"))
		return open_fd(out, STDIN_FILENO, false, "stdin", e);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tc_err_sys(e, errno, "%s", path);
	return open_fd(out, fd, true, path, e);
}

void tc_perf_data_close(struct tc_perf_data *pd)
{
	if (!pd)
		return;
	if (pd->mapped)
		munmap((void *)pd->map, pd->map_len);
	if (pd->own_fd && pd->fd >= 0)
		close(pd->fd);
	/* Our own FILE (on a dup) only when opened from an fd; open_stream's is borrowed. */
	if (pd->sf && pd->fd >= 0)
		fclose(pd->sf);
	for (size_t i = 0; i < pd->nr_attrs; i++) {
		free(pd->attrs[i].ids);
		free(pd->attrs[i].name);
	}
	free(pd->attrs);
	free(pd->ids);
	pd_features_free(&pd->feat);
	free(pd->priv);
	tc_auxtrace_info_cs_etm_free(&pd->cs);
	tc_auxtrace_info_intel_pt_free(&pd->ipt);
	free(pd->buf);
	free(pd->name);
	tc_diag_free(&pd->warn);
	free(pd);
}

void tc_perf_data_release(const struct tc_perf_data *pd, uint64_t off, uint64_t len)
{
	uint64_t page, start, end, lim;

	if (!pd || !pd->mapped || !len || off >= pd->map_len)
		return;
	page = pd->page;
	lim = (pd->map_len + page - 1) / page * page;	/* the mapping's last page, whole */
	start = off / page * page;
	end = len > lim - off ? lim : (off + len + page - 1) / page * page;
	if (end > lim)
		end = lim;
	/* A private read-only file mapping: the pages go back to the file, none is lost. */
	if (end > start)
		madvise((uint8_t *)pd->map + start, end - start, MADV_DONTNEED);
}

void tc_perf_data_behind_slow(const struct tc_perf_data *pd, struct tc_perf_data_behind *b,
			      uint64_t at)
{
	uint64_t w = b->window ? b->window : TC_PERF_DATA_WINDOW, to = at - w;

	tc_perf_data_release(pd, b->from, to - b->from);
	b->from = to;
}

void tc_perf_data_set_window(struct tc_perf_data *pd, uint64_t bytes)
{
	pd->cursor.window = bytes;
}

const struct tc_diag *tc_perf_data_warnings(const struct tc_perf_data *pd)
{
	return &pd->warn;
}

int pd_add_attr(struct tc_perf_data *pd, const uint8_t *p, size_t len, uint64_t off,
		const struct tc_perf_data_attr **out, struct tc_err *e)
{
	struct tc_perf_data_attr *a;

	if (len < PERF_ATTR_SIZE_VER0)
		return tc_err_set(e, EINVAL, "%s: attr at offset 0x%llx has only %zu bytes",
				  pd->name, (unsigned long long)off, len);
	if (tc_grow((void **)&pd->attrs, &pd->cap_attrs, pd->nr_attrs + 1, sizeof(*pd->attrs)))
		return tc_err_set(e, ENOMEM, "out of memory for attrs");
	a = &pd->attrs[pd->nr_attrs++];
	memset(a, 0, sizeof(*a));
	/* A newer perf's bigger attr keeps our fields at the same offsets. */
	memcpy(&a->attr, p, len < sizeof(a->attr) ? len : sizeof(a->attr));
	a->file_attr_size = pd_u32(p + 4);
	a->attr.size = sizeof(a->attr);
	*out = a;
	return 0;
}

int pd_add_ids(struct tc_perf_data *pd, size_t attr, const uint8_t *p, size_t nr, struct tc_err *e)
{
	struct tc_perf_data_attr *a = &pd->attrs[attr];
	uint64_t *ids;

	if (!nr)
		return 0;
	ids = realloc(a->ids, (a->nr_ids + nr) * sizeof(*ids));
	if (!ids)
		return tc_err_set(e, ENOMEM, "out of memory for event ids");
	a->ids = ids;
	if (tc_grow((void **)&pd->ids, &pd->cap_ids, pd->nr_ids + nr, sizeof(*pd->ids)))
		return tc_err_set(e, ENOMEM, "out of memory for event ids");
	for (size_t i = 0; i < nr; i++) {
		a->ids[a->nr_ids++] = pd_u64(p + 8 * i);
		pd->ids[pd->nr_ids++] = (struct pd_id){ pd_u64(p + 8 * i), attr };
	}
	pd->ids_sorted = false;
	return 0;
}

static int id_cmp(const void *a, const void *b)
{
	const struct pd_id *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

const struct tc_perf_data_attr *pd_attr_by_id(struct tc_perf_data *pd, uint64_t id)
{
	size_t lo = 0, hi;

	if (!pd->ids_sorted) {
		if (pd->nr_ids)	/* ids is NULL until the first (qsort wants non-NULL) */
			qsort(pd->ids, pd->nr_ids, sizeof(*pd->ids), id_cmp);
		pd->ids_sorted = true;
	}
	hi = pd->nr_ids;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pd->ids[mid].id == id)
			return &pd->attrs[pd->ids[mid].attr];
		if (pd->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

bool tc_perf_data_is_pipe(const struct tc_perf_data *pd)
{
	return pd->pipe;
}

const char *tc_perf_data_name(const struct tc_perf_data *pd)
{
	return pd->name;
}

uint64_t tc_perf_data_data_offset(const struct tc_perf_data *pd)
{
	return pd->pipe ? 0 : pd->data_off;
}

uint64_t tc_perf_data_data_size(const struct tc_perf_data *pd)
{
	return pd->pipe ? (pd->stream ? pd->spos : pd->pos) : pd->data_size;
}

size_t tc_perf_data_nr_attrs(const struct tc_perf_data *pd)
{
	return pd->nr_attrs;
}

const struct tc_perf_data_attr *tc_perf_data_attr(const struct tc_perf_data *pd, size_t i)
{
	return i < pd->nr_attrs ? &pd->attrs[i] : NULL;
}

const struct tc_perf_data_features *tc_perf_data_features(const struct tc_perf_data *pd)
{
	return &pd->feat;
}

bool tc_perf_data_has_feature(const struct tc_perf_data *pd, unsigned feat)
{
	return feat < TC_PERF_DATA_FEAT_BITS &&
	       (pd->feat.present[feat / 64] & (1ULL << (feat % 64)));
}
