# Intel PT fast path against its oracle (issue 16, item 2): --decoder=reference is libipt's
# block decoder with none of our caches (every block's last instruction read and measured
# again, every record made); the default adds our cache of blocks' last instructions and
# makes only the records the output keeps. Every
# output form must be byte-identical, status lines and exit status included, on the shared
# recording (no binaries: every stop and resume), on emulated recordings of real programs
# (qemu; the program's exit status is record's, so a recording is checked by its file) and on
# pt_truth's (PSB every 256 bytes, no return compression, an image hidden).
. "$TOP/tests/e2e/lib.sh"

PT_TRUTH="${TC_TOOLS:-$TOP/build/obj/tools}/pt_truth"

# same FILE: each output form with both decoders; says which differ.
same() {
	bad=0
	for form in "decode" "decode --branches" "-j decode" "-j decode --branches" \
		    "decode --itrace=i" "decode --itrace=cre" "report" "-j report" \
		    "decode --branches -F ip,addr,sym,insncnt,time,flags" "decode --call-trace"; do
		# shellcheck disable=SC2086
		set -- $form
		pre=
		[ "$1" = -j ] && { pre=-j; shift; }
		cmd=$1; shift
		tracectl $pre $cmd -i "$F" "$@" >fast.out 2>fast.err; rf=$?
		tracectl $pre $cmd --decoder=reference -i "$F" "$@" >ref.out 2>ref.err; rr=$?
		if [ $rf != $rr ] || ! cmp -s fast.out ref.out || ! cmp -s fast.err ref.err; then
			echo "differs: $form (exit $rf, reference $rr)"
			diff fast.out ref.out | head -5
			diff fast.err ref.err | head -5
			bad=1
		fi
	done
	return $bad
}

if have_testdata perfdata; then
	F="$TC_TESTDATA/perfdata/intel_pt/perf.data.intel_pt-4.14"
	expect 'shared recording (no binaries): every form identical with --decoder=reference' '
		same && grep -q "stops without code" fast.err
	'
fi

if [ "$(uname -m)" != x86_64 ] || ! command -v gcc >/dev/null; then
	skip 'fast = reference on emulated and pt_truth recordings' 'needs x86-64 and gcc'
	exit 0
fi
for src in branchy callbacks; do
	gcc -O1 -g -o "$TMP/$src" "$TOP/tests/fixtures/progs/$src.c" ||
		{ echo "not ok $T: cannot build $src.c"; exit 0; }
done

if command -v qemu-x86_64 >/dev/null; then
	seq 3000 | sort -R --random-source=/dev/zero >in.txt
	for prog in "/bin/ls -l /usr" "/usr/bin/sort in.txt" "/bin/gzip -c in.txt" \
		    "$TMP/branchy" "$TMP/callbacks"; do
		name=$(basename "${prog%% *}")
		F="$TMP/emu-$name.data"
		# shellcheck disable=SC2086
		expect "emulated $name: every form identical with --decoder=reference" '
			tracectl record --pmu emulated -o "$F" -- $prog >/dev/null 2>rec.err
			[ -s "$F" ] && same && grep -q " [1-9][0-9]* ranges" fast.err
		'
	done
	# One queue in many buffers (perf writes one each time it drains the AUX ring): the
	# fast path walks the first ones; bytes broken in a later one make it give up there and
	# hand that buffer to libipt's block decoder, whose block cache must then be as the
	# reference's (record offsets depend on it).
	REWRITE="${TC_TOOLS:-$TOP/build/obj/tools}/pd_rewrite"
	# Where each buffer ends decides what libipt's block cache holds in the next (a query
	# cut off by a buffer's end leaves only that branch cached): many cuts of two recordings.
	expect 'queues cut into buffers of 512 to 9000 bytes: decode and report identical with --decoder=reference' '
		bad=0
		for name in ls gzip; do
			for size in 512 2000 3000 3100 6000 9000; do
				"$REWRITE" -s $size "$TMP/emu-$name.data" "$TMP/cut.data" || exit 1
				tracectl decode -i "$TMP/cut.data" >fast.out 2>fast.err
				tracectl decode --decoder=reference -i "$TMP/cut.data" >ref.out 2>ref.err
				if ! cmp -s fast.out ref.out || ! cmp -s fast.err ref.err; then
					echo "differs: $name in $size-byte buffers"
					diff fast.out ref.out | head -3
					bad=1
				fi
				# report: the skim (pt_skim.c) on buffers that start and end
				# anywhere, the exact path where it gives up
				tracectl -j report -i "$TMP/cut.data" >fast.out 2>fast.err
				tracectl -j report --decoder=reference -i "$TMP/cut.data" >ref.out \
					2>ref.err
				if ! cmp -s fast.out ref.out || ! cmp -s fast.err ref.err; then
					echo "report differs: $name in $size-byte buffers"
					bad=1
				fi
			done
		done
		[ $bad = 0 ] && grep -q " [1-9][0-9]* ranges" fast.err
	'
	F="$TMP/emu-gzip-split.data"
	expect 'one queue in 4 KiB buffers, bytes broken in a later one: identical with --decoder=reference' '
		"$REWRITE" -s 4096 "$TMP/emu-gzip.data" "$F" &&
		tracectl -j decode -i "$F" --show-events 2>/dev/null |
			jq -r "select(.record == \"AUXTRACE\") | .offset + .size" >bufs &&
		n=$(wc -l <bufs) && echo "$n buffers" && [ "$n" -ge 8 ] &&
		same && grep -q " 0 errors" fast.err &&
		at=$(sed -n "$((n - 2))p" bufs) &&
		for k in 200 1500 3000; do
			printf "\132" | dd of="$F" bs=1 seek=$((at + k)) conv=notrunc 2>/dev/null || exit 1
		done &&
		same && grep -q " [1-9][0-9]* errors" fast.err
	'
	# libipt's block cache gives a block in the mode it was first decoded in: a later
	# buffer whose PSB+ says 32-bit (CS.D) runs gzip's code as 64-bit where the reference
	# cached it, so the walk and the skim hand over to the reference (pt_flow.c other_modes)
	F="$TMP/emu-gzip-mode.data"
	expect 'one queue in 4 KiB buffers, a later PSB+ says 32-bit: identical with --decoder=reference' '
		"$REWRITE" -s 4096 "$TMP/emu-gzip.data" "$F" &&
		tracectl -j decode -i "$F" --show-events 2>/dev/null |
			jq -r "select(.record == \"AUXTRACE\") | .offset + .size" >bufs &&
		n=$(wc -l <bufs) && [ "$n" -ge 8 ] && at=$(sed -n "$((n - 2))p" bufs) &&
		psb=$(LC_ALL=C grep -obUaP "(\x02\x82){8}" "$F" | cut -d: -f1 |
			awk -v a="$at" "\$1 >= a { print; exit }") &&
		m=$(LC_ALL=C grep -obUaP "\x99\x01" "$F" | cut -d: -f1 |
			awk -v a="$psb" "\$1 > a && \$1 < a + 32 { print; exit }") &&
		echo "MODE.Exec of the PSB+ at $psb: $m" && [ -n "$m" ] &&
		printf "\002" | dd of="$F" bs=1 seek=$((m + 1)) conv=notrunc 2>/dev/null &&
		same && grep -q " [1-9][0-9]* errors" ref.err
	'
	F="$TMP/emu-procs.data"
	expect 'emulated processes (fork, exec, pipes: address spaces change): identical with --decoder=reference' '
		tracectl record --pmu emulated -o "$F" -- /bin/sh -c \
			"/bin/ls /usr >/dev/null; /usr/bin/sort in.txt | /usr/bin/head -1" >/dev/null \
			2>rec.err
		[ -s "$F" ] && same && grep -q " [1-9][0-9]* ranges" fast.err
	'
	F="$TMP/emu-filter.data"
	expect 'emulated with an address filter (TIP.PGE/PGD): identical with --decoder=reference' '
		tracectl record --pmu emulated --filter "filter fib@$TMP/branchy" -o "$F" -- \
			"$TMP/branchy" 6 >/dev/null 2>rec.err
		[ -s "$F" ] && same && grep -q " [1-9][0-9]* ranges" fast.err
	'
else
	skip 'emulated recordings: fast = reference' 'no qemu-x86_64 (Debian: qemu-user)'
fi

[ -x "$PT_TRUTH" ] || { echo "not ok $T: $PT_TRUTH is not built (make test builds it)"; exit 0; }
for flags in "-p 256" "-n"; do
	F="$TMP/truth${flags% *}.data"
	expect "pt_truth $flags: every form identical with --decoder=reference" '
		"$PT_TRUTH" $flags -o "$F" -- "$TMP/branchy" >/dev/null 2>truth.err &&
		same && grep -q " [1-9][0-9]* ranges" fast.err
	'
done
if command -v qemu-x86_64 >/dev/null; then
	F="$TMP/hidden.data"
	expect 'an image hidden (stops, resumes at TIPs): identical with --decoder=reference' '
		"$PT_TRUTH" -Q -p 256 -o "$F" -- "$TMP/callbacks" >/dev/null 2>truth.err &&
		mv "$TMP/callbacks" "$TMP/callbacks.hidden" &&
		same; rc=$?; mv "$TMP/callbacks.hidden" "$TMP/callbacks"; [ $rc = 0 ] &&
		grep -q "image not found" fast.err
	'
fi
