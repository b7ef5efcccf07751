# Kernel trace images (--vmlinux, --kallsyms, --kcore; lib/images/kernel.c) against perf
# script with the same options. The shared data has no kernel images, so they are built
# here for the 4.14 Intel PT recording (which traced the kernel): a kallsyms file with
# symbols where perf's decode shows kernel addresses (also shifted, as another boot's), a
# vmlinux linked at the usual unrelocated address with the recording's kernel build id (the
# recording's kernel ran relocated, KASLR), and a kcore image of that vmlinux's text at the
# addresses it ran at. tests/tools/img_sym asks the image layer for the symbol at each
# address perf printed; perf's and ours must be the same. On this machine: /proc/kallsyms
# against a perf record of kernel samples. Modules are in tests/unit/test_kallsyms.c.
. "$TOP/tests/e2e/lib.sh"

IMG="${TC_TOOLS:-$TOP/build/obj/tools}/img_sym"
[ -x "$IMG" ] || { echo "not ok $T: $IMG is not built (make test builds it)"; exit 0; }
command -v perf >/dev/null || { skip 'kernel symbols against perf' 'no perf'; exit 0; }
command -v ld >/dev/null && command -v as >/dev/null ||
	{ skip 'kernel symbols against perf' 'no binutils to build a vmlinux'; exit 0; }
have_testdata perfdata || { skip 'kernel symbols against perf' 'no test data'; exit 0; }
PT="$TC_TESTDATA/perfdata/intel_pt/perf.data.intel_pt-4.14"
KBID=672679ceaecf17b7a879e56c56802afc568aa242	# perf buildid-list: [kernel.kallsyms]
LINK=0xffffffff81000000	# the vmlinux's _text
RUN=0xffffffffb9600000	# the recording's (its kernel MMAP's pgoff)

# "ADDR SYM+0xOFF (DSO)" of every kernel address perf script prints.
perf_pairs() {	# perf options...
	perf script -i "$PT" --itrace=b -F ip,sym,symoff,dso,addr "$@" 2>/dev/null |
		grep -oE 'ffffffff[0-9a-f]{8} [^ ]+ \([^ ]*\)' | sort -u
}
# The same from img_sym, for the addresses in file $1.
our_pairs() {	# pairs-file img_sym-options...
	f=$1; shift
	awk '{ print $1 }' "$f" | "$IMG" "$@" "$PT" |
		awk '{ s = $2; if (s == "?") s = "[unknown]"; d = $3; if (d == "-") d = "[unknown]"
		       print $1, s, "(" d ")" }'
}

# Kernel addresses perf's decode reaches without images; symbols near each, with the cases
# perf's rules decide: several at one address, weak, local, data ending text, a type perf
# does not read (r), module symbols.
perf script -i "$PT" --itrace=b -F ip,addr 2>/dev/null | awk '{ print $1; print $3 }' |
	grep '^ffffffff' | sort -u >addrs
gen_kallsyms() {
	python3 - "$@" <<'PY'
import sys
addrs = sorted(int(l, 16) for l in open("addrs"))
out = ["ffffffffb9600000 T startup_64", "ffffffffb9600000 T _text"]
seen = set(); n = 0
for a in addrs:
    s = a - a % 48
    if s in seen: continue
    seen.add(s); n += 1
    t = "W" if n % 7 == 3 else ("T" if n % 2 else "t")
    out.append("%016x %s fn_%x" % (s, t, s))
    if n % 5 == 1: out.append("%016x t alias_%x" % (s, s))
    if n % 6 == 2: out.append("%016x d data_%x" % (s + 32, s))
    if n % 9 == 4: out.append("%016x r rodata_%x" % (s + 16, s))
out.append("ffffffffc02f0000 t joydev_fn\t[joydev]")
shift = int(sys.argv[1], 0) if len(sys.argv) > 1 else 0
for l in out:
    a, rest = l.split(" ", 1)
    print("%016x %s" % (int(a, 16) + shift, rest))
PY
}
command -v python3 >/dev/null || { skip 'kernel symbols against perf' 'no python3'; exit 0; }
gen_kallsyms >kallsyms && gen_kallsyms 0x2000000 >kallsyms.other

expect 'kallsyms: the symbols perf script --kallsyms shows' '
	[ "$(wc -l <addrs)" -ge 20 ] &&
	perf_pairs --kallsyms kallsyms >perf.ks && [ "$(wc -l <perf.ks)" -ge 20 ] &&
	grep -q alias_ perf.ks && grep -q data_ perf.ks &&
	our_pairs perf.ks --kallsyms kallsyms >ours.ks && diff ours.ks perf.ks
'
expect 'kallsyms of another boot (its _text elsewhere): shifted back, as perf does' '
	perf_pairs --kallsyms kallsyms.other >perf.other &&
	our_pairs perf.other --kallsyms kallsyms.other >ours.other && diff ours.other perf.other &&
	cut -d" " -f2 perf.other >a && cut -d" " -f2 perf.ks >b && diff a b
'

# A vmlinux: functions of several sizes (some without), at link addresses, filled with int3.
python3 - "$RUN" "$LINK" <<'PY' >vm.s
import sys
reloc = int(sys.argv[1], 0) - int(sys.argv[2], 0)
addrs = sorted(int(l, 16) for l in open("addrs"))
print(".text\n.globl _text\n_text:\nstartup_64: .type startup_64,@function")
pos = 0; seen = set()
for i, a in enumerate(addrs):
    s = a - reloc - int(sys.argv[2], 0); s -= s % 48
    if s in seen or s < pos: continue
    seen.add(s)
    name = "vfn_%x" % (s + int(sys.argv[2], 0))
    sz = 0x28 if i % 3 else 0x100
    print(".org 0x%x, 0xcc\n.globl %s\n.type %s,@function\n%s:\n.fill 0x%x,1,0xcc" %
          (s, name, name, name, sz))
    if i % 4 != 1: print(".size %s, 0x%x" % (name, sz))
    pos = s + sz
print(".org 0x%x, 0xcc" % (pos + 0x100))
PY
as -o vm.o vm.s && ld -nostdlib -static -Ttext=$LINK --build-id=0x$KBID -e _text -o vmlinux vm.o ||
	echo "not ok $T: could not build the test vmlinux"

expect 'vmlinux (KASLR: linked at 0xffffffff81000000, ran at 0xffffffffb9600000): perf script --vmlinux'"'"'s symbols' '
	perf_pairs --vmlinux vmlinux >perf.vm && [ "$(wc -l <perf.vm)" -ge 100 ] &&
	grep -q "_text+" perf.vm && grep -q "vfn_" perf.vm &&
	our_pairs perf.vm --vmlinux vmlinux >ours.vm && diff ours.vm perf.vm
'

expect 'decode --vmlinux: kernel ranges from the vmlinux'"'"'s bytes, named by its symbols' '
	tracectl -j decode -i "$PT" --vmlinux vmlinux >dec.vm 2>err.vm; [ $? -le 3 ] &&
	! grep -q "image not found: \[kernel.kallsyms\]" err.vm &&
	jq -r "select(.type == \"range\" and .sym != null and (.start | startswith(\"0xffffffff\"))) |
		\"\(.start | ltrimstr(\"0x\")) \(.sym)\"" dec.vm |
		sort -u >ranges.vm && [ "$(wc -l <ranges.vm)" -ge 3 ] &&
	awk "{ print \$1 }" ranges.vm | "$IMG" --vmlinux vmlinux "$PT" | awk "{ print \$1, \$2 }" >img.vm &&
	diff img.vm ranges.vm
'
expect 'a vmlinux of another build is not used (as perf), and the warning says why' '
	ld -nostdlib -static -Ttext=$LINK --build-id=0x0123456789abcdef -e _text -o vmlinux.other vm.o &&
	perf_pairs --vmlinux vmlinux.other >perf.other.vm && ! grep -q vfn_ perf.other.vm &&
	tracectl decode -i "$PT" --vmlinux vmlinux.other >dec.other 2>err.other; [ $? -le 3 ] &&
	! grep -q vfn_ dec.other && grep -q "build id 0123456789abcdef, not the recorded $KBID" err.other
'
expect 'decode without kernel images: the kernel is an image not found' '
	tracectl decode -i "$PT" >/dev/null 2>err.none; [ $? -le 3 ] &&
	grep -q "image not found: \[kernel.kallsyms\]" err.none
'

# kcore: the vmlinux's text where it ran, as an ELF core file.
objcopy -O binary -j .text vmlinux text.bin &&
python3 - "$RUN" <<'PY' || echo "not ok $T: could not build the test kcore"
import struct, sys
blob = open("text.bin", "rb").read()
eh = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + b"\0" * 9, 4, 62, 1, 0, 64, 0, 0,
                 64, 56, 2, 0, 0, 0)
off = 64 + 2 * 56
note = struct.pack("<IIQQQQQQ", 4, 0, off, 0, 0, 0, 0, 0)
load = struct.pack("<IIQQQQQQ", 1, 7, off, int(sys.argv[1], 0), 0, len(blob), len(blob), 4096)
open("kcore", "wb").write(eh + note + load + blob)
PY
expect 'kcore: the same kernel ranges as the vmlinux gives' '
	tracectl -j decode -i "$PT" --kcore kcore --kallsyms kallsyms >dec.kc 2>err.kc; [ $? -le 3 ] &&
	! grep -q "image not found: \[kernel.kallsyms\]" err.kc &&
	ranges() { jq -r "select(.type == \"range\") | \"\(.start)-\(.end)\"" "$1"; } &&
	[ "$(ranges dec.kc | grep -c "^0xffffffff")" -ge 3 ] &&
	ranges dec.vm >a && ranges dec.kc >b && [ -s a ] &&
	diff a b &&
	printf "%s\n" ffffffffb960d302 | "$IMG" --kcore kcore --bytes 4 "$PT" | grep -q " cccccccc$"
'
expect 'kcore_dir (perf record --kcore): its kcore and kallsyms' '
	mkdir -p kcore_dir && cp kcore kallsyms kcore_dir/ &&
	tracectl -j decode -i "$PT" --kcore kcore_dir >dec.kd 2>/dev/null; [ $? -le 3 ] &&
	diff dec.kc dec.kd
'
expect 'a perf.data directory (perf record --kcore): its data, with its kcore_dir' '
	mkdir -p pd.dir && cp "$PT" pd.dir/data && cp -r kcore_dir pd.dir/ &&
	tracectl -j decode -i pd.dir >dec.pd 2>/dev/null; [ $? -le 3 ] && diff dec.kd dec.pd
'
expect 'report and diff take the kernel images too' '
	tracectl report -i "$PT" --vmlinux vmlinux >rep 2>/dev/null; [ $? -le 3 ] &&
	grep -q vfn_ rep &&
	tracectl diff "$PT" "$PT" --kcore kcore --kallsyms kallsyms >/dev/null 2>&1; [ $? -le 3 ]
'

expect_code 1 'a --vmlinux that is not an ELF file is fatal, named' '
	tracectl decode -i "$PT" --vmlinux kallsyms 2>err; r=$?; grep -q -- "--vmlinux" err && exit $r'
expect_code 1 'a kallsyms with every address 0 (kptr_restrict) is fatal, saying why' '
	sed "s/^[0-9a-f]*/0000000000000000/" kallsyms >zero &&
	tracectl decode -i "$PT" --kallsyms zero 2>err; r=$?; grep -q kptr_restrict err && exit $r'
expect_code 1 'a --kcore that is not an ELF core file is fatal' '
	tracectl decode -i "$PT" --kcore vmlinux 2>err; r=$?; grep -q -- "--kcore" err && exit $r'

# This machine: /proc/kallsyms against perf script --kallsyms on kernel samples.
if [ -r /proc/kallsyms ] && [ "$(awk 'NR == 1 { print ($1 ~ /^0+$/) }' /proc/kallsyms)" = 0 ] &&
   perf record -o live.data -e cpu-clock -c 200000 -- sh -c \
	'i=0; while [ $i -lt 500 ]; do cat /proc/self/stat >/dev/null; i=$((i + 1)); done' \
	>/dev/null 2>&1; then
	expect '/proc/kallsyms of this machine: the symbols perf script --kallsyms shows' '
		perf script -i live.data -F ip,sym,symoff --kallsyms /proc/kallsyms 2>/dev/null |
			awk "\$1 ~ /^ffff/ { print \$1, \$2 }" | sort -u >perf.live &&
		[ "$(wc -l <perf.live)" -ge 10 ] &&
		awk "{ print \$1 }" perf.live | "$IMG" --kallsyms /proc/kallsyms live.data |
			awk "{ s = \$2; if (s == \"?\") s = \"[unknown]\"; print \$1, s }" >ours.live &&
		diff ours.live perf.live
	'
else
	skip '/proc/kallsyms against perf' 'no readable /proc/kallsyms with addresses, or perf record cannot sample here'
fi

# CoreSight ETM through the kernel's images: simpleperf's recording with etm_test_loop's
# mappings rewritten as the kernel's ([kernel.kallsyms]ref, tests/tools/pd_kernel), its
# segments as a kcore image at the addresses it ran at, and a kallsyms giving "ref" there.
# The decode must give the ranges the original gives with the program found by --symfs.
KTOOL="${TC_TOOLS:-$TOP/build/obj/tools}/pd_kernel"
ETM="$TC_TESTDATA/perfdata/simpleperf-etm"
BASE=0x582b2b0000	# where perf_etm.data's MMAP2 records put etm_test_loop
if [ -x "$KTOOL" ] && [ -f "$ETM/etm_test_loop" ]; then
	python3 - "$ETM/etm_test_loop" "$BASE" <<'PY' || echo "not ok $T: could not build the ETM kcore"
import struct, sys
b = open(sys.argv[1], "rb").read(); base = int(sys.argv[2], 0)
phoff, = struct.unpack_from("<Q", b, 0x20); phent, phnum = struct.unpack_from("<HH", b, 0x36)
segs = []
for i in range(phnum):
    t, fl, off, va, pa, fs, ms, al = struct.unpack_from("<IIQQQQQQ", b, phoff + i * phent)
    if t == 1 and fs: segs.append((base + va, b[off:off + fs]))
hdr = 64 + 56 * len(segs); data = b""; ph = b""
for va, blob in segs:
    ph += struct.pack("<IIQQQQQQ", 1, 7, hdr + len(data), va, 0, len(blob), len(blob), 4096)
    data += blob
eh = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + b"\0" * 9, 4, 183, 1, 0, 64, 0, 0,
                 64, 56, len(segs), 0, 0, 0)
open("kcore.etm", "wb").write(eh + ph + data)
PY
	printf '%016x T ref\n' "$BASE" >kallsyms.etm
	expect 'CoreSight ETM: a program read as the kernel from kcore gives the ranges it gives as a user binary' '
		"$KTOOL" "$ETM/perf_etm.data" k.etm.data /data/local/tmp/etm_test_loop ref $BASE &&
		mkdir -p sfs/data/local/tmp && cp "$ETM/etm_test_loop" sfs/data/local/tmp/ &&
		tracectl decode -i "$ETM/perf_etm.data" --symfs sfs >u.etm 2>/dev/null &&
		tracectl decode -i k.etm.data --kcore kcore.etm --kallsyms kallsyms.etm >k.etm 2>k.etm.err &&
		! grep -q "image not found" k.etm.err &&
		grep " range " u.etm | awk "{ print \$2, \$3, \$4, \$5, \$6, \$7, \$8, \$9, \$10 }" >a &&
		grep " range " k.etm | awk "{ print \$2, \$3, \$4, \$5, \$6, \$7, \$8, \$9, \$10 }" >b &&
		[ "$(wc -l <a)" -ge 200 ] && diff a b
	'
	expect 'CoreSight ETM: without the kernel images, the same recording lacks the code' '
		tracectl decode -i k.etm.data >n.etm 2>n.err; [ $? -eq 3 ] &&
		grep -q "image not found: \[kernel.kallsyms\] " n.err && ! grep -q " range " n.etm
	'
else
	echo "not ok $T: $KTOOL is not built or the simpleperf ETM data is missing"
fi
