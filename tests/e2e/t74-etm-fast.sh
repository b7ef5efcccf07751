# The fast ETMv4 decoder (decoders/coresight/etm4_walk.c, the default) against OpenCSD's
# own full decoder (--decoder=reference): the same bytes out, the same messages and exit
# code, in every output form, on the OpenCSD snapshots, the simpleperf ETM recording and
# emulated ETMv4 recordings of aarch64 programs (loops, calls, recursion, indirect calls,
# threads).
. "$TOP/tests/e2e/lib.sh"

# same FORM-ARGS... -- INPUT-ARGS...: fast and reference give the same stdout, stderr, exit
same() {
	pre=
	while [ "$1" != -- ]; do pre="$pre $1"; shift; done
	shift
	# shellcheck disable=SC2086
	tracectl $pre "$@" >f.out 2>f.err; echo "exit $?" >>f.err
	# shellcheck disable=SC2086
	tracectl $pre --decoder=reference "$@" >r.out 2>r.err; echo "exit $?" >>r.err
	cmp f.out r.out && cmp f.err r.err
}

# forms INPUT-ARGS...: every output form the same
forms() {
	same decode -- "$@" && same -j decode -- "$@" && same decode --branches -- "$@" &&
	same -j decode --branches -- "$@" && same decode --itrace=i -- "$@" &&
	same -j decode --itrace=cre -- "$@" && same decode --call-trace -- "$@" &&
	same report -- "$@" && same -j report -- "$@" &&
	same decode --format folded -- "$@" && same decode --format chrome -- "$@" &&
	same decode --format autofdo -- "$@"
}

if have_testdata opencsd; then
	for s in juno_r1_1 juno-uname-001 bugfix-exact-match a57_single_step init-short-addr \
		 a55-test-tpiu ete TC2; do
		[ -d "$TC_TESTDATA/opencsd/$s" ] || continue
		expect "snapshot $s: fast = reference (text, JSON, report)" "
			same decode -- -i '$TC_TESTDATA/opencsd/$s' &&
			same -j decode -- -i '$TC_TESTDATA/opencsd/$s' &&
			same -j report -- -i '$TC_TESTDATA/opencsd/$s'"
	done
	expect 'the 1 MiB ETR snapshot has ranges (the fast decoder ran on something)' "
		tracectl -j decode -i '$TC_TESTDATA/opencsd/bugfix-exact-match' >o &&
		[ \$(grep -c '\"range\"' o) -gt 100000 ]"
fi

if have_testdata perfdata/simpleperf-etm; then
	mkdir -p symfs/data/local/tmp &&
		cp "$TC_TESTDATA/perfdata/simpleperf-etm/etm_test_loop" symfs/data/local/tmp/
	for f in perf_etm.data perf_with_missing_aux_data.data; do
		expect "simpleperf $f: fast = reference in every form" "
			forms -i '$TC_TESTDATA/perfdata/simpleperf-etm/$f' --symfs symfs"
	done
fi

if ! command -v qemu-aarch64 >/dev/null || ! command -v aarch64-linux-gnu-gcc >/dev/null; then
	skip 'emulated ETMv4 recordings: fast = reference' \
		'needs qemu-aarch64 and gcc-aarch64-linux-gnu'
else
	expect 'emulated paths (argv 3): fast = reference in every form' "
		aarch64-linux-gnu-gcc -O1 -static -o paths '$TOP/tests/fixtures/etm/paths.c' &&
		{ tracectl record --pmu emulated -o paths.data -- ./paths 3 2>rec.err || true; } &&
		[ -s paths.data ] && forms -i paths.data &&
		tracectl decode --branches -i paths.data | grep -q fib"
	expect 'emulated threads example: fast = reference in every form' "
		aarch64-linux-gnu-gcc -O1 -static -pthread -o threads '$TOP/examples/threads.c' &&
		tracectl record --pmu emulated -o threads.data -- ./threads >/dev/null 2>rec.err &&
		forms -i threads.data"
	expect 'emulated threads of calls: fast = reference, per thread too' "
		aarch64-linux-gnu-gcc -O1 -static -pthread -o thr '$TOP/tests/fixtures/emu/thr_calls.c' &&
		tracectl record --pmu emulated -o thr.data -- ./thr 2000 >/dev/null 2>rec.err &&
		forms -i thr.data &&
		tracectl -j decode -i thr.data --per-thread PF && ls PF | grep -q . &&
		tracectl -j decode --decoder=reference -i thr.data --per-thread PR && diff -r PF PR"
fi
