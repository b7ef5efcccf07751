# tracectl decode on tracepoint samples that Debian's perf records here (sched_switch and
# sched_process_exec, all CPUs): the events, their times, CPUs, threads and field values
# must be perf script's. None of ../shared/testdata's perf.data files holds tracing data
# (checked: no feature bit 1, no tracing magic), so the files are made at test time.
. "$TOP/tests/e2e/lib.sh"

if ! command -v perf >/dev/null ||
   ! perf record -q -m 1024 -e sched:sched_switch -e sched:sched_process_exec -a -o tp.data \
	-- sleep 0.2 >rec.log 2>&1; then
	skip 'tracepoint samples against perf script' \
	     "perf record of tracepoints failed here: $(tail -n 1 rec.log 2>/dev/null)"
	exit 0
fi

# perf script and ours as "pid tid cpu secs.nsecs name: text".
perf script -i tp.data --ns -F pid,tid,cpu,time,event,trace 2>/dev/null |
	sed -E 's/^ *(-?[0-9]+)\/(-?[0-9]+) +\[0*([0-9]+)\] +([0-9.]+): +([^ ]+): +/\1 \2 \3 \4 \5: /; s/ +$//' \
	>perf.txt
# A sample of a task already gone has tid -1, and pid -1 if its process went too.
ours() {
	sed -E 's/^ *[0-9a-f]+ +cpu ([0-9]+) (-?[0-9]+)\/(-?[0-9]+) +event +([0-9.]+) /\2 \3 \1 \4 /; s/ +$//'
}

# perf script flushes its queue at each round of the record loop, so on a loaded machine an
# event the ring gave up late prints out of order there ("out of order events"); ours are
# sorted. So: the same lines as sets, and ours in time order. Exit 0 unless the kernel
# lost samples (LOST records: exit 3 with a warning).
decoded() {	# status of tracectl decode, err: 0, or 3 with only LOST to report
	[ "$1" = 0 ] || { [ "$1" = 3 ] && grep -q "LOST records" err; }
}
expect 'a file with tracepoint samples and no AUX trace decodes: exit 0, every event' '
	tracectl decode -i tp.data >out.txt 2>err; decoded $? &&
	n=$(wc -l <perf.txt) && [ "$n" -gt 10 ] &&
	grep -q "sched:sched_process_exec: filename=/usr/bin/sleep" perf.txt &&
	grep -q "\[ tracectl decode: $n tracepoint events, 0 not printed \]" err &&
	ours <out.txt >ours.txt && sort perf.txt >a && sort ours.txt >b && diff a b &&
	cut -d" " -f4 ours.txt | sort -c -n
'
# perf script's text from our JSON fields (prev_state left out: perf prints its flags).
expect '-j: name, time, cpu, tid and field values equal perf script'\''s' '
	tracectl -j decode -i tp.data >out.jsonl 2>err; decoded $? &&
	jq -r "select(.type == \"event\") |
		\"\(.pid // -1) \(.tid // -1) \(.cpu) \(.time / 1000000000 | floor).\((1000000000 + .time % 1000000000) | tostring | .[1:]) \(.name): \" +
		(if .name == \"sched:sched_switch\" then
			\"prev_comm=\(.fields.prev_comm) prev_pid=\(.fields.prev_pid) prev_prio=\(.fields.prev_prio) ==> next_comm=\(.fields.next_comm) next_pid=\(.fields.next_pid) next_prio=\(.fields.next_prio)\"
		 else \"filename=\(.fields.filename) pid=\(.fields.pid) old_pid=\(.fields.old_pid)\" end)" \
		out.jsonl >j.txt &&
	sed "s/ prev_state=[^ ]* ==>/ ==>/" perf.txt | sort >pj.txt && sort j.txt >js.txt &&
	[ "$(wc -l <j.txt)" = "$(wc -l <perf.txt)" ] && diff pj.txt js.txt
'
expect 'pipe mode (perf record -o -): the same as perf script' '
	perf record -q -e sched:sched_switch -a -o - -- sleep 0.1 >pipe.data 2>/dev/null &&
	perf script -i pipe.data --ns -F pid,tid,cpu,time,event,trace 2>/dev/null |
	sed -E "s/^ *(-?[0-9]+)\/(-?[0-9]+) +\[0*([0-9]+)\] +([0-9.]+): +([^ ]+): +/\1 \2 \3 \4 \5: /; s/ +\$//" >pp.txt &&
	[ -s pp.txt ] && tracectl decode -i - <pipe.data 2>/dev/null | ours >po.txt &&
	sort pp.txt >a && sort po.txt >b && diff a b
'
expect '--per-thread: each event in its thread'\''s stream, none lost' '
	tracectl -j decode -i tp.data --per-thread st 2>err; decoded $? &&
	pid=$(jq -r "select(.name == \"sched:sched_process_exec\" and .fields.filename == \"/usr/bin/sleep\") | .tid" out.jsonl | head -n 1) &&
	grep -q "\"name\":\"sched:sched_process_exec\"" "st/tid-$pid.jsonl" &&
	[ "$(cat st/*.jsonl | jq -s "map(select(.type == \"event\")) | length")" = "$(wc -l <perf.txt)" ]
'

# perf record -z packs records into zstd COMPRESSED records, which tracectl does not read:
# said, with the offset, exit 3 (not an empty, successful decode).
if perf record -q -z -e sched:sched_switch -a -o z.data -- sleep 0.1 >zrec.log 2>&1; then
	expect_code 3 'perf record -z: the COMPRESSED records are named, not silently skipped' '
		tracectl decode -i z.data >z.txt 2>err; rc=$?
		cat err
		grep -q "^warning: z.data: [1-9][0-9]* COMPRESSED records from offset 0x[0-9a-f]* (perf record -z): tracectl does not decompress zstd" err &&
		exit $rc
	'
else
	skip 'perf record -z' "perf cannot compress here: $(tail -n 1 zrec.log)"
fi

# Our own recorder's files (tests/tools/rec_nopmu: record's loop without an AUX PMU): a
# tracepoint and a uprobe, named as asked (EVENT_DESC), as perf script prints them.
REC="${TC_TOOLS:-$TOP/build/obj/tools}/rec_nopmu"
if [ -x "$REC" ] && "$REC" -o rn.data -e sched:sched_switch -e "$TRACECTL:main" -- \
	sh -c "\"$TRACECTL\" --version >/dev/null; sleep 0.05" >/dev/null 2>&1; then
	expect 'tracectl record'\''s samples (tracepoint, uprobe): the same as perf script' '
		perf script -i rn.data --ns -F pid,tid,cpu,time,event,trace 2>/dev/null |
		sed -E "s/^ *(-?[0-9]+)\/(-?[0-9]+) +\[0*([0-9]+)\] +([0-9.]+): +([^ ]+): +/\1 \2 \3 \4 \5: /; s/ +\$//" |
			sort >rp.txt &&
		grep -q "$TRACECTL:main: (" rp.txt && grep -q "sched:sched_switch: prev_comm=" rp.txt &&
		tracectl decode -i rn.data 2>/dev/null | ours | sort >ro.txt && diff rp.txt ro.txt
	'
else
	skip 'samples of tracectl record' 'rec_nopmu could not record here'
fi

# Among trace: perf 4.14's Intel PT recording with tp.data's records spliced in after its
# first AUXTRACE buffer (cpu 0's; the second is cpu 3's), as one pipe stream
# (tests/tools/pd_splice). Packets have no time: each record is A (trace from before the
# events in the file), E (an event) or B (trace from after them), and the output must run
# A..., E..., B....
SPLICE="${TC_TOOLS:-$TOP/build/obj/tools}/pd_splice"
order() {	# jsonl -> the runs of A, E and B
	jq -rs "(map(select(.type == \"event\") | .offset) | [min, max]) as [\$lo, \$hi] |
		map(if .type == \"event\" then \"E\" elif .offset < \$lo then \"A\"
		    elif .offset > \$hi then \"B\" else \"?\" end) | .[]" "$1" | uniq | tr -d "\n"
}
if have_testdata perfdata; then
	PT="$TC_TESTDATA/perfdata/intel_pt/perf.data.intel_pt-4.14"
	expect 'Intel PT packets: each event between the buffers around it in the file' '
		"$SPLICE" "$PT" tp.data 1 sp.data &&
		tracectl -j decode --packets -i sp.data >sp.jsonl 2>err; decoded $? &&
		[ "$(order sp.jsonl)" = AEB ] &&
		[ "$(jq -s "map(select(.type == \"packet\")) | length" sp.jsonl)" = 105109 ] &&
		[ "$(jq -s "map(select(.type == \"event\")) | length" sp.jsonl)" = "$(wc -l <perf.txt)" ] &&
		grep -q "105109 packets, 0 errors" err
	'
	# Flow records carry perf time and the queues interleave by it, so the events go by time:
	# spliced again with their times moved into the trace's span. cpu 3's trace is later in the
	# file but earlier in time: it comes first.
	expect_code 3 'Intel PT flow: events among the records of both CPUs, all in time order' '
		tracectl -j decode --branches -i "$PT" >ptb.jsonl 2>/dev/null
		lo=$(jq -s "map(.time) | min" ptb.jsonl) && hi=$(jq -s "map(.time) | max" ptb.jsonl) &&
		"$SPLICE" "$PT" tp.data 1 spt.data $((lo + 1)) $((hi - 1)) &&
		tracectl -j decode --branches -i spt.data >spb.jsonl 2>err
		rc=$?
		[ "$(jq -r "select(.type != \"event\") | .cpu" ptb.jsonl | uniq | tr -d "\n")" = 30 ] &&
		jq -se "map(.time) as \$t | all(.[]; .time != null) and \$t == (\$t | sort)" spb.jsonl >/dev/null &&
		[ "$(jq -r ".type == \"event\"" spb.jsonl | uniq | tr -d "\n" | sed "s/true/E/g; s/false/T/g" | cut -c1-4)" = TETE ] &&
		[ "$(jq -r "select(.type != \"event\") | .cpu" spb.jsonl | uniq | tr -d "\n")" = 30 ] &&
		grep -q "$(wc -l <perf.txt) tracepoint events, 0 not printed" err && exit $rc
	'
else
	skip 'tracepoint samples among Intel PT trace' 'no test data'
fi

# Hostile tracing data: sizes inside it made to lie. Find the first format (the u64 before
# "name: sched_"), and the system count after the header texts.
fmt=$(LC_ALL=C grep -obUa "name: sched_" tp.data | head -n 1 | cut -d: -f1)
expect 'a format size that runs past the end: a warning with its offset, exit 3, no crash' '
	[ -n "$fmt" ] && cp tp.data bad.data && chmod u+w bad.data &&
	printf "\377\377\377\377\377\377\377\177" |
		dd of=bad.data bs=1 seek=$((fmt - 8)) conv=notrunc 2>/dev/null &&
	{ tracectl decode -i bad.data >bad.txt 2>err; [ $? = 3 ]; } &&
	want=$(printf "tracing data at offset 0x%x: event format needs 0x7fffffffffffffff bytes" "$fmt") &&
	grep -q "warning: bad.data: tracepoint samples cannot be printed: bad.data: $want" err &&
	! grep -q " event " bad.txt
'
expect 'no tracing data magic: a warning with the offset, exit 3' '
	m=$(LC_ALL=C grep -obUaP "\x17\x08\x44tracing" tp.data | head -n 1 | cut -d: -f1) &&
	cp tp.data bad2.data && chmod u+w bad2.data &&
	printf X | dd of=bad2.data bs=1 seek=$((m + 3)) conv=notrunc 2>/dev/null &&
	{ tracectl decode -i bad2.data >/dev/null 2>err; [ $? = 3 ]; } &&
	grep -q "$(printf "tracing data at offset 0x%x: no magic" "$m")" err
'
