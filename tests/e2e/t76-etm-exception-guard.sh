# ETMv4 trace whose exception is committed before its address packet comes never crashes a
# decode. OpenCSD 1.3.3's full decoder (--decoder=reference, and every source the fast
# decoder does not take) commits P0 elements from the oldest; at an exception element it
# reads the next element of its stack as the exception's address without checking there is
# one: SIGSEGV in TrcPktDecodeEtmV4I::processException. decoders/coresight/etm4_guard.c
# names the packet whose commit gets there: an error record, a warning naming the ID and
# offset, exit 3, and the ID resynchronises at the next ASYNC.
#
# The snapshot is written here: one Cortex-A53 ETMv4 source with MAXSPEC 0 (TRCIDR8), its
# raw bytes (format source_data):
#   ASYNC; TRACE_INFO with speculation depth 2; Exception (no address packet after it) --
#   depth 2 beyond MAXSPEC 0 commits two elements at that packet, the exception first;
#   then ASYNC; TRACE_INFO; Trace On; Address (64-bit, IS0) 0x1000; Atom E: decoded again
#   after it (the atom's commit gives the Trace On element).
. "$TOP/tests/e2e/lib.sh"

snap() { etm4_snapshot "$@"; }

# offset 12: TRACE_INFO (header 0x01, PLCTL 0x04: a SPEC section, depth 2); offset 15:
# Exception (header 0x06, type 1); offset 17: ASYNC again; 29: TRACE_INFO, no sections;
# 31: Trace On (0x04); 32: Address 0x1000 (0x9d, 8 bytes); 41: Atom E (0xf7)
snap s && {
	async; bytes 001 004 002; bytes 006 002
	async; bytes 001 000 004; bytes 235 000 010 000 000 000 000 000 000; bytes 367
} >s/trace.bin

crash_free() { [ "$1" -lt 128 ] || { echo "exit status $1 (a signal)"; return 1; }; }

# run_3 ARGS...: exit 3, no signal, the error record at offset 15, the warning
run_3() {
	tracectl "$@" >out 2>err; rc=$?
	crash_free $rc && [ $rc = 3 ] || { echo "$*: exit $rc"; tail -n 3 err; return 1; }
	grep -q '"offset":15,.*commit of an exception before its address' out ||
		{ echo "$*: no error record at offset 15"; cat out; return 1; }
	grep -q "^warning: trace ID 0x10: 1 packet OpenCSD .*offset 15 .*exception before its address" err ||
		{ echo "$*: no warning naming ID 0x10 and offset 15"; cat err; return 1; }
}

expect 'decode --decoder=reference: the exception committed before its address is an error record, exit 3' '
	run_3 -j decode --decoder=reference -i s
'
expect 'decode --decoder=reference: resynchronised (the Trace On after the next ASYNC decoded)' '
	run_3 -j decode --decoder=reference -i s &&
	grep -q "\"type\":\"trace_on\",.*\"offset\":31}" out
'
expect 'the fast decoder gives the same records, messages and exit' '
	tracectl -j decode -i s >f.out 2>f.err; echo "exit $?" >>f.err
	tracectl -j decode --decoder=reference -i s >r.out 2>r.err; echo "exit $?" >>r.err
	cmp f.out r.out && cmp f.err r.err
'
expect 'report --decoder=reference: exit 3, no crash' '
	tracectl report --decoder=reference -i s >out 2>err; rc=$?
	crash_free $rc && [ $rc = 3 ]
'
# (Without the speculation depth the exception commits when its address comes, as in real
# trace: here after an address 0x1000, the exception returning there.)
expect 'with no speculation depth, the address right after the exception: the exception, exit 0' '
	snap ok && {
		async; bytes 001 000; bytes 235 000 010 000 000 000 000 000 000
		bytes 006 002; bytes 235 000 010 000 000 000 000 000 000
	} >ok/trace.bin &&
	tracectl -j decode --decoder=reference -i ok >out 2>err &&
	grep -q "\"type\":\"exception\"" out && ! grep -q "before" out err
'
# Before the decoder ever had an address, OpenCSD 1.3.3 would walk from its instruction
# address, which it never initialises (heap garbage), to the return address: the guard
# names that commit (the address packet at offset 16) in both decoders alike.
expect 'an exception before any address: an error record at its commit, exit 3, fast = reference' '
	snap first && {
		async; bytes 001 000; bytes 006 002; bytes 235 000 010 000 000 000 000 000 000
	} >first/trace.bin &&
	tracectl -j decode --decoder=reference -i first >r.out 2>r.err; echo "exit $?" >>r.err
	tracectl -j decode -i first >f.out 2>f.err; echo "exit $?" >>f.err
	grep -q "\"offset\":16,.*exception before the decoder had any address" r.out &&
	grep -q "^exit 3" r.err && ! grep -q "\"type\":\"exception\"" r.out &&
	cmp f.out r.out && cmp f.err r.err
'
# OpenCSD 1.3.3 never sets m_unseen_spec_elem: a cancel of more elements than its stack
# holds counts the rest off it (heap garbage). The guard names that packet (Cancel format 1
# of one element at offset 14, nothing speculative) in both decoders alike; the ID
# resynchronises at the next ASYNC (Trace On at 30).
expect 'a cancel beyond the speculative elements: an error record, exit 3, fast = reference' '
	snap cancel && {
		async; bytes 001 000; bytes 056 001
		async; bytes 001 000 004; bytes 235 000 010 000 000 000 000 000 000; bytes 367
	} >cancel/trace.bin &&
	tracectl -j decode --decoder=reference -i cancel >r.out 2>r.err; echo "exit $?" >>r.err
	tracectl -j decode -i cancel >f.out 2>f.err; echo "exit $?" >>f.err
	grep -q "\"offset\":14,.*cancel of more elements than are speculative" r.out &&
	grep -q "\"type\":\"trace_on\",.*\"offset\":30}" r.out &&
	grep -q "^exit 3" r.err && cmp f.out r.out && cmp f.err r.err
'
# Q elements (TRCIDR0.QSUPP, TRCCONFIGR.QE; OpenCSD's decoder only): 1.3.3 frees a Q element
# that has no address of its own, with the address after it, and then reads its count from
# the freed memory. The guard names the commit (at the address, offset 25).
expect 'a Q element without its own address: an error record at its commit, exit 3' '
	IDR0=0x28018EA1 CFGR=0x000020C1 snap q && {
		async; bytes 001 000; bytes 235 000 010 000 000 000 000 000 000
		bytes 254 004; bytes 235 004 010 000 000 000 000 000 000
	} >q/trace.bin &&
	tracectl -j decode -i q >out 2>err; rc=$?
	crash_free $rc && [ $rc = 3 ] &&
	grep -q "\"offset\":25,.*Q element without its own address" out &&
	! grep -q "\"type\":\"range\"" out
'
# An address packet of 0xfffffffffffffffc after a walk: OpenCSD 1.3.3's read cache took the
# read there as in the page it held (its end wrapped to 0) and copied from far past it
# (SIGSEGV). Code at 0x1000 (NOP, NOP, B 0x1000); ASYNC; TRACE_INFO; Address and context
# 0x1000 (A64); Atom E; Address 0xfffffffffffffffc (offset 25); Atom E.
expect 'an address in the last 4 bytes of the address space: an error record, exit 3, no crash' '
	mkdir -p top && bytes 037 040 003 325 037 040 003 325 376 377 377 027 >top/code.bin &&
	DUMPS="0x1000 code.bin" snap top && {
		async; bytes 001 000 205 000 010 000 000 000 000 000 000 060 367
		bytes 235 177 177 377 377 377 377 377 377 367
	} >top/trace.bin &&
	for d in reference fast; do
		tracectl -j decode --decoder=$d -i top >out 2>err; rc=$?
		crash_free $rc && [ $rc = 3 ] &&
		grep -q "\"offset\":25,.*an address in the last 4 bytes of the address space" out &&
		grep -q "\"start\":\"0x1000\",\"end\":\"0x100c\"" out || { echo "--decoder=$d: exit $rc"; cat out; exit 1; }
	done
'
