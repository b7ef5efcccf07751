#!/bin/busybox sh
# Guest init of make test-vm-new (Linux 6.13+): AUX pause/resume through tracectl record on a
# kernel that has it; fake_aux.ko's PMUs declare PERF_PMU_CAP_AUX_PAUSE there, write no byte
# while paused and count the core's pause/resume calls. One "VM-CHECK name: ok|FAIL" line per
# check, then "VM-RESULT: PASS|FAIL".
. /guest.sh
P=/sys/module/fake_aux/parameters
counts() { echo "$(cat $P/pauses) $(cat $P/resumes)"; }
reset() { echo 0 >$P/pauses; echo 0 >$P/resumes; }
auxbytes() { sed -n 's/.*aux_bytes_reported=\([0-9]*\).*/\1/p' "$1"; }
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
	echo "VM: --start-paused, $pmu: $(auxbytes s.chk) AUX bytes"
	check start-paused-$pmu-no-bytes test "$(auxbytes s.chk)" = 0
	check start-paused-$pmu-no-calls test "$(counts)" = "0 0"
	#    the same run unpaused has trace: the zero above is the pause's doing
	tracectl record --pmu $pmu -o u.data -- /pr_work 0 400 1 2>u.err
	check_aux u.data >u.chk
	check unpaused-$pmu-bytes grep -q 'check_aux: OK' u.chk
done

# 4. Triggers: started paused, resumed on entering tc_resume_here and paused on entering
#    tc_pause_here, 3 times each, in a workload pinned to CPU 1 (a trigger acts on the trace
#    event of its CPU). The kernel called the PMU exactly 3+3 times; every AUX byte in the
#    file lies between a resume sample and the next pause sample, each of the 3 windows has
#    trace, and the bytes are the module's. Uprobes, then the same with the tracepoints of
#    the system calls the two functions make.
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
PR=/pr_work
for how in uprobe tracepoint; do
	if [ $how = uprobe ]; then
		set -- --resume-on $PR:tc_resume_here --pause-on $PR:tc_pause_here
	else
		set -- --resume-on syscalls:sys_enter_getppid --pause-on syscalls:sys_enter_getpgrp
	fi
	reset
	tracectl record --pmu intel_pt --start-paused "$@" -o w.data -- $PR 3 200 1 2>w.err
	rc=$?; cat w.err
	echo "VM: $how triggers: pauses resumes = $(counts)"
	check $how-triggers-exit test "$rc" = 0
	check $how-triggers-calls test "$(counts)" = "3 3"
	check_pr w.data | tee w.pr
	check $how-triggers-windows grep -q 'check_pr: OK resumes=3 pauses=3 .* windows_with_trace=3' w.pr
	check_aux w.data | tee w.chk
	check $how-triggers-bytes grep -q 'check_aux: OK' w.chk
done
#    A resume trigger that never fires: no byte, no call.
reset
tracectl record --pmu intel_pt --start-paused --resume-on $PR:tc_resume_here -o n.data \
	-- $PR 0 300 1 2>n.err
check never-resumed-exit test $? = 0
check_aux n.data >n.chk
check never-resumed-no-bytes test "$(auxbytes n.chk)" = 0
check never-resumed-no-calls test "$(counts)" = "0 0"
#    Pause only (not started paused): trace until the first pause, none after it.
reset
tracectl record --pmu cs_etm --pause-on $PR:tc_pause_here -o o.data -- $PR 2 200 1 2>o.err
check pause-only-exit test $? = 0
check pause-only-calls test "$(counts)" = "1 0"
check_pr o.data | tee o.pr
check pause-only-windows grep -q 'check_pr: OK resumes=0 pauses=2 .* windows_with_trace=1' o.pr
#    The checker: a file traced throughout (u.data, section 3) passes as it is, fails when
#    the trace is taken as paused from the start (bytes outside every window).
check_pr u.data >u.pr
check checker-unpaused grep -q 'check_pr: OK resumes=0 pauses=0' u.pr
check_pr --start-paused u.data >u.pr
check checker-can-fail grep -Eq 'check_pr: FAIL .* aux_in=0 aux_out=[1-9]' u.pr

finish
