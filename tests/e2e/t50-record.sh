# tracectl record: the events --dry-run prints for the fixture sysfs trees (format-term bits,
# sinkid from the sink hash, CPUs, side-band and triggers), refusals before anything is
# opened, and pause/resume judged against the running kernel.
. "$TOP/tests/e2e/lib.sh"

# same_json FILE FILTER EXPECTED (jq -S on both sides)
same_json() {
	jq -S "$2" "$1" >"$TMP/.got" && printf '%s\n' "$3" | jq -S . >"$TMP/.want" &&
		diff -u "$TMP/.want" "$TMP/.got"
}
# The sink's hash as the fixture's sinks/ file holds it, as jq's "0x..." string.
sink_hex() { printf '"0x%x"' "$(cat "$FIX/$1/bus/event_source/devices/cs_etm/sinks/$2")"; }

rel=$(uname -r)
new_kernel=0
# aux_action (pause/resume) arrived in Linux 6.13
printf '%s\n' "$rel" | awk -F. '{exit !($1 > 6 || ($1 == 6 && $2 >= 13))}' && new_kernel=1

expect 'juno: --sink puts the hash from sinks/ into config2 (sinkid=config2:0-31), every CPU' '
	tracectl --sysfs-root "$FIX/juno" record -j -a --sink tmc_etr0 --dry-run >j 2>err &&
	[ ! -s err ] &&
	grep -qx "config2:0-31" "$FIX/juno/bus/event_source/devices/cs_etm/format/sinkid" &&
	h=$(sink_hex juno tmc_etr0) &&
	same_json j "[.events[] | select(.role == \"aux\") | {pmu, type, cpu, config, config2, config3}]" "[
		{\"pmu\": \"cs_etm\", \"type\": 10, \"cpu\": 0, \"config\": \"0x10004000\", \"config2\": $h, \"config3\": \"0x0\"},
		{\"pmu\": \"cs_etm\", \"type\": 10, \"cpu\": 1, \"config\": \"0x10004000\", \"config2\": $h, \"config3\": \"0x0\"},
		{\"pmu\": \"cs_etm\", \"type\": 10, \"cpu\": 2, \"config\": \"0x10004000\", \"config2\": $h, \"config3\": \"0x0\"},
		{\"pmu\": \"cs_etm\", \"type\": 10, \"cpu\": 3, \"config\": \"0x10004000\", \"config2\": $h, \"config3\": \"0x0\"},
		{\"pmu\": \"cs_etm\", \"type\": 10, \"cpu\": 4, \"config\": \"0x10004000\", \"config2\": $h, \"config3\": \"0x0\"},
		{\"pmu\": \"cs_etm\", \"type\": 10, \"cpu\": 5, \"config\": \"0x10004000\", \"config2\": $h, \"config3\": \"0x0\"}]" &&
	same_json j "[.events[] | select(.role == \"aux\") | [.aux_start_paused, .aux_pause, .aux_resume, .group_leader, .sample_id_all]] | unique" "[[0, 0, 0, null, 1]]"
'

expect 'juno: one side-band dummy per CPU with sample_id_all, COMM, MMAP2, FORK/EXIT, SWITCH' '
	tracectl --sysfs-root "$FIX/juno" record -j -a --dry-run >j &&
	same_json j "[.events[] | select(.role == \"sideband\") | .cpu]" "[0, 1, 2, 3, 4, 5]" &&
	same_json j "[.events[] | select(.role == \"sideband\") | {pmu, type, config, sample_type, sample_id_all, comm, comm_exec, mmap, mmap2, task, context_switch, group_leader}] | unique" "[
		{\"pmu\": \"software\", \"type\": 1, \"config\": \"0x9\", \"sample_type\": \"0x10086\",
		 \"sample_id_all\": 1, \"comm\": 1, \"comm_exec\": 1, \"mmap\": 1, \"mmap2\": 1, \"task\": 1,
		 \"context_switch\": 1, \"group_leader\": null}]" &&
	same_json j ".events | length" 12
'

expect 'juno: --config sets any format term by its bits; a command sets enable_on_exec' '
	tracectl --sysfs-root "$FIX/juno" record -j -C 3 --config cycacc,retstack,timestamp=0,preset=9,configid=0x5 --dry-run -- true >j &&
	same_json j "[.events[] | {role, cpu, config, config2, enable_on_exec}]" "[
		{\"role\": \"aux\", \"cpu\": 3, \"config\": \"0x20005009\", \"config2\": \"0x5a6509eae\", \"enable_on_exec\": 1},
		{\"role\": \"sideband\", \"cpu\": 3, \"config\": \"0x9\", \"config2\": \"0x0\", \"enable_on_exec\": 1}]"
'

expect_code 1 'an unknown term is refused, listing the valid ones' '
	tracectl --sysfs-root "$FIX/juno" record -a --config cyc=1 --dry-run >out 2>err
	rc=$?; cat err
	grep -q "no format term .cyc.; its terms: branch_broadcast, configid, contextid, contextid1, contextid2, cycacc, preset, retstack, sinkid, timestamp" err &&
	[ ! -s out ] && exit $rc
'

expect_code 1 'an unknown sink is refused, listing the sinks that would work' '
	tracectl --sysfs-root "$FIX/juno" record -a --sink tpiu0 --dry-run 2>err
	rc=$?; cat err
	grep -q "fatal: no sink .tpiu0. in cs_etm/sinks; sinks that would work: tmc_etf0, tmc_etr0" err && exit $rc
'

expect_code 1 'a sink enabled through sysfs (enable_sink reads 1) is refused, naming the free one' '
	cat "$FIX/juno-claimed/bus/coresight/devices/tmc_etr0/enable_sink" | grep -qx 1 &&
	tracectl --sysfs-root "$FIX/juno-claimed" record -a --sink tmc_etr0 --dry-run 2>err
	rc=$?; cat err
	grep -q "sink .tmc_etr0. is enabled through sysfs" err &&
	grep -q "use another sink: tmc_etf0$" err && exit $rc
'

expect 'a claimed sink does not hold back the other one' '
	tracectl --sysfs-root "$FIX/juno-claimed" record -j -a --sink tmc_etf0 --dry-run >j &&
	h=$(sink_hex juno-claimed tmc_etf0) &&
	same_json j "[.events[] | select(.role == \"aux\") | .config2] | unique" "[$h]"
'

expect 'ete-trbe: a per-CPU TRBE sink with its CPU' '
	tracectl --sysfs-root "$FIX/ete-trbe" record -j -C 2 --sink trbe2 --dry-run >j &&
	h=$(sink_hex ete-trbe trbe2) &&
	same_json j "[.events[] | {role, type, cpu, config2}]" "[
		{\"role\": \"aux\", \"type\": 9, \"cpu\": 2, \"config2\": $h},
		{\"role\": \"sideband\", \"type\": 1, \"cpu\": 2, \"config2\": \"0x0\"}]"
'

expect_code 1 'ete-trbe: a TRBE not reachable from every traced CPU is refused' '
	tracectl --sysfs-root "$FIX/ete-trbe" record -a --sink trbe2 --dry-run 2>err
	rc=$?; cat err
	grep -q "sink .trbe2. is not reachable from cpu 0; sinks that would work: none for these CPUs" err &&
	exit $rc
'

expect 'ete-trbe: without --sink each ETE uses its own TRBE (no sinkid)' '
	tracectl --sysfs-root "$FIX/ete-trbe" record -j -a --dry-run >j &&
	same_json j "[.events[] | select(.role == \"aux\") | [.cpu, .config2]]" "[[0, \"0x0\"], [1, \"0x0\"], [2, \"0x0\"], [3, \"0x0\"]]"
'

expect 'intel-pt: perf defaults, CPUs from devices/system/cpu/online, --config on top' '
	tracectl --sysfs-root "$FIX/intel-pt" record -j -a --config cyc,noretcomp --dry-run >j &&
	same_json j "[.events[] | select(.role == \"aux\") | [.pmu, .type, .cpu, .config]]" "[
		[\"intel_pt\", 8, 0, \"0x300ee03\"], [\"intel_pt\", 8, 1, \"0x300ee03\"],
		[\"intel_pt\", 8, 2, \"0x300ee03\"], [\"intel_pt\", 8, 3, \"0x300ee03\"]]"
'

expect_code 1 'intel-pt: --sink is refused' '
	tracectl --sysfs-root "$FIX/intel-pt" record -a --sink tmc_etr0 --dry-run 2>err
	rc=$?; cat err; grep -q "sink is for cs_etm" err && exit $rc
'

expect 'triggers: tracepoint id from tracefs, uprobe offset from ELF symbols, grouped per CPU' '
	tracectl --sysfs-root "$FIX/juno" record -j -C 0-1 --start-paused \
		--resume-on sched:sched_switch --pause-on "$TRACECTL:main" --dry-run >j 2>err &&
	same_json j "[.events[] | [.role, .pmu, .cpu, .type, .aux_start_paused, .aux_pause, .aux_resume, .group_leader]]" "[
		[\"aux\", \"cs_etm\", 0, 10, 1, 0, 0, 0],
		[\"pause\", \"uprobe\", 0, 7, 0, 1, 0, 0],
		[\"resume\", \"tracepoint\", 0, 2, 0, 0, 1, 0],
		[\"aux\", \"cs_etm\", 1, 10, 1, 0, 0, 3],
		[\"pause\", \"uprobe\", 1, 7, 0, 1, 0, 3],
		[\"resume\", \"tracepoint\", 1, 2, 0, 0, 1, 3],
		[\"sideband\", \"software\", 0, 1, 0, 0, 0, null],
		[\"sideband\", \"software\", 1, 1, 0, 0, 0, null]]" &&
	same_json j ".events[2].config" "\"0x$(printf %x "$(cat "$FIX/juno/kernel/tracing/events/sched/sched_switch/id")")\"" &&
	same_json j ".events[1].uprobe_path" "\"$(readlink -f "$TRACECTL")\"" &&
	off=$(jq -r ".events[1].config2" j) &&
	# the probe offset is main'"'"'s file offset: its address less its segment'"'"'s vaddr - offset
	want=$(readelf -sW "$TRACECTL" | awk "\$8 == \"main\" {print \$2}" | head -1) &&
	seg=$(readelf -lW "$TRACECTL" | awk "\$1 == \"LOAD\" && (\$7 ~ /E/ || \$8 ~ /E/) {print \$2, \$3}") &&
	[ $((off)) -eq $((0x$want - $(echo $seg | cut -d" " -f2) + $(echo $seg | cut -d" " -f1))) ]
'

expect 'text dry-run names the sink, its hash and every event' '
	tracectl --sysfs-root "$FIX/juno" record -C 0 --sink tmc_etf0 --dry-run >t &&
	grep -q "^pmu cs_etm type 10, sink tmc_etf0 ($(cat "$FIX/juno/bus/event_source/devices/cs_etm/sinks/tmc_etf0")), user and kernel, 2 events" t &&
	grep -q "^#0 cs_etm aux cpu 0" t && grep -q "^#1 software sideband cpu 0" t &&
	grep -q "comm 1 comm_exec 1 mmap 1 mmap2 1 task 1 context_switch 1" t
'

if [ $new_kernel = 1 ]; then
	expect 'pause/resume: this kernel ('"$rel"') has aux_action, dry-run prints no refusal' '
		tracectl --sysfs-root "$FIX/juno" record -C 0 --start-paused --dry-run >t 2>err &&
		! grep -q "cannot open" t && [ ! -s err ] && grep -q "aux_start_paused 1" t
	'
	expect_code 1 'pause/resume: accepted on this kernel; the fixture cs_etm then fails to open, no file' '
		rm -f perf.data
		tracectl --sysfs-root "$FIX/juno" record -C 0 --start-paused -- true 2>err
		rc=$?; cat err; ! grep -q "6.13" err && grep -q "^fatal: cs_etm event on cpu 0" err &&
			! grep -q "tracectl record: wrote" err && [ ! -e perf.data ] && exit $rc
	'
else
	expect 'pause/resume: dry-run on this kernel ('"$rel"') prints the events and says it cannot open them' '
		tracectl --sysfs-root "$FIX/juno" record -C 0 --start-paused --dry-run >t &&
		grep -q "note: the running kernel cannot open these events: .*6.13.* $rel " t &&
		grep -q "aux_start_paused 1" t
	'
	expect_code 1 'pause/resume: refused on this kernel ('"$rel"'), naming the feature and the kernel' '
		tracectl --sysfs-root "$FIX/juno" record -C 0 --pause-on sched:sched_switch -- true 2>err
		rc=$?; cat err
		grep -q "fatal: AUX pause/resume .* needs Linux 6.13 or later; the running kernel $rel " err &&
		exit $rc
	'
fi

if [ "$(tracectl list -j | jq ".pmus | length")" = 0 ]; then
	expect_code 1 'this machine: no AUX PMU, record refuses clearly and leaves perf.data alone' '
		echo old >perf.data &&
		tracectl record -a 2>err
		rc=$?; cat err
		grep -q "^fatal: no AUX-capable trace PMU (cs_etm, intel_pt) on this machine" err &&
		[ "$(cat perf.data)" = old ] && [ ! -e perf.data.old ] && exit $rc
	'
	expect 'this machine: --dry-run shows side-band events only' '
		tracectl record -j -C 0 --dry-run >j &&
		same_json j "[.events[] | [.role, .cpu]]" "[[\"sideband\", 0]]"
	'
else
	skip 'this machine: no-AUX-PMU refusal' 'this machine has a trace PMU'
fi

expect_code 2 'no target is a usage error' 'tracectl --sysfs-root "$FIX/juno" record --dry-run'
expect_code 2 '-p with a command is a usage error' 'tracectl --sysfs-root "$FIX/juno" record -p 1 -- true'
expect_code 2 'a bad --mmap-pages is a usage error' 'tracectl --sysfs-root "$FIX/juno" record -a -m 3,8 --dry-run'
expect_code 2 'a bad --pmu is a usage error' 'tracectl --sysfs-root "$FIX/juno" record -a --pmu arm_spe_0 --dry-run'
expect 'record -p is --pid (not the global --pretty); --pretty still works by name' '
	tracectl --sysfs-root "$FIX/juno" record -j -p 1 -C 0 --dry-run >j && [ $(wc -l <j) = 1 ] &&
	tracectl --sysfs-root "$FIX/juno" record --pretty -C 0 --dry-run >j && [ $(wc -l <j) -gt 3 ] &&
	jq -e ".events | length == 2" j
'

# --- user / kernel space (perf's /u and /k) ------------------------------------------------

expect '--user, --kernel and both set exclude_kernel/exclude_hv/exclude_user on the AUX event' '
	aux() {	# opts -> "[exclude_kernel, exclude_user]" of the AUX event
		tracectl --sysfs-root "$FIX/intel-pt" record -j "$@" -C 0 --dry-run -- true |
			jq -c "[.events[] | select(.role == \"aux\") | [.exclude_kernel, .exclude_user]]"
	}
	[ "$(aux --user)" = "[[1,0]]" ] && [ "$(aux --kernel)" = "[[0,1]]" ] &&
	[ "$(aux --user --kernel)" = "[[0,0]]" ]
'
# Without either option: what the caller may trace. An unprivileged caller (setpriv drops
# every capability) gets user space only where kernel.perf_event_paranoid is above 1.
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$(id -u)" = 0 ]; then
	unpriv() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }
else
	unpriv() { "$@"; }
fi
if [ "$paranoid" -gt 1 ]; then
	expect "unprivileged at perf_event_paranoid $paranoid: user space only, and the note says why" '
		unpriv "$TRACECTL" --sysfs-root "$FIX/intel-pt" record -C 0 --dry-run -- true >out &&
		grep -q "^pmu intel_pt type 8, user space only, " out &&
		grep -qx "note: tracing user space only: kernel.perf_event_paranoid is $paranoid and tracectl has neither CAP_PERFMON nor CAP_SYS_ADMIN (--kernel asks for the kernel too)" out &&
		grep -q "exclude_kernel 1 exclude_user 0" out &&
		unpriv "$TRACECTL" --sysfs-root "$FIX/intel-pt" record -j -C 0 --dry-run -- true >j &&
		same_json j "[.space, (.space_reason | test(\"paranoid is $paranoid\"))]" "[\"user space only\", true]"
	'
else
	expect "unprivileged at perf_event_paranoid $paranoid: the kernel is traced too" '
		unpriv "$TRACECTL" --sysfs-root "$FIX/intel-pt" record -j -C 0 --dry-run -- true >j &&
		same_json j "[.space, .space_reason]" "[\"user and kernel\", null]"
	'
fi
if grep -q "^CapEff:.*[1-9a-f]" /proc/self/status && [ "$(id -u)" = 0 ]; then
	expect 'root (CAP_SYS_ADMIN): user and kernel by default, no note' '
		tracectl --sysfs-root "$FIX/intel-pt" record -C 0 --dry-run -- true >out &&
		grep -q "^pmu intel_pt type 8, user and kernel, " out && ! grep -q "^note:" out
	'
else
	skip 'root: user and kernel by default' 'not run as root'
fi
expect_code 2 'an emulated trace refuses --kernel, naming it' '
	tracectl record --pmu emulated --kernel -- true 2>err; rc=$?
	grep -q "kernel: an emulated trace follows user space only" err && exit $rc
'

# --- the sink tracectl chooses, per-thread sinks, dry-run JSON figures ----------------------

expect 'juno without --sink: the ETR every CPU reaches, named in the dry run' '
	tracectl --sysfs-root "$FIX/juno" record -a --dry-run >out &&
	grep -q "^pmu cs_etm type 10, sink tmc_etr0 (0xa6509eae, chosen by tracectl), " out &&
	tracectl --sysfs-root "$FIX/juno" record -j -a --dry-run >j &&
	same_json j "{sink, sink_hash, sink_automatic}" "{\"sink\": \"tmc_etr0\", \"sink_hash\": \"0xa6509eae\", \"sink_automatic\": true}" &&
	same_json j "[.events[] | select(.role == \"aux\") | .config2] | unique" "[\"0xa6509eae\"]"
'
expect 'juno-claimed: the ETR is held through sysfs, so the ETF' '
	tracectl --sysfs-root "$FIX/juno-claimed" record -j -a --dry-run >j &&
	same_json j "{sink, sink_automatic}" "{\"sink\": \"tmc_etf0\", \"sink_automatic\": true}"
'
expect 'ete-trbe: no sink in common, the kernel takes each CPU'"'"'s TRBE (sinkid 0)' '
	tracectl --sysfs-root "$FIX/ete-trbe" record -j -a --dry-run >j &&
	same_json j "{sink, sink_automatic}" "{\"sink\": null, \"sink_automatic\": false}" &&
	same_json j "[.events[] | select(.role == \"aux\") | .config2] | unique" "[\"0x0\"]"
'
expect '--per-thread --sink: one event for the task, the sink in sinkid' '
	tracectl --sysfs-root "$FIX/juno" record -j --per-thread --sink tmc_etf0 --dry-run -- true >j &&
	same_json j "[.events[] | select(.role == \"aux\") | [.cpu, .config2]]" "[[-1, \"0x97979549\"]]" &&
	same_json j "{sink, sink_automatic}" "{\"sink\": \"tmc_etf0\", \"sink_automatic\": false}"
'
expect 'dry-run -j carries the figures the text shows: PMU, space, ring sizes, snapshot mode' '
	tracectl --sysfs-root "$FIX/juno" record -j -a -S -m 64,2048 --user --dry-run >j &&
	same_json j "{pmu, space, data_pages, aux_pages, snapshot}" "{\"pmu\": \"cs_etm\", \"space\": \"user space only\", \"data_pages\": 64, \"aux_pages\": 2048, \"snapshot\": true}" &&
	tracectl --sysfs-root "$FIX/juno" record -a -S -m 64,2048 --user --dry-run >out &&
	grep -q "user space only, 12 events, rings: data 64 pages, aux 2048 pages, snapshot mode$" out
'

# --- snapshot size and triggers ------------------------------------------------------------

expect '-S SIZE: the latest SIZE bytes per snapshot; the AUX area grows to hold it unless -m sets it' '
	tracectl --sysfs-root "$FIX/intel-pt" record -j --snapshot=16M -C 0 --dry-run -- true >j &&
	same_json j "{snapshot, snapshot_size, aux_pages}" "{\"snapshot\": true, \"snapshot_size\": 16777216, \"aux_pages\": 4096}" &&
	tracectl --sysfs-root "$FIX/intel-pt" record -S64K -m ,64 -C 0 --dry-run -- true >out &&
	grep -q "aux 64 pages, snapshot mode$" out &&
	grep -qx "snapshots of the latest 65536 bytes of each AUX area" out &&
	tracectl --sysfs-root "$FIX/intel-pt" record -j -S -C 0 --dry-run -- true >j &&
	same_json j "{snapshot, snapshot_size, aux_pages}" "{\"snapshot\": true, \"snapshot_size\": 0, \"aux_pages\": 1024}"
'
expect_code 2 '-S SIZE larger than the AUX area -m gives is refused' '
	tracectl --sysfs-root "$FIX/intel-pt" record -S1M -m ,8 -C 0 --dry-run -- true 2>err; rc=$?
	grep -q "S 1048576 is larger than the AUX area (-m ...,8 pages" err && exit $rc
'
expect_code 2 'a bad -S size is refused, naming it' '
	tracectl --sysfs-root "$FIX/intel-pt" record -S4X -C 0 --dry-run -- true 2>err; rc=$?
	grep -q "bad -S/--snapshot size .4X." err && exit $rc
'
expect '--snapshot-on: a sampled trigger event per CPU, no group, no aux_action' '
	tracectl --sysfs-root "$FIX/juno" record -j -S --snapshot-on cycles/period=100000/ -C 0,1 --dry-run -- true >j &&
	same_json j "[.events[] | select(.role == \"snapshot\") | [.cpu, .trigger, .group_leader, .aux_pause, .sample_period]]" \
		"[[0, \"cycles/period=100000/\", null, 0, 100000], [1, \"cycles/period=100000/\", null, 0, 100000]]"
'
expect_code 2 '--snapshot-on without -S is a usage error' '
	tracectl --sysfs-root "$FIX/juno" record --snapshot-on cycles/period=100000/ -C 0 --dry-run -- true 2>err; rc=$?
	grep -q "snapshot-on takes snapshots: it needs -S" err && exit $rc
'
expect_code 2 '--snapshot-on a counter is refused in emulated mode, naming it' '
	tracectl record --pmu emulated -S --snapshot-on cycles/period=1000/ -- true 2>err; rc=$?
	grep -q -- "--snapshot-on .cycles/period=1000/.: a counter" err && exit $rc
'
