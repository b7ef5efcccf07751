# decode --format autofdo / bolt: ranges whose binary is not found are left out of the
# profile (an optimiser takes addresses of a file); that is said once, with how many of all
# and where they were (recorded path, or no file mapped, and the span of their starts), and
# the exit status is 3 (decoded with problems), not 0.
. "$TOP/tests/e2e/lib.sh"

have_testdata opencsd || exit 0
S="$TC_TESTDATA/opencsd/juno_r1_1"
expect_code 3 'snapshot (memory dumps, no file): autofdo warns once with the count, exit 3' '
	tracectl decode -i "$S" --format autofdo >a.txt 2>err; rc=$?; cat err
	n=$(grep -c "instruction ranges left out" err) && [ "$n" = 1 ] &&
	grep -q "warning: --format autofdo: \([0-9]*\) of \1 instruction ranges left out, their binary not found.*no file mapped (\([0-9]*\), 0xffffffc0000[0-9a-f]*-0xffffffc0000[0-9a-f]*)" err &&
	# the count is the decoded ranges
	all=$(tracectl -j decode -i "$S" 2>/dev/null | grep -c "\"type\":\"range\"") &&
	grep -q " $all of $all instruction ranges" err &&
	# nothing written for a binary
	! grep -q "^// build_id" a.txt && exit $rc
'
expect_code 1 'bolt on the same: no binary to write, fatal (the warning first)' '
	tracectl decode -i "$S" --format bolt >b.txt 2>err; rc=$?; cat err
	grep -q "ranges left out" err && grep -q "ran in none that was found" err && exit $rc
'
if have_testdata perfdata; then
E="$TC_TESTDATA/perfdata/simpleperf-etm"
expect_code 0 'every range in a found binary: no warning, exit 0' '
	mkdir -p sym/data/local/tmp && cp "$E/etm_test_loop" sym/data/local/tmp/ &&
	tracectl decode -i "$E/perf_etm.data" --symfs sym --format autofdo >a.txt 2>err
	rc=$?; cat err; ! grep -q "left out" err && grep -q "^// build_id" a.txt && exit $rc
'
fi
