/* Guest workload for the LOST check: a burst of side-band (an executable mapping and its
 * unmapping N times, a fork every 50th), started and ended by files in DIR so that the
 * recorder can be stopped around it: creates DIR/ready (the recorder has its events open
 * once it let the workload run), waits for DIR/go, bursts, creates DIR/done, waits for
 * DIR/cont, then maps a few more times on every CPU in turn and exits 0: the kernel writes a
 * ring's LOST record only in front of the next record that ring takes, so a CPU that saw no
 * more side-band would never tell of its losses. Usage: sb_work N DIR [strand]
 *
 * strand: the opposite, on purpose: run on the first allowed CPU from the start through the
 * burst, move to the last one before creating DIR/done, and exit from there without mapping
 * again: the first CPU's ring never takes another record, so the kernel writes no LOST record
 * for its losses (only its PERF_FORMAT_LOST count has them). Exits 3 with one CPU allowed. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void wait_for(const char *dir, const char *name)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	for (int i = 0; i < 6000 && access(p, F_OK); i++)
		usleep(10000);
}

static void touch(const char *dir, const char *name)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	close(open(p, O_CREAT | O_WRONLY, 0644));
}

static void burst(int fd, int n)
{
	for (int i = 0; i < n; i++) {
		void *m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

		if (m != MAP_FAILED)
			munmap(m, 4096);
		if (i % 50 == 49) {
			pid_t c = fork();

			if (!c)
				_exit(0);
			if (c > 0)
				waitpid(c, NULL, 0);
		}
	}
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3000, fd = open("/proc/self/exe", O_RDONLY);
	const char *dir = argc > 2 ? argv[2] : ".";

	int strand = argc > 3 && !strcmp(argv[3], "strand"), first = -1, last = -1;
	cpu_set_t allowed;

	if (fd < 0 || sched_getaffinity(0, sizeof(allowed), &allowed))
		return 1;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &allowed)) {
			first = first < 0 ? cpu : first;
			last = cpu;
		}
	if (strand && (first == last || pin(first)))
		return 3;	/* one CPU: nowhere to move to */
	touch(dir, "ready");
	wait_for(dir, "go");
	burst(fd, n);
	if (strand && pin(last))
		return 1;
	touch(dir, "done");
	wait_for(dir, "cont");
	if (strand)
		return 0;
	for (int cpu = 0; cpu < CPU_SETSIZE && cpu < sysconf(_SC_NPROCESSORS_ONLN); cpu++) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (!sched_setaffinity(0, sizeof(set), &set))
			burst(fd, 10);
	}
	return 0;
}
