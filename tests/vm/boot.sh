#!/bin/sh
# Boots a test guest under QEMU TCG (never KVM: the guest kernel does not finish booting on
# this machine's /dev/kvm) and leaves its serial console in LOG. QEMU exits 0 whatever happens
# inside, so the callers read the verdict from LOG. A guest that never reaches its init (no
# "VM: kernel" line, which guest.sh prints first) says nothing about tracectl: its console tail
# is shown and it boots once more; a second such boot is left for the caller to fail on.
#
# A hung guest is stopped when its console has said nothing for VM_IDLE seconds (300; every
# step of the guests prints within seconds on an idle host, the boot within a minute), or
# after VM_TIMEOUT seconds in all (1800), and LOG's last line says which. A fixed 300 s for
# the whole run was too tight: a run takes 80 s on an idle 2-core host and more than 300 s
# when other jobs load it (4 emulated CPUs on 2 real ones), and was then cut mid-way.
# Usage: boot.sh LOG KERNEL INITRD APPEND [QEMU ARGS...]
#        boot.sh --end LOG   (the console's end, for a caller's failure report)
set -eu
console_end() { tr -d '\r\033' <"$1" | tail -n 30 | sed 's/^/  | /' >&2; }
[ "$1" = --end ] && { console_end "$2"; exit 0; }
log=$1 kernel=$2 initrd=$3 append=$4
shift 4
idle=${VM_IDLE:-300} total=${VM_TIMEOUT:-1800}

# watchdog PID: stops PID (the guest's QEMU) when LOG stops growing for $idle s or after
# $total s, and says so at LOG's end; ends by itself when PID has.
watchdog() {
	t0=$(date +%s) last=$t0 size=-1
	while kill -0 "$1" 2>/dev/null; do
		sleep 2
		now=$(date +%s)
		s=$(wc -c <"$log")
		[ "$s" = "$size" ] || { size=$s last=$now; }
		why=
		[ $((now - last)) -lt "$idle" ] || why="no console output for $((now - last)) s (VM_IDLE)"
		[ $((now - t0)) -lt "$total" ] || why="running for $((now - t0)) s (VM_TIMEOUT)"
		if [ -n "$why" ]; then
			kill "$1" 2>/dev/null || true
			sleep 1
			printf '\n[ boot.sh: the guest was stopped: %s, %s ]\n' "$why" \
				"the run took $((now - t0)) s" >>"$log"
			return 0
		fi
	done
}

for try in 1 2; do
	qemu-system-x86_64 -accel tcg -smp 4 -m 1G -nographic \
		-no-reboot -serial mon:stdio "$@" -kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init $append" >"$log" 2>&1 &
	qpid=$!
	watchdog $qpid &
	wpid=$!
	wait $qpid || true
	wait $wpid || true
	if grep -q '^\[ boot.sh: the guest was stopped' "$log"; then
		grep '^\[ boot.sh: the guest was stopped' "$log" | sed 's/^/warning: /' >&2
	fi
	grep -q 'VM: kernel' "$log" && exit 0
	[ "$try" = 2 ] && { echo "warning: the guest did not reach its init again" >&2; exit 0; }
	echo "warning: the guest did not reach its init; the console's end:" >&2
	console_end "$log"
	echo "[ booting the guest once more ]" >&2
done
