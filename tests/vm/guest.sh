# Sourced by both guest inits (make test-vm, make test-vm-new) as /guest.sh: mounts, PATH,
# and check(), which prints one "VM-CHECK name: ok|FAIL" line and counts the failures that
# finish() turns into the "VM-RESULT" line the host reads.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
# tracefs, as a booted system has it: record defines its -a uprobes there (one probe for all
# CPUs; without it each CPU's uprobe event is a probe of its own and a hit may be sampled
# twice or not at all, record warns)
mount -t tracefs nodev /sys/kernel/tracing
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
export PATH=/bin LD_LIBRARY_PATH=/lib
cd /tmp
fails=0
check() {	# name, then a command whose success is the verdict
	name=$1; shift
	if "$@"; then echo "VM-CHECK $name: ok"; else echo "VM-CHECK $name: FAIL"; fails=$((fails+1)); fi
}
finish() {
	[ "$fails" = 0 ] && echo "VM-RESULT: PASS" || echo "VM-RESULT: FAIL ($fails)"
	poweroff -f
}
echo "VM: kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs"
