# Intel PT memory per queue (issue 19, item 5): a queue's address spaces (the side-band
# applied to a copy of its own) are made when its decoder first reads code, so a file whose
# header declares thousands of CPUs, each with an AUXTRACE buffer that reads none (a PSB),
# costs little per CPU. Before: ~49 KB per queue (8000 CPUs: 399 MB, 12 s); after: ~0.4 KB.
. "$TOP/tests/e2e/lib.sh"

have_testdata perfdata || exit 0
P="$TC_TESTDATA/perfdata/intel_pt/perf.data.intel_pt-4.14"
if [ ! -x /usr/bin/python3 ] || [ ! -x /usr/bin/time ]; then
	skip '8000 declared CPUs in little memory' 'needs /usr/bin/python3 and /usr/bin/time'
	exit 0
fi
# gen.py IN OUT N: N AUXTRACE records (16 bytes of PSB each) on CPUs 0..N-1 after IN's
# data, and IN's nrcpus feature (HEADER_NRCPUS, bit 7) set to N
cat >gen.py <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
n = int(sys.argv[3])
doff, dsize = struct.unpack_from('<QQ', b, 40)
end = doff + dsize
recs = bytearray()
for i in range(n):
    recs += struct.pack('<IHHQQQIIII', 71, 0, 48, 16, 0, i, i, 0, i, 0) + b'\x02\x82' * 8
out = b[:end] + recs + b[end:]
struct.pack_into('<Q', out, 48, dsize + len(recs))
bits = int.from_bytes(b[72:104], 'little')
k = 0
for bit in range(256):
    if not bits >> bit & 1:
        continue
    o = end + len(recs) + 16 * k
    off = struct.unpack_from('<Q', out, o)[0] + len(recs)
    struct.pack_into('<Q', out, o, off)
    if bit == 7:
        struct.pack_into('<II', out, off, n, n)
    k += 1
open(sys.argv[2], 'wb').write(out)
PY
expect '8000 declared CPUs, a PSB each: 8000 queues decoded, the trace as without them, in little memory' '
	python3 gen.py "$P" q.data 8000 &&
	/usr/bin/time -f "%M KiB %e s" -o rss timeout 60 "$TRACECTL" decode -i q.data >q.txt 2>err
	rc=$?; cat err rss; [ $rc = 3 ] &&
	grep -q "^\[ tracectl decode: 8002 AUXTRACE buffers (277968 bytes) in 8000 queues, 0 instructions, 0 ranges, 12062 branches, 0 errors, 10 stops without code \]" err &&
	# each added CPU says its 16 bytes hold no PSB it can sync on; the rest is the trace
	[ "$(grep -c " no_sync  *(no PSB in 16 bytes of trace)\$" q.txt)" = 8000 ] &&
	tracectl decode -i "$P" >p.txt 2>/dev/null; grep -v " no_sync " q.txt | cmp - p.txt &&
	kib=$(tail -n 1 rss | cut -d" " -f1) &&
	# ASan reserves and touches shadow memory: the bound is for the plain build
	case "${ASAN_OPTIONS:-}" in *detect_leaks*) true ;; *) [ "$kib" -lt 65536 ] ;; esac
'
# With threads, each queue decodes and formats its records on a lane, done long before the
# caller's thread writes them out in time order: a lane done must let go of its writer
# (before: every one kept it, 8000 queues --jobs 2 peaked at 147 MB)
expect '8000 declared CPUs with --jobs 4: the same listing, in little memory' '
	[ -f q.data ] || python3 gen.py "$P" q.data 8000
	/usr/bin/time -f "%M KiB %e s" -o rss4 timeout 60 "$TRACECTL" decode --jobs 4 -i q.data >q4.txt 2>err4
	rc=$?; cat rss4; [ $rc = 3 ] &&
	"$TRACECTL" decode --jobs 1 -i q.data 2>err1 | cmp - q4.txt && cmp err1 err4 &&
	kib=$(tail -n 1 rss4 | cut -d" " -f1) &&
	case "${ASAN_OPTIONS:-}" in *detect_leaks*) true ;; *) [ "$kib" -lt 65536 ] ;; esac
'
