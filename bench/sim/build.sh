#!/usr/bin/env bash
# Build uvm_workloads into OUTDIR (default build-gpu/sim) so that OUTDIR can be
# carried alone to the GPU machine: sm_90 SASS + compute_90 PTX, static
# cudart, libcupti.so.13 copied next to the binary and found through
# RUNPATH=$ORIGIN; validate.sh and the README go along.
#   bench/sim/build.sh [OUTDIR]
# env: NVCC, CUDA_HOME, CUPTI_WHEEL (path to nvidia_cuda_cupti-13.0.*.whl;
#      else pip download),
#      CUPTI_DIR (an unpacked CUPTI tree with include/ and lib/libcupti.so.13;
#      wins over the wheel)
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$src/../.." && pwd)
out=${1:-$root/build-gpu/sim}
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=${NVCC:-$(command -v nvcc || echo "$cuda/bin/nvcc")}

scratch=$(mktemp -d "${TMPDIR:-/tmp}/uvm-cupti.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

if [[ -n ${CUPTI_DIR:-} ]]; then
	cupti=$CUPTI_DIR
else
	whl=${CUPTI_WHEEL:-}
	if [[ -z $whl ]]; then
		echo "build.sh: no CUPTI_WHEEL; pip download nvidia-cuda-cupti==13.0.*" >&2
		pip download --no-deps --only-binary=:all: -d "$scratch/dl" 'nvidia-cuda-cupti==13.0.*' >&2
		whl=$(ls "$scratch"/dl/nvidia_cuda_cupti-13.0.*.whl | head -n1)
	fi
	[[ -f $whl ]] || { echo "build.sh: wheel not found: $whl" >&2; exit 1; }
	python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
		"$whl" "$scratch/whl"
	cupti=$scratch/whl/nvidia/cu13
fi
[[ -f $cupti/include/cupti.h && -f $cupti/lib/libcupti.so.13 ]] || {
	echo "build.sh: no include/cupti.h or lib/libcupti.so.13 under $cupti" >&2
	exit 1
}

mkdir -p "$out"
# The wheel ships only libcupti.so.13 (no libcupti.so link for -lcupti).
mkdir -p "$scratch/lib"
ln -sf "$cupti/lib/libcupti.so.13" "$scratch/lib/libcupti.so"

set -x
"$nvcc" -O2 -std=c++17 -Xcompiler -Wall,-Wextra \
	-gencode 'arch=compute_90,code=[sm_90,compute_90]' \
	-cudart static \
	-I"$cupti/include" \
	"$src/uvm_workloads.cu" -o "$out/uvm_workloads" \
	-L"$scratch/lib" -lcupti -lpthread \
	-Xlinker -rpath -Xlinker '$ORIGIN'
{ set +x; } 2>/dev/null

install -m 0644 "$cupti/lib/libcupti.so.13" "$out/libcupti.so.13"
strip --strip-unneeded "$out/libcupti.so.13" 2>/dev/null || true
strip "$out/uvm_workloads"
# Copy whatever else from the same lib folder the binary or libcupti need
# (none as of 13.0.85: libcupti needs only glibc/libgcc).
for lib in $( (ldd "$out/uvm_workloads"; ldd "$out/libcupti.so.13") | awk '/=>/ {print $1}' | sort -u); do
	if [[ -f $cupti/lib/$lib && ! -f $out/$lib ]]; then
		install -m 0644 "$cupti/lib/$lib" "$out/$lib"
		echo "build.sh: also copied $lib"
	fi
done
cp "$src/validate.sh" "$out/validate.sh"
chmod +x "$out/validate.sh"
cp "$src/README.md" "$out/README.md"

echo "build.sh: RUNPATH: $(readelf -d "$out/uvm_workloads" | awk '/RUNPATH|RPATH/ {print $NF}')"
echo "build.sh: ldd uvm_workloads:"
ldd "$out/uvm_workloads" | sed 's/^/  /'
if ldd "$out/uvm_workloads" | grep -q 'not found'; then
	echo "build.sh: unresolved libraries" >&2
	exit 1
fi
du -sh "$out"
ls -l "$out"
