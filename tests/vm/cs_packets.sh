#!/bin/sh
# Host check of a guest cs_etm recording whose AUX bytes were an OpenCSD snapshot's formatted
# sink buffer (tests/vm/fake_aux.c writes whole copies of it, each AUX record starting at a
# copy boundary): every AUX record decodes, for each trace ID the guest's CPUs were given,
# to the very packets (type and offset from the record's start) of decoding the snapshot
# itself; the IDs of ETMs the guest lacks are named as not decoded. With PERF_D (Debian perf's
# `report -D` of FILE) and PPL (trc_pkt_lister's listing of the snapshot, OpenCSD's own
# tool): perf prints, for each whole copy, those IDs' packets (offset in the copy, name and
# fields) as trc_pkt_lister does, but for the unsynchronised bytes (perf names only the first).
# Usage: cs_packets.sh TRACECTL CHECK_AUX FILE SNAPSHOT_DIR BUFFER_FILE NCPUS [PERF_D PPL]
set -eu
tc=$1 chk=$2 file=$3 snap=$4 buf=$5 ncpus=$6 perfd=${7:-} ppl=${8:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
size=$(($(wc -c <"$buf") / 16 * 16))
"$chk" --bytes "$buf" --blocks "$file" | grep '^block ' | sort -n -k3 >"$tmp/blocks"
pk='/"type":"packet"/s/.*"id":"\(0x[0-9a-f]*\)".*"cpu":\(-*[0-9]*\).*"offset":\([0-9]*\).*"packet":"\([^"]*\)".*/\1 \2 \3 \4/p'
"$tc" -j decode --packets -i "$snap" 2>/dev/null | sed -n "$pk" >"$tmp/snap"
"$tc" -j decode --packets -i "$file" 2>"$tmp/err" | sed -n "$pk" >"$tmp/guest"
rc=0
awk -v size="$size" -v ncpus="$ncpus" -v errf="$tmp/err" '
	FILENAME ~ /blocks$/ { nb++; bcpu[nb] = $2; boff[nb] = $3; baux[nb] = $4; blen[nb] = $5
		next }
	FILENAME ~ /snap$/ { if ($2 >= 0 && $2 < ncpus) { k = ++wn[$1]; woff[$1, k] = $3
		wtype[$1, k] = $4; ids[$1] = 1; nwant++ } else other[$1] = 1
		next }
	{	# a guest packet: its block (sorted by file offset), by bisection
		lo = 1; hi = nb
		while (lo < hi) { mid = int((lo + hi + 1) / 2); if (boff[mid] <= $3) lo = mid; else hi = mid - 1 }
		if (!nb || $3 < boff[lo] || $3 >= boff[lo] + blen[lo]) { stray++; next }
		if (!($1 in ids)) { foreign++; next }
		k = ++gn[lo, $1]
		if ( woff[$1, k] != $3 - boff[lo] || wtype[$1, k] != $4) bad[lo, $1]++
	}
	END {
		for (i = 1; i <= nb; i++) {
			if (blen[i] != size || baux[i] % size) { partial++; continue }
			whole++
			same = 1
			for (id in ids) if (bad[i, id] || gn[i, id] != wn[id]) {
				same = 0
				if (!told++) printf "host: cs packets: block at file offset %d " \
					"(cpu %d), id %s differs from the snapshot\n", boff[i], bcpu[i], id
			}
			identical += same
		}
		n = 0; for (id in ids) { idl = idl (n++ ? "," : "") id }
		m = 0; for (id in other) { oth = oth (m++ ? "," : "") id
			if (system("grep -q \"trace ID " id ", which no CPU\" " errf)) unnamed++ }
		printf "host: cs packets: %d AUX records of whole snapshot copies, %d identical " \
			"to the snapshot (ids %s, %d packets each), %d partial, %d stray packets, " \
			"%d of other ids; ids %s named as not decoded: %s\n", whole, identical, idl,
			nwant, partial, stray, foreign, oth, unnamed ? "no" : "yes"
		exit !(whole > 0 && identical == whole && !partial && !stray && !foreign && !unnamed)
	}' "$tmp/blocks" "$tmp/snap" "$tmp/guest" || rc=1
[ -n "$perfd" ] || exit $rc

# perf's lines "<tab>Idx:N; ID:xx;<tab>I_NAME : text" (N from the AUXTRACE record's start,
# which is a copy's), trc_pkt_lister's "Idx:N; ID:xx; [bytes];<tab>I_NAME : text".
ids=$(awk -v n="$ncpus" '$2 >= 0 && $2 < n { print substr($1, 3) }' "$tmp/snap" | sort -u |
	tr '\n' '|')
ids=${ids%|}
whole=$(awk -v s="$size" '$5 == s && $4 % s == 0' "$tmp/blocks" | wc -l)
xzcat -f "$ppl" | tr -d '\r' | sed -nE "s/^Idx:([0-9]+); ID:($ids); \[[^]]*\];\t(I_.*)/\2 \1 \3/p" |
	grep -v ' I_NOT_SYNC ' | sed 's/[[:space:]]*$//' | sort | uniq -c |
	awk -v n="$whole" '{ $1 = $1 * n; print }' >"$tmp/want"
tr -d '\r' <"$perfd" | sed -nE "s/^\tIdx:([0-9]+); ID:($ids);\t(I_.*)/\2 \1 \3/p" |
	grep -v ' I_NOT_SYNC ' | sed 's/[[:space:]]*$//' |
	awk -v s="$size" '{ $2 = $2 % s; print }' | sort | uniq -c | awk '{ $1 = $1; print }' >"$tmp/got"
np=$(awk '{ n += $1 } END { print n + 0 }' "$tmp/got")
if [ -s "$tmp/want" ] && cmp -s "$tmp/want" "$tmp/got"; then
	echo "host: perf report -D: $np packets of ids $ids in $whole copies, each copy's as" \
		"trc_pkt_lister lists the snapshot"
else
	echo "host: perf report -D: $np packets of ids $ids differ from trc_pkt_lister's" \
		"listing of the snapshot in $whole copies:"
	diff "$tmp/want" "$tmp/got" | head -5
	rc=1
fi
exit $rc
