/* How decode, report and diff decode (--jobs, --decoder): their table rows and parsing,
 * kept once so the three commands say the same. */
#ifndef TC_CMD_RUN_OPTS_H
#define TC_CMD_RUN_OPTS_H

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/tracectl.h"
#include "decoders/session.h"

/* Two rows of an option table, with keys key and key + 1. */
#define TC_RUN_OPT_ROWS(key)                                                                 \
	{ "jobs", (key), 1, "N", "decode with N threads (default: the CPUs it may run on, "    \
	  "at most 16); the output is the same as with 1" },                                   \
	{ "decoder", (key) + 1, 1, "KIND", "fast (default: cached blocks) or reference (the "  \
	  "trace library's own full decoder, the fast path's oracle)" }

#define TC_RUN_JOBS_MAX 1024
/* The default's bound: the caller's thread, which puts the lanes' output in order, is
 * the limit long before (CoreSight: with two already), so more threads only cost memory
 * (each worker keeps caches of its own). */
#define TC_RUN_JOBS_DEFAULT_MAX 16

/* --jobs unless given: the CPUs this process may run on (its affinity, as nproc counts
 * them, so a CI job pinned to some CPUs of a large host uses those), else online ones. */
static inline unsigned tc_run_opt_jobs(void)
{
	cpu_set_t set;
	long n = 0;

	if (!sched_getaffinity(0, sizeof(set), &set))
		n = CPU_COUNT(&set);
	if (n < 1)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > TC_RUN_JOBS_DEFAULT_MAX ? TC_RUN_JOBS_DEFAULT_MAX : (unsigned)n;
}

/* 1 when key is one of the two (its value kept in o), 0 otherwise, or the usage error's
 * code for a bad value. */
static inline int tc_run_opt(const struct tc_cmd *cmd, int key, int base, const char *arg,
			     struct tc_session_opts *o, int *rc)
{
	unsigned long n;
	char *end;

	*rc = 0;
	if (key == base) {
		n = strtoul(arg, &end, 10);
		if (end == arg || *end || *arg == '-' || n < 1 || n > TC_RUN_JOBS_MAX)
			*rc = tc_msg_usage_error(cmd, "--jobs wants a number from 1 to 1024, not "
						 "'%s'", arg);
		o->jobs = (unsigned)n;
	} else if (key == base + 1) {
		if (!strcmp(arg, "reference"))
			o->reference = true;
		else if (!strcmp(arg, "fast"))
			o->reference = false;
		else
			*rc = tc_msg_usage_error(cmd, "--decoder is fast or reference, not '%s'",
						 arg);
	} else {
		return 0;
	}
	return 1;
}

#endif
