#!/bin/sh
# make bench: time `tracectl decode -j` on the largest OpenCSD snapshot against OpenCSD's own
# trc_pkt_lister -decode_only on the same snapshot, both to /dev/null, in the same run, and
# print the ratio. Timings only; nothing here is a test.
set -u
TRACECTL=${TRACECTL:?}
TD=${TC_TESTDATA:-$(dirname "$0")/../../../shared/testdata}
SNAP=$(cd "${BENCH_SNAPSHOT:-$TD/opencsd/bugfix-exact-match}" && pwd)
RUNS=${BENCH_RUNS:-3}

[ -d "$SNAP" ] || { echo "bench: $SNAP missing" >&2; exit 1; }
command -v trc_pkt_lister >/dev/null || { echo "bench: trc_pkt_lister missing (libopencsd-bin)" >&2; exit 1; }

now() { date +%s.%N; }
# best of RUNS wall-clock seconds of "$@"
best() {
	b=
	i=0
	while [ $i -lt "$RUNS" ]; do
		t0=$(now); "$@" >/dev/null 2>&1; t1=$(now)
		b=$(echo "$t0 $t1 ${b:-}" | awk '{d = $2 - $1; if (NF == 3 && $3 < d) d = $3; printf "%.3f", d}')
		i=$((i + 1))
	done
	echo "$b"
}
# trc_pkt_lister also writes a trc_pkt_lister.ppl where it runs: keep that out of the tree.
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
lister() { (cd "$work" && trc_pkt_lister -ss_dir "$SNAP" -decode_only -logfilename /dev/null); }

t_ours=$(best "$TRACECTL" -j decode -i "$SNAP")
t_ocsd=$(best lister)
echo "snapshot: $SNAP (best of $RUNS)"
echo "tracectl decode -j:              ${t_ours} s"
echo "trc_pkt_lister -decode_only:     ${t_ocsd} s"
awk -v a="$t_ours" -v b="$t_ocsd" 'BEGIN { printf "ratio tracectl / trc_pkt_lister: %.2f\n", a / b }'
