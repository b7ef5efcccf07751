/* A growable vector of owned strings. */
#ifndef TC_LIB_UTIL_STRV_H
#define TC_LIB_UTIL_STRV_H

#include <stdbool.h>
#include <stddef.h>

struct tc_strv {
	char **v;
	size_t n, cap;
};

int tc_strv_push(struct tc_strv *s, const char *str);	/* copies; -1 on ENOMEM */
bool tc_strv_has(const struct tc_strv *s, const char *str);
void tc_strv_sort(struct tc_strv *s);
void tc_strv_free(struct tc_strv *s);

#endif
