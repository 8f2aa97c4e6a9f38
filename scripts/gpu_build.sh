#!/usr/bin/env bash
# Build everything the GPU test suite needs into one folder (default
# build-gpu/), so the GPU machine needs nothing but that folder:
#   probe_harness        the host harness (libcuda is dlopen'ed at run time)
#   test_kernel.ptx      the trampoline-like test kernel (nvcc -rdc -ptx)
#   cases/NAME/device.{ptx,bpf}   `gpux --emit` of each case's program
# Then links every case offline for sm_90 (ptxas -c + nvlink), the same
# link the harness does with cuLink, so link errors show up here.
#   scripts/gpu_build.sh [OUTDIR]       env: GPUX, NVCC, CC, GPU_LINK_ARCH
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-gpu}
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=${NVCC:-$(command -v nvcc || echo "$cuda/bin/nvcc")}
ptxas=${PTXAS:-$(command -v ptxas || echo "$cuda/bin/ptxas")}
nvlink=${NVLINK:-$(command -v nvlink || echo "$(dirname "$ptxas")/nvlink")}
arch=${GPU_LINK_ARCH:-sm_90}
gpux=${GPUX:-build/cli/gpux}

if [ ! -x "$gpux" ]; then
	echo "gpu_build: building gpux" >&2
	cmake -S . -B build >/dev/null
	make -C build -j"$(nproc)" gpux >/dev/null
fi
mkdir -p "$out/cases"

# C11 host code; only cuda.h's declarations are needed at build time.
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -I"$cuda/include" \
	tests/gpu/probe_harness.c tests/gpu/cases.c -ldl -o "$out/probe_harness"
# sm_80 PTX like the helper library; the driver JITs both for the GPU.
"$nvcc" -arch=sm_80 -rdc=true -ptx tests/gpu/test_kernel.cu \
	-o "$out/test_kernel.ptx"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$ptxas" -arch="$arch" -c "$out/test_kernel.ptx" -o "$tmp/kernel.o"
"$out/probe_harness" --list | while IFS=$'\t' read -r name prog; do
	rm -rf "${out:?}/cases/$name"
	"$gpux" --emit "$out/cases/$name" -e "$prog"
	"$ptxas" -arch="$arch" -c "$out/cases/$name/device.ptx" -o "$tmp/$name.o"
	"$nvlink" -arch="$arch" "$tmp/$name.o" "$tmp/kernel.o" -o "$tmp/$name.cubin"
done
echo "gpu_build: $(ls "$out/cases" | wc -l) cases in $out, linked for $arch"
