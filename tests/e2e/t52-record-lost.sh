# Records the kernel could not write, counted even when no LOST record tells of them: the
# kernel writes a ring's loss as a PERF_RECORD_LOST only in front of the next record that
# ring takes, so the record loop (tests/tools/rec_nopmu here) also reads each event's own
# count (read_format PERF_FORMAT_LOST, Linux 6.0+) after its last drain. The workload is the
# VM's sb_work in its "strand" mode: a burst of mmaps on the first allowed CPU while the
# recorder is stopped (a 1-page data ring), then it moves to the last CPU and exits, so the
# first CPU's ring never takes another record.
. "$TOP/tests/e2e/lib.sh"

REC="${TC_TOOLS:-$TOP/build/obj/tools}/rec_nopmu"

waitfor() { n=0; while [ ! -e "$1" ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n+1)); done; }

cc -O2 -o sb_work "$TOP/tests/vm/sb_work.c" 2>/dev/null
# go and cont made first: the probe only asks whether there is a second CPU, without waiting
# the 2 x 60 s sb_work gives a recorder to come.
touch go cont; ./sb_work 0 . strand; rc=$?; rm -f ready done go cont
if [ "$rc" = 3 ]; then
	skip 'losses no LOST record tells of' 'one CPU allowed: nowhere to strand a ring'
	exit 0
fi
"$REC" -m 1 -o probe.data -- true >probe.out 2>&1
if ! grep -q "kernel's count [0-9]" probe.out; then
	skip 'losses no LOST record tells of' "rec_nopmu could not record here or the kernel has no PERF_FORMAT_LOST: $(cat probe.out)"
	exit 0
fi

expect 'losses on a ring that takes no later record: the kernel count has them, no LOST record' '
	"$REC" -m 1 -o u.data -- ./sb_work 3000 "$TMP" strand >out 2>err &
	p=$!
	waitfor ready && kill -STOP $p && touch go && waitfor done && kill -CONT $p && touch cont &&
	wait $p && cat out err &&
	set -- $(sed -n "s/.*LOST records (\([0-9]*\) events), kernel.s count \([0-9]*\)$/\1 \2/p" out) &&
	# 3000 mmaps (and 60 forks) into a 4 KiB ring while the recorder was stopped
	[ $# = 2 ] && [ $(($2 - $1)) -ge 2000 ] &&
	# the file holds what the LOST records said, no more
	perf report -D -i u.data >d 2>/dev/null &&
	[ "$(grep -cE "PERF_RECORD_LOST([: ]|$)" d)" = "$(sed -n "s/.*: \([0-9]*\) LOST records.*/\1/p" out)" ]
'

expect 'the kernel count is in the file: LOST_SAMPLES records, as perf record writes them' '
	kern=$(sed -n "s/.*kernel.s count \([0-9]*\).*/\1/p" out) && [ "${kern:-0}" -gt 0 ] &&
	grep "PERF_RECORD_LOST_SAMPLES" d | head -3 &&
	[ "$(sed -n "s/.*PERF_RECORD_LOST_SAMPLES.* lost samples *:\([0-9]*\).*/\1/p" d |
	     awk "{ s += \$1 } END { print s + 0 }")" = "$kern" ] &&
	# and tracectl decode tells of them (exit 3: a recording with losses)
	{ tracectl decode -i u.data >/dev/null 2>derr; echo "exit $?"; } >dcode &&
	cat derr dcode && grep -q "exit 3" dcode &&
	grep -q "warning: .*: $kern records lost by the kernel.s count" derr
'

expect 'perf reads the attrs opened with read_format PERF_FORMAT_LOST' '
	perf evlist -v -i u.data >ev 2>&1 && cat ev &&
	grep -q "^dummy:u: .*read_format: LOST" ev &&
	perf script --show-mmap-events -i u.data >s 2>/dev/null &&
	grep -q "PERF_RECORD_MMAP2 .* r-xp .*/sb_work$" s
'
