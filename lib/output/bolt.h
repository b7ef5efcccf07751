/* BOLT's pre-aggregated profile, as `perf2bolt -pa` reads it (one binary per file), from a
 * branch profile (branch_profile.h): "B from to count mispredicted" for each taken branch
 * and "F start end count" for each executed range (a fall-through run from a branch target
 * to the next branch, end the address of its last instruction), in the binary's own
 * link-time addresses, as BOLT disassembles it. A branch to or from another binary has 0
 * at that end (BOLT's "unknown"); a trace knows no mispredictions, so they are 0. */
#ifndef TC_LIB_OUTPUT_BOLT_H
#define TC_LIB_OUTPUT_BOLT_H

#include <stdio.h>

#include "lib/output/branch_profile.h"

/* -1 on ENOMEM or a write error. */
int tc_bolt_write(const struct tc_branch_profile_bin *bin, FILE *f);

#endif
