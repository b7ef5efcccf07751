#!/bin/sh
# Locate every library tracectl links and write build/config.mk; name whatever is missing.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out="$1"
lp="$top/build/deps/libperf"
missing=

have_pc() { pkg-config --exists "$1" 2>/dev/null; }
for pc in libtraceevent libelf libopencsd capstone; do
	have_pc "$pc" || missing="$missing $pc"
done
[ -f /usr/include/intel-pt.h ] || missing="$missing libipt(intel-pt.h)"
[ -f /usr/include/Zydis/Zydis.h ] || missing="$missing libzydis(Zydis/Zydis.h)"
[ -f /usr/include/opencsd/c_api/opencsd_c_api.h ] || missing="$missing opencsd-c-api"
[ -f "$lp/lib/libperf.a" ] && [ -f "$lp/lib/libapi.a" ] || missing="$missing libperf(build/deps)"
if [ -n "$missing" ]; then
	echo "fatal: missing libraries:$missing" >&2
	echo "fatal: run 'make deps' as root first (see README.md)" >&2
	exit 1
fi
ver() { pkg-config --modversion "$1"; }
cat >"$out" <<EOT
DEP_CFLAGS := -I$lp/include $(pkg-config --cflags libtraceevent libelf libopencsd) \
 -DLIBPERF_VERSION='"$(PKG_CONFIG_PATH=$lp/lib/pkgconfig pkg-config --modversion libperf)"' \
 -DLIBTRACEEVENT_VERSION='"$(ver libtraceevent)"' -DLIBELF_VERSION='"$(ver libelf)"'
DEP_LIBS := $lp/lib/libperf.a $lp/lib/libapi.a $(pkg-config --libs libtraceevent libelf) \
 -lopencsd_c_api -lopencsd -lipt -lZydis
# the QEMU plugin (lib/emulate/qemu_plugin/) alone: tracectl's x86 facts are Zydis's
CAPSTONE_CFLAGS := $(pkg-config --cflags capstone)
CAPSTONE_LIBS := $(pkg-config --libs capstone)
EOT
