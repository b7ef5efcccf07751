/* Text from files put into messages: a short excerpt with control and non-ASCII bytes
 * escaped, so a message never carries a terminal escape sequence or a whole file. */
#ifndef TC_LIB_UTIL_EXCERPT_H
#define TC_LIB_UTIL_EXCERPT_H

#include <stddef.h>

/* At most TC_EXCERPT_MAX characters of s, '\n' as \n, other bytes outside printable ASCII
 * (and the backslash) as \xNN, "..." if cut. */
#define TC_EXCERPT_MAX	40
#define TC_EXCERPT_SIZE	(TC_EXCERPT_MAX * 4 + 4)

/* out holds TC_EXCERPT_SIZE bytes; returns out. */
char *tc_excerpt(char out[TC_EXCERPT_SIZE], const char *s);

#endif
