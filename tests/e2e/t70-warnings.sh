# One warning per distinct problem, with a count, and the documented exit status everywhere
# (man tracectl: 3 when the input had problems, each told by a warning: line): every
# decode form, the export formats, report and diff.
. "$TOP/tests/e2e/lib.sh"

if ! have_testdata opencsd || ! have_testdata perfdata; then
	skip 'warnings once with a count, exit 3' 'no opencsd or perfdata test data'
	exit 0
fi
S="$TC_TESTDATA/opencsd"
P="$TC_TESTDATA/perfdata"

# juno_r1_1 without its memory dump: each of the 6 CPU sections names the same file.
mkdir -p nodump && cp -r "$S/juno_r1_1/." nodump/ && rm nodump/kernel_dump.bin
expect_code 3 'a memory dump missing for 6 CPUs: one warning "(6 times)", exit 3' '
	tracectl decode -i nodump >/dev/null 2>err; rc=$?
	cat err
	[ "$(grep -c "^warning:" err)" = 1 ] &&
	grep -q "^warning: nodump/kernel_dump.bin: memory dump left out: No such file or directory (6 times)\$" err &&
	exit $rc
'
expect_code 3 'reserved trace IDs at 56 offsets: one warning, the first and how many more' '
	tracectl decode -i "$S/stm_only-juno" >/dev/null 2>err; rc=$?
	cat err
	[ "$(grep -c "^warning: reserved trace ID" err)" = 1 ] &&
	grep -q "^warning: reserved trace ID 0x70 at offset 508 (and 55 more like it)\$" err &&
	exit $rc
'

# Every form: a warning on stderr <=> exit 3, no warning line twice (fatal: forms, such as
# bolt without --dso, exit 1 and are left out).
forms='decode
-j decode
decode --branches
decode --packets
-j decode --packets
decode --format folded
decode --format chrome
decode --format svg
decode --format autofdo
report
-j report'
check() {	# input: every form
	echo "$forms" | while read -r f; do
		# shellcheck disable=SC2086
		tracectl $f -i "$1" >/dev/null 2>err; rc=$?
		w=$(grep -c "^warning:" err); d=$(grep "^warning:" err | sort | uniq -d | wc -l)
		[ $rc = 1 ] && ! grep -q "^fatal:" err && { echo "$f: exit 1 without fatal:"; exit 1; }
		[ $rc = 1 ] && continue
		if [ "$w" -gt 0 ] && [ $rc != 3 ]; then echo "$f: $w warnings, exit $rc"; exit 1; fi
		if [ "$w" = 0 ] && [ $rc = 3 ]; then echo "$f: exit 3 without a warning"; exit 1; fi
		[ "$d" = 0 ] || { echo "$f: a warning given twice"; cat err; exit 1; }
	done
}
for in in nodump "$S/a55-test-tpiu" "$S/stm_only-juno" "$S/Snowball" \
	"$P/intel_pt/perf.data.intel_pt-4.14" "$P/simpleperf-etm/perf_with_missing_aux_data.data"; do
	expect "$(basename "$in"): every decode, export and report form: warnings once, exit 3 with them" \
		'check "$in"'
done
expect_code 3 'diff: a warning of either side, exit 3' '
	tracectl diff "$S/juno_r1_1" nodump >/dev/null 2>err; rc=$?
	cat err
	[ "$(grep -c "^warning:" err)" = 1 ] && grep -q "(6 times)" err && exit $rc
'
expect_code 0 'diff without problems: exit 0, no warning' '
	tracectl diff "$S/Snowball" "$S/Snowball" >/dev/null 2>err; rc=$?
	! grep -q "^warning:" err && exit $rc
'
