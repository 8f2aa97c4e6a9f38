#!/usr/bin/env bash
# gpux as a packager installs it: `cmake --install` of this build into
# a fresh prefix, then the installed binary alone finds its modules
# (../lib/gpux: the compiler's host module, the device runtime), runs a
# program, lists probes, counts a uprobe (as root), runs a policy from
# share/gpux under --sim and a cuda: probe on a command (the runtime
# found: it says the command never used CUDA); the manual page renders
# clean and names every option of --help; the bash and zsh completions
# complete.
#   install_test.sh CMAKE BUILD_DIR [SANITIZED]
# SANITIZED ON: the runtime is not preloaded (an ASan build's runtime
# must come after ASan's, which a plain command does not load).
set -u
cmake=$1 build=$2 sanitized=${3:-OFF}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
p=$tmp/prefix
"$cmake" --install "$build" --prefix "$p" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; echo "FAIL: cmake --install"; exit 1; }
for f in bin/gpux lib/gpux/libgpux-host.so share/man/man8/gpux.8 \
	share/bash-completion/completions/gpux share/gpux/tools/kernelcount.gpx \
	share/gpux/policies/prefetch_stride.gpx; do
	[ -f "$p/$f" ] || fail "$f not installed"
done
src=$(cd "$(dirname "$0")/../.." && pwd)
n_src=$(ls "$src"/stdlib/tools/*.gpx "$src"/stdlib/policies/*.gpx | wc -l)
n_inst=$(ls "$p"/share/gpux/tools/*.gpx "$p"/share/gpux/policies/*.gpx | wc -l)
[ "$n_src" = "$n_inst" ] || fail "$n_inst of the stdlib's $n_src programs installed"
gpux=$p/bin/gpux
cd "$tmp" || exit 1

out=$("$gpux" -e 'BEGIN { printf("hi %d\n", 1 + 2); exit(); }' 2>&1)
[ "$out" = "$(printf 'Attaching 1 probe...\nhi 3\n\n')" ] || fail "BEGIN: $out"

out=$("$gpux" -l 'gdev:kernel_*' 2>&1)
[ "$out" = "$(printf 'gdev:kernel_entry\ngdev:kernel_exit')" ] || fail "-l: $out"
out=$("$gpux" -l 'uprobe:libc:pthread_creat*' 2>&1)
grep -qx 'uprobe:.*libc.so.6:pthread_create' <<<"$out" || fail "-l of libc: $out"
# a uprobe needs root (bpf()); CI runs as root
if [ "$(id -u)" = 0 ]; then
	# (uprobes fire in every process: only the command's exit counts)
	out=$("$gpux" -e 'uprobe:libc:exit /pid == cpid/ { @ = count(); }' -c true 2>&1)
	grep -qx '@: 1' <<<"$out" || fail "uprobe: $out"
fi

out=$("$gpux" --sim seq "$p/share/gpux/policies/eviction_lfu.gpx" 2>&1 | grep -v "^@")
grep -q '^default ' <<<"$out" && grep -qE "eviction_lfu.gpx +[0-9]+ " <<<"$out" ||
	fail "--sim with an installed policy: $out"

if [ -f "$build/cli/libgpux-rt.so" ] && [ "$sanitized" != ON ]; then
	[ -f "$p/lib/gpux/libgpux-rt.so" ] || fail "lib/gpux/libgpux-rt.so not installed"
	GPUX_RT= "$gpux" -e 'cuda:launch { @ = count(); }' -c true >"$tmp/out" 2>"$tmp/err"
	grep -q '^gpux: WARNING: no CUDA context or module was seen' "$tmp/err" ||
		fail "the installed runtime: $(cat "$tmp/err")"
fi

# the manual page: clean, and every option --help lists is in it
if command -v groff >/dev/null; then
	warn=$(groff -man -ww -z "$p/share/man/man8/gpux.8" 2>&1)
	[ -z "$warn" ] || fail "groff warns: $warn"
	groff -man -Tutf8 -P-c -P-b -P-u "$p/share/man/man8/gpux.8" 2>/dev/null >"$tmp/man.txt"
else
	sed 's/\\-/-/g; s/\\f[BIRP]//g' "$p/share/man/man8/gpux.8" >"$tmp/man.txt"
fi
opts=$("$gpux" --help 2>&1 | sed -n '/^OPTIONS:/,/^EXAMPLES:/p' |
	grep -oE '^    (-[a-zA-Z](, --[a-z-]+)?|--[a-z-]+)' | grep -oE -- '--?[a-zA-Z-]+')
[ "$(wc -w <<<"$opts")" -ge 25 ] || fail "read only $(wc -w <<<"$opts") options from --help"
for o in $opts; do
	grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" "$tmp/man.txt" || fail "the manual lacks $o"
done

# zsh's: a format after -f, in an interactive zsh on a terminal (zpty),
# read as it comes for up to 10 s (a loaded machine draws it late)
if command -v zsh >/dev/null; then
	[ -f "$p/share/zsh/vendor-completions/_gpux" ] || fail "_gpux not installed"
	zcomp=$(timeout 30 zsh -f -c '
		zmodload zsh/zpty
		zpty z zsh -f -i
		zpty -w z "PS1=; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D; function gpux { }"
		zpty -wn z $'"'"'gpux -f p\t'"'"'
		all=
		for i in {1..20}; do
			zpty -r -t z out && all+=$out
			[[ $all == *perfetto* ]] && break
			sleep 0.5
		done
		print -r -- "$all"; zpty -d z' _ "$p/share/zsh/vendor-completions" 2>&1)
	grep -q 'gpux -f perfetto' <<<"$zcomp" || fail "zsh completion: $zcomp"
else
	fail "no zsh to try the zsh completion with (scripts/setup.sh installs it)"
fi

# the completion: options, and a format after -f
comp=$(bash -c '. "$1"; COMP_WORDS=(gpux --expo); COMP_CWORD=1; _gpux; echo "${COMPREPLY[*]}"
	COMP_WORDS=(gpux -f p); COMP_CWORD=2; _gpux; echo "${COMPREPLY[*]}"' _ \
	"$p/share/bash-completion/completions/gpux")
[ "$comp" = "$(printf '%s\n' '--export --export-interval --export-max-series' perfetto)" ] ||
	fail "completion: $comp"

[ "$fails" = 0 ] && echo "install: PASS ($(find "$p" -type f | wc -l) files)"
exit $((fails > 0))
