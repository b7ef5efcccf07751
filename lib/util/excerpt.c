#include "lib/util/excerpt.h"

#include <stdio.h>

char *tc_excerpt(char out[TC_EXCERPT_SIZE], const char *s)
{
	size_t o = 0, n = 0;

	for (; *s && n < TC_EXCERPT_MAX; s++, n++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else if (c < 0x20 || c > 0x7e || c == '\\') {
			o += (size_t)snprintf(out + o, 5, "\\x%02x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	if (*s) {
		out[o++] = '.';
		out[o++] = '.';
		out[o++] = '.';
	}
	out[o] = 0;
	return out;
}
