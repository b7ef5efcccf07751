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

# Two sources in one formatted buffer (frames alternating between trace IDs 0x10 and 0x11,
# 14 bytes of one ID each): 0x10 as above with 600 atoms in each part (608 in the last, to
# fill its frames), 0x11 A64 alone (1810 atoms). With
# --jobs 2 the IDs decode side by side, 0x10 handed over in its lane while 0x11's goes on.
mkdir -p two && python3 - <<'PY' && cp s/a64.bin s/a32.bin two/ &&
sync = bytes(11) + b"\x80" + b"\x01\x00"
a64, a32 = bytes([0x85, 0, 0, 2, 0, 0, 0, 0, 0, 0x30]), bytes([0x82, 0, 0, 1, 0, 0x20])
ids = {0x10: sync + a64 + b"\xf7" * 600 + sync + a32 + b"\xf7" * 600 + a64 + b"\xf7" * 608,
       0x11: sync + a64 + b"\xf7" * 1810}
def frames(tid, data):
    out = []
    for k in range(0, len(data), 14):
        chunk = data[k:k + 14]
        f, aux = bytearray([tid << 1 | 1]), 0
        for i, b in enumerate(chunk):
            if i % 2 == 0:		# odd positions 1..13: as they are
                f.append(b)
            else:			# even positions 2..14: bit 0 in the aux byte
                f.append(b & 0xfe)
                aux |= (b & 1) << (i // 2 + 1)
        out.append(bytes(f) + bytes([aux]))
    return out
a, b = frames(0x10, ids[0x10]), frames(0x11, ids[0x11])
assert all(len(d) % 14 == 0 for d in ids.values())
buf = b"".join(x for pair in zip(a, b) for x in pair) + b"".join(a[len(b):] + b[len(a):])
open("two/trace.bin", "wb").write(buf)
PY
(cd two && sed -e 's/ETM_0/ETM_1/' -e 's/=0x00000010/=0x00000011/' ../s/etm_0.ini >etm_1.ini &&
	sed 's/cpu_0/cpu_1/' ../s/cpu_0.ini >cpu_1.ini && cp ../s/cpu_0.ini ../s/etm_0.ini . &&
	printf '[snapshot]\nversion=1.0\n\n[device_list]\ndevice0=cpu_0.ini\ndevice1=etm_0.ini\ndevice2=cpu_1.ini\ndevice3=etm_1.ini\n\n[trace]\nmetadata=trace.ini\n' >snapshot.ini &&
	printf '[trace_buffers]\nbuffers=buffer0\n\n[buffer0]\nname=ETB_0\nfile=trace.bin\nformat=coresight\n\n[source_buffers]\nETM_0=ETB_0\nETM_1=ETB_0\n\n[core_trace_sources]\ncpu_0=ETM_0\ncpu_1=ETM_1\n' >trace.ini)

expect 'two IDs in frames: A32 ranges of 0x10 only, the same as --decoder=reference with --jobs 1 and 2' '
	tracectl -j decode -i two >out 2>err &&
	[ "$(grep "\"isa\":\"A32\"" out | grep -c "\"id\":\"0x10\"")" = 600 ] &&
	[ "$(grep -c "\"isa\":\"A32\"" out)" = 600 ] &&
	[ "$(grep "\"isa\":\"A64\"" out | grep -c "\"id\":\"0x11\"")" = 1810 ] &&
	for n in 1 2; do
		tracectl -j decode --jobs $n -i two >f 2>fe; echo "exit $?" >>fe
		tracectl -j decode --jobs $n --decoder=reference -i two >r 2>re; echo "exit $?" >>re
		cmp f r && cmp fe re && cmp f out || { echo "differs: --jobs $n"; exit 1; }
	done
'
