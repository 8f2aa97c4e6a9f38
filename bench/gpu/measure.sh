#!/usr/bin/env bash
# Two measurements beside the overhead table (bench/gpu/README.md):
#  - instrumenting a module of 20 kernels (kernels20): the runtime's
#    rewrite time and the driver's load (JIT) time, with a cold JIT cache
#    and then a warm one (gpux -v prints both);
#  - device nsecs against the host's CLOCK_MONOTONIC: every kernel_exit
#    timestamp of a vecAdd run must fall between two host clock reads
#    taken around the whole run (/proc/uptime, seconds since boot).
#   bench/gpu/measure.sh     env: GPU_BUILD (default build-gpu), GPUX
set -uo pipefail
cd "$(dirname "$0")/../.."
dir=${GPU_BUILD:-build-gpu}
g=${GPUX:-$dir/gpux/gpux}
echo "== module instrumentation time, 20 kernels (cold JIT cache, then warm)"
CUDA_CACHE_PATH=$(mktemp -d)
export CUDA_CACHE_PATH
for run in cold warm; do
	echo "-- $run"
	"$g" -v -o /dev/null -e 'gdev:kernel_exit { @[kernel] = count(); }' -c "$dir/bench/kernels20" 2>&1
done
rm -rf "$CUDA_CACHE_PATH"
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
