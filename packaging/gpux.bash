# bash completion for gpux: its options, the formats, workloads and
# export kinds they take, probes (gpux -l) after -l and -e's start,
# and files and commands where those go.
_gpux()
{
	local cur prev
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	case $prev in
	-f) COMPREPLY=($(compgen -W "text json perfetto chrome" -- "$cur")); return ;;
	-B) COMPREPLY=($(compgen -W "line full none" -- "$cur")); return ;;
	-d) COMPREPLY=($(compgen -W "ast types ir bpf verifier ptx" -- "$cur")); return ;;
	--sim) COMPREPLY=($(compgen -W "seq stride random hotcold layers mix trace: chunk_trace:" -- "$cur")); return ;;
	--export) COMPREPLY=($(compgen -W "prometheus: otlp:" -- "$cur")); return ;;
	-l) COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" -l 2>/dev/null)" -- "$cur")); return ;;
	-p) COMPREPLY=($(compgen -W "$(ps -e -o pid= 2>/dev/null)" -- "$cur")); return ;;
	-c) COMPREPLY=($(compgen -c -- "$cur")); return ;;
	-o|--include|--emit|-I) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	-e|--export-interval|--export-max-series) return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "-e -l -v -d --dry-run --unsafe --emit --no-warnings -I
			--include --no-cache -c -p -f -o -q -B --repl --sim --export
			--export-interval --export-max-series --usdt-file-activation --btf -k -kk -h --help -V
			--version --" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -X '!*.gpx' -- "$cur") $(compgen -d -- "$cur"))
}
complete -o filenames -F _gpux gpux
