#include "decoders/coresight/cs_branches.h"

#include "decoders/coresight/etm_ocsd.h"

static void branch(const struct tc_rec *r, uint64_t from, uint64_t to, int pid, int tid,
		   tc_csb_emit_fn emit, void *ctx)
{
	struct tc_rec b;

	tc_etm_ocsd_rec_init(&b, TC_REC_BRANCH, r->id, r->cpu, pid, tid, r->offset);
	b.start = from;
	b.end = to;
	emit(ctx, &b);
}

void tc_cs_branches_feed(struct tc_cs_branches *b, const struct tc_rec *r, tc_csb_emit_fn emit,
			 void *ctx)
{
	tc_cs_branches_feed_as(b, r, r->pid, r->tid, emit, ctx);
}

void tc_cs_branches_feed_as(struct tc_cs_branches *b, const struct tc_rec *r, int pid, int tid,
			    tc_csb_emit_fn emit, void *ctx)
{
	switch (r->type) {
	case TC_REC_RANGE:
		if (b->prev == TC_CS_BRANCHES_GAP)
			branch(r, 0, r->start, pid, tid, emit, ctx);
		else if (b->prev == TC_CS_BRANCHES_RANGE && b->prev_taken)
			branch(r, b->prev_last, r->start, pid, tid, emit, ctx);
		b->prev = TC_CS_BRANCHES_RANGE;
		/* A64 and A32 are 4 bytes; OpenCSD gives the size, T32 needs it */
		b->prev_last = r->end - (r->last_size ? r->last_size : 4);
		b->prev_taken = r->last_taken;
		break;
	case TC_REC_EXCEPTION:
	case TC_REC_EXCEPTION_RET:
		/* the range before an exception (or its return) ends in a branch */
		if (b->prev == TC_CS_BRANCHES_RANGE)
			b->prev_taken = true;
		break;
	case TC_REC_EOT:
		/* perf ends its decode without an end-of-trace element: no branch out */
		b->prev = TC_CS_BRANCHES_GAP;
		break;
	case TC_REC_TRACE_ON:
	case TC_REC_NO_SYNC:
		if (b->prev == TC_CS_BRANCHES_RANGE)
			branch(r, b->prev_last, 0, pid, tid, emit, ctx);
		b->prev = TC_CS_BRANCHES_GAP;
		break;
	default:
		break;
	}
}
