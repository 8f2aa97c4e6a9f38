#!/usr/bin/env bash
# Every one-liner the e2e cases (run.sh -P) and the GPU benchmarks
# (bench/gpu/run.sh -P) run must compile: gpux --dry-run on each.
#   tests/gpu/e2e/dryrun.sh GPUX
set -uo pipefail
gpux=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
n=0 bad=0
while IFS= read -r p; do
	[ -n "$p" ] || continue
	n=$((n + 1))
	if ! msg=$("$gpux" --dry-run -e "$p" 2>&1); then
		echo "does not compile: $p"
		printf '%s\n' "$msg" | sed 's/^/    /'
		bad=$((bad + 1))
	fi
done < <(bash "$here/run.sh" -P; bash "$root/bench/gpu/run.sh" -P
	 sed -n "s/^\t\[[a-z_]*\]='\(.*\)'\$/\1/p" "$root/bench/gpu/launch.sh")
echo "$n one-liners, $bad failed"
[ "$n" -gt 0 ] && [ "$bad" -eq 0 ]
