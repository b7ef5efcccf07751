# tracectl list on the fixture sysfs trees in tests/fixtures/sysfs: what each tree holds is
# exactly what the listing says, broken trees give warnings and exit 3, bad roots are fatal.
. "$TOP/tests/e2e/lib.sh"

# same_json FILE FILTER EXPECTED: the filter's result on FILE is the EXPECTED document
# (both sorted with jq -S, so key order does not matter but array order does).
same_json() {
	jq -S "$2" "$1" >"$TMP/.got" && printf '%s\n' "$3" | jq -S . >"$TMP/.want" &&
		diff -u "$TMP/.want" "$TMP/.got"
}

CS_FORMATS='{
	"branch_broadcast": "config:8", "configid": "config2:32-63", "contextid": "config:14",
	"contextid1": "config:14", "contextid2": "config:15", "cycacc": "config:12",
	"preset": "config:0-3", "retstack": "config:29", "sinkid": "config2:0-31",
	"timestamp": "config:28"
}'
BOTH='["tmc_etf0", "tmc_etr0"]'

# --- juno: 6 ETMv4, funnels -> ETF -> replicator -> ETR + TPIU --------------------------

expect 'juno -j: one PMU, cs_etm, type 10, nothing unsupported, no warnings' '
	tracectl --sysfs-root "$FIX/juno" list -j >j 2>err && [ ! -s err ] &&
	same_json j "[.pmus[] | {name, type}]" "[{\"name\": \"cs_etm\", \"type\": 10}]" &&
	same_json j ".devices" "\"$FIX/juno/bus/event_source/devices\"" &&
	same_json j "{unsupported, warnings}" "{\"unsupported\": [], \"warnings\": []}"
'
expect 'juno -j: the format terms the tree holds' '
	tracectl --sysfs-root "$FIX/juno" list -j >j &&
	same_json j ".pmus[0].formats" "$CS_FORMATS"
'
expect 'juno -j: sinks and their hashes as the kernel prints them (no TPIU)' '
	tracectl --sysfs-root "$FIX/juno" list -j >j &&
	same_json j ".pmus[0].sinks" "[
		{\"name\": \"tmc_etf0\", \"hash\": \"0x97979549\", \"kind\": \"ETF\", \"claimed\": false},
		{\"name\": \"tmc_etr0\", \"hash\": \"0xa6509eae\", \"kind\": \"ETR\", \"claimed\": false}]" &&
	for s in tmc_etf0 tmc_etr0; do
		jq -e --arg s $s --arg h "$(cat "$FIX/juno/bus/event_source/devices/cs_etm/sinks/$s")" \
			"any(.pmus[0].sinks[]; .name == \$s and .hash == \$h)" j >/dev/null || exit 1
	done
'
expect 'juno -j: per-CPU tracer, trace ID and reachable sinks; common sinks' '
	tracectl --sysfs-root "$FIX/juno" list -j >j &&
	same_json j ".pmus[0].cpus" "[
		{\"cpu\": 0, \"device\": \"etm0\", \"etm\": \"ETMv4\", \"trace_id\": \"0x10\", \"sinks\": $BOTH},
		{\"cpu\": 1, \"device\": \"etm1\", \"etm\": \"ETMv4\", \"trace_id\": \"0x12\", \"sinks\": $BOTH},
		{\"cpu\": 2, \"device\": \"etm2\", \"etm\": \"ETMv4\", \"trace_id\": \"0x14\", \"sinks\": $BOTH},
		{\"cpu\": 3, \"device\": \"etm3\", \"etm\": \"ETMv4\", \"trace_id\": \"0x16\", \"sinks\": $BOTH},
		{\"cpu\": 4, \"device\": \"etm4\", \"etm\": \"ETMv4\", \"trace_id\": \"0x18\", \"sinks\": $BOTH},
		{\"cpu\": 5, \"device\": \"etm5\", \"etm\": \"ETMv4\", \"trace_id\": \"0x1a\", \"sinks\": $BOTH}]" &&
	same_json j ".pmus[0].common_sinks" "$BOTH" &&
	same_json j ".pmus[0] | keys" "[\"common_sinks\", \"cpus\", \"formats\", \"graph\", \"name\", \"sinks\", \"type\"]"
'
expect 'juno text listing: type, sinks, one line per CPU, common sinks' '
	tracectl --sysfs-root "$FIX/juno" list >out 2>err && [ ! -s err ] &&
	[ "$(head -n 1 out)" = "cs_etm: type 10" ] &&
	grep -qx "    tmc_etr0             0xa6509eae   ETR" out &&
	grep -qx "    cpu0    ETMv4  trace id 0x10  etm0       sinks: tmc_etf0 tmc_etr0" out &&
	grep -qx "    cpu5    ETMv4  trace id 0x1a  etm5       sinks: tmc_etf0 tmc_etr0" out &&
	[ "$(grep -c "^    cpu[0-9]" out)" -eq 6 ] &&
	[ "$(tail -n 1 out)" = "  common sinks: tmc_etf0 tmc_etr0" ] &&
	! grep -q "not supported" out
'
expect 'list --sinks: the sink names, one per line' '
	tracectl --sysfs-root "$FIX/juno" list --sinks >out &&
	printf "tmc_etf0\ntmc_etr0\n" | cmp - out &&
	tracectl --sysfs-root "$FIX/juno" list -s >out2 && cmp out out2 &&
	tracectl --sysfs-root "$FIX/ete-trbe" list --sinks >out &&
	printf "trbe0\ntrbe1\ntrbe2\ntrbe3\n" | cmp - out &&
	tracectl --sysfs-root "$FIX/tc2" list --sinks >out && printf "etb0\n" | cmp - out
'
expect 'list --sinks -j: a JSON array; none on Intel PT' '
	tracectl --sysfs-root "$FIX/juno" list --sinks -j >j && same_json j . "$BOTH" &&
	tracectl --sysfs-root "$FIX/intel-pt" list --sinks >out && [ ! -s out ] &&
	tracectl --sysfs-root "$FIX/intel-pt" list --sinks -j >j && same_json j . "[]"
'
expect '-p: indented JSON with the same content' '
	tracectl --sysfs-root "$FIX/juno" -p list >p &&
	tracectl --sysfs-root "$FIX/juno" -j list >j &&
	[ "$(wc -l <p)" -gt 20 ] && [ "$(wc -l <j)" -eq 1 ] &&
	jq -S . p >p.s && jq -S . j >j.s && cmp p.s j.s
'
expect 'TRACECTL_SYSFS_ROOT selects the tree; --sysfs-root wins over it' '
	TRACECTL_SYSFS_ROOT="$FIX/juno" tracectl list -j >env.j &&
	tracectl --sysfs-root "$FIX/juno" list -j >opt.j && cmp env.j opt.j &&
	TRACECTL_SYSFS_ROOT="$FIX/empty" tracectl --sysfs-root "$FIX/juno" list -j >both.j &&
	cmp both.j opt.j &&
	TRACECTL_SYSFS_ROOT="$FIX/empty" tracectl list >out && grep -q "^no trace PMU found" out
'

# --- tc2: 32-bit, PTM and ETMv3 ---------------------------------------------------------

expect 'tc2 -j: PTM and ETMv3 tracers, trace IDs from traceid, ETB sink' '
	tracectl --sysfs-root "$FIX/tc2" list -j >j 2>err && [ ! -s err ] &&
	same_json j ".pmus[0].cpus" "[
		{\"cpu\": 0, \"device\": \"etm0\", \"etm\": \"PTM\", \"trace_id\": \"0x10\", \"sinks\": [\"etb0\"]},
		{\"cpu\": 1, \"device\": \"etm1\", \"etm\": \"PTM\", \"trace_id\": \"0x12\", \"sinks\": [\"etb0\"]},
		{\"cpu\": 2, \"device\": \"etm2\", \"etm\": \"ETMv3\", \"trace_id\": \"0x14\", \"sinks\": [\"etb0\"]},
		{\"cpu\": 3, \"device\": \"etm3\", \"etm\": \"ETMv3\", \"trace_id\": \"0x16\", \"sinks\": [\"etb0\"]},
		{\"cpu\": 4, \"device\": \"etm4\", \"etm\": \"ETMv3\", \"trace_id\": \"0x18\", \"sinks\": [\"etb0\"]}]" &&
	same_json j ".pmus[0].formats" "$CS_FORMATS" &&
	same_json j ".pmus[0] | {type, sinks, common_sinks}" "{\"type\": 8,
		\"sinks\": [{\"name\": \"etb0\", \"hash\": \"0x75d7d72c\", \"kind\": \"ETB\", \"claimed\": false}], \"common_sinks\": [\"etb0\"]}"
'

# --- ete-trbe: ETE with per-CPU TRBE ------------------------------------------------------

expect 'ete-trbe -j: ETE tracers, each CPU reaches only its own TRBE, no common sink' '
	tracectl --sysfs-root "$FIX/ete-trbe" list -j >j 2>err && [ ! -s err ] &&
	same_json j ".pmus[0].cpus" "[
		{\"cpu\": 0, \"device\": \"ete0\", \"etm\": \"ETE\", \"trace_id\": \"0x10\", \"sinks\": [\"trbe0\"]},
		{\"cpu\": 1, \"device\": \"ete1\", \"etm\": \"ETE\", \"trace_id\": \"0x12\", \"sinks\": [\"trbe1\"]},
		{\"cpu\": 2, \"device\": \"ete2\", \"etm\": \"ETE\", \"trace_id\": \"0x14\", \"sinks\": [\"trbe2\"]},
		{\"cpu\": 3, \"device\": \"ete3\", \"etm\": \"ETE\", \"trace_id\": \"0x16\", \"sinks\": [\"trbe3\"]}]" &&
	same_json j ".pmus[0].common_sinks" "[]" &&
	same_json j "[.pmus[0].sinks[] | {name, hash}]" "[
		{\"name\": \"trbe0\", \"hash\": \"0x3744496a\"}, {\"name\": \"trbe1\", \"hash\": \"0x58ca323\"},
		{\"name\": \"trbe2\", \"hash\": \"0xd3d4fcdc\"}, {\"name\": \"trbe3\", \"hash\": \"0xa21d5695\"}]" &&
	same_json j "[.pmus[0].sinks[] | [.kind, .claimed]] | unique" "[[\"TRBE\", false]]"
'
expect 'ete-trbe: contextid is config:15 (VHE kernel), arm_spe_0 listed as unsupported' '
	tracectl --sysfs-root "$FIX/ete-trbe" list -j >j &&
	same_json j ".pmus[0].formats.contextid" "\"config:15\"" &&
	same_json j "[.pmus[].name]" "[\"cs_etm\"]" &&
	same_json j ".unsupported" "[\"arm_spe_0\"]" &&
	tracectl --sysfs-root "$FIX/ete-trbe" list >out &&
	grep -qx "arm_spe_0: not supported (tracectl handles cs_etm and intel_pt)" out &&
	grep -qx "  common sinks: (none)" out
'

# --- intel-pt ------------------------------------------------------------------------------

expect 'intel-pt -j: intel_pt type 8 with the format terms of pt.c' '
	tracectl --sysfs-root "$FIX/intel-pt" list -j >j 2>err && [ ! -s err ] &&
	same_json j "[.pmus[] | {name, type}]" "[{\"name\": \"intel_pt\", \"type\": 8}]" &&
	same_json j ".pmus[0].formats" "{
		\"pt\": \"config:0\", \"cyc\": \"config:1\", \"pwr_evt\": \"config:4\",
		\"fup_on_ptw\": \"config:5\", \"mtc\": \"config:9\", \"tsc\": \"config:10\",
		\"noretcomp\": \"config:11\", \"ptw\": \"config:12\", \"branch\": \"config:13\",
		\"mtc_period\": \"config:14-17\", \"cyc_thresh\": \"config:19-22\",
		\"psb_period\": \"config:24-27\", \"event\": \"config:31\", \"notnt\": \"config:55\"}" &&
	same_json j ".pmus[0] | keys" "[\"caps\", \"formats\", \"name\", \"type\"]"
'
expect 'intel-pt -j: caps as the files hold them; intel_bts unsupported' '
	tracectl --sysfs-root "$FIX/intel-pt" list -j >j &&
	same_json j ".pmus[0].caps" "{
		\"max_subleaf\": \"1\", \"cr3_filtering\": \"1\", \"psb_cyc\": \"1\",
		\"ip_filtering\": \"1\", \"mtc\": \"1\", \"ptwrite\": \"0\", \"power_event_trace\": \"0\",
		\"event_trace\": \"0\", \"tnt_disable\": \"0\", \"topa_output\": \"1\",
		\"topa_multiple_entries\": \"1\", \"single_range_output\": \"1\", \"output_subsys\": \"0\",
		\"payloads_lip\": \"0\", \"num_address_ranges\": \"2\", \"mtc_periods\": \"249\",
		\"cycle_thresholds\": \"3fff\", \"psb_periods\": \"3f\"}" &&
	same_json j "{unsupported, warnings}" "{\"unsupported\": [\"intel_bts\"], \"warnings\": []}"
'
expect 'intel-pt text listing' '
	tracectl --sysfs-root "$FIX/intel-pt" list >out &&
	[ "$(head -n 1 out)" = "intel_pt: type 8" ] &&
	grep -qx "    psb_period           config:24-27" out &&
	grep -qx "    cycle_thresholds             3fff" out &&
	grep -qx "intel_bts: not supported (tracectl handles cs_etm and intel_pt)" out &&
	! grep -q "sinks" out
'

# --- no trace PMU ----------------------------------------------------------------------------

expect_code 0 'empty: "no trace PMU found", exit 0, nothing on stderr' '
	tracectl --sysfs-root "$FIX/empty" list >out 2>err; rc=$?
	[ "$(cat out)" = "no trace PMU found in $FIX/empty/bus/event_source/devices (looked for cs_etm and intel_pt)" ] &&
	[ ! -s err ] && exit $rc
'
expect 'empty -j: no PMUs, nothing unsupported, no warnings' '
	tracectl --sysfs-root "$FIX/empty" list -j >j &&
	same_json j "{pmus, unsupported, warnings}" "{\"pmus\": [], \"unsupported\": [], \"warnings\": []}"
'
if [ -e /sys/bus/event_source/devices/cs_etm ] || [ -e /sys/bus/event_source/devices/intel_pt ]; then
	skip 'the real /sys has no trace PMU' 'this machine has one'
else
	expect_code 0 'the real /sys: no trace PMU, exit 0' '
		tracectl list >out 2>err; rc=$?
		grep -qx "no trace PMU found in /sys/bus/event_source/devices (looked for cs_etm and intel_pt)" out &&
		[ ! -s err ] && exit $rc
	'
fi

# --- broken trees: a warning naming the file, the rest still listed, exit 3 -----------------

B="bus/event_source/devices/cs_etm"
expect_code 3 'broken-type: warning names the missing type file; type unknown' '
	tracectl --sysfs-root "$FIX/broken-type" list >out 2>err; rc=$?
	printf "warning: cs_etm: PMU type unknown: cannot open %s: No such file or directory\n" \
		"$FIX/broken-type/$B/type" | cmp - err &&
	[ "$(head -n 1 out)" = "cs_etm: type unknown" ] &&
	grep -qx "    timestamp            config:28" out &&
	grep -qx "    cpu2    ETMv4  trace id 0x14  etm2       sinks: tmc_etf0 tmc_etr0" out &&
	grep -qx "  common sinks: tmc_etf0 tmc_etr0" out && exit $rc
'
expect_code 3 'broken-type -j: type null, warning in the document, rest intact' '
	tracectl --sysfs-root "$FIX/broken-type" list -j >j 2>/dev/null; rc=$?
	same_json j ".pmus[0].type" "null" &&
	same_json j ".pmus[0].formats" "$CS_FORMATS" &&
	same_json j "[.pmus[0].cpus[] | .etm]" "[\"ETMv4\", \"ETMv4\", \"ETMv4\"]" &&
	same_json j ".warnings" "[\"cs_etm: PMU type unknown: cannot open $FIX/broken-type/$B/type: No such file or directory\"]" &&
	exit $rc
'
expect_code 3 'broken-format: warning names the file and its text; other terms listed' '
	tracectl --sysfs-root "$FIX/broken-format" list >out 2>err; rc=$?
	printf "warning: %s: format term '\''timestamp'\'' is '\''config9:banana'\'', expected config[123]:BIT[-BIT][,...]\n" \
		"$FIX/broken-format/$B/format/timestamp" | cmp - err &&
	! grep -q timestamp out && grep -qx "    sinkid               config2:0-31" out &&
	grep -qx "  common sinks: tmc_etf0 tmc_etr0" out && exit $rc
'
expect_code 3 'broken-format -j: the bad term is left out, nine remain' '
	tracectl --sysfs-root "$FIX/broken-format" list -j >j 2>/dev/null; rc=$?
	same_json j ".pmus[0].formats" "$(printf "%s" "$CS_FORMATS" | jq "del(.timestamp)")" &&
	same_json j ".warnings | length" 1 && same_json j ".pmus[0].type" 10 && exit $rc
'
expect_code 3 'broken-link: dangling cpu2 and out:0 links are named; rest listed' '
	tracectl --sysfs-root "$FIX/broken-link" list >out 2>err; rc=$?
	printf "warning: %s: dangling link to etm2; tracer unknown\nwarning: %s: dangling link to '\''tpiu0'\''; connection ignored\n" \
		"$FIX/broken-link/$B/cpu2" \
		"$FIX/broken-link/bus/coresight/devices/replicator0/connections/out:0" | cmp - err &&
	grep -qx "    cpu2    ?      trace id -     etm2       sinks: (none)" out &&
	grep -qx "    cpu1    ETMv4  trace id 0x12  etm1       sinks: tmc_etf0 tmc_etr0" out &&
	grep -qx "  common sinks: (none)" out && exit $rc
'
expect_code 3 'broken-link -j: cpu2 unknown and reaching nothing, the others reach both' '
	tracectl --sysfs-root "$FIX/broken-link" list -j >j 2>/dev/null; rc=$?
	same_json j ".pmus[0].cpus" "[
		{\"cpu\": 0, \"device\": \"etm0\", \"etm\": \"ETMv4\", \"trace_id\": \"0x10\", \"sinks\": $BOTH},
		{\"cpu\": 1, \"device\": \"etm1\", \"etm\": \"ETMv4\", \"trace_id\": \"0x12\", \"sinks\": $BOTH},
		{\"cpu\": 2, \"device\": \"etm2\", \"etm\": null, \"trace_id\": null, \"sinks\": []}]" &&
	same_json j ".pmus[0].common_sinks" "[]" && same_json j ".warnings | length" 2 && exit $rc
'
expect_code 3 'broken-register: unreadable trcidr0 is named; that CPU unknown, others fine' '
	tracectl --sysfs-root "$FIX/broken-register" list >out 2>err; rc=$?
	printf "warning: cannot read %s: Is a directory\n" \
		"$FIX/broken-register/$B/cpu1/trcidr/trcidr0" | cmp - err &&
	grep -qx "    cpu1    ?      trace id -     etm1       sinks: tmc_etf0 tmc_etr0" out &&
	grep -qx "    cpu0    ETMv4  trace id 0x10  etm0       sinks: tmc_etf0 tmc_etr0" out &&
	grep -qx "    cpu2    ETMv4  trace id 0x14  etm2       sinks: tmc_etf0 tmc_etr0" out &&
	exit $rc
'
expect_code 3 '-q: no warnings printed, still exit 3' '
	tracectl -q --sysfs-root "$FIX/broken-type" list >out 2>err; rc=$?
	[ ! -s err ] && grep -q "^cs_etm: type unknown" out && exit $rc
'
expect 'the -j warnings are the stderr warnings' '
	for f in broken-type broken-format broken-link broken-register; do
		tracectl --sysfs-root "$FIX/$f" list -j >j 2>err
		[ $? -eq 3 ] || exit 1
		jq -r ".warnings[] | \"warning: \" + ." j | cmp - err || exit 1
	done
'

# --- fatal and usage errors ----------------------------------------------------------------

expect_code 1 'a sysfs root that does not exist: fatal:, nothing on stdout' '
	tracectl --sysfs-root "$TMP/nope" list >out 2>err; rc=$?
	[ ! -s out ] &&
	grep -qx "fatal: cannot open directory $TMP/nope/bus/event_source/devices: No such file or directory" err &&
	exit $rc
'
expect_code 1 'a root without bus/event_source is fatal too (-j writes nothing)' '
	mkdir -p half/bus && tracectl --sysfs-root half -j list >out 2>err; rc=$?
	[ ! -s out ] && grep -q "^fatal: cannot open directory half/bus/event_source/devices" err &&
	exit $rc
'
expect_code 2 'list: unknown option is a usage error' '
	tracectl --sysfs-root "$FIX/juno" list --bogus >out 2>err; rc=$?
	[ ! -s out ] && grep -qx "error: unknown option '\''--bogus'\''" err &&
	grep -qx "see '\''tracectl list --help'\''" err && exit $rc
'
expect_code 2 'list: unknown short option' '
	tracectl --sysfs-root "$FIX/juno" list -x 2>err; rc=$?
	grep -qx "error: unknown option '\''-x'\''" err && exit $rc
'
expect_code 2 'list takes no operands' '
	tracectl --sysfs-root "$FIX/juno" list juno >out 2>err; rc=$?
	[ ! -s out ] && grep -qx "error: unexpected argument '\''juno'\''" err && exit $rc
'
expect_code 2 '--sysfs-root needs a value' '
	tracectl list --sysfs-root 2>err; rc=$?
	grep -q "^error: option .--sysfs-root. needs a value" err && exit $rc
'

# --- stdout trouble --------------------------------------------------------------------------

expect_code 1 'a full disk: fatal: write error, exit 1' '
	tracectl --sysfs-root "$FIX/juno" list >/dev/full 2>err; rc=$?
	grep -qx "fatal: write error on standard output: No space left on device" err && exit $rc
'
expect_code 1 'a full disk with -j and with warnings still says so' '
	tracectl --sysfs-root "$FIX/broken-link" list -j >/dev/full 2>err; rc=$?
	grep -q "^warning: " err && grep -qx "fatal: write error on standard output: No space left on device" err &&
	exit $rc
'
expect 'list | head -c 10: the first bytes, no complaint' '
	tracectl --sysfs-root "$FIX/juno" list >full &&
	{ tracectl --sysfs-root "$FIX/juno" list 2>err; echo $? >rc; } | head -c 10 >out &&
	head -c 10 full | cmp - out && [ ! -s err ] &&
	{ [ "$(cat rc)" -eq 0 ] || [ "$(cat rc)" -eq 141 ]; }
'
expect_code 141 'a reader that went away: exit 141, quietly' '
	(sleep 0.3; tracectl --sysfs-root "$FIX/juno" list 2>err; echo $? >rc) | true
	[ ! -s err ] && exit $(cat rc)
'

# --- the device graph (list --graph, and "graph" in list -j) ------------------------------

expect 'juno --graph: each CPU'"'"'s path through funnels, ETF and replicator to ETR and TPIU' '
	tracectl --sysfs-root "$FIX/juno" list --graph >out 2>err && [ ! -s err ] &&
	sed -n "1,8p" out >head && cat >want <<-EOF &&
	cs_etm: device graph
	cpu0: etm0 (ETMv4)
	  \`-- funnel0 [funnel]
	      \`-- funnel2 [funnel]
	          \`-- tmc_etf0 [sink ETF]
	              \`-- replicator0 [replicator]
	                  |-- tpiu0 [TPIU]
	                  \`-- tmc_etr0 [sink ETR]
	EOF
	diff -u want head && [ "$(grep -c "^cpu" out)" = 6 ] &&
	[ "$(grep -c "tmc_etr0 \[sink ETR\]$" out)" = 6 ]
'
expect 'juno-claimed --graph and list: the sink held through sysfs is marked' '
	tracectl --sysfs-root "$FIX/juno-claimed" list --graph >out &&
	[ "$(grep -c "tmc_etr0 \[sink ETR, claimed through sysfs\]$" out)" = 6 ] &&
	! grep -q "tmc_etf0.*claimed" out &&
	tracectl --sysfs-root "$FIX/juno-claimed" list >out &&
	grep -q "tmc_etr0 .*ETR, claimed through sysfs (enable_sink)" out &&
	tracectl --sysfs-root "$FIX/juno-claimed" list -j >j &&
	same_json j "[.pmus[0].sinks[] | select(.claimed) | .name]" "[\"tmc_etr0\"]"
'
expect 'ete-trbe --graph: a per-CPU sink hangs off its own CPU with no link' '
	tracectl --sysfs-root "$FIX/ete-trbe" list --graph >out &&
	grep -A1 "^cpu2: ete2 (ETE)$" out | tail -n 1 | grep -qx "  \`-- trbe2 \[sink TRBE\] (per-CPU)"
'
expect 'juno -j: the graph as nodes (kind, sink, claimed) and edges' '
	tracectl --sysfs-root "$FIX/juno" list -j >j &&
	same_json j "[.pmus[0].graph.nodes[] | select(.sink) | {name, kind}]" "[
		{\"name\": \"tmc_etf0\", \"kind\": \"ETF\"}, {\"name\": \"tmc_etr0\", \"kind\": \"ETR\"}]" &&
	same_json j "[.pmus[0].graph.edges[] | select(.from == \"replicator0\") | .to] | sort" "[\"tmc_etr0\", \"tpiu0\"]" &&
	same_json j "[.pmus[0].graph.edges[] | select(.from == \"etm3\") | .to]" "[\"funnel0\"]" &&
	tracectl --sysfs-root "$FIX/juno" list --graph -j >g &&
	same_json g "[.[0].pmu, (.[0].graph.edges | length)]" "[\"cs_etm\", $(jq ".pmus[0].graph.edges | length" j)]"
'
expect 'intel-pt --graph: no CoreSight PMU, no graph, said so' '
	tracectl --sysfs-root "$FIX/intel-pt" list --graph >out &&
	grep -q "^no CoreSight PMU in .*: no device graph$" out
'
expect_code 2 '--sinks and --graph exclude each other' '
	tracectl --sysfs-root "$FIX/juno" list --sinks --graph 2>err; rc=$?
	grep -q "exclude each other" err && exit $rc
'
