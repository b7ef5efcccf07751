# Symbols on every address decode shows (ranges, both ends of branches, --per-thread
# streams, text and JSON), -F/--fields, and the comm in folded stacks and Chrome traces;
# checked against Debian's perf script on simpleperf's CoreSight file and on an emulated
# Intel PT recording.
. "$TOP/tests/e2e/lib.sh"

F=ip,sym,symoff,addr,dso
# JSON branches as the text -F $F prints them (perf script's layout, "[unknown]" where not
# known), so that text and JSON can be compared.
json_as_text() {
	jq -r 'select(.type == "branch") | [(.from | ltrimstr("0x")), (.sym // "[unknown]"),
		"(" + (.dso // "[unknown]") + ")", "=>", (.to | ltrimstr("0x")),
		(.to_sym // "[unknown]"), "(" + (.to_dso // "[unknown]") + ")"] | join(" ")'
}
squeeze() { awk '{ $1 = $1; print }'; }
# Lines whose both ends are in binary $1.
both_in() { awk -v e="($1)" 'index($0, e " =>") && substr($0, length($0) - length(e) + 1) == e'; }

expect_code 2 'an unknown -F field is refused by name' '
	tracectl decode -F ip,bogus,sym -i none.data 2>err; rc=$?
	grep -q "unknown field .bogus." err && grep -q "insncnt" err; exit $rc
'
expect_code 2 '--no-comm is for --format folded or svg' '
	tracectl decode --no-comm --format chrome -i none.data 2>err; rc=$?
	grep -q -- "--no-comm" err; exit $rc
'
expect_code 2 '-F is not for --format' '
	tracectl decode -F ip --format folded -i none.data
'

if ! command -v perf >/dev/null || ! command -v jq >/dev/null; then
	echo "not ok $T: perf (Debian linux-perf) and jq are needed to check the symbols"
	exit 0
fi

if have_testdata perfdata; then
	SP="$TC_TESTDATA/perfdata/simpleperf-etm"
	mkdir -p symfs/data/local/tmp && cp "$SP/etm_test_loop" symfs/data/local/tmp/
	expect 'CoreSight: --branches -F ip,sym,symoff,addr,dso is what perf script prints' '
		perf script -i "$SP/perf_etm.data" --symfs symfs --itrace=b -F '$F' \
			2>/dev/null >perf.txt &&
		[ "$(wc -l <perf.txt)" = 208 ] && grep -q "/data/local/tmp/etm_test_loop" perf.txt &&
		tracectl decode --branches -i "$SP/perf_etm.data" --symfs symfs -F '$F' \
			2>/dev/null >ours.txt &&
		diff perf.txt ours.txt
	'
	expect 'CoreSight: JSON branches and --per-thread streams carry the same' '
		tracectl -j decode --branches -i "$SP/perf_etm.data" --symfs symfs 2>/dev/null |
			json_as_text >json.txt && squeeze <perf.txt >p.txt && diff p.txt json.txt &&
		tracectl decode --branches -i "$SP/perf_etm.data" --symfs symfs -F '$F' \
			--per-thread cs 2>/dev/null && cat cs/* >streams.txt && diff perf.txt streams.txt
	'
	expect 'CoreSight: ranges name their binary, in text and JSON' '
		tracectl decode -i "$SP/perf_etm.data" --symfs symfs 2>/dev/null >r.txt &&
		[ "$(grep -c "range .*\[etm_test_loop+0x[0-9a-f]*\] (/data/local/tmp/etm_test_loop)$" r.txt)" = 208 ] &&
		tracectl -j decode -i "$SP/perf_etm.data" --symfs symfs 2>/dev/null |
			jq -r "select(.type == \"range\") | .dso" | sort -u >d.txt &&
		[ "$(cat d.txt)" = /data/local/tmp/etm_test_loop ]
	'
fi

# Samples of a tracepoint and a uprobe (tests/tools/rec_nopmu): the comm at the sample's
# time (a child is its parent's until its exec) and the sample's ip, as perf script (a file
# without AUX trace has no decoder, so no images: no symbols for its samples yet).
REC="${TC_TOOLS:-$TOP/build/obj/tools}/rec_nopmu"
if [ -x "$REC" ] && "$REC" -o rn.data -e sched:sched_switch -e "$TRACECTL:main" -- \
	sh -c "\"$TRACECTL\" --version >/dev/null; sleep 0.05" >/dev/null 2>&1; then
	expect 'events: comm at the time of each sample and its ip, as perf script' '
		perf script -i rn.data -F comm,pid,tid,ip 2>/dev/null | squeeze >p.txt &&
		grep -q "^sh " p.txt && grep -q "^tracectl " p.txt &&
		tracectl decode -i rn.data -F comm,pid,tid,ip 2>/dev/null |
			sed "s/ [^ ]*:[^ ]*: .*//" | squeeze >o.txt &&
		diff p.txt o.txt
	'
else
	skip 'comm of tracepoint samples' 'rec_nopmu could not record here'
fi

if [ "$(uname -m)" != x86_64 ] || ! command -v gcc >/dev/null; then
	skip 'symbols on an emulated recording' 'needs x86-64 and gcc'
	exit 0
fi
gcc -O1 -g -pthread -o threads "$TOP/examples/threads.c" &&
	tracectl record --pmu emulated -o t.data -- ./threads 2>/dev/null ||
	echo "not ok $T: cannot build or record the fixture"
exe=$(pwd)/threads

expect 'emulated: every branch has the addresses and binaries perf script gives' '
	perf script -i t.data --itrace=b -F ip,addr,dso 2>/dev/null | sort >perf.txt &&
	[ "$(wc -l <perf.txt)" -gt 1000 ] &&
	tracectl decode --branches -i t.data -F ip,addr,dso 2>/dev/null | sort >ours.txt &&
	diff perf.txt ours.txt
'
# All branches, the C library's and the loader's too: perf reads their separate debug files
# (/usr/lib/debug, when libc6-dbg is installed) or else their .dynsym, and so must decode.
expect 'emulated: symbols on both ends of every branch, libc and ld.so too, are perf script'"'"'s' '
	perf script -i t.data --itrace=b -F '$F' 2>/dev/null | squeeze | sort >perf.txt &&
	[ "$(both_in "$exe" <perf.txt | wc -l)" -gt 500 ] && grep -q " work+0x" perf.txt &&
	grep -q "+0x[0-9a-f]* (/[^ ]*/libc.so.6) =>" perf.txt &&
	grep -q "+0x[0-9a-f]* (/[^ ]*/ld-linux-x86-64.so.2) =>" perf.txt &&
	tracectl decode --branches -i t.data -F '$F' 2>/dev/null | squeeze | sort >ours.txt &&
	diff perf.txt ours.txt
'
# A stripped program whose symbols are in a separate debug file, found through its
# .gnu_debuglink in the .debug/ directory beside it under --symfs (the libraries copied
# there too, without debug files).
if command -v objcopy >/dev/null; then
	expect 'emulated: --symfs: symbols from the .debug/ file a stripped program links to' '
		libs=$(sed -n "s/.* (\(\/[^)]*\.so[^)]*\))\$/\1/p" perf.txt | sort -u) &&
		echo "$libs" | grep -q "/libc.so.6\$" && for l in $libs; do
			mkdir -p "dbgfs$(dirname "$l")" && cp "$l" "dbgfs$l" || exit 1
		done &&
		d=dbgfs$(dirname "$exe") && mkdir -p "$d/.debug" &&
		objcopy --only-keep-debug threads "$d/.debug/threads.debug" &&
		objcopy --strip-all --add-gnu-debuglink="$d/.debug/threads.debug" threads "$d/threads" &&
		! nm "$d/threads" 2>/dev/null | grep -qw work &&
		perf script -i t.data --symfs dbgfs --itrace=b -F '$F' 2>/dev/null | both_in "$exe" |
			squeeze | sort >perf.txt &&
		grep -q " work+0x" perf.txt &&
		tracectl decode --branches -i t.data --symfs dbgfs -F '$F' 2>/dev/null |
			both_in "$exe" | squeeze | sort >ours.txt &&
		diff perf.txt ours.txt
	'
else
	skip 'symbols from a separate debug file under --symfs' 'objcopy (binutils) is not installed'
fi
expect 'emulated: JSON, default text and --per-thread streams show the same symbols' '
	tracectl decode --branches -i t.data -F '$F' 2>/dev/null | squeeze | sort >f.txt &&
	tracectl -j decode --branches -i t.data 2>/dev/null | json_as_text | sort >j.txt &&
	diff f.txt j.txt &&
	tracectl decode --branches -i t.data 2>/dev/null | sort >all.txt &&
	tracectl decode --branches -i t.data --per-thread pt 2>/dev/null &&
	[ "$(ls pt | wc -l)" = 4 ] && cat pt/*.txt | sort >streams.txt && diff all.txt streams.txt &&
	grep -q "branch .* main+0x[0-9a-f]* ($exe) -> 0x[0-9a-f]* work+0x0 ($exe)$" streams.txt &&
	tracectl -j decode -i t.data --per-thread ptj 2>/dev/null &&
	cat ptj/*.jsonl | jq -r "select(.type == \"range\" and .sym != null) | .sym" |
		grep -q "^work+0x"
'
expect 'emulated: -F comm,tid,insncnt,flags; JSON lines have just the chosen keys' '
	tracectl decode -i t.data -F comm,tid,insncnt,flags,ip,sym 2>/dev/null >c.txt &&
	[ "$(awk "{ print \$1 }" c.txt | sort -u)" = threads ] &&
	grep -q "^ *threads  *[0-9][0-9]*  *call  *[0-9][0-9]*  *[0-9a-f]* " c.txt &&
	tracectl -j decode -i t.data -F comm,tid,insncnt,ip,sym 2>/dev/null >c.jsonl &&
	[ "$(jq -c "select(.type == \"range\" and .sym != null) | keys" c.jsonl | sort -u)" = \
	  "[\"comm\",\"insncnt\",\"ip\",\"sym\",\"tid\",\"type\"]" ] &&
	jq -r "select(.type == \"range\") | .comm" c.jsonl | sort -u | grep -qx threads
'
expect 'folded stacks start with the comm; --no-comm leaves it out; svg likewise' '
	tracectl decode -i t.data --format folded 2>/dev/null >s.folded &&
	[ "$(cut -d";" -f1 s.folded | cut -d" " -f1 | sort -u)" = threads ] &&
	tracectl decode -i t.data --format folded --no-comm 2>/dev/null >n.folded &&
	! grep -q "^threads" n.folded &&
	sed "s/^threads;//" s.folded | sort >a && sort n.folded >b && diff a b &&
	[ "$(awk "{ s += \$NF } END { print s }" s.folded)" = \
	  "$(awk "{ s += \$NF } END { print s }" n.folded)" ] &&
	tracectl decode -i t.data --format svg 2>/dev/null | grep -q ">threads" &&
	! tracectl decode -i t.data --format svg --no-comm 2>/dev/null | grep -q ">threads"
'
expect 'Chrome trace: thread_name and process_name for every thread it shows' '
	tracectl decode -i t.data --format chrome 2>/dev/null >c.json &&
	jq -r ".traceEvents[] | select(.ph == \"B\") | .tid" c.json | sort -u >tids &&
	[ "$(wc -l <tids)" = 4 ] &&
	jq -r ".traceEvents[] | select(.ph == \"M\" and .name == \"thread_name\") |
		\"\(.tid) \(.args.name)\"" c.json | sort -u >names &&
	[ "$(sed "s/$/ threads/" tids)" = "$(cat names)" ] &&
	[ "$(jq "[.traceEvents[] | select(.ph == \"M\" and .name == \"process_name\")] |
		length" c.json)" = 1 ]
'
