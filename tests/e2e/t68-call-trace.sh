# decode --call-trace (perf script --call-trace: calls and returns indented by depth) and
# --itrace's letters (decoders/itrace.c): on an emulated recording of the bundled example,
# whose four threads each run a known recursion (fib(6), fib(7), fib(8), fib(9)), the
# calls and returns of fib nest exactly as the recursion does.
. "$TOP/tests/e2e/lib.sh"

expect_code 2 '--itrace=x is refused, naming the letter and what perf means by it' '
	tracectl decode --itrace=x 2>err; rc=$?; grep -q "'\''x'\'' (transaction samples" err; exit $rc'
expect_code 2 '--itrace with a letter perf does not have is refused, naming it' '
	tracectl decode --itrace=bK 2>err; rc=$?; grep -q "'\''K'\'' is not an --itrace letter" err; exit $rc'
expect_code 2 '--call-trace does not go with --format' '
	tracectl decode --call-trace --format folded 2>err; rc=$?; grep -q "call-trace" err; exit $rc'

if have_testdata perfdata; then
	PT="$TC_TESTDATA/perfdata/intel_pt/perf.data.intel_pt-4.14"
	expect 'Intel PT 4.14: --itrace=e keeps the error records (no image here), --itrace=b the branches' '
		tracectl -j decode -i "$PT" >all.json 2>/dev/null
		jq -c "select(.type == \"no_image\" or .type == \"error\" or .type == \"lost\" or .type == \"no_sync\")" all.json >want &&
		[ -s want ] && tracectl -j decode -i "$PT" --itrace=e >got 2>/dev/null; cmp want got &&
		tracectl -j decode -i "$PT" --branches 2>/dev/null | jq -c "select(.type == \"branch\")" >want &&
		[ -s want ] && tracectl -j decode -i "$PT" --itrace=b >got 2>/dev/null; cmp want got
	'
fi

if [ "$(uname -m)" != x86_64 ] || ! command -v qemu-x86_64 >/dev/null; then
	skip 'call trace of an emulated recording' 'needs x86-64 and qemu-x86_64 (Debian: qemu-user)'
	exit 0
fi
tracectl record --pmu emulated -o thr.data -- "$TOP/build/examples/threads" >/dev/null 2>&1
tracectl -j decode -i thr.data --call-trace >ct.json 2>/dev/null
tracectl decode -i thr.data --call-trace >ct.txt 2>/dev/null

# the calls and returns of fib(n) entered at depth d, in order
fib_seq() {
	awk -v n="$1" 'function f(n, d) { print "call " d; if (n >= 2) { f(n - 1, d + 1); f(n - 2, d + 1) }
		print "return " d } BEGIN { f(n, 0) }'
}

expect 'every thread: the calls and returns of fib nest as fib(n) recursed (n = 6..9)' '
	seen="" &&
	for t in $(jq -r .tid ct.json | sort -un); do
		jq -r "select(.tid == $t and .sym == \"fib\") | \"\(.type) \(.depth)\"" ct.json >got.$t &&
		d0=$(head -n 1 got.$t | cut -d" " -f2) &&
		awk -v d0="$d0" "{ print \$1, \$2 - d0 }" got.$t >rel.$t &&
		calls=$(grep -c "^call" rel.$t) &&
		n=$(for k in 6 7 8 9; do fib_seq $k >want.$k; [ "$(grep -c ^call want.$k)" = "$calls" ] && echo $k; done; true) &&
		echo "thread $t: $calls calls of fib from depth $d0: fib($n)" && [ -n "$n" ] &&
		cmp want.$n rel.$t && seen="$seen $n" || exit 1
	done &&
	[ "$(echo $seen | tr " " "\n" | sort | tr "\n" " ")" = "6 7 8 9 " ]
'
expect 'the text lines indent each call and return by two spaces per level' '
	[ "$(wc -l <ct.txt)" = "$(wc -l <ct.json)" ] &&
	sed -n "s/.*  call   \( *\)fib\$/\1/p" ct.txt | awk "{ print length(\$0) / 2 }" >ind &&
	jq -r "select(.type == \"call\" and .sym == \"fib\") | .depth" ct.json >dep &&
	[ -s dep ] && cmp dep ind
'
expect 'each thread: the call one level above the recursion is the call of work' '
	for t in $(jq -r .tid ct.json | sort -un); do
		w=$(jq -rs --argjson t "$t" "[.[] | select(.tid == \$t and .type == \"call\")] |
			(map(.sym) | index(\"fib\")) as \$i | .[\$i].depth as \$d |
			[.[:\$i][] | select(.depth == \$d - 1)] | last | .sym" ct.json) &&
		echo "thread $t: fib called under $w" && [ "$w" = work ] || exit 1
	done
'
expect '--itrace=cr gives the same calls and returns as branch records; =c the calls alone' '
	tracectl -j decode -i thr.data --itrace=cr >cr.json 2>/dev/null &&
	[ "$(jq -c "[.from, .to]" cr.json)" = "$(jq -c "[.from, .to]" ct.json)" ] &&
	tracectl -j decode -i thr.data --itrace=c 2>/dev/null | jq -c "[.from, .to]" >c &&
	jq -c "select(.type == \"call\") | [.from, .to]" ct.json >want && [ -s c ] && cmp want c
'
if command -v perf >/dev/null; then
	expect '--itrace=i lists every instruction perf script --itrace=i1i lists, thread by thread' '
		perf script -i thr.data --itrace=i1i -F tid,ip 2>/dev/null | awk "{ print \$1, \$2 }" |
			sort -s -k1,1n >want &&
		tracectl -j decode -i thr.data --itrace=i 2>/dev/null |
			jq -r "\"\(.tid) \(.start | ltrimstr(\"0x\"))\"" | sort -s -k1,1n >got &&
		wc -l want got && [ "$(wc -l <want)" -gt 100000 ] && cmp want got
	'
else
	skip '--itrace=i against perf' 'perf is not installed (Debian: linux-perf)'
fi
expect '--call-trace takes the filters: --tid keeps one thread'\''s lines' '
	t=$(jq -r .tid ct.json | sort -un | tail -n 1) &&
	jq -c "select(.tid == $t)" ct.json >want && [ -s want ] &&
	tracectl -j decode -i thr.data --call-trace --tid "$t" >got 2>/dev/null && cmp want got
'
