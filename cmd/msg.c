/* Reporting on stderr (fatal:/error:/warning:, bracketed status lines) and stdout checks. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/tracectl.h"

static bool color_out, color_err;

void tc_msg_color_setup(void)
{
	const char *nc = getenv("NO_COLOR");

	switch (tc_g.color) {
	case TC_COLOR_ALWAYS:
		color_out = color_err = true;
		break;
	case TC_COLOR_NEVER:
		color_out = color_err = false;
		break;
	case TC_COLOR_AUTO:
		/* https://no-color.org: any non-empty NO_COLOR turns automatic colour off. */
		if (nc && *nc)
			break;
		color_out = isatty(STDOUT_FILENO) && !tc_g.json;
		color_err = isatty(STDERR_FILENO);
		break;
	}
}

const char *tc_msg_color_on(const char *code)
{
	return color_out ? code : "";
}

const char *tc_msg_color_off(void)
{
	return color_out ? "\033[m" : "";
}

/* Has the reader of standard output gone (| head -c1 exited)? Then every write there fails
 * with EPIPE, and whatever fails after it (a writer's "could not be written", a status line)
 * is a consequence, not news: the run ends quietly with TC_EXIT_PIPE, as perf and git do.
 * Asked of the descriptor itself (a pipe's write end polls POLLERR once it has no reader), so
 * it does not depend on errno surviving to the message. */
static bool stdout_reader_gone(void)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

/* A progress line (cmd/progress.c) is cleared before anything else goes to stderr. */
static void clear_progress(void)
{
	if (tc_g.progress_line) {
		fputs("\r\033[K", stderr);
		tc_g.progress_line = false;
	}
}

static void vreport(const char *prefix, const char *color, const char *fmt, va_list ap)
{
	fflush(stdout);
	clear_progress();
	if (color_err)
		fprintf(stderr, "%s%s\033[m ", color, prefix);
	else
		fprintf(stderr, "%s ", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void tc_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error:", "\033[1;31m", fmt, ap);
	va_end(ap);
}

void tc_warning(const char *fmt, ...)
{
	va_list ap;

	if (tc_g.quiet || stdout_reader_gone())
		return;
	va_start(ap, fmt);
	vreport("warning:", "\033[1;33m", fmt, ap);
	va_end(ap);
}

void tc_fatal(const char *fmt, ...)
{
	va_list ap;

	if (stdout_reader_gone())
		exit(TC_EXIT_PIPE);
	va_start(ap, fmt);
	vreport("fatal:", "\033[1;31m", fmt, ap);
	va_end(ap);
	exit(tc_msg_finish_stdout(TC_EXIT_FAIL));
}

void tc_info(const char *fmt, ...)
{
	va_list ap;

	if (tc_g.quiet || !tc_g.verbose)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void tc_status(const char *fmt, ...)
{
	va_list ap;

	if (tc_g.quiet || stdout_reader_gone())
		return;
	clear_progress();
	fputs("[ ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" ]\n", stderr);
}

int tc_msg_usage_error(const struct tc_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error:", "\033[1;31m", fmt, ap);
	va_end(ap);
	if (cmd)
		fprintf(stderr, "see 'tracectl %s --help'\n", cmd->name);
	else
		fprintf(stderr, "see 'tracectl --help'\n");
	return -1;
}

int tc_msg_finish_stdout(int rc)
{
	int err = 0;

	if (fflush(stdout) == EOF || ferror(stdout))
		err = errno ? errno : EIO;
	if (!err)
		return rc;
	if (err == EPIPE || stdout_reader_gone())
		return TC_EXIT_PIPE;	/* the reader went away: not worth a message */
	fprintf(stderr, "fatal: write error on standard output: %s\n", strerror(err));
	return TC_EXIT_FAIL;
}

void tc_msg_json_stdout(struct tc_json *j)
{
	tc_json_init(j, stdout, tc_g.pretty);
}
