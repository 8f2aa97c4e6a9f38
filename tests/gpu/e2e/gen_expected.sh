#!/usr/bin/env bash
# Writes tests/gpu/e2e/expected/*.txt: the exact gpux output (-o FILE) of
# each exact-text case of run.sh. Each file is produced by gpux itself
# running a BEGIN program that builds the same maps from the launch shape
# (sum(N) prints like a count() of N; hist/lhist are filled in loops over
# the same index ranges as the kernels' threads), so the arithmetic below
# IS the derivation, and the layout is gpux's bpftrace 0.17 printer's.
# The first line is then set to the "Attaching N probe(s)..." of the
# device program. Run it after changing a case; commit the results.
#   tests/gpu/e2e/gen_expected.sh       env: GPUX (default build/cli/gpux)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
gpux=${GPUX:-$root/build/cli/gpux}
exp=$here/expected
mkdir -p "$exp"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# gen NAME NPROBES 'BEGIN body' [json]
gen() {
	local name=$1 np=$2 body=$3 fmt=()
	[ "${4:-}" = json ] && fmt=(-f json)
	local head
	if [ "${4:-}" = json ]; then
		head="{\"type\": \"attached_probes\", \"data\": {\"probes\": $np}}"
	elif [ "$np" = 1 ]; then
		head="Attaching 1 probe..."
	else
		head="Attaching $np probes..."
	fi
	"$gpux" "${fmt[@]}" -e "BEGIN { $body exit(); }" >"$tmp/out" ||
		{ echo "gen_expected: $name: gpux failed" >&2; exit 1; }
	{ printf '%s\n' "$head"; tail -n +2 "$tmp/out"; } >"$exp/$name.txt"
}

VECADD='"vecAdd(float const*, float const*, float*, int)"'
SGEMM='"sgemm_tiled(float const*, float const*, float*, int)"'
INITM='"initMatrix(float*, float*, int)"'
DEVF='"devfuncKernel(float const*, float*, int)"'

# vecadd: 40 blocks x 256 threads = 10240 threads; n = 10000 elements,
# each 2 loads (a[i], b[i]) + 1 store (c[i]) of 4 bytes.
gen vecadd_exit 1 "@[$VECADD] = sum(40 * 256);"
gen vecadd_exit_json 1 "@[$VECADD] = sum(40 * 256);" json
gen vecadd_shared_exit 1 "@[$VECADD] = sum(40 * 256);"
gen vecadd_entry_blocks 1 'for ($b : 0..40) { @[$b] = sum(256); }'
gen vecadd_access 1 "@[$VECADD] = sum(3 * 10000);"
gen vecadd_load_store 1 '@[0] = sum(2 * 10000); @[1] = sum(10000);'
gen vecadd_store_bytes 1 "@bytes[$VECADD] = sum(10000 * 4);"
gen vecadd_gtid 1 'for ($g : 0..10240) { @[$g % 1024] = count(); }'
gen vecadd_tid_hist 1 'for ($b : 0..40) { for ($t : 0..256) { @h = hist($t); } }'
gen vecadd_tid_lhist 1 'for ($b : 0..40) { for ($t : 0..256) { @l = lhist($t, 0, 256, 32); } }'
# threadIdx.x % 3 == 0 for 86 of 0..255 (0, 3, .., 255), in 40 blocks.
gen vecadd_pred 1 '@ = sum(86 * 40);'

# gemm: initMatrix 64 x 256 = 16384 threads, 65536 elements, 4 per
# thread, 2 stores each; sgemm_tiled 16 x 16 blocks of 16 x 16 = 65536
# threads, 256 / 16 = 16 tiles x 2 loads + 1 store each.
gen gemm_exit 1 "@[$INITM] = sum(64 * 256); @[$SGEMM] = sum(16 * 16 * 256);"
gen gemm_blocks_y 1 'for ($y : 0..16) { @[$y] = sum(16 * 256); }'
gen gemm_access 1 "@[$INITM] = sum(65536 * 2); @[$SGEMM] = sum(65536 * (16 * 2 + 1));"
gen gemm_store_bytes 1 "@bytes[$INITM] = sum(65536 * 2 * 4); @bytes[$SGEMM] = sum(65536 * 4);"

# reduce: reduceBlocks 40 x 256 (10000 loads, 40 stores by thread 0),
# reduceFinal 1 x 64 (40 loads by threads < 40, 1 store).
gen reduce_exit 1 '@["reduceBlocks"] = sum(40 * 256); @["reduceFinal"] = sum(64);'
gen reduce_access 1 '@["reduceBlocks"] = sum(10000 + 40); @["reduceFinal"] = sum(40 + 1);'
gen reduce_store_bytes 1 '@bytes["reduceBlocks"] = sum(40 * 4); @bytes["reduceFinal"] = sum(1 * 4);'

# devfunc: 40 x 256 threads, n = 10000; 240 threads return early; clampf
# and put entered once per i < n; put stores unless in[i] == 0, i.e.
# i % 7 == 3 (1429 of 10000): 8571 stores.
gen devfunc_exit 1 "@[$DEVF] = sum(40 * 256);"
gen devfunc_early_exit 1 '@early = sum(40 * 256 - 10000);'
gen devfunc_funcs 3 '@clampf = sum(10000); @put = sum(10000); @ret = sum(2 * 10000);'
gen devfunc_access 1 '@ = sum(10000 + (10000 - 1429));'
gen devfunc_store_bytes 1 '@ = sum((10000 - 1429) * 4);'
gen devfunc_entry_exit 2 "@entry[$DEVF] = sum(40 * 256); @exit[$DEVF] = sum(40 * 256);"

# multistream: fillK 4 x 256 once (n = 1000: 1 store), scaleK 40 x 256 x3
# (n = 10000: 1 load + 1 store), addK 8 x 128 x5 (n = 1000: 2 loads + 1 store).
gen multistream_exit 1 '@["fillK(float*, int)"] = sum(4 * 256);
	@["scaleK(float*, float, int)"] = sum(3 * 40 * 256);
	@["addK(float const*, float*, int)"] = sum(5 * 8 * 128);'
gen multistream_access 1 '@["fillK(float*, int)"] = sum(1000);
	@["scaleK(float*, float, int)"] = sum(3 * 10000 * 2);
	@["addK(float const*, float*, int)"] = sum(5 * 1000 * 3);'

# graph: captured graph (capA 40 x 256, n = 10000: 1 load + 1 store;
# capB 10 x 64, n = 640: 2 loads + 1 store) launched 4 times; explicit
# graph of 2 nodeC nodes (8 x 128, n = 1000: 1 load + 1 store) launched 3 times.
gen graph_exit 1 '@["capA(float*, int)"] = sum(4 * 40 * 256);
	@["capB(float const*, float*, int)"] = sum(4 * 10 * 64);
	@["nodeC(float*, int)"] = sum(3 * 2 * 8 * 128);'
gen graph_access 1 '@["capA(float*, int)"] = sum(4 * 10000 * 2);
	@["capB(float const*, float*, int)"] = sum(4 * 640 * 3);
	@["nodeC(float*, int)"] = sum(3 * 2 * 1000 * 2);'

# constant: poly 40 x 256, launched twice, n = 10000: per i < n one
# ld.global.v4 (in[i]), one st.global (d_out[i]), one atom.global (d_count).
gen constant_exit 1 '@["poly(float4 const*, int)"] = sum(2 * 40 * 256);'
gen named_exit 1 '@["gpux_step"] = sum(40 * 256); @["gpux_step(float*)"] = sum(10 * 128);'
gen constant_access 1 '@["poly(float4 const*, int)"] = sum(2 * 10000 * 3);'
gen constant_atomic 1 '@["poly(float4 const*, int)"] = sum(2 * 10000);'

# coop: coopK 40 x 256, one cooperative launch.
gen coop_exit 1 '@["coopK(float*, float*, int)"] = sum(40 * 256);'

# drvapi: drvScale (extern "C") 40 x 256, n = 10000: 2 loads + 1 store.
gen drvapi_exit 1 '@["drvScale"] = sum(40 * 256);'
gen drvapi_access 1 '@["drvScale"] = sum(10000 * 3);'

# sass_only: nothing instrumentable, so the map stays empty (gpux prints
# an empty count map as one empty line).
gen sass_only 1 '@[""] = count(); clear(@);'
# sass_mixed: only ptxPart (40 x 256) is counted.
gen sass_mixed 1 '@["ptxPart(float*, int)"] = sum(40 * 256);'

# cupy: RawKernel extern "C" vecAdd, 40 x 256.
gen cupy_vecadd 1 '@["vecAdd"] = sum(40 * 256);'
gen cupy_vecadd_cubin 1 '@["vecAdd"] = sum(40 * 256);'
# numba: the kernel name is numba's (regex check in run.sh); the access
# count is exact: 2 loads + 1 store per i < n.
gen numba_vecadd_access 1 '@ = sum(10000 * 3);'

# cuda: events. vecadd (static cudart): 3 cudaMalloc of 40000 bytes, 2
# HtoD and 1 DtoH cudaMemcpy, 1 launch, 3 cudaFree; 2 context syncs:
# cudaDeviceSynchronize, and the one cudart makes as the program exits
# (seen on the H100, 2026-11-22: after the last cudaFree).
CUDA_VECADD="@launch[$VECADD] = sum(1); @malloc = sum(3); @bytes = sum(3 * 40000);
	@memcpy[\"HtoD\"] = sum(2); @memcpy[\"DtoH\"] = sum(1); @free = sum(3); @sync = sum(2);"
gen vecadd_cuda 5 "$CUDA_VECADD"
gen vecadd_cuda_json 5 "$CUDA_VECADD" json
gen vecadd_cuda_launch 1 '@ = sum(1);'
# multistream (per-thread default stream: the _ptds/_ptsz entry points):
# fillK<<<4, 256>>> once, scaleK<<<40, 256>>> x3, addK<<<8, 128>>> x5;
# 2 HtoD cudaMemcpy (40000 + 4000 bytes), 2 DtoH cudaMemcpyAsync (the
# same); 3 cudaStreamSynchronize, and 2 context syncs (cudaDeviceSynchronize
# and cudart's at exit, as in vecadd).
gen multistream_cuda 3 '@["fillK(float*, int)", 4, 256] = sum(1);
	@["scaleK(float*, float, int)", 40, 256] = sum(3);
	@["addK(float const*, float*, int)", 8, 128] = sum(5);
	@memcpy["HtoD", 0] = sum(2); @memcpy["DtoH", 1] = sum(2);
	@bytes = sum(2 * (40000 + 4000)); @sync[0] = sum(2); @sync[1] = sum(3);'
# drvapi: cuModuleLoadData of PTX, 2 cuMemAlloc (4 * 10000 bytes each),
# 2 HtoD + 1 DtoH, 1 launch, 1 cuCtxSynchronize, 2 cuMemFree.
gen drvapi_cuda 6 '@launch["drvScale"] = sum(1); @malloc = sum(2); @bytes = sum(2 * 40000);
	@memcpy["HtoD"] = sum(2); @memcpy["DtoH"] = sum(1); @free = sum(2); @sync = sum(1);
	@modules[1] = sum(1);'
# gemm: initMatrix<<<64, 256>>> and sgemm_tiled<<<(16, 16), (16, 16)>>>.
gen gemm_cuda_filter 2 '@gemm[16, 16, 16, 16] = sum(1); @all = sum(2);'

echo "gen_expected: $(ls "$exp" | wc -l) files in $exp"
