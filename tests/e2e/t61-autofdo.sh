# decode --format autofdo: simpleperf inject's AutoFDO text. On simpleperf's own ETM
# recording it is byte for byte what simpleperf's test expects; on pt_truth recordings the
# ranges are the decoded ranges and every taken branch is counted, direct ones at their
# single-stepped targets.
. "$TOP/tests/e2e/lib.sh"

if have_testdata perfdata; then
E="$TC_TESTDATA/perfdata/simpleperf-etm"
expect 'perf_etm.data with etm_test_loop: equals simpleperf'"'"'s perf_inject.data' '
	mkdir -p sym/data/local/tmp && cp "$E/etm_test_loop" sym/data/local/tmp/ &&
	tracectl decode -i "$E/perf_etm.data" --symfs sym --format autofdo >a.txt 2>err &&
	tr -d "\r" <"$E/perf_inject.data" >want.txt && diff want.txt a.txt
'
expect_code 3 'without the binary: nothing to write, the missing image is named' '
	tracectl decode -i "$E/perf_etm.data" --format autofdo >n.txt 2>err; rc=$?
	cat err; [ ! -s n.txt ] && grep -q "etm_test_loop" err && exit $rc
'
fi

PT_TRUTH="${TC_TOOLS:-$TOP/build/obj/tools}/pt_truth"
if [ "$(uname -m)" != x86_64 ] || ! command -v gcc >/dev/null; then
	skip 'autofdo on Intel PT ground truth' 'needs x86-64 and gcc'
	exit 0
fi
[ -x "$PT_TRUTH" ] || { echo "not ok $T: $PT_TRUTH is not built (make test builds it)"; exit 0; }
gcc -O1 -g -no-pie -o br "$TOP/tests/fixtures/progs/branchy.c" &&
"$PT_TRUTH" -p 256 -o a.data -t a.truth -- ./br 2>a.log || echo "not ok $T: pt_truth failed"

expect 'pt_truth: ranges and branches add up; direct branches are the executed ones' '
	tracectl decode -i a.data --format autofdo >f.txt 2>/dev/null &&
	tracectl -j decode -i a.data >r.jsonl 2>/dev/null &&
	grep -q "^// $(pwd)/br\$" f.txt &&
	grep -q "^// build_id: 0x[0-9a-f]\{40\}\$" f.txt &&
	ranges=$(awk -F: "/^[0-9a-f]+-[0-9a-f]+:/ { s += \$2 } END { print s }" f.txt) &&
	echo "$ranges ranges" && [ "$ranges" -gt 500 ] &&
	[ "$ranges" = "$(grep -c "\"type\":\"range\"" r.jsonl)" ] &&
	taken=$(awk -F: "/->/ { s += \$2 } END { print s }" f.txt) &&
	[ "$taken" = "$(grep -vc "^0 \| 0\$" a.truth)" ] &&
	# direct branches ("->" a target) against the truth, relative to the first load
	# segment (0x400000 for -no-pie), within the program
	sed -n "s/^\([0-9a-f]*\)->\([0-9a-f]*\):\([0-9]*\)\$/\3 \1 \2/p" f.txt |
		grep -v " 0\$" >afdo.br &&
	while read -r from to; do
		f=$((0x$from - 0x400000)) t=$((0x$to - 0x400000))
		[ $f -ge 0 ] && [ $t -ge 0 ] && [ $t -lt 1048576 ] && printf "%x %x\n" $f $t
	done <a.truth | sort | uniq -c | sed "s/^ *//" >truth.br &&
	echo "$(wc -l <afdo.br) direct branch pairs" && [ "$(wc -l <afdo.br)" -gt 5 ] &&
	! grep -Fxvf truth.br afdo.br
'
