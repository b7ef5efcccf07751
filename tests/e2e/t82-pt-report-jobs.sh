# report and diff --jobs N on Intel PT (issue 16): the analyses take the records in order in
# the caller's thread, so one worker decodes the queues as one thread would and hands the
# records over (pt_pipe.c: the ranges as numbers in a table of them both sides keep); the
# caller answers the analyses' symbols from images of its own, made and given side-band
# where the worker's are. The decoding runs in another thread than the caller's (gdb says
# which), and every form is byte for byte --jobs 1's, exit code and stderr included: a
# program nobody here wrote (gzip: one queue), a shell's children (one queue each), the
# program's image gone (stops without code, the records of the exact path where the skim
# gives up), with time (pd_rewrite -T), and diff. t75, t77 and t79 run report's forms too.
. "$TOP/tests/e2e/lib.sh"

if [ "$(uname -m)" != x86_64 ] || ! command -v qemu-x86_64 >/dev/null; then
	skip 'Intel PT report --jobs' 'needs x86-64 and qemu-x86_64'
	exit 0
fi
record_gzip_procs

forms='report
-j report
report --per-thread
report --sort total --limit 5
-j report --per-thread --sort calls'

# decoding_thread FILE N: gdb's number of the thread that decodes the queues for report
# --jobs N (the caller's is 1). gdb is a test dependency (mk/deps.sh): without it the
# check fails, never passes unchecked.
decoding_thread() {
	gdb -q -batch -ex 'break tc_pt_session_decode_here' \
		-ex "run report --jobs $2 -i $1 >/dev/null 2>&1" -ex 'thread' "$TRACECTL" 2>&1 |
		sed -n 's/^\[Current thread is \([0-9]*\) .*/\1/p'
}

expect 'report --jobs 2 and 4: a worker decodes (not the caller'"'"'s thread); --jobs 1: the caller' '
	command -v gdb >/dev/null || { echo "gdb missing"; exit 1; }
	t1=$(decoding_thread gzip.data 1) t2=$(decoding_thread gzip.data 2)
	t4=$(decoding_thread gzip.data 4)
	echo "threads: --jobs 1: $t1, --jobs 2: $t2, --jobs 4: $t4"
	[ "$t1" = 1 ] && [ -n "$t2" ] && [ "$t2" != 1 ] && [ -n "$t4" ] && [ "$t4" != 1 ]
'
expect 'gzip (one queue): every report form the same with --jobs 1, 2, 4' '
	tracectl decode -i gzip.data 2>&1 >/dev/null | grep -q " in 1 queues," &&
	same_with_jobs gzip.data
'
expect 'a shell'"'"'s children (a queue each): every report form the same with --jobs 1, 2, 4' '
	[ "$(tracectl decode -i procs.data 2>&1 >/dev/null | sed -n "s/.* in \([0-9]*\) queues,.*/\1/p")" -ge 3 ] &&
	same_with_jobs procs.data
'
expect 'the program'"'"'s image gone: the same with --jobs 1, 2, 4' '
	mkdir gone && cp /bin/gzip gone/gzip &&
	tracectl record --pmu emulated -o gone.data -- gone/gzip -c in.txt >/dev/null 2>&1 &&
	rm gone/gzip &&
	tracectl report -i gone.data 2>&1 >/dev/null | grep -q "image not found: .*/gone/gzip" &&
	same_with_jobs gone.data
'
expect 'with time (pd_rewrite -T 64): the same with --jobs 1, 2, 4' '
	"${TC_TOOLS:-$TOP/build/obj/tools}/pd_rewrite" -T 64 gzip.data gzipT.data &&
	same_with_jobs gzipT.data &&
	"${TC_TOOLS:-$TOP/build/obj/tools}/pd_rewrite" -T 64 -O procs.data procsT.data &&
	same_with_jobs procsT.data
'
expect 'diff of two recordings: the same with --jobs 1, 2 and 4' '
	seq 5000 | sort -R --random-source=/dev/zero >in2.txt &&
	tracectl record --pmu emulated -o gzip2.data -- /bin/gzip -c in2.txt >/dev/null 2>&1 &&
	for n in 1 2 4; do
		tracectl diff --jobs $n gzip.data gzip2.data >d$n 2>&1; echo "exit $?" >>d$n
	done &&
	grep -q "^exit 0$" d1 && cmp d1 d2 && cmp d1 d4
'
