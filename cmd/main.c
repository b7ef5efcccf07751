/* tracectl [global options] <command> [options]: the command table and dispatch. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/tracectl.h"

extern const struct tc_opt list_opts[], decode_opts[], record_opts[], report_opts[], diff_opts[],
	help_opts[], version_opts[];

const struct tc_cmd tc_cmds[] = {
	{ "list", do_list, "", "list trace PMUs, sinks, tracers and the CoreSight graph",
	  list_opts },
	{ "decode", do_decode, "", "decode a perf.data recording or snapshot: ranges, branches, packets",
	  decode_opts },
	{ "report", do_report, "",
	  "per-function instruction profile of a recording (self, total, calls)", report_opts },
	{ "diff", do_diff, "<A> <B>",
	  "compare the profiles of two recordings; exit 4 when a function grew", diff_opts },
	{ "record", do_record, "[--] <command> [args]",
	  "record processor trace of a command, tasks or CPUs into perf.data", record_opts },
	{ "help", do_help, "[<command>]", "show help for tracectl or a command", help_opts },
	{ "version", do_version, "", "show the version and the libraries tracectl uses",
	  version_opts },
	{ 0 },
};

struct tc_global tc_g = { .sysfs_root = "/sys", .prog = "tracectl" };

const struct tc_cmd *tc_cmd_find(const char *name)
{
	for (const struct tc_cmd *c = tc_cmds; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

int main(int argc, char **argv)
{
	const struct tc_cmd *cmd;
	const char *env = getenv("TRACECTL_SYSFS_ROOT");
	int first, rc;

	/* A closed pipe shows as EPIPE at the write, reported once at exit. */
	signal(SIGPIPE, SIG_IGN);
	if (env && *env)
		tc_g.sysfs_root = env;

	/* Global options stop at the command name ("+" keeps the rest for the command). */
	first = tc_opts_parse(NULL, argc, argv, NULL, NULL);
	if (first < 0)
		return tc_msg_finish_stdout(TC_EXIT_USAGE);
	tc_msg_color_setup();
	if (first >= argc) {
		tc_opts_main_help(stderr);
		return TC_EXIT_USAGE;
	}
	cmd = tc_cmd_find(argv[first]);
	if (!cmd) {
		tc_error("'%s' is not a tracectl command; see 'tracectl --help'", argv[first]);
		return TC_EXIT_USAGE;
	}
	rc = cmd->fn(argc - first, argv + first);
	return tc_msg_finish_stdout(rc);
}
