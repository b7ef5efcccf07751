#!/bin/sh
# make bench: first, time `tracectl decode -j` on the largest OpenCSD snapshot against OpenCSD's
# own trc_pkt_lister -decode_only on the same snapshot, both to /dev/null, in the same run, and
# print the ratios; then issue 16's figures: Intel PT and CoreSight decode against perf script,
# PT report throughput, the record writer alone, --jobs 2 against --jobs 1, peak RSS of
# report on a 50 MB (and with BENCH_BIG=1 a 500 MB) PT trace; then emulated recording speed
# and feedback-directed optimisation. The machine may be shared, so CPU time (user+sys of
# the command, from the shell's `times`) is the figure to compare, except for --jobs where
# wall time is the point; wall time is shown too. Each is the best of BENCH_RUNS runs (per section: BENCH_*_RUNS).
# A part whose tools are missing says so and is skipped. Timings only; nothing here is a test.
set -u
TRACECTL=${TRACECTL:?}
TD=${TC_TESTDATA:-$(dirname "$0")/../../../shared/testdata}
SNAP=$(cd "${BENCH_SNAPSHOT:-$TD/opencsd/bugfix-exact-match}" && pwd)
RUNS=${BENCH_RUNS:-5}
JOBS_RUNS=${BENCH_JOBS_RUNS:-3}	# --jobs 2 against --jobs 1 (jobs_cmp)
TOP=$(cd "$(dirname "$0")/../.." && pwd)


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
# two runs of a command side by side: "WALL WALL", each its own (as once)
pair() {
	once "$@" >"$work/pair" &
	p=$!
	b=$(once "$@")
	wait "$p"
	echo "$(cut -d' ' -f2 "$work/pair") ${b#* }"
}
# the smaller (min) or larger (max) of a figure and the best so far (empty: none yet)
min() { echo "$1 ${2:-$1}" | awk '{ print ($1 < $2) ? $1 : $2 }'; }
max() { echo "$1 ${2:-$1}" | awk '{ print ($1 > $2) ? $1 : $2 }'; }
# best CPU and best wall of RUNS runs
best() {
	bc= bw= i=0
	while [ $i -lt "$RUNS" ]; do
		set -- $(once "$@") "$@"
		c=$1 w=$2
		shift 2
		bc=$(min "$c" "$bc")
		bw=$(min "$w" "$bw")
		i=$((i + 1))
	done
	echo "$bc $bw"
}
# trc_pkt_lister also writes a trc_pkt_lister.ppl where it runs: keep that out of the tree.
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
lister() { (cd "$work" && trc_pkt_lister -ss_dir "$SNAP" -decode_only -logfilename /dev/null); }

snap_bench() {
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
}
if [ ! -d "$SNAP" ]; then
	echo "snapshot: skipped ($SNAP missing: the shared test data)"
elif ! command -v trc_pkt_lister >/dev/null; then
	echo "snapshot: skipped (trc_pkt_lister missing: libopencsd-bin)"
else
	snap_bench
fi

# "speed-up B/A" line: CPU A, wall A, CPU B, wall B, the target
ratio() {
	awk -v a="$1" -v wa="$2" -v b="$3" -v wb="$4" -v t="$5" 'BEGIN {
		printf "speed-up B/A: CPU (user+sys) %.2fx, wall %.2fx  (target: %s)\n",
			(a > 0 ? b / a : 0), (wa > 0 ? wb / wa : 0), t }'
}
row() { printf '%-34s %10s %10s\n' "$@"; }

# Intel PT: a >= 50 MB trace from tests/tools/pt_truth -r (the branchy fixture single-stepped
# once, one cycle of its path repeated: one queue, one AUXTRACE buffer), decoded to taken
# branches by both tools: tracectl's JSON branch records against perf script's default branch
# lines (--itrace=b), CPU time best of BENCH_PT_RUNS (3) runs each.
PT_TRUTH=${TC_TOOLS:-$TOP/build/obj/tools}/pt_truth
PT_BYTES=${BENCH_PT_BYTES:-52428800}
pt_make() {	# FILE BYTES: FILE.log has pt_truth's lines
	"$PT_TRUTH" -r "$2" -o "$1" -- "$work/branchy" 2>"$1.log" ||
		{ echo "(pt_truth failed: $(cat "$1.log"))"; return 1; }
}
trace_bytes() { sed -n 's/.* \([0-9]*\) bytes of trace.*/\1/p' "$1" | head -n 1; }
pt_vs_perf() {
	RUNS=${BENCH_PT_RUNS:-3}
	set -- $(best "$TRACECTL" -j decode --branches --jobs 1 -i "$work/pt.data")
	c_ours=$1 w_ours=$2
	set -- $(best perf script -i "$work/pt.data" --itrace=b)
	c_perf=$1 w_perf=$2
	echo "Intel PT: $(stat -c %s "$work/pt.data") bytes of perf.data, $(grep -o '[0-9]* branches' "$work/pt.data.log") (best of $RUNS runs each, output to /dev/null)"
	echo "A: $TRACECTL -j decode --branches --jobs 1 -i pt.data"
	echo "B: perf script -i pt.data --itrace=b"
	row "" "CPU s" "wall s"
	row "A tracectl decode --branches" "$c_ours" "$w_ours"
	row "B perf script --itrace=b" "$c_perf" "$w_perf"
	ratio "$c_ours" "$w_ours" "$c_perf" "$w_perf" "CPU >= 10x on one job"
}
# report -j --jobs 1 on FILE (label: what it is): decode without per-record output, on one
# core (with --jobs 2 a worker decodes while the analysis runs: jobs_cmp below); MB (10^6
# bytes) of trace per CPU second.
pt_report() {
	RUNS=${BENCH_PT_RUNS:-3}
	b=$(trace_bytes "$work/pt.data.log")
	set -- $(best "$TRACECTL" report -j --jobs 1 -i "$1") "$1" "$2"
	echo "Intel PT report, $4: $b bytes of trace (best of $RUNS runs, output to /dev/null)"
	echo "A: $TRACECTL report -j --jobs 1 -i $(basename "$3")"
	row "" "CPU s" "wall s"
	row "A tracectl report -j --jobs 1" "$1" "$2"
	awk -v c="$1" -v b="$b" 'BEGIN {
		printf "throughput: %.1f MB of trace per CPU second  (target: >= 50)\n", (c > 0 ? b / 1e6 / c : 0) }'
}
# Peak RSS (the kernel's ru_maxrss of the child, /usr/bin/time %M) of report -j on FILE.
rss() {
	/usr/bin/time -f %M -o "$work/rss" "$TRACECTL" report -j -i "$1" >/dev/null 2>&1 &&
		tail -n 1 "$work/rss"
}
rss_line() {	# label FILE
	if [ ! -x /usr/bin/time ]; then
		echo "$1: skipped (/usr/bin/time missing: package time)"
		return
	fi
	kb=$(rss "$2") || { echo "$1: report failed"; return; }
	awk -v l="$1" -v kb="$kb" -v b="$(trace_bytes "$2.log")" 'BEGIN {
		printf "%-34s %8d KB peak RSS (%.1f MiB) for %d bytes of trace  (target: <= 64 MiB, not growing with the trace)\n",
			l, kb, kb / 1024, b }'
}

pt_ok=
echo "Intel PT decode (tests/tools/pt_truth -r traces of tests/fixtures/progs/branchy.c):"
if [ "$(uname -m)" = x86_64 ] && command -v gcc >/dev/null && [ -x "$PT_TRUTH" ]; then
	gcc -O1 -fPIE -pie -o "$work/branchy" "$TOP/tests/fixtures/progs/branchy.c" &&
		pt_make "$work/pt.data" "$PT_BYTES" && pt_ok=1
else
	echo "Intel PT: skipped (needs x86-64, gcc and $PT_TRUTH)"
fi
if [ -n "$pt_ok" ]; then
	if command -v perf >/dev/null; then
		pt_vs_perf
	else
		echo "Intel PT against perf script: skipped (perf missing: linux-perf)"
	fi
	pt_report "$work/pt.data" "one AUXTRACE buffer"
	# perf writes a queue's trace in pieces, one each time it drains the AUX ring: most
	# pieces begin and end inside a packet
	if "${TC_TOOLS:-$TOP/build/obj/tools}/pd_rewrite" -s 4194304 "$work/pt.data" \
		"$work/pt4m.data"; then
		pt_report "$work/pt4m.data" "the same in 4 MiB AUXTRACE buffers (pd_rewrite -s 4194304)"
		rm -f "$work/pt4m.data"
	fi
	echo "A: /usr/bin/time -f %M $TRACECTL report -j -i pt.data"
	rss_line "peak RSS, report, $(($(stat -c %s "$work/pt.data") / 1000000)) MB file" "$work/pt.data"
fi

# CoreSight: tests/bench/etm_work.c (4 threads, so 4 trace IDs) recorded as emulated ETMv4
# (~35 M instructions, 7.8 M branches, ~6.8 MB of trace), decoded to taken branches by both
# tools, CPU time best of BENCH_CS_RUNS (3) runs each.
cs_ok=
cs_vs_perf() {
	RUNS=${BENCH_CS_RUNS:-3}
	set -- $(best "$TRACECTL" -j decode --branches --jobs 1 -i "$work/etm.data")
	c_ours=$1 w_ours=$2
	set -- $(best perf script -i "$work/etm.data" --itrace=b)
	c_perf=$1 w_perf=$2
	echo "CoreSight ETMv4: $(stat -c %s "$work/etm.data") bytes of perf.data, $(sed -n 's/.* \([0-9]*\) instructions (.*/\1/p' "$work/etm.log" | head -n 1) instructions (best of $RUNS runs each, output to /dev/null)"
	echo "A: $TRACECTL -j decode --branches --jobs 1 -i etm.data"
	echo "B: perf script -i etm.data --itrace=b"
	row "" "CPU s" "wall s"
	row "A tracectl decode --branches" "$c_ours" "$w_ours"
	row "B perf script --itrace=b" "$c_perf" "$w_perf"
	ratio "$c_ours" "$w_ours" "$c_perf" "$w_perf" "CPU >= 10x on one job"
}
echo "CoreSight decode (tracectl record --pmu emulated -- ./etm_work 4 26, tests/bench/etm_work.c for aarch64):"
if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
	echo "CoreSight: skipped (needs aarch64-linux-gnu-gcc and qemu-aarch64)"
elif ! aarch64-linux-gnu-gcc -O1 -static -pthread -o "$work/etm_work" "$TOP/tests/bench/etm_work.c"; then
	echo "CoreSight: skipped (etm_work did not build)"
elif ! (cd "$work" && "$TRACECTL" record --pmu emulated -o etm.data -- ./etm_work 4 26) \
	>/dev/null 2>"$work/etm.log"; then
	echo "CoreSight: skipped (the recording failed: $(tail -n 3 "$work/etm.log"))"
else
	cs_ok=1
	if command -v perf >/dev/null; then
		cs_vs_perf
	else
		echo "CoreSight against perf script: skipped (perf missing: linux-perf)"
	fi
fi

# The record writer alone (tests/tools/wr_bench: lib/output/listing.c as decode uses it, to
# /dev/null): JSON branch records with symbols from a real ELF, and text ranges; its own
# rate by CPU time, the best of BENCH_RUNS.
WR_BENCH=${TC_TOOLS:-$TOP/build/obj/tools}/wr_bench
wr_rate() {	# wr_bench's arguments: the best "N M records/s" of RUNS runs
	i=0 b=
	while [ $i -lt "$RUNS" ]; do
		r=$("$WR_BENCH" "$@" 2>&1 >/dev/null | sed -n 's/.*: \([0-9.]*\) M records\/s.*/\1/p')
		b=$(max "${r:-0}" "$b")
		i=$((i + 1))
	done
	echo "$b"
}
RUNS=${BENCH_RUNS:-5}
echo "record writer alone (tests/tools/wr_bench, 10 M records each, best of $RUNS, output to /dev/null):"
if [ ! -x "$WR_BENCH" ]; then
	echo "skipped (no $WR_BENCH)"
else
	if [ -f "$work/branchy" ]; then
		row "JSON branches, branchy's symbols" "$(wr_rate -j -n 10000000 --sym "$work/branchy")" "M rec/s"
	else
		row "JSON branches, one symbol" "$(wr_rate -j -n 10000000)" "M rec/s"
	fi
	row "text ranges" "$(wr_rate --ranges -n 10000000)" "M rec/s"
	echo "(target: >= 20 M records/s on one core)"
fi

# --jobs 2 against --jobs 1 on this machine's cores: wall time of -j decode --branches, best
# of BENCH_JOBS_RUNS (3: one run's ratio swung from 1.3x to 1.5x on ptq.data within minutes
# on a 2-vCPU virtual machine) runs each, on a multi-ID CoreSight file (etm.data above), a
# multi-queue Intel PT file (tests/bench/etm_work.c for x86-64 recorded as emulated PT: one
# queue per thread, since emulated recording is per-thread) and the single-queue PT file
# above, both without time (cut at PSBs, pt_segment.c); then the same two given time as
# perf records it by default (tests/tools/pd_rewrite -T: TSC, TMA, MTC), the queues each
# with a clock of its own (-O: they overlap in time, as perf's per-CPU queues do, and decode
# in lanes interleaved by time, pt_lanes.c), and with one clock (each thread's trace after
# the one before's: cut at PSBs in time order, pt_segment.c). The runs alternate (--jobs 1, --jobs 2, ...): a
# virtual machine's speed drifts with its host's load, and the two sides of a ratio should
# see the same drift. A third run in each round is two --jobs 1 side by side: each one's
# speed against B's best is what that core gives (a virtual machine's vCPUs can differ in
# speed, one slowed by the host's other load, or share a core); the two summed are the most
# --jobs 2 could reach then (the round where they sum highest).
jobs_cmp() {	# label FILE [TARGET FORM]: FORM (words) default "-j decode --branches"
	c1= w1= c2= w2= pa= pb= i=0
	target=${3:-"wall >= 1.8x on 2 cores"} form=${4:-"-j decode --branches"}
	while [ $i -lt "$JOBS_RUNS" ]; do
		# shellcheck disable=SC2086
		set -- "$1" "$2" $(once "$TRACECTL" $form --jobs 1 -i "$2") \
			$(once "$TRACECTL" $form --jobs 2 -i "$2") \
			$(pair "$TRACECTL" $form --jobs 1 -i "$2")
		c1=$(min "$3" "$c1") w1=$(min "$4" "$w1") c2=$(min "$5" "$c2") w2=$(min "$6" "$w2")
		# the pair whose speeds sum highest (1/a + 1/b)
		if [ -z "$pa" ] || awk -v a="$7" -v b="$8" -v x="$pa" -v y="$pb" \
			'BEGIN { exit !(a > 0 && b > 0 && 1 / a + 1 / b > 1 / x + 1 / y) }'; then
			pa=$7 pb=$8
		fi
		i=$((i + 1))
	done
	echo "$1: $(basename "$2") (best of $JOBS_RUNS runs each, alternating," \
		"output to /dev/null; $(nproc) CPUs online)"
	echo "A: $TRACECTL $form --jobs 2 -i $(basename "$2")"
	echo "B: $TRACECTL $form --jobs 1 -i $(basename "$2")"
	row "" "CPU s" "wall s"
	row "A --jobs 2" "$c2" "$w2"
	row "B --jobs 1" "$c1" "$w1"
	row "C two B side by side" "" "$pa, $pb"
	ratio "$c2" "$w2" "$c1" "$w1" "$target"
	awk -v w1="$w1" -v w2="$w2" -v a="$pa" -v b="$pb" 'BEGIN {
		c = (a > 0 && b > 0) ? w1 / a + w1 / b : 0
		printf "the cores this run: B / C1 + B / C2 = %.2fx (their speeds summed);" \
			" --jobs 2 reached %.0f%% of it\n", c, (c > 0 && w2 > 0 ? 100 * (w1 / w2) / c : 0) }'
}
echo "--jobs 2 against --jobs 1:"
if [ -n "$cs_ok" ]; then
	jobs_cmp "CoreSight, 4 trace IDs" "$work/etm.data"
else
	echo "CoreSight: skipped (no recording, see above)"
fi
if [ "$(uname -m)" != x86_64 ] || ! command -v gcc >/dev/null || ! command -v qemu-x86_64 >/dev/null; then
	echo "Intel PT, several queues: skipped (needs x86-64, gcc and qemu-x86_64)"
elif gcc -O1 -pthread -o "$work/ptq_work" "$TOP/tests/bench/etm_work.c" &&
	(cd "$work" && "$TRACECTL" record --pmu emulated -o ptq.data -- ./ptq_work 4 26) \
	>/dev/null 2>"$work/ptq.log"; then
	jobs_cmp "Intel PT, 4 queues (one per thread)" "$work/ptq.data"
	if "${TC_TOOLS:-$TOP/build/obj/tools}/pd_rewrite" -T 64 -O "$work/ptq.data" \
		"$work/ptqT.data" 2>"$work/ptq.log"; then
		jobs_cmp "Intel PT with time, 4 queues interleaved (pd_rewrite -T 64 -O)" \
			"$work/ptqT.data"
	else
		echo "Intel PT with time, 4 queues: skipped ($(tail -n 1 "$work/ptq.log"))"
	fi
	if "${TC_TOOLS:-$TOP/build/obj/tools}/pd_rewrite" -T 64 "$work/ptq.data" \
		"$work/ptqTs.data" 2>"$work/ptq.log"; then
		jobs_cmp "Intel PT with time, 4 queues one after the other (pd_rewrite -T 64)" \
			"$work/ptqTs.data"
	else
		echo "Intel PT with time, 4 queues in turn: skipped ($(tail -n 1 "$work/ptq.log"))"
	fi
else
	echo "Intel PT, several queues: skipped (the recording failed: $(tail -n 3 "$work/ptq.log"))"
fi
if [ -n "$pt_ok" ]; then
	jobs_cmp "Intel PT, one queue" "$work/pt.data"
	if "${TC_TOOLS:-$TOP/build/obj/tools}/pd_rewrite" -T 64 "$work/pt.data" \
		"$work/ptT.data" 2>"$work/ptT.log"; then
		jobs_cmp "Intel PT with time, one queue (pd_rewrite -T 64)" "$work/ptT.data"
	else
		echo "Intel PT with time, one queue: skipped ($(tail -n 1 "$work/ptT.log"))"
	fi
	# report: the analysis takes the records in order in one thread while another decodes
	# them (pt_pipe.c): two threads at most, each ~half the work on this file
	jobs_cmp "Intel PT report, one queue" "$work/pt.data" \
		"wall; two threads at most: decoding, the analysis" "-j report"
	jobs_cmp "Intel PT flame graph stacks, one queue" "$work/pt.data" \
		"wall; two threads at most: decoding, the analysis" "decode --format folded"
else
	echo "Intel PT, one queue: skipped (no trace, see above)"
fi
rm -f "$work/pt.data" "$work/etm.data" "$work/ptq.data" "$work/ptqT.data" "$work/ptqTs.data" \
	"$work/ptT.data"

# Peak RSS on a 500 MB trace: only with BENCH_BIG=1 (pt_truth takes minutes to write it and
# report minutes to read it; it needs 600 MB free where mktemp puts the work directory).
echo "peak RSS on a 500 MB Intel PT trace:"
if [ "${BENCH_BIG:-0}" != 1 ]; then
	echo "skipped (set BENCH_BIG=1: writes a 500 MB trace, minutes of work)"
elif [ -z "$pt_ok" ]; then
	echo "skipped (no Intel PT, see above)"
elif [ "$(df -Pk "$work" | awk 'NR == 2 { print $4 }')" -lt 614400 ]; then
	echo "skipped (less than 600 MB free in $work)"
elif pt_make "$work/pt500.data" "${BENCH_BIG_BYTES:-524288000}"; then
	echo "A: /usr/bin/time -f %M $TRACECTL report -j -i pt500.data"
	rss_line "peak RSS, report, $(($(stat -c %s "$work/pt500.data") / 1000000)) MB file" "$work/pt500.data"
	rm -f "$work/pt500.data"
fi

# BENCH_DECODE_ONLY=1: the decode figures above only.
[ "${BENCH_DECODE_ONLY:-0}" = 1 ] && exit 0

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
