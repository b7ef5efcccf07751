#!/bin/sh
# Boots a test guest under QEMU TCG (never KVM: the guest kernel does not finish booting on
# this machine's /dev/kvm) and leaves its serial console in LOG. QEMU exits 0 whatever happens
# inside, so the callers read the verdict from LOG. A guest that never reaches its init (no
# "VM: kernel" line, which guest.sh prints first) says nothing about tracectl: its console tail
# is shown and it boots once more; a second such boot is left for the caller to fail on.
# Usage: boot.sh LOG KERNEL INITRD APPEND [QEMU ARGS...]
#        boot.sh --end LOG   (the console's end, for a caller's failure report)
set -eu
console_end() { tr -d '\r\033' <"$1" | tail -n 30 | sed 's/^/  | /' >&2; }
[ "$1" = --end ] && { console_end "$2"; exit 0; }
log=$1 kernel=$2 initrd=$3 append=$4
shift 4
for try in 1 2; do
	timeout "${VM_TIMEOUT:-300}" qemu-system-x86_64 -accel tcg -smp 4 -m 1G -nographic \
		-no-reboot -serial mon:stdio "$@" -kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init $append" >"$log" 2>&1 ||
		true
	grep -q 'VM: kernel' "$log" && exit 0
	[ "$try" = 2 ] && { echo "warning: the guest did not reach its init again" >&2; exit 0; }
	echo "warning: the guest did not reach its init; the console's end:" >&2
	console_end "$log"
	echo "[ booting the guest once more ]" >&2
done
