# record's sampled events (-e) and trigger groups opened on this machine's kernel for real
# through the record loop (tests/tools/rec_nopmu: with no AUX PMU the side-band event owns
# each CPU's ring), their samples written with attrs, names and perf's tracing data; Debian's
# perf script is the reader that must print them. tracectl record itself refuses without an
# AUX PMU and says why. A uprobe a command's threads inherit goes through tracefs's
# uprobe_events (lib/record/record_uprobe.h): the uprobe PMU's copies would make its forks fail.
. "$TOP/tests/e2e/lib.sh"

REC="${TC_TOOLS:-$TOP/build/obj/tools}/rec_nopmu"

same_json() {
	jq -S "$2" "$1" >"$TMP/.got" && printf '%s\n' "$3" | jq -S . >"$TMP/.want" &&
		diff -u "$TMP/.want" "$TMP/.got"
}

expect 'dry-run: -e events sample in no group, without aux_action, enabled at exec' '
	tracectl --sysfs-root "$FIX/juno" record -j -C 0 -e sched:sched_switch \
		-e "$TRACECTL:main" --dry-run -- true >j &&
	same_json j "[.events[] | [.role, .pmu, .trigger != null, .aux_pause, .aux_resume, .group_leader, .enable_on_exec, .disabled]]" "[
		[\"aux\", \"cs_etm\", false, 0, 0, null, 1, 1],
		[\"sample\", \"tracepoint\", true, 0, 0, null, 1, 1],
		[\"sample\", \"uprobe\", true, 0, 0, null, 1, 1],
		[\"sideband\", \"software\", false, 0, 0, null, 1, 1]]" &&
	# RAW for the tracepoint (0x400), IP|TID|TIME|CPU|IDENTIFIER for both
	same_json j "[.events[] | select(.role == \"sample\") | .sample_type]" "[\"0x10487\", \"0x10087\"]"
'

expect_code 2 'a ninth -e is a usage error' '
	tracectl --sysfs-root "$FIX/juno" record -C 0 $(for i in 1 2 3 4 5 6 7 8 9; do
		printf -- "-e sched:sched_switch "; done) --dry-run -- true
'

if [ "$(tracectl list -j | jq ".pmus | length")" = 0 ]; then
	expect_code 1 'this machine: record -e without an AUX PMU refuses clearly, no file' '
		tracectl record -e sched:sched_switch -o s.data -- true 2>err
		rc=$?; cat err
		grep -q "^fatal: no AUX-capable trace PMU (cs_etm, intel_pt) on this machine" err &&
		[ ! -e s.data ] && exit $rc
	'
fi

command -v perf >/dev/null || { skip 'samples read back by perf script' 'no perf'; exit 0; }
# perf mounts tracefs where it is missing; record asks the user to: as root, do it here.
[ -d /sys/kernel/tracing/events/sched ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
[ -d /sys/kernel/tracing/events/sched ] ||
	{ skip 'tracepoint samples on this kernel' 'tracefs is not mounted at /sys/kernel/tracing'; exit 0; }
if ! "$REC" -o probe.data -- true >/dev/null 2>err; then
	skip 'record loop on this kernel' "perf_event_open refused: $(cat err)"
	exit 0
fi

expect 'a tracepoint sampled with -e: perf script prints each switch with its fields' '
	"$REC" -o tp.data -e sched:sched_switch -- sleep 0.05 &&
	perf script -i tp.data >s 2>serr && cat s &&
	grep -Eq "^ *sleep +[0-9]+ \[[0-9]+\] +[0-9.]+: +sched:sched_switch: prev_comm=sleep prev_pid=[0-9]+ .* ==> next_comm=.* next_pid=[0-9]+" s &&
	! grep -qv "sched:sched_switch: prev_comm=" s
'

expect 'the file has tracing data and names its events (EVENT_DESC)' '
	perf report --header-only -i tp.data >h 2>&1 &&
	grep -q "^# event : name = sched:sched_switch, .*sample_type = IP|TID|TIME|CPU|RAW|IDENTIFIER" h &&
	grep -q "^# event : name = dummy:u, " h &&
	! grep -E "^# missing features:.*(TRACING_DATA|EVENT_DESC)" h &&
	# the feature begins with perf'"'"'s magic and version, then the page header
	LC_ALL=C grep -aq "$(printf "\027\010Dtracing0.6")" tp.data &&
	LC_ALL=C grep -aq "header_page" tp.data && LC_ALL=C grep -aq "name: sched_switch" tp.data
'

expect 'a uprobe sampled with -e fires once per call; the command still forks (tracefs probe)' '
	"$REC" -o up.data -e "$TRACECTL:main" -- sh -c "\"$TRACECTL\" --version; \"$TRACECTL\" --version" >out 2>err &&
	cat out err && ! grep -q "Cannot fork" err && [ "$(grep -c "^tracectl " out)" = 2 ] &&
	perf script -i up.data >s 2>/dev/null && cat s &&
	# named from EVENT_DESC, printed through the probe'"'"'s format from the tracing data
	[ "$(grep -Ec "tracectl:main: \([0-9a-f]+\)$" s)" = 2 ] &&
	# the tracefs probe is gone once record is done
	! grep -q "^p:tracectl_" /sys/kernel/tracing/uprobe_events
'

expect 'uprobes a killed record left are removed and named; a live record'"'"'s stay' '
	ue=/sys/kernel/tracing/uprobe_events
	sh -c "exit 0" & dead=$!; wait $dead
	off=0x$(nm "$TRACECTL" | sed -n "s/^0*\([0-9a-f]*\) T main\$/\1/p")
	echo "p:tracectl_$dead/left $TRACECTL:$off" >>$ue &&
	echo "p:tracectl_$$/live $TRACECTL:$off" >>$ue &&
	"$REC" -o k.data -e "$TRACECTL:main" -- "$TRACECTL" --version >out 2>err; rc=$?
	cat err; echo "-:tracectl_$$/live" >>$ue; echo "-:tracectl_$dead/left" >>$ue 2>/dev/null
	[ $rc = 0 ] &&
	grep -q "warning: removed 1 uprobe that tracectl record $dead (gone without cleaning up, e.g. killed) left in /sys/kernel/tracing/uprobe_events" err &&
	! grep -q "tracectl_$dead/" $ue && [ "$(grep -c "removed" err)" = 1 ]
'

expect 'a counter sampled with -e: every 10th page fault, placed through the side-band MMAP2' '
	"$REC" -o c.data -e page-faults/period=10/ -- sleep 0.01 &&
	perf script -i c.data >s 2>/dev/null && cat s &&
	[ "$(grep -c " 10 page-faults/period=10/: .* (/.*)$" s)" -gt 0 ] &&
	! grep -v " 10 page-faults/period=10/: " s | grep -q .
'

expect 'pause triggers grouped under a leader open and sample (tracepoint and uprobe)' '
	"$REC" -g -o g.data -P sched:sched_switch -P "$TRACECTL:main" -- "$TRACECTL" list >/dev/null &&
	perf report --header-only -i g.data >h 2>&1 &&
	grep -q "^# event : name = sched:sched_switch, " h &&
	perf script -i g.data >s 2>/dev/null && cat s &&
	[ "$(grep -Ec "tracectl:main: \([0-9a-f]+\)$" s)" = 1 ] &&
	"$REC" -g -o g2.data -P sched:sched_switch -- sleep 0.05 &&
	perf script -i g2.data 2>/dev/null | grep -q "sched:sched_switch: prev_comm=sleep "
'

expect 'system-wide (-a): samples from every task, all attributed' '
	"$REC" -a -o a.data -e sched:sched_switch -- sleep 0.05 &&
	perf script -i a.data >s 2>/dev/null &&
	[ "$(grep -c "sched:sched_switch: prev_comm=" s)" -gt 2 ] &&
	! grep -v "sched:sched_switch: prev_comm=" s | grep -q .
'
