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
	grep -q "^warning: .*: 2 images needed but not found (give their root with --symfs DIR); decoding stopped 10 times for lack of code" err &&
	grep -q "^warning: .*: image not found: \[kernel.kallsyms\] (.*): decoding stopped there 5 times" err &&
	grep -q "^warning: .*: image not found: /lib64/ld-2.23.so (build id a3f83cd3799ef4149d3763cee54dd18b967b7ddb): decoding stopped there 5 times" err &&
	grep -q "^\[ tracectl decode: 2 AUXTRACE buffers (149968 bytes) in 2 queues, 0 instructions, 0 ranges, 4 branches, 0 errors, 10 stops without code \]" err &&
	[ "$(jq -s "map(select(.type == \"no_image\")) | length" f.jsonl)" = 10 ] &&
	[ "$(jq -s "map(select(.type == \"no_image\" and .offset > 0 and .tid > 0)) | length" f.jsonl)" = 10 ] &&
	[ "$(jq -s -r "map(.cpu) | unique | map(tostring) | join(\",\")" f.jsonl)" = "0,3" ] &&
	exit $rc
'
# perf script --itrace=e puts every decode error of this file in 3174 (perf itself).
expect 'threads come from the switch side-band: 3174 on both CPUs, as perf says' '
	[ "$(jq -r "[.cpu, .tid] | @tsv" f.jsonl | sort -u | tr "\t\n" ": ")" = "0:3174 3:3174 " ]
'
expect_code 3 '--branches: branch records (from 0 where trace starts), no ranges' '
	tracectl -j decode --branches -i "$PT" >b.jsonl 2>/dev/null; rc=$?
	[ "$(jq -s "map(select(.type == \"range\")) | length" b.jsonl)" = 0 ] &&
	[ "$(jq -s "map(select(.type == \"branch\" and .from == \"0x0\")) | length" b.jsonl)" = 3 ] &&
	[ "$(jq -s "map(select(.type == \"branch\")) | length" b.jsonl)" = 4 ] &&
	exit $rc
'
# Where trace starts (branches from 0) as "CPU TIME": perf script's, and ours (JSON).
perf_starts() {
	perf script -i "$1" --itrace=b -F cpu,time,ip,addr --ns 2>/dev/null |
		awk '$3 == 0 && $4 == "=>" { c = $1; t = $2; gsub(/[][]/, "", c); gsub(/[.:]/, "", t)
					    sub(/^0+/, "", t); print c + 0, t }'
}
tc_starts() {
	jq -r 'select(.type == "branch" and .from == "0x0") | "\(.cpu) \(.time)"' "$1"
}
# every line of $1 (at least 3) is a line of $2, in the same order
in_order() {
	awk 'NR == FNR { want[++n] = $0; next } i < n && $0 == want[i + 1] { i++ }
	     END { exit !(n >= 3 && i == n) }' "$1" "$2"
}
# Queues interleave by time as perf's do: cpu 3's trace, later in the file, runs first.
expect 'trace starts: at perf script'\''s times (TSC to perf time) and in its order' '
	perf_starts "$PT" >p.starts && tc_starts b.jsonl >t.starts && in_order t.starts p.starts &&
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
	grep -q "2 images needed but not found" err && diff f.jsonl s.jsonl && exit $rc
'
# perf inject writes no cpuid feature into the pipe: libipt then decodes without the CPU's
# errata and two PSBs give "unexpected packet context" where the file gives no_image.
expect_code 3 'pipe mode on stdin: the same queues, threads and missing images' '
	perf inject -i "$PT" -o - 2>/dev/null >pipe.data &&
	tracectl -j decode -i - <pipe.data >q.jsonl 2>err; rc=$?
	grep -q "^warning: -: 2 images needed but not found" err &&
	grep -q "^warning: -: image not found: /lib64/ld-2.23.so: decoding stopped there 5 times" err &&
	[ "$(jq -s "map(select(.type == \"no_image\" or .type == \"error\")) | length" q.jsonl)" = 10 ] &&
	[ "$(jq -r "[.cpu, .tid] | @tsv" q.jsonl | sort -u | wc -l)" = 2 ] && exit $rc
'
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
