/* Demux + per-ID decoder table; see cs_session.h. */
#include "decoders/coresight/cs_session.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "decoders/coresight/cs_frame.h"
#include "lib/util/diag.h"

#define NIDS 128

struct tc_cs_session {
	unsigned what;
	tc_etm_emit_fn emit;
	tc_etm_mem_fn mem;
	void *ctx;
	struct tc_etm_ocsd *dec[NIDS];
	uint64_t id_bytes[NIDS];
	uint8_t raw_id;			/* the first source added: where RAW blocks go */
	int nsources;
	struct tc_cs_frame *csf;
	enum tc_cs_session_format csf_fmt;
	uint64_t fed;			/* bytes given to csf so far: its offsets count from 0 */
	uint64_t block_start, block_base;	/* csf offset and input offset of this block */
};

struct tc_cs_session *tc_cs_session_new(unsigned what, tc_etm_emit_fn emit, tc_etm_mem_fn mem,
					void *ctx, struct tc_err *e)
{
	struct tc_cs_session *s = calloc(1, sizeof(*s));

	if (!s) {
		tc_err_sys(e, ENOMEM, "decode session");
		return NULL;
	}
	s->what = what;
	s->emit = emit;
	s->mem = mem;
	s->ctx = ctx;
	return s;
}

void tc_cs_session_free(struct tc_cs_session *s)
{
	if (!s)
		return;
	for (int i = 0; i < NIDS; i++)
		tc_etm_ocsd_free(s->dec[i]);
	tc_cs_frame_free(s->csf);
	free(s);
}

int tc_cs_session_add_source(struct tc_cs_session *s, const struct tc_etm_cfg *cfg,
			     struct tc_err *e)
{
	uint8_t id = cfg->trace_id;

	if (id >= NIDS || s->dec[id])
		return tc_err_set(e, 0, "trace ID 0x%02x: %s", id,
				  id >= NIDS ? "not a valid trace ID" : "two sources use it");
	s->dec[id] = tc_etm_ocsd_new(cfg, s->what, s->emit, s->mem, s->ctx, e);
	if (!s->dec[id])
		return -1;
	if (!s->nsources++)
		s->raw_id = id;
	return 0;
}

static void on_data(void *ctx, uint8_t id, const uint8_t *data, size_t len, uint64_t off)
{
	struct tc_cs_session *s = ctx;

	s->id_bytes[id] += len;
	if (s->dec[id])
		tc_etm_ocsd_feed(s->dec[id], s->block_base + (off - s->block_start), data, len);
}

static void on_reset(void *ctx, uint64_t off)
{
	struct tc_cs_session *s = ctx;

	tc_cs_session_reset(s, s->block_base + (off - s->block_start));
}

void tc_cs_session_feed(struct tc_cs_session *s, const uint8_t *buf, size_t len,
			uint64_t base_offset, enum tc_cs_session_format fmt)
{
	if (fmt == TC_CS_SESSION_RAW) {
		if (s->nsources) {
			s->id_bytes[s->raw_id] += len;
			tc_etm_ocsd_feed(s->dec[s->raw_id], base_offset, buf, len);
		}
		return;
	}
	if (s->csf && s->csf_fmt != fmt) {
		tc_cs_frame_free(s->csf);
		s->csf = NULL;
	}
	if (!s->csf) {
		unsigned flags = fmt == TC_CS_SESSION_TPIU
					 ? TC_CS_FRAME_FSYNCS
					 : TC_CS_FRAME_MEM_ALIGN | TC_CS_FRAME_RESET_4X_FSYNC;

		s->csf = tc_cs_frame_new(flags, on_data, on_reset, s, NULL);
		if (!s->csf)
			return;	/* only fails on bad flags or no memory */
		s->csf_fmt = fmt;
		s->fed = 0;
	}
	s->block_start = s->fed;
	s->block_base = base_offset;
	tc_cs_frame_feed(s->csf, buf, len);
	tc_cs_frame_flush(s->csf);
	s->fed += len;
}

void tc_cs_session_flush(struct tc_cs_session *s)
{
	for (int i = 0; i < NIDS; i++)
		if (s->dec[i])
			tc_etm_ocsd_finish(s->dec[i]);
}

void tc_cs_session_reset(struct tc_cs_session *s, uint64_t offset)
{
	for (int i = 0; i < NIDS; i++)
		if (s->dec[i])
			tc_etm_ocsd_reset(s->dec[i], offset);
}

const struct tc_etm_ocsd_stats *tc_cs_session_stats(const struct tc_cs_session *s, uint8_t id)
{
	return id < NIDS && s->dec[id] ? tc_etm_ocsd_stats(s->dec[id]) : NULL;
}

uint64_t tc_cs_session_id_bytes(const struct tc_cs_session *s, uint8_t id)
{
	return id < NIDS ? s->id_bytes[id] : 0;
}

uint64_t tc_cs_session_errors(const struct tc_cs_session *s)
{
	uint64_t n = 0;

	for (int i = 0; i < NIDS; i++)
		if (s->dec[i])
			n += tc_etm_ocsd_stats(s->dec[i])->errors;
	return n;
}

const struct tc_cs_frame_stats *tc_cs_session_demux_stats(const struct tc_cs_session *s)
{
	return s->csf ? tc_cs_frame_stats(s->csf) : NULL;
}

void tc_cs_session_demux_diag(const struct tc_cs_session *s, struct tc_diag *diag)
{
	if (s->csf)
		tc_cs_frame_errors_to_diag(s->csf, diag);
}

void tc_cs_session_guard_diag(const struct tc_cs_session *s, struct tc_diag *diag)
{
	for (int i = 0; i < NIDS; i++) {
		const struct tc_etm_ocsd_stats *st = s->dec[i] ? tc_etm_ocsd_stats(s->dec[i]) : NULL;

		if (st && st->guarded)
			tc_diag_add(diag, "trace ID 0x%02x: %" PRIu64 " mispredict packet%s with no "
				    "speculative atom (corrupt trace; OpenCSD 1.3.3 crashes on "
				    "them), first at offset %" PRIu64 " (0x%" PRIx64 "): %s", i,
				    st->guarded, st->guarded > 1 ? "s" : "", st->guarded_first,
				    st->guarded_first,
				    s->what & TC_ETM_ELEMENTS ? "skipped, the ID resynchronised"
							      : "listed");
	}
}
