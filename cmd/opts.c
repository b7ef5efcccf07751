/* Option parsing and help text, both generated from the option tables. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/tracectl.h"

enum { OPT_COLOR = 256, OPT_SYSFS_ROOT, OPT_VERSION };

const struct tc_opt tc_opts_global[] = {
	{ "json", 'j', 0, NULL, "write JSON (one document, or one object per line for streams)" },
	{ "pretty", 'p', 0, NULL, "write indented JSON (implies --json)" },
	{ "quiet", 'q', 0, NULL, "print no status lines or warnings" },
	{ "verbose", 'v', 0, NULL, "print more detail on stderr (repeat for more)" },
	{ "color", OPT_COLOR, 2, "WHEN", "colour output: auto, always or never (NO_COLOR is honoured)" },
	{ "sysfs-root", OPT_SYSFS_ROOT, 1, "DIR",
	  "read sysfs from DIR instead of /sys (env TRACECTL_SYSFS_ROOT)" },
	{ "help", 'h', 0, NULL, "show help" },
	{ "version", OPT_VERSION, 0, NULL, "show the version" },
	{ 0 },
};

int tc_opts_global_one(int key, const char *arg)
{
	switch (key) {
	case 'j': tc_g.json = true; return 1;
	case 'p': tc_g.json = tc_g.pretty = true; return 1;
	case 'q': tc_g.quiet = true; return 1;
	case 'v': tc_g.verbose++; return 1;
	case OPT_SYSFS_ROOT: tc_g.sysfs_root = arg; return 1;
	case OPT_COLOR:
		if (!arg || !strcmp(arg, "always"))
			tc_g.color = TC_COLOR_ALWAYS;
		else if (!strcmp(arg, "never"))
			tc_g.color = TC_COLOR_NEVER;
		else if (!strcmp(arg, "auto"))
			tc_g.color = TC_COLOR_AUTO;
		else
			return -1;
		return 1;
	}
	return 0;
}

static size_t count(const struct tc_opt *o)
{
	size_t n = 0;

	while (o && o[n].name)
		n++;
	return n;
}

/* Does the command's own table use this short letter? It then wins over a global one
 * (record's -p is --pid, as in perf; --pretty stays available by its long name). */
static bool own_short(const struct tc_opt *own, int key)
{
	for (; own && own->name; own++)
		if (own->key == key && key < 256)
			return true;
	return false;
}

static void add_opts(const struct tc_opt *o, const struct tc_opt *shadow, struct option *lo,
		     size_t *nl, char *so)
{
	for (; o && o->name; o++) {
		lo[*nl] = (struct option){ o->name, o->has_arg == 1 ? required_argument :
					   o->has_arg == 2 ? optional_argument : no_argument,
					   NULL, o->key };
		(*nl)++;
		if (o->key < 256 && shadow && own_short(shadow, o->key))
			lo[*nl - 1].val = o->key + 256 * 4;	/* long name only, mapped back below */
		else if (o->key < 256) {
			size_t l = strlen(so);

			so[l++] = (char)o->key;
			if (o->has_arg == 1)
				so[l++] = ':';
			else if (o->has_arg == 2)
				so[l++] = ':', so[l++] = ':';
			so[l] = '\0';
		}
	}
}

static void print_version(void)
{
	printf("tracectl %s\n", TRACECTL_VERSION);
}

int tc_opts_parse(const struct tc_cmd *cmd, int argc, char **argv,
		  int (*on_opt)(int key, const char *arg, void *ctx), void *ctx)
{
	const struct tc_opt *own = cmd ? cmd->opts : NULL;
	size_t n = count(own) + count(tc_opts_global), nl = 0;
	struct option *lo = calloc(n + 1, sizeof(*lo));
	char *so = calloc(3 * n + 3, 1);
	int c, ret = -1;

	if (!lo || !so)
		tc_fatal("out of memory");
	/* "+": stop at the first operand; ":": we report unknown options ourselves. */
	strcpy(so, "+:");
	add_opts(own, NULL, lo, &nl, so);
	add_opts(tc_opts_global, own, lo, &nl, so);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		int g;

		if (c == '?') {
			if (optopt)
				tc_msg_usage_error(cmd, "unknown option '-%c'", optopt);
			else
				tc_msg_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
		if (c == ':') {
			tc_msg_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
			goto out;
		}
		if (c == 'h' || c == OPT_VERSION) {
			/* exit below: nothing of ours may be left behind for the leak checker */
			free(lo);
			free(so);
		}
		if (c == 'h') {
			if (cmd)
				tc_opts_cmd_help(cmd, stdout);
			else
				tc_opts_main_help(stdout);
			exit(tc_msg_finish_stdout(TC_EXIT_OK));
		}
		if (c == OPT_VERSION) {
			print_version();
			exit(tc_msg_finish_stdout(TC_EXIT_OK));
		}
		if (own_short(own, c)) {
			if (on_opt && on_opt(c, optarg, ctx))
				goto out;
			continue;
		}
		if (c >= 256 * 4 && c < 256 * 5)
			c -= 256 * 4;	/* a shadowed global option given by its long name */
		g = tc_opts_global_one(c, optarg);
		if (g < 0) {
			tc_msg_usage_error(cmd, "bad value '%s' for --color (auto, always, never)",
					   optarg);
			goto out;
		}
		if (g == 0 && (!on_opt || on_opt(c, optarg, ctx)))
			goto out;	/* on_opt reported the problem */
	}
	ret = optind;
out:
	free(lo);
	free(so);
	return ret;
}

static void print_opts(const struct tc_opt *o, const struct tc_opt *shadow, FILE *f)
{
	for (; o->name; o++) {
		char left[64];
		int l = 0;
		bool s = o->key < 256 && !own_short(shadow, o->key);

		l += snprintf(left + l, sizeof(left) - (size_t)l, s ? "-%c, " : "    ", o->key);
		l += snprintf(left + l, sizeof(left) - (size_t)l, "--%s", o->name);
		if (o->has_arg == 1)
			snprintf(left + l, sizeof(left) - (size_t)l, " %s", o->arg);
		else if (o->has_arg == 2)
			snprintf(left + l, sizeof(left) - (size_t)l, "[=%s]", o->arg);
		fprintf(f, "  %-26s %s\n", left, o->help);
	}
}

void tc_opts_cmd_help(const struct tc_cmd *cmd, FILE *f)
{
	fprintf(f, "usage: tracectl [global options] %s [options]%s%s\n\n", cmd->name,
		*cmd->args ? " " : "", cmd->args);
	fprintf(f, "%s.\n", cmd->summary);
	if (count(cmd->opts)) {
		fprintf(f, "\nOptions:\n");
		print_opts(cmd->opts, NULL, f);
	}
	fprintf(f, "\nGlobal options:\n");
	print_opts(tc_opts_global, cmd->opts, f);
}

void tc_opts_main_help(FILE *f)
{
	fprintf(f, "usage: tracectl [global options] <command> [options]\n\n"
		   "Record and decode processor trace (Arm CoreSight, Intel PT).\n\n"
		   "Commands:\n");
	for (const struct tc_cmd *c = tc_cmds; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fprintf(f, "\nGlobal options:\n");
	print_opts(tc_opts_global, NULL, f);
	fprintf(f, "\nSee 'tracectl help <command>' for a command's options.\n");
}
