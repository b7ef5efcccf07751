# AArch32 code in an ETMv4 trace that the fast decoder takes (decoders/coresight/etm4_walk.c
# follows A64 only): OpenCSD's decoder takes that trace ID over where the fast one meets it
# (etm_ocsd.h), so every output form is what --decoder=reference gives, A32 ranges and all,
# with one thread or several. Before, the fast decoder's error record stood where the A32
# ranges are (checked: the old binary gives it).
#
# The snapshot (lib.sh's etm4_snapshot) has A64 code at 0x20000 (NOP, NOP, B 0x20000) and
# A32 code at 0x10000 (ADD r0, r0, #1; B 0x10000). Its trace: ASYNC, TRACE_INFO, Address
# and context 0x20000 A64 (0x85, SF), two E atoms; ASYNC, TRACE_INFO, Address and context
# 0x10000 A32 (0x82, no SF, offset 40), three E atoms; Address and context 0x20000 A64, an
# E atom.
. "$TOP/tests/e2e/lib.sh"

mkdir -p s && {
	bytes 037 040 003 325 037 040 003 325 376 377 377 027 >s/a64.bin
	bytes 001 000 200 342 375 377 377 352 >s/a32.bin
	{
		async; bytes 001 000 205 000 000 002 000 000 000 000 000 060 367 367
		async; bytes 001 000 202 000 000 001 000 040 367 367 367
		bytes 205 000 000 002 000 000 000 000 000 060 367
	} >s/trace.bin
	DUMPS='0x20000 a64.bin
0x10000 a32.bin' etm4_snapshot s
}

expect 'decode: the A32 ranges between the A64 ones, no error' '
	tracectl -j decode -i s >out 2>err &&
	[ "$(grep -c "\"isa\":\"A32\"" out)" = 3 ] && [ "$(grep -c "\"isa\":\"A64\"" out)" = 3 ] &&
	grep -q "\"offset\":46,\"start\":\"0x10000\",\"end\":\"0x10008\",\"insns\":2,\"isa\":\"A32\"" out &&
	! grep -q "\"type\":\"error\"" out
'
expect 'every form the same as --decoder=reference, with --jobs 1 and 2' '
	for form in "-j decode" "decode" "-j decode --branches" "decode --packets" \
		    "-j report" "decode --format folded"; do
		for n in 1 2; do
			# shellcheck disable=SC2086
			tracectl $form --jobs $n -i s >f 2>fe; echo "exit $?" >>fe
			# shellcheck disable=SC2086
			tracectl $form --jobs $n --decoder=reference -i s >r 2>re; echo "exit $?" >>re
			cmp f r && cmp fe re || { echo "differs: $form --jobs $n"; exit 1; }
		done
	done
'
