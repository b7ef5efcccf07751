# tracectl record --pmu emulated with trace control (lib/emulate/emu_trigger.c, pt_stream.c,
# emu_etm.c): --pause-on/--resume-on on functions and file offsets, --start-paused, per
# thread; -S snapshots on SIGUSR2 and at the end. Oracles: the ground truth, tracectl decode
# --branches and perf script. A paused stretch is absent from all three (the truth's "FROM 0"
# where the trace stops, "0 TO" where it resumes); a snapshot decodes to a contiguous run of
# the truth that ends where the snapshot was taken.
. "$TOP/tests/e2e/lib.sh"

FIXT="$TOP/tests/fixtures"

# exact NAME RECORD-OPTIONS... -- CMD...: the truth, tracectl's branches and perf's agree;
# record exits with the program's status, $prog_rc (0 unless a check sets it)
exact() {
	n=$1
	shift
	tracectl record --pmu emulated -o $n.data --ground-truth $n.truth "$@" >$n.out \
		2>$n.err
	rc=$?
	cat $n.err && [ $rc = "${prog_rc:-0}" ] && by_tid $n.truth >$n.want && [ -s $n.want ] &&
	tc_branches $n.data >$n.got && diff $n.want $n.got &&
	perf_branches $n.data >$n.pgot && diff $n.want $n.pgot &&
	! grep -v "^unwind: target platform=arm64" $n.data.perf-err
}
# sym NM FILE SYMBOL: its address in the truth's spelling (hex, no 0x, no leading zeros)
sym() { printf '%x' "0x$($1 "$2" | awk -v s="$3" '$3 == s { print $1; exit }')"; }
# inside NM FILE SYMBOL TRUTH: lines of TRUTH whose FROM is inside SYMBOL
inside() {
	$1 -S "$2" | awk -v s="$3" '$4 == s { print $1, $2; exit }' >range &&
	awk 'function hex(s, v, i) {
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	     }
	     NR == FNR { lo = hex($1); hi = lo + hex($2); next }
	     { f = hex($2) } f >= lo && f < hi' range "$4"
}
# runs TRUTH DECODED: how many contiguous runs of TRUTH (one thread) DECODED is, in order,
# the last ending where TRUTH ends; a decoder's marks where a snapshot's trace stops (FROM 0)
# or starts (0 TO) are left out. "fail" when it is no such thing.
runs() {
	awk 'NR == FNR { t[++n] = $0; next }
	{ d[++m] = $0 }
	END {
		end = n; r = 0; pos = m
		while (pos > 0) {
			if (r && d[pos] ~ / 0$/)
				pos--
			best = 0
			for (p = end; p >= 1 && !(r == 0 && p != n); p--) {
				for (k = 0; k < pos && k < p && t[p - k] == d[pos - k]; k++)
					;
				if (k > best) { best = k; bp = p }
			}
			if (!best) { print "fail"; exit }
			pos -= best; end = bp - best; r++
			if (pos > 0 && d[pos] ~ /^[0-9]+ 0 /)
				pos--
		}
		print r
	}' "$1" "$2"
}
# snapshots NAME: the recording has 2 or more snapshots, and each decoder gives each one as a
# run of the truth (far less than the truth: a ring of 16 KiB)
snapshots() {
	perf report -D -i $1.data 2>/dev/null >$1.d &&
	s=$(grep -c "PERF_RECORD_AUXTRACE size" $1.d) && [ "$s" -ge 2 ] &&
	grep -q "Snapshot.* 1$" $1.d && by_tid $1.truth >$1.want &&
	tc_branches $1.data >$1.got && perf_branches $1.data >$1.pgot &&
	grep -q " 0 errors" $1.data.tc-err &&
	for got in $1.got $1.pgot; do
		r=$(runs $1.want $got) && echo "$got: $r runs of $s snapshots" &&
		[ "$r" != fail ] && [ "$r" -ge 2 ] && [ "$r" -le "$s" ] &&
		[ "$(wc -l <$got)" -lt "$(($(wc -l <$1.want) / 2))" ] || return 1
	done
}
# tails NAME MIN: -S's last snapshot of a short threaded run: each thread that decodes (at
# least MIN) does so as one run of its truth, ending where the thread ends
tails() {
	by_tid $1.truth >$1.want && tc_branches $1.data >$1.got && perf_branches $1.data >$1.pgot &&
	n=0 && for tid in $(cut -d" " -f1 $1.want | sort -u); do
		grep "^$tid " $1.want >w && grep "^$tid " $1.got >g || continue
		grep "^$tid " $1.pgot >pg && cmp g pg && [ "$(runs w g)" = 1 ] || return 1
		echo "thread $tid: $(wc -l <g) of $(wc -l <w) branches"; n=$((n + 1))
	done && [ $n -ge $2 ]
}

cp "$FIXT/emu/snap.c" snap.c

cat >tail.c <<'EOF'
/* Three workers run short pseudo-random loops; main joins them, then runs a long one
 * (argv[1] iterations). Whatever order the emulator drains the threads' rings into the
 * shared sink, its last 16 KiB then hold more than 4 KiB of main's trace, so an A-sync of
 * main's (one per 4 KiB of an ETM's own trace) is in a snapshot of them. */
#include <pthread.h>
#include <stdlib.h>

static volatile unsigned long sink;

static unsigned long __attribute__((noinline)) mix(unsigned long x) { return x >> 40; }

static unsigned long __attribute__((noinline)) work(unsigned long n, unsigned long x)
{
	unsigned long s = 0;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		s += x >> 63 ? mix(x) : (x & 7);
	}
	return s;
}

static void *worker(void *arg)
{
	sink += work(200 + 100 * (unsigned long)arg, (unsigned long)arg + 1);
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t t[3];

	for (long i = 0; i < 3; i++)
		if (pthread_create(&t[i], 0, worker, (void *)i))
			return 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], 0);
	sink += work(argc > 1 ? strtoul(argv[1], 0, 0) : 0, 7);
	return 0;
}
EOF

if [ "$(uname -m)" != x86_64 ] || ! command -v gcc >/dev/null ||
   ! command -v qemu-x86_64 >/dev/null; then
	skip 'emulated Intel PT trace control' 'needs x86-64, gcc and qemu-x86_64'
else
	gcc -O1 -g -no-pie -o cb "$FIXT/progs/callbacks.c" &&
	gcc -O1 -g -no-pie -pthread -o thr "$TOP/examples/threads.c" &&
	gcc -O1 -o snap snap.c || echo "not ok $T: cannot build the x86-64 fixtures"
	expect 'PT: paused at a function, resumed at another: exact; nothing between' '
		exact pr --pause-on ./cb:cmp --resume-on cb:on_usr1 -- ./cb &&
		cmp=$(sym nm cb cmp) && usr=$(sym nm cb on_usr1) &&
		grep -A1 " $cmp 0$" pr.want >pair && cat pair &&
		[ "$(wc -l <pair)" = 2 ] && grep -q " 0 $usr$" pair &&
		[ "$(inside nm cb cmp pr.want | wc -l)" = 1 ] &&
		exact full -- ./cb && [ "$(inside nm cb cmp full.want | wc -l)" -gt 10 ] &&
		perf report -D -i pr.data 2>/dev/null | grep -A1 " FUP 0x" | grep -q "TIP.PGD no ip"
	'
	expect 'PT: a trigger inside a block (FILE:0xOFFSET) acts at that instruction' '
		at=$(objdump -d --no-show-raw-insn cb |
		     awk "/<cmp>:\$/ { getline; getline; sub(\":\", \"\", \$1); print \$1; exit }") &&
		echo "second instruction of cmp: $at" &&
		exact mid --pause-on "$PWD/cb:0x$(printf %x $((0x$at - 0x400000)))" \
			--resume-on ./cb:on_usr1 -- ./cb &&
		grep -q " $at 0$" mid.want && [ "$(inside nm cb cmp mid.want | wc -l)" = 1 ]
	'
	expect 'PT: --start-paused, resumed in libc (FILE a mapped name), paused again' '
		exact sp --start-paused --resume-on libc.so.6:qsort --pause-on ./cb:at_end \
			-- ./cb &&
		head -n1 sp.want | grep -q "^[0-9]* 0 " &&
		tail -n1 sp.want | grep -q " $(sym nm cb at_end) 0$" &&
		[ "$(wc -l <sp.want)" -lt "$(wc -l <full.want)" ]
	'
	expect 'PT: per thread: each of 4 threads pauses its own trace at fib' '
		exact th --pause-on ./thr:fib -- ./thr && fib=$(sym nm thr fib) &&
		[ "$(cut -d" " -f1 th.want | sort -u | wc -l)" = 4 ] &&
		[ "$(grep -c " $fib 0$" th.want)" = 4 ] &&
		[ "$(cut -d" " -f1 th.want | uniq | wc -l)" = 4 ] &&
		[ "$(inside nm thr fib th.want | wc -l)" = 4 ]
	'
	expect_code 1 'PT: a trigger that never resolves is an error naming it' '
		tracectl record --pmu emulated -o x.data --pause-on ./cb:no_such_fn -- ./cb 2>err
		rc=$?; cat err; grep -q "no_such_fn" err || exit 9
		tracectl record --pmu emulated -o x.data --resume-on libnothere.so:f -- ./cb 2>err
		[ $? = 1 ] && cat err && grep -q "libnothere.so:f" err; exit $rc
	'
	expect 'PT -S: snapshots on SIGUSR2 (the program sends them) and at the end' '
		tracectl record --pmu emulated -S -m 128,4 -o ss.data --ground-truth ss.truth \
			-- ./snap 4 100000 self && snapshots ss
	'
	expect 'PT -S with 4 threads: a ring each; each thread ends its last snapshot' '
		tracectl record --pmu emulated -S -m 128,1 -o st.data --ground-truth st.truth \
			-- ./thr && tails st 4 && [ "$(wc -l <st.got)" -lt "$(wc -l <st.want)" ]
	'
	expect 'PT -S: SIGUSR2 sent to tracectl during a run' '
		"$TRACECTL" record --pmu emulated -S -m 128,4 -o sk.data --ground-truth sk.truth \
			-- ./snap 8 20000 sleep >sk.out & pid=$!
		i=0; while [ ! -s sk.out ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
		kill -USR2 $pid; wait $pid && snapshots sk
	'
fi

if ! command -v qemu-aarch64 >/dev/null || ! command -v aarch64-linux-gnu-gcc >/dev/null; then
	skip 'emulated ETM trace control' 'needs qemu-aarch64 and gcc-aarch64-linux-gnu'
else
	aarch64-linux-gnu-gcc -O2 -static -o a64-paths "$FIXT/etm/paths.c" &&
	aarch64-linux-gnu-gcc -O1 -static -pthread -o a64-thr "$TOP/examples/threads.c" &&
	aarch64-linux-gnu-gcc -O1 -static -o a64-snap snap.c &&
	aarch64-linux-gnu-gcc -O1 -static -pthread -o a64-tail tail.c ||
		echo "not ok $T: cannot build the aarch64 fixtures"
	NM=aarch64-linux-gnu-nm
	# a64-paths 9 exits with its sum's low bit, and record with it
	qemu-aarch64 ./a64-paths 9 >/dev/null; paths_rc=$?
	# main calls pick on odd rounds after ops[i % 3]: mul resumes before a pick, or not
	expect 'ETM: paused at pick, resumed at mul: exact; nothing of pick is traced' '
		prog_rc=$paths_rc &&
		exact epr --pause-on ./a64-paths:pick --resume-on a64-paths:mul -- ./a64-paths 9 &&
		[ -z "$(inside $NM a64-paths pick epr.want)" ] &&
		[ "$(grep -c " 0 $(sym $NM a64-paths mul)$" epr.want)" -ge 2 ] &&
		exact efull -- ./a64-paths 9 && [ -n "$(inside $NM a64-paths pick efull.want)" ]
	'
	expect 'ETM: triggers inside blocks (offsets) and --start-paused: exact' '
		prog_rc=$paths_rc && mul=$(sym $NM a64-paths mul) && pick=$(sym $NM a64-paths pick) &&
		exact emid --pause-on "./a64-paths:0x$(printf %x $((0x$pick + 8 - 0x400000)))" \
			--resume-on "./a64-paths:0x$(printf %x $((0x$mul + 4 - 0x400000)))" \
			-- ./a64-paths 9 &&
		grep -q " 0 $(printf %x $((0x$mul + 4)))$" emid.want &&
		exact esp --start-paused \
			--resume-on "./a64-paths:0x$(printf %x $((0x$pick + 8 - 0x400000)))" \
			-- ./a64-paths 9 &&
		head -n1 esp.want | grep -q " 0 $(printf %x $((0x$pick + 8)))$" &&
		[ "$(wc -l <esp.want)" -lt "$(wc -l <efull.want)" ]
	'
	expect 'ETM: per thread: each of 4 threads pauses its own trace at fib' '
		exact eth --pause-on ./a64-thr:fib -- ./a64-thr &&
		[ "$(cut -d" " -f1 eth.want | sort -u | wc -l)" = 4 ] &&
		[ -z "$(inside $NM a64-thr fib eth.want)" ]
	'
	# one sink: a thread whose last A-sync is before the kept 16 KiB does not decode, and
	# which threads' trace ends the sink depends on when their rings were drained; main's
	# long tail (tail.c) makes sure of one decoding thread: main, the one with most branches
	expect 'ETM -S with 4 threads: one sink; the threads that decode end their last snapshot' '
		tracectl record --pmu emulated -S -m 128,4 -o est.data --ground-truth est.truth \
			-- ./a64-tail 20000 && tails est 1 &&
		main=$(cut -d" " -f1 est.want | uniq -c | sort -n | tail -n1 | awk "{ print \$2 }") &&
		grep -q "^$main " est.got && [ "$(wc -l <est.got)" -lt "$(wc -l <est.want)" ]
	'
	expect 'ETM -S: snapshots on SIGUSR2 and at the end, each a run of the truth' '
		tracectl record --pmu emulated -S -m 128,4 -o es.data --ground-truth es.truth \
			-- ./a64-snap 4 100000 self && snapshots es
	'
fi
