# tracectl decode on OpenCSD snapshot directories, checked against OpenCSD 1.3.3's own
# trc_pkt_lister listings (../shared/testdata/opencsd/results): per trace ID and in order,
# every instruction range (offset, start, end, instruction count) and every packet (offset,
# name) must be the same. Ranges come from `decode -j`, packets from `decode -j --packets`.
# Packets are listed by OpenCSD's packet processor alone, without the instruction decoder
# behind it; the `-decode` listings have the decoder's resyncs cut the bytes before sync into
# more NOT_SYNC packets, so those are left out there and checked, with everything else,
# against trc_pkt_lister's packet-only listings (-id, no -decode), and, where trc_pkt_lister
# is installed, against its packet-only listing of every snapshot made at test time.
. "$TOP/tests/e2e/lib.sh"

have_testdata opencsd || { skip 'decode of OpenCSD snapshots' 'no test data'; exit 0; }
S="$TC_TESTDATA/opencsd"
R="$S/results"
export LC_ALL=C

ppl() { case "$1" in *.xz) xzcat "$1" ;; *) cat "$1" ;; esac | tr -d '\r'; }
# Hex without 0x and leading zeros, so both sides print numbers alike.
norm() { sed -E 's/0x//g; s/(^| )0+([0-9a-f])/\1\2/g'; }
# ID first, stable: each ID's records stay in their order.
by_id() { sort -s -k1,1; }

# (grep first: a 2.4 M line listing takes seconds this way, minutes through sed backrefs)
want_ranges() {
	ppl "$1" | grep -F 'OCSD_GEN_TRC_ELEM_INSTR_RANGE(' | tr '[]' '  ' |
		awk -F'[:;=() ]+' '$1 == "Idx" {print $4, $2, $8, $9, $11}' | norm | by_id
}
# Packet lines: "Idx:N; ID:xx; [bytes];<TAB>NAME : ..." (or without the bytes, or behind an
# error message); STM prints "NAME:text".
want_packets() {
	ppl "$1" | grep -F 'Idx:' | awk -F'	' 'NF > 1 && $1 ~ /Idx:[0-9]+; ID:[0-9a-f]+;/ {
		p = $1; sub(/.*Idx:/, "", p); idx = p; sub(/;.*/, "", idx)
		id = p; sub(/^[0-9]+; ID:/, "", id); sub(/;.*/, "", id)
		n = $2; sub(/ *:.*/, "", n); print id, idx, n }' | norm | by_id
}
# Our JSON lines: "key":"string" or "key":number, any order.
json_fields() {	# type, keys...
	awk -F'"' -v type="$1" -v keys="$2" 'BEGIN { nk = split(keys, k, " ") }
	{
		delete v
		for (i = 2; i < NF; i += 2) {
			x = $(i + 1)
			if (x == ":") { v[$i] = $(i + 2); i += 2 } else { gsub(/[:,}]/, "", x); v[$i] = x }
		}
		if (v["type"] != type) next
		line = v[k[1]]
		for (j = 2; j <= nk; j++) line = line " " v[k[j]]
		print line
	}' "$3"
}
got_ranges() { json_fields range "id offset start end insns" "$1" | norm | by_id; }
got_packets() { json_fields packet "id offset packet" "$1" | norm | by_id; }
no_notsync() { grep -v -E ' (I_)?NOT_?SYNC$' || true; }

# same NAME WANT GOT [raw]: equal lists (raw: single source, trc_pkt_lister prints its
# packets with ID 0, so IDs are dropped). Counts compared lines into $TMP/count.
same() {
	if [ "${4:-}" = raw ]; then
		cut -d' ' -f2- "$2" >"$2.x" && cut -d' ' -f2- "$3" >"$3.x" && set -- "$1" "$2.x" "$3.x"
	fi
	if ! cmp -s "$2" "$3"; then
		echo "$1: $(wc -l <"$2") expected, $(wc -l <"$3") decoded; first differences:"
		diff "$2" "$3" | head -n 6
		return 1
	fi
	echo "$1: $(wc -l <"$2") identical"
	echo $(($(cat "$TMP/count" 2>/dev/null || echo 0) + $(wc -l <"$2"))) >"$TMP/count"
}

# Decoded (0), or decoded with problems reported (3).
ok_exit() {
	[ "$1" = 0 ] || [ "$1" = 3 ] && return 0
	echo "exit status $1"; tail -n 5 "$2"; return 1
}

# check SNAPSHOT PPL [raw] [ranges-only]; $BUF picks a buffer other than the first.
check() {
	snap=$1 ref=$R/$2 kind=${3:-} n=$(basename "$1")
	tracectl -j decode -i "$S/$snap" ${BUF:+--buffer "$BUF"} >"$n.el" 2>"$n.el.err"
	ok_exit $? "$n.el.err" || return 1
	want_ranges "$ref" >"$n.wr" && got_ranges "$n.el" >"$n.gr" &&
	same "$snap ranges" "$n.wr" "$n.gr" "$kind" || return 1
	[ "${4:-}" = ranges-only ] && return 0
	tracectl -j decode --packets -i "$S/$snap" ${BUF:+--buffer "$BUF"} >"$n.pk" 2>"$n.pk.err"
	ok_exit $? "$n.pk.err" || return 1
	want_packets "$ref" | no_notsync >"$n.wp" && got_packets "$n.pk" | no_notsync >"$n.gp" &&
	[ -s "$n.wp" ] || { echo "$snap: no packets in $ref"; return 1; }
	if ppl "$ref" | grep -q '^Trace Packet Lister : Data Path fatal error'; then
		# OpenCSD stops at the first reserved trace ID in a frame; we skip it and go on,
		# so its listing is where ours starts.
		head -n "$(wc -l <"$n.wp")" "$n.gp" >"$n.gp.head" && mv "$n.gp.head" "$n.gp"
	fi
	same "$snap packets" "$n.wp" "$n.gp" "$kind"
}

expect 'ETMv4 juno_r1_1 (5 IDs with data in one formatted ETB)' 'check juno_r1_1 juno_r1_1.ppl.xz'
expect 'ETMv3 + PTM: TC2' 'check TC2 TC2.ppl.xz'
expect 'PTM 1.0: Snowball' 'check Snowball Snowball.ppl'
expect 'ETMv4 single step' 'check a57_single_step a57_single_step.ppl'
expect 'ETMv4 juno-uname-001 (no images: every range address is inaccessible)' '
	check juno-uname-001 juno-uname-001.ppl.xz'
expect 'PTM raw source_data: trace_cov_a15' 'check trace_cov_a15 trace_cov_a15.ppl raw'
expect 'ETMv4 raw, packets only in the reference: init-short-addr' '
	check init-short-addr init-short-addr.ppl raw'
expect 'ETE raw: ete_ip' 'check ete/ete_ip ete_ip.ppl raw'
expect 'ETE raw: event_test' 'check ete/event_test event_test.ppl raw'
expect 'STM: stm_only' 'check stm_only stm_only.ppl.xz'
expect 'STM: stm-issue-27' 'check stm-issue-27 stm-issue-27.ppl'
expect 'STM: stm_only-juno (OpenCSD stops at a reserved ID; compared up to there)' '
	check stm_only-juno stm_only-juno.ppl'
expect 'ETMv4 TPIU frames from DSTREAM (8 bad packets reported as errors, exit 3)' '
	check a55-test-tpiu a55-test-tpiu.ppl.xz &&
	grep -q "^warning: .*: 8 decode errors" a55-test-tpiu.pk.err'
expect 'ETMv4 bugfix-exact-match: 1.7 M ranges, 688 K packets' '
	check bugfix-exact-match bugfix-exact-match.ppl.xz'
expect 'STM in the second buffer of juno_r1_1 (--buffer ETB_1)' '
	BUF=ETB_1 check juno_r1_1 juno_r1_1_ETB_1_stm.ppl'
# packet-only listing (trc_pkt_lister -id ID): every packet of ID, NOT_SYNC included
check_id() {
	snap=$1 id=$2 ref=$R/$3 n=$(basename "$1")_$2
	tracectl -j decode --packets --id "$id" -i "$S/$snap" >"$n.pk" 2>"$n.pk.err"
	ok_exit $? "$n.pk.err" || return 1
	want_packets "$ref" >"$n.wp" && got_packets "$n.pk" >"$n.gp" &&
	same "$snap $id packets, NOT_SYNC too" "$n.wp" "$n.gp"
}
expect 'packets alone equal trc_pkt_lister without -decode (juno_r1_1 per ID, TC2 0x13)' '
	check_id juno_r1_1 0x10 juno_r1_1_id0x10.ppl.xz && grep -q NOT_SYNC juno_r1_1_0x10.gp &&
	for i in 1 3 5; do check_id juno_r1_1 0x1$i juno_r1_1_id0x1$i.ppl || exit 1; done &&
	check_id TC2 0x13 TC2_id0x13.ppl
'
# Every snapshot, every packet, NOT_SYNC included: OpenCSD's trc_pkt_lister run here without
# -decode (its packet processors alone, as decode --packets) is the oracle. NOT_SYNC is one
# packet per unsynchronised stretch of an ID in both, not one per chunk of bytes fed.
# lister_packets SNAPSHOT [--buffer NAME] [lister flags...]: its listing, as want_packets.
lister_packets() {
	snap=$1; shift
	src=; [ "${1:-}" = --buffer ] && { src="-src_name $2"; shift 2; }
	rm -f lister.ppl
	# shellcheck disable=SC2086
	trc_pkt_lister -ss_dir "$S/$snap" $src "$@" -logfilename lister.ppl >/dev/null 2>&1
	[ -s lister.ppl ] || { echo "trc_pkt_lister wrote nothing for $snap"; return 1; }
	want_packets lister.ppl
}
# check_all SNAPSHOT [raw] [--buffer NAME] [lister flags...]
check_all() {
	snap=$1; shift; n=$(echo "$snap" | tr / _).all; kind=; buf=
	[ "${1:-}" = raw ] && { kind=raw; shift; }
	[ "${1:-}" = --buffer ] && buf=$2 n=$n.$2
	lister_packets "$snap" "$@" >"$n.wp" || return 1
	tracectl -j decode --packets -i "$S/$snap" ${buf:+--buffer "$buf"} >"$n.pk" 2>"$n.pk.err"
	ok_exit $? "$n.pk.err" || return 1
	got_packets "$n.pk" >"$n.gp"
	if grep -q '^Trace Packet Lister : Data Path fatal error' lister.ppl; then
		# as above: OpenCSD stops at the first reserved trace ID in a frame
		head -n "$(wc -l <"$n.wp")" "$n.gp" >"$n.gp.head" && mv "$n.gp.head" "$n.gp"
	fi
	[ -s "$n.wp" ] || { echo "$snap: trc_pkt_lister listed no packets"; return 1; }
	echo "$snap: NOT_SYNC: $(grep -c -E " (I_)?NOT_?SYNC\$" "$n.wp") expected, $(grep -c -E " (I_)?NOT_?SYNC\$" "$n.gp") listed"
	same "$snap packets, NOT_SYNC too, against trc_pkt_lister" "$n.wp" "$n.gp" "$kind"
}
if command -v trc_pkt_lister >/dev/null; then
	for snap in juno_r1_1 TC2 Snowball a57_single_step juno-uname-001 stm_only stm-issue-27 \
		stm_only-juno bugfix-exact-match; do
		expect "every packet of $snap, NOT_SYNC included, as trc_pkt_lister lists it" \
			'check_all $snap'
	done
	for snap in trace_cov_a15 init-short-addr ete/ete_ip ete/event_test; do
		expect "every packet of $snap (raw source), as trc_pkt_lister lists it" \
			'check_all $snap raw'
	done
	expect 'every packet of a55-test-tpiu (DSTREAM TPIU frames), as trc_pkt_lister lists it' '
		check_all a55-test-tpiu -dstream_format'
	expect 'every packet of juno_r1_1 ETB_1 (STM), as trc_pkt_lister lists it' '
		check_all juno_r1_1 --buffer ETB_1'
	expect 'NOT_SYNC was compared where there is some: TC2 289, stm_only 175, juno_r1_1 4' '
		[ "$(grep -c " NOTSYNC\$" TC2.all.gp)" = 289 ] &&
		[ "$(grep -c " NOTSYNC\$" stm_only.all.gp)" = 175 ] &&
		[ "$(grep -c " I_NOT_SYNC\$" juno_r1_1.all.gp)" = 4 ]'
else
	echo "warning: trc_pkt_lister is not installed (Debian: libopencsd-bin); every snapshot's packets against it is skipped" >&2
	skip 'every packet of every snapshot against trc_pkt_lister' 'trc_pkt_lister is not installed (Debian: libopencsd-bin)'
fi
expect 'the comparison fails on a wrong reference' '
	! check Snowball juno_r1_1_id0x11.ppl && ! check trace_cov_a15 ete_ip.ppl raw'
expect '--id keeps only the IDs asked for, in either form, with all their records' '
	tracectl -j decode -i "$S/juno_r1_1" --id 0x11 --id 0x13,0x15 2>/dev/null >ids.jsonl &&
	[ "$(jq -r .id ids.jsonl | sort -u | tr "\n" " ")" = "0x11 0x13 0x15 " ] &&
	jq -c "select(.id == \"0x13\")" ids.jsonl >a && [ -s a ] &&
	tracectl -j decode -i "$S/juno_r1_1" 2>/dev/null | jq -c "select(.id == \"0x13\")" >b &&
	cmp a b
'
expect_code 2 'a bad --id is a usage error' 'tracectl decode -i "$S/juno_r1_1" --id 0x80'
expect_code 1 'an unknown --buffer is fatal, naming it' '
	tracectl decode -i "$S/juno_r1_1" --buffer ETB_9 2>err; rc=$?
	grep -q "^fatal: .*no trace buffer named .ETB_9." err && exit $rc'
expect 'text output: one line per record, ranges as start-end count ISA E/N' '
	tracectl decode -i "$S/trace_cov_a15" 2>err >t.txt &&
	grep -q "range     0x80000558-0x8000055c 1 A32 E" t.txt &&
	[ "$(grep -c " range " t.txt)" = 20 ] &&
	grep -q "^\[ tracectl decode: buffer PTM_0_2 (source_data), 1 sources, 11 packets, 20 ranges" err
'
expect 'lines were compared at all' '
	c=$(cat "$TMP/count") && echo "$c lines compared" && [ "$c" -gt 2500000 ]'
