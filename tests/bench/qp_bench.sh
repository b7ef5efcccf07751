#!/bin/sh
# Speed of tracectl's QEMU plugin (build/qemu_plugin/tracectl-qemu.so) on a CPU-bound program
# (tests/bench/qp_loop.c, >= 10^9 instructions), both ISAs: native (x86-64 only), plain qemu,
# then the plugin describing TBs only (mode=none), counting with an inline add (count), with
# a callback per TB that counts (cb), and writing TB ids to the rings with qp_drain draining
# them (ring). Instructions are the plugin's inline count. Not a test.
#   tests/bench/qp_bench.sh [N]     (fib(N); 38 by default: ~2*10^9 instructions)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${B:-$top/build}
plugin=$B/qemu_plugin/tracectl-qemu.so
drain=${TC_TOOLS:-$B/obj/tools}/qp_drain
n=${1:-38}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O1 -o "$work/loop-x86" "$top/tests/bench/qp_loop.c"
aarch64-linux-gnu-gcc -O1 -static -o "$work/loop-a64" "$top/tests/bench/qp_loop.c"

secs() { # command...: wall seconds
	s=$(date +%s.%N)
	"$@" >/dev/null 2>"$work/err"
	e=$(date +%s.%N)
	echo "$s $e" | awk '{ printf "%.3f", $2 - $1 }'
}

for isa in x86 a64; do
	q=qemu-x86_64
	[ $isa = a64 ] && q=qemu-aarch64
	prog=$work/loop-$isa
	$q -plugin "$plugin,mode=count,stats=on" "$prog" "$n" >/dev/null 2>"$work/err"
	insns=$(sed -n 's/.*inline count \([0-9]*\) insns.*/\1/p' "$work/err")
	echo "== $isa: $prog $n: $insns instructions"
	row() { # label seconds
		echo "$2 $insns" | awk -v l="$1" '{ printf "%-30s %8.3f s %8.1f M insns/s\n",
			l, $1, $2 / $1 / 1e6 }'
	}
	[ $isa = x86 ] && row native "$(secs "$prog" "$n")"
	row "$q" "$(secs $q "$prog" "$n")"
	for m in none count cb; do
		row "plugin mode=$m" "$(secs $q -plugin "$plugin,mode=$m" "$prog" "$n")"
	done
	row "plugin mode=ring + qp_drain" "$(secs "$drain" -p "$plugin" -- $q "$prog" "$n")"
	"$drain" -p "$plugin" -o icount=on,stats=on -- $q "$prog" "$n" 2>&1 | grep -v '^[0-9]' |
		sed 's/^/    /'
done
