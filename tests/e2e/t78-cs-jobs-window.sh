# CoreSight --jobs: the caller's thread emits the trace IDs' steps as its window fills, and
# goes on demultiplexing rather than wait for a step whose lane a worker is still at
# (decoders/coresight/cs_session.c, queue_op): such a step is emitted in parts, the rest
# once the lane has made it. On an emulated recording of four threads (a trace ID per CPU,
# their trace interleaved) several times the window of either mode (formatted on the lanes:
# decode's listings; records back to the caller's thread: report -j), every form is the one
# of --jobs 1, run after run (the window's state, hence where steps are cut, depends on the
# threads' timing).
. "$TOP/tests/e2e/lib.sh"

if command -v qemu-aarch64 >/dev/null && command -v aarch64-linux-gnu-gcc >/dev/null; then
	cp "$TOP/tests/fixtures/emu/thr_calls.c" thr.c
	expect 'ETMv4, several trace IDs, trace past twice the window: record' '
		aarch64-linux-gnu-gcc -O1 -static -pthread -o a64thr thr.c &&
		tracectl record --pmu emulated --pmu cs_etm -o etm.data -- ./a64thr 60000 \
			2>/dev/null &&
		tracectl decode -i etm.data 2>&1 >/dev/null |
			grep -E "\(([0-9]{7,}|[5-9][0-9]{5}) bytes" &&
		[ "$(tracectl -j decode -i etm.data 2>/dev/null | grep -o "\"id\":\"0x[0-9a-f]*\"" |
			sort -u | wc -l)" -ge 2 ]
	'
	# (outputs of some hundred MB: their checksums compared)
	for form in '-j decode --branches' 'decode' 'report -j'; do
		expect "ETMv4, several trace IDs: $form the same with --jobs 2 and 4, three runs each" "
			run() { tracectl $form --jobs \$1 -i etm.data 2>e\$1 | md5sum >m\$1; } &&
			run 1 && grep -q ' bytes' e1 &&
			for i in 1 2 3; do
				for n in 2 4; do
					run \$n && cmp m1 m\$n && cmp e1 e\$n || exit 1
				done
			done
		"
	done
else
	skip 'CoreSight --jobs window on an emulated recording' 'needs qemu-aarch64 and gcc-aarch64-linux-gnu'
fi
