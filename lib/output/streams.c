#include "lib/output/streams.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/util/grow.h"

/* Threads can outnumber the file descriptors we may hold: keep at most this many open
 * and reopen the others for appending when they get a record again. */
#define MAX_OPEN 128

struct stream {
	char key[48];
	FILE *f;
	bool created;
	unsigned long last_use;
};

struct tc_streams {
	char *dir;
	bool json;
	struct stream *v;
	size_t n, cap, nopen;
	unsigned long clock;
	int werr;		/* first write error */
};

struct tc_streams *tc_streams_open(const char *dir, bool json, struct tc_err *e)
{
	struct tc_streams *s;

	if (mkdir(dir, 0777) && errno != EEXIST) {
		tc_err_sys(e, errno, "cannot create directory %s", dir);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->dir = strdup(dir))) {
		free(s);
		tc_err_sys(e, ENOMEM, "per-thread streams");
		return NULL;
	}
	s->json = json;
	return s;
}

static void key_of(const struct tc_rec *r, char *key, size_t len)
{
	if (r->tid >= 0)
		snprintf(key, len, "tid-%d", r->tid);
	else if (r->cpu >= 0)
		snprintf(key, len, "cpu-%d", r->cpu);
	else if (r->id >= 0)
		snprintf(key, len, "id-0x%02x", r->id);
	else
		snprintf(key, len, "unknown");
}

static int close_one(struct tc_streams *s, struct stream *st)
{
	int bad = ferror(st->f) != 0;

	if (fclose(st->f) || bad)
		s->werr = s->werr ? s->werr : (errno ? errno : EIO);
	st->f = NULL;
	s->nopen--;
	return 0;
}

static struct stream *get(struct tc_streams *s, const char *key, struct tc_err *e)
{
	struct stream *st = NULL;
	char path[4096];

	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].key, key))
			st = &s->v[i];
	if (!st) {
		if (tc_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v))) {
			tc_err_sys(e, ENOMEM, "per-thread streams");
			return NULL;
		}
		st = &s->v[s->n++];
		memset(st, 0, sizeof(*st));
		snprintf(st->key, sizeof(st->key), "%s", key);
	}
	st->last_use = ++s->clock;
	if (st->f)
		return st;
	if (s->nopen >= MAX_OPEN) {
		struct stream *old = NULL;

		for (size_t i = 0; i < s->n; i++)
			if (s->v[i].f && (!old || s->v[i].last_use < old->last_use))
				old = &s->v[i];
		close_one(s, old);
	}
	snprintf(path, sizeof(path), "%s/%s.%s", s->dir, st->key, s->json ? "jsonl" : "txt");
	st->f = fopen(path, st->created ? "a" : "w");
	if (!st->f) {
		tc_err_sys(e, errno, "cannot open %s", path);
		return NULL;
	}
	st->created = true;
	s->nopen++;
	return st;
}

int tc_streams_write(struct tc_streams *s, const struct tc_rec *r, struct tc_err *e)
{
	struct tc_listing o;
	struct stream *st;
	char key[48];

	key_of(r, key, sizeof(key));
	st = get(s, key, e);
	if (!st)
		return -1;
	tc_listing_init(&o, st->f, s->json);
	tc_listing_write(&o, r);
	return 0;
}

int tc_streams_close(struct tc_streams *s, unsigned *n, struct tc_err *e)
{
	int ret = 0;

	if (!s)
		return 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].f)
			close_one(s, &s->v[i]);
	if (n)
		*n = (unsigned)s->n;
	if (s->werr)
		ret = tc_err_sys(e, s->werr, "writing per-thread streams in %s", s->dir);
	free(s->v);
	free(s->dir);
	free(s);
	return ret;
}
