# Corrupt trace bytes never crash a decode. One byte of simpleperf's ETMv4 recording set to
# 0x30 (a Mispredict header) where nothing is speculative crashed OpenCSD 1.3.3 inside
# TrcPktDecodeEtmV4I::mispredictAtom (decode, decode --packets and report alike): it must be
# a warning naming the trace ID and the offset, with exit 3. The corrupt files are made here
# from the shared test data, never stored.
. "$TOP/tests/e2e/lib.sh"

have_testdata perfdata || { skip 'decode of corrupt CoreSight trace' 'no test data'; exit 0; }
SP="$TC_TESTDATA/perfdata/simpleperf-etm"
ETM="$SP/perf_etm.data"
AUX=9944	# the file offset of its one AUXTRACE record's 384 bytes
mkdir -p symfs/data/local/tmp && cp "$SP/etm_test_loop" symfs/data/local/tmp/

# poke FILE OFFSET: a copy of perf_etm.data with byte OFFSET set to 0x30
poke() {
	cp "$ETM" "$1" && printf '\060' | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
# crash_free RC: an exit status, not a signal
crash_free() { [ "$1" -lt 128 ] || { echo "exit status $1 (a signal)"; return 1; }; }

# run_3 OFFSET CMD...: exit 3, no signal, the warning names ID 0x1e and the offset
run_3() {
	off=$1; shift
	tracectl "$@" >out 2>err; rc=$?
	crash_free $rc && [ $rc = 3 ] || { echo "$*: exit $rc"; tail -n 3 err; return 1; }
	grep -q "^warning: .*trace ID 0x1e: 1 packet OpenCSD .*offset $off .*mispredict with no speculative atom" err ||
		{ echo "$*: no warning naming the ID and offset $off"; cat err; return 1; }
}

for off in 10227 10274; do
	expect "byte $off: decode, with and without the binary: warning with ID and offset, exit 3" "
		poke c$off.data $off &&
		run_3 $off decode -i c$off.data --symfs symfs &&
		grep -q ' error .*mispredict with no speculative atom' out &&
		grep -q ' range ' out &&
		run_3 $off decode -i c$off.data
	"
	expect "byte $off: decode --packets (packet processor only) lists it, warns, exit 3" "
		run_3 $off decode --packets -i c$off.data &&
		grep -q 'packet    I_MISPREDICT' out
	"
	expect "byte $off: report, with and without the binary: exit 3, the warning" "
		run_3 $off report -i c$off.data --symfs symfs && run_3 $off report -i c$off.data
	"
done

expect 'the uncorrupted file has no such warning' '
	tracectl decode -i "$ETM" --symfs symfs >out 2>err && ! grep -q mispredict err
'
expect 'every AUX byte set to 0x30 in turn: no decode crashes (exit 0 or 3)' '
	cp "$ETM" sweep.data && i=0
	while [ $i -lt 384 ]; do
		cp "$ETM" sweep.data && poke sweep.data $((AUX + i)) &&
		tracectl decode -i sweep.data --symfs symfs >/dev/null 2>&1; rc=$?
		[ $rc = 0 ] || [ $rc = 3 ] || { echo "byte $((AUX + i)): exit $rc"; exit 1; }
		i=$((i + 1))
	done
'

# The same corruption in one ID of a multi-ID sink buffer: that ID is reported and
# resynchronised, the other IDs decode exactly as before.
if have_testdata opencsd; then
	expect 'snapshot juno_r1_1, byte 2049 of ID 0x10 set to 0x30: ID 0x10 warned, others unchanged' '
		cp -r "$TC_TESTDATA/opencsd/juno_r1_1" j && chmod -R u+w j &&
		tracectl -j decode -i j >good.jsonl 2>/dev/null &&
		printf "\060" | dd of=j/cstrace.bin bs=1 seek=2049 conv=notrunc status=none &&
		{ tracectl -j decode -i j >bad.jsonl 2>err; rc=$?; [ $rc = 3 ]; } &&
		grep -q "^warning: trace ID 0x10: 1 packet .*offset 2049 .*mispredict" err &&
		for id in 0x11 0x13 0x15; do
			jq -c "select(.id == \"$id\")" good.jsonl >g && jq -c "select(.id == \"$id\")" bad.jsonl >b &&
			[ -s g ] && cmp g b || exit 1
		done
	'
fi
