/* Guest workload for the AUX pause/resume triggers (make test-vm on Linux 6.13+). Pinned to
 * one CPU (a trigger pauses or resumes the AUX event of the CPU it fires on), it spins MS
 * milliseconds, then N times: calls tc_resume_here(), spins MS ms, calls tc_pause_here(),
 * spins MS ms. Triggers go on the two functions (uprobes: --resume-on pr_work:tc_resume_here
 * --pause-on pr_work:tc_pause_here) or on the system call each makes (tracepoints
 * syscalls:sys_enter_getppid, syscalls:sys_enter_getpgrp); a tracer that honours them sees
 * about N*MS ms of trace out of (2N+1)*MS. Usage: pr_work N MS CPU */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static void spin(long ms)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 10000; i++)
			sink++;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

/* Not inlined, not merged: each call is one uprobe hit. */
__attribute__((noinline, used)) void tc_resume_here(int i)
{
	sink += (unsigned long)i + (unsigned long)syscall(SYS_getppid);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, used)) void tc_pause_here(int i)
{
	sink += (unsigned long)i * 3 + (unsigned long)syscall(SYS_getpgrp);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	long ms = argc > 2 ? atol(argv[2]) : 200;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(argc > 3 ? atoi(argv[3]) : 1, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("pr_work: sched_setaffinity");
	spin(ms);
	for (int i = 0; i < n; i++) {
		tc_resume_here(i);
		spin(ms);
		tc_pause_here(i);
		spin(ms);
	}
	return 0;
}
