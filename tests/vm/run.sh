#!/bin/sh
# make test-vm: boot Debian 12's kernel under QEMU TCG (never KVM) with an initramfs holding
# tracectl, the fake AUX PMU module, a workload and a checker; the verdict is read from the
# serial console (QEMU exits 0 whatever happens inside).
# With "bench" as argument the guest measures instead (make bench).
set -eu
mode=${1:-check}
top=$(cd "$(dirname "$0")/../.." && pwd)
out="$top/build/vm"
mkdir -p "$out"
t0=$(date +%s)

# The kernel version Debian 12's meta-package points at (not the host's uname -r).
kver=$(apt-cache depends linux-image-amd64 | sed -n 's/.*Depends: linux-image-\(.*\)$/\1/p' |
	head -n 1)
[ -n "$kver" ] || { echo "fatal: no linux-image-amd64 dependency in apt-cache" >&2; exit 1; }
hdrs=/usr/src/linux-headers-$kver
[ -d "$hdrs" ] || { echo "fatal: $hdrs missing (mk/deps.sh installs linux-headers-amd64)" >&2
	exit 1; }
if [ ! -f "$out/vmlinuz-$kver" ]; then
	(cd "$out" && rm -f linux-image-*.deb && apt-get download "linux-image-$kver" >/dev/null)
	dpkg-deb --fsys-tarfile "$out"/linux-image-"$kver"_*.deb |
		tar -xO "./boot/vmlinuz-$kver" >"$out/vmlinuz-$kver"
fi

# Module (kbuild against the guest's headers), workload, checker.
mkdir -p "$out/mod"
cp "$top/tests/vm/fake_aux.c" "$top/tests/vm/Kbuild" "$out/mod/"
make -s -C "$hdrs" M="$out/mod" modules >"$out/mod.log" 2>&1 ||
	{ cat "$out/mod.log" >&2; echo "fatal: module build failed" >&2; exit 1; }
gcc -O2 -static -pthread -o "$out/mt_work" "$top/tests/vm/mt_work.c"
gcc -O2 -static -o "$out/sb_work" "$top/tests/vm/sb_work.c"
gcc -O2 -static -o "$out/check_aux" "$top/tests/vm/check_aux.c"

# Real trace bytes for the module, from the shared test data (into the initramfs only): an
# OpenCSD snapshot's formatted multi-ID ETMv4 sink buffer (its ETMs 0-3 become the cs_etm
# cpu0-3 registers, so trace IDs map to the guest's CPUs) and the Intel PT trace of cpu 3
# in a perf 4.14 recording.
td=${TC_TESTDATA:-$top/../shared/testdata}
snap=$td/opencsd/juno_r1_1
ptrec=$td/perfdata/intel_pt/perf.data.intel_pt-4.14
[ -f "$snap/cstrace.bin" ] && [ -f "$ptrec" ] ||
	{ echo "fatal: test data missing under $td (set TC_TESTDATA)" >&2; exit 1; }
etm_regs() {	# the insmod arguments: each register's value for the ETMs of cpu_0..3
	for r in TRCTRACEIDR TRCIDR0 TRCIDR1 TRCIDR2 TRCIDR8 TRCAUTHSTATUS; do
		v=
		for cpu in 0 1 2 3; do
			etm=$(sed -n "s/^cpu_$cpu=//p" "$snap/trace.ini" | tr -d '\r')
			ini=$(grep -l "^name=$etm\r*\$" "$snap"/*.ini)
			v=$v${v:+,}$(sed -n "s/^$r([^)]*)=\(0x[0-9A-Fa-f]*\).*/\1/p" "$ini")
		done
		echo "$r=$v" | tr 'A-Z' 'a-z' | sed 's/^trctraceidr=/trctraceid=/'
	done | tr '\n' ' '
}

# initramfs: busybox, tracectl and its libraries, guest.sh, the workloads, the trace bytes.
"$out/check_aux" --dump 3 "$ptrec" >"$out/pt.bin"
etm_regs >"$out/fa_args"
"$top/tests/vm/initramfs.sh" "$out/root" "$top/tests/vm/init.sh" "$out/initrd.gz" \
	"$out/check_aux=bin/check_aux" "$out/mt_work" "$out/sb_work" "$out/mod/fake_aux.ko" \
	"$snap/cstrace.bin=cs.bin" "$out/pt.bin" "$out/fa_args"
t1=$(date +%s)

log="$out/console.log"
rm -f "$out/files.tar"
"$top/tests/vm/boot.sh" "$log" "$out/vmlinuz-$kver" "$out/initrd.gz" "tc_mode=$mode" \
	-serial "file:$out/files.tar"
t2=$(date +%s)
if [ "$mode" = bench ]; then
	tr -d '\r' <"$log" | sed -n 's/^VM-BENCH //p' | tee "$out/bench.txt"
	# The figure the steps lead to: the highest rate drained with nothing truncated.
	awk '$7 == "0" && $4 + 0 > best { best = $4; chunk = $2; cpu = substr($0, index($0, "record CPU")) }
	     END { if (best) printf "highest drained with zero loss: %s MB/s (%s B/tick/cpu; %s)\n",
			   best, chunk, cpu; else print "no step drained without loss" }' "$out/bench.txt"
	grep -q '^VM-BENCH' "$log" || { echo "bench-vm: no result (log $log)" >&2; exit 1; }
	exit 0
fi
grep -E '^(VM|check_aux|\[ tracectl|warning|fatal|tracectl)' "$log" | tr -d '\r' || true
echo "[ test-vm: kernel $kver, prepare $((t1 - t0)) s, boot+run $((t2 - t1)) s; log $log ]"
grep -q '^VM-RESULT: PASS' "$log" || { "$top/tests/vm/boot.sh" --end "$log"
	echo "test-vm: FAIL (the console's end above)" >&2; exit 1; }

# The guest's files, as Debian's perf reads them: same bytes, every record type there.
rm -rf "$out/files"
mkdir -p "$out/files"
tar -xf "$out/files.tar" -C "$out/files" 2>/dev/null || true
fail=0
for f in a.data p.data; do
	want=$(tr -d '\r' <"$log" | sed -n "s/^VM-MD5 \([0-9a-f]*\)  $f\$/\1/p")
	got=$(md5sum <"$out/files/$f" 2>/dev/null | cut -d' ' -f1)
	[ -n "$want" ] && [ "$want" = "$got" ] || { echo "host: $f did not arrive intact"; fail=1
		continue; }
	perf report -D -i "$out/files/$f" >"$out/files/$f.D" 2>/dev/null || true
	grep -oE 'PERF_RECORD_[A-Z_0-9]+' "$out/files/$f.D" | sort | uniq -c >"$out/files/$f.types"
	for t in AUXTRACE_INFO AUXTRACE AUX ITRACE_START COMM MMAP2 FORK EXIT SWITCH; do
		grep -q " PERF_RECORD_$t\$" "$out/files/$f.types" ||
			{ echo "host: perf report -D finds no PERF_RECORD_$t in $f"; fail=1; }
	done
	echo "host: perf $(perf --version | cut -d' ' -f3) reads $f:" $(awk '{print $2 "=" $1}' \
		"$out/files/$f.types" | sed 's/PERF_RECORD_//')
done
# a.data's AUX bytes were the snapshot's sink buffer: tracectl decodes each AUX record to the
# snapshot's own packets, and Debian's perf (OpenCSD inside) to trc_pkt_lister's.
[ -f "$out/files/a.data.D" ] && "$top/tests/vm/cs_packets.sh" "$top/tracectl" "$out/check_aux" \
	"$out/files/a.data" "$snap" "$snap/cstrace.bin" 4 "$out/files/a.data.D" \
	"$td/opencsd/results/juno_r1_1.ppl.xz" || fail=1
# p.data's were perf-recorded Intel PT: tracectl finds its PSB packets, and Debian's perf
# decodes our file to branches (the 4.14 machine's code is not here: where trace starts).
if [ -f "$out/files/p.data" ]; then
	n=$("$top/tracectl" decode --packets -i "$out/files/p.data" 2>/dev/null | grep -c ' psb$') ||
		true
	echo "host: tracectl decode finds $n PSB packets in p.data"
	[ "$n" -gt 0 ] || fail=1
	perf script --itrace=b -i "$out/files/p.data" >"$out/files/p.data.b" 2>/dev/null
	rc=$?
	b=$(grep -c ' branches' "$out/files/p.data.b") || true
	echo "host: perf script --itrace=b on p.data: exit $rc, $b branches"
	[ "$rc" = 0 ] && [ "$b" -gt 0 ] || fail=1
fi
# record -e: perf script prints the tracepoint samples with their fields (from the file's
# tracing data) and the 4 uprobe hits on the workload's threads, named from EVENT_DESC.
f=e.data
want=$(tr -d '\r' <"$log" | sed -n "s/^VM-MD5 \([0-9a-f]*\)  $f\$/\1/p")
got=$(md5sum <"$out/files/$f" 2>/dev/null | cut -d' ' -f1)
if [ -n "$want" ] && [ "$want" = "$got" ]; then
	# perf script prints every sample but exits 234 (-EINVAL, nothing said, also on a.data
	# that has no samples) on the fake cs_etm's files; the output is the verdict.
	perf script --no-itrace -i "$out/files/$f" >"$out/files/$f.script" 2>"$out/files/$f.err" ||
		true
	sw=$(grep -Ec 'sched:sched_switch: prev_comm=.* prev_pid=[0-9]+ .*==> next_comm=.* next_pid=[0-9]+' \
		"$out/files/$f.script" || true)
	up=$(grep -c '/mt_work:spin: ' "$out/files/$f.script" || true)
	echo "host: perf script on $f: $sw sched_switch samples with fields, $up uprobe hits"
	[ "$sw" -gt 0 ] || { echo "host: no sched_switch sample with its fields in $f"
		head -5 "$out/files/$f.err"; fail=1; }
	[ "$up" = 4 ] || { echo "host: $up uprobe hits in $f, expected 4 (one per thread)"; fail=1; }
else
	echo "host: $f did not arrive intact"; fail=1
fi
[ $fail = 0 ] || { echo "test-vm: FAIL" >&2; exit 1; }
echo "test-vm: PASS"
