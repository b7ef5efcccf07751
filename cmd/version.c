/* tracectl version: our version and the libraries we are linked with (as perf version does). */
#include <gelf.h>
#include <intel-pt.h>
#include <opencsd/c_api/opencsd_c_api.h>
#include <perf/core.h>
#include <perf/cpumap.h>
#include <stdio.h>
#include <traceevent/event-parse.h>

#include "cmd/tracectl.h"

const struct tc_opt version_opts[] = { { 0 } };

/* Build-time versions come from pkg-config (see Makefile); run-time ones from the libraries. */
#ifndef LIBPERF_VERSION
#define LIBPERF_VERSION "unknown"
#endif
#ifndef LIBTRACEEVENT_VERSION
#define LIBTRACEEVENT_VERSION "unknown"
#endif
#ifndef LIBELF_VERSION
#define LIBELF_VERSION "unknown"
#endif

int do_version(int argc, char **argv)
{
	struct pt_version pt = pt_library_version();
	struct tep_handle *tep = tep_alloc();
	struct perf_cpu_map *cpus = perf_cpu_map__new(NULL);
	char ipt[32];
	struct {
		const char *name, *version;
		int ok;
	} libs[] = {
		{ "libperf", LIBPERF_VERSION, cpus != NULL },
		{ "libtraceevent", LIBTRACEEVENT_VERSION, tep != NULL },
		{ "libelf", LIBELF_VERSION, elf_version(EV_CURRENT) != EV_NONE },
		{ "opencsd", ocsd_get_version_str(), 1 },
		{ "libipt", ipt, 1 },
	};
	int i = tc_opts_parse(tc_cmd_find("version"), argc, argv, NULL, NULL);

	tep_free(tep);
	perf_cpu_map__put(cpus);
	if (i < 0)
		return TC_EXIT_USAGE;
	if (i < argc)
		return tc_msg_usage_error(tc_cmd_find("version"), "unexpected argument '%s'",
					  argv[i]),
		       TC_EXIT_USAGE;
	snprintf(ipt, sizeof(ipt), "%u.%u.%u", pt.major, pt.minor, pt.patch);
	if (tc_g.json) {
		struct tc_json j;

		tc_msg_json_stdout(&j);
		tc_json_obj_open(&j);
		tc_json_kstr(&j, "version", TRACECTL_VERSION);
		tc_json_key(&j, "libraries");
		tc_json_obj_open(&j);
		for (size_t k = 0; k < sizeof(libs) / sizeof(libs[0]); k++)
			tc_json_kstr(&j, libs[k].name, libs[k].ok ? libs[k].version : NULL);
		tc_json_obj_close(&j);
		tc_json_obj_close(&j);
		return TC_EXIT_OK;
	}
	printf("tracectl %s\n", TRACECTL_VERSION);
	for (size_t k = 0; k < sizeof(libs) / sizeof(libs[0]); k++)
		printf("  %-14s %s\n", libs[k].name, libs[k].ok ? libs[k].version : "(not working)");
	return TC_EXIT_OK;
}
