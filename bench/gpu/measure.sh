#!/usr/bin/env bash
# Two measurements beside the overhead table (bench/gpu/README.md):
#  - instrumenting a module of 20 kernels (kernels20), with a cold JIT
#    cache and then a warm one, for a count into an array map (one small
#    helper) and into a hash map (agg_count, the library's largest kind):
#    gpux -v prints the runtime's rewrite, the link with the helper
#    library's cubin (the driver compiling the user's code and the
#    probes, then linking) and the driver's load, and what the module
#    was loaded as (a linked cubin, or PTX carrying the library, which
#    the driver compiles whole); the sum follows;
#  - device nsecs against the host's CLOCK_MONOTONIC: every kernel_exit
#    timestamp of a vecAdd run must fall between two host clock reads
#    taken around the whole run (/proc/uptime, seconds since boot).
#   bench/gpu/measure.sh     env: GPU_BUILD (default build-gpu), GPUX
set -uo pipefail
cd "$(dirname "$0")/../.."
dir=${GPU_BUILD:-build-gpu}
g=${GPUX:-$dir/gpux/gpux}
echo "== module instrumentation time, 20 kernels (cold JIT cache, then warm)"
for prog in 'gdev:kernel_exit { @[kernel] = count(); }' 'gdev:kernel_exit { @[gtid] = count(); }'; do
	CUDA_CACHE_PATH=$(mktemp -d)
	export CUDA_CACHE_PATH
	for run in cold warm; do
		echo "-- $prog, $run"
		"$g" -v -o /dev/null -e "$prog" -c "$dir/bench/kernels20" 2>&1 |
			awk '{ print }
			     /^gpux: (patched|linked|the driver loaded) / && match($0, / in [0-9.]+ ms/) {
				     t += substr($0, RSTART + 4, RLENGTH - 7) }
			     END { printf "instrumentation total (rewrite + link + load): %.1f ms\n", t }'
	done
	rm -rf "$CUDA_CACHE_PATH"
done
echo "== nsecs against the host's CLOCK_MONOTONIC"
out=$(mktemp)
read -r up0 _ </proc/uptime
"$g" -o "$out" -e 'gdev:kernel_exit { printf("%llu\n", nsecs); }' -c "$dir/e2e/vecadd" >/dev/null
read -r up1 _ </proc/uptime
sort -n "$out" | awk -v a="$up0" -v b="$up1" '/^[0-9]+$/ { v[n++] = $1 }
	END { ok = n && v[0] / 1e9 >= a && v[n - 1] / 1e9 <= b
	      printf "host %.3f .. %.3f s; device nsecs %.6f .. %.6f s (%d values): %s\n",
		     a, b, v[0] / 1e9, v[n - 1] / 1e9, n, ok ? "inside" : "OUTSIDE" }'
rm -f "$out"
