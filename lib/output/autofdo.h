/* AutoFDO text as simpleperf's `inject` writes it (what AutoFDO's create_llvm_prof and
 * create_gcov read with --profiler text), from a branch profile (branch_profile.h): per
 * binary (sorted by path) the executed ranges "start-end:count" (end is the last
 * instruction's address), an empty address section "0", the taken branches
 * "from->to:count", then "// build_id: 0x<40 hex digits>" and "// <recorded path>" and a
 * blank line. Addresses are link-time addresses less the first PT_LOAD segment's. More than
 * one binary gets a first line asking to split the file, as simpleperf's. */
#ifndef TC_LIB_OUTPUT_AUTOFDO_H
#define TC_LIB_OUTPUT_AUTOFDO_H

#include <stdio.h>

#include "lib/output/branch_profile.h"

/* -1 on ENOMEM or a write error. */
int tc_autofdo_write(const struct tc_branch_profile_bin *bins, size_t n, FILE *f);

#endif
