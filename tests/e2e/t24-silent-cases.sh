# Problems that once gave exit 0 without a word now warn or stop: --packets on AUX trace of
# a kind no decoder knows is fatal as without --packets; a snapshot whose memory dumps are
# missing, or whose buffer ends in a truncated frame, warns and exits 3 (man tracectl).
. "$TOP/tests/e2e/lib.sh"

if have_testdata perfdata; then
	ETM="$TC_TESTDATA/perfdata/simpleperf-etm/perf_etm.data"
	expect_code 1 'decode --packets: an unknown AUXTRACE_INFO type is fatal, naming it' '
		# the type word of its AUXTRACE_INFO record (file offset 1032) from 3 to 9
		cp "$ETM" t9.data && printf "\011" | dd of=t9.data bs=1 seek=1040 conv=notrunc status=none &&
		tracectl decode --packets -i t9.data >out 2>err; rc=$?
		cat err; [ ! -s out ] &&
		grep -q "^fatal: t9.data: AUX trace of unknown kind (AUXTRACE_INFO type 9)" err &&
		exit $rc
	'
else
	skip 'unknown AUXTRACE_INFO type with --packets' 'no perfdata test data'
fi

if have_testdata opencsd; then
	S="$TC_TESTDATA/opencsd"
	expect_code 3 'a snapshot with missing memory dumps: a warning each, exit 3' '
		tracectl decode -i "$S/juno-uname-001" >/dev/null 2>err; rc=$?
		grep -q "libc-2.21.so.bin: memory dump left out: No such file" err && exit $rc
	'
	expect_code 3 'a snapshot buffer ending in a truncated frame: the warning, exit 3' '
		tracectl decode --packets -i "$S/a55-test-tpiu" >/dev/null 2>err; rc=$?
		grep -q "^warning: truncated frame at offset 48372" err && exit $rc
	'
	expect_code 3 'a copy with its last frame cut short: exit 3 with the warning' '
		cp -r "$S/juno_r1_1" j && chmod -R u+w j &&
		truncate -s -5 j/cstrace.bin &&
		tracectl decode --packets -i j >/dev/null 2>err; rc=$?
		cat err; grep -q "^warning: truncated frame at offset" err && exit $rc
	'
	expect 'a complete snapshot still exits 0' '
		tracectl decode -i "$S/juno_r1_1" >/dev/null 2>err && ! grep -q warning err
	'
else
	skip 'snapshot problems exit 3' 'no opencsd test data'
fi
