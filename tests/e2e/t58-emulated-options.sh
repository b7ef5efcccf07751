# record --pmu emulated and the rest of record's options (cmd/record.c, record_emulated.c):
# what the emulated tracer cannot do is refused naming the option; --dry-run runs and writes
# nothing; record exits with the program's status; SIGINT/SIGTERM/SIGHUP stop the program
# and write what was traced (no qemu left behind); a full disk (RLIMIT_FSIZE) keeps a file
# that decodes; a missing qemu is an error naming Debian's package, never a silent ptrace.
. "$TOP/tests/e2e/lib.sh"

if [ "$(uname -m)" != x86_64 ] || ! command -v gcc >/dev/null ||
	! command -v qemu-x86_64 >/dev/null; then
	skip 'record --pmu emulated options' 'needs x86-64, gcc and qemu-x86_64 (qemu-user)'
	exit 0
fi

# loop N [STATUS [US]]: N calls of leaf() (a sleep of US microseconds after each), then
# exit STATUS
cat >loop.c <<'EOF'
#include <stdlib.h>
#include <unistd.h>
volatile unsigned long sink;
__attribute__((noinline)) void leaf(unsigned long i) { sink += i; }
int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], 0, 0) : 1000;
	unsigned us = argc > 3 ? atoi(argv[3]) : 0;

	for (unsigned long i = 0; i < n; i++) {
		leaf(i);
		if (us)
			usleep(us);
	}
	return argc > 2 ? atoi(argv[2]) : 0;
}
EOF
# threads N: four threads of N calls each
cp "$TOP/tests/fixtures/emu/thr_calls.c" thr.c
gcc -O1 -o loop loop.c && gcc -O1 -pthread -o thr thr.c ||
	echo "not ok $T: cannot build the fixtures"

# refused OPTION... : usage error (2) naming NAME, nothing written, nothing renamed
refused() {
	name=$1
	shift
	echo before >r.data
	tracectl record --pmu emulated "$@" -o r.data -- ./loop 10 2>err
	rc=$?
	cat err
	grep -q -- "$name" err && grep -q "^see 'tracectl record --help'" err &&
	[ "$(cat r.data)" = before ] && [ ! -e r.data.old ] && exit $rc
}
expect_code 2 '-a refused, naming it' 'refused "-a (--all-cpus) with --pmu emulated" -a'
expect_code 2 '-C refused, naming it' 'refused "-C (--cpu)" -C 0'
expect_code 2 '-p refused, naming it' 'refused "-p (--pid)" -p 1'
expect_code 2 '-t refused, naming it' 'refused "-t (--tid)" -t 1'
expect_code 2 '--sink refused, naming it' 'refused "--sink with --pmu emulated" --sink tmc_etr0'
expect_code 2 '-e refused, naming it' 'refused "-e (--event)" -e cycles'
expect_code 2 '-m without -S refused, naming it' 'refused "-m (--mmap-pages)" -m 8,64'
expect_code 2 '--config with a term the emulated PT does not honour' '
	refused "--config .cyc=1. with --pmu emulated.*not .cyc=1." --config cyc=1
'
expect_code 2 '--pause-on a tracepoint refused, naming it' '
	refused "--pause-on .sched:sched_switch.: a tracepoint" --pause-on sched:sched_switch
'
expect_code 2 '--resume-on a counter refused, naming it' '
	refused "--resume-on .cycles/period=1000/.: a counter" --resume-on cycles/period=1000/
'
expect_code 2 '--pause-on without FILE: refused' 'refused "--pause-on .leaf.:" --pause-on leaf'

expect '--per-thread is accepted (emulated traces are per thread)' '
	tracectl record --pmu emulated --per-thread -o pt.data -- ./loop 100 2>err && cat err &&
	tracectl decode -i pt.data >/dev/null
'

# --config noretcomp,psb_period: the file says so, more PSBs, and both decoders stay exact
expect '--config noretcomp=1,psb_period=0: no compressed returns, a PSB every 2 KiB, exact' '
	tracectl record --pmu emulated -o c0.data --ground-truth c0.truth -- ./loop 20000 &&
	tracectl record --pmu emulated --config noretcomp=1,psb_period=0 -o c1.data \
		--ground-truth c1.truth -- ./loop 20000 &&
	perf report -D -i c0.data 2>/dev/null >d0 && perf report -D -i c1.data 2>/dev/null >d1 &&
	p0=$(grep -c " PSB$" d0) && p1=$(grep -c " PSB$" d1) && echo "PSB $p0 $p1" &&
	[ "$p1" -gt $((2 * p0)) ] &&
	perf evlist -v -i c1.data 2>/dev/null | grep -q "config: 0x800" &&
	[ "$(stat -c %s c1.data)" -gt "$(stat -c %s c0.data)" ] &&
	by_tid c1.truth >want && tc_branches c1.data >got && diff want got &&
	perf_branches c1.data >got2 && diff want got2
'

# --dry-run: twice, with every option it takes; the program never runs, nothing is touched
expect '--dry-run: prints the qemu command line, output, filter, triggers, snapshot size' '
	echo newest >d.data && echo older >d.data.old &&
	for i in 1 2; do
		tracectl record --pmu emulated --dry-run -S -m 8,16 --start-paused \
			--pause-on ./loop:leaf --resume-on libc.so.6:0x1234 \
			--filter "filter leaf@./loop" --ground-truth d.truth -o d.data \
			-- sh -c "touch ran" >out 2>err || exit 1
	done &&
	cat out && [ ! -s err ] && [ ! -e ran ] && [ ! -e d.truth ] &&
	[ "$(cat d.data)" = newest ] && [ "$(cat d.data.old)" = older ] &&
	[ "$(ls | grep -c "^d\.data")" = 2 ] &&
	grep -q "^run: .*/qemu-x86_64 -plugin .*/tracectl-qemu.so,shm=.* /.*/sh -c touch ran$" out &&
	grep -q "^output: d.data" out && grep -q "^filter: filter leaf@./loop$" out &&
	grep -q "^triggers: start paused, pause on ./loop:leaf, resume on libc.so.6:0x1234$" out &&
	grep -q "latest 65536 bytes of trace per thread" out
'
expect '--dry-run -j: the same as JSON (default snapshot: 1024 AUX pages)' '
	tracectl -j record --pmu emulated --dry-run -S --pause-on ./loop:leaf -o j.data \
		-- ./loop 5 >out && [ ! -e j.data ] &&
	jq -e ".pmu == \"emulated\" and .format == \"pt\" and .emulator == \"qemu\" and
		(.qemu | endswith(\"qemu-x86_64\")) and (.plugin | endswith(\"tracectl-qemu.so\")) and
		.output == \"j.data\" and .snapshot_size == 4194304 and .start_paused == false and
		.pause_on == [\"./loop:leaf\"] and .resume_on == [] and .filter == null and
		(.program | length) == 2" out
'

# the program's status is record's, after the file is written
expect_code 7 'a program exiting 7: record exits 7, says so, the file decodes' '
	tracectl record --pmu emulated -o s7.data -- sh -c "exit 7" 2>err; rc=$?
	cat err; grep -q "sh exited with status 7 ]" err &&
	tracectl decode -i s7.data >/dev/null && exit $rc
'
expect_code 143 'a program killed by SIGTERM: record exits 128+15' '
	tracectl record --pmu emulated -o st.data -- sh -c "kill -TERM \$\$" 2>err; rc=$?
	cat err; grep -q "was killed by signal 15" err && exit $rc
'
expect 'an existing output becomes FILE.old once the new one is written' '
	echo old >o.data && tracectl record --pmu emulated -o o.data -- ./loop 10 2>err &&
	grep -q "the old file is now .old" err && [ "$(cat o.data.old)" = old ] &&
	tracectl decode -i o.data >/dev/null && [ "$(ls | grep -c "^o\.data")" = 2 ]
'

# A process is gone, or a zombie nobody reaps (PID 1 of a container may not).
gone() {
	[ ! -e /proc/$1 ] || grep -q "^State:.*Z" /proc/$1/status 2>/dev/null
}

# A signal to tracectl alone (not its process group) while it records an endless loop
# (a sleep in each round: a trace the decoders read in seconds).
# interrupted SIG: exits 128+SIG, tracectl and perf decode the file to the ground truth up
# to the stop, qemu is gone.
interrupted() {
	echo old >i$1.data
	"$TRACECTL" record --pmu emulated -o i$1.data --ground-truth i$1.truth \
		-- ./loop 100000000000 0 200 2>err$1 &
	tp=$!
	q=
	for _ in $(seq 100); do
		q=$(cat /proc/$tp/task/*/children 2>/dev/null); q=${q%% *}
		[ -n "$q" ] && [ "$(readlink /proc/$q/exe)" = "$(command -v qemu-x86_64)" ] && break
		sleep 0.05
	done
	# the program has run once the truth file has its first bytes (a fixed wait alone was
	# too short under ASan on a loaded host: "stopped before qemu had started the program")
	for _ in $(seq 600); do [ -s i$1.truth ] && break; sleep 0.05; done
	sleep 0.5
	[ -n "$q" ] || { echo "no qemu child found"; kill -KILL $tp; exit 1; }
	[ -s i$1.truth ] || { echo "the program wrote no truth in 30 s"; kill -KILL $tp; exit 1; }
	kill -$1 $tp
	# a tracectl that ignores the signal fails the test instead of hanging it
	(sleep 60; kill -KILL $tp 2>/dev/null) &
	wd=$!
	wait $tp
	rc=$?
	kill $wd 2>/dev/null
	cat err$1
	gone $q || { echo "qemu $q is still there"; exit 1; }
	grep -q "interrupted by signal" err$1 && grep -q "trace ends where it was" err$1 &&
	[ "$(cat i$1.data.old)" = old ] &&
	tracectl decode --branches -i i$1.data 2>derr | tail -1 && cat derr &&
	grep -q " 0 errors" derr && by_tid i$1.truth >want && [ "$(wc -l <want)" -gt 1000 ] &&
	tc_branches i$1.data >got && diff want got && perf_branches i$1.data >got2 &&
	diff want got2 && [ ! -s i$1.data.perf-err ] && exit $rc
}
expect_code 130 'SIGINT to tracectl: the program stops, the file decodes, no qemu left' \
	'interrupted INT'
expect_code 143 'SIGTERM to tracectl: the same, exit 143' 'interrupted TERM'
expect_code 129 'SIGHUP to tracectl: the same, exit 129' 'interrupted HUP'
expect 'qemu dies with tracectl (SIGKILL to tracectl: PR_SET_PDEATHSIG)' '
	"$TRACECTL" record --pmu emulated -o k.data -- ./loop 100000000000 2>/dev/null &
	tp=$!
	for _ in $(seq 100); do
		q=$(cat /proc/$tp/task/*/children 2>/dev/null); q=${q%% *}
		[ -n "$q" ] && break
		sleep 0.05
	done
	[ -n "$q" ] && [ "$(readlink /proc/$q/exe)" = "$(command -v qemu-x86_64)" ] &&
	kill -KILL $tp; wait $tp
	rm -f /dev/shm/tracectl-qp-$tp-*	# SIGKILL leaves it
	for _ in $(seq 40); do gone $q && break; sleep 0.05; done
	gone $q && [ ! -e k.data ] && ! ls | grep -q "^k\.data\.tmp"
'

expect_code 130 '--emulator ptrace: SIGINT stops the single-stepped program, exact' '
	"$TRACECTL" record --pmu emulated --emulator ptrace -o pp.data --ground-truth pp.truth \
		-- ./loop 100000000000 0 200 2>err &
	tp=$!
	sleep 1
	kill -INT $tp
	(sleep 60; kill -KILL $tp 2>/dev/null) &
	wd=$!
	wait $tp
	rc=$?
	kill $wd 2>/dev/null
	cat err && grep -q "(ptrace)" err && grep -q "interrupted by signal 2" err &&
	by_tid pp.truth >want && [ "$(wc -l <want)" -gt 100 ] && tc_branches pp.data >got &&
	head -n "$(wc -l <want)" got | diff want - &&
	extra=$(tail -n +"$(($(wc -l <want) + 1))" got) && echo "after the truth: [$extra]" &&
	# killed inside traced code, the decoder may end the last thread with a branch to 0
	{ [ -z "$extra" ] || echo "$extra" | grep -qx "[0-9]* [0-9a-f]* 0"; } && exit $rc
'

# The same for aarch64 (ETM under qemu-aarch64), SIGTERM
if command -v qemu-aarch64 >/dev/null && command -v aarch64-linux-gnu-gcc >/dev/null &&
	aarch64-linux-gnu-gcc -O1 -static -o loop64 loop.c; then
	expect_code 143 'aarch64: SIGTERM to tracectl: the ETM file decodes to the truth, exit 143' '
		"$TRACECTL" record --pmu emulated -o e.data --ground-truth e.truth \
			-- ./loop64 100000000000 0 200 2>err &
		tp=$!
		sleep 2
		kill -TERM $tp
		(sleep 60; kill -KILL $tp 2>/dev/null) &
		wd=$!
		wait $tp
		rc=$?
		kill $wd 2>/dev/null
		cat err && grep -q "interrupted by signal 15" err &&
		by_tid e.truth >want && [ "$(wc -l <want)" -gt 1000 ] &&
		tc_branches e.data >got && diff want got && exit $rc
	'
else
	skip 'aarch64 interrupted' 'needs qemu-aarch64 and gcc-aarch64-linux-gnu'
fi

# A full disk: 200 KiB of file size limit (soft: the plugin's shared memory is raised past
# it, a hard limit would refuse it), SIGXFSZ ignored as a shell would; four threads of
# about 60 KiB of trace each. The file keeps the records that fit and decodes.
expect_code 1 'ulimit -f 200: error naming the file and what was kept; the file decodes' '
	(ulimit -S -f 200; trap "" XFSZ
	 tracectl record --pmu emulated -o full.data -- ./thr 150000 2>err); rc=$?
	cat err && grep -q "^error: full.data: File too large writing at offset" err &&
	grep -q "the file keeps its first [0-9]* records" err &&
	[ "$(stat -c %s full.data)" -le 204800 ] && ! ls | grep -q "^full\.data\.tmp" &&
	tracectl decode --branches -i full.data 2>derr >/dev/null; cat derr &&
	grep -q " 0 errors" derr && q=$(tc_branches full.data | cut -d" " -f1 | sort -u | wc -l) &&
	echo "threads kept: $q" && [ "$q" -ge 1 ] && [ "$q" -lt 4 ] &&
	[ "$(perf_branches full.data | wc -l)" = "$(tc_branches full.data | wc -l)" ] &&
	exit $rc
'

# No silent fallback to ptrace: without qemu-x86_64 in PATH, an error naming the package
expect_code 1 'no qemu-x86_64 in PATH: an error naming qemu-user (not qemu-user-static)' '
	mkdir -p nobin && PATH=$PWD/nobin "$TRACECTL" record --pmu emulated -o nq.data \
		-- "$PWD/loop" 10 2>err; rc=$?
	cat err; grep -q "apt install qemu-user; qemu-user-static cannot load plugins" err &&
	grep -q "emulator ptrace" err && ! grep -q "single-step instead\|(ptrace)" err &&
	[ ! -e nq.data ] && exit $rc
'
expect '--emulator ptrace still works without qemu' '
	PATH=$PWD/nobin "$TRACECTL" record --pmu emulated --emulator ptrace -o np.data \
		-- "$PWD/loop" 10 2>err && cat err && grep -q "(ptrace)" err &&
	tracectl decode -i np.data >/dev/null
'
