#!/usr/bin/env bash
# Builds sass_floor (floor, kernels.cubin, callbacks.fatbin) into DIR.
#   bench/gpu/sass_floor/build.sh DIR    env: CUDA_HOME
# Run it on the GPU machine without gpux:
#   LD_LIBRARY_PATH=/usr/local/cuda/compute-sanitizer DIR/floor \
#       DIR/kernels.cubin DIR/callbacks.fatbin [MB [ITERS [ROUNDS]]]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build.sh DIR}
mkdir -p "$out"
cuda=${CUDA_HOME:-/usr/local/cuda}
"$cuda/bin/nvcc" -cubin -gencode arch=compute_90,code=sm_90 -o "$out/kernels.cubin" "$here/kernels.cu"
"$cuda/bin/nvcc" --fatbin --keep-device-functions -Xptxas --compile-as-tools-patch \
	-gencode arch=compute_90,code=sm_90 -o "$out/callbacks.fatbin" "$here/callbacks.cu"
cc -std=c11 -O2 -Wall -Wextra -I"$cuda/include" -o "$out/floor" "$here/floor.c" \
	-L"$cuda/lib64/stubs" -lcuda -ldl
