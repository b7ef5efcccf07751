# Progress of a decode (cmd/progress.c): a line redrawn on a terminal's stderr, cleared
# before the summary; nothing with -q, under CI or when stderr is not a terminal.
# script(1) gives the decode a terminal; TRACECTL_PROGRESS_DELAY=0 shows it at once.
. "$TOP/tests/e2e/lib.sh"

PT_TRUTH="${TC_TOOLS:-$TOP/build/obj/tools}/pt_truth"
if [ "$(uname -m)" != x86_64 ] || ! command -v gcc >/dev/null || ! command -v script >/dev/null; then
	skip 'decode progress' 'needs x86-64, gcc and script(1)'
	exit 0
fi
[ -x "$PT_TRUTH" ] || { echo "not ok $T: $PT_TRUTH is not built (make test builds it)"; exit 0; }
gcc -O1 -no-pie -o br "$TOP/tests/fixtures/progs/branchy.c" &&
"$PT_TRUTH" -p 256 -o a.data -t a.truth -- ./br 2>a.log || echo "not ok $T: pt_truth failed"

on_tty() {	# command line, run with a terminal on stdin/stdout/stderr; output in tty.out
	env -u CI TRACECTL_PROGRESS_DELAY=0 script -qec "$1" /dev/null >tty.out 2>&1 </dev/null
}

expect 'on a terminal: bytes, rate and ETA, cleared before the summary line' '
	on_tty "$TRACECTL decode -i a.data >/dev/null" && cat -v tty.out &&
	grep -q "\[ decoding: [0-9.]* of [0-9.]* KiB ([0-9]*%), [0-9.]* KiB/s" tty.out &&
	grep -q "$(printf "\r\033\\\\[K")\[ tracectl decode: " tty.out
'
# --jobs: the listing made on the decoding threads comes to the caller in pieces (here one
# queue cut at its PSBs): the progress counts them, from the first
expect 'on a terminal with --jobs 2: the progress line too' '
	on_tty "$TRACECTL decode --jobs 2 -i a.data >/dev/null" && cat -v tty.out &&
	grep -q "\[ decoding: [0-9.]* of [0-9.]* KiB ([0-9]*%), [0-9.]* KiB/s" tty.out
'
expect 'silent with -q, under CI and when stderr is not a terminal' '
	on_tty "$TRACECTL -q decode -i a.data >/dev/null" && ! grep -q decoding tty.out &&
	env -u CI TRACECTL_PROGRESS_DELAY=0 script -qec "CI=1 $TRACECTL decode -i a.data >/dev/null" /dev/null >ci.out 2>&1 </dev/null &&
	! grep -q decoding ci.out && grep -q "tracectl decode:" ci.out &&
	on_tty "$TRACECTL decode -i a.data >/dev/null 2>err.txt" && ! grep -q decoding err.txt &&
	grep -q "tracectl decode:" err.txt
'
