# Intel PT: a queue's AUXTRACE buffers are one stream. perf cuts it where it drains the AUX
# ring, inside packets, and their AUX offsets follow on (perf's padding to 8 bytes aside):
# cut anywhere, a recording must decode to what it does whole (pt_flow.h's
# tc_pt_flow_follow). Emulated gzip and a shell's processes, whole and cut by pd_rewrite -s
# into 3000-, 777- (padded), 100- and 13-byte buffers (a PSB is 16), with time too (-T):
# every form, records' offsets aside (each is in its own buffer), the same with
# --decoder=reference and --jobs 1, 4, and so the statistics. Where the offsets say a
# byte was lost between buffers (pd_rewrite -G), the trace skipped to the next PSB is
# reported: a warning and exit 3, never silence.
. "$TOP/tests/e2e/lib.sh"

if [ "$(uname -m)" != x86_64 ] || ! command -v qemu-x86_64 >/dev/null; then
	skip 'Intel PT: buffers cut anywhere decode as whole' 'needs x86-64 and qemu-x86_64'
	exit 0
fi
REWRITE="${TC_TOOLS:-$TOP/build/obj/tools}/pd_rewrite"

record_gzip_procs

# run DIR FORM HOW: tracectl FORM HOW on DIR/x.data, in DIR (messages name x.data); stdout
# without records' offsets (JSON's, text's first column), stderr without the buffers'
# count and bytes, and the exit code, into DIR/out.
run() {
	# shellcheck disable=SC2086
	(cd "$1" && tracectl $2 $3 -i x.data >o 2>e; echo "exit $?" >x)
	sed -E 's/"offset":[0-9]+,//; s/^ *[0-9a-f]+  //' "$1/o" >"$1/out"
	sed -E 's/[0-9]+ AUXTRACE buffers \([0-9]+ bytes\)//' "$1/e" >>"$1/out"
	cat "$1/x" >>"$1/out"
}

# whole_is_cut WHOLE CUT: every form, both decoders, --jobs 1, 2, 4: the same on both.
whole_is_cut() {
	mkdir -p "$TMP/w" "$TMP/c"
	cp "$1" "$TMP/w/x.data" && cp "$2" "$TMP/c/x.data" || return 1
	bad=0
	for form in "-j report" "-j decode --branches" "decode -F ip,sym,time" \
		    "decode --branches -F ip,addr,sym,time"; do
		for how in --decoder=reference "--jobs 1" "--jobs 4"; do
			run "$TMP/w" "$form" "$how"
			run "$TMP/c" "$form" "$how"
			if ! cmp -s "$TMP/w/out" "$TMP/c/out"; then
				echo "differs: $form $how"
				diff "$TMP/w/out" "$TMP/c/out" | head -5
				bad=1
			fi
		done
	done
	grep -q " [1-9][0-9]* instructions" "$TMP/w/out" || { echo "nothing decoded"; bad=1; }
	return $bad
}

for case in "gzip -s 3000" "gzip -s 777" "gzip -s 13" "procs -s 3000" "procs -s 100"; do
	name=${case%% *} cut=${case#* }
	# shellcheck disable=SC2086
	expect "emulated $name cut into buffers ($cut): every form as whole, with --decoder=reference, --jobs 1, 4" '
		"$REWRITE" $cut "$name.data" "$TMP/cut.data" &&
		n=$(tracectl decode --packets -i "$TMP/cut.data" 2>&1 >/dev/null |
		    sed -n "s/.* \([0-9]*\) AUXTRACE buffers.*/\1/p") &&
		echo "$n buffers" && [ "$n" -gt 10 ] &&
		whole_is_cut "$name.data" "$TMP/cut.data"
	'
done
# with time: one queue (gzip) cut at PSBs under --jobs; several (procs) interleaved by
# time, where libipt's tick events come read ahead past a PSB
for case in "gzip -s 100" "procs -s 3000" "procs -s 100"; do
	name=${case%% *} cut=${case#* }
	# shellcheck disable=SC2086
	expect "emulated $name given time (-T 16), cut into buffers ($cut): every form as whole, with --decoder=reference, --jobs 1, 4" '
		"$REWRITE" -T 16 "$name.data" "$TMP/whole.data" &&
		"$REWRITE" -T 16 $cut "$name.data" "$TMP/cut.data" &&
		whole_is_cut "$TMP/whole.data" "$TMP/cut.data"
	'
done

expect_code 3 "emulated gzip cut with a byte lost between buffers (pd_rewrite -s 3000 -G): the trace skipped is reported" '
	"$REWRITE" -s 3000 -G gzip.data "$TMP/gap.data" &&
	tracectl decode -i "$TMP/gap.data" >/dev/null 2>"$TMP/gap.err"
	rc=$?
	cat "$TMP/gap.err"
	grep -q "bytes of trace skipped looking for a PSB" "$TMP/gap.err" && exit $rc
'
