#!/bin/sh
# Test runner: unit binaries ($UNITS) and e2e scripts (tests/e2e/t*.sh). Every test prints
# one line "ok ...", "not ok ..." or "skip ..."; this counts them and ends with the totals.
# TESTS=pattern runs only e2e scripts and unit binaries whose name contains it.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
export TOP="$top"
export TRACECTL="${TRACECTL:-$top/tracectl}"
export TC_TESTDATA="${TC_TESTDATA:-$top/../shared/testdata}"
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

run_one() {	# name, command...
	name=$1; shift
	case "$name" in *"${TESTS:-}"*) ;; *) return ;; esac
	"$@" >"$log/out" 2>"$log/err"
	rc=$?
	cat "$log/out"
	if [ $rc -ne 0 ] && ! grep -q '^not ok' "$log/out"; then
		# A crash or a script error is a failure even if no check reported one.
		echo "not ok $name: exited with status $rc"
		sed 's/^/#   /' "$log/err" | tail -n 20
	elif [ -s "$log/err" ] && [ "${VERBOSE:-0}" = 1 ]; then
		sed 's/^/#   /' "$log/err"
	fi
	cat "$log/out" >>"$log/all"
	[ $rc -ne 0 ] && ! grep -q '^not ok' "$log/out" && echo "not ok" >>"$log/all"
	return 0
}

: >"$log/all"
for u in ${UNITS:-}; do
	run_one "$(basename "$u")" "$u"
done
for t in "$top"/tests/e2e/t*.sh; do
	[ -e "$t" ] || continue
	run_one "$(basename "$t" .sh)" sh "$t"
done

pass=$(grep -c '^ok' "$log/all")
fail=$(grep -c '^not ok' "$log/all")
skip=$(grep -c '^skip' "$log/all")
if [ "$skip" -gt 0 ]; then
	echo "skipped:" >&2
	grep '^skip' "$log/all" | sed 's/^/  /' >&2
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
