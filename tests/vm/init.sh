#!/bin/busybox sh
# Guest init: load the fake AUX PMUs, run tracectl record in every way the host wants
# proven, print one "VM-CHECK name: ok|FAIL" line per check and "VM-RESULT: PASS|FAIL".
. /guest.sh
# The cs_etm cpuN registers are a snapshot's ETMs' (run.sh wrote /fa_args from its .ini files).
check insmod insmod /fake_aux.ko $(cat /fa_args)
ls /sys/bus/event_source/devices/cs_etm/sinks /sys/bus/coresight/devices | tr '\n' ' '; echo
tracectl list 2>&1 | head -20

# make bench: raise the module's fill rate (bytes per 1 ms tick on each of the 4 CPUs) until
# trace is lost; the drained rate and record's CPU time per MB for each step.
if grep -q tc_mode=bench /proc/cmdline; then
	echo 1000 >/sys/module/fake_aux/parameters/period_us
	for c in 2048 4096 8192 16384 32768 65536 131072; do
		echo $c >/sys/module/fake_aux/parameters/chunk
		time -p tracectl record --pmu intel_pt -a -m 256,2048 -o b.data -- sleep 2 2>b.err
		awk -v c=$c '
			/wrote b.data/ { b = $6 }
			/AUX records:/ { for (i = 1; i <= NF; i++) if ($i == "truncated,") t = $(i - 1) }
			/^real/ { r = $2 } /^user/ { u = $2 } /^sys/ { s = $2 }
			END { mb = b / 1048576; printf "VM-BENCH chunk %7d B/tick/cpu: %8.1f MB/s drained, " \
			      "%s truncated, record CPU %.3f s = %.4f s/MB\n", c, mb / r, t, u + s,
			      mb ? (u + s) / mb : 0 }' b.err
		rm -f b.data b.data.old
	done
	poweroff -f
fi

# From here the module writes real trace (run.sh put it into the initramfs): cs_etm an
# OpenCSD snapshot's formatted multi-ID sink buffer, intel_pt perf-recorded PT; check_aux
# expects those bytes in every AUX stream.
cat /cs.bin >/sys/module/fake_aux/etm_aux_bytes
cat /pt.bin >/sys/module/fake_aux/pt_aux_bytes
export CHECK_AUX_ETM_BYTES=/cs.bin CHECK_AUX_PT_BYTES=/pt.bin

# 1. cs_etm with a sink on a 4-thread workload over 4 vCPUs: every AUX byte, the records,
#    the workload's exit status, .old renaming.
echo old >a.data
tracectl record --pmu cs_etm --sink tmc_etr0 -o a.data -- /mt_work 4 400 3 2>a.err
rc=$?; cat a.err
check exit-status test "$rc" = 3
check old-renamed grep -q '^old$' a.data.old
check_aux a.data | tee a.chk
check cs-aux-bytes grep -q 'check_aux: OK' a.chk
check cs-itrace-start grep -Eq 'itrace_start=[1-9]' a.chk
check cs-threads grep -Eq 'itrace_tids=[3-9]' a.chk
check cs-sideband grep -Eq 'comm=[1-9].* mmap2=[1-9].* exit=[1-9]' a.chk
check cs-switch grep -Eq ' switch=[1-9]' a.chk
check cs-info grep -q 'auxtrace_info=1' a.chk
check cs-no-loss grep -q ' 0 truncated, 0 collision, 0 partial; 0 LOST' a.err

# 2. intel_pt personality.
tracectl record --pmu intel_pt -o p.data -- /mt_work 4 300 0 2>p.err
check pt-exit test $? = 0
check_aux p.data | tee p.chk
check pt-aux-bytes grep -q 'check_aux: OK' p.chk

# 1b. A command that cannot run: said, non-zero, and the file is still a valid perf.data.
tracectl record --pmu cs_etm -o x.data -- /nonexistent 2>x.err
rc=$?; cat x.err
check exec-fail-status test "$rc" != 0
check exec-fail-msg grep -q "cannot run '/nonexistent'" x.err
check exec-fail-file grep -q PERFILE2 x.data

# 2a. --per-thread: one AUX buffer following the task (not inherited, as perf).
tracectl record --per-thread --pmu intel_pt -o w.data -- /mt_work 2 300 0 2>w.err
check per-thread-exit test $? = 0
check_aux w.data | tee w.chk
check per-thread-bytes grep -q 'check_aux: OK' w.chk

# 2a'. -p PID: attached to a running process, done when it exits.
/mt_work 2 3000 0 &
wpid=$!
# its threads exist before record attaches (0.3 s was once not enough on a loaded host)
for i in $(seq 100); do [ "$(ls /proc/$wpid/task | wc -l)" -ge 3 ] && break; sleep 0.05; done
timeout 30 tracectl record --pmu intel_pt -p $wpid -o pp.data 2>pp.err
rc=$?; cat pp.err
check attach-ends test "$rc" = 0
check_aux pp.data | tee pp.chk
check attach-bytes grep -q 'check_aux: OK' pp.chk
check attach-threads grep -Eq 'itrace_tids=[3-9]' pp.chk

# 2b. SIGTERM to record: stops, flushes, a valid file; the workload is ended (128+15).
tracectl record --pmu cs_etm -o t.data -- /mt_work 4 20000 0 2>t.err &
tpid=$!
sleep 2
kill -TERM $tpid
wait $tpid
rc=$?; cat t.err
check sigterm-status test "$rc" = 143
check_aux t.data | tee t.chk
check sigterm-file grep -q 'check_aux: OK' t.chk

# 2c. Snapshot mode: the AUX area in overwrite mode, copied on SIGUSR2 and at the end.
tracectl record -S --pmu intel_pt -C 0,1 -o q.data -- /mt_work 2 3000 0 2>q.err &
qpid=$!
sleep 1
kill -USR2 $qpid
sleep 1
kill -USR2 $qpid
wait $qpid
rc=$?; cat q.err
check snapshot-status test "$rc" = 0
check snapshot-count grep -q 'tracectl record: 3 snapshots' q.err
check_aux --snapshot q.data | tee q.chk
check snapshot-bytes grep -q 'check_aux: OK' q.chk

# 2d. Snapshots of a 64 KiB AUX area that has gone round many times before the first one:
#     intel_pt reports a head that wraps, cs_etm a monotonic one (tests/vm/fake_aux.c).
#     Every snapshot of every CPU is the whole area, the latest bytes, as written.
for p in intel_pt cs_etm; do
	tracectl record -S --pmu $p -C 0,1 -m 16,16 -o w.data -- /mt_work 2 3000 0 2>w.err &
	wpid=$!
	sleep 1
	kill -USR2 $wpid
	sleep 1
	kill -USR2 $wpid
	wait $wpid
	rc=$?; cat w.err
	check snapshot-wrap-$p-status test "$rc" = 0
	check snapshot-wrap-$p-count grep -q 'tracectl record: 3 snapshots' w.err
	lap=; [ $p = intel_pt ] && lap="--lap 65536"
	check_aux --snapshot $lap w.data | tee w.chk
	check snapshot-wrap-$p-bytes grep -q 'check_aux: OK' w.chk
	check snapshot-wrap-$p-whole grep -q 'aux_bytes_reported=393216 ' w.chk
done

# 2e. -S SIZE and --snapshot-on: a snapshot when a uprobe on the workload's spin() fires (in
#     each of its two threads), plus the one at exit; each the latest 16 KiB of each of the
#     4 CPUs' 64 KiB areas.
tracectl record -S16K --snapshot-on /mt_work:spin --pmu intel_pt -a -m 16,16 -o h.data -- /mt_work 2 1000 0 2>h.err
rc=$?; cat h.err
check snapshot-on-status test "$rc" = 0
check snapshot-on-hits grep -q 'tracectl record: 2 --snapshot-on hits' h.err
n=$(sed -n 's/.*tracectl record: \([0-9]*\) snapshots.*/\1/p' h.err)
check snapshot-on-count test "${n:-0}" -ge 2
check_aux --snapshot --lap 65536 h.data | tee h.chk
check snapshot-on-bytes grep -q 'check_aux: OK' h.chk
# Each snapshot keeps at most 16 KiB per CPU; a CPU's area may not yet hold 16 KiB at an
# early hit (the guest's idle CPUs fill slowly), but by the snapshot at exit all four do.
snap_sizes_ok() {	# FILE, snapshots: one AUXTRACE per CPU per snapshot, none over 16 KiB
	sz=$(tracectl decode --show-events -i "$1" 2>/dev/null |
		sed -n 's/.* AUXTRACE trace_size=\(0x[0-9a-f]*\) .*/\1/p')
	k=0 full=0 big=0
	for v in $sz; do
		k=$((k + 1))
		[ $((v)) -le 16384 ] || big=1
		[ $k -gt $(($2 * 4 - 4)) ] && [ $((v)) -eq 16384 ] && full=$((full + 1))
	done
	echo "snapshot sizes: $sz"
	[ $k -eq $(($2 * 4)) ] && [ $big = 0 ] && [ $full = 4 ]
}
check snapshot-size snap_sizes_ok h.data "${n:-0}"

# 2f. --user asks the kernel for exclude_kernel (the module saw it); root's default is both.
tracectl record --pmu intel_pt --user -C 0 -o u.data -- /mt_work 1 100 0 2>u.err
rc=$?; cat u.err
check user-status test "$rc" = 0
check user-exclude-kernel test "$(cat /sys/module/fake_aux/parameters/exclude_kernel)" = 1
check user-exclude-user test "$(cat /sys/module/fake_aux/parameters/exclude_user)" = 0
tracectl record --pmu intel_pt -C 0 -o u.data -- /mt_work 1 100 0 2>u.err
check default-both test "$(cat /sys/module/fake_aux/parameters/exclude_kernel)" = 0

# 3. Too small an AUX area (1 page, 4 KiB per tick): truncation counted, bytes still right.
tracectl record --pmu cs_etm -m 16,1 -o s.data -- /mt_work 4 300 0 2>s.err
cat s.err
check auto-sink grep -q 'cs_etm: sink tmc_etr0, chosen by tracectl (ETR' s.err
check small-truncated grep -Eq 'truncated|LOST' s.err
check small-counted grep -Eq '[1-9][0-9]* truncated' s.err
check_aux s.data | tee s.chk
check small-bytes grep -q 'check_aux: OK' s.chk

# 3b. Too small a data ring (1 page) while the recorder is stopped and the workload maps and
#     forks thousands of times: the kernel drops side-band and says so in LOST records
#     (one per ring, once the workload maps again on every CPU); record counts the LOST
#     records and their events as the file holds them.
waitfor() { n=0; while [ ! -e "$1" ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done; }
# starve NAME [strand]: record sb_work's 3000 mappings into NAME.data with a 1-page data
# ring while the recorder is stopped (SIGSTOP from the workload's start until its burst is
# done); rc is record's exit status, NAME.err its stderr.
starve() {
	rm -f /tmp/ready /tmp/go /tmp/done /tmp/cont
	tracectl record --pmu intel_pt -m 1,16 -o $1.data -- /sb_work 3000 /tmp $2 2>$1.err &
	spid=$!
	waitfor /tmp/ready	# the workload runs: record's events are open
	kill -STOP $spid
	touch /tmp/go
	waitfor /tmp/done
	kill -CONT $spid
	touch /tmp/cont
	wait $spid
	rc=$?; cat $1.err
}
starve l
check lost-status test "$rc" = 0
check_aux l.data | tee l.chk
check lost-file grep -q 'check_aux: OK' l.chk
check lost-summary grep -Eq '[1-9][0-9]* LOST records \([1-9][0-9]* events\)' l.err
lr=$(sed -n 's/.*; \([0-9]*\) LOST records (\([0-9]*\) events).*/\1 \2/p' l.err)
lf=$(sed -n 's/.* lost=\([0-9]*\) lost_events=\([0-9]*\) .*/\1 \2/p' l.chk)
echo "VM: LOST records (events): summary $lr, file $lf"
check lost-counted test -n "$lr" -a "$lr" = "$lf"
# 3000 mappings while stopped, 4 rings of 4 KiB kept: most of them are lost, and said.
check lost-most test "${lr#* }" -ge 2000
# The kernel's own count (PERF_FORMAT_LOST, Linux 6.0+) is at least what its LOST records said.
lk=$(sed -n "s/.*(\([0-9]*\) events), \([0-9]*\) lost by the kernel's count (\([0-9]*\) in no LOST record).*/\1 \2 \3/p" l.err)
echo "VM: lost: LOST records' events, kernel's count, in no LOST record: $lk"
set -- $lk 0 0 0
check lost-kernel-count test -n "$lk" -a "${2:-0}" -ge "${1:-1}"

# 3c. The same without the re-map: the burst on CPU 0, then the workload moves to the last
#     CPU and exits from there. CPU 0's ring takes no record after its losses, so the kernel
#     writes no LOST record for them; record still counts them (the kernel's PERF_FORMAT_LOST
#     count, read after the last drain) and warns.
starve u strand
check unsaid-status test "$rc" = 0
check_aux u.data | tee u.chk
check unsaid-file grep -q 'check_aux: OK' u.chk
uk=$(sed -n "s/.*(\([0-9]*\) events), \([0-9]*\) lost by the kernel's count (\([0-9]*\) in no LOST record).*/\1 \2 \3/p" u.err)
uf=$(sed -n 's/.* lost_events=\([0-9]*\) .*/\1/p' u.chk)
echo "VM: unsaid: LOST records' events, kernel's count, in no LOST record: $uk; file's LOST events $uf"
set -- $uk 0 0 0
# The summary's LOST events are the file's; the kernel counted at least 2000 of the 3000
# mappings lost on CPU 0's 4 KiB ring that no LOST record tells of, and record warns.
check unsaid-file-agrees test -n "$uk" -a "$1" = "$uf"
check unsaid-counted test -n "$uk" -a "${3:-0}" -ge 2000 -a "$2" = "$(($1 + $3))"
# ... and the kernel's count is in the file too, as LOST_SAMPLES records (perf record's way).
check unsaid-lost-samples test "$(sed -n 's/.* lost_samples=\([0-9]*\) .*/\1/p' u.chk)" = "$2"
check unsaid-warning grep -q '^warning: [0-9]* records were lost on a full data ring and no LOST record tells of them' u.err

# 4. Two sessions on one sink: the second one is told at once.
tracectl record --pmu cs_etm --sink tmc_etr0 -C 0,1 -o A.data -- sleep 4 2>A.err &
apid=$!
sleep 1
tracectl record --pmu cs_etm --sink tmc_etr0 -C 2,3 -o B.data -- sleep 1 2>B.err
cat B.err
wait $apid
cat A.err
check busy-report grep -q 'sink tmc_etr0 refused the trace of cpus 2,3' B.err
check busy-free-sink grep -q 'tmc_etf0' B.err
check busy-first-ok grep -q ' 0 truncated' A.err
check_aux A.data | tee A.chk
check cpu-wide-bytes grep -q 'check_aux: OK' A.chk
check cpu-wide-switch grep -Eq 'switch_cpu_wide=[1-9]' A.chk

# 5. A sink claimed through sysfs is refused before opening.
echo 1 >/sys/bus/coresight/devices/tmc_etf0/enable_sink
tracectl record --pmu cs_etm --sink tmc_etf0 -o C.data -- true 2>C.err
rc=$?; cat C.err
echo 0 >/sys/bus/coresight/devices/tmc_etf0/enable_sink
check sysfs-claim-refused test "$rc" != 0
check sysfs-claim-msg grep -q 'enabled through sysfs' C.err
check sysfs-claim-nofile test ! -e C.data

# 6. AUX pause/resume on 6.1 (no perf_event_attr.aux_action): refused before anything is
#    opened, naming the feature and the kernel; never traced unpaused (make test-vm-new
#    proves the triggers on a kernel that has them).
tracectl record --pmu intel_pt --start-paused --resume-on /mt_work:main -o r.data -- /mt_work 1 10 0 2>r.err
rc=$?; cat r.err
check pause-refused test "$rc" != 0
check pause-refused-msg grep -q "needs Linux 6.13 or later; the running kernel $(uname -r) " r.err
check pause-refused-nofile test ! -e r.data
tracectl record --dry-run --pmu intel_pt --start-paused -- /mt_work 1 10 0 >r.out 2>&1
check pause-dry-run-note grep -q 'cannot open these events: AUX pause/resume' r.out

# 7. Sampled events (-e) alongside the trace, on any kernel: a tracepoint (raw data, formats
#    in the file's tracing data) and a uprobe on the workload's thread function (4 threads:
#    4 hits; the host's perf script counts them).
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
tracectl record --pmu cs_etm --sink tmc_etr0 -e sched:sched_switch -e /mt_work:spin \
	-o e.data -- /mt_work 4 300 0 2>e.err
rc=$?; cat e.err
check ev-status test "$rc" = 0
check_aux e.data | tee e.chk
check ev-aux-bytes grep -q 'check_aux: OK' e.chk
check ev-samples grep -Eq ' sample=[1-9]' e.chk
check ev-samples-raw grep -Eq ' sample_raw=[1-9]' e.chk
check ev-tracing-data grep -q "$(printf '\027\010Dtracing0.6')" e.data
check ev-format grep -q 'name: sched_switch' e.data
tracectl record --pmu intel_pt -a -e sched:sched_switch -o ea.data -- sleep 0.3 2>ea.err
check ev-cpu-wide test $? = 0
check_aux ea.data | tee ea.chk
check ev-cpu-wide-samples grep -Eq ' sample_raw=[1-9]' ea.chk

# The files go to the host through the second serial port (raw), for Debian's perf.
stty -F /dev/ttyS1 raw -echo 2>/dev/null
md5sum a.data p.data e.data | sed 's/^/VM-MD5 /'
tar -cf /dev/ttyS1 a.data p.data e.data

finish
