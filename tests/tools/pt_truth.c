/* pt_truth: the Intel PT emulation of lib/emulate/emu_pt.c (what `tracectl record --pmu emulated
 * --emulator ptrace` runs) as a test tool: single-step PROG, keep the exact path its executable
 * takes, write it as Intel PT in perf.data plus the list of taken branches.
 *
 *   pt_truth [-n] [-Q] [-p PSB_BYTES] [-r BYTES] -o OUT.data [-t TRUTH.txt] -- PROG [ARGS]
 *
 * -Q: follow PROG under qemu-x86_64 with tracectl's plugin instead (lib/emulate/emu_pt_qemu.c,
 * the default of record --pmu emulated): all of its user space, system calls as TIP.PGD/PGE.
 * -n: no return compression (every ret is a TIP; config has DisRETC). -r: repeat one cycle
 * of the path (the same IP and stack pointer again, a loop's turns) until the trace has
 * BYTES, for large traces of a single-threaded PROG; stderr then names the truth lines
 * that are the cycle and how often it was repeated after them. The truth file has
 * one line per taken branch, "FROM TO" in hex, in perf's convention: "0 TO" where tracing
 * starts (TIP.PGE), "FROM TO" for a branch out of the executable (TIP.PGD with the target).
 * Test tool only: it prints and exits. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/emulate/emu.h"

int main(int argc, char **argv)
{
	struct tc_emu_opts o = { .rec_argc = argc, .rec_argv = argv, .truth_no_tid = true };
	struct tc_emu_stats st;
	struct tc_err e = { 0 };
	int opt, qemu = 0;

	while ((opt = getopt(argc, argv, "nQp:r:o:t:")) != -1) {
		switch (opt) {
		case 'Q': qemu = 1; break;
		case 'n': o.no_retcomp = true; break;
		case 'p': o.sync_period = strtoull(optarg, NULL, 0); break;
		case 'r': o.repeat_bytes = strtoull(optarg, NULL, 0); break;
		case 'o': o.output = optarg; break;
		case 't': o.truth = optarg; break;
		default: return 2;
		}
	}
	if (!o.output || optind >= argc) {
		fprintf(stderr, "usage: pt_truth [-n] [-Q] [-p PSB_BYTES] [-r BYTES] -o OUT.data "
			"[-t TRUTH.txt] -- PROG [ARGS]\n");
		return 2;
	}
	o.argv = argv + optind;
	if (qemu && o.repeat_bytes) {
		fprintf(stderr, "pt_truth: -r repeats single-stepped paths only\n");
		return 2;
	}
	if ((qemu ? tc_emu_pt_qemu_record : tc_emu_pt_record)(&o, &st, &e)) {
		fprintf(stderr, "pt_truth: %s\n", e.msg);
		return 2;
	}
	fprintf(stderr, "pt_truth: %llu steps, %llu branches, %llu bytes of trace, %u threads\n",
		(unsigned long long)st.steps, (unsigned long long)st.branches,
		(unsigned long long)st.bytes, st.threads);
	if (o.repeat_bytes)
		fprintf(stderr, "pt_truth: cycle: truth lines %llu..%llu, repeated %llu more times "
			"after line %llu\n", (unsigned long long)st.cycle_from + 1,
			(unsigned long long)st.cycle_to, (unsigned long long)st.repeats,
			(unsigned long long)st.cycle_to);
	return 0;
}
