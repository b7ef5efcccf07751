#include "lib/images/buildid_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *tc_buildid_cache_dir(void)
{
	const char *env = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
	char *dir = NULL;

	if (env && *env)
		return strdup(env);
	if (home && *home && asprintf(&dir, "%s/.debug", home) < 0)
		dir = NULL;
	return dir;
}
