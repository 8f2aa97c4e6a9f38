#!/usr/bin/env bash
# Where SASS patching's cost goes, on the GPU machine: PyTorch ops one at
# a time (sass_ops.py, µs per launch) alone and under gpux with
#   nomatch     a counting gdev:kernel_exit filtered on a kernel that never
#               runs: no module is patched
#   count       gdev:kernel_exit { @x = count(); }: lifelong values, so
#               called from the Sanitizer's block-enter hook
#   exit_hook   the same count behind /activelanes > 0/, which is not
#               lifelong: called from the block-exit hook
#   entry       gdev:kernel_entry { @x = count(); }
# then GPT-2's kernels (gpt2_step.py, 3 steps) timed by cuda:kernel_end
# alone and beside the counting probe, summed by kernel. sass_floor/
# measures the Sanitizer's hooks without gpux.
#   bench/gpu/sass_cost.sh        env: GPUX (default build-gpu/gpux/gpux), OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gpux=${GPUX:-$here/../../build-gpu/gpux/gpux}
out=${OUT:-/tmp}/sass_cost
mkdir -p "$out"
export GPUX_CACHE_DIR=$out/cache
T=240
ops="python3 $here/sass_ops.py"
declare -A prog=(
	[nomatch]='gdev:kernel_exit:gpux_bench_never_runs { @x = count(); }'
	[count]='gdev:kernel_exit { @x = count(); }'
	[exit_hook]='gdev:kernel_exit /activelanes > 0/ { @x = count(); }'
	[entry]='gdev:kernel_entry { @x = count(); }'
)
timeout $T $ops >"$out/ops.alone.txt" 2>&1
for c in nomatch count exit_hook entry; do
	timeout $T "$gpux" -e "${prog[$c]}" -c "$ops" >"$out/ops.$c.txt" 2>&1
done
timeout $T $ops >"$out/ops.alone2.txt" 2>&1
for f in alone nomatch count exit_hook entry alone2; do
	awk -v c=$f '/^op /{printf "%s %s %s\n", c, $2, $3}' "$out/ops.$f.txt"
done | sort -k2,2 -s | tee "$out/ops.txt"
KE='cuda:kernel_end { @ns[kernel] = sum(duration); @n[kernel] = count(); }'
timeout $T "$gpux" -e "$KE" -c "python3 $here/gpt2_step.py 3 1" >"$out/gpt2.ke.txt" 2>&1
timeout $T "$gpux" -e "$KE gdev:kernel_exit { @x = count(); }" -c "python3 $here/gpt2_step.py 3 1" \
	>"$out/gpt2.ke_count.txt" 2>&1
python3 - "$out/gpt2.ke.txt" "$out/gpt2.ke_count.txt" <<'PY' | tee "$out/gpt2_kernels.txt"
import re, sys
def load(p):
    ns, n = {}, {}
    for line in open(p, errors="replace"):
        m = re.match(r"@(ns|n)\[(.*)\]: (\d+)$", line.rstrip())
        if m:
            (ns if m[1] == "ns" else n)[m[2]] = int(m[3])
    return ns, n
a, an = load(sys.argv[1])
b, _ = load(sys.argv[2])
ta, tb = sum(a.values()), sum(b.get(k, 0) for k in a)
print(f"gpu_time alone {ta/1e6:.1f} ms, with count {tb/1e6:.1f} ms ({tb/max(ta,1):.2f}x) over {len(a)} kernels")
rows = sorted(a, key=lambda k: b.get(k, 0) - a[k], reverse=True)
for k in rows[:25]:
    print(f"{(b.get(k,0)-a[k])/1e6:8.2f} ms extra {b.get(k,0)/max(a[k],1):6.2f}x n={an.get(k,0):5d} {k[:110]}")
PY
