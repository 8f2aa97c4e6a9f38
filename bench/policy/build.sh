#!/usr/bin/env bash
# Build the UVM prefetch-policy workloads into OUTDIR (default
# build-gpu/policy): stride_vadd and layer_sweep, sm_90 SASS plus
# compute_90 PTX (gpux rewrites the PTX), static cudart (nvcc's default).
#   bench/policy/build.sh [OUTDIR]          env: NVCC, CUDA_HOME
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$src/../.." && pwd)
out=${1:-$root/build-gpu/policy}
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=${NVCC:-$(command -v nvcc || echo "$cuda/bin/nvcc")}
mkdir -p "$out"
# shellcheck disable=SC2054 # the commas are nvcc's, inside one word
flags=(-O2 -gencode 'arch=compute_90,code=[sm_90,compute_90]'
	-I"$src" -Xcompiler -Wall,-Wextra)
for prog in stride_vadd layer_sweep; do
	"$nvcc" "${flags[@]}" "$src/$prog.cu" -o "$out/$prog"
done
echo "policy bench build: stride_vadd layer_sweep in $out"
