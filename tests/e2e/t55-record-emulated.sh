# tracectl record --pmu emulated: trace without hardware. The recorder's ground truth (the
# executed branches per thread) must be what tracectl decode and Debian's perf script find
# in the recording, thread by thread, exactly.
. "$TOP/tests/e2e/lib.sh"

FIXT="$TOP/tests/fixtures"


expect_code 2 '--ground-truth without --pmu emulated is a usage error' '
	tracectl record --ground-truth t.txt -- true
'
expect_code 2 '--pmu emulated needs a command' '
	tracectl record --pmu emulated -o x.data
'

if [ "$(uname -m)" != x86_64 ] || ! command -v gcc >/dev/null; then
	skip 'emulated Intel PT' 'needs x86-64 and gcc'
else
	gcc -O1 -g -pthread -o threads "$TOP/examples/threads.c" &&
	gcc -O1 -g -fPIE -pie -o branchy "$FIXT/progs/branchy.c" &&
	gcc -O1 -g -fPIE -pie -o callbacks "$FIXT/progs/callbacks.c" ||
		echo "not ok $T: cannot build the fixtures"

	expect_code 1 'a format the program cannot have is refused' '
		tracectl record --pmu emulated --format etm -o x.data -- ./branchy 2>err; rc=$?
		grep -q "x86-64 program" err; exit $rc
	'
	expect 'a 4-thread program: four PT streams, one per thread, in the status line' '
		tracectl record --pmu emulated -o t.data --ground-truth t.truth -- ./threads 2>err &&
		grep -q "emulated Intel PT, 4 threads" err &&
		[ "$(cut -d" " -f1 t.truth | sort -u | wc -l)" = 4 ] &&
		for tid in $(cut -d" " -f1 t.truth | sort -u); do
			[ "$(grep -c "^$tid " t.truth)" -gt 100 ] || exit 1
		done
	'
	cp t.data threads.data && cp t.truth threads.truth
	for p in threads branchy callbacks; do
		[ -f $p.data ] || tracectl record --pmu emulated -o $p.data --ground-truth $p.truth \
			-- ./$p 2>/dev/null
		expect "$p: tracectl decode --branches is the ground truth, per thread" '
			by_tid $p.truth >want && [ "$(wc -l <want)" -gt 50 ] &&
			tc_branches $p.data >got && diff want got
		'
		expect "$p: perf script --itrace=b gives the same branches, per thread" '
			by_tid $p.truth >want && perf_branches $p.data >got && diff want got &&
			[ ! -s $p.data.perf-err ]
		'
	done
	expect 'the file has one AUXTRACE queue per thread and the real side-band' '
		perf report -D -i threads.data 2>/dev/null >d &&
		[ "$(grep -c "PERF_RECORD_AUXTRACE size" d)" = 4 ] &&
		[ "$(grep -c "PERF_RECORD_FORK" d)" = 3 ] && [ "$(grep -c "PERF_RECORD_EXIT" d)" = 4 ] &&
		grep -q "PERF_RECORD_MMAP2 .*/threads$" d && grep -q "PERF_RECORD_MMAP2 .*libc" d
	'
	expect '--filter fib@threads: only fib is traced, entered and left with PGE/PGD' '
		tracectl record --pmu emulated -o f.data --ground-truth f.truth \
			--filter "filter fib@./threads" -- ./threads 2>/dev/null &&
		[ "$(grep -c " 0 " f.truth)" -ge 4 ] &&
		by_tid f.truth >want && tc_branches f.data >got && diff want got &&
		perf_branches f.data >got2 && diff want got2 &&
		[ "$(wc -l <f.truth)" -lt "$(wc -l <threads.truth)" ]
	'
	expect '--filter START/SIZE@FILE and several filters' '
		fib=$(nm threads | awk "\$3 == \"fib\" { print \$1 }") &&
		tracectl record --pmu emulated -o g.data --ground-truth g.truth \
			--filter "filter 0x$fib/0x40@./threads, filter work@./threads" -- ./threads 2>/dev/null &&
		by_tid g.truth >want && [ "$(wc -l <want)" -gt 20 ] && tc_branches g.data >got && diff want got
	'
	expect 'a filter into libc (qsort) and back (cmp): perf knows the filter and agrees' '
		libc=$(ldd ./callbacks | awk "/libc.so/ { print \$3 }") && [ -f "$libc" ] &&
		tracectl record --pmu emulated -o q.data --ground-truth q.truth \
			--filter "filter main@./callbacks,filter cmp@./callbacks,filter qsort@$libc" \
			-- ./callbacks 2>/dev/null &&
		tracectl -j decode -i q.data 2>/dev/null | jq -r .sym | grep -q "^qsort+" &&
		by_tid q.truth >want && tc_branches q.data >got && diff want got &&
		perf_branches q.data >got2 && diff want got2 &&
		perf report -D -i q.data 2>/dev/null | grep -q "Filter string len"
	'
	expect '--emulator ptrace: single-stepped, own code only; decode and perf agree' '
		tracectl record --pmu emulated --emulator ptrace -o p.data --ground-truth p.truth \
			-- ./threads 2>err && grep -q "(ptrace)" err &&
		[ "$(cut -d" " -f1 p.truth | sort -u | wc -l)" = 4 ] &&
		by_tid p.truth >want && tc_branches p.data >got && diff want got &&
		perf_branches p.data >got2 && diff want got2
	'
	expect_code 2 '--emulator takes qemu or ptrace' '
		tracectl record --pmu emulated --emulator valgrind -o x.data -- ./threads
	'
	expect_code 1 'an unknown filter symbol is named' '
		tracectl record --pmu emulated -o h.data --filter "filter nosuch@./threads" -- ./threads 2>err; rc=$?
		grep -q "no function .nosuch." err; exit $rc
	'
fi

# aarch64 through qemu-user: each thread its own emulated ETM, one sink; decoded by tracectl
# and by perf (tests/unit/test_emu_etm.c also checks decoders/coresight/cs_perf and the interleaving).
if ! command -v qemu-aarch64 >/dev/null || ! command -v aarch64-linux-gnu-gcc >/dev/null; then
	skip 'emulated ETM' 'needs qemu-aarch64 (qemu-user) and gcc-aarch64-linux-gnu'
else
	aarch64-linux-gnu-gcc -O1 -static -pthread -o a64-threads "$TOP/examples/threads.c" &&
	aarch64-linux-gnu-gcc -O2 -static -o a64-paths "$FIXT/etm/paths.c" &&
	aarch64-linux-gnu-gcc -O1 -o a64-dynamic "$FIXT/etm/paths.c" ||
		echo "not ok $T: cannot build the aarch64 fixtures"
	expect 'aarch64 4 threads: four ETMs; tracectl and perf script give the ground truth per thread' '
		tracectl record --pmu emulated -o e.data --ground-truth e.truth -- ./a64-threads 2>err &&
		grep -q "emulated ETMv4, 4 threads" err &&
		[ "$(cut -d" " -f1 e.truth | sort -u | wc -l)" = 4 ] &&
		by_tid e.truth >want && tc_branches e.data >got && diff want got &&
		perf_branches e.data >got2 && diff want got2 &&
		! grep -q "CS ETM" e.data.perf-err
	'
	# record exits with the program's status (acc & 1 of paths.c)
	expect 'aarch64 paths (loops, recursion, indirect calls) and a filter: tracectl and perf agree' '
		qemu-aarch64 ./a64-paths 9; want_rc=$?
		tracectl record --pmu emulated --format etm -o p.data --ground-truth p.truth \
			-- ./a64-paths 9 2>/dev/null; rc1=$?
		tracectl record --pmu emulated -o pf.data --ground-truth pf.truth \
			--filter "filter main@./a64-paths,filter fib@./a64-paths" -- ./a64-paths 9 2>/dev/null
		rc2=$?
		[ $rc1 = $want_rc ] && [ $rc2 = $want_rc ] &&
		by_tid p.truth >want && [ "$(wc -l <want)" -gt 1000 ] &&
		tc_branches p.data >got && diff want got &&
		perf_branches p.data >got2 && diff want got2 &&
		by_tid pf.truth >want && [ "$(grep -c " 0 " want)" -gt 4 ] &&
		tc_branches pf.data >got && diff want got &&
		perf_branches pf.data >got2 && diff want got2
	'
	# an exited thread leaves its ETM to the next one: as many as were alive at once
	expect 'perf -D shows CS_ETM info with one ETMv4 block per ETM (threads alive at once) and timestamps' '
		perf report -D -i e.data 2>/dev/null >d &&
		n=$(grep -c "Magic number.*4040404040404040" d) && echo "$n ETMs" &&
		[ "$n" -ge 1 ] && [ "$n" -le 4 ] &&
		grep -q "PERF_RECORD_AUXTRACE size" d && [ "$(grep -c PERF_RECORD_FORK d)" = 3 ]
	'
	expect 'a dynamic aarch64 program: traced with its libraries (more in t59)' '
		tracectl record --pmu emulated -o x.data --ground-truth x.truth -- ./a64-dynamic &&
		by_tid x.truth >want && tc_branches x.data >got && diff want got
	'
fi
