# e2e helpers, git-style: each check is a shell snippet run in a subshell; it passes when
# the snippet exits 0. Chain commands with && so every step counts.
# shellcheck shell=sh
set -u
: "${TOP:?run through tests/run.sh}"
T=$(basename "$0" .sh)
FIX="$TOP/tests/fixtures/sysfs"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1

tracectl() { "$TRACECTL" "$@"; }

_report() {	# status desc
	if [ "$1" -eq 0 ]; then
		echo "ok $T: $2"
	else
		echo "not ok $T: $2"
		sed 's/^/#   /' "$TMP/.log" | tail -n 30
	fi
}

# expect 'description' 'commands'
expect() {
	(eval "$2") >"$TMP/.log" 2>&1
	_report $? "$1"
}

# expect_code N 'description' 'command': the last command must exit with N
expect_code() {
	(eval "$3") >"$TMP/.log" 2>&1
	rc=$?
	[ "$rc" -eq "$1" ] || echo "exit status $rc, expected $1" >>"$TMP/.log"
	[ "$rc" -eq "$1" ]
	_report $? "$2"
}

skip() {	# description reason
	echo "skip $T: $1 ($2)"
}

# Real data from ../shared/testdata. Without it tests skip loudly; CI sets TC_REQUIRE_TESTDATA
# so that a missing directory fails instead.
have_testdata() {
	[ -d "$TC_TESTDATA/$1" ] && return 0
	if [ "${TC_REQUIRE_TESTDATA:-0}" = 1 ]; then
		echo "not ok $T: test data $TC_TESTDATA/$1 is missing"
	else
		echo "warning: $TC_TESTDATA/$1 missing; tests that need it are skipped" >&2
	fi
	return 1
}

# Branches as "TID FROM TO" lines, grouped by thread in a stable order: a ground-truth file
# (by_tid), tracectl decode's and Debian perf script's of a recording.
by_tid() { sort -s -k1,1n "$1"; }
tc_branches() {
	tracectl -j decode --branches -i "$1" 2>"$1.tc-err" |
		jq -r 'select(.type == "branch") | "\(.tid) \(.from | ltrimstr("0x")) \(.to | ltrimstr("0x"))"' |
		sort -s -k1,1n
}
perf_branches() {
	perf script -i "$1" --itrace=b -F tid,ip,addr 2>"$1.perf-err" |
		awk '{ print $1, $2, $4 }' | sort -s -k1,1n
}

# Two emulated recordings of programs nobody here wrote, in the test's directory: gzip.data
# (one thread) and procs.data (a shell's children, one queue each). Ends the test (not ok)
# if one cannot be made.
record_gzip_procs() {
	seq 3000 | sort -R --random-source=/dev/zero >in.txt
	tracectl record --pmu emulated -o gzip.data -- /bin/gzip -c in.txt >/dev/null 2>rec.err ||
		{ echo "not ok $T: cannot record gzip"; exit 0; }
	tracectl record --pmu emulated -o procs.data -- /bin/sh -c \
		"/bin/ls /usr >/dev/null; /usr/bin/sort in.txt | /usr/bin/head -1" >/dev/null \
		2>rec.err || { echo "not ok $T: cannot record sh"; exit 0; }
}

# Checks that say why they fail (a grep or a test prints nothing, and a flaky failure must be
# diagnosable from the log). must 'what was expected' COMMAND...: COMMAND must succeed.
must() {
	_what=$1
	shift
	"$@" || { echo "failed: $_what"; return 1; }
}
# same_with_jobs FILE: each form of tracectl in $forms (one a line, e.g. "-j decode
# --branches") on FILE with --jobs 1, 2 and 4 gives the same stdout, stderr and exit code,
# and exits 0 or 3; if not, says which form.
same_with_jobs() {
	echo "$forms" | while read -r form; do
		for n in 1 2 4; do
			# shellcheck disable=SC2086
			tracectl $form --jobs $n -i "$1" >o$n 2>e$n; echo "exit $?" >>o$n
			cat e$n >>o$n
		done
		cmp o1 o2 && cmp o1 o4 || { echo "differs: $form"; exit 1; }
		grep -q "^exit [03]$" o1 || { echo "failed: $form"; tail -3 o1; exit 1; }
	done
}
# same_branches WANT GOT: GOT (tc_branches' or perf_branches') is WANT, the truth; if not,
# how many lines differ and the first differences (the log keeps its last 30 lines)
same_branches() {
	diff "$1" "$2" >"$2.diff" && return 0
	echo "$2 is not $1: $(grep -c '^[<>]' "$2.diff") lines differ, the first:"
	head -n 12 "$2.diff"
	return 1
}
# etm4_snapshot DIR: an OpenCSD snapshot of one Cortex-A53 ETMv4 source (trace ID 0x10,
# MAXSPEC 0), its raw bytes (format source_data) from DIR/trace.bin, written by the caller;
# IDR0 and CFGR override TRCIDR0 and TRCCONFIGR; DUMPS (lines "ADDRESS FILE") are the
# core's memory dumps, their files in DIR.
etm4_snapshot() {
	mkdir -p "$1" && cd "$1" || return 1
	printf '[snapshot]\nversion=1.0\n\n[device_list]\ndevice0=cpu_0.ini\ndevice1=etm_0.ini\n\n[trace]\nmetadata=trace.ini\n' >snapshot.ini
	printf '[device]\nname=cpu_0\nclass=core\ntype=Cortex-A53\n\n[regs]\nPC(size:64)=0x1000\n' >cpu_0.ini
	_n=0
	echo "${DUMPS:-}" | while read -r _a _f; do
		[ -n "$_a" ] || continue
		_n=$((_n + 1))
		printf '\n[dump%d]\nfile=%s\naddress=%s\nlength=0x%x\n' "$_n" "$_f" "$_a" \
			"$(wc -c <"$_f")" >>cpu_0.ini
	done
	printf '[device]\nname=ETM_0\nclass=trace_source\ntype=ETM4\n\n[regs]\n%s\n%s\n%s\n%s\n%s\n%s\n' \
		'TRCCONFIGR(0x004)=0x000000C1' 'TRCTRACEIDR(0x010)=0x00000010' \
		"TRCIDR0(0x078)=${IDR0:-0x28000EA1}" 'TRCIDR1(0x079)=0x4100F403' \
		'TRCIDR2(0x07A)=0x00000488' 'TRCIDR8(0x060)=0x00000000' >etm_0.ini
	[ -z "${CFGR:-}" ] || sed -i "s/^TRCCONFIGR(0x004)=.*/TRCCONFIGR(0x004)=$CFGR/" etm_0.ini
	printf '[trace_buffers]\nbuffers=buffer0\n\n[buffer0]\nname=ETB_0\nfile=trace.bin\nformat=source_data\n\n[source_buffers]\nETM_0=ETB_0\n\n[core_trace_sources]\ncpu_0=ETM_0\n' >trace.ini
	cd - >/dev/null
}
# bytes OCTAL...: raw bytes
bytes() { for b in "$@"; do printf "\\$b"; done; }
async() { bytes 000 000 000 000 000 000 000 000 000 000 000 200; }
