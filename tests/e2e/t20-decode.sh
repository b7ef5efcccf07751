# tracectl decode on real recordings from ../shared/testdata/perfdata.
. "$TOP/tests/e2e/lib.sh"

have_testdata perfdata || { skip 'decode of real perf.data files' 'no test data'; exit 0; }
PD="$TC_TESTDATA/perfdata"
PT="$PD/intel_pt/perf.data.intel_pt-4.14"

expect 'Intel PT packets as JSON lines: 10 PSBs, both CPUs, offsets inside the buffers' '
	tracectl decode -j --packets -i "$PT" >p.jsonl 2>err &&
	[ "$(jq -s "map(select(.packet == \"psb\")) | length" p.jsonl)" = 10 ] &&
	[ "$(jq -s "map(.cpu) | unique | map(tostring) | join(\",\")" -r p.jsonl)" = "0,3" ] &&
	[ "$(jq -s "map(select(.type != \"packet\")) | length" p.jsonl)" = 0 ] &&
	grep -q "^\[ tracectl decode: 2 AUXTRACE buffers (149968 bytes), 10 AUX records" err
'
expect 'PSBs per CPU buffer as perf -D shows them (1 on cpu 0, 9 on cpu 3)' '
	[ "$(jq -s "map(select(.packet == \"psb\" and .cpu == 0)) | length" p.jsonl)" = 1 ] &&
	[ "$(jq -s "map(select(.packet == \"psb\" and .cpu == 3)) | length" p.jsonl)" = 9 ]
'
expect 'text listing and JSON list the same packets' '
	tracectl decode --packets -i "$PT" 2>/dev/null >p.txt &&
	[ "$(wc -l <p.txt)" = "$(wc -l <p.jsonl)" ] &&
	awk "{print \$5}" p.txt | sort | uniq -c >a &&
	jq -r .packet p.jsonl | sort | uniq -c >b && diff a b
'
expect '--per-thread writes one stream per CPU queue, nothing lost' '
	tracectl -j decode --packets -i "$PT" --per-thread streams 2>err &&
	[ -f streams/cpu-0.jsonl ] && [ -f streams/cpu-3.jsonl ] &&
	[ $(cat streams/*.jsonl | wc -l) = $(wc -l <p.jsonl) ] &&
	grep -q "2 streams written to streams" err
'
expect_code 3 'missing trace data is reported plainly, with counts' '
	tracectl -j decode --packets -i "$PD/simpleperf-etm/perf_with_missing_aux_data.data" >m.jsonl 2>err
	rc=$?
	grep -q "^warning: .*6 AUX records announce 1535344 bytes of trace, but the file holds no AUXTRACE data" err &&
	jq -e "select(.type == \"lost\") | .offset > 0" m.jsonl >/dev/null && exit $rc
'
expect_code 1 'a truncated file: fatal with the offset' '
	head -c 100000 "$PT" >cut.data &&
	tracectl decode --packets -i cut.data >/dev/null 2>err; rc=$?
	grep -q "^fatal: cut.data: .*offset 0x" err && exit $rc
'
expect_code 1 'a file that is not perf.data' '
	echo hello >not.data && tracectl decode --packets -i not.data 2>err; rc=$?
	grep -q "^fatal: " err && exit $rc
'
expect_code 1 'the default input perf.data, missing' '
	tracectl decode --packets 2>err; rc=$?; grep -q "perf.data" err && exit $rc
'
expect_code 1 'without --packets: CoreSight perf.data instruction decode is refused clearly' '
	tracectl decode -i "$PD/simpleperf-etm/perf_etm.data" 2>err; rc=$?
	grep -q "^error: .*instruction decoding of CoreSight perf.data is not implemented yet" err && exit $rc
'
expect 'pipe mode on stdin reads the same packets' '
	perf inject -i "$PT" -o - 2>/dev/null >pipe.data &&
	tracectl -j decode --packets -i - <pipe.data 2>/dev/null >q.jsonl &&
	[ "$(jq -s "map(select(.packet == \"psb\")) | length" q.jsonl)" = 10 ] &&
	[ "$(wc -l <q.jsonl)" = "$(wc -l <p.jsonl)" ]
'
expect_code 141 'decode into a reader that goes away ends quietly' '
	(tracectl decode --packets -i "$PT" 2>err; echo $? >rc) | head -n 1 >/dev/null; [ ! -s err ] || ! grep -q fatal err; exit $(cat rc)
'
