# Outputs never follow a link tracectl did not make: decode --per-thread DIR refuses DIR as a
# link, a link planted in DIR (to a file or dangling) and a DIR with files in it unless
# --force (which still refuses the links); record -o (the record loop, through
# tests/tools/rec_nopmu) refuses a planted or dangling link and leaves its target alone.
. "$TOP/tests/e2e/lib.sh"

REC="${TC_TOOLS:-$TOP/build/obj/tools}/rec_nopmu"
SP="$TC_TESTDATA/perfdata/simpleperf-etm"

if have_testdata perfdata; then
	ETM="$SP/perf_etm.data"
	expect_code 1 'per-thread: a link planted in DIR is refused, its target untouched' '
		mkdir d && echo precious >target && ln -s "$PWD/target" d/tid-17235.txt &&
		tracectl decode -i "$ETM" --per-thread d 2>err; rc=$?
		grep -q "^fatal: d exists and is not empty.*--force" err &&
		tracectl decode -i "$ETM" --per-thread d --force 2>err; rc=$?
		cat err; grep -q "d/tid-17235.txt is a symbolic link: not writing through it" err &&
		[ "$(cat target)" = precious ] && exit $rc
	'
	expect_code 1 'per-thread: a dangling link in DIR does not create its target' '
		mkdir dd && ln -s "$PWD/made-by-link" dd/tid-17235.txt &&
		tracectl decode -i "$ETM" --per-thread dd --force 2>err; rc=$?
		grep -q "is a symbolic link" err && [ ! -e made-by-link ] && exit $rc
	'
	expect_code 1 'per-thread: DIR itself a link is refused' '
		mkdir real && ln -s real linkdir &&
		tracectl decode -i "$ETM" --per-thread linkdir 2>err; rc=$?
		grep -q "^fatal: linkdir is a symbolic link" err && [ -z "$(ls real)" ] && exit $rc
	'
	expect 'per-thread: a new or empty DIR is written; a second decode into it is refused' '
		mkdir empty && tracectl decode --packets -i "$ETM" --per-thread empty 2>/dev/null &&
		[ -s empty/tid-17235.txt ] &&
		! tracectl decode --packets -i "$ETM" --per-thread empty 2>err &&
		grep -q "not empty" err &&
		tracectl decode --packets -i "$ETM" --per-thread empty --force 2>/dev/null &&
		[ -s empty/tid-17235.txt ]
	'
else
	skip 'per-thread output links' 'no test data'
fi
expect_code 2 '--force without --per-thread is a usage error' 'tracectl decode --force'

if ! "$REC" -o probe.data -- true >/dev/null 2>err; then
	skip 'record -o links' "perf_event_open refused: $(cat err)"
	exit 0
fi
expect 'record -o: a link to a file is refused, neither renamed nor written through' '
	echo precious >target && ln -s "$PWD/target" out.data &&
	! "$REC" -o out.data -- true 2>err && cat err &&
	grep -q "out.data is a symbolic link" err &&
	[ -L out.data ] && [ ! -e out.data.old ] && [ "$(cat target)" = precious ]
'
expect 'record -o: a dangling link is refused and does not create its target' '
	ln -s "$PWD/made-by-record" dangling.data &&
	! "$REC" -o dangling.data -- true 2>err && cat err &&
	grep -q "dangling.data is a symbolic link" err && [ ! -e made-by-record ]
'
expect 'record -o: a regular file is still kept as .old' '
	"$REC" -o plain.data -- true 2>/dev/null && "$REC" -o plain.data -- true 2>/dev/null &&
	[ -s plain.data ] && [ -s plain.data.old ]
'
