/* Files are opened relative to the directory's descriptor, never through a symbolic link:
 * the directory is opened with O_NOFOLLOW, each file with O_NOFOLLOW and, the first time,
 * O_EXCL (or O_TRUNC when the caller said an existing directory may be overwritten), so a
 * link planted in DIR (or DIR itself a link) is refused, not written through. DIR is
 * flock()ed while open, so a second decode into it is refused. */
#include "lib/output/streams.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util/grow.h"

/* Threads can outnumber the file descriptors we may hold: keep at most this many open
 * and reopen the others for appending when they get a record again. */
#define MAX_OPEN 128

struct stream {
	char key[48];
	int kind;		/* enum key_kind: what val is */
	long long val;
	FILE *f;
	bool created;
	unsigned long last_use;
};

struct tc_streams {
	char *dir;
	int dfd;		/* DIR, opened without following a link */
	bool json, overwrite;
	struct tc_listing like;		/* the writer's settings for every stream */
	struct stream *v;
	size_t n, cap, nopen;
	size_t last;		/* the stream of the last record (< n) */
	unsigned long clock;
	int werr;		/* first write error */
};

/* 1 if the directory behind dfd holds anything, 0 if not, -1 (errno) if unreadable. */
static int has_entries(int dfd)
{
	int fd = dup(dfd), any = 0;
	struct dirent *de;
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (!any && (de = readdir(d)))
		any = strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return any;
}

static int open_dir(const char *dir, bool overwrite, struct tc_err *e)
{
	bool made = !mkdir(dir, 0777);
	int dfd, full;

	if (!made && errno != EEXIST)
		return tc_err_sys(e, errno, "cannot create directory %s", dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		struct stat st;

		if (!lstat(dir, &st) && S_ISLNK(st.st_mode))
			return tc_err_set(e, 0, "%s is a symbolic link: not writing through it "
					  "(give the directory itself)", dir);
		return tc_err_sys(e, errno, "cannot open directory %s", dir);
	}
	/* Two decodes into one DIR would mix or truncate each other's streams: the first holds
	 * a lock on DIR itself until it closes (the kernel drops it if it dies). */
	if (flock(dfd, LOCK_EX | LOCK_NB)) {
		int err = errno;

		close(dfd);
		return err == EWOULDBLOCK ? tc_err_set(e, 0, "%s is in use by another tracectl "
						       "decode: not mixing streams into it", dir)
					  : tc_err_sys(e, err, "cannot lock directory %s", dir);
	}
	if (made || overwrite)
		return dfd;
	full = has_entries(dfd);
	if (full) {
		int err = errno;

		close(dfd);
		return full < 0 ? tc_err_sys(e, err, "cannot read directory %s", dir)
				: tc_err_set(e, 0, "%s exists and is not empty: not mixing streams "
					     "into it (--force overwrites the files of the same "
					     "names)", dir);
	}
	return dfd;
}

struct tc_streams *tc_streams_open(const char *dir, bool json, bool overwrite,
				   struct tc_err *e)
{
	struct tc_streams *s;
	int dfd = open_dir(dir, overwrite, e);

	if (dfd < 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->dir = strdup(dir))) {
		free(s);
		close(dfd);
		tc_err_sys(e, ENOMEM, "per-thread streams");
		return NULL;
	}
	s->dfd = dfd;
	s->json = json;
	s->overwrite = overwrite;
	tc_listing_init(&s->like, NULL, json);
	tc_listing_batch(&s->like, true);
	return s;
}

struct tc_listing *tc_streams_listing(struct tc_streams *s)
{
	return &s->like;
}

/* Which stream a record goes to: its thread, else its CPU, else its trace ID. */
enum key_kind { KEY_TID, KEY_CPU, KEY_ID, KEY_UNKNOWN };

static int kind_of(const struct tc_rec *r, long long *val)
{
	*val = r->tid >= 0 ? r->tid : r->cpu >= 0 ? r->cpu : r->id >= 0 ? r->id : 0;
	return r->tid >= 0 ? KEY_TID : r->cpu >= 0 ? KEY_CPU : r->id >= 0 ? KEY_ID : KEY_UNKNOWN;
}

static void key_name(int kind, long long val, char *key, size_t len)
{
	switch (kind) {
	case KEY_TID: snprintf(key, len, "tid-%d", (int)val); break;
	case KEY_CPU: snprintf(key, len, "cpu-%d", (int)val); break;
	case KEY_ID: snprintf(key, len, "id-0x%02x", (int)val); break;
	default: snprintf(key, len, "unknown"); break;
	}
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

/* The first open creates the file (O_EXCL: nobody else's, not even a link to it; with
 * overwrite, an existing regular file is truncated); later ones append to what we made. */
static FILE *open_file(struct tc_streams *s, const char *name, bool again, struct tc_err *e)
{
	int flags = O_WRONLY | O_NOFOLLOW | O_CLOEXEC, fd;
	FILE *f;

	flags |= again ? O_APPEND : s->overwrite ? O_CREAT | O_TRUNC : O_CREAT | O_EXCL;
	fd = openat(s->dfd, name, flags, 0666);
	if (fd < 0) {
		struct stat st;
		int err = errno;

		if (!fstatat(s->dfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
			tc_err_set(e, 0, "%s/%s is a symbolic link: not writing through it", s->dir,
				   name);
		else if (err == EEXIST)
			tc_err_set(e, 0, "%s/%s appeared while writing (another writer in %s?)",
				   s->dir, name, s->dir);
		else
			tc_err_sys(e, err, "cannot open %s/%s", s->dir, name);
		return NULL;
	}
	if (!(f = fdopen(fd, again ? "a" : "w"))) {
		tc_err_sys(e, errno, "cannot open %s/%s", s->dir, name);
		close(fd);
	}
	return f;
}

static struct stream *get(struct tc_streams *s, int kind, long long val, struct tc_err *e)
{
	struct stream *st = NULL;
	char name[64];

	/* the last record's stream, the usual case, else every one */
	if (s->n && s->v[s->last].kind == kind && s->v[s->last].val == val)
		st = &s->v[s->last];
	for (size_t i = 0; i < s->n && !st; i++)
		if (s->v[i].kind == kind && s->v[i].val == val)
			st = &s->v[i];
	if (!st) {
		if (tc_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v))) {
			tc_err_sys(e, ENOMEM, "per-thread streams");
			return NULL;
		}
		st = &s->v[s->n++];
		memset(st, 0, sizeof(*st));
		st->kind = kind;
		st->val = val;
		key_name(kind, val, st->key, sizeof(st->key));
	}
	s->last = (size_t)(st - s->v);
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
	snprintf(name, sizeof(name), "%s.%s", st->key, s->json ? "jsonl" : "txt");
	st->f = open_file(s, name, st->created, e);
	if (!st->f)
		return NULL;
	st->created = true;
	s->nopen++;
	return st;
}

/* Every record goes through the one writer (s->like: what it keeps of symbols and of the
 * last record serves the next, whatever its stream), batched: its buffer holds the
 * records of one stream, the last record's, and goes to that stream's file when full or
 * when a record of another stream comes (before any file may be closed). */
int tc_streams_write(struct tc_streams *s, const struct tc_rec *r, struct tc_err *e)
{
	struct stream *st;
	long long val;
	int kind = kind_of(r, &val);

	st = s->n ? &s->v[s->last] : NULL;
	if (!st || st->kind != kind || st->val != val || !st->f) {
		tc_listing_flush(&s->like);
		if (!(st = get(s, kind, val, e)))
			return -1;
		s->like.f = st->f;
		s->like.j.f = st->f;
	}
	tc_listing_write(&s->like, r);
	return 0;
}

int tc_streams_close(struct tc_streams *s, unsigned *n, struct tc_err *e)
{
	int ret = 0;

	if (!s)
		return 0;
	tc_listing_flush(&s->like);	/* to the last record's stream */
	s->like.f = NULL;
	s->like.j.f = NULL;
	tc_listing_fini(&s->like);
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].f)
			close_one(s, &s->v[i]);
	if (n)
		*n = (unsigned)s->n;
	if (s->werr)
		ret = tc_err_sys(e, s->werr, "writing per-thread streams in %s", s->dir);
	close(s->dfd);
	free(s->v);
	free(s->dir);
	free(s);
	return ret;
}
