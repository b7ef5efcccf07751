# The command frame: help, version, usage errors, global options, stdout errors.
. "$TOP/tests/e2e/lib.sh"

expect '--help and help list the commands' '
	tracectl --help >out && grep -q "^  list " out && grep -q "^  version " out &&
	tracectl help >out2 && cmp out out2
'
expect 'help CMD equals CMD --help' '
	tracectl help list >a && tracectl list --help >b && cmp a b &&
	grep -q "^usage: tracectl \[global options\] list" a
'
expect '--version prints the version' '
	tracectl --version | grep -q "^tracectl [0-9a-f]"
'
expect 'version -j names all five libraries' '
	tracectl version -j >v.json &&
	for l in libperf libtraceevent libelf opencsd libipt; do
		jq -e --arg l $l ".libraries[\$l] | strings | length > 0" v.json >/dev/null || exit 1
	done
'
expect_code 2 'no command: usage on stderr, exit 2' '
	tracectl >out 2>err; rc=$?; [ ! -s out ] && grep -q "^usage:" err; [ $? -eq 0 ] && exit $rc
'
expect_code 2 'unknown command: error: prefix, exit 2' '
	tracectl lst 2>err; rc=$?; grep -q "^error: .lst. is not a tracectl command" err && exit $rc
'
expect_code 2 'commands are not prefix-matched' 'tracectl vers'
expect_code 2 'unknown option, exit 2' '
	tracectl --nope 2>err; rc=$?; grep -q "^error: unknown option .--nope." err && exit $rc
'
expect_code 2 'bad --color value' 'tracectl --color=sometimes list'
expect_code 2 'missing option value' 'tracectl list --sysfs-root'
expect 'global options work after the command too' '
	tracectl --sysfs-root "$FIX/empty" -j list >a &&
	tracectl list -j --sysfs-root "$FIX/empty" >b && cmp a b && jq -e ".pmus == []" a
'
expect 'NO_COLOR and --color' '
	tracectl --color=always help >/dev/null &&
	NO_COLOR=1 tracectl --sysfs-root "$FIX/empty" list | grep -v "$(printf "\033")" >/dev/null
'
expect_code 1 'a full disk on stdout is reported' '
	tracectl --help >/dev/full 2>err; rc=$?; grep -q "^fatal: write error on standard output" err && exit $rc
'
expect_code 141 'a reader that went away ends quietly with 141' '
	(sleep 0.3; tracectl --help 2>err; echo $? >rc) | true; sleep 0.1; [ ! -s err ] && exit $(cat rc)
'
