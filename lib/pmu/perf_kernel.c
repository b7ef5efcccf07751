#include "lib/pmu/perf_kernel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/pmu/perf_attr_ext.h"

void tc_perf_kernel_release(char *buf, size_t len)
{
	struct utsname u;

	if (uname(&u))
		snprintf(buf, len, "(unknown)");
	else
		snprintf(buf, len, "%s", u.release);
}

int tc_perf_kernel_at_least(const char *release, int major, int minor)
{
	int ma, mi;

	if (!release || sscanf(release, "%d.%d", &ma, &mi) != 2)
		return 0;
	return ma > major || (ma == major && mi >= minor);
}

int tc_perf_kernel_probe_aux_action(void)
{
	struct tc_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.attr.type = PERF_TYPE_SOFTWARE;
	a.attr.config = PERF_COUNT_SW_DUMMY;
	a.attr.size = TC_ATTR_SIZE_VER8;
	a.attr.disabled = 1;
	a.attr.exclude_kernel = 1;	/* allowed at any perf_event_paranoid level */
	tc_attr_set_aux_action(&a, TC_AUX_START_PAUSED);
	fd = syscall(SYS_perf_event_open, &a.attr, 0, -1, -1, 0);
	if (fd >= 0) {
		close((int)fd);
		return 0;
	}
	return errno;
}

int tc_perf_kernel_aux_pause_verdict(const char *release, int probe_err, char *why, size_t len)
{
	/* The probe decides (a distribution may backport); the release is named either way. */
	if (probe_err == 0 || probe_err == EOPNOTSUPP)
		return 1;
	if (probe_err == EINVAL || probe_err == E2BIG)
		snprintf(why, len,
			 "AUX pause/resume (--start-paused, --pause-on, --resume-on) needs "
			 "Linux 6.13 or later; the running kernel %s does not know "
			 "perf_event_attr.aux_action%s",
			 release,
			 tc_perf_kernel_at_least(release, 6, 13)
				 ? " (its perf_event_open refused it)"
				 : "");
	else
		snprintf(why, len, "AUX pause/resume (--start-paused, --pause-on, --resume-on): "
			 "could not probe the running kernel %s: perf_event_open: %s", release,
			 strerror(probe_err));
	return 0;
}

int tc_perf_kernel_paranoid(const char *path)
{
	FILE *f = fopen(path ? path : "/proc/sys/kernel/perf_event_paranoid", "r");
	int v;

	if (!f)
		return INT_MIN;
	if (fscanf(f, "%d", &v) != 1)
		v = INT_MIN;
	fclose(f);
	return v;
}

uint64_t tc_perf_kernel_cap_eff(const char *status_path)
{
	FILE *f = fopen(status_path ? status_path : "/proc/self/status", "r");
	char line[256];
	unsigned long long v = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &v) == 1)
			break;
	fclose(f);
	return v;
}

#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38

bool tc_perf_kernel_may_trace_kernel(int paranoid, uint64_t cap_eff)
{
	if (cap_eff & ((1ULL << CAP_SYS_ADMIN_BIT) | (1ULL << CAP_PERFMON_BIT)))
		return true;
	return paranoid != INT_MIN && paranoid <= 1;
}

static void paranoid_advice(const struct tc_perf_kernel_open_ctx *c, char *buf, size_t len)
{
	const char *need = "";

	if (c->paranoid == INT_MIN) {
		snprintf(buf, len, "kernel.perf_event_paranoid could not be read");
		return;
	}
	if (c->paranoid >= 3)
		need = " (3 refuses every perf_event_open without CAP_PERFMON)";
	else if (c->paranoid >= 1 && c->cpu_wide)
		need = " (above 0 refuses CPU-wide events without CAP_PERFMON)";
	else if (c->paranoid >= 2)
		need = " (2 allows only user-space measurement of your own tasks)";
	snprintf(buf, len, "kernel.perf_event_paranoid is %d%s", c->paranoid, need);
}

void tc_perf_kernel_open_msg(int err, const struct tc_perf_kernel_open_ctx *c, char *buf,
			     size_t len)
{
	const char *what = c && c->what ? c->what : "the event";
	char adv[160];

	switch (err) {
	case EACCES:
	case EPERM:
		paranoid_advice(c, adv, sizeof(adv));
		snprintf(buf, len, "no permission to open %s (%s): %s; run as root, give tracectl "
			 "CAP_PERFMON (setcap cap_perfmon,cap_ipc_lock+ep), or lower it with "
			 "'sysctl kernel.perf_event_paranoid=-1'", what, strerror(err), adv);
		break;
	case EINVAL:
		if (c && c->suspect)
			snprintf(buf, len, "the kernel refused %s as invalid (EINVAL): %s is not "
				 "accepted by this PMU or kernel%s%s", what, c->suspect,
				 c->terms ? "; terms set: " : "", c->terms ? c->terms : "");
		else
			snprintf(buf, len,
				 "the kernel refused %s as invalid (EINVAL): a term or "
				 "field is not accepted by this PMU or kernel%s%s",
				 what, c && c->terms ? "; terms set: " : "",
				 c && c->terms ? c->terms : "");
		break;
	case E2BIG:
		snprintf(buf, len, "the kernel refused %s (E2BIG): it uses perf_event_attr fields "
			 "newer than this kernel%s%s", what, c && c->suspect ? " (" : "",
			 c && c->suspect ? c->suspect : "");
		if (c && c->suspect)
			strncat(buf, ")", len - strlen(buf) - 1);
		break;
	case EOPNOTSUPP:
		snprintf(buf, len, "%s is not supported by its PMU (EOPNOTSUPP)%s%s", what,
			 c && c->suspect ? ": " : "", c && c->suspect ? c->suspect : "");
		break;
	case EMFILE:
	case ENFILE:
		snprintf(buf, len, "too many open files opening %s (%s): tracectl opens one file "
			 "per event and CPU; raise the limit (ulimit -n) or trace fewer CPUs (-C)",
			 what, strerror(err));
		break;
	case ENOSPC:
		snprintf(
			buf, len,
			"no room to open %s (ENOSPC): the PMU's address filters, "
			"breakpoints or probe slots are used up; use fewer filters or triggers, or "
			"stop the other session using them",
			what);
		break;
	case EBUSY:
		snprintf(buf, len, "%s is busy (EBUSY): another session holds the PMU or its sink "
			 "exclusively", what);
		break;
	case ENOENT:
	case ENODEV:
		snprintf(buf, len, "%s does not exist on this kernel (%s)", what, strerror(err));
		break;
	case ESRCH:
		snprintf(buf, len, "no such process for %s (ESRCH)", what);
		break;
	default:
		snprintf(buf, len, "could not open %s: %s", what, strerror(err));
	}
}
