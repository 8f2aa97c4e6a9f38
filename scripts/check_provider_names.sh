#!/usr/bin/env bash
# No code routes on a provider's name: what a provider is and does comes
# from its unit (providers/NAME.c, lang/provider.h) and the catalog's
# data, and its unit is the one place its names and aliases are spelled.
# This fails on a comparison (strcmp and kin) against a provider's name,
# alone or as the start of a probe ("uprobe", "tracepoint:...") anywhere
# outside the units. Tables that
# are keyed by a probe's full name and compared by the caller are data,
# not routing; they are not comparisons and pass.
#   scripts/check_provider_names.sh [ROOT]
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
# names alone or starting a probe; aliases (one or two letters, which
# other words share) only starting a probe
units=(providers/*.c)
# a unit's own names and aliases (its rows: { &NAME_unit, "name", "alias" | NULL, ...)
names_of() { sed -n 's/^[[:space:]]*{ &[a-z_0-9]*_unit, "\([^"]*\)",.*/\1/p' "$@" | sort -u; }
aliases_of() { sed -n 's/^[[:space:]]*{ &[a-z_0-9]*_unit, "[^"]*", "\([^"]*\)".*/\1/p' "$@" | sort -u; }
cat_names=$(names_of "${units[@]}")
aliases=$(aliases_of "${units[@]}")
[ -n "$cat_names" ] && [ -n "$aliases" ] ||
	{ echo "check_provider_names: no provider names found in providers/*.c"; exit 2; }
cmp='\b(strn?cmp|strn?casecmp|strstr|memcmp)[[:space:]]*\([^;]*'
# names alone or starting a probe; aliases only starting a probe
pattern_of() {
	local n a
	n=$(echo "$1" | grep . | paste -sd'|')
	a=$(echo "$2" | grep . | paste -sd'|')
	echo "${n:+$cmp\"($n)(:[^\"]*)?\"}${n:+${a:+|}}${a:+$cmp\"($a):[^\"]*\"}"
}
# the sources of every folder but tests/ and build trees (as check_includes.sh)
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	list() { git ls-files --cached --others --exclude-standard; }
else
	list() { find . -type f ! -path './.git/*' | sed 's|^\./||'; }
fi
bad=$(list | grep -E '\.(c|h)$' | grep -vE '^(tests|build[^/]*|fuzz-build[^/]*)/' |
	grep -vE '^(providers/[^/]*\.c|kmod/libc/.*)$' | while read -r f; do [ -f "$f" ] && echo "$f"; done |
	tr '\n' '\0' | xargs -0 grep -nE "$(pattern_of "$cat_names" "$aliases")" 2>/dev/null)
# a unit (and its attacher) may name its own providers, no other's
for u in "${units[@]}"; do
	own=${u%_attach.c}
	own=${own%.c}.c # an attacher's unit is NAME.c
	[ -f "$own" ] || own=$u
	others=$(comm -23 <(echo "$cat_names") <(names_of "$own"))
	other_aliases=$(comm -23 <(echo "$aliases") <(aliases_of "$own"))
	hit=$(grep -nE "$(pattern_of "$others" "$other_aliases")" "$u" | sed "s|^|$u:|")
	bad=$bad${hit:+$'\n'$hit}
done
bad=$(echo "$bad" | grep .)
if [ -n "$bad" ]; then
	echo "$bad"
	echo "check_provider_names: a provider's name is compared outside its unit (providers/; use the unit's interface, lang/provider.h, or the catalog's data: syntax, runner, attach kind)"
	exit 1
fi
echo "check_provider_names: $(echo "$cat_names" | wc -l) names and $(echo "$aliases" | wc -l) aliases of ${#units[@]} files in providers/, each compared only in its own unit"
