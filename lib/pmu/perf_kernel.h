/* What the running kernel's perf_event_open accepts, and errno values turned into advice. */
#ifndef TC_LIB_PMU_PERF_KERNEL_H
#define TC_LIB_PMU_PERF_KERNEL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The running kernel's release (uname -r). */
void tc_perf_kernel_release(char *buf, size_t len);

/* Is release ("6.13.0-1-amd64") at least major.minor? 0 if it cannot be parsed. */
int tc_perf_kernel_at_least(const char *release, int major, int minor);

/* Open a software dummy event with aux_start_paused set and return the errno: EOPNOTSUPP
 * means the kernel knows the field (only AUX PMUs may start paused), EINVAL that it is a
 * reserved bit to this kernel. 0 if it opened (and was closed again). */
int tc_perf_kernel_probe_aux_action(void);

/* Verdict on AUX pause/resume from the release and the probe's errno: 1 usable; 0 not, with
 * why (naming the feature and the kernel) filled. */
int tc_perf_kernel_aux_pause_verdict(const char *release, int probe_err, char *why, size_t len);

/* Where perf_event_open was refused, for the message. */
struct tc_perf_kernel_open_ctx {
	const char *what;	/* "cs_etm event on cpu 2", "tracepoint sched:sched_switch" */
	const char *terms;	/* terms set on it ("timestamp=1,sinkid=0x...") or NULL */
	const char *suspect;	/* the term or field most likely refused, or NULL */
	int paranoid;		/* kernel.perf_event_paranoid, INT_MIN if unknown */
	int cpu_wide;		/* opened for all tasks on a CPU (pid -1) */
};

/* Read kernel.perf_event_paranoid from path (NULL: /proc/sys/kernel/perf_event_paranoid);
 * INT_MIN if it cannot be read. */
int tc_perf_kernel_paranoid(const char *path);

/* The effective capabilities (CapEff) from a /proc/PID/status file (NULL: the caller's);
 * 0 if it cannot be read. */
uint64_t tc_perf_kernel_cap_eff(const char *status_path);

/* May a caller with these capabilities trace the kernel at this paranoid level? The kernel
 * allows exclude_kernel = 0 at paranoid 1 or below, or with CAP_PERFMON or CAP_SYS_ADMIN;
 * an unknown level (INT_MIN) counts as the Debian default, 2. */
bool tc_perf_kernel_may_trace_kernel(int paranoid, uint64_t cap_eff);

/* One sentence (or two) on why opening failed with err and what to do about it. */
void tc_perf_kernel_open_msg(int err, const struct tc_perf_kernel_open_ctx *c, char *buf,
			     size_t len);

#endif
