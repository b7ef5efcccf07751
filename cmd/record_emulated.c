/* tracectl record --pmu emulated: trace a command without trace hardware (lib/emulate/emu_pt.c for
 * x86-64 programs, lib/emulate/emu_etm.c for aarch64 ones under qemu-user). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd/record_emulated.h"
#include "cmd/tracectl.h"
#include "lib/emulate/qemu_run.h"

/* argv[0] as execv wants it: a path, looked up in PATH when it has no slash. */
static int which(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH"), *p, *end;

	if (strchr(name, '/'))
		return snprintf(out, size, "%s", name) < (int)size && !access(out, X_OK) ? 0 : -1;
	for (p = path ? path : "/usr/bin:/bin"; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		if (snprintf(out, size, "%.*s/%s", (int)(end - p), p, name) < (int)size &&
		    !access(out, X_OK))
			return 0;
	}
	return -1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* x86-64: QEMU with the plugin unless --emulator ptrace, or (with a warning naming what is
 * missing) when qemu-x86_64 or the plugin is not there and no --emulator was given. */
static int record_pt(struct tc_emu_opts *o, struct tc_emu_stats *st, struct tc_err *e)
{
	char path[PATH_MAX];
	struct tc_err why = { 0 };

	if (o->engine == TC_EMU_ENGINE_AUTO) {
		if (!tc_qemu_run_which("qemu-x86_64", path, sizeof(path), &why) &&
		    !tc_qemu_run_plugin(path, sizeof(path), &why))
			o->engine = TC_EMU_ENGINE_QEMU;
		else {
			tc_warning("%s; following the program with ptrace single-step instead "
				   "(~20 k instructions/s, its own code only)", why.msg);
			o->engine = TC_EMU_ENGINE_PTRACE;
		}
	}
	if (o->engine == TC_EMU_ENGINE_QEMU)
		return tc_emu_pt_qemu_record(o, st, e);
	return tc_emu_pt_record(o, st, e);
}

int do_record_emulated(struct tc_emu_opts *o, enum tc_emu_format fmt)
{
	char prog[PATH_MAX], old[PATH_MAX + 8];
	char *const *argv = o->argv;
	char **args;
	enum tc_emu_format elf_fmt;
	struct tc_emu_stats st;
	struct tc_err e = { 0 };
	double t0, secs;
	size_t n = 0;
	int rc;

	if (which(argv[0], prog, sizeof(prog)))
		tc_fatal("%s: command not found", argv[0]);
	if (tc_emu_format_of(prog, &elf_fmt, &e))
		tc_fatal("%s", e.msg);
	if (fmt != TC_EMU_AUTO && fmt != elf_fmt)
		tc_fatal("%s is an %s program: --format %s needs %s", prog,
			 elf_fmt == TC_EMU_PT ? "x86-64" : "aarch64", fmt == TC_EMU_PT ? "pt" : "etm",
			 fmt == TC_EMU_PT ? "an x86-64 program" : "an aarch64 program (run "
			 "through qemu-aarch64)");
	while (argv[n])
		n++;
	if (!(args = calloc(n + 1, sizeof(*args))))
		tc_fatal("out of memory");
	memcpy(args, argv, n * sizeof(*args));
	args[0] = prog;
	o->argv = args;
	/* As perf record does: an existing file is kept as FILE.old. */
	snprintf(old, sizeof(old), "%s.old", o->output);
	if (!access(o->output, F_OK) && rename(o->output, old))
		tc_fatal("cannot move %s to %s: %s", o->output, old, strerror(errno));
	t0 = now();
	rc = elf_fmt == TC_EMU_PT ? record_pt(o, &st, &e) : tc_emu_etm_record(o, &st, &e);
	secs = now() - t0;
	free(args);
	if (rc)
		tc_fatal("%s", e.msg);
	tc_status("tracectl record: emulated %s, %u thread%s, %llu instructions (%llu traced), "
		  "%llu branches, %llu bytes of trace in %s; %.2f s, %.0f instructions/s%s",
		  elf_fmt == TC_EMU_PT ? "Intel PT" : "ETMv4", st.threads,
		  st.threads == 1 ? "" : "s", (unsigned long long)st.steps,
		  (unsigned long long)st.insns, (unsigned long long)st.branches,
		  (unsigned long long)st.bytes, o->output, secs, secs > 0 ? st.steps / secs : 0,
		  elf_fmt != TC_EMU_PT ? "" : o->engine == TC_EMU_ENGINE_QEMU ? " (qemu)" :
		  " (ptrace)");
	if (WIFEXITED(st.status) && WEXITSTATUS(st.status))
		tc_info("%s exited with status %d", prog, WEXITSTATUS(st.status));
	return TC_EXIT_OK;
}
