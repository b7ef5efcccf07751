# Debian's perf as the oracle for Intel PT with time: pd_rewrite -T files (TSC and TMA in
# each PSB+, MTCs, side-band on the trace's clock, each AUXTRACE buffer's reference the TSC
# when it was read, as perf record writes it: without one perf 6.1 crashes) must decode in
# perf without a message, and tracectl's branches must be perf's: the single-stepped truth
# of pt_truth -Q recordings, and emulated recordings with one clock for the file, queues
# overlapping in time (-O) and MODE.TSX and PIP in every PSB+ (-P), thread by thread and,
# with one clock, in perf's order (tracectl with --jobs 1 and 4). Perf's own order with -O and its times are not compared:
# perf estimates the time on every return to user space (TIP.PGE: 2 ticks an instruction
# since the last timing packet, intel-pt.c est_tsc) and orders the queues by that.
. "$TOP/tests/e2e/lib.sh"

if [ "$(uname -m)" != x86_64 ] || ! command -v qemu-x86_64 >/dev/null; then
	skip 'Intel PT with time: perf as the oracle' 'needs x86-64 and qemu-x86_64'
	exit 0
fi
# perf is a test dependency (mk/deps.sh's linux-perf): without it the check fails, never
# passes unchecked
command -v perf >/dev/null || { echo "not ok $T: perf missing: no oracle for Intel PT with time"; exit 0; }
TOOLS="${TC_TOOLS:-$TOP/build/obj/tools}"
REWRITE="$TOOLS/pd_rewrite"
PROGS="$TOP/tests/fixtures/progs"

# decoded FILE: perf.seq and tc.seq, "TID FROM TO" in each decoder's order (perf must exit 0
# with nothing on stderr: it crashed without the buffers' reference; tracectl 0, with --jobs
# 1 and 4 the same), by_tid.perf and by_tid.tc grouped by thread; FILE really timed (MTCs,
# branch times past 2^32).
decoded() {
	perf script -i "$1" --itrace=b -F tid,ip,addr 2>perf.err >perf.out
	rc=$?
	if [ $rc != 0 ] || [ -s perf.err ]; then
		echo "perf script on $1: exit $rc"
		head -5 perf.err
		return 1
	fi
	awk '{ print $1, $2, $4 }' perf.out >perf.seq && by_tid perf.seq >by_tid.perf || return 1
	for n in 4 1; do
		tracectl -j decode --branches --jobs $n -i "$1" 2>tc.err >tc.json
		rc=$?
		if [ $rc != 0 ]; then
			echo "tracectl --jobs $n on $1: exit $rc"
			tail -3 tc.err
			return 1
		fi
		jq -r 'select(.type == "branch") | "\(.tid) \(.from | ltrimstr("0x")) \(.to | ltrimstr("0x"))"' \
			tc.json >tc$n.seq || return 1
	done
	same_branches tc1.seq tc4.seq && mv tc1.seq tc.seq && by_tid tc.seq >by_tid.tc || return 1
	tracectl decode --packets -i "$1" 2>/dev/null | grep -q " mtc " ||
		{ echo "no MTC packets in $1"; return 1; }
	jq -c "select(.time > 4294967296)" tc.json | grep -q . ||
		{ echo "no branch times past 2^32 in $1"; return 1; }
}

for src in "$PROGS"/*.c; do
	name=$(basename "$src" .c)
	gcc -O1 -g -fPIE -pie -o "$name" "$src" || { echo "not ok $T: cannot build $src"; continue; }
	"$TOOLS/pt_truth" -Q -p 256 -o "$name.data" -t "$name.truth" -- "./$name" 2>"$name.log" ||
		{ echo "not ok $T: pt_truth $name"; continue; }
	for opts in "-T 64" "-T 16 -P 0x3fd434000"; do
		F="$name-time.data"
		# shellcheck disable=SC2086
		expect "qemu: $name given time ($opts): perf and tracectl decode the single-stepped branches" '
			"$REWRITE" $opts "$name.data" "$F" && decoded "$F" &&
			[ "$(wc -l <"$name.truth")" -gt 1000 ] &&
			cut -d" " -f2- perf.seq >perf.pairs && same_branches "$name.truth" perf.pairs &&
			cut -d" " -f2- tc.seq >tc.pairs && same_branches "$name.truth" tc.pairs
		'
	done
done

record_gzip_procs

for name in gzip procs; do
	perf_branches "$name.data" >"$name.perf"
	opts_list="-T 64|-T 16 -P 0x3fd434000"
	[ $name = procs ] && opts_list="$opts_list|-T 64 -O|-T 16 -O"
	echo "$opts_list" | tr '|' '\n' | while read -r opts; do
		F="$name-time.data"
		order=", and in perf's order"
		case "$opts" in *-O*) order= ;; esac
		# shellcheck disable=SC2086
		expect "emulated $name given time ($opts): tracectl decodes the branches perf does, thread by thread$order" '
			"$REWRITE" $opts "$name.data" "$F" && decoded "$F" &&
			[ "$(wc -l <perf.seq)" -gt 10000 ] &&
			same_branches by_tid.perf by_tid.tc &&
			same_branches "$name.perf" by_tid.perf &&
			{ [ -z "$order" ] || same_branches perf.seq tc.seq; }
		'
	done
done
