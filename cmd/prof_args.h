/* Options report and diff share (cmd/report.c): --sort and --limit words into a profile view,
 * and the analysis over one decoded input. */
#ifndef TC_CMD_PROF_ARGS_H
#define TC_CMD_PROF_ARGS_H

#include "cmd/tracectl.h"
#include "decoders/rec_filter.h"
#include "decoders/session.h"
#include "lib/analysis/analysis.h"

/* "self", "total", "calls", "name"; -1 for anything else. */
int tc_report_sort_parse(const char *s, enum tc_profile_sort *out);
/* A count >= 0 (limit, tid, cpu); -1 when not a number. */
int tc_report_parse_count(const char *s, long *out);

/* --sort (sort true) or --limit into view; the usage error's code for a bad word. */
int tc_report_view_opt(const struct tc_cmd *cmd, bool sort, const char *arg,
		       struct tc_profile_view *view);

/* Decode a (input, symfs) into the analysis o describes (o->sym, dso, comm are filled in)
 * and finish it; fatal when the analysis cannot be completed. *out keeps the analysis and
 * *dec the session (its symbols are the profile's strings) for the caller to free. Returns
 * the number of problems the decode warned about. */
int tc_report_run(const struct tc_session_opts *a, struct tc_analysis_opts *o,
		  struct tc_rec_filter *filter, struct tc_analysis **out,
		  struct tc_session **dec);

/* The record filters decode, report and diff share (cmd/decode.c): one option's value
 * into *f (made on first use); the usage error's code for a bad value. */
int tc_decode_filter_opt(const struct tc_cmd *cmd, struct tc_rec_filter **f,
			 enum tc_rec_filter_key k, const char *arg);

#endif
