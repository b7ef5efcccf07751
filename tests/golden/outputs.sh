#!/bin/sh
# Behaviour fingerprint: every decode output form over every recording and snapshot in
# ../shared/testdata, one line per output: "<sha256> <input> <form>". The hash covers
# stdout (a --per-thread directory: each file's name and bytes), the exit code and stderr
# with the test data's path replaced, so that a change of any byte, message or exit code
# shows. tests/golden/outputs.sums holds the lines the binary gave before a refactoring;
# t06-golden.sh compares against them. After a deliberate change of output, regenerate:
#   tests/golden/outputs.sh ./tracectl ../shared/testdata >tests/golden/outputs.sums
set -u
tc=$(realpath "$1") && [ -x "$tc" ] || { echo "fatal: $1 is not an executable" >&2; exit 1; }
data=$(realpath "$2") && [ -d "$data/opencsd" ] || { echo "fatal: $2 is no testdata" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The traced ELF of the simpleperf recording, where its recorded path says it was.
mkdir -p "$work/symfs/data/local/tmp"
cp "$data/perfdata/simpleperf-etm/etm_test_loop" "$work/symfs/data/local/tmp/"

# form name, then the tracectl arguments before and after "-i INPUT"
forms='text|decode|
json|-j decode|
branches|decode --branches|
json-branches|-j decode --branches|
packets|decode --packets|
json-packets|-j decode --packets|
per-thread|-j decode|--per-thread PT
report|report|
json-report|-j report|
folded|decode --format folded|
chrome|decode --format chrome|
svg|decode --format svg|
autofdo|decode --format autofdo|'

inputs() {
	for f in perfdata/simpleperf-etm/perf_etm.data perfdata/simpleperf-etm/perf_inject.data \
		perfdata/simpleperf-etm/perf_with_missing_aux_data.data \
		perfdata/intel_pt/perf.data.intel_pt-4.14; do
		echo "$f"
	done
	(cd "$data" && find opencsd -name snapshot.ini | sed 's|/snapshot.ini$||' | LC_ALL=C sort)
}

inputs | while read -r in; do
	echo "$forms" | while IFS='|' read -r form pre post; do
		o="$work/o"
		rm -rf "$o" && mkdir -p "$o"
		# shellcheck disable=SC2086
		(cd "$o" && "$tc" $pre -i "$data/$in" --symfs "$work/symfs" $post \
			>stdout 2>stderr; echo "exit $?" >code)
		sed "s|$data|DATA|g; s|$work|WORK|g" "$o/stderr" >"$o/stderr.n"
		{
			cat "$o/stdout" "$o/code" "$o/stderr.n"
			[ -d "$o/PT" ] && (cd "$o/PT" && for f in $(ls | LC_ALL=C sort); do
				echo "== $f"; cat "$f"; done)
		} | sha256sum | sed "s|  -| $in $form|"
	done
done
