#!/usr/bin/env bash
# No code routes on a provider's name: what a provider is and does comes
# from the probe catalog (lang/catalog.c), which is the one place its
# names and aliases are spelled. This fails on a comparison (strcmp and
# kin) against a provider's name, alone or as the start of a probe
# ("uprobe", "tracepoint:...") anywhere else in the sources. Tables that
# are keyed by a probe's full name and compared by the caller are data,
# not routing; they are not comparisons and pass.
#   scripts/check_provider_names.sh [ROOT]
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
# names alone or starting a probe; aliases (one or two letters, which
# other words share) only starting a probe
cat_names=$(sed -n 's/^[[:space:]]*{ PROV_[A-Z_]*, "\([^"]*\)",.*/\1/p' lang/catalog.c | sort -u)
aliases=$(sed -n 's/^[[:space:]]*{ PROV_[A-Z_]*, "[^"]*", "\([^"]*\)".*/\1/p' lang/catalog.c | sort -u)
[ -n "$cat_names" ] && [ -n "$aliases" ] ||
	{ echo "check_provider_names: no provider names found in lang/catalog.c"; exit 2; }
n_alt=$(echo "$cat_names" | paste -sd'|')
a_alt=$(echo "$aliases" | paste -sd'|')
cmp='\b(strn?cmp|strn?casecmp|strstr|memcmp)[[:space:]]*\([^;]*'
pattern="$cmp\"($n_alt)(:[^\"]*)?\"|$cmp\"($a_alt):[^\"]*\""
# the sources of every folder but tests/ and build trees (as check_includes.sh)
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	list() { git ls-files --cached --others --exclude-standard; }
else
	list() { find . -type f ! -path './.git/*' | sed 's|^\./||'; }
fi
bad=$(list | grep -E '\.(c|h)$' | grep -vE '^(tests|build[^/]*|fuzz-build[^/]*)/' |
	grep -vE '^(lang/catalog\.c|kmod/libc/.*)$' | tr '\n' '\0' | xargs -0 grep -nE "$pattern" 2>/dev/null)
if [ -n "$bad" ]; then
	echo "$bad"
	echo "check_provider_names: a provider's name is compared outside lang/catalog.c (use the catalog: its id, syntax, runner or attach kind)"
	exit 1
fi
echo "check_provider_names: $(echo "$cat_names" | wc -l) names and $(echo "$aliases" | wc -l) aliases, compared nowhere else"
