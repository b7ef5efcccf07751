# Behaviour kept: every decode output form over every recording and snapshot of the test
# data gives the bytes, messages and exit codes recorded in tests/golden/outputs.sums
# (tests/golden/outputs.sh says how they are made, and when to make them anew).
. "$TOP/tests/e2e/lib.sh"

have_testdata opencsd && have_testdata perfdata ||
	{ skip 'decode outputs against their recorded checksums' 'no test data'; exit 0; }
expect "$(wc -l <"$TOP/tests/golden/outputs.sums") decode outputs equal their recorded checksums" '
	sh "$TOP/tests/golden/outputs.sh" "$TRACECTL" "$TC_TESTDATA" >now.sums &&
	[ "$(wc -l <now.sums)" -gt 200 ] &&
	diff "$TOP/tests/golden/outputs.sums" now.sums
'
