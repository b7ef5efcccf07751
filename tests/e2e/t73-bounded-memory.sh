# Bounded memory (issue 16): the trace is read from the file's mapping and let go of behind
# the reader and the decoders (lib/perfdata/perf_data.h, tc_perf_data_release), so the peak
# RSS of `report` does not grow with the trace. On a 48 MB Intel PT trace (pt_truth -r, the
# benchmark's kind; TC_MEM_BYTES to change) the peak, from /usr/bin/time's %M (the kernel's
# ru_maxrss of the child), must stay under the 64 MiB and within 16 MiB of the peak on
# a 1 MB trace of the same program: the decoder keeps at most ~2 windows of 4 MiB behind it
# plus what the kernel maps ahead of a fault (up to a 2 MiB folio). Before, the whole buffer
# was copied and the whole mapping touched: twice the trace (107 MB for 52 MB).
# A bound, not a timing.
. "$TOP/tests/e2e/lib.sh"

PT_TRUTH="${TC_TOOLS:-$TOP/build/obj/tools}/pt_truth"
BYTES=${TC_MEM_BYTES:-50331648}
if [ "$(uname -m)" != x86_64 ] || ! command -v gcc >/dev/null; then
	skip 'peak RSS of report on a large Intel PT trace' 'needs x86-64 and gcc'
	exit 0
fi
[ -x /usr/bin/time ] || { skip 'peak RSS of report on a large Intel PT trace' 'no /usr/bin/time (package time)'; exit 0; }
[ -x "$PT_TRUTH" ] || { echo "not ok $T: $PT_TRUTH is not built (make test builds it)"; exit 0; }

gcc -O1 -fPIE -pie -o br "$TOP/tests/fixtures/progs/branchy.c" &&
"$PT_TRUTH" -r 1048576 -o small.data -- ./br 2>small.log &&
"$PT_TRUTH" -r "$BYTES" -o big.data -- ./br 2>big.log ||
	echo "not ok $T: pt_truth failed: $(cat small.log big.log 2>/dev/null)"

# peak RSS in KB of tracectl report -j on $1; its JSON in $1.json
peak() {
	/usr/bin/time -f %M -o "$1.rss" "$TRACECTL" report -j -i "$1" >"$1.json" 2>"$1.err" &&
		tail -n 1 "$1.rss"
}

expect "report on a $BYTES-byte trace: peak RSS under 64 MiB and within 16 MiB of a 1 MB trace's" '
	[ "$(stat -c %s big.data)" -ge "$BYTES" ] &&
	s=$(peak small.data) && b=$(peak big.data) &&
	echo "peak RSS: 1 MB trace $s KB, $(stat -c %s big.data)-byte trace $b KB" &&
	jq -e ".insns > 100000000" big.data.json >/dev/null &&
	[ "$b" -le 65536 ] && [ "$b" -le $((s + 16384)) ]
'
