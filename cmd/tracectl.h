/* Shared by every command: the command table, option tables, global state, reporting. */
#ifndef TRACECTL_H
#define TRACECTL_H

#include <stdbool.h>
#include <stdio.h>

#include "lib/util/json.h"

#ifndef TRACECTL_VERSION
#define TRACECTL_VERSION "0.0.0-dev"
#endif

/* Exit codes (documented in tracectl(1)). */
enum {
	TC_EXIT_OK = 0,		/* done */
	TC_EXIT_FAIL = 1,	/* could not do it (fatal:) */
	TC_EXIT_GREW = 4,	/* diff --fail-above: a function grew (not a failed run) */
	TC_EXIT_USAGE = 2,	/* bad command line */
	TC_EXIT_DATA = 3,	/* done, but the input had problems (warnings were given) */
	TC_EXIT_PIPE = 141,	/* stdout closed by the reader (as if killed by SIGPIPE) */
};

/* Long-only option keys: 256.. are the global options', commands start at this. */
#define TC_OPT_CMD_BASE 512

/* One option of a command; help text, man pages and completions are checked against these. */
struct tc_opt {
	const char *name;	/* long name without "--" */
	int key;		/* short letter, or a value >= 256 for long-only */
	int has_arg;		/* 0 none, 1 required, 2 optional (--name=ARG) */
	const char *arg;	/* placeholder shown in help */
	const char *help;
};

struct tc_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;	/* usage after the options, e.g. "[--] <command>" */
	const char *summary;
	const struct tc_opt *opts;	/* terminated by a zeroed entry */
};

extern const struct tc_cmd tc_cmds[];
extern const struct tc_opt tc_opts_global[];

enum tc_color { TC_COLOR_AUTO, TC_COLOR_ALWAYS, TC_COLOR_NEVER };

struct tc_global {
	bool json, pretty, quiet;
	bool progress_line;	/* a progress line is on stderr (cmd/progress.c) */
	int verbose;
	enum tc_color color;
	const char *sysfs_root;
	const char *prog;
};

extern struct tc_global tc_g;

const struct tc_cmd *tc_cmd_find(const char *name);

/* Parse a command's options (its table plus the global ones). on_opt gets each option of the
 * command's own table. Returns the index of the first operand, or -1 after a usage error
 * was reported. -h/--help prints the command's help and exits 0. */
int tc_opts_parse(const struct tc_cmd *cmd, int argc, char **argv,
		  int (*on_opt)(int key, const char *arg, void *ctx), void *ctx);
/* Handle a global option; returns 1 if key was one, 0 if not, -1 on a bad value. */
int tc_opts_global_one(int key, const char *arg);
void tc_opts_cmd_help(const struct tc_cmd *cmd, FILE *f);
void tc_opts_main_help(FILE *f);

/* Reporting, git-style prefixes on stderr. */
void tc_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tc_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tc_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));	/* -v only */
void tc_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));	/* "[ ... ]" */
_Noreturn void tc_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tc_msg_usage_error(const struct tc_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));	/* returns -1 */

/* Colour for stdout text ("" when off). */
const char *tc_msg_color_on(const char *code);
const char *tc_msg_color_off(void);
void tc_msg_color_setup(void);

/* Flush stdout and report write errors; returns the exit code to use. */
int tc_msg_finish_stdout(int rc);

/* A JSON writer on stdout configured from the global options. */
void tc_msg_json_stdout(struct tc_json *j);

/* Run a decode session (decoders/session.h) for decode, report and diff (cmd/decode.c):
 * progress on stderr, its warnings and status lines printed in order; fatal on unusable
 * input. Returns the number of problems warned about. */
struct tc_session;
int tc_decode_run(struct tc_session *s);

int do_list(int argc, char **argv);
int do_decode(int argc, char **argv);
int do_record(int argc, char **argv);
int do_report(int argc, char **argv);
int do_diff(int argc, char **argv);
int do_help(int argc, char **argv);
int do_version(int argc, char **argv);

#endif
