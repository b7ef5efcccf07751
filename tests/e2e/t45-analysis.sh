# decode --format: the instruction flow of OpenCSD snapshots as folded stacks (weights add up
# to the instructions decoded), a Chrome trace (slices nest and close, per thread) and a
# flame graph (rsvg-convert renders it; the hottest stack's function is in it).
. "$TOP/tests/e2e/lib.sh"

expect_code 2 'an unknown --format is a usage error' 'tracectl decode -i x --format dot'
expect_code 2 '--format does not go with --packets' \
	'tracectl decode -i x --format folded --packets'

have_testdata opencsd || { skip 'decode --format on OpenCSD snapshots' 'no test data'; exit 0; }
S="$TC_TESTDATA/opencsd"

for snap in trace_cov_a15 juno_r1_1; do
	expect "$snap: folded weights add up to the instructions decoded" '
		tracectl decode -i "$S/$snap" --format folded >f.txt 2>err &&
		n=$(sed -n "s/.* ranges, \([0-9]*\) instructions,.*/\1/p" err) &&
		sum=$(awk "{ s += \$NF } END { print s }" f.txt) &&
		echo "$sum of $n instructions in $(wc -l <f.txt) stacks" &&
		[ "$n" -gt 0 ] && [ "$sum" = "$n" ] &&
		! grep -v " [0-9][0-9]*\$" f.txt'
	expect "$snap: chrome slices nest and all close" '
		tracectl decode -i "$S/$snap" --format chrome >c.json 2>/dev/null &&
		jq -e ".traceEvents | length > 0" c.json &&
		jq -e ".traceEvents as \$ev | [\$ev[].tid] | unique | map(. as \$t |
			[\$ev[] | select(.tid == \$t and (.ph == \"B\" or .ph == \"E\"))] |
			reduce .[] as \$e ({s: [], ok: true};
				if \$e.ph == \"B\" then .s += [\$e.name]
				elif (.s | length) > 0 and .s[-1] == \$e.name then .s |= .[:-1]
				else .ok = false end) | .ok and (.s | length) == 0) | all" c.json'
	expect "$snap: the flame graph renders and shows the hottest stack" '
		tracectl decode -i "$S/$snap" --format svg >g.svg 2>/dev/null &&
		tracectl decode -i "$S/$snap" --format folded 2>/dev/null >f.txt &&
		hot=$(sort -k2 -n -t" " f.txt | tail -n 1 | sed "s/ [0-9]*\$//; s/.*;//") &&
		echo "hottest: $hot" && grep -q "<title>$hot$" g.svg &&
		rsvg-convert -o g.png g.svg && [ -s g.png ]'
done
