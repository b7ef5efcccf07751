#!/bin/sh
# initramfs.sh DIR INIT OUT [FILE...]: a guest's initramfs in OUT (gzip'd cpio) from a fresh
# DIR: busybox, tracectl with the shared libraries it loads, tests/vm/guest.sh, INIT as /init
# and each FILE at the top (FILE=NAME puts it there as NAME). Shared by run.sh and run_new.sh.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
ir=$1 init=$2 out=$3
shift 3
rm -rf "$ir"
mkdir -p "$ir/bin" "$ir/lib" "$ir/lib64" "$ir/proc" "$ir/sys" "$ir/dev" "$ir/tmp"
cp /bin/busybox "$ir/bin/busybox"
cp "$top/tracectl" "$ir/bin/"
for l in $(ldd "$top/tracectl" | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p'); do
	case $l in
	*/ld-linux-x86-64.so.2) cp -L "$l" "$ir/lib64/" ;;
	*) cp -L "$l" "$ir/lib/" ;;
	esac
done
cp "$top/tests/vm/guest.sh" "$ir/guest.sh"
for f; do
	case $f in
	*=*) cp "${f%%=*}" "$ir/${f#*=}" ;;
	*) cp "$f" "$ir/" ;;
	esac
done
cp "$init" "$ir/init"
chmod +x "$ir/init"
(cd "$ir" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
