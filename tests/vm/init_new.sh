#!/bin/busybox sh
# Guest init of make test-vm-new (Linux 6.13+): AUX pause/resume through tracectl record on a
# kernel that has it; fake_aux.ko's PMUs declare PERF_PMU_CAP_AUX_PAUSE there, write no byte
# while paused and count the core's pause/resume calls. One "VM-CHECK name: ok|FAIL" line per
# check, then "VM-RESULT: PASS|FAIL".
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
export PATH=/bin LD_LIBRARY_PATH=/lib
cd /tmp
fails=0
check() {	# name, then a command whose success is the verdict
	name=$1; shift
	if "$@"; then echo "VM-CHECK $name: ok"; else echo "VM-CHECK $name: FAIL"; fails=$((fails+1)); fi
}
P=/sys/module/fake_aux/parameters
counts() { echo "$(cat $P/pauses) $(cat $P/resumes)"; }
reset() { echo 0 >$P/pauses; echo 0 >$P/resumes; }
auxbytes() { sed -n 's/.*aux_bytes_reported=\([0-9]*\).*/\1/p' "$1"; }
echo "VM: kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs"
check insmod insmod /fake_aux.ko
check params test "$(counts)" = "0 0"

# 1. The probe: this kernel knows aux_action, so the plan carries no "cannot open" note.
tracectl record --dry-run --pmu intel_pt --start-paused -- /pr_work 0 10 1 >d.out 2>&1
check probe-dry-run test $? = 0
check probe-supported sh -c '! grep -q "cannot open" d.out && grep -q "aux_start_paused 1" d.out'

# 2. Plain recording on this kernel: every byte, no pause/resume call.
reset
tracectl record --pmu intel_pt -o p.data -- /mt_work 4 300 0 2>p.err
check pt-exit test $? = 0
check_aux p.data | tee p.chk
check pt-aux-bytes grep -q 'check_aux: OK' p.chk
check pt-no-pause-calls test "$(counts)" = "0 0"

# 3. --start-paused with nothing to resume it: the PMU accepted aux_start_paused (the kernel
#    refuses it to a PMU without the capability) and wrote no byte, on either personality.
for pmu in intel_pt cs_etm; do
	reset
	tracectl record --pmu $pmu --start-paused -o s.data -- /pr_work 0 400 1 2>s.err
	rc=$?; cat s.err
	check start-paused-$pmu-exit test "$rc" = 0
	check_aux s.data >s.chk
	cat s.chk
	check start-paused-$pmu-no-bytes test "$(auxbytes s.chk)" = 0
	check start-paused-$pmu-no-calls test "$(counts)" = "0 0"
	#    the same run unpaused has trace: the zero above is the pause's doing
	tracectl record --pmu $pmu -o u.data -- /pr_work 0 400 1 2>u.err
	check_aux u.data >u.chk
	check unpaused-$pmu-bytes grep -q 'check_aux: OK' u.chk
done

[ "$fails" = 0 ] && echo "VM-RESULT: PASS" || echo "VM-RESULT: FAIL ($fails)"
poweroff -f
