#include "cmd/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cmd/tracectl.h"

struct buf {
	uint64_t start, size, reached;	/* reached: bytes of it decoded so far */
};

struct tc_progress {
	struct buf *b;
	size_t n, cap;
	uint64_t total, done;
	double t0, last, delay;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct tc_progress *tc_progress_new(void)
{
	const char *ci = getenv("CI"), *delay = getenv("TRACECTL_PROGRESS_DELAY");
	struct tc_progress *p;

	if (tc_g.quiet || (ci && *ci) || !isatty(STDERR_FILENO))
		return NULL;
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;	/* no progress is no loss */
	p->t0 = now();
	p->delay = delay && *delay ? atof(delay) : 1.0;
	return p;
}

void tc_progress_buffer(struct tc_progress *p, uint64_t offset, uint64_t size)
{
	if (!p || !size)
		return;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct buf *b = realloc(p->b, cap * sizeof(*b));

		if (!b)
			return;
		p->b = b;
		p->cap = cap;
	}
	p->b[p->n++] = (struct buf){ offset, size, 0 };
	p->total += size;
}

static struct buf *find(struct tc_progress *p, uint64_t off)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (off < p->b[mid].start)
			hi = mid;
		else if (off >= p->b[mid].start + p->b[mid].size)
			lo = mid + 1;
		else
			return &p->b[mid];
	}
	return NULL;
}

static void draw(struct tc_progress *p, double t)
{
	bool small = p->total < 10 << 20;
	const double unit = small ? 1024.0 : 1024.0 * 1024.0;
	const char *u = small ? "KiB" : "MiB";
	double rate = p->done / (t - p->t0);

	fprintf(stderr, "\r\033[K[ decoding: %.1f of %.1f %s (%.0f%%), %.1f %s/s",
		p->done / unit, p->total / unit, u, 100.0 * p->done / p->total, rate / unit, u);
	if (rate > 0)
		fprintf(stderr, ", ETA %.0f s", (p->total - p->done) / rate);
	fputs(" ]", stderr);
	fflush(stderr);
	tc_g.progress_line = true;
	p->last = t;
}

void tc_progress_at(struct tc_progress *p, uint64_t offset)
{
	struct buf *b;
	double t;

	/* the session calls for every 256th record only (decoders/session.c) */
	if (!p || !p->total)
		return;
	if ((b = find(p, offset)) && offset - b->start > b->reached) {
		p->done += offset - b->start - b->reached;
		b->reached = offset - b->start;
	}
	t = now();
	if (t - p->t0 >= p->delay && t - p->last >= 0.25)
		draw(p, t);
}

void tc_progress_end(struct tc_progress *p)
{
	if (!p)
		return;
	if (tc_g.progress_line)
		fputs("\r\033[K", stderr);
	tc_g.progress_line = false;
	free(p->b);
	free(p);
}
