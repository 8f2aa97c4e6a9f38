#!/usr/bin/env bash
# What gpux's module cache (runtime/rt_cache.c) saves: each program run
# under gpux -v three ways, the cache cold (emptied first), warm (the
# same run again) and off (--no-cache), with a probe that calls the
# helper library (a hash-map count), so every patched module is linked
# with the library's cubin. Prints, per program and way, the run's wall
# time and the link or cache-load times the runtime reports (-v lines).
# A benchmark, not a test. Usage, from the repo root on the GPU machine:
#   bench/gpu/jit_cache.sh GPUX 'CMD' ['CMD'...]
set -u
gpux=$1; shift
prog='gdev:kernel_exit { @[kernel, blockIdx.x] = count(); }'
export GPUX_CACHE_DIR=${GPUX_CACHE_DIR:-/tmp/gpux-jit-cache}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-28s %-6s %9s %8s %12s %12s\n' program way wall_ms modules link_ms_sum cache_ms_sum
for cmd in "$@"; do
	rm -rf "$GPUX_CACHE_DIR"
	for way in cold warm off; do
		opt=()
		[ "$way" = off ] && opt=(--no-cache)
		t0=$(date +%s%N)
		"$gpux" -v "${opt[@]}" -e "$prog" -c "$cmd" >"$tmp/out" 2>"$tmp/err"
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		link=$(sed -n "s/^gpux: linked a patched module .* in \([0-9.]*\) ms$/\1/p" "$tmp/err" |
			awk '{ s += $1; n++ } END { printf "%.1f %d", s, n }')
		cache=$(sed -n "s/^gpux: a patched module linked .*from gpux's cache in \([0-9.]*\) ms$/\1/p" "$tmp/err" |
			awk '{ s += $1; n++ } END { printf "%.1f %d", s, n }')
		set -- $link $cache
		printf '%-28s %-6s %9d %8d %12s %12s\n' "${cmd:0:28}" "$way" "$ms" $(( $2 + $4 )) "$1" "$3"
	done
done
