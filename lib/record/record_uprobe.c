#include "lib/record/record_uprobe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/util/grow.h"
#include "lib/util/sysfs.h"

/* One command line into uprobe_events, appended (O_TRUNC would clear every probe). */
static int probe_cmd(const char *tracefs, const char *cmd, struct tc_err *e)
{
	char p[PATH_MAX];
	size_t n = strlen(cmd);
	int fd, err = 0;

	tc_sysfs_pathf(p, sizeof(p), "%s/uprobe_events", tracefs);
	fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return tc_err_sys(e, errno, "uprobe: cannot open %s (CONFIG_UPROBE_EVENTS, root)",
				  p);
	if (write(fd, cmd, n) != (ssize_t)n)
		err = errno ? errno : EIO;
	close(fd);
	if (err)
		return tc_err_sys(e, err, "uprobe: %s refused '%.*s'", p, (int)n - 1, cmd);
	return 0;
}

int tc_record_uprobe_tp_add(const char *tracefs, const char *group, const char *event,
		     const char *path, uint64_t off, uint64_t *id, struct tc_err *e)
{
	char cmd[PATH_MAX + 128], p[PATH_MAX];

	if (!tracefs || !*tracefs)
		return tc_err_set(e, ENOENT, "uprobe on %s: a traced command's threads inherit it "
				  "through tracefs, which is not mounted (mount -t tracefs nodev "
				  "/sys/kernel/tracing)", path);
	if (strpbrk(path, " \t\n"))
		return tc_err_set(e, EINVAL, "uprobe on '%s': tracefs's uprobe_events cannot take "
				  "a path with white space", path);
	snprintf(cmd, sizeof(cmd), "p:%s/%s %s:0x%llx\n", group, event, path,
		 (unsigned long long)off);
	if (probe_cmd(tracefs, cmd, e))
		return -1;
	tc_sysfs_pathf(p, sizeof(p), "%s/events/%s/%s/id", tracefs, group, event);
	if (tc_sysfs_read_u64(p, 10, id, e)) {
		tc_record_uprobe_tp_del(tracefs, group, event, NULL);
		return -1;
	}
	return 0;
}

int tc_record_uprobe_tp_del(const char *tracefs, const char *group, const char *event,
		     struct tc_err *e)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "-:%s/%s\n", group, event);
	return probe_cmd(tracefs, cmd, e);
}

/* The "p:GROUP/EVENT ..." lines of uprobe_events whose record (GROUP's PID) is gone. */
int tc_record_uprobe_reap(const char *tracefs, unsigned *removed, int *pid_seen, struct tc_err *e)
{
	struct stale {
		int pid;
		char ev[64];
	} *v = NULL;
	char p[PATH_MAX], line[PATH_MAX + 128];
	size_t n = 0, cap = 0;
	FILE *f;

	*removed = 0;
	*pid_seen = 0;
	tc_sysfs_pathf(p, sizeof(p), "%s/uprobe_events", tracefs);
	if (!(f = fopen(p, "re")))
		return tc_err_sys(e, errno, "uprobe: cannot read %s", p);
	while (fgets(line, sizeof(line), f)) {
		struct stale x;
		int len = 0;

		if (sscanf(line, "p:" TC_UPROBE_GROUP "%d/%63[^ \n]%n", &x.pid, x.ev, &len) != 2 ||
		    !len || x.pid <= 0 || x.pid == (int)getpid() || kill(x.pid, 0) == 0 ||
		    errno != ESRCH)
			continue;
		if (tc_grow((void **)&v, &cap, n + 1, sizeof(*v))) {
			fclose(f);
			free(v);
			return tc_err_set(e, ENOMEM, "out of memory");
		}
		v[n++] = x;
		*pid_seen = x.pid;
	}
	fclose(f);
	/* One in use elsewhere is refused (EBUSY): it is not ours to force. */
	for (size_t i = 0; i < n; i++) {
		char group[32];

		snprintf(group, sizeof(group), TC_UPROBE_GROUP "%d", v[i].pid);
		if (!tc_record_uprobe_tp_del(tracefs, group, v[i].ev, NULL))
			(*removed)++;
	}
	free(v);
	return 0;
}
