#!/bin/sh
# The second guest kernel of make test-vm-new: a Linux 6.13+ kernel (AUX pause/resume) from
# Debian 13's backports, and a Debian 13 chroot that builds modules for it (its kbuild
# programs need trixie's glibc; its headers want gcc-14). Idempotent; needs root (debootstrap,
# chroot). Everything lives in build/vm-new/ (git ignores build/):
#   root/                  the chroot (debootstrap minbase + gcc-14, make, the headers)
#   cache/                 debootstrap's .debs, reused when root/ is made again
#   kver                   the kernel version (what trixie-backports' linux-image-amd64 depends
#                          on when root/ was made, or the newest with headers if it has none;
#                          VM_NEW_REFRESH=1 asks the archive again)
#   vmlinuz-KVER           the kernel, from its Debian package
# Prints the kernel version on stdout.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
dir="$top/build/vm-new"
root="$dir/root"
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
log="$dir/prepare.log"

say() { echo "[ test-vm-new: $* ]" >&2; }
die() { echo "fatal: $*" >&2; [ -f "$log" ] && tail -n 15 "$log" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "preparing the Linux 6.13+ guest needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || die "debootstrap missing ('sudo ./mk/deps.sh' installs it)"
mkdir -p "$dir/cache"
: >"$log"
in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@" >>"$log" 2>&1; }

if [ ! -f "$root/.tc-ready" ]; then
	say "debootstrap trixie into $root (about 2 min)"
	rm -rf "$root"
	debootstrap --variant=minbase --cache-dir="$dir/cache" --include=gcc-14,make,libc6-dev \
		trixie "$root" "$mirror" >>"$log" 2>&1 || die "debootstrap failed (log $log)"
	echo "deb $mirror trixie-backports main" >"$root/etc/apt/sources.list.d/backports.list"
	rm -f "$dir/kver"
	touch "$root/.tc-ready"
fi
if [ ! -s "$dir/kver" ] || [ "${VM_NEW_REFRESH:-0}" = 1 ]; then
	in_root apt-get update -q || die "apt-get update in $root failed"
	# The kernel backports' meta-package points at (as test-vm takes Debian 12's).
	kver=$(chroot "$root" apt-cache depends linux-image-amd64/trixie-backports 2>/dev/null |
		sed -n 's/.*Depends: linux-image-\([0-9].*-amd64\)$/\1/p' | head -n 1)
	[ -n "$kver" ] || die "trixie-backports has no linux-image-amd64 dependency"
	# Its headers may lag behind (the index has held images without headers): then the
	# newest kernel that has them.
	if ! chroot "$root" apt-cache show "linux-headers-$kver" >/dev/null 2>&1; then
		k=$(chroot "$root" apt-cache search --names-only '^linux-headers-[0-9.]*[+]deb13-amd64$' |
			sed -n 's/^linux-headers-\([^ ]*\) .*/\1/p' | sort -V | tail -n 1)
		say "no linux-headers-$kver in the archive; taking ${k:-nothing}"
		kver=$k
	fi
	[ -n "$kver" ] || die "trixie-backports has no kernel headers"
	echo "$kver" >"$dir/kver"
fi
kver=$(cat "$dir/kver")
maj=${kver%%.*}
min=${kver#*.}
min=${min%%.*}
[ "$maj" -gt 6 ] || { [ "$maj" = 6 ] && [ "$min" -ge 13 ]; } ||
	die "trixie-backports' kernel $kver is older than 6.13: no AUX pause/resume"

if [ ! -d "$root/usr/src/linux-headers-$kver" ]; then
	say "linux-headers-$kver into the chroot"
	in_root apt-get install -y -q --no-install-recommends -t trixie-backports \
		"linux-headers-$kver" || die "linux-headers-$kver did not install"
fi
if [ ! -s "$dir/vmlinuz-$kver" ]; then
	# Newer packaging keeps the image in linux-binary-KVER, older in linux-image-KVER.
	pkg=linux-image-$kver
	chroot "$root" apt-cache show "linux-binary-$kver" >/dev/null 2>&1 && pkg=linux-binary-$kver
	say "$pkg (vmlinuz)"
	rm -f "$root"/tmp/*.deb
	(cd "$root/tmp" && chroot "$root" sh -c "cd /tmp && apt-get download -q '$pkg'") \
		>>"$log" 2>&1 || die "apt-get download $pkg failed"
	deb=$(ls "$root"/tmp/"$pkg"_*.deb)
	path=$(dpkg-deb -c "$deb" | awk '{print $6}' | grep -E "/vmlinuz(-$kver)?\$" | head -n 1)
	[ -n "$path" ] || die "no vmlinuz in $deb"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "$path" >"$dir/vmlinuz-$kver.tmp"
	mv "$dir/vmlinuz-$kver.tmp" "$dir/vmlinuz-$kver"
	rm -f "$deb"
fi
echo "$kver"
