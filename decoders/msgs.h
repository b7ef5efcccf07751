/* The messages a decode session has for its user, in the order they are to be shown:
 * warnings and status lines. lib/ and decoders/ never print; the command prints these. */
#ifndef TC_DECODERS_MSGS_H
#define TC_DECODERS_MSGS_H

#include <stddef.h>

enum tc_msgs_level {
	TC_MSGS_WARNING,	/* a problem; the rest of the output still stands */
	TC_MSGS_STATUS,		/* a summary line ("[ ... ]") */
};

struct tc_msgs_one {
	enum tc_msgs_level level;
	char *text;
};

struct tc_msgs {
	struct tc_msgs_one *v;
	size_t n, cap;
};

/* Append one; a message that finds no memory is dropped (as tc_diag_add does). */
void tc_msgs_add(struct tc_msgs *m, enum tc_msgs_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void tc_msgs_free(struct tc_msgs *m);

#endif
