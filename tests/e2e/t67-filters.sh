# Record filters of decode, report and diff (--time, --cpu, --pid, --tid, --comm, --dso,
# --sym; decoders/rec_filter.c): per filter, the records kept are the unfiltered records
# with the predicate applied, the expectation computed here with jq from the unfiltered
# JSON (and, for thread names and binaries, from --show-events' COMM and MMAP records).
# On the shared recordings (Intel PT with time and CPUs, CoreSight snapshots with CPUs)
# and on an emulated recording of the multi-threaded example.
. "$TOP/tests/e2e/lib.sh"

# kept WANT GOT: the same lines, and at least one (an empty selection proves nothing)
kept() {
	n=$(wc -l <"$1")
	echo "expected $n records, got $(wc -l <"$2")"
	[ "$n" -gt 0 ] && cmp -s "$1" "$2" || { diff "$1" "$2" | head -5; return 1; }
}
# jq: a "0x..." string as a number (addresses below 2^53)
HEX='def hex: ltrimstr("0x") | explode | reduce .[] as $c (0; . * 16 + (if $c >= 97 then $c - 87 else $c - 48 end));'
# seconds as perf script prints them, from nanoseconds
secs() { printf '%d.%09d' $(($1 / 1000000000)) $(($1 % 1000000000)); }

expect_code 2 'a bad --time is a usage error naming it' '
	tracectl decode --time 12x, 2>err; rc=$?; grep -q "bad --time .12x,." err; exit $rc'
expect_code 2 'a bad --cpu list is a usage error naming it' '
	tracectl decode --cpu 3-1 2>err; rc=$?; grep -q "bad --cpu .3-1." err; exit $rc'
expect_code 2 'report: a bad --tid list is a usage error naming it' '
	tracectl report --tid x 2>err; rc=$?; grep -q "bad --tid .x." err; exit $rc'

if have_testdata perfdata; then
	PT="$TC_TESTDATA/perfdata/intel_pt/perf.data.intel_pt-4.14"
	tracectl -j decode -i "$PT" >pt.json 2>/dev/null
	tracectl -j decode -i "$PT" --packets >ptp.json 2>/dev/null
	# a window in the middle of the records' times
	T0=$(jq -s '[.[] | select(has("time")) | .time] | sort | .[length / 3 | floor]' pt.json)
	T1=$(jq -s '[.[] | select(has("time")) | .time] | sort | .[length * 2 / 3 | floor]' pt.json)
	expect 'Intel PT 4.14: --time START,END keeps the records with time in it' '
		jq -c "select(has(\"time\") and .time >= $T0 and .time <= $T1)" pt.json >want &&
		tracectl -j decode -i "$PT" --time "$(secs $T0),$(secs $T1)" >got 2>/dev/null;
		kept want got && [ "$(wc -l <want)" -lt "$(jq -c "select(has(\"time\"))" pt.json | wc -l)" ]
	'
	expect 'Intel PT 4.14: --time START, (open end) and ,END (open start)' '
		jq -c "select(has(\"time\") and .time >= $T1)" pt.json >want &&
		tracectl -j decode -i "$PT" --time "$(secs $T1)," >got 2>/dev/null; kept want got &&
		jq -c "select(has(\"time\") and .time <= $T0)" pt.json >want &&
		tracectl -j decode -i "$PT" --time ",$(secs $T0)" >got 2>/dev/null; kept want got
	'
	expect 'Intel PT 4.14: --cpu on the flow and on packets' '
		jq -c "select(.cpu == 3)" pt.json >want &&
		tracectl -j decode -i "$PT" --cpu 3 >got 2>/dev/null; kept want got &&
		jq -c "select(.cpu == 0)" ptp.json >want &&
		tracectl -j decode -i "$PT" --packets --cpu 0 >got 2>/dev/null; kept want got &&
		jq -c "select(.cpu == 0 or .cpu == 3)" ptp.json >want &&
		tracectl -j decode -i "$PT" --packets --cpu 0,2-3 >got 2>/dev/null; kept want got
	'
	expect 'Intel PT 4.14: --pid, --tid and --comm' '
		jq -c "select(.tid == 3174)" pt.json >want &&
		tracectl -j decode -i "$PT" --tid 3174 >got 2>/dev/null; kept want got &&
		tracectl -j decode -i "$PT" --pid 3174 >got 2>/dev/null; kept want got &&
		# the name of the thread when the record happened: 3174 was perf before its exec
		c=$(tracectl -j decode -i "$PT" --show-events 2>/dev/null |
			jq -r "select(.record == \"COMM\" and .tid == 3174) | .comm" | tail -n 1) &&
		echo "comm of 3174: $c" && [ -n "$c" ] &&
		tracectl -j decode -i "$PT" -F comm 2>/dev/null | jq -r ".comm // \"\"" >comms &&
		paste comms pt.json | awk -F "\t" -v c="$c" "\$1 == c { print \$2 }" >want &&
		tracectl -j decode -i "$PT" --comm "nosuch,$c" >got 2>/dev/null; kept want got &&
		[ -z "$(tracectl -j decode -i "$PT" --comm nosuch 2>/dev/null)" ]
	'
fi

if have_testdata opencsd; then
	J="$TC_TESTDATA/opencsd/juno_r1_1"
	tracectl -j decode -i "$J" >j.json 2>/dev/null
	expect 'juno snapshot: --cpu keeps that CPU'\''s records' '
		c=$(jq -s "[.[] | select(has(\"cpu\")) | .cpu] | unique | .[1]" j.json) &&
		jq -c "select(.cpu == $c)" j.json >want &&
		tracectl -j decode -i "$J" --cpu "$c" >got 2>/dev/null; kept want got
	'
fi

if [ "$(uname -m)" != x86_64 ] || ! command -v qemu-x86_64 >/dev/null; then
	skip 'filters on an emulated recording' 'needs x86-64 and qemu-x86_64 (Debian: qemu-user)'
	exit 0
fi
EX="$TOP/build/examples/threads"
tracectl record --pmu emulated -o thr.data -- "$EX" >/dev/null 2>&1
tracectl -j decode -i thr.data >all.json 2>/dev/null
tracectl -j decode -i thr.data --branches >br.json 2>/dev/null
tracectl -j decode -i thr.data --show-events >ev.json 2>/dev/null
TIDS=$(jq -r .tid all.json | sort -un)
T2=$(echo "$TIDS" | sed -n 2p)
T3=$(echo "$TIDS" | sed -n 3p)

expect 'threads: four threads, --tid keeps one, a list keeps two, --pid all' '
	[ "$(echo "$TIDS" | wc -l)" = 4 ] &&
	jq -c "select(.tid == $T2)" all.json >want &&
	tracectl -j decode -i thr.data --tid "$T2" >got 2>/dev/null; kept want got &&
	jq -c "select(.tid == $T2 or .tid == $T3)" br.json >want &&
	tracectl -j decode -i thr.data --branches --tid "$T2,$T3" >got 2>/dev/null; kept want got &&
	p=$(jq -r .pid all.json | head -n 1) && jq -c "select(.pid == $p)" all.json >want &&
	tracectl -j decode -i thr.data --pid "$p" >got 2>/dev/null; kept want got
'
expect 'threads: --comm keeps the threads whose COMM record names it' '
	c=$(jq -r "select(.record == \"COMM\") | .comm" ev.json | sort -u) && echo "comms: $c" &&
	jq -r "select(.record == \"COMM\" and .comm == \"threads\") | .tid" ev.json >tids &&
	jq -c --slurpfile t tids "select(.tid as \$x | \$t | index(\$x))" all.json >want &&
	tracectl -j decode -i thr.data --comm threads >got 2>/dev/null; kept want got
'
expect 'threads: --sym keeps the ranges starting in those functions' '
	jq -c "select(.sym != null and (.sym | split(\"+\")[0] | IN(\"fib\", \"twice\")))" all.json >want &&
	tracectl -j decode -i thr.data --sym fib,twice >got 2>/dev/null; kept want got &&
	[ "$(jq -r .sym got | sed "s/+.*//" | sort -u | tr "\n" " ")" = "fib twice " ]
'
expect 'threads: --dso keeps the records at addresses the MMAP2 of that binary maps' '
	jq -c "select(.record == \"MMAP2\" and (.filename | endswith(\"/examples/threads\")))" ev.json >m &&
	[ "$(wc -l <m)" = 1 ] &&
	lo=$(jq "$HEX .start | hex" m) && hi=$(jq "$HEX (.start | hex) + (.len | hex)" m) &&
	jq -c "$HEX select((.start | hex) >= $lo and (.start | hex) < $hi)" all.json >want &&
	tracectl -j decode -i thr.data --dso threads >got 2>/dev/null; kept want got &&
	jq -c "$HEX select((.from | hex) >= $lo and (.from | hex) < $hi)" br.json >want &&
	tracectl -j decode -i thr.data --branches --dso "$EX" >got 2>/dev/null; kept want got
'
expect 'threads: --cpu keeps nothing where records have no CPU (emulated per-thread trace)' '
	[ -z "$(jq -c "select(has(\"cpu\"))" all.json)" ] &&
	[ -z "$(tracectl -j decode -i thr.data --cpu 0 2>/dev/null)" ]
'
expect 'threads: filters combine (--tid and --sym)' '
	jq -c "select(.tid == $T3 and .sym != null and (.sym | startswith(\"fib+\")))" all.json >want &&
	tracectl -j decode -i thr.data --tid "$T3" --sym fib >got 2>/dev/null; kept want got
'
expect 'threads: every output form gets the filter: --per-thread, report, folded' '
	rm -rf pt.d && tracectl -j decode -i thr.data --per-thread pt.d --tid "$T2" 2>/dev/null &&
	[ "$(ls pt.d | wc -l)" = 1 ] &&
	jq -c "select(.tid == $T2)" all.json >want && kept want pt.d/* &&
	n=$(jq -s "[.[] | select(.tid == $T2) | .insns] | add" all.json) && echo "insns of $T2: $n" &&
	tracectl -j report -i thr.data --tid "$T2" | jq -e ".insns == $n" &&
	f=$(tracectl decode -i thr.data --format folded --tid "$T2" | awk "{ s += \$NF } END { print s }") &&
	echo "folded: $f" && [ "$f" = "$n" ] &&
	n=$(jq -s "[.[] | select(.sym != null and (.sym | startswith(\"fib+\"))) | .insns] | add" all.json) &&
	tracectl -j report -i thr.data --sym fib | jq -e ".insns == $n" &&
	tracectl -j report -i thr.data --sym fib | jq -e "[.threads[].rows[].name] | unique == [\"fib\"]"
'
expect 'diff: the filter applies to both recordings' '
	n=$(jq -s "[.[] | select(.sym != null and (.sym | startswith(\"fib+\"))) | .insns] | add" all.json) &&
	tracectl -j diff thr.data thr.data --sym fib --fail-above 0 >d.json &&
	jq -e ".a_insns == $n and .b_insns == $n" d.json &&
	n=$(jq -s "[.[] | select(.tid == $T2) | .insns] | add" all.json) &&
	tracectl -j diff thr.data thr.data --tid "$T2" | jq -e ".a_insns == $n and .b_insns == $n"
'
