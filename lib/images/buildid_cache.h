/* Where perf keeps its build-id cache (perf buildid-cache, perf archive): binaries by build
 * ID, which lib/images/images looks in after the recorded path. */
#ifndef TC_LIB_IMAGES_BUILDID_CACHE_H
#define TC_LIB_IMAGES_BUILDID_CACHE_H

/* $PERF_BUILDID_DIR, else ~/.debug; NULL if neither (malloc'd). */
char *tc_buildid_cache_dir(void);

#endif
