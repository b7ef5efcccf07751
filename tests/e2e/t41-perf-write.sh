# lib/perfdata/perf_write against perf itself: tests/tools/pd_rewrite reads each real recording and
# writes it again, rebuilding side-band, AUX, AUXTRACE and the CS_ETM / Intel PT info from
# parsed fields. `perf report -D` must show the same records, byte for byte.
. "$TOP/tests/e2e/lib.sh"

REWRITE="${TC_TOOLS:-$TOP/build/obj/tools}/pd_rewrite"
command -v perf >/dev/null || { skip 'perf.data rewrite checked by perf' 'no perf'; exit 0; }
[ -x "$REWRITE" ] || { echo "not ok $T: $REWRITE is not built (make test builds it)"; exit 0; }
have_testdata perfdata || { skip 'perf.data rewrite checked by perf' 'no test data'; exit 0; }
PD="$TC_TESTDATA/perfdata"

# perf -D without file offsets. The simpleperf ETM file's auxtrace index has no count
# word, so perf ignores it and decodes the buffer whole; in the rewrite the index is
# perf's own and perf decodes per AUX record: the trace chunk headings differ.
dump() {
	perf report -D -i "$1" 2>/dev/null |
		sed -E 's/^0x[0-9a-f]+@[^ ]+ /OFF@F /; s/^([0-9]+ [0-9]+ )0x[0-9a-f]+ /\1OFF /' |
		grep -v -e '^$' -e 'Trace data: size'
}

for f in simpleperf-etm/perf_etm.data simpleperf-etm/perf_with_missing_aux_data.data \
	 intel_pt/perf.data.intel_pt-4.14; do
	expect "$f: perf -D shows the rewritten file's records as the original's" '
		"$REWRITE" "$PD/$f" rw.data &&
		dump "$PD/$f" >a && dump rw.data >b &&
		[ "$(grep -c PERF_RECORD_ a)" -gt 10 ] && diff a b
	'
	expect "$f: perf script reads the rewrite" 'perf script -i rw.data >/dev/null 2>&1'
done

expect 'Intel PT: tracectl lists the same packets from the rewrite as from the original' '
	"$REWRITE" "$PD/intel_pt/perf.data.intel_pt-4.14" rw.data &&
	tracectl decode --packets -i "$PD/intel_pt/perf.data.intel_pt-4.14" >a 2>/dev/null &&
	tracectl decode --packets -i rw.data >b 2>/dev/null &&
	[ "$(wc -l <a)" -gt 1000 ] &&
	awk "{ \$1 = \"\"; print }" a >a2 && awk "{ \$1 = \"\"; print }" b >b2 && diff a2 b2
'
