/* Messages for the user found while reading input, in the order they are to be shown:
 * warnings (a problem; the rest of the output still stands) and status lines (a summary).
 * lib/ and decoders/ collect them, cmd/ prints them. */
#ifndef TC_LIB_UTIL_DIAG_H
#define TC_LIB_UTIL_DIAG_H

#include <stddef.h>

enum tc_diag_level { TC_DIAG_WARNING, TC_DIAG_STATUS };

struct tc_diag_msg {
	enum tc_diag_level level;
	char *text;
};

struct tc_diag {
	struct tc_diag_msg *msgs;
	size_t n, cap;
};

/* Append a warning, or a status line; on ENOMEM the message is dropped (a message less,
 * nothing else lost). */
void tc_diag_add(struct tc_diag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void tc_diag_status(struct tc_diag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void tc_diag_free(struct tc_diag *d);

#endif
