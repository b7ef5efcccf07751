# Intel PT instruction flow (tracectl decode without --packets): a real recording whose
# binaries are absent must name what is missing and exit 3; trace with a known answer
# (tests/tools/pt_truth: single-stepped, encoded with libipt) must decode to exactly the
# branches that ran.
. "$TOP/tests/e2e/lib.sh"

if have_testdata perfdata; then
PT="$TC_TESTDATA/perfdata/intel_pt/perf.data.intel_pt-4.14"

expect_code 3 '4.14 recording without its binaries: missing images named, with counts' '
	tracectl -j decode -i "$PT" >f.jsonl 2>err; rc=$?
	cat err
	grep -q "^warning: .*: 10 images needed but not found (give their root with --symfs DIR); decoding stopped 10 times for lack of code" err &&
	grep -q "^warning: .*: image not found: \[kernel.kallsyms\] (.*): decoding stopped there 5 times; 5235 branches into it were followed in the packets without its code" err &&
	grep -q "^warning: .*: image not found: /lib64/ld-2.23.so (build id a3f83cd3799ef4149d3763cee54dd18b967b7ddb): decoding stopped there 5 times; [0-9]* branches into it" err &&
	grep -q "^warning: .*: image not found: /lib64/libc-2.23.so (build id 93fdba25fc55b597068e81c42f82e7766da372cb): decoding stopped there 0 times; 341 branches" err &&
	grep -q "^\[ tracectl decode: 2 AUXTRACE buffers (149968 bytes) in 2 queues, 0 instructions, 0 ranges, 12062 branches, 0 errors, 10 stops without code \]" err &&
	[ "$(jq -s "map(select(.type == \"no_image\")) | length" f.jsonl)" = 10 ] &&
	[ "$(jq -s "map(select(.type == \"no_image\" and .offset > 0 and .tid > 0)) | length" f.jsonl)" = 10 ] &&
	[ "$(jq -s -r "map(.cpu) | unique | map(tostring) | join(\",\")" f.jsonl)" = "0,3" ] &&
	exit $rc
'
# perf script --itrace=e puts every decode error of this file in 3174 (perf itself).
expect 'threads come from the switch side-band: 3174 on both CPUs, as perf says' '
	[ "$(jq -r "[.cpu, .tid] | @tsv" f.jsonl | sort -u | tr "\t\n" ": ")" = "0:3174 3:3174 " ]
'
# Stopped for lack of code, decoding resumes at the next TIP, TIP.PGE or FUP, not the next PSB:
# every TIP's IP is known from the packets since the PSB (perf waits for an uncompressed one).
expect_code 3 '--branches: branch records (from 0 where trace starts or resumes), no ranges' '
	tracectl -j decode --branches -i "$PT" >b.jsonl 2>/dev/null; rc=$?
	[ "$(jq -s "map(select(.type == \"range\")) | length" b.jsonl)" = 0 ] &&
	[ "$(jq -s "map(select(.type == \"branch\" and .from == \"0x0\")) | length" b.jsonl)" = 11926 ] &&
	[ "$(jq -s "map(select(.type == \"branch\")) | length" b.jsonl)" = 12062 ] &&
	[ "$(jq -s "map(select(.type == \"no_image\")) | length" b.jsonl)" = 10 ] &&
	exit $rc
'
# Where trace starts (branches from 0) as "CPU TIME": perf script's, and ours (JSON).
perf_starts() {
	perf script -i "$1" --itrace=b -F cpu,time,ip,addr --ns 2>/dev/null |
		awk '$3 == 0 && $4 == "=>" { c = $1; t = $2; gsub(/[][]/, "", c); gsub(/[.:]/, "", t)
					    sub(/^0+/, "", t); print c + 0, t, $5 }'
}
tc_starts() {
	jq -r 'select(.type == "branch" and .from == "0x0") |
		"\(.cpu) \(.time) \(.to | ltrimstr("0x"))"' "$1"
}
# Queues interleave by time as perf's do: cpu 3's trace, later in the file, runs first. Where
# the flow resumes, the time comes from the packets (TSC, then MTCs after a TMA), as perf's:
# at least 3/4 of perf's (some differ by an MTC period, or are a FUP's IP where ours are the
# branch from it) are ours to the nanosecond, with the same target, and in the same order.
expect 'trace starts and resumes: at perf script'\''s times (TSC, MTC to perf time) and in its order' '
	perf_starts "$PT" >p.starts && tc_starts b.jsonl >t.starts &&
	np=$(wc -l <p.starts) && [ "$np" -gt 600 ] &&
	m=$(awk "NR == FNR { w[++n] = \$0; next }
		 { for (j = i + 1; j <= n && w[j] != \$0; j++); if (j <= n) { m++; i = j } }
		 END { print m + 0 }" t.starts p.starts) &&
	echo "$m of $np in order" && [ $((m * 4)) -ge $((np * 3)) ] &&
	[ "$(cut -d" " -f1 t.starts | uniq | tr -d "\n")" = 30 ]
'
expect_code 3 '--per-thread through the streams writer: one file per thread, nothing lost' '
	tracectl -j decode -i "$PT" --per-thread st 2>err; rc=$?
	[ -f st/tid-3174.jsonl ] && [ "$(ls st)" = tid-3174.jsonl ] &&
	jq -c . st/tid-3174.jsonl | diff f.jsonl - &&
	grep -q "1 streams written to st" err && exit $rc
'
expect_code 3 'an empty --symfs finds nothing more' '
	mkdir -p sym && tracectl -j decode --symfs sym -i "$PT" >s.jsonl 2>err; rc=$?
	grep -q "10 images needed but not found" err && diff f.jsonl s.jsonl && exit $rc
'
# perf inject writes no cpuid feature into the pipe: libipt then decodes without the CPU's
# errata and two PSBs give "unexpected packet context" where the file gives no_image.
expect_code 3 'pipe mode on stdin: the same queues, threads and missing images' '
	perf inject -i "$PT" -o - 2>/dev/null >pipe.data &&
	tracectl -j decode -i - <pipe.data >q.jsonl 2>err; rc=$?
	grep -q "^warning: -: 10 images needed but not found" err &&
	grep -q "^warning: -: image not found: /lib64/ld-2.23.so: decoding stopped there 5 times" err &&
	[ "$(jq -s "map(select(.type == \"no_image\" or .type == \"error\")) | length" q.jsonl)" = 10 ] &&
	[ "$(jq -r "[.cpu, .tid] | @tsv" q.jsonl | sort -u | wc -l)" = 2 ] && exit $rc
'
# perf as the oracle: without the binaries, perf script resumes after each stop at the next
# TIP, FUP or TIP.PGE whose IP it can tell, and shows 619 branches; tracectl resumes at every
# one (compressed IPs too), so it shows at least as many, and each of perf's is one of ours:
# the same "from to" where perf knows both ends, its target (or a FUP's IP, where ours is the
# branch from there) among ours where perf's is from 0. Threads are left out: perf puts a
# switch's FUP+TIP.PGD in the next thread.
if command -v perf >/dev/null; then
	expect 'no binaries: at least as many branches as perf script, each of perf'\''s among ours' '
		perf script -i "$PT" --itrace=b -F ip,addr 2>/dev/null | grep -- "=>" |
			awk "{ print \$1, \$3 }" | sed "s/^0*\([0-9a-f]\)/\1/; s/ 0*\([0-9a-f]\)/ \1/" |
			sort -u >perf.pairs &&
		np=$(perf script -i "$PT" --itrace=b 2>/dev/null | grep -c " branches: ") &&
		jq -r "select(.type == \"branch\") | \"\(.from | ltrimstr(\"0x\")) \(.to | ltrimstr(\"0x\"))\"" \
			b.jsonl | sort -u >tc.pairs &&
		nt=$(jq -s "map(select(.type == \"branch\")) | length" b.jsonl) &&
		echo "perf $np branches, tracectl $nt" && [ "$np" -ge 600 ] && [ "$nt" -ge "$np" ] &&
		awk "{ print \$1 }" tc.pairs >tc.ends && awk "{ print \$2 }" tc.pairs >>tc.ends &&
		sort -u -o tc.ends tc.ends &&
		comm -23 perf.pairs tc.pairs | awk "\$1 != 0" >missing && [ ! -s missing ] &&
		comm -23 perf.pairs tc.pairs | awk "\$1 == 0 { print \$2 }" | sort -u |
			comm -23 - tc.ends >missing && cat missing && [ ! -s missing ]
	'
else
	echo "warning: perf is not installed (Debian: linux-perf); the perf oracle checks are skipped" >&2
	skip 'no binaries: at least as many branches as perf script' 'perf is not installed'
fi
# A hostile AUXTRACE record: its cpu field (record at 0x7788, cpu at +40) made 2^31.
expect_code 1 'an AUXTRACE cpu that is no CPU number: fatal, with the offset' '
	cp "$PT" badcpu.data && chmod u+w badcpu.data &&
	printf "\000\000\000\200" | dd of=badcpu.data bs=1 seek=$((0x7788 + 40)) conv=notrunc 2>/dev/null &&
	tracectl decode -i badcpu.data >/dev/null 2>err; rc=$?
	cat err
	grep -q "^fatal: badcpu.data: AUXTRACE record at offset 0x7788: cpu 2147483648 is not a CPU number" err &&
	exit $rc
'
fi

PT_TRUTH="${TC_TOOLS:-$TOP/build/obj/tools}/pt_truth"
if [ "$(uname -m)" != x86_64 ] || ! command -v gcc >/dev/null; then
	skip 'Intel PT flow against ground truth' 'needs x86-64 and gcc'
	exit 0
fi
[ -x "$PT_TRUTH" ] || { echo "not ok $T: $PT_TRUTH is not built (make test builds it)"; exit 0; }

# tracectl's branch records as the truth file's "FROM TO" lines.
json_pairs() {
	jq -r "select(.type == \"branch\") | \"\(.from | ltrimstr(\"0x\")) \(.to | ltrimstr(\"0x\"))\"" "$1"
}

for src in "$TOP"/tests/fixtures/progs/*.c; do
	name=$(basename "$src" .c)
	for pie in -no-pie -pie; do
		exe="$TMP/$name$pie"
		gcc -O1 -g $([ $pie = -pie ] && echo "-fPIE -pie" || echo -no-pie) -o "$exe" "$src" ||
			{ echo "not ok $T: cannot build $src"; continue; }
		for flags in "-p 256" "-n"; do
			out="$TMP/$name$pie${flags% *}"
			expect "$name $pie $flags: --branches is exactly the single-stepped branches" '
				"$PT_TRUTH" $flags -o "$out.data" -t "$out.truth" -- "$exe" 2>"$out.log" &&
				[ "$(wc -l <"$out.truth")" -gt 50 ] &&
				tracectl -j decode --branches -i "$out.data" >"$out.jsonl" 2>"$out.err" &&
				json_pairs "$out.jsonl" >"$out.tc" && diff "$out.truth" "$out.tc" &&
				[ "$(jq -s "map(select(.type != \"branch\")) | length" "$out.jsonl")" = 0 ]
			'
		done
	done
done

# Resuming where code is: under QEMU (all of user space traced), the program's own file
# hidden, the flow stops at each call into it and resumes in libc and ld.so at the next TIP:
# every branch decoded there (both ends known) is one that ran, in the order it ran, and
# there are more of them than perf script (or a resync at the next PSB) gives.
if command -v qemu-x86_64 >/dev/null; then
	exe="$TMP/callbacks-pie" out="$TMP/hidden"
	expect 'an image hidden: resumed decoding gives only branches that ran, in order, more than perf' '
		"$PT_TRUTH" -Q -p 256 -o "$out.data" -t "$out.truth" -- "$exe" 2>"$out.log" &&
		mv "$exe" "$exe.hidden" &&
		tracectl -j decode --branches -i "$out.data" >"$out.jsonl" 2>"$out.err"; rc=$?
		np=$(perf script -i "$out.data" --itrace=b -F ip,addr 2>/dev/null | grep -c "=>")
		mv "$exe.hidden" "$exe"; [ $rc = 3 ] &&
		grep -q "image not found: $exe" "$out.err" &&
		json_pairs "$out.jsonl" | grep -v "^0 \| 0\$" >"$out.tc" &&
		nt=$(wc -l <"$out.tc") && [ "$nt" -gt 1000 ] &&
		m=$(awk "NR == FNR { w[++n] = \$0; next }
			 { for (j = i + 1; j <= n && w[j] != \$0; j++); if (j > n) exit; m++; i = j }
			 END { print m + 0 }" "$out.truth" "$out.tc") &&
		echo "$m of $nt in the truth, in order" && [ "$m" = "$nt" ] &&
		if command -v perf >/dev/null; then
			echo "perf $np" && [ "$np" -gt 1000 ] &&
			[ "$(jq -s "map(select(.type == \"branch\")) | length" "$out.jsonl")" -gt "$np" ]
		fi
	'
else
	skip 'an image hidden: resumed decoding against the truth' 'no qemu-x86_64 (Debian: qemu-user)'
fi

exe="$TMP/branchy-pie" out="$TMP/branchy-pie-p"
expect 'ranges: contiguous, symbolised, and as many instructions as the status says' '
	tracectl decode -i "$out.data" >r.txt 2>err &&
	grep -q " range .* main+0x" r.txt &&
	tracectl -j decode -i "$out.data" >r.jsonl 2>/dev/null &&
	n=$(jq -s "map(.insns) | add" r.jsonl) && [ "$n" -gt 1000 ] &&
	[ "$(jq -s "map(select(.type != \"range\")) | length" r.jsonl)" = 0 ] &&
	grep -q "^\[ tracectl decode: 1 AUXTRACE buffers .* $n instructions" err
'
expect 'found through --symfs when the recorded path is gone' '
	mkdir -p "sym$(dirname "$exe")" && mv "$exe" "sym$exe" &&
	tracectl -j decode --branches --symfs sym -i "$out.data" >s.jsonl 2>err &&
	json_pairs s.jsonl | diff "$out.truth" - &&
	tracectl -j decode --branches -i "$out.data" >/dev/null 2>err2; rc=$?
	mv "sym$exe" "$exe"; [ $rc = 3 ] && grep -q "image not found: $exe" err2
'
