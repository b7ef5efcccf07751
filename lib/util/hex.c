#include "lib/util/hex.h"

static int digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

size_t tc_hex_bytes(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;

	for (; hex && n < max && digit(hex[2 * n]) >= 0 && digit(hex[2 * n + 1]) >= 0; n++)
		out[n] = (uint8_t)(digit(hex[2 * n]) << 4 | digit(hex[2 * n + 1]));
	return n;
}
