# The build finds its libraries, and names the ones it cannot find.
. "$TOP/tests/e2e/lib.sh"

expect 'config finds every declared library' '
	"$TOP/mk/config.sh" "$TMP/c.mk" && grep -q "libperf.a" c.mk && grep -q "libapi.a" c.mk &&
	grep -q -- "-ltraceevent" c.mk && grep -q -- "-lelf" c.mk &&
	grep -q -- "-lopencsd" c.mk && grep -q -- "-lipt" c.mk
'
expect_code 1 'a missing library is named' '
	PKG_CONFIG_LIBDIR=/nonexistent PKG_CONFIG_PATH= "$TOP/mk/config.sh" "$TMP/c.mk" 2>err; rc=$?
	grep -q "^fatal: missing libraries: libtraceevent libelf libopencsd" err && exit $rc
'
expect 'the binary links all five libraries' '
	nm "$TRACECTL" | grep -q " T perf_cpu_map__new" &&
	ldd "$TRACECTL" >libs && grep -q libtraceevent libs && grep -q libelf libs &&
	grep -q libopencsd_c_api libs && grep -q libipt libs
'
expect 'deps.sh is idempotent (nothing to do the second time)' '
	"$TOP/mk/deps.sh" 2>err && [ ! -s err ]
'
