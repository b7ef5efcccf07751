#include "lib/util/parse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int tc_parse_trace_ids(const char *arg, bool want[128])
{
	char *list = strdup(arg), *save = NULL;
	int rc = 0;

	if (!list)
		return -1;
	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long id;

		errno = 0;
		id = strtoul(tok, &end, 0);
		if (errno || end == tok || *end || id > 0x7f) {
			rc = -1;
			break;
		}
		want[id] = true;
	}
	free(list);
	return rc;
}
