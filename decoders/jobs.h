/* Decoding with several threads (--jobs), output in the one-thread order: a pool of worker
 * threads runs tasks, each on a lane (a trace ID's decoder, a queue, a segment of trace),
 * and the lanes' output comes back to the caller's thread, which pulls it lane by lane in
 * whatever order the one-thread decode would have given it (the caller knows that order:
 * a demultiplexer's, a time heap's).
 *
 * - A lane runs its tasks one after the other, in the order submitted, never two at once,
 *   so a lane's state (its decoder) needs no lock; which thread runs a task may change.
 * - A task writes items (opaque bytes: serialised records and markers) with tc_jobs_put;
 *   the caller reads them with tc_jobs_next, in the order they were put.
 * - Buffering is bounded: a worker whose lane's unread output passes the budget waits
 *   until the caller has read some, unless its lane is the one the caller waits for. The
 *   caller's thread works too: it runs the task it waits for when every worker is busy,
 *   and helps with other ready tasks while the budget allows (unless tc_jobs_no_help).
 * Everything but tc_jobs_put is called from the one thread that made the pool. */
#ifndef TC_DECODERS_JOBS_H
#define TC_DECODERS_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoders/rec.h"

struct tc_jobs;
struct tc_jobs_out;

/* A task: runs with its argument and the lane's output. */
typedef void (*tc_jobs_run_fn)(void *arg, struct tc_jobs_out *out);

/* jobs: threads in all, the caller's included (so jobs - 1 workers; 0 or 1: none, every
 * task runs in the caller's thread when its output is wanted). budget: bytes of output
 * held unread before workers wait (0: a default of 16 MiB). NULL on ENOMEM. */
struct tc_jobs *tc_jobs_new(unsigned jobs, size_t nlanes, size_t budget);
/* Waits for running tasks, drops queued ones (their done callback still runs). */
void tc_jobs_free(struct tc_jobs *j);

/* Queue a task on lane; done (may be NULL) runs after it, on the thread that ran it (or
 * at tc_jobs_free if it never ran). -1 on ENOMEM (run is not called, done is). */
int tc_jobs_submit(struct tc_jobs *j, size_t lane, tc_jobs_run_fn run, void (*done)(void *arg),
		   void *arg);

/* From a running task: append one item to its lane's output. -1 on ENOMEM (the item is
 * lost; tc_jobs_failed says so). */
int tc_jobs_put(struct tc_jobs_out *o, const void *item, size_t len);

/* From a running task, after putting an item that stands for n bytes kept elsewhere (the
 * task's memory, handed over): they count against the budget as if put, until the caller
 * has read the item. */
void tc_jobs_charge(struct tc_jobs_out *o, size_t n);

/* tc_jobs_put without the copy: room for an item of len bytes, to fill before the next
 * call with this o; NULL on ENOMEM. */
void *tc_jobs_alloc(struct tc_jobs_out *o, size_t len);

/* Records in few bytes: an item of a record holds the words of it (struct tc_rec, 8 bytes
 * each, its pointers left out) that differ from the lane's previous record, then its name
 * and text, then extra bytes of the caller's. The putting task and the reader each keep a
 * previous record for the lane (zeroed to begin with, then left to these two calls).
 *
 * From a running task: put r, its first 4 bytes tag (the caller's: item kinds, flags; the
 * reader gets it back; other items of the lane begin with their own kinds), room for extra
 * bytes returned (NULL on ENOMEM: as tc_jobs_put, and prev is no longer the reader's). */
void *tc_jobs_put_rec(struct tc_jobs_out *o, struct tc_rec *prev, const struct tc_rec *r,
		      uint32_t tag, size_t extra);
/* The tag of an item (its first 4 bytes). */
uint32_t tc_jobs_tag(const void *item);
/* Read a record item into *prev (name and text point into the item, fields none); returns
 * its extra bytes (*extra_len of them). */
const void *tc_jobs_get_rec(const void *item, size_t len, struct tc_rec *prev,
			    size_t *extra_len);

/* From a running task that holds a lock the caller's thread may need: never wait for the
 * budget (what the task puts must then be bounded some other way). */
void tc_jobs_out_nowait(struct tc_jobs_out *o);

/* The lane's next item: 1 with *item (valid until the next call for this lane), 0 when
 * every task submitted to the lane so far has run and all its output was read. Runs or
 * waits for the lane's tasks as needed. */
int tc_jobs_next(struct tc_jobs *j, size_t lane, const void **item, size_t *len);

/* tc_jobs_next without waiting: -1 where it would wait for a task running (or about to
 * run) in a worker, and it runs no other lane's task meanwhile; it still runs the lane's
 * own next task where tc_jobs_next would. */
int tc_jobs_poll(struct tc_jobs *j, size_t lane, const void **item, size_t *len);

/* The caller's thread runs no task while there are workers: for tasks whose output is not
 * bounded (a task run there is read only once it is done, all of it held). Waiting for a
 * task no worker is free for, the workers that wait for the budget then go on. */
void tc_jobs_no_help(struct tc_jobs *j);

/* True if an item was lost for lack of memory. */
bool tc_jobs_failed(struct tc_jobs *j);

/* Where the caller's thread decodes a share of the work itself (pt_segment.c's turns):
 * that share, of TC_JOBS_SHARE_ONE, after a window of span ns in which it waited waited ns
 * for the workers' output and each worker idled idle ns. It moves towards the balance by
 * half their difference's part of the span, and stays between a quarter of one in jobs
 * (the threads in all) and three quarters (or one in jobs, where that is more). */
#define TC_JOBS_SHARE_ONE 1024u
unsigned tc_jobs_share_first(unsigned jobs);
unsigned tc_jobs_share_step(unsigned share, unsigned jobs, uint64_t waited, uint64_t idle,
			    uint64_t span);

/* A record writer whose formatting runs on the lanes: each lane formats its records into
 * bytes of its own (a writer per lane), and the caller's thread only writes those bytes
 * out, in the one-thread order. The command gives it where its records go to one plain
 * writer (nothing between the decoder and it that needs them in order: no filter, no
 * analysis); a decoder that cannot use it emits records as without it. */
struct tc_images_sym;
struct tc_jobs_writer {
	/* The caller's thread, before decoding: false when the records must come to the
	 * caller's thread after all (the decoder then emits them). */
	bool (*usable)(void *ctx);
	/* A lane's writer (called on the lane): sym (never NULL) answers symbols in the
	 * lane's address spaces, valid while *space stays the same (decoders/decoder.h's
	 * space op). NULL: out of memory (the decoder says so). */
	void *(*open)(void *ctx, int (*sym)(void *sym_ctx, int pid, uint64_t addr,
					    struct tc_images_sym *s),
		      void *sym_ctx, const uint64_t *space);
	void (*write)(void *w, const struct tc_rec *r);
	/* The bytes written since the last take (on the lane): handed over, not copied, so
	 * they stay valid until put has them written out; *block is NULL or the writer's
	 * memory that put lets go of once they are. They may come in pieces (blocks that
	 * filled up): the lane calls take until it gives nothing (0 bytes, block NULL). */
	size_t (*take)(void *w, const char **bytes, void **block);
	/* On the lane, after its last record (may be NULL): the takes after it hand over
	 * everything, the writer's memory with it, so that close may then run on the lane
	 * too. A lane done long before the caller's thread reaches it (thousands of short
	 * queues decoded ahead) then holds its bytes only, not a writer. */
	void (*finish)(void *w);
	/* The caller's thread, once the lane's last take is put; or the lane, after finish
	 * and the takes after it. */
	void (*close)(void *w);
	/* The caller's thread: bytes of one lane, in the one-thread order, and take's block;
	 * offset that of the last record in them (the input offset decoding has reached). */
	void (*put)(void *ctx, const char *bytes, size_t n, uint64_t offset, void *block);
	void *ctx;
};

#endif
