#!/bin/sh
# make bench: emulated recording speed at the end; Intel PT decode against perf script
# before it; first, time `tracectl decode -j` on the largest OpenCSD snapshot against OpenCSD's own
# trc_pkt_lister -decode_only on the same snapshot, both to /dev/null, in the same run, and
# print the ratios. The machine may be shared, so CPU time (user+sys of the command, from the
# shell's `times`) is the figure to compare; wall time is shown too. Each is the best of
# BENCH_RUNS runs. Timings only; nothing here is a test.
set -u
TRACECTL=${TRACECTL:?}
TD=${TC_TESTDATA:-$(dirname "$0")/../../../shared/testdata}
SNAP=$(cd "${BENCH_SNAPSHOT:-$TD/opencsd/bugfix-exact-match}" && pwd)
RUNS=${BENCH_RUNS:-5}
TOP=$(cd "$(dirname "$0")/../.." && pwd)

[ -d "$SNAP" ] || { echo "bench: $SNAP missing" >&2; exit 1; }
command -v trc_pkt_lister >/dev/null || { echo "bench: trc_pkt_lister missing (libopencsd-bin)" >&2; exit 1; }

now() { date +%s.%N; }
# "CPU WALL": user+sys seconds of "$@" (its own and its children's, as `times` gives them for
# a subshell that only ran it) and wall seconds, output to /dev/null.
once() {
	t0=$(now)
	c=$( ( "$@" >/dev/null 2>&1; times ) | awk 'NR == 2 {
		n = split($0, f, /[ms ]+/); s = 0
		for (i = 1; i + 1 <= n; i += 2) if (f[i] != "") s += f[i] * 60 + f[i + 1]
		printf "%.3f", s }')
	t1=$(now)
	echo "$c $t0 $t1" | awk '{ printf "%.3f %.3f", $1, $3 - $2 }'
}
# best CPU and best wall of RUNS runs
best() {
	bc= bw= i=0
	while [ $i -lt "$RUNS" ]; do
		set -- $(once "$@") "$@"
		c=$1 w=$2
		shift 2
		bc=$(echo "$c ${bc:-$c}" | awk '{ print ($1 < $2) ? $1 : $2 }')
		bw=$(echo "$w ${bw:-$w}" | awk '{ print ($1 < $2) ? $1 : $2 }')
		i=$((i + 1))
	done
	echo "$bc $bw"
}
# trc_pkt_lister also writes a trc_pkt_lister.ppl where it runs: keep that out of the tree.
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
lister() { (cd "$work" && trc_pkt_lister -ss_dir "$SNAP" -decode_only -logfilename /dev/null); }

set -- $(best "$TRACECTL" -j decode -i "$SNAP")
c_ours=$1 w_ours=$2
set -- $(best lister)
c_ocsd=$1 w_ocsd=$2
echo "snapshot: $SNAP (best of $RUNS runs each, output to /dev/null)"
echo "A: $TRACECTL -j decode -i $SNAP"
echo "B: trc_pkt_lister -ss_dir $SNAP -decode_only -logfilename /dev/null"
printf '%-28s %10s %10s\n' "" "CPU s" "wall s"
printf '%-28s %10s %10s\n' "A tracectl decode -j" "$c_ours" "$w_ours"
printf '%-28s %10s %10s\n' "B trc_pkt_lister" "$c_ocsd" "$w_ocsd"
awk -v a="$c_ours" -v b="$c_ocsd" -v wa="$w_ours" -v wb="$w_ocsd" 'BEGIN {
	ca = a > 0 ? b / a : 0; cw = wa > 0 ? wb / wa : 0
	printf "speed-up B/A: CPU (user+sys) %.2fx, wall %.2fx  (target: CPU >= 2x)\n", ca, cw }'

# Intel PT: a >= 50 MB trace from tests/tools/pt_truth -r (the branchy fixture single-stepped
# once, one cycle of its path repeated), decoded to taken branches by both tools: tracectl's
# JSON branch records against perf script's default branch lines (--itrace=b), CPU time best
# of BENCH_PT_RUNS (3) runs each.
PT_TRUTH=${TC_TOOLS:-$TOP/build/obj/tools}/pt_truth
PT_BYTES=${BENCH_PT_BYTES:-52428800}
pt_bench() {
	gcc -O1 -fPIE -pie -o "$work/branchy" "$TOP/tests/fixtures/progs/branchy.c" &&
		"$PT_TRUTH" -r "$PT_BYTES" -o "$work/pt.data" -- "$work/branchy" 2>"$work/pt.log" ||
		{ echo "(pt_truth failed: $(cat "$work/pt.log"))"; return; }
	RUNS=${BENCH_PT_RUNS:-3}
	set -- $(best "$TRACECTL" -j decode --branches -i "$work/pt.data")
	c_ours=$1 w_ours=$2
	set -- $(best perf script -i "$work/pt.data" --itrace=b)
	c_perf=$1 w_perf=$2
	echo "Intel PT: $(stat -c %s "$work/pt.data") bytes of perf.data, $(grep -o '[0-9]* branches' "$work/pt.log") (best of $RUNS runs each, output to /dev/null)"
	echo "A: $TRACECTL -j decode --branches -i pt.data"
	echo "B: perf script -i pt.data --itrace=b"
	printf '%-28s %10s %10s\n' "" "CPU s" "wall s"
	printf '%-28s %10s %10s\n' "A tracectl decode --branches" "$c_ours" "$w_ours"
	printf '%-28s %10s %10s\n' "B perf script --itrace=b" "$c_perf" "$w_perf"
	awk -v a="$c_ours" -v b="$c_perf" -v wa="$w_ours" -v wb="$w_perf" 'BEGIN {
		ca = a > 0 ? b / a : 0; cw = wa > 0 ? wb / wa : 0
		printf "speed-up B/A: CPU (user+sys) %.2fx, wall %.2fx  (target: CPU >= 3x)\n", ca, cw }'
	rm -f "$work/pt.data"
}
if [ "$(uname -m)" = x86_64 ] && command -v gcc >/dev/null && command -v perf >/dev/null &&
   [ -x "$PT_TRUTH" ]; then
	pt_bench
else
	echo "Intel PT: skipped (needs x86-64, gcc, perf and $PT_TRUTH)"
fi

# Emulated recording (tracectl record --pmu emulated): instructions per second of the
# program being followed, as the status line reports them (x86-64 with Intel PT under QEMU
# with tracectl's plugin, and under ptrace; aarch64 with ETM under qemu-user). Skipped where
# the compilers or qemu are missing.
emu_rate() {	# label, tracectl record args...
	label=$1
	shift
	line=$("$TRACECTL" record --pmu emulated -o "$work/emu.data" "$@" 2>&1 >/dev/null |
		grep "instructions/s")
	echo "$line" | sed -E 's/.* ([0-9]+) instructions \(([0-9]+) traced\).*; ([0-9.]+) s, ([0-9]+) instructions\/s.*/\1 \2 \3 \4/' |
		awk -v l="$label" '{ printf "%-40s %9d insns %9d traced %7.2f s %9d insns/s\n", l, $1, $2, $3, $4 }'
}
# Under QEMU: a CPU-bound program of ~10^9 instructions (tests/bench/qp_loop.c, BENCH_QP_N=36)
# natively (x86-64), under plain qemu and recorded, wall seconds of each in the same run;
# instructions from the plugin's own count; ratios against plain qemu.
qemu_bench() {	# x86 | a64
	n=${BENCH_QP_N:-36}
	plugin=$TOP/build/qemu_plugin/tracectl-qemu.so
	q=qemu-x86_64 cc=gcc ccflags=
	[ "$1" = a64 ] && q=qemu-aarch64 cc=aarch64-linux-gnu-gcc ccflags=-static
	prog=$work/qp_loop-$1
	$cc -O1 $ccflags -o "$prog" "$TOP/tests/bench/qp_loop.c" || return
	insns=$($q -plugin "$plugin,mode=count,stats=on" "$prog" "$n" 2>&1 \
		>/dev/null | sed -n 's/.*inline count \([0-9]*\) insns.*/\1/p')
	[ -n "$insns" ] || { echo "(the plugin did not load: $plugin)"; return; }
	RUNS=${BENCH_QP_RUNS:-3}
	w_nat=0
	if [ "$1" = x86 ]; then
		set -- $(best "$prog" "$n")
		w_nat=$2
	fi
	set -- $(best $q "$prog" "$n")
	w_qemu=$2
	set -- $(best "$TRACECTL" record --pmu emulated -o "$work/qp.data" -- "$prog" "$n")
	c_rec=$1 w_rec=$2
	bytes=$("$TRACECTL" record --pmu emulated -o "$work/qp.data" -- "$prog" "$n" \
		2>&1 >/dev/null | sed -n 's/.* \([0-9]*\) bytes of trace.*/\1/p')
	echo "$q CPU-bound: qp_loop $n, $insns instructions (best wall of $RUNS runs each)"
	[ "$w_nat" = 0 ] || echo "A: $prog $n"
	echo "B: $q $prog $n"
	echo "C: $TRACECTL record --pmu emulated -o qp.data -- $prog $n"
	for row in "A native $w_nat" "B plain-qemu $w_qemu" "C tracectl-record $w_rec"; do
		set -- $row
		[ "$3" = 0 ] && continue
		echo "$3 $insns" | awk -v l="$1 $2" '{ printf "%-28s %8.3f s wall %9.1f M insns/s\n",
			l, $1, $2 / $1 / 1e6 }'
	done
	awk -v a="$w_nat" -v b="$w_qemu" -v c="$w_rec" -v cc="$c_rec" -v by="$bytes" \
		-v n="$insns" 'BEGIN {
		printf "wall C/B %.2fx (recording against plain qemu)", c / b
		if (a > 0) printf ", B/A %.2fx (plain qemu against native)", b / a
		printf "; C CPU %.2f s (tracectl and qemu); trace %.4f bytes/insn\n", cc, by / n }'
	rm -f "$work/qp.data" "$work/qp.data.old"
}
echo "emulated record (tracectl record --pmu emulated):"
if command -v gcc >/dev/null && [ "$(uname -m)" = x86_64 ]; then
	if command -v qemu-x86_64 >/dev/null; then
		qemu_bench x86
	else
		echo "(x86-64 under QEMU skipped: no qemu-x86_64)"
	fi
	gcc -O1 -pthread -o "$work/threads" "$TOP/examples/threads.c" &&
		emu_rate "Intel PT, 4 threads, qemu" -- "$work/threads" &&
		emu_rate "Intel PT, 4 threads, ptrace" --emulator ptrace -- "$work/threads"
fi
if command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null; then
	qemu_bench a64
	aarch64-linux-gnu-gcc -O2 -static -o "$work/paths" "$TOP/tests/fixtures/etm/paths.c" &&
		emu_rate "ETMv4 via qemu-aarch64, 1 thread" -- "$work/paths" 200000
	aarch64-linux-gnu-gcc -O1 -static -pthread -o "$work/a64-threads" "$TOP/examples/threads.c" &&
		emu_rate "ETMv4 via qemu-aarch64, 4 threads" -- "$work/a64-threads"
fi
# Feedback-directed optimisation (man tracectl-decode, FEEDBACK-DIRECTED OPTIMISATION): the
# branchy program tests/bench/fdo_work.c built with clang -O2, an emulated recording of a
# training run (BENCH_FDO_TRAIN rounds), its AutoFDO profile through create_llvm_prof into
# clang -fprofile-sample-use, its BOLT profile through perf2bolt -pa into llvm-bolt; the
# three binaries timed on BENCH_FDO_ROUNDS rounds, best CPU of RUNS each, in the same run.
# The AutoFDO profile is taken from a -fno-inline build of the same source: autofdo 0.19
# writes inlined callees' names corrupt (google/autofdo issue 95), which breaks its binary
# profile; a profile keyed by source lines carries over to the -O2 build.
fdo_bench() {
	src=$TOP/tests/bench/fdo_work.c train=${BENCH_FDO_TRAIN:-5} n=${BENCH_FDO_ROUNDS:-400}
	p2b=/usr/lib/llvm-16/bin/perf2bolt
	for t in clang create_llvm_prof llvm-bolt-16 "$p2b"; do
		command -v "$t" >/dev/null || { echo "(skipped: $t missing; make deps)"; return; }
	done
	( cd "$work" &&
	  clang -O2 -gdwarf-4 -Wl,--emit-relocs -o fdo "$src" &&
	  clang -O2 -gdwarf-4 -fno-inline -o fdo-train "$src" &&
	  "$TRACECTL" record --pmu emulated -o train.data -- ./fdo-train "$train" 2>rec1.log &&
	  "$TRACECTL" decode -i train.data --format autofdo --dso fdo-train >fdo.afdo 2>/dev/null &&
	  create_llvm_prof --profiler text --profile fdo.afdo --binary fdo-train --out fdo.prof &&
	  clang -O2 -gdwarf-4 -fprofile-sample-use=fdo.prof -o fdo-autofdo "$src" &&
	  "$TRACECTL" record --pmu emulated -o fdo.data -- ./fdo "$train" 2>rec2.log &&
	  "$TRACECTL" decode -i fdo.data --format bolt --dso fdo >fdo.pa 2>/dev/null &&
	  "$p2b" -pa -p fdo.pa -o fdo.fdata fdo >p2b.log 2>&1 &&
	  llvm-bolt-16 fdo -o fdo-bolt -data=fdo.fdata -reorder-blocks=ext-tsp \
		-reorder-functions=hfsort -split-functions >bolt.log 2>&1 ) >"$work/fdo.log" 2>&1 ||
		{ echo "(the optimisation loop failed: $(tail -n 3 "$work/fdo.log"))"; return; }
	want=$("$work/fdo" "$n")
	for b in fdo-autofdo fdo-bolt; do
		[ "$("$work/$b" "$n")" = "$want" ] || { echo "($b computes something else)"; return; }
	done
	RUNS=${BENCH_FDO_RUNS:-5}
	set -- $(best "$work/fdo" "$n"); c_base=$1
	set -- $(best "$work/fdo-autofdo" "$n"); c_afdo=$1
	set -- $(best "$work/fdo-bolt" "$n"); c_bolt=$1
	echo "fdo_work $n rounds; profiles from an emulated recording of $train rounds ($(sed -n 's/.* \([0-9]*\) instructions (.*/\1/p' "$work/rec2.log") instructions); best CPU of $RUNS runs each"
	echo "A: clang -O2 (-Wl,--emit-relocs)"
	echo "B: clang -O2 -fprofile-sample-use (decode --format autofdo, create_llvm_prof)"
	echo "C: A through llvm-bolt-16 -reorder-blocks=ext-tsp -reorder-functions=hfsort -split-functions (decode --format bolt, perf2bolt -pa)"
	printf '%-28s %10s\n' "" "CPU s"
	printf '%-28s %10s\n' "A -O2" "$c_base" "B AutoFDO" "$c_afdo" "C BOLT" "$c_bolt"
	awk -v a="$c_base" -v b="$c_afdo" -v c="$c_bolt" 'BEGIN {
		printf "speed-up over A: AutoFDO %.3fx, BOLT %.3fx  (no target: the work fits the caches, so layout gains are small)\n",
			(b > 0 ? a / b : 0), (c > 0 ? a / c : 0) }'
}
echo "feedback-directed optimisation (AutoFDO and BOLT from an emulated recording):"
if [ "$(uname -m)" = x86_64 ] && command -v qemu-x86_64 >/dev/null; then
	fdo_bench
else
	echo "(skipped: needs x86-64 and qemu-x86_64)"
fi
echo "record loop in a QEMU TCG guest (tests/vm/fake_aux.ko fill rate raised until trace is lost; guest CPU time):"
if command -v qemu-system-x86_64 >/dev/null && [ -x "$TOP/tracectl" ]; then
	"$TOP/tests/vm/run.sh" bench || echo "(guest bench failed)"
else
	echo "(skipped: qemu-system-x86_64 or ./tracectl missing)"
fi
