# --jobs N (issue 16): decode, report and diff decode with N threads (CoreSight: a thread
# per trace ID after the demux; Intel PT: a thread per queue, the time heap replayed over
# them), and every output form is byte for byte the one of --jobs 1: on every recording
# and snapshot of the test data (tests/golden/outputs.sh run with --jobs 1 and --jobs 4,
# each against the recorded checksums) and on emulated recordings of a four-thread
# program (ETMv4: a trace ID per CPU, the threads on them; Intel PT: four queues, which
# emulated trace, without time, decodes one after another; the test data's has time).
. "$TOP/tests/e2e/lib.sh"

# A tracectl that always adds --jobs N.
jobs_tc() {
	printf '#!/bin/sh\nexec "%s" "$@" --jobs %s\n' "$TRACECTL" "$1" >tc$1 && chmod +x tc$1
}

if have_testdata opencsd && have_testdata perfdata; then
	for n in 1 4; do
		expect "--jobs $n: every decode output form of the test data as recorded" "
			jobs_tc $n && sh \"\$TOP/tests/golden/outputs.sh\" \"\$PWD/tc$n\" \
				\"\$TC_TESTDATA\" >j$n.sums &&
			[ \"\$(wc -l <j$n.sums)\" -gt 200 ] &&
			diff \"\$TOP/tests/golden/outputs.sums\" j$n.sums
		"
	done
else
	skip '--jobs over the test data' 'no test data'
fi

# the forms same_with_jobs (lib.sh) runs with --jobs 1, 2 and 4
forms='decode
-j decode
decode --branches
-j decode --branches
decode -F comm,tid,time,ip,sym,symoff,dso,addr,insncnt
-j decode --branches -F comm,tid,ip,sym,addr,offset
decode --packets
report
-j report
report --per-thread
decode --format folded
decode --format chrome
decode --format autofdo'

cp "$TOP/tests/fixtures/emu/thr_calls.c" thr.c
if [ "$(uname -m)" = x86_64 ] && command -v gcc >/dev/null && command -v qemu-x86_64 >/dev/null
then
	expect 'Intel PT, four queues (no time: one after another): every form the same with --jobs 1, 2, 4' '
		gcc -O1 -pthread -o thr thr.c &&
		tracectl record --pmu emulated -o pt.data -- ./thr 20000 2>/dev/null &&
		tracectl decode -i pt.data 2>&1 >/dev/null | grep -q " in 4 queues," &&
		same_with_jobs pt.data
	'
	# with --jobs each queue formats its own records (decode's listing): the stops without
	# code it counts and the images it finds missing come out as with one thread
	expect 'Intel PT, four queues, the program'"'"'s image gone: every form the same with --jobs 1, 2, 4' '
		cp thr thr.kept && rm thr &&
		tracectl decode -i pt.data 2>&1 >/dev/null | grep -q "image not found: .*/thr " &&
		same_with_jobs pt.data; rc=$?
		mv thr.kept thr && [ $rc = 0 ]
	'
	expect 'diff of two recordings: the same with --jobs 1 and 4' '
		tracectl record --pmu emulated -o pt2.data -- ./thr 30000 2>/dev/null &&
		tracectl diff --jobs 1 pt.data pt2.data >d1 2>&1; echo $? >>d1
		tracectl diff --jobs 4 pt.data pt2.data >d4 2>&1; echo $? >>d4
		cat d1 | tail -3 && cmp d1 d4
	'
else
	skip 'Intel PT --jobs on an emulated recording' 'needs x86-64, gcc and qemu-x86_64'
fi
if command -v qemu-aarch64 >/dev/null && command -v aarch64-linux-gnu-gcc >/dev/null; then
	expect 'ETMv4, several trace IDs: every form the same with --jobs 1, 2, 4' '
		aarch64-linux-gnu-gcc -O1 -static -pthread -o a64thr thr.c &&
		tracectl record --pmu emulated --pmu cs_etm -o etm.data -- ./a64thr 20000 \
			2>/dev/null &&
		[ "$(tracectl -j decode -i etm.data 2>/dev/null | grep -o "\"id\":\"0x[0-9a-f]*\"" |
			sort -u | wc -l)" -ge 2 ] &&
		same_with_jobs etm.data
	'
	# each trace ID's lane reads code and looks up symbols in images of its own: the
	# images they find missing come out as with one thread
	expect 'ETMv4, the program'"'"'s image gone: every form the same with --jobs 1, 2, 4' '
		cp a64thr a64thr.kept && rm a64thr &&
		tracectl decode -i etm.data 2>&1 >/dev/null | grep -q "image not found: .*/a64thr " &&
		same_with_jobs etm.data; rc=$?
		mv a64thr.kept a64thr && [ $rc = 0 ]
	'
else
	skip 'CoreSight --jobs on an emulated recording' 'needs qemu-aarch64 and gcc-aarch64-linux-gnu'
fi
