# decode --show-events: every record of a perf.data (side-band, AUX, samples, perf's own)
# with its file offset and size, time, CPU and pid/tid, as text and JSON lines; checked
# record for record against Debian perf's `perf report -D` (the shared recordings' dumps,
# and perf run here on an emulated recording).
. "$TOP/tests/e2e/lib.sh"

# "OFFSET SIZE NAME" of every record, sorted (perf -D lists in time order, we in file order)
tc_recs() {
	tracectl -j decode -i "$1" --show-events 2>/dev/null |
		jq -r '"\(.offset) \(.size) \(.record)"' | awk '{ printf "0x%x 0x%x %s\n", $1, $2, $3 }' | sort
}
perf_recs() {
	sed -n 's/.*\(0x[0-9a-f]*\) \[\(0x[0-9a-f]*\)\]: PERF_RECORD_\([A-Z_0-9]*\).*/\1 \2 \3/p' | sort
}

if have_testdata perfdata; then
	D="$TC_TESTDATA/perfdata"
	for f in intel_pt/perf.data.intel_pt-4.14 simpleperf-etm/perf_etm.data \
		 simpleperf-etm/perf_with_missing_aux_data.data; do
		b=$(basename "$f")
		expect "$b: the records, offsets and sizes of perf report -D" '
			xz -dc "$D/perf-6.1-dump/$b.perf-report-D.txt.xz" | perf_recs >want &&
			tc_recs "$D/$f" >got && wc -l want got && [ -s want ] && cmp want got
		'
	done
	expect 'Intel PT 4.14: the 152 SWITCH_CPU_WIDE records, with CPU, time and the next/prev thread' '
		tracectl -j decode -i "$D/intel_pt/perf.data.intel_pt-4.14" --show-events 2>/dev/null |
			jq -c "select(.record == \"SWITCH_CPU_WIDE\")" >sw &&
		[ "$(wc -l <sw)" = 152 ] &&
		[ "$(jq -c "select(has(\"cpu\") and has(\"time\") and (has(\"next_tid\") or has(\"prev_tid\")))" sw | wc -l)" = 152 ]
	'
	expect_code 3 'the missing AUX data is still reported (exit 3) while its AUX records are listed' '
		tracectl decode -i "$D/simpleperf-etm/perf_with_missing_aux_data.data" --show-events >out 2>err; rc=$?
		[ "$(grep -c "  AUX " out)" = 6 ] && grep -q "no AUXTRACE data" err && exit $rc
	'
fi

if have_testdata opencsd; then
	expect_code 1 'a snapshot directory has no records to show: said so' '
		tracectl decode -i "$TC_TESTDATA/opencsd/juno_r1_1" --show-events 2>err; rc=$?
		grep -q "no perf.data records to show" err && exit $rc
	'
fi

if [ "$(uname -m)" != x86_64 ] || ! command -v qemu-x86_64 >/dev/null; then
	skip 'show-events of an emulated recording' 'needs x86-64 and qemu-x86_64 (Debian: qemu-user)'
	exit 0
fi
tracectl record --pmu emulated -o thr.data -- "$TOP/build/examples/threads" >/dev/null 2>&1
tracectl -j decode -i thr.data --show-events >ev.json 2>/dev/null
tracectl decode -i thr.data --show-events >ev.txt 2>/dev/null

expect 'emulated: COMM, MMAP2, FORK, ITRACE_START, AUX, AUXTRACE and EXIT of four threads' '
	for r in COMM:4 FORK:3 ITRACE_START:4 AUX:4 AUXTRACE:4 EXIT:4; do
		n=$(jq -r "select(.record == \"${r%:*}\") | .record" ev.json | wc -l) &&
		echo "$r: $n" && [ "$n" = "${r#*:}" ] || {
			jq -c "select(.record == \"${r%:*}\")" ev.json	# which one is extra
			exit 1
		}
	done
	# MMAP2: the program, ld.so and libc; under load (1 run in ~25) the recorder also
	# learns libc from qemu'"'"'s /proc/PID/maps while ld.so still has the whole file mapped
	# there (same file offsets for the code: decoding is the same), a 4th record
	jq -r "select(.record == \"MMAP2\") | .filename" ev.json | sort -u >mm &&
	cat mm && [ "$(wc -l <mm)" = 3 ] && grep -q "/threads$" mm && grep -q "/libc.so.6$" mm &&
	grep -q "/ld-linux-x86-64.so.2$" mm
'
expect 'emulated: text and JSON list the same records at the same offsets' '
	jq -r ".offset" ev.json | awk "{ printf \"%x\\n\", \$1 }" >a &&
	awk "{ print \$1 }" ev.txt >b && [ -s a ] && cmp a b
'
if command -v perf >/dev/null; then
	perf report -D -i thr.data >perf.D 2>/dev/null
	expect 'emulated: the records, offsets and sizes of perf report -D' '
		perf_recs <perf.D >want && tc_recs thr.data >got && [ -s want ] && cmp want got
	'
	expect 'emulated: CPU and time of each side-band record as perf report -D prints them' '
		sed -n "s/^\([0-9]*\) \([0-9]*\) \(0x[0-9a-f]*\) \[.*PERF_RECORD_\(COMM\|MMAP2\|FORK\|EXIT\|ITRACE_START\|AUX\) .*/\3 \1 \2/p;
			s/^\([0-9]*\) \([0-9]*\) \(0x[0-9a-f]*\) \[.*PERF_RECORD_\(COMM\|FORK\|EXIT\)[:(].*/\3 \1 \2/p" perf.D | sort -u >want &&
		jq -r "select(has(\"time\")) | \"\(.offset) \(.cpu) \(.time)\"" ev.json |
			awk "{ printf \"0x%x %s %s\\n\", \$1, \$2, \$3 }" | sort -u >got &&
		wc -l want got && [ "$(wc -l <want)" -ge 18 ] && cmp want got
	'
	expect 'emulated: COMM names and MMAP2 mappings as perf report -D gives them' '
		sed -n "s/.*PERF_RECORD_COMM[^:]*: \(.*\):\([0-9]*\)\/\([0-9]*\)$/\2 \3 \1/p" perf.D | sort >want &&
		jq -r "select(.record == \"COMM\") | \"\(.pid) \(.tid) \(.comm)\"" ev.json | sort >got &&
		[ -s want ] && cmp want got &&
		sed -n "s/.*PERF_RECORD_MMAP2 .*\[\(0x[0-9a-f]*\)(\(0x[0-9a-f]*\)) .*: [-rwxps]* \(.*\)$/\1 \2 \3/p" perf.D | sort >want &&
		jq -r "select(.record == \"MMAP2\") | \"\(.start) \(.len) \(.filename)\"" ev.json | sort >got &&
		[ -s want ] && cmp want got
	'
else
	skip 'show-events against perf report -D on an emulated recording' 'perf is not installed (Debian: linux-perf)'
fi
expect 'the filters apply: --tid keeps the records of that thread' '
	t=$(jq -r "select(.record == \"FORK\") | .tid" ev.json | head -n 1) &&
	jq -c "select(.tid == $t)" ev.json >want && [ "$(wc -l <want)" -ge 4 ] &&
	tracectl -j decode -i thr.data --show-events --tid "$t" >got 2>/dev/null && cmp want got
'
expect_code 2 '--show-events does not go with --branches' '
	tracectl decode -i thr.data --show-events --branches 2>err; rc=$?
	grep -q "show-events" err && exit $rc
'
