# Partial results (issue 19, item 6/9): a feature section that cannot be read, or a file
# that ends inside its data, is warned (exit 3) and everything else decoded, as perf does.
. "$TOP/tests/e2e/lib.sh"

if ! have_testdata perfdata; then
	skip 'partial perf.data files' 'no perfdata test data'
	exit 0
fi
E="$TC_TESTDATA/perfdata/simpleperf-etm/perf_etm.data"
P="$TC_TESTDATA/perfdata/intel_pt/perf.data.intel_pt-4.14"

expect_code 3 'a feature section past the end of the file: left out, the trace decoded' '
	# feature 4 (osrelease): its table entry at 10344, offset 0x2be8 -> 0x1002be8
	cp "$E" f.data && chmod u+w f.data &&
	printf "\001" | dd of=f.data bs=1 seek=10347 conv=notrunc status=none &&
	tracectl decode --packets -i "$E" >want 2>/dev/null &&
	tracectl decode --packets -i f.data >got 2>err; rc=$?
	cat err
	grep -q "^warning: f.data: feature 4 section 0x1002be8+0x44 runs past the end of the file (0x3021): left out" err &&
	[ -s got ] && cmp want got && exit $rc
'
expect_code 3 'a feature that does not parse: left out, the trace decoded' '
	# feature 2 (build ids): its size 0x320 -> 0x321, a last entry cut short
	cp "$E" g.data && chmod u+w g.data &&
	printf "\041" | dd of=g.data bs=1 seek=10336 conv=notrunc status=none &&
	tracectl decode --packets -i "$E" >want 2>/dev/null &&
	tracectl decode --packets -i g.data >got 2>err; rc=$?
	cat err
	grep -q "^warning: .*left out" err && [ -s got ] && cmp want got && exit $rc
'
expect_code 3 'a file cut inside an AUXTRACE record: the records before it decode' '
	head -c 150000 "$P" >t.data &&
	tracectl decode --packets -i "$P" >want 2>/dev/null &&
	tracectl decode --packets -i t.data >got 2>err; rc=$?
	cat err
	grep -q "^warning: t.data: data section 0x2e8+0x290c0 runs past the end of the file (0x249f0): the file is truncated" err &&
	grep -q "^warning: t.data: the input ends inside the record at offset 0x7788" err &&
	[ "$(wc -l <got)" -gt 9000 ] && head -n "$(wc -l <got)" want | cmp - got && exit $rc
'
expect_code 1 'a file cut inside its header is still refused' '
	head -c 64 "$P" >h.data && tracectl decode -i h.data 2>err
'

# Memory (issue 19, item 5): 50,000 AUXTRACE records on 50,000 CPUs took 5 GB and 90 s; a
# queue per CPU is now bounded by the CPUs the header declares (nrcpus feature).
if [ ! -x /usr/bin/python3 ]; then
	skip '50,000 CPUs in a file that declares 4' 'no /usr/bin/python3 to build the file'
	exit 0
fi
cat >gen.py <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
doff, dsize = struct.unpack_from('<QQ', b, 40)
end = doff + dsize
recs = bytearray()
for i in range(int(sys.argv[3])):	# 16 bytes of PSB on CPU i
    recs += struct.pack('<IHHQQQIIII', 71, 0, 48, 16, 0, i, i, 0, i, 0) + b'\x02\x82' * 8
out = b[:end] + recs + b[end:]
struct.pack_into('<Q', out, 48, dsize + len(recs))
for k in range(bin(int.from_bytes(b[72:104], 'little')).count('1')):
    o = end + len(recs) + 16 * k
    struct.pack_into('<Q', out, o, struct.unpack_from('<Q', out, o)[0] + len(recs))
open(sys.argv[2], 'wb').write(out)
PY
expect_code 1 '50,000 CPUs where the header declares 4: refused at once, in little memory' '
	python3 gen.py "$P" q.data 50000 && [ "$(wc -c <q.data)" -gt 3000000 ] &&
	# ASan reserves terabytes of address space: the bound is for the plain build
	case "${ASAN_OPTIONS:-}" in *detect_leaks*) lim=unlimited ;; *) lim=400000 ;; esac
	(ulimit -v $lim; timeout 20 "$TRACECTL" decode -i q.data >/dev/null 2>err); rc=$?
	cat err
	grep -q "^fatal: q.data: AUXTRACE record at offset 0x294a8: cpu 4, but the header.s nrcpus feature gives 4 CPUs" err &&
	exit $rc
'
