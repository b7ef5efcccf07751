/* Messages for the user found while reading input, in the order they are to be shown:
 * warnings (a problem; the rest of the output still stands) and status lines (a summary).
 * lib/ and decoders/ collect them, cmd/ prints them.
 *
 * One warning per distinct problem: a warning whose text was given before is counted, not
 * added again, and shown once as "text (N times)"; warnings added with the same kind (the
 * same problem at different places: offsets, addresses) are shown once as the first one's
 * text and "(and N more like it)". A status line is never merged. */
#ifndef TC_LIB_UTIL_DIAG_H
#define TC_LIB_UTIL_DIAG_H

#include <stddef.h>

enum tc_diag_level { TC_DIAG_WARNING, TC_DIAG_STATUS };

struct tc_diag_msg {
	enum tc_diag_level level;
	char *text;	/* as shown: the first text, and how many more there were */
	char *first;	/* the first text as given */
	char *kind;	/* what makes two warnings the same problem (NULL: the text) */
	size_t count;	/* how many times it was given */
};

struct tc_diag {
	struct tc_diag_msg *msgs;
	size_t n, cap;
};

/* Append a warning, or a status line; on ENOMEM the message is dropped (a message less,
 * nothing else lost). */
void tc_diag_add(struct tc_diag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A warning of a kind (a short fixed name): merged with the earlier one of that kind. */
void tc_diag_add_kind(struct tc_diag *d, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void tc_diag_status(struct tc_diag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Warnings in d (each distinct problem once). */
size_t tc_diag_warnings(const struct tc_diag *d);
void tc_diag_free(struct tc_diag *d);

#endif
