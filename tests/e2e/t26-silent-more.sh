# More problems that once gave exit 0 without a word (issue 19, item 8): each now warns
# and exits 3, or is refused where nothing could be decoded.
. "$TOP/tests/e2e/lib.sh"

if have_testdata opencsd; then
	S="$TC_TESTDATA/opencsd"
	expect_code 3 'a snapshot source whose trace ID changed: its bytes are named, exit 3' '
		cp -r "$S/juno_r1_1" j && chmod -R u+w j &&
		sed -i "s/^\(TRCTRACEIDR([^)]*)\)=0x00000010/\1=0x00000030/" j/device_6.ini &&
		grep -q "=0x00000030" j/device_6.ini &&
		tracectl decode -i j >/dev/null 2>err; rc=$?
		cat err
		grep -q "^warning: .*bytes of trace ID 0x10 ([0-9]*), which no source of buffer ETB_0 uses: not decoded" err &&
		exit $rc
	'
	expect 'with --id for the other IDs only, the unwanted ID is not a problem' '
		tracectl decode --id 0x11 -i "$S/juno_r1_1" >/dev/null 2>err && ! grep warning err
	'
	expect_code 3 'memory dumps at a wrong address: each named with its address, exit 3' '
		cp -r "$S/juno_r1_1" w && chmod -R u+w w &&
		sed -i "s/^address=0xFFFFFFC000081000/address=0xFFFFFFC001081000/" w/cpu_*.ini &&
		tracectl decode -i w >/dev/null 2>err; rc=$?
		cat err
		grep -q "^warning: .*kernel_dump.bin at 0xffffffc001081000: no traced code was found in it" err &&
		exit $rc
	'
else
	skip 'snapshot trace ID and memory dump problems' 'no opencsd test data'
fi

if have_testdata perfdata; then
	E="$TC_TESTDATA/perfdata/simpleperf-etm"
	mkdir -p sym/data/local/tmp && cp "$E/etm_test_loop" sym/data/local/tmp/ &&
		chmod u+w sym/data/local/tmp/etm_test_loop
	expect_code 3 'a corrupt ELF e_phnum: --format autofdo names the image, exit 3' '
		# e_phnum (offset 56) to PN_XNUM, with no section 0 to give the real count
		printf "\377\377" | dd of=sym/data/local/tmp/etm_test_loop bs=1 seek=56 \
			conv=notrunc status=none &&
		tracectl decode -i "$E/perf_etm.data" --symfs sym --format autofdo >a.txt 2>err
		rc=$?; cat err
		grep -q "etm_test_loop.*no loadable segment" err && exit $rc
	'
	expect_code 3 'an AUX record whose offset no AUXTRACE buffer holds: warned, exit 3' '
		# the aux_offset of the second AUX record (at file offset 2024) from 80 to 2^32+80
		cp "$E/perf_etm.data" x.data && chmod u+w x.data &&
		printf "\001" | dd of=x.data bs=1 seek=2036 conv=notrunc status=none &&
		tracectl decode --packets -i x.data >/dev/null 2>err; rc=$?
		cat err
		grep -q "^warning: x.data: 1 AUX record (the first at offset 0x7e8, AUX offset 0x100000050) lies in no AUXTRACE buffer" err &&
		exit $rc
	'
	expect 'the same file unchanged decodes its 4 AUX blocks without a warning' '
		tracectl decode --packets -i "$E/perf_etm.data" >/dev/null 2>err &&
		! grep warning err && grep -q "4 blocks" err
	'
else
	skip 'ELF, AUX offset and per-thread problems' 'no perfdata test data'
fi

if have_testdata opencsd; then
	B="$TC_TESTDATA/opencsd/bugfix-exact-match"
	expect 'two decodes into one --per-thread directory at once: the second is refused' '
		# the first lists 2.4 M packets (seconds); the second starts once it has written
		tracectl decode --packets -i "$B" --per-thread pt >/dev/null 2>err1 &
		a=$!
		i=0; while [ ! -s pt/cpu-1.txt ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
		kill -0 $a && tracectl decode --packets -i "$B" --per-thread pt --force \
			>/dev/null 2>err2
		rc2=$?
		wait $a; rc1=$?
		cat err1 err2
		[ "$rc2" = 1 ] && [ "$rc1" = 0 ] &&
		grep -q "^fatal: pt is in use by another tracectl decode" err2 &&
		tracectl decode --packets -i "$B" --per-thread pt2 2>/dev/null &&
		cmp pt/cpu-1.txt pt2/cpu-1.txt && rm -r pt2 &&
		tracectl decode --packets -i "$B" --per-thread pt --force 2>/dev/null
	'
else
	skip 'two decodes into one --per-thread directory' 'no opencsd test data'
fi
