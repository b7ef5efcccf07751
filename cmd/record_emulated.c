/* tracectl record --pmu emulated: trace a command without trace hardware (lib/emulate/: x86-64
 * programs under qemu-x86_64 with tracectl's plugin, or ptrace single-step when asked for;
 * aarch64 ones under qemu-aarch64). cmd/record.c has refused what cannot be emulated. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd/record_emulated.h"
#include "cmd/tracectl.h"
#include "lib/emulate/qemu_run.h"
#include "lib/perfdata/perf_write.h"
#include "lib/util/json.h"

/* What runs the program: the emulator, its plugin (QEMU) or ptrace. */
struct engine {
	const char *name;	/* "qemu" or "ptrace" */
	char qemu[PATH_MAX], plugin[PATH_MAX];
};

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

/* --config: the terms the emulated Intel PT honours, as intel_pt's: noretcomp (no return
 * compression) and psb_period (a PSB every 2^(N+11) bytes). */
static int config(struct tc_emu_opts *o, enum tc_emu_format fmt, const char *terms)
{
	const struct tc_cmd *cmd = tc_cmd_find("record");
	char *copy = strdup(terms), *t, *save = NULL;
	int rc = 0;

	if (!copy)
		tc_fatal("out of memory");
	if (fmt != TC_EMU_PT) {
		free(copy);
		return tc_msg_usage_error(cmd, "--config '%s' with --pmu emulated: the emulated "
					  "ETM takes no format terms", terms);
	}
	for (t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '='), *end;
		unsigned long v = 1;

		if (eq) {
			*eq = 0;
			v = strtoul(eq + 1, &end, 0);
			if (eq[1] == 0 || *end)
				v = ~0UL;
		}
		if (!strcmp(t, "noretcomp") && v <= 1)
			o->no_retcomp = v;
		else if (!strcmp(t, "psb_period") && eq && v <= 15)
			o->sync_period = 1ULL << (v + 11);
		else
			rc = tc_msg_usage_error(cmd, "--config '%s' with --pmu emulated: the "
						"emulated Intel PT honours noretcomp=0|1 and "
						"psb_period=0..15 (a PSB every 2^(N+11) bytes), "
						"not '%s%s%s'", terms, t, eq ? "=" : "",
						eq ? eq + 1 : "");
	}
	free(copy);
	return rc;
}

/* No silent fallback: QEMU with the plugin unless --emulator ptrace (x86-64 only); a
 * missing qemu or plugin is fatal and says what to install. */
static void pick(struct tc_emu_opts *o, enum tc_emu_format fmt, struct engine *en)
{
	const char *qemu = fmt == TC_EMU_PT ? (o->qemu_x86 ? o->qemu_x86 : "qemu-x86_64") :
			   (o->qemu ? o->qemu : "qemu-aarch64");
	struct tc_err e = { 0 };

	if (fmt == TC_EMU_PT && o->engine == TC_EMU_ENGINE_PTRACE) {
		en->name = "ptrace";
		return;
	}
	if (fmt == TC_EMU_PT)
		o->engine = TC_EMU_ENGINE_QEMU;
	en->name = "qemu";
	if (tc_qemu_run_which(qemu, en->qemu, sizeof(en->qemu), &e))
		tc_fatal("%s%s", e.msg, fmt == TC_EMU_PT ? "; --emulator ptrace single-steps "
			 "the program instead (~20 k instructions/s, its own code only)" : "");
	if (tc_qemu_run_plugin(en->plugin, sizeof(en->plugin), &e))
		tc_fatal("%s", e.msg);
}

static const char *format_name(enum tc_emu_format fmt)
{
	return fmt == TC_EMU_PT ? "Intel PT" : "ETMv4";
}

static void json_list(struct tc_json *j, const char *key, const char *const *v, size_t n)
{
	tc_json_key(j, key);
	tc_json_arr_open(j);
	for (size_t i = 0; i < n; i++)
		tc_json_str(j, v[i]);
	tc_json_arr_close(j);
}

/* --dry-run: what would run and be written; nothing runs, nothing is written or renamed. */
static void dry_run(const struct tc_emu_opts *o, enum tc_emu_format fmt, const struct engine *en)
{
	const char *shm = "/dev/shm/tracectl-qp-PID-N";
	struct tc_json j;
	size_t n = 0;

	while (o->argv[n])
		n++;
	if (tc_g.json) {
		tc_msg_json_stdout(&j);
		tc_json_obj_open(&j);
		tc_json_kstr(&j, "pmu", "emulated");
		tc_json_kstr(&j, "format", fmt == TC_EMU_PT ? "pt" : "etm");
		tc_json_kstr(&j, "emulator", en->name);
		if (en->qemu[0]) {
			tc_json_kstr(&j, "qemu", en->qemu);
			tc_json_kstr(&j, "plugin", en->plugin);
		}
		json_list(&j, "program", (const char *const *)o->argv, n);
		tc_json_kstr(&j, "output", o->output);
		tc_json_kstr(&j, "filter", o->filter);
		tc_json_kstr(&j, "ground_truth", o->truth);
		tc_json_kbool(&j, "start_paused", o->start_paused);
		json_list(&j, "pause_on", o->pause_on, o->npause);
		json_list(&j, "resume_on", o->resume_on, o->nresume);
		json_list(&j, "snapshot_on", o->snapshot_on, o->nsnapshot_on);
		tc_json_kint(&j, "snapshot_size", (long long)o->snapshot_size);
		if (fmt == TC_EMU_PT) {
			tc_json_kbool(&j, "noretcomp", o->no_retcomp);
			tc_json_kint(&j, "psb_period_bytes",
				     (long long)(o->sync_period ? o->sync_period : 4096));
		}
		tc_json_obj_close(&j);
		return;
	}
	printf("emulated %s (%s program), %s\n", format_name(fmt),
	       fmt == TC_EMU_PT ? "x86-64" : "aarch64", en->qemu[0] ? "under QEMU with "
	       "tracectl's plugin" : "ptrace single-step");
	printf("run:");
	if (en->qemu[0])
		printf(" %s -plugin %s,shm=%s", en->qemu, en->plugin, shm);
	for (size_t i = 0; i < n; i++)
		printf(" %s", o->argv[i]);
	printf("\noutput: %s (an existing one would become %s.old)\n", o->output, o->output);
	printf("filter: %s\n", o->filter ? o->filter : fmt == TC_EMU_PT && en->qemu[0] ?
	       "none (all of user space)" : "none (the program's own code)");
	if (o->truth)
		printf("ground truth: %s\n", o->truth);
	printf("triggers: %s", o->start_paused ? "start paused" : "start tracing");
	for (size_t i = 0; i < o->npause; i++)
		printf(", pause on %s", o->pause_on[i]);
	for (size_t i = 0; i < o->nresume; i++)
		printf(", resume on %s", o->resume_on[i]);
	printf("\n");
	if (o->snapshot_size) {
		printf("snapshot mode: the latest %llu bytes of trace per thread, on SIGUSR2",
		       (unsigned long long)o->snapshot_size);
		for (size_t i = 0; i < o->nsnapshot_on; i++)
			printf(", on reaching %s", o->snapshot_on[i]);
		printf(" and at the end\n");
	}
	if (fmt == TC_EMU_PT)
		printf("config: noretcomp %d, a PSB every %llu bytes\n", o->no_retcomp,
		       (unsigned long long)(o->sync_period ? o->sync_period : 4096));
}

static void on_notify(void *ctx, const char *msg)
{
	(void)ctx;
	tc_warning("%s", msg);
}

static bool space_err(int err)
{
	return err == ENOSPC || err == EFBIG || err == EIO || err == EDQUOT;
}

/* Whether path is a file this run put there: new, or another than the one before. */
static bool written(const char *path, bool existed, const struct stat *before)
{
	struct stat sb;

	if (lstat(path, &sb) || !S_ISREG(sb.st_mode))
		return false;
	return !existed || sb.st_ino != before->st_ino || sb.st_dev != before->st_dev;
}

int do_record_emulated(struct tc_emu_opts *o, enum tc_emu_format fmt, const char *terms,
		       bool dry)
{
	char prog[PATH_MAX], what[PATH_MAX + 64] = "";
	char *const *argv = o->argv;
	char **args;
	enum tc_emu_format elf_fmt;
	struct tc_emu_stats st;
	struct tc_err e = { 0 };
	struct engine en = { 0 };
	struct stat sb;
	bool existed;
	double t0, secs;
	size_t n = 0;
	int rc, code = TC_EXIT_OK;

	if (which(argv[0], prog, sizeof(prog)))
		tc_fatal("%s: command not found", argv[0]);
	if (tc_emu_format_of(prog, &elf_fmt, &e))
		tc_fatal("%s", e.msg);
	if (fmt != TC_EMU_AUTO && fmt != elf_fmt)
		tc_fatal("%s is an %s program: --format %s needs %s", prog,
			 elf_fmt == TC_EMU_PT ? "x86-64" : "aarch64", fmt == TC_EMU_PT ? "pt" : "etm",
			 fmt == TC_EMU_PT ? "an x86-64 program" : "an aarch64 program (run "
			 "through qemu-aarch64)");
	if (terms && config(o, elf_fmt, terms))
		return TC_EXIT_USAGE;
	if (elf_fmt == TC_EMU_ETM && o->engine == TC_EMU_ENGINE_PTRACE)
		return tc_msg_usage_error(tc_cmd_find("record"), "--emulator ptrace: %s is an "
					  "aarch64 program, run under qemu-aarch64", prog),
		       TC_EXIT_USAGE;
	pick(o, elf_fmt, &en);
	while (argv[n])
		n++;
	if (!(args = calloc(n + 1, sizeof(*args))))
		tc_fatal("out of memory");
	memcpy(args, argv, n * sizeof(*args));
	args[0] = prog;
	o->argv = args;
	if (dry) {
		dry_run(o, elf_fmt, &en);
		free(args);
		return TC_EXIT_OK;
	}
	/* The writer puts the file in place at the end (an old one becomes FILE.old then). */
	existed = !lstat(o->output, &sb) && S_ISREG(sb.st_mode);
	tc_perf_write_set_notify(on_notify, NULL);
	t0 = now();
	rc = elf_fmt == TC_EMU_ETM ? tc_emu_etm_record(o, &st, &e) :
	     o->engine == TC_EMU_ENGINE_QEMU ? tc_emu_pt_qemu_record(o, &st, &e) :
	     tc_emu_pt_record(o, &st, &e);
	secs = now() - t0;
	free(args);
	if (*o->stop_req)
		st.interrupted = true;
	if (rc && st.interrupted && !written(o->output, existed, &sb)) {
		/* stopped before there was anything to write */
		tc_error("%s", e.msg);
		return 128 + (int)*o->stop_req;
	}
	if (rc) {
		/* a full disk: the file is in place, cut after its last whole record */
		if (!space_err(e.errnum) || !written(o->output, existed, &sb))
			tc_fatal("%s", e.msg);
		tc_error("%s", e.msg);
		code = TC_EXIT_FAIL;
	}
	if (st.interrupted)
		tc_warning("interrupted by signal %d (%s): the program was stopped and the trace "
			   "ends where it was", (int)*o->stop_req, strsignal((int)*o->stop_req));
	else if (WIFEXITED(st.status) && WEXITSTATUS(st.status))
		snprintf(what, sizeof(what), "; %s exited with status %d", prog,
			 WEXITSTATUS(st.status));
	else if (WIFSIGNALED(st.status))
		snprintf(what, sizeof(what), "; %s was killed by signal %d (%s)", prog,
			 WTERMSIG(st.status), strsignal(WTERMSIG(st.status)));
	tc_status("tracectl record: emulated %s, %u thread%s, %llu instructions (%llu traced), "
		  "%llu branches, %llu bytes of trace in %s; %.2f s, %.0f instructions/s%s%s%s",
		  format_name(elf_fmt), st.threads, st.threads == 1 ? "" : "s",
		  (unsigned long long)st.steps, (unsigned long long)st.insns,
		  (unsigned long long)st.branches, (unsigned long long)st.bytes, o->output, secs,
		  secs > 0 ? st.steps / secs : 0,
		  elf_fmt != TC_EMU_PT ? "" : o->engine == TC_EMU_ENGINE_QEMU ? " (qemu)" :
		  " (ptrace)", existed ? "; the old file is now .old" : "", what);
	if (o->snapshot_size)
		tc_status("tracectl record: %u snapshot%s", st.snapshots,
			  st.snapshots == 1 ? "" : "s");
	/* As the hardware path: the signal's status, else the program's (run() in record.c). */
	if (st.interrupted)
		return 128 + (int)*o->stop_req;
	if (code != TC_EXIT_OK)
		return code;
	if (WIFEXITED(st.status))
		return WEXITSTATUS(st.status);
	if (WIFSIGNALED(st.status))
		return 128 + WTERMSIG(st.status);
	return TC_EXIT_OK;
}
