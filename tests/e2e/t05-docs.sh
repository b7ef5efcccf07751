# Help text, man pages and completions must name the same commands and options.
. "$TOP/tests/e2e/lib.sh"

words() { tr ' ' '\n' | grep -v '^$' | sort -u | tr '\n' ' '; }
# Long options in a text: --name tokens (roff writes them \-\-name).
longopts() { sed 's/\\-/-/g' | grep -o -- '--[a-z][a-z0-9-]*' | words; }
section() {	# file, heading: lines after heading up to the next blank line
	awk -v h="$2" '$0 == h {on = 1; next} on && /^$/ {exit} on' "$1"
}
man_section() {	# file, .SH name
	awk -v h=".SH $2" '$0 == h {on = 1; next} on && /^\.SH/ {exit} on' "$1"
}
man_items() {	# file, .SH name: the item lines (after .TP) of a section
	man_section "$1" "$2" | awk 'tp {print; tp = 0} /^\.TP/ {tp = 1}'
}
same() {	# what, expected, actual
	if [ "$2" != "$3" ]; then
		echo "$1 differ: help has [$2], other has [$3]"
		return 1
	fi
	[ -n "$2" ] || { echo "$1: nothing to compare"; return 1; }
	echo "$1: [$2]"
}

tracectl --help >"$TMP/main.help"
commands=$(section "$TMP/main.help" "Commands:" | awk '{print $1}' | words)
global=$(section "$TMP/main.help" "Global options:" | longopts)

expect 'main help lists commands and global options' '
	[ -n "$commands" ] && [ -n "$global" ] &&
	echo "$commands" | grep -q "list" && echo "$global" | grep -q -- "--json"
'

expect 'tracectl.1 documents every command and global option' '
	m=$(man_section "$TOP/man/tracectl.1" "COMMANDS" | sed -n "s/^\.B \([a-z-]*\).*/\1/p" | words) &&
	same commands "$commands" "$m" &&
	m=$(man_items "$TOP/man/tracectl.1" "GLOBAL OPTIONS" | longopts) &&
	same "global options" "$global" "$m"
'

expect 'each command help, man page and completions name the same options' '
	n=0 &&
	for c in $commands; do
		tracectl help $c >"$TMP/$c.help" &&
		own=$(section "$TMP/$c.help" "Options:" | longopts) &&
		g=$(section "$TMP/$c.help" "Global options:" | longopts) &&
		same "$c global options" "$global" "$g" &&
		b=$(sed -n "/^_tracectl_cmd_opts/,/^}/p" "$TOP/completions/tracectl.bash" |
			grep "^	$c)" | longopts) &&
		z=$(sed -n "/^_tracectl_$c() {/,/^}/p" "$TOP/completions/_tracectl" | longopts) &&
		if [ -n "$own" ]; then
			m=$(man_items "$TOP/man/tracectl-$c.1" "OPTIONS" | longopts) &&
			same "$c man options" "$own" "$m" &&
			same "$c bash options" "$own" "$b" &&
			same "$c zsh options" "$own" "$z" && n=$((n + 1))
		else
			[ -z "$b" ] && [ -z "$z" ] || { echo "$c: completions offer [$b] [$z]"; exit 1; }
		fi || exit 1
	done &&
	[ "$n" -gt 0 ]
'

expect 'completions list the same commands and global options' '
	b=$(sed -n "s/^_tracectl_commands=\"\(.*\)\"/\1/p" "$TOP/completions/tracectl.bash" | words) &&
	same "bash commands" "$commands" "$b" &&
	b=$(grep "^_tracectl_opts_global=" "$TOP/completions/tracectl.bash" | longopts) &&
	same "bash global options" "$global" "$b" &&
	z=$(sed -n "/^_tracectl_global=(/,/^)/p" "$TOP/completions/_tracectl" | longopts) &&
	same "zsh global options" "$global" "$z" &&
	z=$(grep -o "1:command:((.*))" "$TOP/completions/_tracectl" | grep -o "[a-z-]*\\\\:" | tr -d "\\\\:" | words) &&
	same "zsh commands" "$commands" "$z"
'

expect 'every man page belongs to a command and is clean roff' '
	for f in "$TOP"/man/*.1; do
		c=$(basename "$f" .1) && c=${c#tracectl} && c=${c#-} &&
		{ [ -z "$c" ] || echo " $commands" | grep -q " $c "; } || { echo "$f: no command $c"; exit 1; }
		w=$(groff -man -ww -z "$f" 2>&1) && [ -z "$w" ] || { echo "$f: $w"; exit 1; }
	done
'

expect 'completion scripts parse' '
	bash -n "$TOP/completions/tracectl.bash" &&
	{ ! command -v zsh >/dev/null || zsh -n "$TOP/completions/_tracectl"; }
'

expect 'bash completion completes commands, options and sinks' '
	cat >"$TMP/c.bash" <<-EOS
	. "$TOP/completions/tracectl.bash"
	tracectl() { "$TRACECTL" "\$@"; }
	COMP_WORDS=(tracectl li); COMP_CWORD=1; _tracectl; echo "\${COMPREPLY[*]}"
	COMP_WORDS=(tracectl list --si); COMP_CWORD=2; _tracectl; echo "\${COMPREPLY[*]}"
	COMP_WORDS=(tracectl --col); COMP_CWORD=1; _tracectl; echo "\${COMPREPLY[*]}"
	EOS
	bash "$TMP/c.bash" >"$TMP/c.out" &&
	printf "list\n--sinks\n--color\n" >"$TMP/c.exp" &&
	diff "$TMP/c.exp" "$TMP/c.out"
'
