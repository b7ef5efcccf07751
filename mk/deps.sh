#!/bin/sh
# Install what tracectl needs to build and test, idempotently:
#  - Debian packages (libraries, oracles, tools), when any is missing (needs root);
#  - libperf, built from Debian's linux-source-6.1 into build/deps/libperf (git ignores it).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
prefix="$top/build/deps/libperf"

pkgs="gcc make pkg-config xz-utils jq clang libclang-rt-14-dev groff-base zsh bash-completion
libtraceevent-dev libelf-dev libcapstone-dev libzydis-dev libopencsd-dev libopencsd-bin libipt-dev
linux-perf linux-source-6.1 librsvg2-bin qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross
qemu-system-x86 busybox-static cpio linux-headers-amd64 debootstrap autofdo llvm-14 bolt-16
gdb"

missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "fatal: missing Debian packages:$missing" >&2
		echo "fatal: run 'sudo make deps' (or apt-get install them yourself)" >&2
		exit 1
	fi
	echo "[ deps: installing$missing ]" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# libperf: tools/lib/perf of the same kernel source Debian ships; static, with its libapi.
src_tar=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n 1)
[ -n "$src_tar" ] || { echo "fatal: /usr/src/linux-source-6.1.tar.* not found" >&2; exit 1; }
stamp="$prefix/.stamp"
want="$(basename "$src_tar") $(stat -c %s "$src_tar")"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$prefix/lib/libperf.a" ]; then
	exit 0
fi
echo "[ deps: building libperf from $src_tar ]" >&2
work="$top/build/deps/src"
rm -rf "$work" "$prefix"
mkdir -p "$work" "$prefix/lib"
tar -xf "$src_tar" -C "$work" --strip-components=1 \
	linux-source-6.1/tools/lib linux-source-6.1/tools/include \
	linux-source-6.1/tools/build linux-source-6.1/tools/scripts \
	linux-source-6.1/tools/arch linux-source-6.1/include/uapi
make -s -C "$work/tools/lib/perf" DESTDIR="$prefix" prefix= libdir_relative=lib \
	install_lib install_headers install_pkgconfig >"$work/build.log" 2>&1 ||
	{ tail -n 20 "$work/build.log" >&2; echo "fatal: libperf build failed" >&2; exit 1; }
cp "$work/tools/lib/api/libapi.a" "$prefix/lib/"
echo "$want" >"$stamp"
