#!/bin/sh
# make test-vm-new: the second guest, on a Linux 6.13+ kernel (Debian 13 backports; mk/kernel-
# new.sh prepares it and a Debian 13 chroot that builds tests/vm/fake_aux.c for it), booted
# under QEMU TCG (never KVM) with tracectl, fake_aux.ko (whose PMUs honour AUX pause/resume
# there), the pause/resume workload and the checker. It proves what Debian 12's 6.1 kernel
# (make test-vm) cannot: record's pause/resume triggers on a kernel that has them. The verdict
# is read from the serial console (QEMU exits 0 whatever happens inside). Needs root.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
dir="$top/build/vm-new"
out="$dir/run"
t0=$(date +%s)
kver=$("$top/mk/kernel-new.sh")
mkdir -p "$out"
t1=$(date +%s)

# The module, built in the chroot against the kernel's headers (objtool reads /proc).
root="$dir/root"
rm -rf "$root/tmp/mod"
mkdir -p "$root/tmp/mod"
cp "$top/tests/vm/fake_aux.c" "$top/tests/vm/Kbuild" "$root/tmp/mod/"
mount -t proc proc "$root/proc"
trap 'umount "$root/proc" 2>/dev/null || true' EXIT
rc=0
chroot "$root" make -s -C "/usr/src/linux-headers-$kver" M=/tmp/mod modules >"$out/mod.log" \
	2>&1 || rc=$?
umount "$root/proc"
trap - EXIT
[ $rc = 0 ] || { cat "$out/mod.log" >&2; echo "fatal: module build failed" >&2; exit 1; }
gcc -O2 -static -o "$out/pr_work" "$top/tests/vm/pr_work.c"
gcc -O2 -static -pthread -o "$out/mt_work" "$top/tests/vm/mt_work.c"
gcc -O2 -static -o "$out/check_aux" "$top/tests/vm/check_aux.c"
gcc -O2 -Wall -Wextra -Werror -static -o "$out/check_pr" "$top/tests/vm/check_pr.c"

# initramfs: busybox, tracectl and its libraries, guest.sh, the workloads, the checkers.
"$top/tests/vm/initramfs.sh" "$out/initramfs" "$top/tests/vm/init_new.sh" "$out/initrd.gz" \
	"$out/check_aux=bin/check_aux" "$out/check_pr=bin/check_pr" "$out/pr_work" \
	"$out/mt_work" "$root/tmp/mod/fake_aux.ko"
t2=$(date +%s)

log="$out/console.log"
"$top/tests/vm/boot.sh" "$log" "$dir/vmlinuz-$kver" "$out/initrd.gz" ""
t3=$(date +%s)
tr -d '\r' <"$log" | grep -E '^(VM|check_aux|check_pr|\[ tracectl|warning|fatal|tracectl)' || true
echo "[ test-vm-new: kernel $kver, prepare $((t1 - t0)) s, build $((t2 - t1)) s," \
	"boot+run $((t3 - t2)) s; log $log ]"
grep -q '^VM-RESULT: PASS' "$log" || { "$top/tests/vm/boot.sh" --end "$log"
	echo "test-vm-new: FAIL (the console's end above)" >&2; exit 1; }
echo "test-vm-new: PASS"
