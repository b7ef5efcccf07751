# Intel PT with a known answer: tests/tools/pt_truth single-steps each fixture program
# (tests/fixtures/progs), encodes its exact path in the executable as Intel PT and writes
# perf.data with lib/perfdata/perf_write plus the list of taken branches. Debian's perf must read
# the file and decode exactly those branches; tracectl must list the same packets perf -D
# shows.
. "$TOP/tests/e2e/lib.sh"

PT_TRUTH="${TC_TOOLS:-$TOP/build/obj/tools}/pt_truth"
PROGS="$TOP/tests/fixtures/progs"
if [ "$(uname -m)" != x86_64 ]; then
	skip 'Intel PT ground truth' 'needs x86-64 for the fixtures'
	exit 0
fi
for need in gcc perf; do
	command -v $need >/dev/null || { skip 'Intel PT ground truth' "no $need"; exit 0; }
done
[ -x "$PT_TRUTH" ] || { echo "not ok $T: $PT_TRUTH is not built (make test builds it)"; exit 0; }

# perf script's "FROM => TO" lines as "FROM TO".
perf_branches() {
	perf script -i "$1" --itrace=b -F ip,addr 2>"$1.perf-err" | awk '{ print $1, $3 }'
}

# Count packets by name in perf -D (PSB, TNT, TIP, TIP.PGE, ...): the first name on a line
# (the bits of "TNT TNT (3)" are not a second packet).
perf_packets() {
	perf report -D -i "$1" 2>/dev/null |
		awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^(PSB|PSBEND|TNT|TIP|TIP\.PGE|TIP\.PGD|FUP|MODE\.Exec)$/) { print $i; break } }' |
		sort | uniq -c | awk '{ print tolower($2), $1 }'
}

for src in "$PROGS"/*.c; do
	name=$(basename "$src" .c)
	# nopie, PIE, and PIE with CET (endbr64, notrack-prefixed jump tables).
	for pie in -no-pie -pie -cet; do
		exe="$TMP/$name$pie"
		case $pie in
		-no-pie) cflags=-no-pie ;;
		-pie) cflags="-fPIE -pie" ;;
		-cet) cflags="-fPIE -pie -fcf-protection=full" ;;
		esac
		gcc -O1 -g $cflags -o "$exe" "$src" ||
			{ echo "not ok $T: cannot build $src"; continue; }
		for mode in retcomp noretcomp; do
			flags="-p 256"
			[ $mode = noretcomp ] && flags="-n"
			out="$TMP/$name$pie-$mode"
			expect "$name $pie $mode: perf decodes exactly the single-stepped branches" '
				"$PT_TRUTH" $flags -o "$out.data" -t "$out.truth" -- "$exe" 2>"$out.log" &&
				[ "$(wc -l <"$out.truth")" -gt 50 ] &&
				perf report -D -i "$out.data" >/dev/null 2>&1 &&
				perf_branches "$out.data" >"$out.perf" &&
				[ ! -s "$out.data.perf-err" ] &&
				diff "$out.truth" "$out.perf"
			'
			expect "$name $pie $mode: tracectl lists the packets perf -D shows" '
				tracectl decode -j --packets -i "$out.data" >"$out.jsonl" 2>/dev/null &&
				jq -r ".packet | sub(\"tnt\\\\..*\"; \"tnt\")" \
					"$out.jsonl" | grep -v "^pad$" | sort | uniq -c |
					awk "{ print \$2, \$1 }" >"$out.tc" &&
				perf_packets "$out.data" >"$out.pd" &&
				diff "$out.pd" "$out.tc"
			'
			# t25 checks tracectl against the -no-pie and -pie truths.
			[ $pie = -cet ] || continue
			expect "$name $pie $mode: tracectl --branches is the truth too" '
				tracectl -j decode --branches -i "$out.data" >"$out.tcb" 2>/dev/null &&
				jq -r "select(.type == \"branch\") | \"\(.from | ltrimstr(\"0x\")) \(.to | ltrimstr(\"0x\"))\"" \
					"$out.tcb" >"$out.tcbr" &&
				diff "$out.truth" "$out.tcbr"
			'
		done
	done
done

# The same fixtures followed under qemu-x86_64 with tracectl's plugin (pt_truth -Q, the
# default of record --pmu emulated): all of user space, system calls as TIP.PGD/TIP.PGE.
if command -v qemu-x86_64 >/dev/null; then
	for src in "$PROGS"/*.c; do
		name=$(basename "$src" .c)
		for pie in -no-pie -pie -cet; do
			exe="$TMP/$name$pie"
			[ -x "$exe" ] || continue
			for mode in retcomp noretcomp; do
				flags="-Q -p 256"
				[ $mode = noretcomp ] && flags="-Q -n"
				out="$TMP/q-$name$pie-$mode"
				expect "qemu: $name $pie $mode: perf, tracectl --branches and --packets agree with the truth and perf -D" '
					"$PT_TRUTH" $flags -o "$out.data" -t "$out.truth" -- "$exe" 2>"$out.log" &&
					[ "$(wc -l <"$out.truth")" -gt 1000 ] &&
					perf_branches "$out.data" >"$out.perf" &&
					[ ! -s "$out.data.perf-err" ] && diff "$out.truth" "$out.perf" &&
					tracectl -j decode --branches -i "$out.data" 2>/dev/null |
					jq -r "select(.type == \"branch\") | \"\(.from | ltrimstr(\"0x\")) \(.to | ltrimstr(\"0x\"))\"" \
						>"$out.tcbr" && diff "$out.truth" "$out.tcbr" &&
					tracectl decode -j --packets -i "$out.data" 2>/dev/null |
					jq -r ".packet | sub(\"tnt\\\\..*\"; \"tnt\")" |
					grep -v "^pad$" | sort | uniq -c | awk "{ print \$2, \$1 }" >"$out.tc" &&
					perf_packets "$out.data" >"$out.pd" && diff "$out.pd" "$out.tc"
				'
			done
		done
	done
else
	skip 'Intel PT ground truth under QEMU' 'no qemu-x86_64 (Debian: qemu-user)'
fi

for src in "$PROGS"/*.c; do
	name=$(basename "$src" .c)
	a="$TMP/$name-pie-retcomp" b="$TMP/$name-pie-noretcomp"
	expect "$name: return compression turns returns into TNT bits, the branches stay" '
		[ "$(wc -l <"$a.truth")" = "$(wc -l <"$b.truth")" ] &&
		[ "$(grep "^tip " "$a.pd" | cut -d" " -f2)" -lt "$(grep "^tip " "$b.pd" | cut -d" " -f2)" ] &&
		[ "$(grep "^psb " "$a.pd" | cut -d" " -f2)" -ge 2 ]
	'
done

# pt_truth -r (the benchmark's large traces): one cycle of the path repeated. Both runs
# without address randomisation, so the plain run's truth gives the expected lines: up to
# the cycle's end, the cycle (lines FROM..TO) REPEATS more times, then the rest.
exe="$TMP/branchy-pie" r="$TMP/repeat"
expect "pt_truth -r: perf and tracectl decode the repeated cycle exactly" '
	setarch -R "$PT_TRUTH" -p 512 -o "$r-plain.data" -t "$r-plain.truth" -- "$exe" 2>/dev/null &&
	setarch -R "$PT_TRUTH" -p 512 -r 100000 -o "$r.data" -t "$r.truth" -- "$exe" 2>"$r.log" &&
	set -- $(sed -n "s/.*cycle: truth lines \([0-9]*\)\.\.\([0-9]*\), repeated \([0-9]*\) .*/\1 \2 \3/p" "$r.log") &&
	[ $# = 3 ] && [ $(($2 - $1)) -ge 99 ] && [ "$3" -gt 100 ] &&
	{ sed -n "1,$2p" "$r-plain.truth"
	  i=0; while [ $i -lt "$3" ]; do sed -n "$1,$2p" "$r-plain.truth"; i=$((i + 1)); done
	  sed -n "$(($2 + 1)),\$p" "$r-plain.truth"; } >"$r.expect" &&
	[ "$(stat -c %s "$r.data")" -gt 100000 ] &&
	diff "$r.expect" "$r.truth" >/dev/null &&
	perf_branches "$r.data" >"$r.perf" && [ ! -s "$r.data.perf-err" ] &&
	diff "$r.truth" "$r.perf" >/dev/null &&
	tracectl -j decode --branches -i "$r.data" 2>/dev/null |
		jq -r "select(.type == \"branch\") | \"\(.from | ltrimstr(\"0x\")) \(.to | ltrimstr(\"0x\"))\"" >"$r.tc" &&
	diff "$r.truth" "$r.tc" >/dev/null
'
