# bash completion for tracectl. Install as /usr/share/bash-completion/completions/tracectl.
# Option lists are checked against `tracectl CMD --help` by tests/e2e/t05-docs.sh.

_tracectl_opts_global="--json --pretty --quiet --verbose --color --sysfs-root --help --version"

_tracectl_cmd_opts()
{
	case "$1" in
	list) echo "--sinks --graph" ;;
	decode) echo "--input --packets --per-thread --force --buffer --id --format --no-comm --fields --itrace --call-trace --show-events --time --cpu --pid --tid --comm --dso --sym --symfs --vmlinux --kallsyms --kcore --jobs --decoder --branches" ;;
	report) echo "--input --sort --limit --time --cpu --pid --tid --comm --dso --sym --per-thread --symfs --vmlinux --kallsyms --kcore --jobs --decoder" ;;
	diff) echo "--fail-above --sort --limit --symfs --time --cpu --pid --tid --comm --dso --sym --vmlinux --kallsyms --kcore --jobs --decoder" ;;
	record) echo "--all-cpus --cpu --pid --tid --per-thread --output --pmu --config --sink --user --kernel --mmap-pages --snapshot --snapshot-on --start-paused --pause-on --resume-on --event --dry-run --format --filter --emulator --ground-truth" ;;
	help) echo "" ;;
	version) echo "" ;;
	esac
}

_tracectl_commands="list decode report diff record help version"

_tracectl()
{
	local cur prev cmd i
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}

	# record's and report's --per-thread take no value; decode's takes a directory.
	if [[ "$prev" == --per-thread && " ${COMP_WORDS[*]} " == *" decode "* ]]; then
		COMPREPLY=($(compgen -d -- "$cur"))
		return
	fi
	# record's --format is the emulated trace format; decode's the output format.
	if [[ "$prev" == --format && " ${COMP_WORDS[*]} " == *" record "* ]]; then
		COMPREPLY=($(compgen -W "pt etm" -- "$cur"))
		return
	fi
	case "$prev" in
	--sysfs-root|--symfs)
		COMPREPLY=($(compgen -d -- "$cur"))
		return ;;
	--pmu)
		COMPREPLY=($(compgen -W "cs_etm intel_pt emulated" -- "$cur"))
		return ;;
	--emulator)
		COMPREPLY=($(compgen -W "qemu ptrace" -- "$cur"))
		return ;;
	--itrace)
		COMPREPLY=($(compgen -W "i b c r e cr cre be ie" -- "$cur"))
		return ;;
	--time|--comm|--sym)
		return ;;
	--filter)
		return ;;
	--config)
		# Format terms of this machine's trace PMUs; completes the term after the last comma.
		local done=
		[[ "$cur" == *,* ]] && done=${cur%,*},
		COMPREPLY=($(compgen -P "$done" -W "$(tracectl list 2>/dev/null |
			sed -n 's/^    \([a-z0-9_]*\)  *config[0-9]*:.*/\1/p' | sort -u)" -- "${cur##*,}"))
		return ;;
	-o|--output|--pause-on|--resume-on|-e|--event|--ground-truth)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	-C|--cpu|-p|--pid|-t|--tid|-m|--mmap-pages)
		return ;;
	-i|--input|--vmlinux|--kallsyms|--kcore)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--decoder)
		COMPREPLY=($(compgen -W "fast reference" -- "$cur"))
		return ;;
	--jobs)
		return ;;
	--format)
		COMPREPLY=($(compgen -W "folded chrome svg autofdo bolt" -- "$cur"))
		return ;;
	-F|--fields)
		COMPREPLY=($(compgen -P "${cur%${cur##*,}}" -W "comm pid tid cpu time event flags insncnt ip sym symoff dso dsoff addr offset id" -- "${cur##*,}"))
		return ;;
	--sort)
		COMPREPLY=($(compgen -W "self total calls name" -- "$cur"))
		return ;;
	--limit|--comm|--fail-above)
		return ;;
	--dso)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--buffer|--id)
		# Buffer names and trace IDs are in the snapshot's ini files: nothing to offer.
		return ;;
	--sink)
		# Sinks of this machine (or of --sysfs-root, passed through the environment).
		COMPREPLY=($(compgen -W "$(tracectl list --sinks 2>/dev/null)" -- "$cur"))
		return ;;
	esac
	case "$cur" in
	--color=*)
		COMPREPLY=($(compgen -W "auto always never" -- "${cur#--color=}"))
		return ;;
	esac

	cmd=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case "${COMP_WORDS[i]}" in
		--sysfs-root) ((i++)) ;;
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done

	if [[ -z "$cmd" ]]; then
		if [[ "$cur" == -* ]]; then
			COMPREPLY=($(compgen -W "$_tracectl_opts_global" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$_tracectl_commands" -- "$cur"))
		fi
		return
	fi
	if [[ "$cmd" == help ]]; then
		COMPREPLY=($(compgen -W "$_tracectl_commands" -- "$cur"))
		return
	fi
	if [[ "$cmd" == diff && "$cur" != -* ]]; then
		COMPREPLY=($(compgen -f -- "$cur"))
		return
	fi
	if [[ "$cmd" == record && "$cur" != -* ]]; then
		COMPREPLY=($(compgen -c -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -W "$(_tracectl_cmd_opts "$cmd") $_tracectl_opts_global" -- "$cur"))
}
complete -F _tracectl tracectl
