#!/usr/bin/env bash
# End-to-end gpux tests on a GPU machine (tests/gpu/e2e/README.md): each
# case runs a program alone, then under `gpux -o FILE -e PROGRAM -c APP`,
# and checks that
#   - the program's stdout is byte-identical and its exit status the same
#     (gpux exits with the program's status);
#   - gpux's output (-o FILE) is the expected text (expected/NAME.txt),
#     or passes the case's looser check where values vary (SM ids, warp
#     slots, addresses, timestamps, numba's kernel name);
#   - for SASS-only kernels, gpux's stderr names the kernel and says PTX.
# Prints PASS/FAIL/SKIP per case with the reason, then "N passed, M failed"
# (", K skipped"); exits 1 when a case failed, 2 when it cannot run.
#
#   tests/gpu/e2e/run.sh [-l | -P | CASE|GLOB...]
#     -l            list the cases (name, program, one-liner, env) and stop
#     -P            print each distinct one-liner and stop (dryrun.sh)
#   env: E2E_DIR   the built folder (default: this script's folder when it
#                  holds the programs, else build-gpu/e2e of the repo)
#        GPUX      gpux binary (default E2E_DIR/../gpux/gpux)
#        E2E_TIMEOUT  seconds per run (default 60)
#        OUT       logs go to $OUT/e2e/ (else E2E_DIR/logs/)
#        PYTHON    python3 for the numba/CuPy cases (default python3)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}

# ---- the cases ----
# add NAME 'APP' 'PROGRAM' 'CHECKS' ['GPUX OPTIONS'] ['ENV=V ...'] ['REQUIRES']
#   APP       shell command line run in $dir, alone and as gpux -c APP
#   CHECKS    ';'-separated calls of the check functions below (exact,
#             head_is, map_total, hist_total, only_maps, one_map_line,
#             printf_lines, stderr_has, same_values, ...)
#   REQUIRES  a command that must succeed, else the case is skipped
names=() apps=() progs=() checks=() opts=() envs=() reqs=()
add() {
	names+=("$1") apps+=("$2") progs+=("$3") checks+=("$4")
	opts+=("${5:-}") envs+=("${6:-}") reqs+=("${7:-}")
}
EXIT_COUNT='gdev:kernel_exit { @[kernel] = count(); }'
ACCESS_COUNT='gdev:access { @[kernel] = count(); }'
STORE_BYTES='gdev:access /store/ { @bytes[kernel] = sum(size); }'
PAGES='gdev:access { @pages[addr >> 21] = count(); }'
PRINTF='gdev:kernel_exit { printf("%s block %d warp %d at %d\n", kernel, blockIdx.x, warp, nsecs); }'
GEMM_SM='gdev:kernel_entry:*gemm* { @sm[sm] = count(); @w = lhist(warp, 0, 32, 1); }'
VECADD_RE='vecAdd\(float const\*, float const\*, float\*, int\)'
UPROBE_LAUNCH='uprobe:libcuda:cuLaunchKernel* { @ = count(); }'
ROOT='[ "$(id -u)" -eq 0 ]'
CUDA_API='cuda:launch { @launch[kernel] = count(); } cuda:malloc { @malloc = count(); @bytes = sum(bytes); } cuda:memcpy { @memcpy[kind] = count(); } cuda:free { @free = count(); } cuda:sync { @sync = count(); }'
LATENCY='cuda:launch { @t[kernel] = nsecs; } gdev:kernel_entry { @lat[kernel] = hist(nsecs - @t[kernel]); }'
# Every kind of probe in one program (the one controller loop): the
# uprobe on libcuda and cuda:launch count the same launches.
MIXED='uprobe:libcuda:cuLaunchKernel* { @u = count(); } cuda:launch { @l = count(); } gdev:kernel_exit { @e = count(); } tracepoint:syscalls:sys_enter_ioctl /pid == cpid/ { @i = count(); } interval:ms:100 { @t = count(); } END { print(@u); }'
NUMBA='import numba.cuda, numpy'
RDC_VADD='rdc_vadd(float const*, float const*, float*, int)'
CUPY='import cupy, numpy'
# threads launched per kernel (cuda:launch) against gdev:kernel_exit
# all threads launched (cuda:launch) against all exits or entries
LAUNCHED_EXITS='cuda:launch { @t = sum(grid.x * grid.y * grid.z * block.x * block.y * block.z); } gdev:kernel_exit { @x = count(); }'
LAUNCHED_ENTRIES='cuda:launch { @t = sum(grid.x * grid.y * grid.z * block.x * block.y * block.z); } gdev:kernel_entry { @x = count(); }'
LAUNCH_EXITS='cuda:launch { @t[kernel] = sum(grid.x * grid.y * grid.z * block.x * block.y * block.z); } gdev:kernel_exit { @x[kernel] = count(); }'

add vecadd_exit './vecadd' "$EXIT_COUNT" exact
add vecadd_exit_json './vecadd' "$EXIT_COUNT" exact '-f json'
# exit() on the device ends the probe there (as in bpftrace): nothing
# after it runs, however many threads got that far before tracing stopped
add vecadd_exit_ends_probe './vecadd' 'gdev:kernel_exit { @a = count(); exit(); @b = count(); }' \
	'positive a; last_value b 0; only_maps a b'
add vecadd_entry_blocks './vecadd' 'gdev:kernel_entry { @[blockIdx.x] = count(); }' exact
add vecadd_access './vecadd' "$ACCESS_COUNT" exact
add vecadd_load_store './vecadd' 'gdev:access { @[store] = count(); }' exact
add vecadd_store_bytes './vecadd' "$STORE_BYTES" exact
add vecadd_pages './vecadd' "$PAGES" 'head_is "Attaching 1 probe..."; map_total pages 30000 1; only_maps pages'
add vecadd_printf './vecadd' "$PRINTF" "printf_lines '$VECADD_RE block ([0-9]+) warp [0-9]+ at -?[0-9]+' 10240 40 256"
add vecadd_printf_nsecs './vecadd' 'gdev:kernel_exit { printf("%llu\n", nsecs); }' "printf_lines '[0-9]+' 10240"
add vecadd_gtid './vecadd' 'gdev:kernel_exit { @[gtid % 1024] = count(); }' exact
add vecadd_tid_hist './vecadd' 'gdev:kernel_exit { @h = hist(threadIdx.x); }' exact
add vecadd_tid_lhist './vecadd' 'gdev:kernel_exit { @l = lhist(threadIdx.x, 0, 256, 32); }' exact
add vecadd_pred './vecadd' 'gdev:kernel_exit /threadIdx.x % 3 == 0/ { @ = count(); }' exact
add vecadd_shared_exit './vecadd_shared' "$EXIT_COUNT" exact

add gemm_exit './gemm' "$EXIT_COUNT" exact
add gemm_sm_warp './gemm' "$GEMM_SM" 'head_is "Attaching 1 probe..."; map_total sm 65536 256; hist_total w 65536 32; only_maps sm w'
add gemm_blocks_y './gemm' 'gdev:kernel_entry:*gemm* { @[blockIdx.y] = count(); }' exact
add gemm_access './gemm' "$ACCESS_COUNT" exact
add gemm_store_bytes './gemm' "$STORE_BYTES" exact

add reduce_exit './reduce' "$EXIT_COUNT" exact
add reduce_access './reduce' "$ACCESS_COUNT" exact
add reduce_store_bytes './reduce' "$STORE_BYTES" exact

add devfunc_exit './devfunc' "$EXIT_COUNT" exact
add devfunc_early_exit './devfunc' 'gdev:kernel_exit /gtid >= 10000/ { @early = count(); }' exact
add devfunc_funcs './devfunc' 'gdev:func_entry:*clampf* { @clampf = count(); } gdev:func_entry:*put* { @put = count(); } gdev:func_exit { @ret = count(); }' exact
add devfunc_access './devfunc' 'gdev:access { @ = count(); }' exact
add devfunc_store_bytes './devfunc' 'gdev:access /store/ { @ = sum(size); }' exact
add devfunc_entry_exit './devfunc' 'gdev:kernel_entry { @entry[kernel] = count(); } gdev:kernel_exit { @exit[kernel] = count(); }' exact

add multistream_exit './multistream' "$EXIT_COUNT" exact
add multistream_access './multistream' "$ACCESS_COUNT" exact
add graph_exit './graph' "$EXIT_COUNT" exact
add graph_access './graph' "$ACCESS_COUNT" exact
add constant_exit './constant' "$EXIT_COUNT" exact
add constant_access './constant' "$ACCESS_COUNT" exact
add constant_atomic './constant' 'gdev:access /atomic/ { @[kernel] = count(); }' exact
# the program's own kernels named gpux_step (extern "C" and C++)
add named_exit './named' "$EXIT_COUNT" exact
add coop_exit './coop' "$EXIT_COUNT" exact
# A cooperative launch at the occupancy limit (1024 threads, the blocks
# the occupancy API allows): the same configuration, attributes and sum
# under gpux (stdout), and one exit per thread launched.
add coop_occ_access './coop_occ' 'gdev:kernel_exit { @e = count(); } gdev:access { @a = count(); }' \
	"config_exits e; positive a; only_maps e a; stderr_lacks refused"
# -rdc=true (CMake's CUDA_SEPARABLE_COMPILATION): the module is linked
# again from each file's rewritten PTX; calls and variables across files
add rdc_exit './rdc' "$EXIT_COUNT" \
	"has_line '@[$RDC_VADD]: 10240'; has_line '@[rdc_fill(float*, int)]: 10240'; only_maps ''; stderr_lacks 'not instrumented'"
# rdc_twice is a call from the other file (10000 threads); nvcc inlines
# it into rdc_fill, its own file's kernel
add rdc_funcs './rdc' 'gdev:func_entry:*rdc_twice* { @twice = count(); }' "has_line '@twice: 10000'; only_maps twice"
add rdc_store_bytes './rdc' "$STORE_BYTES" \
	"has_line '@bytes[$RDC_VADD]: 40000'; has_line '@bytes[rdc_fill(float*, int)]: 40000'; only_maps bytes"
# with the device runtime (libcudadevrt's units go in as their SASS)
add rdc_dp_exit './rdc_dp' "$EXIT_COUNT" \
	"has_line '@[rdc_parent(int*)]: 256'; has_line '@[rdc_child(int*)]: 256'; only_maps ''"
add drvapi_exit './drvapi' "$EXIT_COUNT" exact
add drvapi_access './drvapi' "$ACCESS_COUNT" exact

# Host probes (libgpux-host.so, needs root): a uprobe on libcuda's launch
# entry points counts the program's <<<>>> launches. Static cudart takes
# all four through cuGetProcAddress: cuLaunchKernel on the legacy default
# stream (gemm: 2 launches), cuLaunchKernel_ptsz under --default-stream
# per-thread (multistream: 1 + 3 + 5), cuLaunchKernelEx(_ptsz) if it
# launches that way. The glob takes all four (not
# cuLaunchCooperativeKernel), so the count holds whichever cudart uses;
# "Attaching N probes..." counts the matches, hence no head_is.
add gemm_uprobe_launch './gemm' "$UPROBE_LAUNCH" 'map_total "" 2 1; only_maps ""' '' '' "$ROOT"
add multistream_uprobe_launch './multistream' "$UPROBE_LAUNCH" 'map_total "" 9 1; only_maps ""' '' '' "$ROOT"
# the same counts from the runtime's cuda:launch, no root needed
add vecadd_mixed './vecadd' "$MIXED" 'last_value u 1; last_value l 1; last_value e 10240; positive i; only_maps u l e i t' '' '' "$ROOT"
add multistream_mixed './multistream' "$MIXED" 'last_value u 9; last_value l 9; last_value e 36864; positive i; only_maps u l e i t' '' '' "$ROOT"
add vecadd_launch_args './vecadd' 'cuda:malloc { @buf[ptr] = 1; } cuda:launch { @a[kernel, nargs, @buf[arg0], @buf[arg1], @buf[arg2], arg3, arg4] = count(); }' 'has_line "@a[vecAdd(float const*, float const*, float*, int), 4, 1, 1, 1, 10000, 0]: 1"'
add gemm_cuda_launch './gemm' 'cuda:launch { @ = count(); }' 'map_total "" 2 1; only_maps ""'
add multistream_cuda_launch './multistream' 'cuda:launch { @ = count(); }' 'map_total "" 9 1; only_maps ""'

# cuda: events from the runtime's hooks: exact API call counts, and the
# launch-to-kernel-start latency through a map cuda: writes and gdev: reads.
add vecadd_cuda './vecadd' "$CUDA_API" exact
add vecadd_cuda_json './vecadd' "$CUDA_API" exact '-f json'
add multistream_cuda './multistream' 'cuda:launch { @[kernel, grid.x, block.x] = count(); } cuda:memcpy { @memcpy[kind, async] = count(); @bytes = sum(bytes); } cuda:sync { @sync[stream != 0] = count(); }' exact
add drvapi_cuda './drvapi' "$CUDA_API cuda:module_load { @modules[ptx] = count(); }" exact
add vecadd_cuda_launch './vecadd' 'cuda:launch { @ = count(); }' exact
add vecadd_latency './vecadd' "$LATENCY" 'head_is "Attaching 2 probes..."; hist_total lat 10240 32; hist_positive lat; only_maps lat t'
# A cross-layer map read on the device, 3000 keys in 4096 slots: most
# lookups hit their first slot (loaded with the value at once), many a
# later one, and keys from 3000 up miss (the sum adds 0 for those).
# Expected: sum of 3 * (gtid % 3500) below 3000, and of gtid % 3000,
# over the 10240 threads.
LOOKUPS='cuda:launch { for ($i : 0..3000) { @v[$i] = $i * 3; @w[$i, $i + 1] = $i; } } gdev:kernel_exit { @s[kernel] = sum(@v[gtid % 3500]); @t[kernel] = sum(@w[gtid % 3000, gtid % 3000 + 1]); }'
add vecadd_lookups './vecadd' "$LOOKUPS" "has_line '@s[vecAdd(float const*, float const*, float*, int)]: 40486500'; has_line '@t[vecAdd(float const*, float const*, float*, int)]: 14263680'; only_maps s t v w"
add multistream_latency './multistream' "$LATENCY" 'head_is "Attaching 2 probes..."; hist_total lat 36864 32; hist_positive lat; only_maps lat t'
add gemm_cuda_filter './gemm' 'cuda:launch:*gemm* { @gemm[grid.x, grid.y, block.x, block.y] = count(); } cuda:launch { @all = count(); }' exact
# interval probes beside them: print and clear maps held in the program;
# whatever the timing, the printed counts add up to the launches' totals
add vecadd_interval './vecadd' 'gdev:kernel_exit { @exits[kernel] = count(); } interval:ms:100 { print(@exits); clear(@exits); }' 'map_total exits 10240 32'
add multistream_interval './multistream' 'cuda:launch { @l = count(); } interval:ms:50 { print(@l); clear(@l); } END { printf("end\n"); }' 'map_total l 9 1; has_line end'
# cuda:kernel_end: each launch's completion, timed by CUDA events (no
# instrumentation): as many as cuda:launch sees, each kernel's own count,
# durations above 0 and below 4 s; end on the host's clock, before the
# event is delivered (100 us of slack: the GPU's clock drifts from the
# host's between anchors) and less than a second before it
add multistream_kernel_end './multistream' 'cuda:kernel_end { @[kernel] = count(); @d = hist(duration); }' \
	"map_total '' 9 1; has_line '@[fillK(float*, int)]: 1'; has_line '@[scaleK(float*, float, int)]: 3'; has_line '@[addK(float const*, float*, int)]: 5'; hist_total d 9 1; hist_positive d; only_maps '' d"
add multistream_kernel_end_times './multistream' 'cuda:launch { @l = count(); } cuda:kernel_end { @e = count(); @exact = min(end - start == duration); } cuda:kernel_end /end > nsecs + 100000/ { @future = count(); } cuda:kernel_end /nsecs > end + 1000000000/ { @stale = count(); }' \
	'same_values l e; last_value e 9; last_value exact 1; last_value future 0; last_value stale 0; only_maps l e exact future stale'
# the same timed with CUDA events around each launch (the fallback when
# CUPTI is missing or the Sanitizer is in use)
add multistream_kernel_end_events './multistream' 'cuda:launch { @l = count(); } cuda:kernel_end { @e = count(); @exact = min(end - start == duration); } cuda:kernel_end /end > nsecs + 100000/ { @future = count(); }' \
	'same_values l e; last_value e 9; last_value exact 1; last_value future 0; only_maps l e exact future' '' 'GPUX_KERNEL_END=events'
# graph replays: one cuda:graph_launch each (4 of a captured graph of two
# kernels, 3 of one built of two nodeC nodes), and through CUPTI one
# cuda:kernel_end per kernel node per replay
add graph_replays './graph' 'cuda:graph_launch { @g = count(); @k = sum(kernels); } cuda:kernel_end { @e[kernel] = count(); }' \
	"last_value g 7; last_value k 14; map_total e 14 1; has_line '@e[nodeC(float*, int)]: 6'"

# SASS-only kernels are probed through NVIDIA's Compute Sanitizer patching
# API (runtime/rt_sass.c): every thread exits once, each load and store
# instruction is one access (an LDG and an STG per active thread here).
# GPUX_SASS=0 turns it off: the kernel runs untouched and gpux says so.
add sass_only './sass_only' "$EXIT_COUNT" 'exact; stderr_has "SASS patching"'
add sass_only_store_bytes './sass_only' "$STORE_BYTES" exact
add sass_only_access './sass_only' "$ACCESS_COUNT" exact
add sass_only_off './sass_only' "$EXIT_COUNT" 'exact; stderr_has sassOnlyKernel PTX' '' 'GPUX_SASS=0'
# A kernel_exit probe of lifelong values runs from the Sanitizer's
# block-enter hook (GPUX_SITE_ANYTIME), one reading sm from its block-exit
# hook: both see every thread once.
add sass_only_two_hooks './sass_only' 'gdev:kernel_exit { @a = count(); } gdev:kernel_exit { @b = count(); @sm = max(sm); }' \
	'last_value a 10240; same_values a b; only_maps a b sm'
add sass_mixed './sass_mixed' "$EXIT_COUNT" \
	"has_line '@[ptxPart(float*, int)]: 10240'; has_line '@[sassPart(float*, int)]: 10240'; only_maps ''"

# numba-cuda 0.68 (through cuda.core) links LTO-IR with nvJitLink: the
# runtime links it again to PTX, patches that and hands numba the cubin
# of the patched PTX. numba's demangled kernel name is long: gpux prints
# it cut to the string size, as bpftrace cuts strings.
add numba_vecadd "$py numba_vecadd.py" "$EXIT_COUNT" \
	"head_is 'Attaching 1 probe...'; one_map_line '^@\\[.*vecadd.*\\]: 10240\$'" '' \
	'NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS=0' "$py -c '$NUMBA'"
add numba_vecadd_access "$py numba_vecadd.py" 'gdev:access { @ = count(); }' exact '' \
	'NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS=0' "$py -c '$NUMBA'"
add cupy_vecadd "$py cupy_vecadd.py" "$EXIT_COUNT" exact '' \
	'CUPY_COMPILE_WITH_PTX=1' "$py -c '$CUPY'"
# a kernel of the program's own named with gpux's prefix, under a probe
# filtered on that name
add cupy_gpux_name "$py cupy_vecadd.py gpux_step" 'gdev:kernel_exit:gpux_step { @[kernel] = count(); }' \
	exact '' 'CUPY_COMPILE_WITH_PTX=1' "$py -c '$CUPY'"
add cupy_vecadd_cubin "$py cupy_vecadd.py" "$EXIT_COUNT" exact '' '' "$py -c '$CUPY'"
add cupy_cuda_launch "$py cupy_vecadd.py" 'cuda:launch { @[kernel] = count(); }' \
	"has_map_line '^@\\[vecAdd\\]: 1\$'" '' 'CUPY_COMPILE_WITH_PTX=1' "$py -c '$CUPY'"
# PyTorch's and cuBLAS's kernels carry no PTX: SASS patching probes them
# (a line per library says so), every thread launched exits once and
# enters once (cuBLAS's GEMM, PyTorch's randn and relu); the add stores
# 2^20 x 4 bytes. With GPUX_SASS=0 they run untouched, a line per library.
TORCH="$py -c 'import torch; assert torch.cuda.is_available()'"
add torch_sass "$py torch_matmul.py" "$LAUNCHED_EXITS" \
	"same_values t x; positive x; stderr_has 'SASS patching'; stderr_lines_at_most 12" '' '' "$TORCH"
add torch_sass_entry "$py torch_matmul.py" "$LAUNCHED_ENTRIES" \
	"same_values t x; positive x" '' '' "$TORCH"
add torch_eltwise_exits "$py torch_eltwise.py" "$LAUNCHED_EXITS" \
	"same_values t x; positive x" '' '' "$TORCH"
add torch_eltwise_exit_hook "$py torch_eltwise.py" "${LAUNCHED_EXITS/@x = count();/@x = count(); @sm = max(sm);}" \
	"same_values t x; positive x" '' '' "$TORCH"
add torch_eltwise_store "$py torch_eltwise.py" 'gdev:access:*CUDAFunctor_add* /store/ { @b = sum(size); }' \
	"has_line '@b: 4194304'; only_maps b" '' '' "$TORCH"
add torch_sass_off "$py torch_matmul.py" "$EXIT_COUNT" \
	"stderr_has 'not instrumented' 'lists them'; stderr_lines_at_most 12" '' 'GPUX_SASS=0' "$TORCH"
# ... and timed all the same: every launch PyTorch and cuBLAS make completes once
add torch_kernel_end "$py torch_matmul.py" 'cuda:launch { @l = count(); } cuda:kernel_end { @e = count(); @us = hist((end - start) / 1000); }' \
	"same_values l e; positive e; only_maps l e us; stderr_lacks 'not timed'" '' '' \
	"$py -c 'import torch; assert torch.cuda.is_available()'"
# Triton and torch.compile: cubins whose PTX gpux takes from Triton's
# cache; every thread launched exits once (97 programs x 4 warps x 32)
# and the masked store writes n x 4 bytes.
TRITON="$py -c 'import triton, torch; assert torch.cuda.is_available()'"
add triton_exit "$py triton_vecadd.py" "$EXIT_COUNT" exact '' '' "$TRITON"
add triton_store_bytes "$py triton_vecadd.py" "$STORE_BYTES" exact '' '' "$TRITON"
add triton_launch_exits "$py triton_vecadd.py" "$LAUNCH_EXITS" "launch_exits '^add_kernel' 1" '' '' "$TRITON"
add torch_compile_launch_exits "$py torch_compile.py" "$LAUNCH_EXITS" \
	"launch_exits '^triton_' 1" '' '' "$TRITON"
# Whole jobs: CUDA work in child processes joins the session (a child
# started by subprocess, with its descriptors closed; workers started by
# torch.multiprocessing.spawn, fresh interpreters); launches per pid
# match completions per pid, every thread launched exits once. With two
# GPUs (nvidia-h200-x2; skipped on one: the programs exit 3): a DDP job,
# one GPU per worker, and one process driving two GPUs from two threads,
# told apart by the gpu builtin.
add child_subprocess "$py jobs.py subprocess" "$EXIT_COUNT" \
	"has_line '@[vecAdd(float const*, float const*, float*, int)]: 10240'; only_maps ''"
add child_spawn "$py jobs.py spawn 2" 'cuda:launch { @l[pid] = count(); @t = sum(grid.x * grid.y * grid.z * block.x * block.y * block.z); } cuda:kernel_end { @e[pid] = count(); } gdev:kernel_exit { @x = count(); }' \
	"map_lines l 2; per_key_equal l e; same_values t x; positive x" '' '' "$TORCH"
add ddp_two_gpus "$py jobs.py ddp" 'cuda:launch { @l[pid] = count(); } cuda:kernel_end { @e[pid] = count(); } gdev:kernel_exit { @x[gpu] = count(); }' \
	"map_lines l 2; per_key_equal l e; map_lines x 2" '' 'NCCL_NVLS_ENABLE=0' "$TORCH"
add two_gpus './two_gpus' 'gdev:kernel_exit { @[gpu, kernel] = count(); } cuda:launch { @l[gpu] = count(); }' \
	"has_line '@[0, fillK(float*, int, float)]: 5120'; has_line '@[1, fillK(float*, int, float)]: 10240'; has_line '@l[0]: 1'; has_line '@l[1]: 2'"
# JAX: XLA compiles its fusions to PTX in-process and loads cubins
# without it; they and cuBLASLt's GEMM are probed through SASS patching
# (command buffers off: each kernel a launch cuda:launch sees).
JAX="$py -c 'import jax; assert jax.default_backend() == \"gpu\"'"
add jax_exits "$py jax_fusion.py" "$LAUNCHED_EXITS" \
	"same_values t x; positive x; stderr_has 'SASS patching'" '' \
	'XLA_FLAGS=--xla_gpu_enable_command_buffer= XLA_PYTHON_CLIENT_PREALLOCATE=false' "$JAX"
add numba_cuda_launch "$py numba_vecadd.py" 'cuda:launch { @ = count(); } cuda:module_load { @mod = count(); }' \
	"has_map_line '^@: 1\$'" '' 'NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS=0' "$py -c '$NUMBA'"

# The stdlib memory policies (stdlib/policies) on managed memory
# (managed.cu: 16 vadd launches of 256 x 256 threads over three 64 MiB
# arrays in 8 MiB chunks, 12 layer launches of 128 x 256 over six 32 MiB
# weight buffers): the program's results unchanged, the actions reached
# the driver (-v counts them), and the maps exact where they are
# defined. On vecadd's cudaMalloc memory every action is a no-op.
pol=$here/policies
[ -d "$pol" ] || pol=$here/../../../stdlib/policies
# as one line (run.sh -P lists one program a line): no shebang, no comments
policy() {
	[ -f "$pol/$1.gpx" ] || { echo "missing $1.gpx"; return; }
	sed -e '/^#!/d' -e 's://.*$::' "$pol/$1.gpx" | tr -s '\n\t' '  '
}
VADD_M='vadd(float const*, float const*, float*, unsigned long)'
LAYER_M='layer(float const*, unsigned long, float*)'
# vadd: 3 managed pointers x 16 launches; layer: w and out x 12, n is no pointer
add managed_prefetch_stride './managed' "$(policy prefetch_stride)" \
	"stderr_has 'prefetch(): 72 calls' 'prefetch(): 12 of 84 calls did nothing'" '-v'
# the sweep fits in the GPU's memory: nothing is evicted
add managed_evict_behind './managed' "$(policy evict_behind)" \
	"stderr_has 'prefetch(): 72 calls'; stderr_lacks 'evict()'" '-v'
# no store lands in a kernel's first buffer; the program fits in the
# GPU's memory, so nothing is advised
add managed_read_mostly './managed' "$(policy read_mostly)" \
	"map_total exits 1441792 32768; lacks_map stores; stderr_lacks 'advise()'" '-v'
# the furthest load past each launch's first pointer by a warp 0: in
# vadd, block 255's first 32 threads in the last of 32 grid strides
# (float 2096927), in layer block 127's in the last of 256 (8388383)
add managed_prefetch_span './managed' "$(policy prefetch_span)" \
	"has_line '@span[$VADD_M]: 8387708'; has_line '@span[$LAYER_M]: 33553532'; stderr_has 'prefetch(): [1-9][0-9]* calls'" '-v'
# device prefetch: a hint, also of address 0 and past the buffers
add vecadd_dev_prefetch './vecadd' 'gdev:kernel_entry { prefetch(0); } gdev:access { prefetch(addr + 4096); @[kernel] = count(); }' \
	"head_is 'Attaching 2 probes...'; has_line '@[vecAdd(float const*, float const*, float*, int)]: 30000'"
add vecadd_prefetch_stride './vecadd' "$(policy prefetch_stride)" \
	"stderr_has 'prefetch(): 3 of 3 calls did nothing: 3 on memory that is not managed'"
# cuda: probes reading what gdev: probes wrote: after the first pass's
# synchronize, each vadd launch sees its kernel's 8 launches x 65536 exits
add managed_cross_read './managed' 'gdev:kernel_exit { @e[kernel] = count(); } cuda:launch { @seen[kernel] = max(@e[kernel]); }' \
	"has_line '@seen[$VADD_M]: 524288'; has_line '@e[$VADD_M]: 1048576'"

# ---- checks: each sets $why and returns 1 on failure ----
# $out: gpux's -o file, $err: gpux's stderr, $exp: expected/NAME.txt
exact() {
	[ -f "$exp" ] || { why="no expected file $exp"; return 1; }
	cmp -s "$exp" "$out" && return 0
	local d
	d=$(diff "$exp" "$out" | grep -m2 '^[<>]' | tr '\n' ' ')
	why="gpux output differs from expected/$(basename "$exp"): ${d:0:300}"
	return 1
}

head_is() {
	local h
	h=$(head -n1 "$out")
	[ "$h" = "$1" ] || { why="first line is '$h', want '$1'"; return 1; }
}

# map_total NAME TOTAL MULT: the values of the plain lines of @NAME
# ("@NAME[key]: v" or "@NAME: v") sum to TOTAL, each a multiple of MULT.
map_total() {
	local r
	r=$(awk -v m="@$1" -v mult="$3" '
		index($0, m "[") == 1 || index($0, m ":") == 1 {
			if (match($0, /: -?[0-9]+$/)) { v = substr($0, RSTART + 2) + 0; s += v; n++; if (v % mult) bad++ }
		}
		END { printf "%.0f %d %d", s, n, bad }' "$out")
	set -- "$1" "$2" "$3" $r
	[ "$5" -gt 0 ] || { why="no @$1 lines"; return 1; }
	[ "$4" -eq "$2" ] || { why="@$1 values sum to $4 over $5 keys, want $2"; return 1; }
	[ "$6" -eq 0 ] || { why="$6 @$1 values are not multiples of $3"; return 1; }
}

# hist_total NAME TOTAL MULT: the bucket counts of hist/lhist @NAME sum to
# TOTAL, each a multiple of MULT.
hist_total() {
	local r
	r=$(awk -v m="@$1" -v mult="$3" '
		/^@/ { cur = (index($0, m ":") == 1 || index($0, m "[") == 1) }
		cur && /^[[(].*[|].*[|]$/ {
			split($0, p, "|"); k = split(p[1], f, " "); c = f[k] + 0
			s += c; n++; if (c % mult) bad++
		}
		END { printf "%.0f %d %d", s, n, bad }' "$out")
	set -- "$1" "$2" "$3" $r
	[ "$5" -gt 0 ] || { why="no buckets in @$1"; return 1; }
	[ "$4" -eq "$2" ] || { why="@$1 buckets sum to $4 over $5 buckets, want $2"; return 1; }
	[ "$6" -eq 0 ] || { why="$6 @$1 buckets are not multiples of $3"; return 1; }
}

# hist_positive NAME: no bucket of hist @NAME holds a negative or zero
# value ("(..., 0)" or "[0]"), and none lies at 4 s or beyond ("[4G" up).
hist_positive() {
	local bad
	bad=$(awk -v m="@$1" '
		/^@/ { cur = (index($0, m ":") == 1 || index($0, m "[") == 1); next }
		cur && /^(\(\.\.\., 0\)|\[0\]|\[[4-9]G|\[[0-9]+[TPE])/ { print; exit }' "$out")
	[ -z "$bad" ] || { why="@$1 has the bucket '$bad'"; return 1; }
}

# last_value NAME V: the last "@NAME: v" line (the exit's print) says V.
last_value() {
	local v
	v=$(grep -E "^@$1: " "$out" | tail -n1 | sed 's/^[^:]*: //')
	[ "$v" = "$2" ] || { why="@$1 is '$v', want $2"; return 1; }
}

# positive NAME: the last "@NAME: v" line holds a value above 0.
positive() {
	local v
	v=$(grep -E "^@$1: " "$out" | tail -n1 | sed 's/^[^:]*: //')
	[ -n "$v" ] && [ "$v" -gt 0 ] 2>/dev/null || { why="@$1 is '$v', want > 0"; return 1; }
}

# config_exits NAME: "@NAME: v" is the threads times the blocks the
# program printed ("threads T blocks B").
config_exits() {
	local t b v
	read -r t b < <(sed -n 's/^threads \([0-9]*\) blocks \([0-9]*\).*/\1 \2/p' "$B.stdout")
	v=$(grep -E "^@$1: " "$out" | tail -n1 | sed 's/^[^:]*: //')
	[ -n "$t" ] && [ "$v" = $((t * b)) ] || { why="@$1 is '$v', the program launched ${t:-?} x ${b:-?}"; return 1; }
}

# has_line TEXT: some line of the output is TEXT.
stderr_lacks() {
	! grep -qi -- "$1" "$err" || { why="gpux stderr mentions '$1'"; return 1; }
}
lacks_map() {
	! grep -qE "^@$1(\[|:)" "$out" || { why="@$1 printed"; return 1; }
}
has_line() {
	grep -qxF -- "$1" "$out" || { why="no line '$1'"; return 1; }
}

# has_map_line ERE: some "@" line matches ERE.
has_map_line() {
	grep '^@' "$out" | grep -Eq "$1" || { why="no map line matches $1"; return 1; }
}

# same_values A B: the last "@A: v" and "@B: v" lines hold the same v.
same_values() {
	local a b
	a=$(grep -E "^@$1: " "$out" | tail -n1 | sed 's/^[^:]*: //')
	b=$(grep -E "^@$2: " "$out" | tail -n1 | sed 's/^[^:]*: //')
	[ -n "$a" ] && [ "$a" = "$b" ] || { why="@$1 is '$a', @$2 '$b': want them equal"; return 1; }
}

# launch_exits ERE N: for every kernel with a @x line (gdev:kernel_exit),
# @x equals @t (the threads cuda:launch launched); at least N of those
# kernels match ERE. Both providers key a kernel by the same name (a
# cuda: map's kernel key prints the name gdev: keys print), so the keys
# must match whole.
launch_exits() {
	local r
	r=$(awk -v re="$1" '
		match($0, /^@[tx]\[.*\]: [0-9]+$/) {
			m = substr($0, 2, 1); k = substr($0, 4); sub(/\]: [0-9]+$/, "", k)
			v = $NF + 0
			if (m == "t") t[k] = v; else x[k] += v
		}
		END {
			for (k in x) { if (!(k in t) || t[k] != x[k]) { bad = k; nb++ } else if (k ~ re) ok++ }
			printf "%d %d %s", ok, nb, bad
		}' "$out")
	set -- "$1" "$2" $r
	[ "$4" -eq 0 ] || { why="$4 kernels whose exits differ from the threads launched, as $5"; return 1; }
	[ "$3" -ge "$2" ] || { why="$3 instrumented kernels match /$1/ exactly, want $2"; return 1; }
}

# only_maps NAME...: every "@..." line belongs to one of these maps.
only_maps() {
	local re
	re=$(printf '@%s(\\[|:)|' "$@")
	re="^(${re%|})"
	local other
	other=$(grep '^@' "$out" | grep -Ev "$re" | head -n1)
	[ -z "$other" ] || { why="unexpected map line: $other"; return 1; }
}

# map_lines NAME N: exactly N "@NAME[...]" lines.
map_lines() {
	local n
	n=$(grep -cE "^@$1\\[" "$out")
	[ "$n" -eq "$2" ] || { why="$n @$1 lines, want $2"; return 1; }
}

# per_key_equal A B: @A and @B have the same keys, each with one value.
per_key_equal() {
	local a b
	a=$(grep -E "^@$1\\[" "$out" | sed "s/^@$1//" | sort)
	b=$(grep -E "^@$2\\[" "$out" | sed "s/^@$2//" | sort)
	[ -n "$a" ] && [ "$a" = "$b" ] ||
		{ why="@$1 and @$2 differ by key: $(echo $a | head -c 150) / $(echo $b | head -c 150)"; return 1; }
}

# one_map_line ERE: exactly one "@" line, matching ERE (case-insensitive).
one_map_line() {
	local n
	n=$(grep -c '^@' "$out")
	[ "$n" -eq 1 ] || { why="$n map lines, want 1"; return 1; }
	grep '^@' "$out" | grep -Eiq "$1" || { why="map line '$(grep -m1 '^@' "$out")' does not match $1"; return 1; }
}

# printf_lines ERE LINES [BLOCKS PER_BLOCK]: the output is "Attaching 1
# probe...", LINES lines matching ^ERE$, then the two empty lines printed
# at exit; with BLOCKS, the first group of ERE is a block index and each
# of 0..BLOCKS-1 appears PER_BLOCK times.
printf_lines() {
	local r
	r=$(RE="^$1\$" awk -v nb="${3:-0}" '
		BEGIN { re = ENVIRON["RE"] }
		NR == 1 { if ($0 != "Attaching 1 probe...") head = 1; next }
		$0 == "" { empty++; next }
		{ if (empty) late++ }
		$0 ~ re {
			n++
			if (nb > 0) { b = $0; sub(/.* block /, "", b); sub(/ .*/, "", b); cnt[b + 0]++ }
			next
		}
		{ bad++; if (ex == "") ex = $0 }
		END {
			per = ""
			if (nb > 0) for (i = 0; i < nb; i++) per = per " " (cnt[i] + 0)
			printf "%d %d %d %d %d|%s|%s", head, n, bad, empty, late, per, substr(ex, 1, 120)
		}' "$out")
	local head n bad empty late per ex
	read -r head n bad empty late <<<"${r%%|*}"
	r=${r#*|}
	per=${r%%|*} ex=${r#*|}
	[ "$head" -eq 0 ] || { why="first line is not 'Attaching 1 probe...'"; return 1; }
	[ "$bad" -eq 0 ] || { why="$bad lines do not match ^$1\$ (e.g. '$ex')"; return 1; }
	[ "$n" -eq "$2" ] || { why="$n printf lines, want $2"; return 1; }
	[ "$empty" -eq 2 ] && [ "$late" -eq 0 ] ||
		{ why="want exactly 2 empty lines, at the end; got $empty (and $late lines after one)"; return 1; }
	if [ "${3:-0}" -gt 0 ]; then
		local b
		for b in $per; do
			[ "$b" -eq "$4" ] || { why="lines per block 0..$(($3 - 1)):$per; want $4 each"; return 1; }
		done
	fi
}

# stderr_has WORD...: gpux's stderr contains every WORD (case-insensitive).
stderr_has() {
	local w
	for w in "$@"; do
		grep -qi -- "$w" "$err" || { why="gpux stderr does not mention '$w': $(head -c 300 "$err" | tr '\n' ' ')"; return 1; }
	done
}

# stderr_lines_at_most N: gpux's stderr has at most N lines.
stderr_lines_at_most() {
	local n
	n=$(wc -l <"$err")
	[ "$n" -le "$1" ] || { why="gpux stderr has $n lines, want at most $1: $(head -c 300 "$err" | tr '\n' ' ')"; return 1; }
}

# ---- running ----
if [ "${1:-}" = -l ]; then
	for i in "${!names[@]}"; do
		printf '%s\t%s\t%s\t%s\n' "${names[$i]}" "${apps[$i]}" "${opts[$i]:+${opts[$i]} }-e '${progs[$i]}'" "${envs[$i]}"
	done
	exit 0
fi
if [ "${1:-}" = -P ]; then
	printf '%s\n' "${progs[@]}" | sort -u
	exit 0
fi
if [ -n "${E2E_DIR:-}" ]; then
	dir=$E2E_DIR
elif [ -f "$here/vecadd" ]; then
	dir=$here
else
	dir=$(cd "$here/../../.." && pwd)/build-gpu/e2e
fi
[ -d "$dir" ] || { echo "e2e: no $dir (build it with scripts/gpu_build.sh)" >&2; exit 2; }
dir=$(cd "$dir" && pwd)
gpux=${GPUX:-$dir/../gpux/gpux}
# Absolute (the runs happen in $dir); a bare name is looked up in PATH.
if [[ $gpux == */* ]] && [ -e "$gpux" ]; then
	gpux=$(cd "$(dirname "$gpux")" && pwd)/$(basename "$gpux")
fi
tmo=${E2E_TIMEOUT:-60}
logdir=${OUT:+$OUT/e2e}
logdir=${logdir:-$dir/logs}

sel=()
for i in "${!names[@]}"; do
	if [ $# -eq 0 ]; then
		sel+=("$i")
		continue
	fi
	for pat in "$@"; do
		# shellcheck disable=SC2053
		[[ ${names[$i]} == $pat ]] && { sel+=("$i"); break; }
	done
done
[ ${#sel[@]} -gt 0 ] || { echo "e2e: no case matches: $*" >&2; exit 2; }

mkdir -p "$logdir"
logdir=$(cd "$logdir" && pwd)
log=$logdir/e2e_results.txt
: >"$log"
say() { echo "$@" | tee -a "$log"; }
say "gpux e2e tests, $(date -u +%Y-%m-%dT%H:%M:%SZ), dir $dir, gpux $gpux"
# A carried folder may lose the exec bits.
for f in "$dir"/*; do
	[ -f "$f" ] && [ ! -x "$f" ] && head -c 4 "$f" | grep -q ELF && chmod +x "$f"
done
[ -f "$gpux" ] && [ ! -x "$gpux" ] && chmod +x "$gpux"
if [ ! -x "$gpux" ]; then
	say "e2e: gpux not found at $gpux (set GPUX=...)"
	exit 2
fi
say "$("$gpux" -V 2>&1 | head -n1)"

# Baselines are run once per (program, environment) and reused.
declare -A base_rc=()
pass=0 failed=0 skipped=0
cd "$dir" || exit 2
for i in "${sel[@]}"; do
	name=${names[$i]} app=${apps[$i]} prog=${progs[$i]}
	read -r -a env_kv <<<"${envs[$i]}"
	read -r -a gopts <<<"${opts[$i]}"
	L=$logdir/$name
	if [ -n "${reqs[$i]}" ] && ! bash -c "${reqs[$i]}" >"$L.req.txt" 2>&1; then
		say "SKIP $name: needs \`${reqs[$i]}\`"
		skipped=$((skipped + 1))
		continue
	fi
	key="${envs[$i]}|$app"
	bkey=$(printf '%s' "$key" | md5sum | cut -c1-12)
	B=$logdir/base-$bkey
	if [ -z "${base_rc[$key]+x}" ]; then
		# A fresh CuPy kernel cache per run: NVRTC compiles every time.
		rm -rf "$B.cupy"
		env "${env_kv[@]}" CUPY_CACHE_DIR="$B.cupy" \
			timeout -k 5 "$tmo" bash -c "$app" >"$B.stdout" 2>"$B.stderr"
		base_rc[$key]=$?
		printf '%s\n' "$app" >"$B.cmd"
		rm -rf "$B.cupy"
	fi
	brc=${base_rc[$key]}
	if [ "$brc" -eq 3 ]; then
		say "SKIP $name: the program says it cannot run here (exit 3): $(head -c 200 "$B.stderr")"
		skipped=$((skipped + 1))
		continue
	fi
	if [ "$brc" -ne 0 ]; then
		say "FAIL $name: the program fails without gpux (exit $brc): $(tail -c 300 "$B.stderr" | tr '\n' ' ')"
		failed=$((failed + 1))
		continue
	fi
	out=$L.gpux.out err=$L.gpux.stderr exp=$dir/expected/$name.txt
	rm -f "$out"
	rm -rf "$L.cupy"
	t0=$(date +%s%N)
	env "${env_kv[@]}" CUPY_CACHE_DIR="$L.cupy" timeout -k 5 "$tmo" \
		"$gpux" "${gopts[@]}" -o "$out" -e "$prog" -c "$app" >"$L.stdout" 2>"$err"
	rc=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	why=
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		why="timed out after ${tmo}s"
	elif [ "$rc" -ne "$brc" ]; then
		why="gpux exited $rc, the program alone $brc: $(tail -c 300 "$err" | tr '\n' ' ')"
	elif ! cmp -s "$B.stdout" "$L.stdout"; then
		why="program stdout differs with gpux: $(diff "$B.stdout" "$L.stdout" | grep -m2 '^[<>]' | tr '\n' ' ')"
		# bpftrace 0.17 writes the "\n\n" before the maps to stdout even
		# under -o; gpux must not (it would change the program's output).
		if [ "$(head -c -2 "$L.stdout" | cmp -s - "$B.stdout"; echo $?)" = 0 ]; then
			why="$why (2 extra trailing newlines: the \"\\n\\n\" before the maps went to stdout, not the -o file)"
		fi
	elif [ ! -f "$out" ]; then
		why="gpux wrote no output file"
	else
		IFS=';' read -r -a cl <<<"${checks[$i]}"
		for c in "${cl[@]}"; do
			eval "$c" || break
			why=
		done
	fi
	if [ -z "$why" ]; then
		say "PASS $name (${ms} ms)"
		pass=$((pass + 1))
	else
		say "FAIL $name (${ms} ms): $why"
		failed=$((failed + 1))
	fi
	rm -rf "$L.cupy"
done
if [ "$skipped" -gt 0 ]; then
	say "$pass passed, $failed failed, $skipped skipped"
else
	say "$pass passed, $failed failed"
fi
say "logs: $logdir"
[ "$failed" -eq 0 ] && [ "$pass" -gt 0 ]
