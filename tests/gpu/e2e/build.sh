#!/usr/bin/env bash
# Build the end-to-end test programs (tests/gpu/e2e/README.md) into OUTDIR
# (default build-gpu/e2e) for the GPU machine (H100/H200, sm_90), together
# with what run.sh needs there: the Python clients, the expected outputs,
# run.sh itself and, for vecadd_shared, libcudart.so.13 under lib/.
#
# nvcc programs embed compute_80 PTX (what gpux rewrites) and sm_90 SASS
# (what the driver runs without gpux); sass_only and sass_part have sm_90
# SASS only. Static cudart except vecadd_shared (-cudart shared).
#
# Then checks the fatbins: every nvcc program but sass_only must carry PTX,
# sass_only none (and some SASS). The lister is cuobjdump (CUOBJDUMP, PATH
# or CUDA_HOME/bin) or else the project's own test_fatbin (TEST_FATBIN,
# default build/tests/fatbin/test_fatbin); with neither the check is
# skipped with a message, or fails when E2E_REQUIRE_LISTER=1.
#   tests/gpu/e2e/build.sh [OUTDIR]     env: NVCC, CC, CUDA_HOME, CUOBJDUMP,
#                                       TEST_FATBIN, E2E_REQUIRE_LISTER
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$src/../../.." && pwd)
out=${1:-$root/build-gpu/e2e}
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=${NVCC:-$(command -v nvcc || echo "$cuda/bin/nvcc")}
bin2c=$(dirname "$nvcc")/bin2c
[ -x "$bin2c" ] || bin2c=$cuda/bin/bin2c
cc=${CC:-cc}

mkdir -p "$out/expected" "$out/lib"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ptx_sass=(-gencode arch=compute_80,code=compute_80 -gencode arch=compute_90,code=sm_90)
sass_only=(-gencode arch=compute_90,code=sm_90)
common=(-O3 -std=c++17 -I"$src" -Xcompiler -Wall,-Wextra)

nv() { # nv OUT ARGS...: nvcc into $out/OUT
	local o=$1
	shift
	"$nvcc" "${common[@]}" "$@" -o "$out/$o"
}

nv vecadd "${ptx_sass[@]}" "$src/vecadd.cu"
nv two_gpus "${ptx_sass[@]}" "$src/two_gpus.cu"
# Shared cudart, found next to the binary (lib/) wherever the folder goes.
nv vecadd_shared "${ptx_sass[@]}" -cudart shared "$src/vecadd.cu" \
	-Xlinker -rpath -Xlinker "\$ORIGIN/lib"
cudart_so=
for f in "$cuda"/lib64/libcudart.so.[0-9]*; do # libcudart.so.13, not .so.13.0.88
	[[ $f =~ libcudart\.so\.[0-9]+$ ]] && { cudart_so=$f; break; }
done
[ -n "$cudart_so" ] || { echo "e2e build: no libcudart.so.N in $cuda/lib64" >&2; exit 1; }
cp -L "$cudart_so" "$out/lib/"
nv gemm "${ptx_sass[@]}" "$src/gemm.cu"
nv reduce "${ptx_sass[@]}" "$src/reduce.cu"
nv devfunc "${ptx_sass[@]}" "$src/devfunc.cu"
nv multistream "${ptx_sass[@]}" --default-stream per-thread "$src/multistream.cu"
nv graph "${ptx_sass[@]}" "$src/graph.cu"
nv constant "${ptx_sass[@]}" "$src/constant.cu"
nv named "${ptx_sass[@]}" "$src/named.cu"
nv loop "${ptx_sass[@]}" "$src/loop.cu"
nv attach_loop "${ptx_sass[@]}" "$src/attach_loop.cu"
nv live "${ptx_sass[@]}" "$src/live.cu"
nv crash "${ptx_sass[@]}" "$src/crash.cu"
nv edge "${ptx_sass[@]}" "$src/edge.cu" -lpthread
nv coop "${ptx_sass[@]}" "$src/coop.cu"
nv coop_occ "${ptx_sass[@]}" "$src/coop_occ.cu"
# relocatable device code: two files; the device runtime
nv rdc -rdc=true "${ptx_sass[@]}" "$src/rdc_main.cu" "$src/rdc_lib.cu"
nv rdc_dp -rdc=true "${ptx_sass[@]}" "$src/rdc_dp.cu"
nv managed "${ptx_sass[@]}" "$src/managed.cu"
nv sass_only "${sass_only[@]}" "$src/sass_only.cu"
"$nvcc" "${common[@]}" "${sass_only[@]}" -c "$src/sass_part.cu" -o "$tmp/sass_part.o"
"$nvcc" "${common[@]}" "${ptx_sass[@]}" -c "$src/sass_mixed.cu" -o "$tmp/sass_mixed.o"
"$nvcc" "${ptx_sass[@]}" "$tmp/sass_mixed.o" "$tmp/sass_part.o" -o "$out/sass_mixed"

# Driver API: the kernel's PTX text embedded as a NUL-terminated array.
"$nvcc" -O3 -ptx -arch=compute_80 "$src/drvapi_kernel.cu" -o "$out/drvapi_kernel.ptx"
"$bin2c" -c -st -p 0 -n drvapi_ptx "$out/drvapi_kernel.ptx" >"$tmp/drvapi_ptx.h"
# Linked against the toolkit's stub libcuda.so (SONAME libcuda.so.1, no
# rpath to it): the GPU machine's driver provides the real one.
stubs=$cuda/lib64/stubs
[ -f "$stubs/libcuda.so" ] || stubs=$cuda/targets/x86_64-linux/lib/stubs
"$cc" -std=c11 -O2 -Wall -Wextra -Werror -I"$tmp" -I"$cuda/include" \
	"$src/drvapi.c" -L"$stubs" -lcuda -o "$out/drvapi"

cp "$src/run.sh" "$src/faults.sh" "$src/pysum.py" "$src/numba_vecadd.py" "$src/cupy_vecadd.py" \
	"$src/torch_matmul.py" "$src/torch_eltwise.py" "$src/triton_vecadd.py" "$src/torch_compile.py" \
	"$src/jax_fusion.py" "$src/jobs.py" "$out/"
cp "$src"/expected/* "$out/expected/"
# the stdlib policies the policy cases run
mkdir -p "$out/policies"
cp "$root"/stdlib/policies/*.gpx "$out/policies/"
chmod +x "$out/run.sh"

# ---- fatbin checks ----
lister=() kind=
cuobjdump=${CUOBJDUMP:-$(command -v cuobjdump || true)}
[ -n "$cuobjdump" ] || { [ -x "$cuda/bin/cuobjdump" ] && cuobjdump=$cuda/bin/cuobjdump; }
tf=${TEST_FATBIN:-$root/build/tests/fatbin/test_fatbin}
if [ -n "$cuobjdump" ] && [ -x "$cuobjdump" ]; then
	lister=("$cuobjdump" -lelf -lptx) kind=cuobjdump
elif [ -x "$tf" ]; then
	lister=("$tf" list) kind=test_fatbin
fi
if [ ${#lister[@]} -eq 0 ]; then
	msg="e2e build: no cuobjdump or test_fatbin: fatbin checks skipped"
	[ "${E2E_REQUIRE_LISTER:-0}" = 1 ] && { echo "$msg" >&2; exit 77; }
	echo "$msg" >&2
else
	bad=0
	for b in vecadd vecadd_shared gemm reduce devfunc multistream graph constant named coop sass_mixed sass_only; do
		l=$("${lister[@]}" "$out/$b" 2>/dev/null) || { echo "e2e build: $kind failed on $b" >&2; bad=1; continue; }
		nptx=$(grep -c '^PTX file' <<<"$l" || true)
		nelf=$(grep -c '^ELF file.*sm_90' <<<"$l" || true)
		if [ "$b" = sass_only ]; then
			[ "$nptx" -eq 0 ] && [ "$nelf" -gt 0 ] ||
				{ echo "e2e build: $b: want no PTX and sm_90 SASS, $kind lists $nptx PTX, $nelf sm_90 ELF" >&2; bad=1; }
		else
			[ "$nptx" -gt 0 ] && [ "$nelf" -gt 0 ] ||
				{ echo "e2e build: $b: want PTX and sm_90 SASS, $kind lists $nptx PTX, $nelf sm_90 ELF" >&2; bad=1; }
		fi
	done
	# sass_mixed: the PTX is ptxPart's only.
	if ! "${lister[@]}" "$out/sass_mixed" | grep -q '^PTX file' ||
		[ "$("${lister[@]}" "$out/sass_mixed" | grep -c '^PTX file')" -ne 1 ]; then
		echo "e2e build: sass_mixed: want exactly 1 PTX (ptxPart)" >&2
		bad=1
	fi
	grep -q '^\.visible \.entry drvScale' "$out/drvapi_kernel.ptx" ||
		{ echo "e2e build: drvapi_kernel.ptx has no drvScale entry" >&2; bad=1; }
	[ "$bad" -eq 0 ] || exit 1
	echo "e2e build: fatbins checked with $kind"
fi
# tmux for live_tmux.sh, which the GPU machine lacks: the binary and the
# libraries of it a bare machine may not have
if tmux_bin=$(command -v tmux); then
	mkdir -p "$out/tools/lib"
	cp "$tmux_bin" "$out/tools/tmux"
	ldd "$tmux_bin" | awk '$1 ~ /^lib(event|utempter)/ { print $3 }' |
		while read -r l; do cp -L "$l" "$out/tools/lib/"; done
fi
echo "e2e build: $(find "$out" -maxdepth 1 -type f -perm -u+x ! -name '*.sh' | wc -l) programs in $out"
