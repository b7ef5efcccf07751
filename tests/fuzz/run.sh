#!/bin/sh
# Run one libFuzzer target: run.sh DIR NAME SECONDS CORPUS TESTDATA
# DIR/fuzz_NAME is the binary; DIR/CORPUS the corpus, seeded here (never in the repo) from
# TESTDATA: perf_data gets the perf.data files under perfdata/, pt and pt_diff their
# Intel PT from the first PSB on, pt_session the Intel PT ones
# (and a pt_truth recording), jobs those, simpleperf's and emulated recordings of a program
# of threads made here, cs_frame the first max_len bytes of every trace buffer an
# OpenCSD snapshot's trace.ini names, snapshot each snapshot packed, etm real buffers behind
# a configuration header, elf the ELF files, output trace bytes and ini text, emulate the
# QEMU plugin's messages fuzz_emulate synthesizes (see each case below). FUZZ_MAX_LEN
# overrides the input size limit. Crashes go to DIR/artifacts-NAME/, the log to
# DIR/NAME.log. Prints
# the executions the fuzzer reports; exits non-zero if the target crashed, leaked, timed
# out or ran out of memory, or failed on one of its reproducers (tests/fuzz/repro/NAME-*, run
# first; NAME-*.recipe ones built from pieces of TESTDATA).
set -u
dir=$1 name=$2 secs=$3 corpus=$dir/$4 td=$5
# absolute: a snapshot's ini names its files relative to its own directory
[ -d "$td" ] && td=$(cd "$td" && pwd)
bin=$dir/fuzz_$name
log=$dir/$name.log
art=$dir/artifacts-$name/
mkdir -p "$corpus" "$art"

if [ ! -d "$td" ]; then
	if [ "${TC_REQUIRE_TESTDATA:-0}" = 1 ]; then
		echo "fuzz_$name: test data $td is missing" >&2
		exit 1
	fi
	echo "warning: $td missing; fuzz_$name starts from an empty corpus" >&2
fi

# A 32-bit little-endian length, as four bytes.
le32() {
	printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $(($1 & 255)) $(($1 >> 8 & 255)) \
		$(($1 >> 16 & 255)) $(($1 >> 24 & 255)))"
}

case $name in
pt_session)
	# whole Intel PT recordings: perf's, and one of tests/tools/pt_truth's where it runs
	max_len=${FUZZ_MAX_LEN:-262144}
	for f in "$td"/perfdata/intel_pt/perf.data.*; do
		[ -f "$f" ] && cp "$f" "$corpus/seed-$(basename "$f")"
	done
	pt_truth=$dir/../obj/tools/pt_truth
	[ -x "$pt_truth" ] || pt_truth=$dir/../asan/tools/pt_truth
	if [ -x "$pt_truth" ] && command -v gcc >/dev/null 2>&1 &&
	   gcc -O1 -o "$dir/branchy" "$(dirname "$0")/../fixtures/progs/branchy.c" 2>/dev/null; then
		"$pt_truth" -o "$corpus/seed-pt_truth.data" -- "$dir/branchy" >/dev/null 2>&1 ||
			rm -f "$corpus/seed-pt_truth.data"
	fi
	;;
jobs)
	# Whole recordings with the images they name on this machine: a program of threads
	# of unequal work (tests/fuzz/uneven.c, static: no loader's trace) recorded
	# under emulation. Intel PT with a PSB every 2 KiB, given time by pd_rewrite as perf
	# records it (-T), the threads overlapping (-O: lanes, the last one's tail alone) or
	# one after the other, and without time (segments), whole or in 3000-byte buffers;
	# ETMv4 (an ID per thread, one sink). The Makefile builds tracectl, its plugin and
	# pd_rewrite first. The test data's recordings (their images are not here) too, whole
	# (the largest is 178 KiB).
	max_len=${FUZZ_MAX_LEN:-196608}
	for f in "$td"/perfdata/intel_pt/perf.data.* "$td"/perfdata/simpleperf-etm/*.data; do
		[ -f "$f" ] && cp "$f" "$corpus/seed-$(basename "$f")"
	done
	# The programs are the recordings' images while the target runs: each corpus has its
	# own, put in place whole (a run beside this one reads them at any time).
	obj=$dir/../obj src=$(dirname "$0")/uneven.c prog=$corpus.uneven
	rm -f "$prog.data" "$prog-etm.data"	# (else record keeps the last as .old)
	if ! gcc -O1 -static -pthread -o "$prog.new" "$src" || ! mv -f "$prog.new" "$prog" ||
	   ! aarch64-linux-gnu-gcc -O1 -static -pthread -o "$prog.new" "$src" ||
	   ! mv -f "$prog.new" "$prog"64 ||
	   ! "$obj/tracectl" record --pmu emulated --config psb_period=0 -o "$prog.data" \
		-- "$prog" 3 400 >/dev/null 2>"$prog.err" ||
	   ! "$obj/tracectl" record --pmu emulated -o "$prog-etm.data" \
		-- "$prog"64 3 400 >/dev/null 2>>"$prog.err" ||
	   ! cp "$prog-etm.data" "$corpus/seed-uneven-etm"; then
		echo "fuzz_$name: cannot build or record tests/fuzz/uneven.c for seeds:" >&2
		tail -n 3 "$prog.err" >&2
		exit 1
	fi
	for opts in "-T 64 -O" "-T 16 -O" "-T 16" "-s 3000" ""; do
		# shellcheck disable=SC2086
		"$obj/tools/pd_rewrite" $opts "$prog.data" \
			"$corpus/seed-uneven-pt$(echo "$opts" | tr -d ' ')" ||
			{ echo "fuzz_$name: pd_rewrite $opts failed" >&2; exit 1; }
	done
	;;
perf_data)
	max_len=${FUZZ_MAX_LEN:-262144}
	if [ -d "$td/perfdata" ]; then
		find "$td/perfdata" -type f \( -name '*.data' -o -name 'perf.data.*' \) \
			! -name '*.xz' ! -name '*.txt' | while read -r f; do
			cp "$f" "$corpus/seed-$(basename "$f")"
		done
	fi
	# No test data file holds tracing data: where perf can record a tracepoint, a small
	# recording of one seeds the tracing data reader and tracepoint samples.
	if command -v perf >/dev/null 2>&1; then
		perf record -q -e sched:sched_switch -o "$corpus/seed-tracepoint.data" -- true \
			>/dev/null 2>&1 || rm -f "$corpus/seed-tracepoint.data"
	fi
	;;
cs_frame)
	# The deformatter's state is a frame and a sync long and its error list holds 64:
	# 4 KiB inputs reach all of it, while 64 KiB ones run 16 times slower.
	max_len=${FUZZ_MAX_LEN:-4096}
	if [ -d "$td/opencsd" ]; then
		find "$td/opencsd" -name trace.ini | while read -r ini; do
			d=$(dirname "$ini")
			sed -n 's/^file=//p' "$ini" | tr -d '\r' | while read -r b; do
				[ -f "$d/$b" ] || continue
				head -c "$max_len" "$d/$b" >"$corpus/seed-$(echo "${d#"$td"/}" |
					tr / _)-$b"
			done
		done
	fi
	;;
snapshot)
	# Each snapshot as fuzz_snapshot's entries (name line, 4-byte length, bytes): its ini
	# files whole, the first 2 KiB of every other file it names (buffers, dumps).
	max_len=${FUZZ_MAX_LEN:-65536}
	if [ -d "$td/opencsd" ]; then
		find "$td/opencsd" -name snapshot.ini | while read -r ini; do
			d=$(dirname "$ini")
			out="$corpus/seed-$(echo "${d#"$td"/}" | tr / _)"
			: >"$out"
			for f in "$d"/*.ini $(sed -n 's/^\(file\|metadata\)=//p' "$d"/*.ini |
					    tr -d '\r' | sort -u); do
				case $f in /*) ;; *) f=$d/$f ;; esac
				[ -f "$f" ] || continue
				case $f in *.ini) n=$(wc -c <"$f") ;; *) n=2048 ;; esac
				head -c "$n" "$f" >"$dir/.part"
				n=$(wc -c <"$dir/.part")
				{ basename "$f"; le32 "$n"; cat "$dir/.part"; } >>"$out"
			done
			rm -f "$dir/.part"
		done
	fi
	;;
etm)
	# A header byte (protocol, framing, trace ID 0x10 + n; see fuzz_etm.c), 15 zero bytes
	# (the default registers), then the first KiB of a real buffer of that protocol (every atom of
	# it walks instructions: longer inputs only slow the run down).
	max_len=${FUZZ_MAX_LEN:-1040}
	o=$td/opencsd
	for s in "200 juno_r1_1/cstrace.bin" "210 juno_r1_1/cstrace.bin" "230 juno_r1_1/cstrace.bin" \
		 "202 TC2/cstrace.bin" "233 TC2/cstrace.bin" "203 Snowball/cstrace.bin" \
		 "100 init-short-addr/tracebuffer.bin" "101 ete/ete_ip/session1.bin" \
		 "003 trace_cov_a15/PTM_0_2.bin" "220 bugfix-exact-match/cstrace.bin"; do
		f=$o/${s#* }
		[ -f "$f" ] || continue
		{ printf "\\${s%% *}"; head -c 15 /dev/zero; head -c 1024 "$f"; } \
			>"$corpus/seed-${s%% *}-$(echo "${s#* }" | tr / _)"
	done
	;;
etm_diff)
	# ETMv4 buffers behind fuzz_etm_diff.c's header: framed juno_r1_1 (trace IDs 0x10, 0x11,
	# 0x13), raw init-short-addr (AArch64 v8.3+); the first KiB of each.
	max_len=${FUZZ_MAX_LEN:-1040}
	o=$td/opencsd
	for s in "200 juno_r1_1/cstrace.bin" "210 juno_r1_1/cstrace.bin" "230 juno_r1_1/cstrace.bin" \
		 "100 init-short-addr/tracebuffer.bin" "300 bugfix-exact-match/cstrace.bin"; do
		f=$o/${s#* }
		[ -f "$f" ] || continue
		{ printf "\\${s%% *}"; head -c 15 /dev/zero; head -c 1024 "$f"; } \
			>"$corpus/seed-${s%% *}-$(echo "${s#* }" | tr / _)"
	done
	;;
elf)
	# every ELF file of the test data (the traced program of the simpleperf recording, the
	# ETE snapshot's binaries)
	max_len=${FUZZ_MAX_LEN:-65536}
	find "$td" -type f -size -1024k 2>/dev/null | while read -r f; do
		[ "$(head -c 4 "$f" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] &&
			cp "$f" "$corpus/seed-$(echo "${f#"$td"/}" | tr / _)"
	done
	;;
output)
	# Records cut from real trace bytes, then (after ff ff) a string pool from the
	# snapshot's device inis (names of cores, registers, files): see fuzz_output.c.
	max_len=${FUZZ_MAX_LEN:-16384}
	if [ -d "$td/opencsd" ]; then
		find "$td/opencsd" -name trace.ini | while read -r ini; do
			d=$(dirname "$ini")
			b=$(sed -n 's/^file=//p' "$ini" | tr -d '\r' | head -n 1)
			[ -f "$d/$b" ] || continue
			{ head -c 2800 "$d/$b"; printf '\377\377'; cat "$d"/*.ini | head -c 1000; } \
				>"$corpus/seed-$(echo "${d#"$td"/}" | tr / _)"
		done
	fi
	;;
pt|pt_diff|pt_skim)
	# perf.data files hold their PT in AUXTRACE records: the decoders find the PSBs.
	# pt_diff: the same inputs, decoded by the fast path and the reference; pt_skim: by
	# the skim (no_offsets) and the reference, and read as a program writing a trace.
	# 16 KiB holds several PSB periods; longer inputs only slow libipt down.
	max_len=${FUZZ_MAX_LEN:-16384}
	if [ -d "$td/perfdata/intel_pt" ]; then
		# from each file's first PSB (02 82 x8) on: the trace, not the headers
		for f in "$td"/perfdata/intel_pt/perf.data.*; do
			[ -f "$f" ] || continue
			o=$(LC_ALL=C grep -obUaP '(\x02\x82){8}' "$f" | head -n 1 | cut -d: -f1)
			tail -c +$((${o:-0} + 1)) "$f" | head -c "$max_len" \
				>"$corpus/seed-$(basename "$f")"
		done
	fi
	;;
emulate)
	# The plugin's messages (TB descriptors, ring entries, thread and mmap events) as
	# fuzz_emulate's operations: it writes valid sequences itself (a loop, a call, system
	# calls, an mmap, two threads, a fork child, a signal handler; for PT and ETM).
	max_len=${FUZZ_MAX_LEN:-4096}
	FUZZ_EMULATE_SEEDS=$corpus "$bin" >/dev/null 2>&1 ||
		echo "warning: fuzz_emulate wrote no seeds" >&2
	;;
*)
	max_len=${FUZZ_MAX_LEN:-65536}
	;;
esac

# Leaks inside libraries (not ours) are listed in tests/fuzz/lsan.supp.
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp:print_suppressions=0}"


# A reproducer made of pieces of the test data (NAME-*.recipe), built into OUT: "bytes HEX"
# lines as written, "from FILE OFFSET LENGTH" that piece of FILE under TESTDATA (this repo
# keeps no copy of the test data). perl: Debian's perl-base is always there.
build_recipe() {	# RECIPE OUT
	perl -e 'my ($td, $r) = @ARGV;
		open(my $in, "<", $r) or die "$r: $!\n";
		binmode STDOUT;
		while (<$in>) {
			next if /^\s*(#|$)/;
			if (/^bytes\s+((?:[0-9a-f]{2})+)\s*$/) {
				print pack("H*", $1);
			} elsif (/^from\s+(\S+)\s+(\d+)\s+(\d+)\s*$/) {
				open(my $f, "<", "$td/$1") or die "$td/$1: $!\n";
				binmode $f;
				seek($f, $2, 0) && read($f, my $b, $3) == $3 or die "$td/$1: short\n";
				print $b;
			} else {
				die "$r: line $.: not bytes or from\n";
			}
		}' "$td" "$1" >"$2"
}

# Inputs that once failed (tests/fuzz/repro/NAME-*): run first, each must pass.
for r in "$(cd "$(dirname "$0")" && pwd)/repro/$name"-*; do
	[ -f "$r" ] || continue
	shown=$(basename "$r")
	case $r in *.recipe)
		if [ ! -d "$td" ]; then
			echo "warning: $td missing; reproducer $shown not run" >&2
			continue
		fi
		out=$dir/repro-$(basename "$r" .recipe)
		build_recipe "$r" "$out" || { echo "fuzz_$name: cannot build $r" >&2; exit 1; }
		r=$out
	esac
	if ! "$bin" "$r" >"$log" 2>&1; then
		echo "fuzz_$name: FAILED on the reproducer $r, log $log:" >&2
		grep -v '^ *#' "$log" | tail -n 20 >&2
		exit 1
	fi
	echo "fuzz_$name: reproducer $shown passes"
done

seeds=$(find "$corpus" -type f | wc -l)
echo "fuzz_$name: ${secs}s, corpus $corpus ($seeds files), log $log"
# A wall-clock limit: OpenCSD's decode of one input takes seconds on a loaded machine.
case $name in snapshot|etm) tmo=60 ;; *) tmo=10 ;; esac
# FUZZ_SEED (fuzz-smoke sets 1): the same mutations each run, so a smoke run is repeatable.
"$bin" -max_total_time="$secs" -timeout=$tmo -rss_limit_mb=2048 -max_len="$max_len" \
	${FUZZ_SEED:+-seed=$FUZZ_SEED} -print_final_stats=1 -artifact_prefix="$art" "$corpus" \
	>"$log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
cov=$(grep -E '^#[0-9]+' "$log" | tail -n 1 | grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [^ ]+')
echo "fuzz_$name: ${execs:-?} executions in ${secs}s (${rate:-?}/s), ${cov:-no coverage line}"
if [ $rc -ne 0 ]; then
	echo "fuzz_$name: FAILED (exit status $rc); reproducer(s) in $art, log $log:" >&2
	grep -E 'ERROR: |SUMMARY: |invariant failed|Test unit written|runtime error' "$log" |
		head -n 20 | sed 's/^/  /' >&2
	grep -E '^ +#[0-9]+ ' "$log" | head -n 15 | sed 's/^/  /' >&2
	exit 1
fi
