/* Hex text to bytes. */
#ifndef TC_LIB_UTIL_HEX_H
#define TC_LIB_UTIL_HEX_H

#include <stddef.h>
#include <stdint.h>

/* Bytes from the pairs of lower-case hex digits at the start of hex (NULL: none), at most
 * max; stops at the first pair that is not two such digits. Returns how many. */
size_t tc_hex_bytes(const char *hex, uint8_t *out, size_t max);

#endif
