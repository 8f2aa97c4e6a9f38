#!/usr/bin/env bash
# GPT-2-small training step under gpux (issue 37's figures), on the GPU
# machine: the step time alone, with a kernel-level probe (cuda:launch
# counting), with a counting gdev:kernel_exit on every kernel (SASS
# patching for PyTorch's and cuBLAS's kernels: a count is lifelong, so
# the Sanitizer's block-enter hook serves it), and with the same count
# behind a predicate that is not lifelong (/activelanes > 0/: the
# block-exit hook, what any kernel_exit probe reading a clock, sm or
# memory costs), in alternated rounds,
# medians; then the first run with gpux's cache cold against warm (the
# whole process: ptxas, patching, first launches); then whether every
# thread launched reached a probe (threads from cuda:launch against
# gdev:kernel_exit) and which path each kernel took (-v).
#   bench/gpu/gpt2.sh [ROUNDS]    env: GPUX (default build-gpu/gpux/gpux), OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gpux=${GPUX:-$here/../../build-gpu/gpux/gpux}
rounds=${1:-2}
out=${OUT:-/tmp}/gpt2
mkdir -p "$out"
py="python3 $here/gpt2_step.py"
export GPUX_CACHE_DIR=$out/cache
T=300
step() { grep -o 'step_ms [0-9.]*' "$1" | awk '{print $2}'; }
run() { # NAME [gpux -e PROGRAM]
	local name=$1; shift
	if [ $# -eq 0 ]; then timeout $T $py >"$out/$name.txt" 2>&1
	else timeout $T "$gpux" -e "$1" -c "$py" >"$out/$name.txt" 2>&1; fi
	echo "$name $(step "$out/$name.txt") $(grep -o 'loss [0-9.]*' "$out/$name.txt")"
}
LAUNCH='cuda:launch { @l = count(); }'
EXIT='gdev:kernel_exit { @x = count(); }'
EXIT_HOOK='gdev:kernel_exit /activelanes > 0/ { @x = count(); }'
run warm_cache "$EXIT" >/dev/null # fills gpux's cache
run warm_cache2 "$EXIT_HOOK" >/dev/null
for r in $(seq "$rounds"); do
	run "alone.$r"
	run "kernel_level.$r" "$LAUNCH"
	run "exit_count.$r" "$EXIT"
	run "exit_hook.$r" "$EXIT_HOOK"
done | tee "$out/rounds.txt"
for c in alone kernel_level exit_count exit_hook; do
	grep "^$c\." "$out/rounds.txt" | awk -v c=$c '{print $2}' | sort -n |
		awk -v c=$c '{v[NR]=$1} END {m = NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; printf "median %s %.2f ms (%d runs)\n", c, m, NR}'
done | tee "$out/medians.txt"
# cold against warm: the whole process
rm -rf "$GPUX_CACHE_DIR"
for c in cold warm; do
	t0=$(date +%s.%N)
	timeout $T "$gpux" -e "$EXIT" -c "$py 3 1" >"$out/$c.txt" 2>&1
	echo "process_$c $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s"
done | tee -a "$out/medians.txt"
t0=$(date +%s.%N); timeout $T $py 3 1 >"$out/alone_process.txt" 2>&1
echo "process_alone $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s" | tee -a "$out/medians.txt"
# every thread launched reaches kernel_exit; the path of each kernel
timeout $T "$gpux" -v -e 'cuda:launch { @t = sum(grid.x * grid.y * grid.z * block.x * block.y * block.z); @launches = count(); } gdev:kernel_exit { @x = count(); }' \
	-c "$py 3 1" >"$out/paths.txt" 2>&1
grep -E '^@(t|x|launches):' "$out/paths.txt" | tee -a "$out/medians.txt"
echo "sass_kernels_launched $(grep -c "^gpux: kernel .*: probed through SASS patching" "$out/paths.txt")" | tee -a "$out/medians.txt"
echo "ptx_modules $(grep -c 'patched a module' "$out/paths.txt")" | tee -a "$out/medians.txt"
echo "untouched_lines $(grep -c 'not instrumented' "$out/paths.txt")" | tee -a "$out/medians.txt"
grep -E 'ptxas compiled' "$out/cold.txt" "$out/paths.txt" | head -3 | tee -a "$out/medians.txt"
