# A real full disk: a private tmpfs of 64 KiB (unshare -m, mount -t tmpfs -o size=64k), where
# the test may mount one (root, or a user namespace that allows it; skipped loudly
# otherwise). The writers of perf.data that need no trace hardware fill it: record --pmu
# emulated of a program with more than 64 KiB of trace, and tests/tools/pd_rewrite (the
# writer perf_write rewriting a real recording). Each must fail (exit non-zero), say how
# much the file kept, leave no temporary file, and leave a file that decodes up to its last
# whole record: tracectl and perf script both read it, and what they read agrees.
. "$TOP/tests/e2e/lib.sh"

REWRITE="${TC_TOOLS:-$TOP/build/obj/tools}/pd_rewrite"
mkdir -p mnt out
# in_tmpfs CMD...: CMD run in a mount namespace of its own with a 64 KiB tmpfs on ./mnt;
# its exit status to out/rc, the tmpfs's files listed in out/ls and copied to out/
in_tmpfs() {
	rm -rf out && mkdir out &&
	unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs mnt || exit 99
		"$@" 2>out/err; echo $? >out/rc; ls -A mnt >out/ls; cp mnt/* out/ 2>/dev/null
		exit 0' sh "$@"
}
if ! in_tmpfs true 2>mount.err; then
	echo "skip $T: WARNING: a 64 KiB tmpfs cannot be mounted here ($(head -c 200 mount.err)): the" \
	     "disk-full checks on a real file system did not run (t58 has the ulimit -f variant)"
	exit 0
fi
expect 'the tmpfs holds 64 KiB: a bigger file does not fit' '
	in_tmpfs dd if=/dev/zero of=mnt/big bs=1k count=100 && cat out/err &&
	[ "$(cat out/rc)" != 0 ] && grep -q "No space left on device" out/err
'

if [ "$(uname -m)" = x86_64 ] && command -v gcc >/dev/null && command -v qemu-x86_64 >/dev/null
then
# four threads of N calls: about 23 KiB of Intel PT each for N = 60000
cp "$TOP/tests/fixtures/emu/thr_calls.c" thr.c
gcc -O1 -pthread -o thr thr.c || echo "not ok $T: cannot build the fixture"
expect 'record --pmu emulated on a full tmpfs: exit 1, what was kept said, the file decodes' '
	in_tmpfs "$TRACECTL" record --pmu emulated -o mnt/full.data -- ./thr 60000 &&
	cat out/err out/rc && [ "$(cat out/rc)" = 1 ] &&
	grep -q "^error: mnt/full.data: No space left on device writing at offset" out/err &&
	grep -q "the file keeps its first [0-9]* records ([0-9]* of [0-9]* bytes of data, up to the last whole record)" out/err &&
	# the data written is the trace of more than 64 KiB
	all=$(sed -n "s/.* of \([0-9]*\) bytes of data.*/\1/p" out/err) && [ "$all" -gt 65536 ] &&
	[ "$(cat out/ls)" = full.data ] && [ "$(stat -c %s out/full.data)" -le 65536 ] &&
	tracectl decode --branches -i out/full.data 2>derr >/dev/null && cat derr &&
	grep -q " 0 errors" derr &&
	q=$(tc_branches out/full.data | cut -d" " -f1 | sort -u | wc -l) &&
	echo "threads kept: $q" && [ "$q" -ge 1 ] && [ "$q" -lt 4 ] &&
	n=$(tc_branches out/full.data | wc -l) && echo "$n branches" && [ "$n" -gt 1000 ] &&
	[ "$(perf_branches out/full.data | wc -l)" = "$n" ]
'
else
	skip 'record --pmu emulated on a full tmpfs' 'needs x86-64, gcc and qemu-x86_64'
fi

if [ -x "$REWRITE" ] && have_testdata perfdata && command -v perf >/dev/null; then
PT="$TC_TESTDATA/perfdata/intel_pt/perf.data.intel_pt-4.14"
expect 'perf_write (pd_rewrite of a real Intel PT recording) on a full tmpfs: the records kept are whole' '
	in_tmpfs "$REWRITE" "$PT" mnt/rw.data && cat out/err out/rc &&
	[ "$(cat out/rc)" != 0 ] &&
	kept=$(sed -n "s/.*No space left on device writing at offset 0x[0-9a-f]*: the file keeps its first \([0-9]*\) records.*/\1/p" out/err) &&
	[ "$kept" -gt 10 ] && [ "$(cat out/ls)" = rw.data ] &&
	# perf reads every record kept, and no more
	[ "$(perf report -D -i out/rw.data 2>/dev/null | grep -c "^[0-9].* PERF_RECORD_")" = "$kept" ] &&
	perf script -i out/rw.data >/dev/null 2>perr && cat perr &&
	tracectl decode --packets -i out/rw.data >p.txt 2>derr; rc=$?; cat derr
	[ $rc = 0 ] && grep -q "packet *psb$" p.txt &&
	tracectl decode -i out/rw.data >/dev/null 2>derr2; rc=$?; cat derr2; [ $rc -le 3 ] &&
	grep -q " 0 errors" derr2
'
else
	skip 'perf_write on a full tmpfs' 'needs pd_rewrite (make test builds it), the perfdata test data and perf'
fi
