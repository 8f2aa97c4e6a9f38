#!/usr/bin/env bash
# Build the GPU overhead benchmarks into OUTDIR (default build-gpu/bench):
# vecadd_bench and gemm_bench (compute_80 PTX for gpux to rewrite + sm_90
# SASS, static cudart, like the e2e programs), atomics_bench and
# clock_drift (sm_90 only: they run without gpux), sass_floor/ (the
# Compute Sanitizer's hooks without gpux), cupti_only.so (CUPTI's kernel
# records without gpux), plus run.sh.
#   bench/gpu/build.sh [OUTDIR]          env: NVCC, CUDA_HOME
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$src/../.." && pwd)
out=${1:-$root/build-gpu/bench}
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=${NVCC:-$(command -v nvcc || echo "$cuda/bin/nvcc")}
mkdir -p "$out"
flags=(-O3 -std=c++17 -I"$src" -Xcompiler -Wall,-Wextra
	-gencode arch=compute_80,code=compute_80 -gencode arch=compute_90,code=sm_90)
"$nvcc" "${flags[@]}" "$src/vecadd_bench.cu" -o "$out/vecadd_bench"
"$nvcc" "${flags[@]}" "$src/gemm_bench.cu" -o "$out/gemm_bench"
"$nvcc" "${flags[@]}" "$src/kernels20.cu" -o "$out/kernels20"
"$nvcc" "${flags[@]}" "$src/launch_bench.cu" -o "$out/launch_bench"
"$nvcc" -O3 -std=c++17 -Xcompiler -Wall,-Wextra -gencode arch=compute_90,code=sm_90 \
	"$src/atomics_bench.cu" -o "$out/atomics_bench"
"$nvcc" -O3 -std=c++17 -Xcompiler -Wall,-Wextra -gencode arch=compute_90,code=sm_90 \
	"$src/clock_drift.cu" -o "$out/clock_drift"
bash "$src/sass_floor/build.sh" "$out/sass_floor"
# CUPTI's kernel records alone, for gpt2_loop.py (attach_ab.sh CUPTI_ONLY=1)
"${CC:-cc}" -O2 -std=c11 -Wall -Wextra -shared -fPIC -I"$cuda/include" \
	"$src/cupti_only.c" -o "$out/cupti_only.so" -ldl
cp "$src/run.sh" "$src/launch.sh" "$out/"
chmod +x "$out/run.sh" "$out/launch.sh"
echo "bench build: vecadd_bench gemm_bench kernels20 launch_bench atomics_bench clock_drift sass_floor cupti_only.so in $out"
