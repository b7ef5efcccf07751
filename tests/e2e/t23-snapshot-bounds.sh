# Snapshot readers are bounded (lib/perfdata/snapshot.c, decoders/coresight/cs_snapshot.c):
# only regular files are read (a device or FIFO named by an ini is refused at once), ini
# lines and files are capped, files resolve inside the snapshot directory (no absolute
# path, no ../, no link out of it), and file content in messages is a short excerpt with
# control bytes escaped. Each case edits a copy of trace_cov_a15 made here.
. "$TOP/tests/e2e/lib.sh"

have_testdata opencsd || { skip 'snapshot reader bounds' 'no test data'; exit 0; }
SNAP="$TC_TESTDATA/opencsd/trace_cov_a15"

# fresh NAME: a writable copy of the snapshot in NAME
fresh() { rm -rf "$1" && cp -r "$SNAP" "$1" && chmod -R u+w "$1"; }
# fails NAME PATTERN: decode exits 1 within 5 s and its fatal: message matches PATTERN
fails() {
	timeout 5 "$TRACECTL" decode -i "$1" >/dev/null 2>err; rc=$?
	[ $rc = 1 ] || { echo "exit $rc"; cat err; return 1; }
	grep -q "^fatal: .*$2" err || { echo "no \"$2\" in:"; cat err; return 1; }
}

expect 'the unchanged copy decodes' 'fresh s && tracectl decode -i s >/dev/null 2>&1'
expect 'metadata= naming /dev/zero through a link: refused at once, not read' '
	fresh s && ln -s /dev/zero s/zero.ini &&
	sed -i "s/^metadata=.*/metadata=zero.ini/" s/snapshot.ini &&
	fails s "s/zero.ini: not a regular file (a device): not read"
'
expect 'a device ini that is a FIFO: refused without waiting for a writer' '
	fresh s && rm s/device2.ini && mkfifo s/device2.ini &&
	fails s "s/device2.ini: not a regular file (a FIFO)"
'
expect 'an absolute path or ../ in an ini: refused, naming the ini and line' '
	fresh s && sed -i "s|^metadata=.*|metadata=/dev/zero|" s/snapshot.ini &&
	fails s "s/snapshot.ini: ./dev/zero. is outside the snapshot directory" &&
	fresh s && sed -i "s|^file=PTM_0_2.bin|file=../../../../../../../etc/passwd|" s/trace.ini &&
	fails s "s/trace.ini:[0-9]*: .\.\./\.\./.*is outside the snapshot directory" &&
	! grep -q "root:" err
'
expect 'a link in the directory leading out of it: refused' '
	fresh s && echo "secret line" >outside.bin && rm s/PTM_0_2.bin &&
	ln -s "$PWD/outside.bin" s/PTM_0_2.bin &&
	fails s "s/PTM_0_2.bin: leads outside the snapshot directory" && ! grep -q secret err
'
expect 'an ini line over 4096 bytes, an ini over 1 MiB: refused' '
	fresh s && head -c 5000 /dev/zero | tr "\0" a >>s/trace.ini &&
	fails s "s/trace.ini:[0-9]*: line longer than 4096 bytes" &&
	fresh s && yes "; filler line of a comment" | head -c 1100000 >>s/device3.ini &&
	fails s "s/device3.ini:[0-9]*: file longer than 1048576 bytes\|s/device3.ini: [0-9]* bytes, more than the 1048576"
'
expect 'file content in messages: a short excerpt, control bytes escaped' '
	fresh s && printf "\033[31mred %0100d\n" 0 >>s/trace.ini &&
	fails s "expected key=value, got .\\\\x1b\[31mred 0000.*\.\.\.." &&
	! grep -q "$(printf "\033")" err && [ "$(wc -c <err)" -lt 300 ]
'
