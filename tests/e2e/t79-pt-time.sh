# Intel PT with time, as perf records it by default (TSC and TMA in each PSB+, MTCs):
# report's flow (pt_skim.c) keeps libipt's time itself and tells it where the exact path
# would (the caller's thread callback and side-band follow it), so every form must stay
# identical with --decoder=reference and with --jobs 1, 2, 4. The recordings are emulated
# ones given time by pd_rewrite -T (an MTC every 16 or 64 bytes of trace), whole or cut
# into buffers; and with a MODE.TSX and a PIP in every PSB+ (pd_rewrite -P), as a real
# CPU's perf recording has them: their events too the skim models (without time it then
# takes every buffer itself, which a debugger's count of the exact path's walks shows).
# One queue with time is cut at its PSBs under --jobs (pt_segment.c): with pd_rewrite -M
# a library's mapping comes while the program runs (side-band by time inside segments).
. "$TOP/tests/e2e/lib.sh"

if [ "$(uname -m)" != x86_64 ] || ! command -v qemu-x86_64 >/dev/null; then
	skip 'Intel PT with time: fast = reference' 'needs x86-64 and qemu-x86_64'
	exit 0
fi
REWRITE="${TC_TOOLS:-$TOP/build/obj/tools}/pd_rewrite"

# same FILE: each form with both decoders and --jobs 1, 2, 4; says which differ.
same() {
	bad=0
	for form in "report" "-j report" "decode" "-j decode --branches" \
		    "decode --branches -F ip,addr,sym,time"; do
		# shellcheck disable=SC2086
		set -- $form
		pre=
		[ "$1" = -j ] && { pre=-j; shift; }
		cmd=$1; shift
		tracectl $pre $cmd --decoder=reference -i "$F" "$@" >ref.out 2>ref.err; rr=$?
		for n in 1 2 4; do
			tracectl $pre $cmd --jobs $n -i "$F" "$@" >fast.out 2>fast.err; rf=$?
			if [ $rf != $rr ] || ! cmp -s fast.out ref.out || ! cmp -s fast.err ref.err
			then
				echo "differs: $form --jobs $n (exit $rf, reference $rr)"
				diff fast.out ref.out | head -5
				diff fast.err ref.err | head -5
				bad=1
			fi
		done
	done
	return $bad
}

record_gzip_procs

# walks FILE: "RUNS WALKS": report (--jobs 1) ran the skim on RUNS buffers and the exact
# path's walk on WALKS (the skim gave up there), by gdb's breakpoint hit counts.
walks() {
	gdb -q -batch -ex 'break tc_pt_skim_run' -ex 'ignore 1 1000000' \
		-ex 'break tc_pt_walk_new' -ex 'ignore 2 1000000' \
		-ex "run report --jobs 1 -i $1 >/dev/null 2>&1" -ex 'info breakpoints' \
		"$TRACECTL" 2>&1 |
		awk '/^1 /{w=1} /^2 /{w=2} /already hit/{h[w]=$4} END{print h[1] + 0, h[2] + 0}'
}

# skimmed FILE ORIG: the skim took FILE's buffers as it takes those of ORIG (the same
# recording without MODE.TSX and PIP, its buffers cut at the same packets: where one ends
# inside the first PSB+ or inside a packet while tracing is off, it leaves it to libipt).
# gdb is a test dependency (mk/deps.sh): without it the check fails, never passes unchecked.
skimmed() {
	command -v gdb >/dev/null || { echo "gdb missing: cannot count the skim's runs"; return 1; }
	with=$(walks "$1") without=$(walks "$2")
	echo "skim runs, walks: $with (without MODE.TSX and PIP: $without)"
	[ "${with%% *}" -gt 0 ] && [ "$with" = "$without" ]
}

# Whole buffers (as recorded) and cut into 3000-byte ones after (at other packets than
# without MODE.TSX and PIP: the skim's check for the whole ones only).
for name in gzip procs; do
	F="$TMP/$name-pip.data"
	expect "emulated $name with MODE.TSX and PIP in every PSB+: every form identical with --decoder=reference, --jobs 1, 2, 4; report's skim gave up nowhere more than without them" '
		"$REWRITE" -P 0x3fd434000 "$name.data" "$F" &&
		"$REWRITE" "$name.data" "$TMP/$name-orig.data" &&
		tracectl decode --packets -i "$F" | grep -q " pip (3fd434000)" &&
		tracectl decode --packets -i "$F" | grep -q " mode.tsx" &&
		same && grep -q " [1-9][0-9]* ranges" ref.err &&
		skimmed "$F" "$TMP/$name-orig.data"
	'
	expect "emulated $name with MODE.TSX and PIP in every PSB+, in 3000-byte buffers: every form identical with --decoder=reference, --jobs 1, 2, 4" '
		"$REWRITE" -P 0x3fd434000 -s 3000 "$name.data" "$F" &&
		same && grep -q " [1-9][0-9]* ranges" ref.err
	'
done

for name in gzip procs; do
	for opts in "-T 64" "-T 16" "-T 64 -s 3000" "-T 16 -s 700" "-T 16 -s 700 -P 0x3fd434000" \
		    "-T 16 -M 2@4500" "-T 64 -M 2@3000 -s 3000"; do
		F="$TMP/$name-time.data"
		# shellcheck disable=SC2086
		expect "emulated $name given time ($opts): every form identical with --decoder=reference, --jobs 1, 2, 4" '
			"$REWRITE" $opts "$name.data" "$F" &&
			tracectl decode --packets -i "$F" | grep -q " mtc " &&
			same && grep -q " [1-9][0-9]* ranges" ref.err &&
			tracectl decode -F time -i "$F" | grep -q "[0-9]"
		'
	done
done

# The processes' queues given a clock each (-O): they overlap in time as perf's per-CPU
# queues do, so one thread's decode interleaves them by time (pt_lanes.c's marks with
# --jobs), where one clock for the file puts them one after the other.
for opts in "-T 64 -O" "-T 16 -O -s 700"; do
	F="$TMP/procs-overlap.data"
	# shellcheck disable=SC2086
	expect "emulated procs, queues overlapping in time ($opts): every form identical with --decoder=reference, --jobs 1, 2, 4; interleaved by time" '
		"$REWRITE" $opts procs.data "$F" &&
		same && grep -q " [1-9][0-9]* ranges" ref.err &&
		s=$(tracectl decode -F tid -i "$F" | uniq | wc -l) &&
		echo "tid runs: $s; one clock: $(tracectl decode -F tid -i procs.data | uniq | wc -l)" &&
		[ "$s" -gt "$(tracectl decode -F tid -i procs.data | uniq | wc -l)" ]
	'
done

# joined FILE: the segments a --jobs 2 decode of FILE joined, and those the caller's
# thread decoded in its turn (pt_segment.c; 0 where its queues decode whole, each in a
# lane: pt_lanes.c), the session's counts read by gdb.
joined() {
	command -v gdb >/dev/null || { echo "gdb missing: cannot count the segments"; return 1; }
	gdb -q -batch -ex 'break tc_pt_session_free' \
		-ex "run -j decode --branches --jobs 2 -i $1 >/dev/null 2>&1" \
		-ex 'print s->st.segments' -ex 'print s->st.segments_here' "$TRACECTL" 2>&1 |
		awk '/^\$1 = /{j = $3} /^\$2 = /{h = $3} END {print j " " h}'
}

# Per-thread queues with time one after the other (one clock for the file: each thread's
# trace after the one before's; with -R the last found first): one thread decodes each
# whole, in time order, and so do the segments (each queue cut at its PSBs, their flows with
# libipt's tick events as one thread's with several queues); with a library mapped while
# the first runs (-M), side-band by time goes on from one queue to the next. With -O they
# overlap: lanes.
if gcc -O1 -pthread -o work "$TOP/tests/bench/etm_work.c" &&
	tracectl record --pmu emulated -o work.data -- ./work 4 16 >/dev/null 2>rec.err; then
	for opts in "-T 64" "-T 16 -M 2@20000" "-T 64 -R"; do
		F="$TMP/work-time.data"
		# shellcheck disable=SC2086
		expect "4 threads one after the other in time ($opts): every form identical with --decoder=reference, --jobs 1, 2, 4; --jobs cuts them at their PSBs" '
			"$REWRITE" $opts work.data "$F" &&
			same && grep -q " 4 queues" ref.err &&
			n=$(joined "$F") && echo "segments joined, decoded in turn: $n" &&
			[ "${n% *}" -gt 4 ] && [ "${n#* }" -gt 4 ]
		'
	done
	# Overlapping, each queue decodes in a lane; the threads' work differs with N (fib(N +
	# its number % 3)): with 23 one thread's trace goes on alone for a while after the
	# others end, and from a PSB there (tc_pt_segment_tail_plan) the rest of it is cut
	# into segments (the caller's thread's turns too).
	F="$TMP/work-overlap.data"
	expect "4 threads overlapping in time (-T 64 -O): every form identical with --decoder=reference, --jobs 1, 2, 4; each queue in a lane, the last one's part alone cut at its PSBs" '
		tracectl record --pmu emulated -o work23.data -- ./work 4 23 >/dev/null &&
		"$REWRITE" -T 64 -O work23.data "$F" &&
		same && n=$(joined "$F") && echo "segments joined, decoded in turn: $n" &&
		[ "${n% *}" -ge 2 ] && [ "${n#* }" -ge 2 ]
	'
else
	echo "not ok $T: cannot build or record tests/bench/etm_work.c: $(tail -n 2 rec.err)"
fi
