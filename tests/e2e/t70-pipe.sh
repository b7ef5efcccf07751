# A closed pipe is quiet (man tracectl, EXIT STATUS): under every output form, a reader that
# goes away (| head -c1) gives no fatal: or error: (once it has gone, no warning or status line
# either, even without -q), and the exit status is 141 (what a shell shows for a command killed
# by SIGPIPE), or 0 when the whole output fitted in the pipe before the reader left.
. "$TOP/tests/e2e/lib.sh"

# closed 'ARGS': run tracectl ARGS with a standard output whose reader is already gone, so
# that its first write fails with EPIPE whatever the output's size (| head -c1 cannot
# promise that: a small output fits in the pipe before head exits).
closed() { eval "set -- $1"; perl -e 'pipe(R, W) or die; close R;
	open(STDOUT, ">&W") or die; close W; exec @ARGV or die' "$TRACECTL" "$@"; }

# quiet 'description' 'ARGS': both ways, the exit status and an empty standard error
quiet() {
	desc=$1; A=$2
	expect "$desc: | head -c1 is quiet (-q: nothing on stderr; without: no fatal:)" '
		{ eval "tracectl -q $A" 2>err; echo $? >rc; } | head -c1 >/dev/null
		cat err rc; [ ! -s err ] && { [ "$(cat rc)" = 141 ] || [ "$(cat rc)" = 0 ]; } &&
		{ eval "tracectl $A" 2>err; echo $? >rc; } | head -c1 >/dev/null
		cat err rc; ! grep -q "^fatal:\|^error:" err &&
		{ [ "$(cat rc)" = 141 ] || [ "$(cat rc)" = 0 ]; }
	'
	expect_code 141 "$desc: a reader already gone: exit 141, nothing on stderr" '
		closed "$A" 2>err; rc=$?; cat err; [ ! -s err ] && exit $rc
	'
}

if have_testdata opencsd && have_testdata perfdata; then
	J="$TC_TESTDATA/opencsd/juno_r1_1"
	E="$TC_TESTDATA/perfdata/simpleperf-etm/perf_etm.data"
	P="$TC_TESTDATA/perfdata/intel_pt/perf.data.intel_pt-4.14"
	mkdir -p sym/data/local/tmp && cp "$TC_TESTDATA/perfdata/simpleperf-etm/etm_test_loop" sym/data/local/tmp/
	quiet 'decode (ranges)' 'decode -i "$J"'
	quiet 'decode -j' '-j decode -i "$J"'
	quiet 'decode --packets' 'decode --packets -i "$J"'
	quiet 'decode --packets (Intel PT)' 'decode --packets -i "$P"'
	quiet 'decode --branches' 'decode --branches -i "$E" --symfs sym'
	quiet 'decode -j --branches' '-j decode --branches -i "$E" --symfs sym'
	for f in folded chrome svg; do
		quiet "decode --format $f" 'decode --format $f -i "$J"'
	done
	quiet 'decode --format autofdo' 'decode --format autofdo -i "$E" --symfs sym'
	quiet 'decode --format bolt' 'decode --format bolt -i "$E" --symfs sym'
	quiet 'decode -q --format chrome' '-q decode --format chrome -i "$J"'
	quiet 'report' 'report -i "$J"'
	quiet 'report -j' '-j report -i "$J"'
	quiet 'diff' 'diff "$J" "$J"'
	quiet 'diff -j' '-j diff "$J" "$J"'
else
	skip 'a closed pipe under decode, report and diff' 'no opencsd or perfdata test data'
fi
quiet 'list -j' '-j list --sysfs-root "$TOP/tests/fixtures/sysfs/juno"'
quiet 'list' 'list --sysfs-root "$TOP/tests/fixtures/sysfs/juno"'
quiet '--help' '--help'
