# tracectl record --pmu emulated, what threads and processes do over a run: ETM trace IDs
# reused after a thread exits (only more than 96 live at once refused), --snapshot-on at a
# code location, asynchronous and nested (SA_NODEFER) signals under ETM and Intel PT, and
# execve from a multi-threaded program. Oracles: the plugin's ground truth per thread,
# tracectl decode --branches and Debian's perf script --itrace=b.
. "$TOP/tests/e2e/lib.sh"

# exact NAME RECORD-OPTIONS... -- CMD...: record exits 0, the truth has more than $min
# lines, tracectl's branches and perf's are the truth
exact() {
	n=$1
	shift
	tracectl record --pmu emulated -o $n.data --ground-truth $n.truth "$@" >$n.out \
		2>$n.err && cat $n.err && by_tid $n.truth >$n.want &&
	[ "$(wc -l <$n.want)" -gt "${min:-1000}" ] &&
	tc_branches $n.data >$n.got && diff $n.want $n.got &&
	perf_branches $n.data >$n.pgot && diff $n.want $n.pgot &&
	! grep -v "^unwind: target platform=arm64" $n.data.perf-err
}
# tids NAME: the threads of the truth
tids() { cut -d" " -f1 $1.want | sort -u; }

have64=1
if ! command -v qemu-aarch64 >/dev/null || ! command -v aarch64-linux-gnu-gcc >/dev/null; then
	skip 'emulated ETM processes and signals' 'needs qemu-aarch64 and gcc-aarch64-linux-gnu'
	have64=
fi
have86=1
if [ "$(uname -m)" != x86_64 ] || ! command -v gcc >/dev/null ||
   ! command -v qemu-x86_64 >/dev/null; then
	skip 'emulated Intel PT signals and exec' 'needs x86-64, gcc and qemu-x86_64'
	have86=
fi

# many N LIVE: N threads, LIVE at a time, then N fork children, LIVE at a time, each a
# little work; l N: N threads alive at once (barriers), for half a second
cat >many.c <<'EOF'
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;
static pthread_barrier_t bar;

static void *spin(void *arg)
{
	for (unsigned long i = 0; i < (unsigned long)arg; i++)
		sink += i % 7;
	return NULL;
}

static void *meet(void *arg)
{
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	return arg;
}

int main(int argc, char **argv)
{
	int n = atoi(argv[2]), live = argc > 3 ? atoi(argv[3]) : 1;
	pthread_t t[200];

	if (argv[1][0] == 'l') {
		pthread_barrier_init(&bar, NULL, n + 1);
		for (int i = 0; i < n; i++)
			pthread_create(&t[i], NULL, meet, NULL);
		pthread_barrier_wait(&bar);
		usleep(500000);	/* all alive, tracectl has seen them start */
		pthread_barrier_wait(&bar);
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	for (int i = 0; i < n; i += live) {
		for (int k = 0; k < live && i + k < n; k++)
			pthread_create(&t[k], NULL, spin, (void *)(100UL + i));
		for (int k = 0; k < live && i + k < n; k++)
			pthread_join(t[k], NULL);
	}
	for (int i = 0; i < n; i += live) {
		for (int k = 0; k < live && i + k < n; k++)
			if (!fork()) {
				spin((void *)(100UL + i));
				_exit(0);
			}
		for (int k = 0; k < live && i + k < n; k++)
			wait(NULL);
	}
	spin((void *)1000UL);
	return 0;
}
EOF

if [ -n "$have64" ]; then
	aarch64-linux-gnu-gcc -O1 -static -pthread -o a64-many many.c ||
		echo "not ok $T: cannot build many.c for aarch64"
	expect 'ETM: 100 threads then 100 children over the run (trace IDs reused): exact per thread' '
		exact reuse -- ./a64-many m 100 1 && [ "$(tids reuse | wc -l)" = 201 ] &&
		grep -q "201 threads" reuse.err &&
		perf report -D -i reuse.data 2>/dev/null | grep -c "^[[:space:]]*CPU[[:space:]]" >ncpu &&
		echo "ETMs in AUXTRACE_INFO: $(cat ncpu)" && [ "$(cat ncpu)" -le 96 ] &&
		tracectl decode -i reuse.data --per-thread streams 2>/dev/null &&
		[ "$(ls streams | grep -c "^tid-")" = 201 ] &&
		for f in streams/tid-*.txt; do
			t=${f#streams/tid-}; t=${t%.txt}
			[ "$(grep -c " range " $f)" -gt 0 ] &&
			! grep -v "/$t " $f | grep -q . || { echo "$f: another thread"; exit 1; }
		done &&
		perf script -i reuse.data --itrace=b -F pid,tid 2>/dev/null | sort -u >pt &&
		[ "$(wc -l <pt)" = 201 ] && [ "$(cut -d/ -f1 pt | sort -u | wc -l)" = 101 ]
	'
	expect 'ETM: 20 threads alive at a time, 120 in all, and as many children: exact' '
		exact reuse20 -- ./a64-many m 120 20 && [ "$(tids reuse20 | wc -l)" = 241 ]
	'
	expect 'ETM: 96 threads alive at once are traced' '
		min=100 exact live96 -- ./a64-many l 95 && [ "$(tids live96 | wc -l)" = 96 ]
	'
	expect_code 1 'ETM: 97 threads alive at once: an error naming the limit' '
		tracectl record --pmu emulated -o live97.data -- ./a64-many l 96 2>err
		rc=$?; cat err
		grep -q "more than 96 threads alive at once" err && [ ! -e live97.data ] || exit 9
		exit $rc
	'
fi

# --snapshot-on: snap.c (t59's: PHASES of ITER pseudo-random iterations in work(), a "+" and
# a sleep after each) with a snapshot each time work is entered
cp "$TOP/tests/fixtures/emu/snap.c" snap.c
# ends TRUTH DECODED: the truth line numbers where the contiguous runs of TRUTH that make
# DECODED (one thread) end, the last run first; "fail" when DECODED is no such thing. A
# decoder's marks where a snapshot's trace stops (FROM 0) or starts (0 TO) are left out.
ends() {
	awk 'NR == FNR { t[++n] = $0; next }
	{ d[++m] = $0 }
	END {
		end = n; pos = m
		while (pos > 0) {
			if (d[pos] ~ / 0$/)
				pos--
			best = 0
			for (p = end; p >= 1 && pos > 0; p--) {
				for (k = 0; k < pos && k < p && t[p - k] == d[pos - k]; k++)
					;
				if (k > best) { best = k; bp = p }
			}
			if (!best && pos > 0) { print "fail"; exit }
			if (pos > 0)
				print bp
			pos -= best; end = bp - best
			if (pos > 0 && d[pos] ~ /^[0-9]+ 0 /)
				pos--
		}
	}' "$1" "$2"
}
# snapon NAME NM PROG: NAME.data has a snapshot per call of work and one at the end, and each
# decoder gives the trace as runs of the truth, each ending at a call of work (that line or
# the one before: where the decoder stops) or where the program ends (its last branch, or
# the one before the truth's last, the stop the decoder's own mark stands for). A snapshot
# whose ring held all the trace since the one before (its AUX offset follows on) goes on
# from it: tracectl decodes the last one, a few hundred bytes without PSB; perf does not.
snapon() {
	grep -q "tracectl record: 6 snapshots" $1.err &&
	perf report -D -i $1.data 2>/dev/null | grep -c "PERF_RECORD_AUXTRACE size" | grep -qx 6 &&
	w=$($2 $3 | awk '$3 == "work" { sub(/^0*/, "", $1); print $1 }') &&
	grep -n " $w$" $1.truth | cut -d: -f1 >calls && [ "$(wc -l <calls)" = 5 ] &&
	tc_branches $1.data >$1.got && perf_branches $1.data >$1.pgot &&
	[ "$(wc -l <$1.got)" -lt "$(($(wc -l <$1.truth) / 2))" ] &&
	for got in $1.got $1.pgot; do
		ends $1.truth $got >e && echo "$got: runs end at $(tr "\n" " " <e)" &&
		! grep -q fail e && [ "$(wc -l <e)" -ge 4 ] || return 1
		n=$(wc -l <$1.truth)
		while read -r x; do
			[ "$x" = "$n" ] || { [ "$x" = "$((n - 1))" ] && tail -n 1 $1.truth | grep -q " 0$"; } ||
				grep -qx -e "$x" -e "$((x + 1))" calls ||
				{ echo "a run ends at truth line $x"; return 1; }
		done <e
	done
}
if [ -n "$have86" ]; then
	gcc -O1 -no-pie -o snap snap.c || echo "not ok $T: cannot build snap.c"
	expect 'PT -S --snapshot-on ./snap:work: a snapshot each time work is entered, ending there' '
		tracectl record --pmu emulated -S -m 128,4 --snapshot-on ./snap:work -o pso.data \
			--ground-truth pso.truth -- ./snap 4 100000 x >pso.out 2>pso.err &&
		cat pso.err && snapon pso nm snap
	'
	expect_code 2 'PT --snapshot-on without -S: a usage error naming it' '
		tracectl record --pmu emulated --snapshot-on ./snap:work -o x.data -- ./snap 2>err
		rc=$?; cat err; grep -q -- "--snapshot-on takes snapshots: it needs -S" err || exit 9
		exit $rc
	'
	expect_code 2 'PT --snapshot-on with a tracepoint: a usage error naming the option' '
		tracectl record --pmu emulated -S --snapshot-on sched:sched_switch -o x.data \
			-- ./snap 2>err
		rc=$?; cat err; grep -q -- "--snapshot-on .sched:sched_switch.: a tracepoint" err ||
			exit 9
		exit $rc
	'
	expect_code 1 'PT --snapshot-on that never resolves: an error naming it' '
		tracectl record --pmu emulated -S --snapshot-on ./snap:no_such -o x.data \
			-- ./snap 2>err
		rc=$?; cat err; grep -q "no_such" err || exit 9
		exit $rc
	'
	expect '--dry-run shows --snapshot-on' '
		tracectl record --pmu emulated --dry-run -S --snapshot-on ./snap:work -- ./snap >out &&
		cat out && grep -q "on reaching ./snap:work" out &&
		tracectl -j record --pmu emulated --dry-run -S --snapshot-on ./snap:work -- ./snap |
			jq -e ".snapshot_on == [\"./snap:work\"]"
	'
fi
if [ -n "$have64" ]; then
	aarch64-linux-gnu-gcc -O1 -static -o a64-snap snap.c ||
		echo "not ok $T: cannot build snap.c for aarch64"
	expect 'ETM -S --snapshot-on: a snapshot each time work is entered, ending there' '
		tracectl record --pmu emulated -S -m 128,4 --snapshot-on ./a64-snap:work \
			-o eso.data --ground-truth eso.truth -- ./a64-snap 4 100000 x >eso.out \
			2>eso.err && cat eso.err && snapon eso aarch64-linux-gnu-nm a64-snap
	'
fi

# sig N [n]: a loop of calls computing while a 1 ms timer's SIGALRM comes 40 times (its
# handler, on_alrm, entered wherever the loop is); with n, SA_NODEFER and a handler that
# sometimes runs long, so that the timer interrupts it too: "nested" when it did
cat >sig.c <<'EOF'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile unsigned long hits, sink;
static volatile int depth, maxdepth;

static void __attribute__((noinline)) on_alrm(int sig)
{
	(void)sig;
	if (++depth > maxdepth)
		maxdepth = depth;
	hits++;
	for (unsigned long i = 0; i < (hits & 1 ? 20000UL : 10UL); i++)
		sink += i ^ hits;
	depth--;
}

static unsigned long __attribute__((noinline)) work(unsigned long x)
{
	return x % 3 ? x * 7 : x >> 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	unsigned long n = strtoul(argv[1], 0, 0), x = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alrm;
	sa.sa_flags = argc > 2 ? SA_NODEFER : 0;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (unsigned long i = 0; i < n && hits < 40; i++)
		x += work(x + i);
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	if (maxdepth > 1)
		puts("nested");
	return 0;
}
EOF
# handled NAME NM PROG MIN: the truth enters on_alrm at least MIN times from no branch (the
# trace resumes there; where the interrupted block ended in an indirect branch, that branch
# shows going to the handler)
handled() {
	h=$($2 $3 | awk '$3 == "on_alrm" { sub(/^0*/, "", $1); print $1 }') &&
	grep -c " 0 $h$" $1.want >n && echo "on_alrm entered $(cat n) times as a new start" &&
	[ "$(cat n)" -ge $4 ]
}
if [ -n "$have64" ]; then
	aarch64-linux-gnu-gcc -O1 -static -o a64-sig sig.c ||
		echo "not ok $T: cannot build sig.c for aarch64"
	expect 'ETM: a timer signal while computing: TRACE_ON at the handler and after it, exact' '
		exact esig -- ./a64-sig 100000000 && handled esig aarch64-linux-gnu-nm a64-sig 30
	'
	expect 'ETM: SA_NODEFER handlers interrupted by their own signal: exact' '
		exact enest -- ./a64-sig 100000000 n && grep -qx nested enest.out &&
		handled enest aarch64-linux-gnu-nm a64-sig 30
	'
fi
if [ -n "$have86" ]; then
	gcc -O1 -no-pie -o sig sig.c || echo "not ok $T: cannot build sig.c"
	expect 'PT: a timer signal while computing: exact' '
		exact psig -- ./sig 100000000 && handled psig nm sig 30
	'
	expect 'PT: SA_NODEFER handlers interrupted by their own signal, one as another returns: exact' '
		nest=0 && for i in 1 2 3; do
			exact pnest -- ./sig 100000000 n && handled pnest nm sig 30 ||
				{ cat pnest.err; exit 1; }
			! grep -qx nested pnest.out || nest=$((nest + 1))
		done && echo "$nest of 3 runs nested" && [ $nest -ge 1 ]
	'
fi

# tex: two threads (one computing, one mostly in usleep) run while the main thread execs
# the program again ("tex new": a little work, prints "exec'd new"); the kernel ends the
# threads at the exec
cat >tex.c <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long sink;
static volatile int ready;

static void *spin(void *arg)
{
	__atomic_fetch_add(&ready, 1, __ATOMIC_SEQ_CST);
	for (unsigned long i = 0;; i++) {
		sink += i % 7;
		if (arg && i % 1000 == 0)
			usleep(100);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1) {
		for (unsigned long i = 0; i < 20000; i++)
			sink += i % 5;
		printf("exec'd %s\n", argv[1]);
		return 0;
	}
	pthread_create(&t, NULL, spin, NULL);
	pthread_create(&t, NULL, spin, (void *)1);
	while (ready < 2)
		;
	for (unsigned long i = 0; i < 50000; i++)
		sink += i % 3;
	execl(argv[0], argv[0], "new", (char *)NULL);
	return 9;
}
EOF
# execd NAME: the exec'd image ran and is traced under the first pid and tid (COMM exec),
# the two threads ended (EXIT) and nothing of theirs follows the exec
execd() {
	grep -qx "exec'd new" $1.out && grep -q "4 threads" $1.err && [ "$(tids $1 | wc -l)" = 3 ] &&
	perf script -i $1.data --show-task-events 2>/dev/null >sb &&
	pid=$(sed -n "s/.*PERF_RECORD_COMM exec: [a-z0-9-]*tex:\([0-9]*\)\/\1$/\1/p" sb | tail -n1) &&
	[ -n "$pid" ] && [ "$(grep -c "PERF_RECORD_COMM exec: [a-z0-9-]*tex:$pid/$pid" sb)" = 2 ] &&
	[ "$(grep -c "PERF_RECORD_EXIT($pid:" sb)" = 3 ] &&
	perf script -i $1.data --itrace=b -F tid,ip,sym 2>/dev/null | grep -q "^ *$pid .* main$"
}
if [ -n "$have86" ]; then
	gcc -O1 -pthread -o tex tex.c || echo "not ok $T: cannot build tex.c"
	expect 'PT: execve from a program with two running threads: they end, the new image traced, exact' '
		for i in 1 2 3; do
			min=10000 exact pex -- ./tex && execd pex || exit 1
		done
	'
fi
if [ -n "$have64" ]; then
	aarch64-linux-gnu-gcc -O1 -static -pthread -o a64-tex tex.c ||
		echo "not ok $T: cannot build tex.c for aarch64"
	expect 'ETM: execve from a program with two running threads: they end, the new image traced, exact' '
		for i in 1 2 3; do
			min=10000 exact eex -- ./a64-tex && execd eex || exit 1
		done
	'
fi
