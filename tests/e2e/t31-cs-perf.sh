# tracectl decode on CoreSight perf.data (simpleperf's perf_etm.data with etm_test_loop),
# checked against Debian perf, which decodes the same file with OpenCSD.
. "$TOP/tests/e2e/lib.sh"

have_testdata perfdata || { skip 'decode of CoreSight perf.data' 'no test data'; exit 0; }
SP="$TC_TESTDATA/perfdata/simpleperf-etm"
ETM="$SP/perf_etm.data"
DUMP="$TC_TESTDATA/perfdata/perf-6.1-dump/perf_etm.data.perf-report-D.txt.xz"
mkdir -p symfs/data/local/tmp && cp "$SP/etm_test_loop" symfs/data/local/tmp/

expect '--branches equals perf script --itrace=b (208 branches, cpu and tid too)' '
	perf script -i "$ETM" --symfs symfs --itrace=b -F cpu,tid,ip,addr 2>/dev/null |
		awk "{gsub(/[][]/, \"\", \$2); print \$1, \$2+0, \$3, \$5}" >perf.txt &&
	[ "$(wc -l <perf.txt)" = 208 ] &&
	tracectl -j decode --branches --symfs symfs -i "$ETM" >b.jsonl 2>err &&
	jq -r "select(.type == \"branch\") | \"\(.tid) \(.cpu) \(.from | ltrimstr(\"0x\")) \(.to | ltrimstr(\"0x\"))\"" b.jsonl >ours.txt &&
	diff perf.txt ours.txt &&
	grep -q "208 branches, 0 errors, 0 without code" err
'
expect 'ranges: A64, last E/N, insns add up, thread from the context ID' '
	tracectl -j decode --symfs symfs -i "$ETM" >r.jsonl 2>err &&
	n=$(jq -s "map(select(.type == \"range\") | .insns) | add" r.jsonl) && [ "$n" -gt 500 ] &&
	grep -q " $n instructions" err &&
	[ "$(jq -r "select(.type == \"range\") | \"\(.isa) \(.tid) \(.id) \(.cpu)\"" r.jsonl | sort -u)" = "A64 17235 0x1e 7" ] &&
	[ "$(jq -r "select(.type == \"range\") | .last" r.jsonl | sort -u | tr -d "\n")" = EN ]
'
expect 'packets and their offsets equal perf -D (OpenCSD printer names)' '
	tracectl -j decode --packets -i "$ETM" >p.jsonl 2>/dev/null &&
	xzcat "$DUMP" | sed -n "s/.*Idx:\([0-9]*\); ID:1e;[[:space:]]*\([A-Z0-9_]*\) :.*/\1 \2/p" >pd.txt &&
	[ "$(wc -l <pd.txt)" = 27 ] &&
	base=$(jq -s "map(select(.type == \"packet\"))[0].offset" p.jsonl) &&
	jq -r "select(.type == \"packet\") | \"\(.offset - $base) \(.packet)\"" p.jsonl >po.txt &&
	diff pd.txt po.txt && [ "$base" = 9944 ]
'
expect '--per-thread: one stream for the traced thread, every range in it' '
	tracectl -j decode --symfs symfs -i "$ETM" --per-thread st 2>err &&
	[ -f st/tid-17235.jsonl ] &&
	[ "$(jq -s "map(select(.type == \"range\")) | length" st/tid-17235.jsonl)" = \
	  "$(jq -s "map(select(.type == \"range\")) | length" r.jsonl)" ]
'
expect_code 3 'without the binary: the missing image is named, exit 3' '
	tracectl decode -i "$ETM" --symfs /nonexistent >/dev/null 2>err; rc=$?
	grep -q "^warning: .*image not found: /data/local/tmp/etm_test_loop" err && exit $rc
'
expect_code 3 'missing trace data: reported with counts and a lost record, exit 3' '
	tracectl -j decode -i "$SP/perf_with_missing_aux_data.data" >m.jsonl 2>err; rc=$?
	grep -q "6 AUX records announce 1535344 bytes of trace, but the file holds no AUXTRACE" err &&
	[ "$(jq -r .type m.jsonl)" = lost ] && exit $rc
'
expect_code 1 'a cut file: a clear message with an offset, exit 1' '
	head -c 10000 "$ETM" >cut.data
	tracectl decode -i cut.data >/dev/null 2>err; rc=$?
	grep -q "^fatal: .*offset" err && exit $rc
'
expect 'folded stacks from CoreSight perf.data weigh every instruction' '
	tracectl decode --format folded --symfs symfs -i "$ETM" >f.txt 2>/dev/null &&
	n=$(jq -s "map(select(.type == \"range\") | .insns) | add" r.jsonl) && [ "$n" -gt 500 ] &&
	[ "$(awk "{s += \$NF} END {print s}" f.txt)" = "$n" ]
'
