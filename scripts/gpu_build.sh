#!/usr/bin/env bash
# Build everything the GPU test suite needs into one folder (default
# build-gpu/), so the GPU machine needs nothing but that folder:
#   probe_harness        the host harness (libcuda is dlopen'ed at run time)
#   test_kernel.ptx      the trampoline-like test kernel (nvcc -rdc -ptx)
#   cases/NAME/device.{ptx,bpf}   `gpux --emit` of each case's program
#   apps/APP.ptx         nvcc -ptx -arch=sm_80 of vecadd and devfunc from
#                        tests/rewrite/cuda (shared with the rewriter's
#                        tests) and of tests/gpu/apps/reduce.cu (no float
#                        atomics, so its output compares bit for bit)
#   cases/app_*/probes.ptx        `gpux -d ptx` of an app case's program
#   cases/app_*/rewritten.ptx     APP.ptx with those probes spliced in by
#                        the PTX rewriter (app_rewrite), sites its counts
# Then links every case offline for sm_90 (ptxas -c + nvlink), the same
# link the harness does with cuLink, and assembles every rewritten app
# module, so link and PTX errors show up here.
# Two more stages, each its own script:
#   gpux/    gpux, libgpux-host.so (uprobes/tracepoints, libbpf linked
#            in), libgpux-export.so (--export) and libgpux-rt.so (stage gpux)
#   e2e/     tests/gpu/e2e/build.sh: CUDA/driver-API/Python programs that
#            scripts/gpu_test.sh e2e runs alone and under gpux
#   bench/   bench/gpu/build.sh: the overhead benchmarks (gpu_test.sh bench)
#   scripts/gpu_build.sh [OUTDIR]       env: GPUX, NVCC, CC, GPU_LINK_ARCH,
#                                       GPU_BUILD_STAGES (default
#                                       "gpux core e2e bench"; core is the above)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-gpu}
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=${NVCC:-$(command -v nvcc || echo "$cuda/bin/nvcc")}
ptxas=${PTXAS:-$(command -v ptxas || echo "$cuda/bin/ptxas")}
nvlink=${NVLINK:-$(command -v nvlink || echo "$(dirname "$ptxas")/nvlink")}
arch=${GPU_LINK_ARCH:-sm_90}
gpux=${GPUX:-build/cli/gpux}
stages=" ${GPU_BUILD_STAGES:-gpux core e2e bench} "
has_stage() { [[ $stages == *" $1 "* ]]; }

# gpux, the host-probe and exporter modules it dlopens from its own
# folder and the device runtime it preloads, as the e2e and bench stages
# run them on the GPU machine (it has libreadline, libzstd, libLLVM-16,
# libelf and libz; no libbpf, which the host module carries:
# codegen/host.cmake; no libmicrohttpd nor libcurl, which only the
# exporter's module links: there --export says so and the rest runs).
mkdir -p "$out"
# What the bundle was built from, for the record of a run.
{ git rev-parse --short HEAD 2>/dev/null || echo unknown; } | tr -d '\n' >"$out/commit"
git diff --quiet HEAD 2>/dev/null || echo -n "+changes" >>"$out/commit"
if has_stage gpux; then
	cmake -S . -B build -DGPUX_WERROR=ON >/dev/null
	make -C build -j"$(nproc)" gpux gpux-host gpux-export gpux-rt handler_bench >/dev/null
	if ldd build/cli/libgpux-host.so | grep -q 'libbpf\.so'; then
		echo "gpu_build: warning: libgpux-host.so needs libbpf.so, which the GPU machine lacks" >&2
	fi
	if ldd build/cli/gpux | grep -qE 'libmicrohttpd|libcurl'; then
		echo "gpu_build: warning: gpux needs libmicrohttpd or libcurl, which the GPU machine lacks" >&2
	fi
	mkdir -p "$out/gpux"
	cp build/cli/gpux build/cli/libgpux-host.so build/cli/libgpux-export.so \
		build/cli/libgpux-rt.so build/bench/handler_bench "$out/gpux/"
	# CUPTI beside the runtime, which looks there first (cuda:kernel_end's
	# timing): the toolkit's, matching the headers it was built with
	for c in "$cuda/lib64/libcupti.so" "$cuda/extras/CUPTI/lib64/libcupti.so" "$cuda/lib/libcupti.so"; do
		if [ -e "$c" ]; then
			cp -L "$c" "$out/gpux/libcupti.so"
			break
		fi
	done
fi

if has_stage e2e; then
	NVCC=$nvcc bash tests/gpu/e2e/build.sh "$out/e2e"
fi
if has_stage bench; then
	NVCC=$nvcc bash bench/gpu/build.sh "$out/bench"
fi
has_stage core || exit 0

if [ ! -x "$gpux" ]; then
	echo "gpu_build: building gpux" >&2
	cmake -S . -B build -DGPUX_WERROR=ON >/dev/null
	make -C build -j"$(nproc)" gpux >/dev/null
fi
mkdir -p "$out/cases"

# C11 host code; only cuda.h's declarations are needed at build time.
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -Iabi -I"$cuda/include" \
	tests/gpu/probe_harness.c tests/gpu/cases.c -ldl -o "$out/probe_harness"
# sm_80 PTX like the helper library; the driver JITs both for the GPU.
"$nvcc" -arch=sm_80 -rdc=true -ptx -Iabi tests/gpu/test_kernel.cu \
	-o "$out/test_kernel.ptx"

# The rewriter driver for the app cases, from the runtime's sources.
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -Iruntime -Iabi \
	tests/gpu/app_rewrite.c runtime/ptx_scan.c runtime/ptx_site.c \
	runtime/ptx_walk.c runtime/ptx_tramp.c runtime/ptx_rewrite.c \
	-o "$out/app_rewrite"
mkdir -p "$out/apps"
for cu in tests/rewrite/cuda/vecadd.cu tests/rewrite/cuda/devfunc.cu \
	tests/gpu/apps/reduce.cu; do
	"$nvcc" -arch=sm_80 -ptx "$cu" -o "$out/apps/$(basename "$cu" .cu).ptx"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$ptxas" -arch="$arch" -c "$out/test_kernel.ptx" -o "$tmp/kernel.o"
"$out/probe_harness" --list | while IFS=$'\t' read -r name prog app ids; do
	rm -rf "${out:?}/cases/$name"
	"$gpux" --emit "$out/cases/$name" -e "$prog"
	if [ -z "$app" ]; then
		"$ptxas" -arch="$arch" -c "$out/cases/$name/device.ptx" -o "$tmp/$name.o"
		"$nvlink" -arch="$arch" "$tmp/$name.o" "$tmp/kernel.o" -o "$tmp/$name.cubin"
		continue
	fi
	# An app case: the probe module is `gpux -d ptx` (the same text as
	# --emit's device.ptx, whose device.bpf names the probes and maps).
	c=$out/cases/$name
	"$gpux" -d ptx -e "$prog" >"$c/probes.ptx"
	cmp -s "$c/probes.ptx" "$c/device.ptx" ||
		{ echo "gpu_build: $name: gpux -d ptx differs from --emit" >&2; exit 1; }
	iargs=()
	for i in $ids; do iargs+=(-i "$i"); done
	"$out/app_rewrite" -p "$c/probes.ptx" -b "$c/device.bpf" -s "$c/sites" \
		"${iargs[@]}" -o "$c/rewritten.ptx" "$out/apps/$app.ptx"
	"$ptxas" -arch="$arch" "$c/rewritten.ptx" -o "$tmp/$name.cubin"
done
echo "gpu_build: $(ls "$out/cases" | wc -l) cases in $out, linked for $arch"
