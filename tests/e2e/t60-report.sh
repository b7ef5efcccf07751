# tracectl report and diff: the profile's instruction totals are the decoder's, sorting,
# --limit and the filters cut what they say; on pt_truth recordings (exact, single-stepped)
# call counts are the fixture's; diff of a recording with itself is empty (exit 0), against
# a run that does more work it names the function and --fail-above exits 4 (1 is a failed run).
. "$TOP/tests/e2e/lib.sh"

expect_code 2 'report: an unknown sort key is a usage error' 'tracectl report -i x --sort size'
expect_code 2 'report: a bad --limit is a usage error' 'tracectl report -i x --limit -1'
expect_code 2 'diff takes two inputs' 'tracectl diff x'
expect_code 2 'diff: a bad --fail-above is a usage error' 'tracectl diff x y --fail-above 5x'

# The decoder's instruction count, from its summary line on stderr.
decoded() { sed -n 's/.* \([0-9][0-9]*\) instructions,.*/\1/p' "$1"; }

if have_testdata opencsd; then
S="$TC_TESTDATA/opencsd"
for snap in trace_cov_a15 juno_r1_1; do
	expect "$snap: report's instructions are the decoder's, self adds up to them" '
		tracectl -j report -i "$S/$snap" >r.json 2>err &&
		n=$(decoded err) && echo "decoded $n" && [ "$n" -gt 0 ] &&
		[ "$(jq .insns r.json)" = "$n" ] &&
		[ "$(jq "[.threads[0].rows[].self] | add" r.json)" = "$n" ] &&
		[ "$(jq ".threads | length" r.json)" = 1 ] &&
		[ "$(jq ".threads[0].functions" r.json)" = "$(jq ".threads[0].rows | length" r.json)" ]
	'
done
expect 'juno: per-thread tables (per CPU here) add up, --cpu keeps one of them' '
	tracectl -j report -i "$S/juno_r1_1" --per-thread >p.json 2>/dev/null &&
	[ "$(jq "[.threads[].insns] | add" p.json)" = "$(jq .insns r.json)" ] &&
	[ "$(jq ".threads | length" p.json)" -gt 1 ] &&
	cpu=$(jq ".threads[1].cpu" p.json) && want=$(jq ".threads[1].insns" p.json) &&
	tracectl -j report -i "$S/juno_r1_1" --cpu "$cpu" >c.json 2>/dev/null &&
	[ "$(jq .insns c.json)" = "$want" ] && [ "$want" -lt "$(jq .insns r.json)" ]
'
expect 'juno: --sort orders and --limit cuts' '
	tracectl -j report -i "$S/juno_r1_1" --sort total --limit 5 >t.json 2>/dev/null &&
	[ "$(jq ".threads[0].rows | length" t.json)" = 5 ] &&
	jq -e "[.threads[0].rows[].total] | . == (sort | reverse)" t.json &&
	jq -e "[.threads[0].rows[].self] | . == (sort | reverse)" r.json &&
	tracectl -j report -i "$S/juno_r1_1" --sort calls >k.json 2>/dev/null &&
	jq -e "[.threads[0].rows[].calls] | . == (sort | reverse)" k.json &&
	tracectl -j report -i "$S/juno_r1_1" --sort name >m.json 2>/dev/null &&
	jq -e "[.threads[0].rows[].name] | . == sort" m.json &&
	tracectl report -i "$S/juno_r1_1" --limit 3 >t.txt 2>/dev/null &&
	[ "$(wc -l <t.txt)" = 5 ] && grep -q "^all threads: $(jq .insns r.json) instructions" t.txt
'
expect_code 0 'diff of a snapshot with itself is empty' '
	tracectl -j diff "$S/juno_r1_1" "$S/juno_r1_1" --fail-above 0 >d.json 2>/dev/null &&
	jq -e ".rows == [] and .a_insns == .b_insns" d.json
'
fi

if have_testdata perfdata; then
E="$TC_TESTDATA/perfdata/simpleperf-etm"
expect 'CoreSight perf.data: report counts the decoded instructions, all in etm_test_loop' '
	mkdir -p sym/data/local/tmp && cp "$E/etm_test_loop" sym/data/local/tmp/ &&
	tracectl -j report -i "$E/perf_etm.data" --symfs sym >e.json 2>err &&
	n=$(decoded err) && echo "decoded $n" && [ "$n" -gt 0 ] &&
	[ "$(jq .insns e.json)" = "$n" ] &&
	jq -e "[.threads[0].rows[].dso] | unique == [\"/data/local/tmp/etm_test_loop\"]" e.json
'
fi

PT_TRUTH="${TC_TOOLS:-$TOP/build/obj/tools}/pt_truth"
if [ "$(uname -m)" != x86_64 ] || ! command -v gcc >/dev/null; then
	skip 'report and diff on Intel PT ground truth' 'needs x86-64 and gcc'
	exit 0
fi
[ -x "$PT_TRUTH" ] || { echo "not ok $T: $PT_TRUTH is not built (make test builds it)"; exit 0; }

gcc -O1 -g -no-pie -o br "$TOP/tests/fixtures/progs/branchy.c" || echo "not ok $T: cannot build"
# branchy does fib(7 + argc) and deep(90 + argc): one more argument, more of both.
"$PT_TRUTH" -p 256 -o a.data -t a.truth -- ./br 2>a.log &&
"$PT_TRUTH" -p 256 -o a2.data -t a2.truth -- ./br 2>a2.log &&
"$PT_TRUTH" -p 256 -o b.data -t b.truth -- ./br x 2>b.log ||
	echo "not ok $T: pt_truth failed: $(cat a.log b.log)"
exe=$(pwd)/br

expect 'perf.data: report counts every decoded instruction; calls are the program'"'"'s' '
	tracectl -j report -i a.data >r.json 2>err &&
	n=$(decoded err) && echo "decoded $n" && [ "$n" -gt 1000 ] &&
	[ "$(jq .insns r.json)" = "$n" ] &&
	[ "$(jq "[.threads[0].rows[].self] | add" r.json)" = "$n" ] &&
	row() { jq -r ".threads[0].rows[] | select(.name == \"$1\") | \"\(.calls) \(.dso)\"" r.json; } &&
	[ "$(row fib)" = "67 $exe" ] && [ "$(row deep)" = "92 $exe" ] &&
	[ "$(row twice)" = "13 $exe" ] && [ "$(row plus3)" = "14 $exe" ] &&
	[ "$(row neg)" = "13 $exe" ] &&
	[ "$(jq -r ".threads[0].rows[] | select(.name == \"main\") | .total" r.json)" -gt \
	  "$(jq -r ".threads[0].rows[] | select(.name == \"main\") | .self" r.json)" ]
'
expect 'perf.data: --tid, --comm and --dso filters' '
	tracectl -j report -i a.data --per-thread >p.json 2>/dev/null &&
	[ "$(jq ".threads | length" p.json)" = 1 ] &&
	tid=$(jq ".threads[0].tid" p.json) && [ "$tid" -gt 0 ] &&
	[ "$(jq -r ".threads[0].comm" p.json)" = br ] &&
	tracectl -j report -i a.data --tid "$tid" | jq -e ".insns == $(jq .insns r.json)" &&
	tracectl -j report -i a.data --tid $((tid + 1)) | jq -e ".insns == 0" &&
	tracectl -j report -i a.data --comm br | jq -e ".insns == $(jq .insns r.json)" &&
	tracectl -j report -i a.data --comm nosuch | jq -e ".insns == 0" &&
	tracectl -j report -i a.data --dso "$exe" | jq -e ".threads[0].rows | length > 5" &&
	tracectl -j report -i a.data --dso /nosuch | jq -e ".threads[0].rows == []"
'
expect_code 0 'diff of two recordings of the same run is empty, exit 0 with --fail-above 0' '
	tracectl diff a.data a2.data --fail-above 0 >d.txt 2>err && cat d.txt &&
	[ "$(wc -l <d.txt)" = 2 ] && ! grep -q "^error:" err
'
expect_code 4 'diff against a run doing more work names the function, --fail-above exits 4' '
	tracectl diff a.data b.data --fail-above 20 >d.txt 2>err; rc=$?
	cat d.txt err
	[ "$(sed -n 3p d.txt | awk "{ print \$NF }")" = "[$exe]" ] &&
	sed -n 3p d.txt | grep -q " fib \[" &&
	grep -q "^error: fib grew past 20%: self instructions [0-9]* -> [0-9]*$" err && exit $rc
'
expect_code 0 'diff: below the threshold exits 0; JSON rows; --limit does not hide growth' '
	tracectl -j diff a.data b.data --fail-above 70 >d.json 2>/dev/null || exit 9
	jq -e ".rows[0].name == \"fib\" and .rows[0].b_self > .rows[0].a_self" d.json &&
	jq -e ".rows | map(.name) | index(\"deep\") != null" d.json &&
	tracectl diff --limit 1 --sort name a.data b.data --fail-above 20 >l.txt 2>/dev/null
	[ $? = 4 ] && [ "$(wc -l <l.txt)" = 3 ] && ! grep -q fib l.txt
'
expect_code 1 'diff with a missing input is a failed run (1), not a regression (4)' '
	tracectl diff a.data nosuch.data --fail-above 20 >/dev/null 2>err; rc=$?
	grep -q "^fatal: " err && exit $rc
'
