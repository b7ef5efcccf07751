# From a trace to a faster binary: decode --format autofdo and bolt fed to the optimisers
# Debian ships (autofdo's create_llvm_prof, llvm-profdata, bolt-16's perf2bolt and
# llvm-bolt; mk/deps.sh installs them), on an emulated recording of a fixture whose counts
# are known, checked against the recording's own ground truth; and simpleperf's recording.
. "$TOP/tests/e2e/lib.sh"

PERF2BOLT=/usr/lib/llvm-16/bin/perf2bolt	# by this name: perf2bolt-16 acts as llvm-bolt
for t in clang create_llvm_prof llvm-profdata-14 llvm-bolt-16 "$PERF2BOLT"; do
	command -v "$t" >/dev/null ||
		{ echo "not ok $T: $t is missing (make deps installs autofdo, llvm-14, bolt-16)"; exit 0; }
done
if [ "$(uname -m)" != x86_64 ]; then
	skip 'profiles of an emulated x86-64 recording' 'not an x86-64 machine'
	exit 0
fi

# -no-pie: hot's address is the one nm prints; DWARF 4 for autofdo 0.19's reader;
# --emit-relocs lets BOLT move functions.
clang -O2 -gdwarf-4 -no-pie -Wl,--emit-relocs -o hot "$TOP/tests/fixtures/fdo/fdo_hot.c" &&
./hot >want.out &&
tracectl record --pmu emulated --ground-truth truth -o h.data -- ./hot >/dev/null 2>rec.err ||
	{ echo "not ok $T: emulated record of the fixture failed"; sed 's/^/#   /' rec.err; }
HOT=$(nm hot | sed -n 's/^0*\([0-9a-f]*\) t hot$/\1/p')
ENTRIES=$(awk -v h="$HOT" '$3 == h' truth | wc -l)

expect 'autofdo: create_llvm_prof takes it; the hottest function is hot, entered as often as the trace says' '
	echo "hot at 0x$HOT, entered $ENTRIES times in the trace" && [ "$ENTRIES" = 1000 ] &&
	tracectl decode -i h.data --format autofdo --dso hot >h.afdo 2>err &&
	grep -q "autofdo profile of $(pwd)/hot (build id [0-9a-f]*)" err &&
	! grep -q "Please split" h.afdo && [ "$(grep -c "^// build_id: " h.afdo)" = 1 ] &&
	create_llvm_prof --profiler text --profile h.afdo --binary hot --out h.prof &&
	llvm-profdata-14 show --sample --all-functions h.prof >show &&
	sed -n "s/^Function: \([^:]*\): \([0-9]*\), \([0-9]*\), .*/\2 \1 \3/p" show | sort -rn >funcs &&
	cat funcs && [ "$(head -n 1 funcs | cut -d" " -f2,3)" = "hot $ENTRIES" ] &&
	grep -q "calls: hot:$ENTRIES\$" show
'
expect 'autofdo: clang builds with the profile, and the program still does the same' '
	clang -O2 -gdwarf-4 -no-pie -fprofile-sample-use=h.prof -o hot.fdo \
		"$TOP/tests/fixtures/fdo/fdo_hot.c" 2>warn && ./hot.fdo >fdo.out &&
	cmp want.out fdo.out && ! grep -q "warning: .*profile" warn
'
expect 'bolt: perf2bolt -pa takes it; the call edge main -> hot has the trace'"'"'s count' '
	tracectl decode -i h.data --format bolt --dso hot >h.pa 2>err &&
	grep -q "^F [0-9a-f]* [0-9a-f]* [0-9]*$" h.pa && grep -q "^B [0-9a-f]* $HOT $ENTRIES 0$" h.pa &&
	"$PERF2BOLT" -pa -p h.pa -o h.fdata hot >p2b.log 2>&1 &&
	grep -q "PERF2BOLT: read [1-9][0-9]* aggregated LBR entries" p2b.log &&
	grep -q "^1 main [0-9a-f]* 1 hot\(/[0-9]*\)\? 0 0 $ENTRIES$" h.fdata
'
expect 'bolt: llvm-bolt rewrites the binary with it; the rewritten one does the same' '
	llvm-bolt-16 hot -o hot.bolt -data=h.fdata -reorder-blocks=ext-tsp -reorder-functions=hfsort \
		-split-functions >bolt.log 2>&1 &&
	grep -q "BOLT-INFO: [1-9][0-9]* out of [0-9]* functions in the binary .* have non-empty execution profile" bolt.log &&
	./hot.bolt >bolt.out && cmp want.out bolt.out
'
expect_code 1 'bolt without --dso on a trace through three binaries: refused, naming them' '
	tracectl decode -i h.data --format bolt >out 2>err; rc=$?
	grep -q "writes the profile of one binary: choose it with --dso (the trace ran in .*/hot, .*ld-linux-x86-64.so.2, .*libc.so.6)" err &&
	[ ! -s out ] && exit $rc
'
expect_code 1 '--dso naming no binary of the trace is refused, naming those it ran in' '
	tracectl decode -i h.data --format autofdo --dso nosuch >out 2>err; rc=$?
	grep -q "dso nosuch: the trace ran in no such binary; it ran in .*/hot" err && exit $rc
'
expect '--dso has one meaning: with --format folded it keeps the code of hot only (no libc or ld.so frame)' '
	tracectl decode -i h.data --format folded >all.folded 2>err &&
	grep -q "^[^;]*;\(0x\|_dl_start_user\)" all.folded &&
	tracectl decode -i h.data --format folded --dso hot >hot.folded 2>err &&
	grep -q "^[^;]*;main;hot [0-9]" hot.folded && ! grep -q "0x\|_dl_start_user" hot.folded
'
if have_testdata perfdata; then
	E="$TC_TESTDATA/perfdata/simpleperf-etm"
	# etm_test_loop is stripped: the profile create_llvm_prof writes names no function
	expect 'simpleperf ETM recording: create_llvm_prof takes its autofdo profile' '
		mkdir -p sym/data/local/tmp && cp "$E/etm_test_loop" sym/data/local/tmp/ &&
		tracectl decode -i "$E/perf_etm.data" --symfs sym --format autofdo --dso etm_test_loop >s.afdo 2>err &&
		[ "$(head -n 1 s.afdo)" = 10 ] && [ "$(grep -c "^[0-9a-f]*-[0-9a-f]*:[0-9]*$" s.afdo)" = 10 ] &&
		create_llvm_prof --profiler text --profile s.afdo --binary sym/data/local/tmp/etm_test_loop --out s.prof &&
		[ -s s.prof ]
	'
fi
