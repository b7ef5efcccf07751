/* tracectl help [<command>] */
#include "cmd/tracectl.h"

const struct tc_opt help_opts[] = { { 0 } };

int do_help(int argc, char **argv)
{
	const struct tc_cmd *cmd;
	int i = tc_opts_parse(tc_cmd_find("help"), argc, argv, NULL, NULL);

	if (i < 0)
		return TC_EXIT_USAGE;
	if (i >= argc) {
		tc_opts_main_help(stdout);
		return TC_EXIT_OK;
	}
	if (i + 1 < argc)
		return tc_msg_usage_error(tc_cmd_find("help"), "help takes one command name"),
		       TC_EXIT_USAGE;
	cmd = tc_cmd_find(argv[i]);
	if (!cmd) {
		tc_error("'%s' is not a tracectl command; see 'tracectl --help'", argv[i]);
		return TC_EXIT_USAGE;
	}
	tc_opts_cmd_help(cmd, stdout);
	return TC_EXIT_OK;
}
