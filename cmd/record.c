/* tracectl record: open per-CPU trace events (lib/record/record_ops.h) with side-band, pause/resume
 * triggers and sampled events (-e), run the workload and write perf.data (lib/record/record_loop);
 * --dry-run prints the events. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/record_emulated.h"
#include "cmd/tracectl.h"
#include "lib/perfdata/perf_write.h"
#include "lib/pmu/perf_kernel.h"
#include "lib/pmu/pmu.h"
#include "lib/record/record_loop.h"
#include "lib/record/record_ops.h"
#include "lib/record/record_plan.h"

enum {
	OPT_PER_THREAD = TC_OPT_CMD_BASE, OPT_PMU, OPT_CONFIG, OPT_SINK, OPT_START_PAUSED,
	OPT_PAUSE_ON, OPT_RESUME_ON, OPT_DRY_RUN, OPT_FORMAT, OPT_FILTER, OPT_TRUTH,
	OPT_EMULATOR, OPT_USER, OPT_KERNEL, OPT_SNAPSHOT_ON,
};

const struct tc_opt record_opts[] = {
	{ "all-cpus", 'a', 0, NULL, "trace every CPU (system-wide)" },
	{ "cpu", 'C', 1, "CPUS", "trace only these CPUs (e.g. 0-3,6)" },
	{ "pid", 'p', 1, "PID", "trace this existing process" },
	{ "tid", 't', 1, "TID", "trace this existing thread" },
	{ "per-thread", OPT_PER_THREAD, 0, NULL,
	  "one event following the task, not per CPU (emulated: always)" },
	{ "output", 'o', 1, "FILE", "write FILE (default perf.data; an old one becomes FILE.old)" },
	{ "pmu", OPT_PMU, 1, "PMU", "cs_etm, intel_pt or emulated (default: the one present)" },
	{ "format", OPT_FORMAT, 1, "FMT", "emulated: pt or etm (default: from the program's ELF)" },
	{ "filter", OPT_FILTER, 1, "FILTER", "emulated: address filter, 'filter SYM@FILE,...'" },
	{ "emulator", OPT_EMULATOR, 1, "HOW", "emulated x86-64: qemu (default) or ptrace" },
	{ "ground-truth", OPT_TRUTH, 1, "FILE", "emulated: write the executed branches (tests)" },
	{ "config", OPT_CONFIG, 1, "TERMS", "PMU format terms, term=value,... (see tracectl list)" },
	{ "sink", OPT_SINK, 1, "NAME", "CoreSight sink to collect trace in (see tracectl list)" },
	{ "user", OPT_USER, 0, NULL, "trace user space (alone: not the kernel; perf's /u)" },
	{ "kernel", OPT_KERNEL, 0, NULL, "trace the kernel (alone: not user space; perf's /k)" },
	{ "mmap-pages", 'm', 1, "DATA,AUX",
	  "pages of the data and AUX rings (powers of two; emulated: -S size)" },
	{ "snapshot", 'S', 2, "SIZE", "AUX overwrite mode; snapshots of SIZE bytes per CPU (default: "
	  "the AUX area) on SIGUSR2, --snapshot-on and at exit" },
	{ "snapshot-on", OPT_SNAPSHOT_ON, 1, "EVENT", "with -S: a snapshot when EVENT fires "
	  "(repeatable)" },
	{ "start-paused", OPT_START_PAUSED, 0, NULL, "start with tracing paused (Linux 6.13+)" },
	{ "pause-on", OPT_PAUSE_ON, 1, "EVENT", "pause tracing when EVENT fires (repeatable)" },
	{ "resume-on", OPT_RESUME_ON, 1, "EVENT", "resume tracing when EVENT fires (repeatable)" },
	{ "event", 'e', 1, "EVENT", "also sample EVENT, any kernel (repeatable)" },
	{ "dry-run", OPT_DRY_RUN, 0, NULL,
	  "print the perf_event_attrs or emulator command; run nothing" },
	{ 0 },
};

struct record {
	struct tc_record_opts o;
	bool emulated;		/* --pmu emulated: cmd/record_emulated.c */
	enum tc_emu_format emu_format;
	enum tc_emu_engine engine;
	const char *filter, *truth;
	const char *output;
	bool all_cpus, dry_run, mmap_pages;
	bool user, kernel;	/* --user, --kernel */
	const char *space_why;	/* the default left the kernel out: why */
	unsigned data_pages, aux_pages;
	bool aux_set;		/* -m gave the AUX pages */
	uint64_t snapshot_size;	/* -S SIZE, 0 none */
};

static int usage(const char *fmt, const char *arg)
{
	tc_msg_usage_error(tc_cmd_find("record"), fmt, arg);
	return -1;
}

static int usage_opt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_opt(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tc_msg_usage_error(tc_cmd_find("record"), "%s", msg);
	return -1;
}

static int parse_pid(const char *arg, pid_t *out)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (end == arg || *end || v <= 0 || v > 0x7fffffff)
		return -1;
	*out = (pid_t)v;
	return 0;
}

static int pages(const char *s, size_t n, unsigned *out)
{
	char buf[32], *end;
	unsigned long v;

	if (!n)
		return 0;	/* keep the default */
	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	v = strtoul(buf, &end, 10);
	if (*end || !v || (v & (v - 1)) || v > (1UL << 20))
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* A byte count, "65536", "64K", "4M", "1G" (powers of 1024); not 0. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || errno || *s == '-')
		return -1;
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 30, end++;
	if (*end || !v || v > (UINT64_MAX >> 1) >> shift)
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* -S SIZE: the AUX area holds at least SIZE (grown to it unless -m gave its size). */
static int snapshot_area(struct record *r)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), want;
	unsigned n = 1;

	if (!r->snapshot_size)
		return 0;
	want = (r->snapshot_size + page - 1) / page;
	if (r->aux_set) {
		if (want > r->aux_pages)
			return tc_msg_usage_error(tc_cmd_find("record"), "-S %llu is larger than "
						  "the AUX area (-m ...,%u pages of %llu bytes)",
						  (unsigned long long)r->snapshot_size,
						  r->aux_pages, (unsigned long long)page), -1;
		return 0;
	}
	while (n < want && n < (1u << 20))
		n <<= 1;
	if (n < want)
		return tc_msg_usage_error(tc_cmd_find("record"), "-S %llu: too large",
					  (unsigned long long)r->snapshot_size), -1;
	if (n > r->aux_pages)
		r->aux_pages = n;
	return 0;
}

static int on_opt(int key, const char *arg, void *ctx)
{
	struct record *r = ctx;
	const char *comma;

	switch (key) {
	case 'a': r->all_cpus = true; break;
	case 'C': r->o.cpu_list = arg; break;
	case 'p':
		if (parse_pid(arg, &r->o.pid))
			return usage("bad process ID '%s'", arg);
		break;
	case 't':
		if (parse_pid(arg, &r->o.tid))
			return usage("bad thread ID '%s'", arg);
		break;
	case OPT_PER_THREAD: r->o.per_thread = true; break;
	case 'o': r->output = arg; break;
	case OPT_PMU:
		if (!strcmp(arg, "emulated")) {
			r->emulated = true;
			break;
		}
		if (!tc_record_ops_by_name(arg)) {
			char names[128];

			tc_record_ops_names(names, sizeof(names), false);
			return tc_msg_usage_error(tc_cmd_find("record"),
						  "bad --pmu '%s' (%s or emulated)", arg, names);
		}
		r->o.pmu = arg;
		break;
	case OPT_FORMAT:
		if (strcmp(arg, "pt") && strcmp(arg, "etm"))
			return usage("bad --format '%s' (pt or etm)", arg);
		r->emu_format = arg[0] == 'p' ? TC_EMU_PT : TC_EMU_ETM;
		break;
	case OPT_EMULATOR:
		if (strcmp(arg, "qemu") && strcmp(arg, "ptrace"))
			return usage("bad --emulator '%s' (qemu or ptrace)", arg);
		r->engine = arg[0] == 'q' ? TC_EMU_ENGINE_QEMU : TC_EMU_ENGINE_PTRACE;
		break;
	case OPT_FILTER: r->filter = arg; break;
	case OPT_TRUTH: r->truth = arg; break;
	case OPT_CONFIG: r->o.config = arg; break;
	case OPT_SINK: r->o.sink = arg; break;
	case 'm':
		r->mmap_pages = true;
		comma = strchr(arg, ',');
		r->aux_set = comma && comma[1];
		if (pages(arg, comma ? (size_t)(comma - arg) : strlen(arg), &r->data_pages) ||
		    (comma && pages(comma + 1, strlen(comma + 1), &r->aux_pages)))
			return usage("bad --mmap-pages '%s' (DATA,AUX page counts, powers of two)",
				     arg);
		break;
	case 'S':
		r->o.snapshot = true;
		if (arg && parse_size(arg, &r->snapshot_size))
			return usage("bad -S/--snapshot size '%s' (bytes, or with K, M or G)", arg);
		break;
	case OPT_SNAPSHOT_ON:
		if (r->o.nsnapshot_on == TC_REC_MAX_TRIGGERS)
			return usage("too many --snapshot-on events ('%s'); at most 8", arg);
		r->o.snapshot_on[r->o.nsnapshot_on++] = arg;
		break;
	case OPT_START_PAUSED: r->o.start_paused = true; break;
	case OPT_PAUSE_ON:
	case OPT_RESUME_ON: {
		bool pause = key == OPT_PAUSE_ON;
		size_t *n = pause ? &r->o.npause : &r->o.nresume;

		if (*n == TC_REC_MAX_TRIGGERS)
			return usage("too many triggers ('%s'); at most 8 of each", arg);
		(pause ? r->o.pause_on : r->o.resume_on)[(*n)++] = arg;
		break;
	}
	case 'e':
		if (r->o.nevents == TC_REC_MAX_TRIGGERS)
			return usage("too many events ('%s'); at most 8", arg);
		r->o.events[r->o.nevents++] = arg;
		break;
	case OPT_DRY_RUN: r->dry_run = true; break;
	case OPT_USER: r->user = true; break;
	case OPT_KERNEL: r->kernel = true; break;
	}
	return 0;
}

static void json_event(struct tc_json *j, const struct tc_record_event *ev)
{
	const struct perf_event_attr *a = &ev->a.attr;
	uint32_t act = tc_attr_aux_action(&ev->a);

	tc_json_obj_open(j);
	tc_json_kstr(j, "pmu", ev->pmu);
	tc_json_kstr(j, "role", tc_record_plan_role_name(ev->role));
	if (ev->trigger)
		tc_json_kstr(j, "trigger", ev->trigger);
	if (ev->uprobe_path)
		tc_json_kstr(j, "uprobe_path", ev->uprobe_path);
	tc_json_kint(j, "type", a->type);
	tc_json_kint(j, "cpu", ev->cpu);
	tc_json_khex(j, "config", a->config);
	tc_json_khex(j, "config1", a->config1);
	tc_json_khex(j, "config2", a->config2);
	tc_json_khex(j, "config3", tc_attr_config3(&ev->a));
	tc_json_khex(j, "sample_type", a->sample_type);
	tc_json_kint(j, "sample_period", (long long)a->sample_period);
	tc_json_kint(j, "sample_id_all", a->sample_id_all);
	tc_json_kint(j, "disabled", a->disabled);
	tc_json_kint(j, "enable_on_exec", a->enable_on_exec);
	tc_json_kint(j, "exclude_kernel", a->exclude_kernel);
	tc_json_kint(j, "exclude_user", a->exclude_user);
	tc_json_kint(j, "comm", a->comm);
	tc_json_kint(j, "comm_exec", a->comm_exec);
	tc_json_kint(j, "mmap", a->mmap);
	tc_json_kint(j, "mmap2", a->mmap2);
	tc_json_kint(j, "task", a->task);
	tc_json_kint(j, "context_switch", a->context_switch);
	tc_json_kint(j, "aux_start_paused", !!(act & TC_AUX_START_PAUSED));
	tc_json_kint(j, "aux_pause", !!(act & TC_AUX_PAUSE));
	tc_json_kint(j, "aux_resume", !!(act & TC_AUX_RESUME));
	tc_json_key(j, "group_leader");
	if (ev->group_leader >= 0)
		tc_json_int(j, ev->group_leader);
	else
		tc_json_null(j);
	tc_json_obj_close(j);
}

static void text_event(size_t i, const struct tc_record_event *ev)
{
	const struct perf_event_attr *a = &ev->a.attr;
	uint32_t act = tc_attr_aux_action(&ev->a);

	printf("#%zu %s %s", i, ev->pmu, tc_record_plan_role_name(ev->role));
	if (ev->trigger)
		printf(" %s", ev->trigger);
	if (ev->cpu >= 0)
		printf(" cpu %d", ev->cpu);
	else
		printf(" any cpu");
	if (ev->group_leader >= 0)
		printf(" group leader #%d", ev->group_leader);
	printf("\n  type %u config 0x%llx config1 0x%llx config2 0x%llx config3 0x%llx\n", a->type,
	       (unsigned long long)a->config, (unsigned long long)a->config1,
	       (unsigned long long)a->config2, (unsigned long long)tc_attr_config3(&ev->a));
	printf("  sample_type 0x%llx sample_period %llu sample_id_all %u disabled %u "
	       "enable_on_exec %u exclude_kernel %u exclude_user %u\n",
	       (unsigned long long)a->sample_type, (unsigned long long)a->sample_period,
	       a->sample_id_all, a->disabled, a->enable_on_exec, a->exclude_kernel,
	       a->exclude_user);
	if (ev->role == TC_ROLE_SIDEBAND)
		printf("  comm %u comm_exec %u mmap %u mmap2 %u task %u context_switch %u\n", a->comm,
		       a->comm_exec, a->mmap, a->mmap2, a->task, a->context_switch);
	if (ev->uprobe_path)
		printf("  uprobe_path %s (config1) probe_offset 0x%llx (config2)\n", ev->uprobe_path,
		       (unsigned long long)a->config2);
	printf("  aux_start_paused %u aux_pause %u aux_resume %u\n", !!(act & TC_AUX_START_PAUSED),
	       !!(act & TC_AUX_PAUSE), !!(act & TC_AUX_RESUME));
}

static const char *const space_names[] = {
	[TC_SPACE_BOTH] = "user and kernel", [TC_SPACE_USER] = "user space only",
	[TC_SPACE_KERNEL] = "kernel only",
};

/* --user/--kernel; by default what the caller may trace, as perf falls back to user space
 * under perf_event_paranoid 2 without CAP_PERFMON. */
static void choose_space(struct record *r)
{
	static char why[200];
	int paranoid;

	r->o.space = r->user == r->kernel ? TC_SPACE_BOTH :
		     r->user ? TC_SPACE_USER : TC_SPACE_KERNEL;
	if (r->user || r->kernel)
		return;
	paranoid = tc_perf_kernel_paranoid(NULL);
	if (tc_perf_kernel_may_trace_kernel(paranoid, tc_perf_kernel_cap_eff(NULL)))
		return;
	r->o.space = TC_SPACE_USER;
	if (paranoid == INT_MIN)
		snprintf(why, sizeof(why), "tracing user space only: kernel.perf_event_paranoid "
			 "could not be read and tracectl has neither CAP_PERFMON nor CAP_SYS_ADMIN "
			 "(--kernel asks for the kernel too)");
	else
		snprintf(why, sizeof(why), "tracing user space only: kernel.perf_event_paranoid "
			 "is %d and tracectl has neither CAP_PERFMON nor CAP_SYS_ADMIN (--kernel "
			 "asks for the kernel too)", paranoid);
	r->space_why = why;
}

static void dry_run(const struct record *r, const struct tc_record_plan *pl, const char *cannot)
{
	struct tc_json j;
	char names[128];

	if (tc_g.json) {
		tc_msg_json_stdout(&j);
		tc_json_obj_open(&j);
		tc_json_key(&j, "pmu");
		if (pl->pmu)
			tc_json_str(&j, pl->pmu->name);
		else
			tc_json_null(&j);
		tc_json_kstr(&j, "space", space_names[r->o.space]);
		if (r->space_why)
			tc_json_kstr(&j, "space_reason", r->space_why);
		tc_json_key(&j, "sink");
		if (*pl->sink)
			tc_json_str(&j, pl->sink);
		else
			tc_json_null(&j);
		tc_json_khex(&j, "sink_hash", pl->sink_hash);
		tc_json_kbool(&j, "sink_automatic", pl->sink_auto);
		tc_json_kint(&j, "data_pages", r->data_pages);
		tc_json_kint(&j, "aux_pages", r->aux_pages);
		tc_json_kbool(&j, "snapshot", r->o.snapshot);
		tc_json_kint(&j, "snapshot_size", (long long)r->snapshot_size);
		tc_json_key(&j, "events");
		tc_json_arr_open(&j);
		for (size_t i = 0; i < pl->n; i++)
			json_event(&j, &pl->ev[i]);
		tc_json_arr_close(&j);
		tc_json_obj_close(&j);
		if (cannot)
			tc_warning("%s", cannot);
		return;
	}
	tc_record_ops_names(names, sizeof(names), false);
	if (pl->pmu)
		printf("pmu %s type %d", pl->pmu->name, pl->pmu->type);
	else
		printf("no AUX-capable trace PMU (%s): side-band and triggers only", names);
	if (*pl->sink)
		printf(", sink %s (0x%llx%s)", pl->sink, (unsigned long long)pl->sink_hash,
		       pl->sink_auto ? ", chosen by tracectl" : "");
	printf(", %s, %zu events, rings: data %u pages, aux %u pages%s\n",
	       space_names[r->o.space], pl->n, r->data_pages, r->aux_pages,
	       r->o.snapshot ? ", snapshot mode" : "");
	if (r->snapshot_size)
		printf("snapshots of the latest %llu bytes of each AUX area\n",
		       (unsigned long long)r->snapshot_size);
	if (r->space_why)
		printf("note: %s\n", r->space_why);
	if (cannot)
		printf("note: the running kernel cannot open these events: %s\n", cannot);
	for (size_t i = 0; i < pl->n; i++)
		text_event(i, &pl->ev[i]);
}

static volatile sig_atomic_t stop_req, snap_req;	/* stop_req: the signal that asked */

static void on_stop(int sig)
{
	stop_req = sig;
}

static void on_snap(int sig)
{
	(void)sig;
	snap_req = 1;
}

static void on_notify(void *ctx, const char *msg)
{
	(void)ctx;
	tc_warning("%s", msg);
}

static void summary(const struct record *r, const struct tc_record_stats *st)
{
	fprintf(stderr, "[ tracectl record: wrote %s: %llu bytes of trace in %llu AUXTRACE "
		"records, %llu bytes of side-band%s ]\n", r->output,
		(unsigned long long)st->aux_bytes, (unsigned long long)st->auxtrace_records,
		(unsigned long long)st->data_bytes, st->renamed ? "; the old file is now .old" : "");
	uint64_t unsaid = st->kernel_lost_known && st->kernel_lost > st->lost_events ?
			  st->kernel_lost - st->lost_events : 0;
	char kern[160] = "";

	/* The kernel's own count (Linux 6.0+) next to what its LOST records said. */
	if (st->kernel_lost_known)
		snprintf(kern, sizeof(kern), ", %llu lost by the kernel's count (%llu in no LOST "
			 "record)", (unsigned long long)st->kernel_lost, (unsigned long long)unsaid);
	fprintf(stderr, "[ tracectl record: %llu AUX records: %llu truncated, %llu collision, "
		"%llu partial; %llu LOST records (%llu events)%s, %llu lost samples%s ]\n",
		(unsigned long long)st->aux_records, (unsigned long long)st->truncated,
		(unsigned long long)st->collision, (unsigned long long)st->partial,
		(unsigned long long)st->lost_records, (unsigned long long)st->lost_events, kern,
		(unsigned long long)st->lost_samples,
		st->truncated || st->collision || st->lost_records || st->kernel_lost ?
		"; trace was lost: a larger AUX area (-m DATA,AUX) may help" : "");
	if (unsaid)
		tc_warning("%llu records were lost on a full data ring and no LOST record tells of "
			   "them (the kernel writes one only in front of the next record that ring "
			   "takes; the file has the kernel's count as LOST_SAMPLES records): the data "
			   "ring (-m %u: pages per CPU) was too small for the side-band between drains; "
			   "a larger one (-m DATA,AUX) may help",
			   (unsigned long long)unsaid, r->data_pages);
	if (st->busy_cpus)
		fprintf(stderr, "[ tracectl record: %u CPUs got no trace: their sink was held by "
			"another session ]\n", st->busy_cpus);
	if (r->o.snapshot)
		fprintf(stderr, "[ tracectl record: %llu snapshots ]\n",
			(unsigned long long)st->snapshots);
	if (r->o.nsnapshot_on)
		fprintf(stderr, "[ tracectl record: %llu --snapshot-on hits ]\n",
			(unsigned long long)st->snapshot_hits);
}

static int run(struct record *r, const struct tc_record_plan *pl, int argc, char **argv, int i)
{
	struct tc_record_run run = {
		.plan = pl, .sysfs_root = tc_g.sysfs_root, .output = r->output,
		.data_pages = r->data_pages, .aux_pages = r->aux_pages, .snapshot = r->o.snapshot,
		.snapshot_size = r->snapshot_size,
		.cpu_wide = r->all_cpus || r->o.cpu_list, .pid = r->o.pid ? r->o.pid : r->o.tid,
		.inherit = !r->o.tid && !r->o.per_thread, .all_threads = r->o.pid != 0,
		.argv = i < argc ? argv + i : NULL, .argc = argc - i,
		.cmdline = argv, .cmdline_argc = argc, .stop_req = &stop_req, .snap_req = &snap_req,
		.notify = on_notify,
	};
	struct sigaction sa = { .sa_handler = on_stop }, ss = { .sa_handler = on_snap };
	struct tc_record_stats st;
	struct tc_err e = { 0 };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR2, &ss, NULL);
	signal(SIGCHLD, SIG_DFL);
	tc_perf_write_set_notify(on_notify, NULL);	/* another writer to -o */
	if (tc_record_loop_run(&run, &st, &e)) {
		if (st.file_opened)
			summary(r, &st);
		tc_fatal("%s", e.msg);
	}
	summary(r, &st);
	if (!st.workload_started)
		return TC_EXIT_OK;	/* -a, -C, -p, -t: a signal is how they end */
	/* a command cut short by a signal to tracectl: that signal's status */
	if (stop_req)
		return 128 + (int)stop_req;
	if (WIFEXITED(st.exit_status))
		return WEXITSTATUS(st.exit_status);
	if (WIFSIGNALED(st.exit_status))
		return 128 + WTERMSIG(st.exit_status);
	return TC_EXIT_OK;
}

/* An emulated trigger is a code location, FILE:SYMBOL or FILE:0xOFFSET (uprobe syntax): a
 * counter (name/period=N/) or a tracepoint (group:name, the group no file) is refused. FILE
 * is a path, an existing file, a library name (with a dot: libc.so.6) or the command's own
 * name: the tracer finds it among the program's mappings. */
static int emu_trigger(const char *opt, const char *spec, const char *prog)
{
	const char *colon = strrchr(spec, ':'), *slash = strchr(spec, '/');
	const char *base = strrchr(prog, '/');
	char file[4096];
	struct stat sb;
	size_t n;

	if (slash && (!colon || slash < colon) && spec[strlen(spec) - 1] == '/')
		return usage_opt("%s '%s': a counter; emulated tracing has no counters, its "
				 "triggers are code locations, FILE:SYMBOL or FILE:0xOFFSET", opt,
				 spec);
	if (!colon || colon == spec || !colon[1])
		return usage_opt("%s '%s': emulated tracing triggers on code locations, "
				 "FILE:SYMBOL or FILE:0xOFFSET", opt, spec);
	n = (size_t)(colon - spec);
	snprintf(file, sizeof(file), "%.*s", (int)n, spec);
	base = base ? base + 1 : prog;
	if (memchr(spec, '/', n) || memchr(spec, '.', n) || !stat(file, &sb) ||
	    !strcmp(file, base))
		return 0;
	return usage_opt("%s '%s': a tracepoint (no file '%s'); emulated tracing has no "
			 "kernel events, its triggers are code locations, FILE:SYMBOL or "
			 "FILE:0xOFFSET", opt, spec, file);
}

/* record --pmu emulated: what the emulated tracer cannot do is refused by name; the rest
 * goes to cmd/record_emulated.c. */
static int emulated(struct record *r, int argc, char **argv, int i)
{
	struct tc_emu_opts eo = { .argv = argv + i, .output = r->output, .filter = r->filter,
				  .truth = r->truth, .rec_argc = argc, .rec_argv = argv,
				  .engine = r->engine, .start_paused = r->o.start_paused,
				  .pause_on = r->o.pause_on, .npause = r->o.npause,
				  .resume_on = r->o.resume_on, .nresume = r->o.nresume,
				  .snapshot_on = r->o.snapshot_on,
				  .nsnapshot_on = r->o.nsnapshot_on, .stop_req = &stop_req };
	static const char runs[] = "the emulated tracer runs the command it is given";
	struct sigaction sa = { .sa_handler = on_stop }, ss = { .sa_handler = on_snap };

	if (r->all_cpus)
		return usage_opt("-a (--all-cpus) with --pmu emulated: %s, it traces no CPUs",
				 runs), TC_EXIT_USAGE;
	if (r->o.cpu_list)
		return usage_opt("-C (--cpu) with --pmu emulated: %s, it traces no CPUs", runs),
		       TC_EXIT_USAGE;
	if (r->o.pid || r->o.tid)
		return usage_opt("%s with --pmu emulated: %s, it cannot attach to a running "
				 "task", r->o.pid ? "-p (--pid)" : "-t (--tid)", runs),
		       TC_EXIT_USAGE;
	if (r->o.sink)
		return usage_opt("--sink with --pmu emulated: there is no CoreSight sink to choose "
				 "(the emulated ETM has its one sink built in)"), TC_EXIT_USAGE;
	if (r->o.nevents)
		return usage_opt("-e (--event) with --pmu emulated: the emulated tracer samples "
				 "no events"), TC_EXIT_USAGE;
	if (r->kernel)
		return usage_opt("--kernel: an emulated trace follows user space only"),
		       TC_EXIT_USAGE;
	if (r->o.nsnapshot_on && !r->o.snapshot)
		return usage_opt("--snapshot-on takes snapshots: it needs -S"), TC_EXIT_USAGE;
	if (r->mmap_pages && !r->o.snapshot)
		return usage_opt("-m (--mmap-pages) with --pmu emulated: there are no rings (the "
				 "whole trace is kept); with -S, AUX pages set the snapshot size"),
		       TC_EXIT_USAGE;
	if (!r->o.workload)
		return usage_opt("--pmu emulated runs a command: record --pmu emulated [options] "
				 "-- CMD [ARGS]"), TC_EXIT_USAGE;
	for (size_t k = 0; k < r->o.npause; k++)
		if (emu_trigger("--pause-on", r->o.pause_on[k], argv[i]))
			return TC_EXIT_USAGE;
	for (size_t k = 0; k < r->o.nresume; k++)
		if (emu_trigger("--resume-on", r->o.resume_on[k], argv[i]))
			return TC_EXIT_USAGE;
	for (size_t k = 0; k < r->o.nsnapshot_on; k++)
		if (emu_trigger("--snapshot-on", r->o.snapshot_on[k], argv[i]))
			return TC_EXIT_USAGE;
	if (r->o.snapshot) {
		/* the latest trace per thread: -S SIZE, else as much as an AUX ring of -m's
		 * pages holds */
		eo.snapshot_size = r->snapshot_size ? r->snapshot_size :
				   (uint64_t)r->aux_pages * (uint64_t)sysconf(_SC_PAGESIZE);
		eo.snap_req = &snap_req;
	}
	if (!r->dry_run) {
		/* no SA_RESTART: a wait or a sleep returns to look at stop_req */
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		sigaction(SIGUSR2, &ss, NULL);
		/* a full disk is an error to report (write fails with EFBIG), not a death */
		signal(SIGXFSZ, SIG_IGN);
	}
	return do_record_emulated(&eo, r->emu_format, r->o.config, r->dry_run);
}

int do_record(int argc, char **argv)
{
	const struct tc_cmd *cmd = tc_cmd_find("record");
	struct record r = { .output = "perf.data", .data_pages = 128, .aux_pages = 1024 };
	struct tc_pmu_list pmus;
	struct tc_record_plan pl;
	struct tc_err e = { 0 };
	char why[512] = "", rel[128], names[128];
	const char *cannot = NULL;
	bool have_pmu;
	int i = tc_opts_parse(cmd, argc, argv, on_opt, &r);

	if (i < 0)
		return TC_EXIT_USAGE;
	r.o.workload = i < argc;
	if (r.emulated || r.emu_format || r.filter || r.truth || r.engine) {
		if (!r.emulated)
			return tc_msg_usage_error(cmd,
						  "--format, --filter, --emulator and "
						  "--ground-truth go with --pmu emulated"),
			       TC_EXIT_USAGE;
		return emulated(&r, argc, argv, i);
	}
	if (r.o.workload && (r.o.pid || r.o.tid))
		return tc_msg_usage_error(cmd,
					  "-p/-t attach to a running task; a command cannot be "
					  "given too"),
		       TC_EXIT_USAGE;
	if (!r.o.workload && !r.all_cpus && !r.o.cpu_list && !r.o.pid && !r.o.tid)
		return tc_msg_usage_error(cmd, "give a command to run, or -a, -C, -p or -t"),
		       TC_EXIT_USAGE;
	if (r.o.nsnapshot_on && !r.o.snapshot)
		return tc_msg_usage_error(cmd, "--snapshot-on takes snapshots: it needs -S"),
		       TC_EXIT_USAGE;
	if (snapshot_area(&r))
		return TC_EXIT_USAGE;
	if (r.all_cpus && r.o.cpu_list)
		return tc_msg_usage_error(cmd, "-a and -C cannot be combined"), TC_EXIT_USAGE;
	if (r.o.per_thread && !r.o.workload && !r.o.pid && !r.o.tid)
		return tc_msg_usage_error(cmd, "--per-thread needs a command, -p or -t"),
		       TC_EXIT_USAGE;

	choose_space(&r);
	if (tc_pmu_discover(tc_g.sysfs_root, &pmus, &e))
		tc_fatal("%s", e.msg);
	if (tc_record_plan_build(tc_g.sysfs_root, &pmus, &r.o, &pl, &e)) {
		tc_record_plan_free(&pl);
		tc_pmu_list_free(&pmus);
		tc_fatal("%s", e.msg);
	}
	if (pl.pause_resume) {
		tc_perf_kernel_release(rel, sizeof(rel));
		if (!tc_perf_kernel_aux_pause_verdict(rel, tc_perf_kernel_probe_aux_action(), why,
						      sizeof(why)))
			cannot = why;
	}
	if (r.dry_run) {
		dry_run(&r, &pl, cannot);
		tc_record_plan_free(&pl);
		tc_pmu_list_free(&pmus);
		return TC_EXIT_OK;
	}
	have_pmu = pl.pmu != NULL;
	if (r.space_why && have_pmu && !cannot)
		tc_status("%s", r.space_why);
	if (pl.sink_auto && !cannot)
		tc_status("%s: sink %s, chosen by tracectl (%s); --sink chooses another",
			  pl.pmu->name, pl.sink, pl.sink_why);
	/* Never fall back to tracing everything when the triggers cannot work. */
	if (cannot || !have_pmu) {
		tc_record_plan_free(&pl);
		tc_pmu_list_free(&pmus);
		if (cannot)
			tc_fatal("%s", cannot);
		tc_record_ops_names(names, sizeof(names), false);
		tc_fatal("no AUX-capable trace PMU (%s) on this machine; 'tracectl list' shows "
			 "what %s/bus/event_source/devices has (--dry-run prints the events record "
			 "would open)", names, tc_g.sysfs_root);
	}
	i = run(&r, &pl, argc, argv, i);
	tc_record_plan_free(&pl);
	tc_pmu_list_free(&pmus);
	return i;
}
