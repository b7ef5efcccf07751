/* OpenCSD / DS-5 snapshot reader; see snapshot.h. The ini dialect: [section] lines,
 * key=value lines, ';' or '#' comments, blank lines. Register keys carry a suffix in
 * parentheses ("TRCIDR0(0x078)", "PC(size:64)", "ETMCR(id:0x0)") that is not part of the name.
 * Section and key names are matched case-insensitively, as DS-5 writes them inconsistently. */
#include "lib/perfdata/snapshot.h"

#include "lib/util/excerpt.h"
#include "lib/util/strv.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>

/* Bounds: a snapshot's ini files are a few KB with short lines; bigger is not one. */
#define INI_FILE_MAX	(1u << 20)
#define INI_LINE_MAX	4096

/* One key=value line of an ini file, handed to the section handler. */
struct ini_line {
	const char *file;
	unsigned lineno;
	const char *section, *key, *value;
	unsigned section_no;	/* counts headers, so a repeated [dump] is a new section */
	unsigned section_line;	/* line of the section header */
};

typedef int (*ini_fn)(void *ctx, const struct ini_line *l, struct tc_err *e);

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = 0;
	return s;
}

static int ini_read(const char *dir, const char *path, ini_fn fn, void *ctx, struct tc_err *e)
{
	char line[INI_LINE_MAX + 2], section[128] = "", x[TC_EXCERPT_SIZE];
	unsigned lineno = 0, section_no = 0, section_line = 0;
	int rc = 0, fd = tc_snapshot_open_file(dir, path, INI_FILE_MAX, e);
	size_t total = 0;
	FILE *f;

	if (fd < 0)
		return -1;
	if (!(f = fdopen(fd, "r"))) {
		close(fd);
		return tc_err_sys(e, errno, "%s: cannot open", path);
	}
	while (!rc && fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);
		char *s, *eq;

		lineno++;
		total += n;
		if (n > INI_LINE_MAX || total > INI_FILE_MAX) {
			rc = tc_err_set(e, 0, "%s:%u: %s longer than %u bytes: not a snapshot ini",
					path, lineno, n > INI_LINE_MAX ? "line" : "file",
					n > INI_LINE_MAX ? INI_LINE_MAX : INI_FILE_MAX);
			break;
		}
		s = trim(line);
		if (!*s || *s == ';' || *s == '#')
			continue;
		if (*s == '[') {
			char *close = strchr(s, ']');

			if (!close || close - s - 1 >= (long)sizeof(section)) {
				rc = tc_err_set(e, 0, "%s:%u: bad section header '%s'", path,
						lineno, tc_excerpt(x, s));
				break;
			}
			*close = 0;
			snprintf(section, sizeof(section), "%s", trim(s + 1));
			section_no++;
			section_line = lineno;
			continue;
		}
		eq = strchr(s, '=');
		if (!eq) {
			rc = tc_err_set(e, 0, "%s:%u: expected key=value, got '%s'", path, lineno,
					tc_excerpt(x, s));
			break;
		}
		*eq = 0;
		struct ini_line l = { path, lineno, section, trim(s), trim(eq + 1), section_no,
				  section_line };

		if (!*l.key)
			rc = tc_err_set(e, 0, "%s:%u: empty key", path, lineno);
		else if (!*section)
			rc = tc_err_set(e, 0, "%s:%u: key '%s' outside any section", path, lineno,
					tc_excerpt(x, l.key));
		else
			rc = fn(ctx, &l, e);
	}
	fclose(f);
	return rc;
}

static int num(const struct ini_line *l, uint64_t *v, struct tc_err *e)
{
	char *end;

	errno = 0;
	*v = strtoull(l->value, &end, 0);
	if (errno || end == l->value || *trim(end)) {
		char k[TC_EXCERPT_SIZE], x[TC_EXCERPT_SIZE];

		return tc_err_set(e, 0, "%s:%u: %s: '%s' is not a number", l->file, l->lineno,
				  tc_excerpt(k, l->key), tc_excerpt(x, l->value));
	}
	return 0;
}

static int dup_to(char **dst, const char *s, struct tc_err *e)
{
	free(*dst);
	*dst = strdup(s);
	return *dst ? 0 : tc_err_sys(e, ENOMEM, "snapshot");
}

static char *join(const char *dir, const char *file)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, file) < 0)
		return NULL;
	return p;
}

/* A file a snapshot names, in its directory: an absolute path or a ".." component would
 * have a decode read any file on the system (and quote it in messages), so neither is. */
static char *inside(const char *dir, const char *file, const char *ini, unsigned lineno,
		    struct tc_err *e)
{
	char x[TC_EXCERPT_SIZE];
	const char *c = file;
	char *p;

	for (; *c; c += strcspn(c, "/"), c += *c == '/')
		if (!strncmp(c, "..", 2) && (c[2] == '/' || !c[2]))
			break;
	if (file[0] == '/' || *c) {
		char at[32] = "";

		if (lineno)
			snprintf(at, sizeof(at), ":%u", lineno);
		tc_err_set(e, 0, "%s%s: '%s' is outside the snapshot directory: only files under "
			   "%s are read", ini, at, tc_excerpt(x, file), dir);
		return NULL;
	}
	if (!(p = join(dir, file)))
		tc_err_sys(e, ENOMEM, "snapshot");
	return p;
}

int tc_snapshot_open_file(const char *dir, const char *path, uint64_t max, struct tc_err *e)
{
	char *rd = NULL, *rp = NULL;
	struct stat st;
	size_t n;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer before we can refuse it */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), bad;

	if (fd < 0)
		return tc_err_sys(e, errno, "%s: cannot open", path);
	if (fstat(fd, &st)) {
		tc_err_sys(e, errno, "%s: cannot open", path);
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		tc_err_set(e, 0, "%s: not a regular file (%s): not read", path,
			   S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO"
			   : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "special");
		goto fail;
	}
	if ((uint64_t)st.st_size > max) {
		tc_err_set(e, 0, "%s: %llu bytes, more than the %llu read from a snapshot file",
			   path, (unsigned long long)st.st_size, (unsigned long long)max);
		goto fail;
	}
	/* a link in the directory must not lead out of it either */
	rd = realpath(dir, NULL);
	rp = realpath(path, NULL);
	n = rd ? strlen(rd) : 0;
	bad = !rd || !rp || strncmp(rp, rd, n) || (rp[n] != '/' && strcmp(rd, "/"));
	if (bad) {
		tc_err_set(e, 0, "%s: leads outside the snapshot directory %s: not read", path,
			   dir);
		goto fail;
	}
	free(rd);
	free(rp);
	return fd;
fail:
	free(rd);
	free(rp);
	close(fd);
	return -1;
}

/* Grow *v (n elements of size sz) by one zeroed element; returns it or NULL. */
static void *append_zeroed(void *pv, size_t *n, size_t sz)
{
	void **v = pv;
	char *nv = realloc(*v, (*n + 1) * sz);

	if (!nv)
		return NULL;
	memset(nv + *n * sz, 0, sz);
	*v = nv;
	return nv + (*n)++ * sz;
}

/* ---- snapshot.ini ---- */

struct top {
	struct tc_snapshot *ss;
	struct tc_strv devfiles;
	char *metadata;
};

static int on_top(void *ctx, const struct ini_line *l, struct tc_err *e)
{
	struct top *t = ctx;

	if (!strcasecmp(l->section, "snapshot") && !strcasecmp(l->key, "version"))
		return dup_to(&t->ss->version, l->value, e);
	if (!strcasecmp(l->section, "device_list"))
		return tc_strv_push(&t->devfiles, l->value) ? tc_err_sys(e, ENOMEM, "snapshot") : 0;
	if (!strcasecmp(l->section, "trace") && !strcasecmp(l->key, "metadata"))
		return dup_to(&t->metadata, l->value, e);
	return 0;
}

/* ---- device ini ---- */

struct devctx {
	const char *dir;
	struct tc_snapshot_device *dev;
	struct tc_snapshot_dump *dump;	/* the [dump*] section being read */
	unsigned dump_line;
	int has_length;
};

static int finish_dump(struct devctx *c, struct tc_err *e)
{
	struct tc_snapshot_dump *d = c->dump;
	struct stat st;

	c->dump = NULL;
	if (!d)
		return 0;
	if (!d->path)
		return tc_err_set(e, 0, "%s:%u: dump section without file=", c->dev->ini,
				  c->dump_line);
	/* Missing dump files are allowed (several upstream snapshots name absent images); the
	 * memory reader reports them. Only the length is taken from a file that is there. */
	if (!c->has_length && !stat(d->path, &st))
		d->length = (uint64_t)st.st_size > d->offset ? (uint64_t)st.st_size - d->offset : 0;
	return 0;
}

static int on_dev(void *ctx, const struct ini_line *l, struct tc_err *e)
{
	struct devctx *c = ctx;
	struct tc_snapshot_device *dev = c->dev;

	if (!strncasecmp(l->section, "dump", 4)) {
		struct tc_snapshot_dump *d = c->dump;	/* opened by on_dev_wrap */
		if (!strcasecmp(l->key, "file")) {
			char *p = inside(c->dir, l->value, l->file, l->lineno, e);

			if (!p)
				return -1;
			free(d->path);
			d->path = p;
			return 0;
		}
		if (!strcasecmp(l->key, "address"))
			return num(l, &d->address, e);
		if (!strcasecmp(l->key, "length")) {
			c->has_length = 1;
			return num(l, &d->length, e);
		}
		if (!strcasecmp(l->key, "offset"))
			return num(l, &d->offset, e);
		if (!strcasecmp(l->key, "space"))
			return dup_to(&d->space, l->value, e);
		return 0;
	}
	if (!strcasecmp(l->section, "device")) {
		if (!strcasecmp(l->key, "name"))
			return dup_to(&dev->name, l->value, e);
		if (!strcasecmp(l->key, "class"))
			return dup_to(&dev->class_, l->value, e);
		if (!strcasecmp(l->key, "type"))
			return dup_to(&dev->type, l->value, e);
		return 0;
	}
	if (!strcasecmp(l->section, "regs")) {
		struct tc_snapshot_reg *r = append_zeroed(&dev->regs, &dev->nregs, sizeof(*r));
		size_t len = strcspn(l->key, "(");

		if (!r || !(r->name = strndup(l->key, len)))
			return tc_err_sys(e, ENOMEM, "snapshot");
		r->name[strlen(trim(r->name))] = 0;
		return num(l, &r->value, e);
	}
	return 0;
}

/* Section changes are not seen by on_dev; this wrapper opens a new dump for each [dump*]. */
struct devwrap {
	struct devctx c;
	unsigned section_no;
};

static int on_dev_wrap(void *ctx, const struct ini_line *l, struct tc_err *e)
{
	struct devwrap *w = ctx;

	if (w->section_no != l->section_no) {
		w->section_no = l->section_no;
		if (finish_dump(&w->c, e))
			return -1;
		if (!strncasecmp(l->section, "dump", 4)) {
			w->c.dump = append_zeroed(&w->c.dev->dumps, &w->c.dev->ndumps,
						  sizeof(*w->c.dump));
			if (!w->c.dump)
				return tc_err_sys(e, ENOMEM, "snapshot");
			w->c.dump_line = l->section_line;
			w->c.has_length = 0;
		}
	}
	return on_dev(&w->c, l, e);
}

static int read_device(struct tc_snapshot *ss, const char *top, const char *file,
		       struct tc_err *e)
{
	struct tc_snapshot_device *dev = append_zeroed(&ss->devs, &ss->ndevs, sizeof(*dev));
	struct devwrap w = { .c = { .dir = ss->dir } };

	if (!dev)
		return tc_err_sys(e, ENOMEM, "snapshot");
	if (!(dev->ini = inside(ss->dir, file, top, 0, e)))
		return -1;
	w.c.dev = dev;
	if (ini_read(ss->dir, dev->ini, on_dev_wrap, &w, e) || finish_dump(&w.c, e))
		return -1;
	if (!dev->name || !dev->class_ || !dev->type)
		return tc_err_set(e, 0, "%s: [device] needs name=, class= and type=", dev->ini);
	return 0;
}

/* ---- trace metadata ini ---- */

struct trc {
	struct tc_snapshot *ss;
	struct tc_strv buf_sections;	/* trace_buffers buffers= list */
	struct tc_strv src, dst;	/* source_buffers pairs */
};

static struct tc_snapshot_buffer *buf_by_section(struct trc *t, const char *section)
{
	for (size_t i = 0; i < t->buf_sections.n; i++)
		if (!strcasecmp(t->buf_sections.v[i], section))
			return &t->ss->bufs[i];
	return NULL;
}

static int on_trace(void *ctx, const struct ini_line *l, struct tc_err *e)
{
	struct trc *t = ctx;
	struct tc_snapshot *ss = t->ss;
	struct tc_snapshot_buffer *b;

	if (!strcasecmp(l->section, "trace_buffers") && !strcasecmp(l->key, "buffers")) {
		char *list = strdup(l->value), *save = NULL;

		if (!list)
			return tc_err_sys(e, ENOMEM, "snapshot");
		for (char *tok = strtok_r(list, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			tok = trim(tok);
			if (!*tok)
				continue;
			if (tc_strv_push(&t->buf_sections, tok) ||
			    !append_zeroed(&ss->bufs, &ss->nbufs, sizeof(*ss->bufs))) {
				free(list);
				return tc_err_sys(e, ENOMEM, "snapshot");
			}
		}
		free(list);
		return 0;
	}
	if (!strcasecmp(l->section, "source_buffers")) {
		if (tc_strv_push(&t->src, l->key) || tc_strv_push(&t->dst, l->value))
			return tc_err_sys(e, ENOMEM, "snapshot");
		return 0;
	}
	if (!strcasecmp(l->section, "core_trace_sources")) {
		struct tc_snapshot_core_src *cs =
			append_zeroed(&ss->core_srcs, &ss->ncore_srcs, sizeof(*cs));

		if (!cs || !(cs->core = strdup(l->key)) || !(cs->source = strdup(l->value)))
			return tc_err_sys(e, ENOMEM, "snapshot");
		return 0;
	}
	b = buf_by_section(t, l->section);
	if (!b)
		return 0;
	if (!strcasecmp(l->key, "name"))
		return dup_to(&b->name, l->value, e);
	if (!strcasecmp(l->key, "format"))
		return dup_to(&b->format, l->value, e);
	if (!strcasecmp(l->key, "file")) {
		free(b->path);
		b->path = inside(ss->dir, l->value, l->file, l->lineno, e);
		return b->path ? 0 : -1;
	}
	return 0;
}

static int read_trace(struct tc_snapshot *ss, const char *top, const char *file,
		      struct tc_err *e)
{
	struct trc t = { .ss = ss };
	char *path = inside(ss->dir, file, top, 0, e);
	int rc = -1;

	if (!path)
		return -1;
	if (ini_read(ss->dir, path, on_trace, &t, e))
		goto out;
	for (size_t i = 0; i < ss->nbufs; i++) {
		struct tc_snapshot_buffer *b = &ss->bufs[i];

		if (!b->name || !b->path || !b->format) {
			tc_err_set(e, 0, "%s: buffer section [%s] needs name=, file= and format=",
				   path, t.buf_sections.v[i]);
			goto out;
		}
	}
	for (size_t i = 0; i < t.src.n; i++) {
		struct tc_snapshot_buffer *b =
			(struct tc_snapshot_buffer *)tc_snapshot_buffer(ss, t.dst.v[i]);

		if (!b)
			continue;	/* a source mapped to a buffer not listed: ignore it */
		if (!append_zeroed(&b->sources, &b->nsources, sizeof(char *)) ||
		    !(b->sources[b->nsources - 1] = strdup(t.src.v[i]))) {
			tc_err_sys(e, ENOMEM, "snapshot");
			goto out;
		}
	}
	rc = 0;
out:
	free(path);
	tc_strv_free(&t.buf_sections);
	tc_strv_free(&t.src);
	tc_strv_free(&t.dst);
	return rc;
}

/* ---- public ---- */

bool tc_snapshot_is(const char *path)
{
	char *p = join(path, "snapshot.ini");
	struct stat st;
	bool is = p && !stat(path, &st) && S_ISDIR(st.st_mode) && !stat(p, &st) &&
		  S_ISREG(st.st_mode);

	free(p);
	return is;
}

int tc_snapshot_open(struct tc_snapshot **out, const char *dir, struct tc_err *e)
{
	struct tc_snapshot *ss = calloc(1, sizeof(*ss));
	struct top t = { .ss = ss };
	char *top = NULL;
	int rc = -1;

	*out = NULL;
	if (!ss || !(ss->dir = strdup(dir)) || !(top = join(dir, "snapshot.ini"))) {
		tc_err_sys(e, ENOMEM, "snapshot");
		goto out;
	}
	if (ini_read(dir, top, on_top, &t, e))
		goto out;
	for (size_t i = 0; i < t.devfiles.n; i++)
		if (read_device(ss, top, t.devfiles.v[i], e))
			goto out;
	if (!t.metadata) {
		tc_err_set(e, 0, "%s: no [trace] metadata= (the trace buffer description)", top);
		goto out;
	}
	if (read_trace(ss, top, t.metadata, e))
		goto out;
	rc = 0;
out:
	free(top);
	free(t.metadata);
	tc_strv_free(&t.devfiles);
	if (rc)
		tc_snapshot_free(ss);
	else
		*out = ss;
	return rc;
}

void tc_snapshot_free(struct tc_snapshot *ss)
{
	if (!ss)
		return;
	for (size_t i = 0; i < ss->ndevs; i++) {
		struct tc_snapshot_device *d = &ss->devs[i];

		for (size_t k = 0; k < d->nregs; k++)
			free(d->regs[k].name);
		for (size_t k = 0; k < d->ndumps; k++) {
			free(d->dumps[k].path);
			free(d->dumps[k].space);
		}
		free(d->regs);
		free(d->dumps);
		free(d->name);
		free(d->class_);
		free(d->type);
		free(d->ini);
	}
	for (size_t i = 0; i < ss->nbufs; i++) {
		struct tc_snapshot_buffer *b = &ss->bufs[i];

		for (size_t k = 0; k < b->nsources; k++)
			free(b->sources[k]);
		free(b->sources);
		free(b->name);
		free(b->path);
		free(b->format);
	}
	for (size_t i = 0; i < ss->ncore_srcs; i++) {
		free(ss->core_srcs[i].core);
		free(ss->core_srcs[i].source);
	}
	free(ss->devs);
	free(ss->bufs);
	free(ss->core_srcs);
	free(ss->dir);
	free(ss->version);
	free(ss);
}

const struct tc_snapshot_device *tc_snapshot_device(const struct tc_snapshot *ss, const char *name)
{
	for (size_t i = 0; i < ss->ndevs; i++)
		if (!strcmp(ss->devs[i].name, name))
			return &ss->devs[i];
	return NULL;
}

const struct tc_snapshot_buffer *tc_snapshot_buffer(const struct tc_snapshot *ss, const char *name)
{
	for (size_t i = 0; i < ss->nbufs; i++)
		if (ss->bufs[i].name && !strcmp(ss->bufs[i].name, name))
			return &ss->bufs[i];
	return NULL;
}

const struct tc_snapshot_device *tc_snapshot_core_of(const struct tc_snapshot *ss,
						     const char *source)
{
	for (size_t i = 0; i < ss->ncore_srcs; i++)
		if (!strcmp(ss->core_srcs[i].source, source))
			return tc_snapshot_device(ss, ss->core_srcs[i].core);
	return NULL;
}

int tc_snapshot_reg(const struct tc_snapshot_device *dev, const char *name, uint64_t *val)
{
	for (size_t i = 0; i < dev->nregs; i++)
		if (!strcasecmp(dev->regs[i].name, name)) {
			*val = dev->regs[i].value;
			return 0;
		}
	return -1;
}
