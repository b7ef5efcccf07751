# tracectl's QEMU plugin (lib/emulate/qemu_plugin/, built by `make` into
# $(B)/qemu_plugin/tracectl-qemu.so) with the test consumer qp_drain: every executed TB
# reaches the consumer, in QEMU's own order (-d exec,nochain), for both ISAs, with a
# consumer slow enough that the guest waits, and after a fatal guest signal.
. "$TOP/tests/e2e/lib.sh"

TOOLS=${TC_TOOLS:-$TOP/build/obj/tools}
DRAIN=$TOOLS/qp_drain
PLUGIN=$TOOLS/../../qemu_plugin/tracectl-qemu.so
if [ "$(uname -m)" != x86_64 ] || ! command -v qemu-x86_64 >/dev/null || ! command -v gcc >/dev/null
then
	skip 'QEMU plugin' 'needs x86-64, qemu-user and gcc'
	exit 0
fi
[ -f "$PLUGIN" ] || { echo "not ok $T: $PLUGIN is not built (make test builds it)"; exit 0; }
[ -x "$DRAIN" ] || { echo "not ok $T: $DRAIN is not built (make test builds it)"; exit 0; }

# TB start addresses, one a line, from qemu's exec log / qp_drain's -t file. A TB that qemu
# enters but leaves before its first instruction (an exit request: "Stopped execution of TB
# chain before HOSTPTR [PC]" after its Trace line) did not run: the plugin never sees it.
exec_pcs() {
	awk '/^Trace/ { split($4, a, "/"); n++; pc[n] = a[2]; ptr[n] = $3 }
	     /^Stopped execution of TB chain before/ {
		for (i = n; i > 0; i--) if (ptr[i] == $7 && pc[i] != "") { pc[i] = ""; break } }
	     END { for (i = 1; i <= n; i++) if (pc[i] != "") print pc[i] }' "$1" | sed 's/^0*//'
}
drain_pcs() { awk '$2 != "syscall" { sub(/^0x/, "", $2); print $2 }' "$1"; }

expect '/bin/ls -la /usr/share/doc, slow consumer: the guest waits, nothing is lost' '
	"$DRAIN" -p "$PLUGIN" -r 4096 -d 20 -b 512 -o icount=on,stats=on -- \
		qemu-x86_64 /bin/ls -la /usr/share/doc >out 2>err && cat err &&
	grep "^tid " out | grep -q "waits [1-9][0-9]* ok" &&
	insns=$(sed -n "s/^total: \([0-9]*\) insns.*/\1/p" out) &&
	grep -q "inline count $insns insns" err &&
	! grep -q "unknown [1-9]" err &&
	grep -v "^tid \|^kinds \|^total: " out >ls.q && /bin/ls -la /usr/share/doc >ls.n &&
	cmp ls.q ls.n
'
expect 'x86-64: the TB sequence is the one qemu -d exec,nochain logs' '
	gcc -O1 -o br "$TOP/tests/fixtures/progs/branchy.c" &&
	{ "$DRAIN" -p "$PLUGIN" -t tr -- qemu-x86_64 -d exec,nochain -D exec.log ./br >out
	  cat out; } && grep -q " ok$" out && ! grep -q "MISMATCH\|ERROR" out &&
	exec_pcs exec.log >e && drain_pcs tr >p && [ -s e ] && cmp e p
'
if command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null; then
	expect 'aarch64, threads: every thread counted, the TBs are the ones qemu logs' '
		aarch64-linux-gnu-gcc -O1 -static -pthread -o thr "$TOP/examples/threads.c" &&
		"$DRAIN" -p "$PLUGIN" -r 4096 -d 20 -t tr -- \
			qemu-aarch64 -d exec,nochain -D exec.log ./thr >out && cat out &&
		[ "$(grep -c "^tid .* ok$" out)" -ge 2 ] &&
		exec_pcs exec.log | sort >e && drain_pcs tr | sort >p && [ -s e ] && cmp e p
	'
else
	skip 'aarch64 threads' 'needs gcc-aarch64-linux-gnu and qemu-aarch64'
fi
expect_code 139 'a fatal guest signal: the TBs after the last publish are recovered' '
	printf "int main(void) { volatile int *p = 0; return *p; }\n" >segv.c &&
	gcc -O1 -o segv segv.c &&
	{ "$DRAIN" -p "$PLUGIN" -t tr -- qemu-x86_64 -d exec,nochain -D exec.log ./segv >out
	  rc=$?; cat out; } && grep -q "TB ids recovered" out &&
	exec_pcs exec.log >e && drain_pcs tr >p && [ -s e ] && cmp e p && exit $rc
'
