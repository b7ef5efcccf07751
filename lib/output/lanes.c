/* The listing made on the decoding threads; see lanes.h. One listing per lane writes into
 * blocks of its own, handed over as they are (a block that fills up as a piece of its own)
 * and written out from there in order, each block let go of once its last bytes are.
 * Beyond what a block holds (one record longer than the room left) the listing's FILE
 * keeps the bytes in more, handed over whole. */
#include "lib/output/lanes.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lib/util/blockpool.h"

#define LANE_BLOCK (256u << 10)
#define LANE_BLOCK_MIN (32u << 10)	/* less room left: the next take starts a new block */
#define LANE_IOV 512
#define LANE_PIECES 64

struct lane_piece {
	const char *bytes;
	size_t n;
	char *block;
};

struct lane_listing {
	struct tc_listing l;
	struct tc_lanes *ls;
	FILE *f;
	/* the listing's buffer: block + at, cap bytes; none until the first take has been
	 * (the listing's own buffer, copied out: a short lane holds no block) */
	char *block;
	bool took;
	char *more;
	size_t len, cap;
	const uint64_t *space;
	/* blocks that filled up since the last take, with their bytes not yet taken */
	struct lane_piece pieces[LANE_PIECES];
	size_t npieces, piece0;
	bool finished;			/* lane_finish: the next take gives the block too */
};

/* The bytes put and not yet written, and the blocks to let go of once they are. */
struct tc_lanes {
	struct tc_lanes_opts o;
	tc_comm_fn comm;
	void *comm_ctx;
	struct tc_jobs_writer w;
	struct iovec v[LANE_IOV];
	void *blocks[LANE_IOV];
	size_t nv, nb;
	bool failed;			/* a write failed: the FILE's own error tells it */
	/* the lanes' blocks: the lanes take, the caller's thread gives back once written */
	struct tc_blockpool *bp;
};

static ssize_t lane_more(void *c, const char *buf, size_t n)
{
	struct lane_listing *ll = c;

	if (ll->len + n > ll->cap) {
		size_t cap = ll->cap ? ll->cap : 4096;
		char *m;

		while (cap < ll->len + n)
			cap *= 2;
		if (!(m = realloc(ll->more, cap)))
			return 0;	/* a write error: the bytes are lost (reported) */
		ll->more = m;
		ll->cap = cap;
	}
	memcpy(ll->more + ll->len, buf, n);
	ll->len += n;
	return (ssize_t)n;
}

/* Write what was put, in order, then let go of the blocks. */
void tc_lanes_flush(struct tc_lanes *o)
{
	struct iovec *v = o->v;
	size_t nv = o->nv;

	fflush(o->o.f);
	while (nv && !o->failed) {
		ssize_t w = writev(o->o.fd, v, (int)nv);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			/* through the FILE: its error flag then says so */
			for (size_t i = 0; i < nv; i++)
				fwrite(v[i].iov_base, 1, v[i].iov_len, o->o.f);
			fflush(o->o.f);
			o->failed = true;
			break;
		}
		for (size_t k = (size_t)w; nv && k >= v->iov_len; v++, nv--)
			k -= v->iov_len, w = (ssize_t)k;
		if (nv && w) {
			v->iov_base = (char *)v->iov_base + w;
			v->iov_len -= (size_t)w;
		}
	}
	for (size_t i = 0; i < o->nb; i++)
		if ((uintptr_t)o->blocks[i] & 1)	/* a lane's more */
			free((void *)((uintptr_t)o->blocks[i] & ~(uintptr_t)1));
		else
			tc_blockpool_put(o->bp, o->blocks[i]);
	o->nv = o->nb = 0;
}

static bool lane_usable(void *ctx)
{
	(void)ctx;
	return true;
}

static const uint64_t *lane_space(void *ctx)
{
	return ((struct lane_listing *)ctx)->space;
}

/* A block for the listing to write into (the FILE takes what does not fit). */
static bool lane_block(struct lane_listing *ll)
{
	if (!(ll->block = tc_blockpool_get(ll->ls->bp)))
		return false;
	ll->l.j.out = ll->block;
	ll->l.j.cap = LANE_BLOCK;
	ll->l.j.len = 0;
	return true;
}

static void lane_close(void *w)
{
	struct lane_listing *ll = w;

	if (!ll)
		return;
	if (ll->ls && ll->block)
		tc_lanes_flush(ll->ls);	/* its block may hold bytes put, not written */
	ll->l.j.len = 0;
	for (; ll->piece0 < ll->npieces; ll->piece0++)
		tc_blockpool_put(ll->ls->bp, ll->pieces[ll->piece0].block);
	tc_listing_fini(&ll->l);
	if (ll->f)
		fclose(ll->f);
	if (ll->ls)
		tc_blockpool_put(ll->ls->bp, ll->block);
	free(ll->more);
	free(ll);
}

static void *lane_open(void *ctx, int (*sym)(void *sym_ctx, int pid, uint64_t addr,
					     struct tc_images_sym *s),
		       void *sym_ctx, const uint64_t *space)
{
	struct tc_lanes *ls = ctx;
	struct lane_listing *ll = calloc(1, sizeof(*ll));

	if (!ll || !(ll->f = fopencookie(ll, "w", (cookie_io_functions_t){ .write = lane_more })))
		goto fail;
	setvbuf(ll->f, NULL, _IONBF, 0);
	tc_listing_init(&ll->l, ll->f, ls->o.json);
	ll->l.sym = sym;
	ll->l.sym_ctx = sym_ctx;
	ll->l.comm = ls->comm;
	ll->l.comm_ctx = ls->comm_ctx;
	ll->l.fields = ls->o.fields;
	ll->space = space;
	ll->ls = ls;
	if (tc_listing_keep_syms(&ll->l, lane_space, ll))
		goto fail;
	tc_listing_batch(&ll->l, true);
	return ll;
fail:
	lane_close(ll);
	return NULL;
}

static void lane_write(void *w, const struct tc_rec *r)
{
	struct lane_listing *ll = w;
	struct tc_json *j = &ll->l.j;

	/* a lane that goes on after its first take writes into blocks from then on */
	if (__builtin_expect(!ll->block, 0)) {
		if (ll->took && !j->len && !ll->len) {
			lane_block(ll);	/* no memory: on in the listing's own buffer */
		} else if (j->cap - j->len < LANE_BLOCK_MIN && !ll->len) {
			/* its own buffer nearly full before the first take: on in a block, not
			 * in the FILE's (grown by doubling, copied, fresh memory each time) */
			char *own = j->out;
			size_t n = j->len;

			if (lane_block(ll)) {
				memcpy(j->out, own, n);
				j->len = n;
			}
		}
	}
	tc_listing_write(&ll->l, r);
	/* a block nearly full goes to the pieces the next take hands over, and a new one
	 * takes the records after (else they would go to the FILE, copied) */
	if (__builtin_expect(j->cap - j->len < LANE_BLOCK_MIN, 0) && ll->block && !ll->len &&
	    ll->npieces < LANE_PIECES) {
		struct lane_piece pc = { j->out, j->len, ll->block };

		if (lane_block(ll))
			ll->pieces[ll->npieces++] = pc;
		else
			ll->block = pc.block;	/* no memory: on in this one, then the FILE */
	}
}

static void lane_finish(void *w)
{
	((struct lane_listing *)w)->finished = true;
}

/* After lane_finish, the bytes of the block: the block with them, or, if none of its bytes
 * were handed over before (a short lane: nothing else holds it), a copy of them, the block
 * back to the pool for the next lane. */
static size_t lane_take_last(struct lane_listing *ll, const char **bytes, void **block)
{
	struct tc_json *j = &ll->l.j;
	size_t n = j->len;
	char *c;

	j->len = 0;
	*block = ll->block;
	if (j->out == ll->block && (!n || (c = malloc(n)))) {
		*block = NULL;
		if (n) {
			memcpy(c, ll->block, n);
			*bytes = c;
			*block = (void *)((uintptr_t)c | 1);	/* not a block: flush frees it */
		}
		tc_blockpool_put(ll->ls->bp, ll->block);
	}
	ll->block = NULL;
	return n;
}

/* The listing's bytes where they are, the block handed over with its last ones; or, if
 * some went to the FILE, all of them there. */
static size_t lane_take(void *w, const char **bytes, void **block)
{
	struct lane_listing *ll = w;
	struct tc_json *j = &ll->l.j;
	size_t n;

	*block = NULL;
	if (ll->piece0 < ll->npieces) {
		const struct lane_piece *pc = &ll->pieces[ll->piece0++];

		if (ll->piece0 == ll->npieces)
			ll->piece0 = ll->npieces = 0;
		*bytes = pc->bytes;
		*block = pc->block;
		return pc->n;
	}
	if (ll->len) {
		tc_listing_flush(&ll->l);
		*bytes = ll->more;
		*block = (void *)((uintptr_t)ll->more | 1);	/* not a block: flush frees it */
		n = ll->len;
		ll->more = NULL;
		ll->len = ll->cap = 0;
		return n;
	}
	if (!ll->block && j->len) {
		char *c = malloc(j->len);

		if (!c) {
			tc_json_flush(j);	/* through the FILE (lane_more keeps or loses them) */
			return lane_take(w, bytes, block);
		}
		n = j->len;
		memcpy(c, j->out, n);
		j->len = 0;
		ll->took = true;
		*bytes = c;
		*block = (void *)((uintptr_t)c | 1);	/* not a block: flush frees it */
		return n;
	}
	*bytes = j->out;
	n = j->len;
	if (ll->finished && ll->block)
		return lane_take_last(ll, bytes, block);
	j->out += n;
	j->cap -= n;
	j->len = 0;
	if (n && j->cap < LANE_BLOCK_MIN) {
		*block = ll->block;
		if (!lane_block(ll)) {
			/* no memory: the rest of this block, then the FILE's */
			ll->block = *block;
			*block = NULL;
		}
	}
	return n;
}

static void lane_put(void *ctx, const char *bytes, size_t n, uint64_t offset, void *block)
{
	struct tc_lanes *o = ctx;

	(void)offset;
	if (n)
		o->v[o->nv++] = (struct iovec){ (void *)bytes, n };
	if (block)
		o->blocks[o->nb++] = block;
	/* a block whole: written out now, so that it goes back to the lanes while its bytes
	 * are still in a cache (fresh memory costs a page fault per page, memory a fill) */
	if (block || o->nv == LANE_IOV)
		tc_lanes_flush(o);
}

struct tc_lanes *tc_lanes_new(const struct tc_lanes_opts *o)
{
	struct tc_lanes *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->o = *o;
	if (!(l->bp = tc_blockpool_new(LANE_BLOCK))) {
		free(l);
		return NULL;
	}
	l->w = (struct tc_jobs_writer){ .usable = lane_usable, .open = lane_open,
					.write = lane_write, .take = lane_take,
					.finish = lane_finish, .close = lane_close,
					.put = lane_put, .ctx = l };
	return l;
}

void tc_lanes_comm(struct tc_lanes *l, tc_comm_fn comm, void *ctx)
{
	l->comm = comm;
	l->comm_ctx = ctx;
}

const struct tc_jobs_writer *tc_lanes_writer(struct tc_lanes *l)
{
	return &l->w;
}

void tc_lanes_free(struct tc_lanes *l)
{
	if (!l)
		return;
	tc_lanes_flush(l);
	tc_blockpool_free(l->bp);
	free(l);
}
