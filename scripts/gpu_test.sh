#!/usr/bin/env bash
# Run the GPU test suite (tests/gpu/) on a machine with a GPU, from the
# repo root, with build-gpu/ (scripts/gpu_build.sh) carried or built here.
# One harness process per case, each under a timeout, so a hung or
# faulting case cannot take the others with it. Prints PASS/FAIL lines
# and "N passed, N failed"; the log goes to $OUT/gpu_results.txt when
# $OUT is set (else build-gpu/gpu_results.txt).
#   scripts/gpu_test.sh [CASE...]       env: GPU_BUILD (folder), CASE_TIMEOUT
# Stages beyond these harness cases (the "core" stage):
#   scripts/gpu_test.sh e2e [CASE|GLOB...]   only the end-to-end stage:
#       programs run alone and under gpux (tests/gpu/e2e/run.sh; env GPUX,
#       default GPU_BUILD/gpux/gpux; logs in $OUT/e2e/)
#   scripts/gpu_test.sh bench [PRESET...]    only the overhead benchmarks
#       (bench/gpu/run.sh; a table, not a test; logs in $OUT/bench/)
#   scripts/gpu_test.sh attach               only gpux -p on a running
#       program (tests/gpu/e2e/attach.sh; logs in $OUT/attach/), then on
#       a PyTorch training loop (attach_torch.sh; $OUT/attach_torch/)
#   scripts/gpu_test.sh clock                cuda:kernel_end's start/end on
#       nsecs' clock, by CUPTI and by events (tests/gpu/e2e/clock_kernel_end.sh)
#   scripts/gpu_test.sh gpt2 [ROUNDS]        a GPT-2 training step under
#       gpux (bench/gpu/gpt2.sh: step times, coverage, cold and warm
#       JIT; needs PyTorch and transformers; logs in $OUT/gpt2/)
#   scripts/gpu_test.sh kernel_level [ROUNDS]  cuda:launch, kernel_end and
#       memcpy on a GPT-2 step (bench/gpu/kernel_level.sh; $OUT/kernel_level/)
#   scripts/gpu_test.sh timeline [ROUNDS]    -f perfetto of 50 GPT-2 steps
#       (bench/gpu/timeline.sh: cost, trace checked; $OUT/timeline/)
#   scripts/gpu_test.sh attach_ab [ROUNDS [W]]  kernel-level tracing's
#       cost inside one GPT-2 process, gpux -p attached and detached in
#       turns of W s (bench/gpu/attach_ab.sh; $OUT/attach_ab/); env
#       LAUNCH_ONLY=1 (a cuda:launch count alone), PERFETTO=1 (the
#       timeline), CUPTI_ONLY=1 (CUPTI's kernel records without gpux)
# With no arguments the core cases run, then the e2e stage when gpux is
# built (else it says it is skipped), then the fault injection
# (tests/gpu/e2e/faults.sh: a program that crashes, gpux SIGKILLed
# mid-run), then a scripted live session (tests/gpu/e2e/live.sh: the
# REPL attaching probes to a running program), then gpux -p attaching,
# detaching and attaching again (tests/gpu/e2e/attach.sh), and the same
# on a PyTorch training loop with cuda:kernel_end (attach_torch.sh), then
# kernel_end's clock (clock_kernel_end.sh); the exit status covers them all.
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${GPU_BUILD:-build-gpu}
log=${OUT:+$OUT/gpu_results.txt}
log=${log:-$dir/gpu_results.txt}
tmo=${CASE_TIMEOUT:-90}
e2e_gpux=${GPUX:-$dir/gpux/gpux}

# The e2e and bench stages, each its own script.
e2e_stage() {
	# tracepoints need tracefs, which the GPU machine does not mount
	if [ "$(id -u)" -eq 0 ] && [ ! -d /sys/kernel/tracing/events ] &&
	   [ ! -d /sys/kernel/debug/tracing/events ]; then
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
			echo "e2e: cannot mount tracefs: the tracepoint cases will fail" >&2
	fi
	if [ ! -d "$dir/e2e" ]; then
		bash tests/gpu/e2e/build.sh "$dir/e2e" || { echo "cannot build $dir/e2e here" >&2; return 2; }
	fi
	GPUX=$e2e_gpux E2E_DIR=$dir/e2e bash tests/gpu/e2e/run.sh "$@"
}
case ${1:-} in
e2e) shift; e2e_stage "$@"; exit ;;
bench)
	shift
	if [ ! -d "$dir/bench" ]; then
		bash bench/gpu/build.sh "$dir/bench" || { echo "cannot build $dir/bench here" >&2; exit 2; }
	fi
	GPUX=$e2e_gpux BENCH_DIR=$dir/bench bash bench/gpu/run.sh "$@"
	exit ;;
gpt2) shift; GPUX=$e2e_gpux bash bench/gpu/gpt2.sh "$@"; exit ;;
kernel_level) shift; GPUX=$e2e_gpux bash bench/gpu/kernel_level.sh "$@"; exit ;;
timeline) shift; GPUX=$e2e_gpux bash bench/gpu/timeline.sh "$@"; exit ;;
attach_ab) shift; GPUX=$e2e_gpux bash bench/gpu/attach_ab.sh "$@"; exit ;;
clock) bash tests/gpu/e2e/clock_kernel_end.sh "$e2e_gpux" "${OUT:-$dir}/clock"; exit ;;
attach)
	bash tests/gpu/e2e/attach.sh "$dir/e2e" "$e2e_gpux" "${OUT:-$dir}/attach" &&
		bash tests/gpu/e2e/attach_torch.sh "$e2e_gpux" "${OUT:-$dir}/attach_torch"
	exit ;;
esac

# A carried folder may lose the exec bit.
[ -f "$dir/probe_harness" ] && [ ! -x "$dir/probe_harness" ] && chmod +x "$dir/probe_harness"
if [ ! -x "$dir/probe_harness" ] || [ ! -f "$dir/test_kernel.ptx" ]; then
	scripts/gpu_build.sh "$dir" || { echo "cannot build $dir here" >&2; exit 2; }
fi
mkdir -p "$(dirname "$log")"
: >"$log"
say() { echo "$@" | tee -a "$log"; }

# The commit the bundle was built from (gpu_build.sh records it: the copy
# of the tree on the GPU machine may carry an older .git).
built=$(cat "$dir/commit" 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)
say "gpux GPU tests, $(date -u +%Y-%m-%dT%H:%M:%SZ), built from $built"
nvidia-smi --query-gpu=name,driver_version --format=csv 2>&1 | tee -a "$log"

if [ $# -gt 0 ]; then
	cases=("$@")
else
	mapfile -t cases < <("$dir/probe_harness" --list | cut -f1)
fi
pass=0 failed=0 skipped=0
for c in "${cases[@]}"; do
	t0=$(date +%s%N)
	outp=$(timeout -k 5 "$tmo" "$dir/probe_harness" "$dir" "$c" 2>&1)
	rc=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	# The harness's own lines (device, info, details) go to the log only.
	printf '%s\n' "$outp" | sed 's/^/    /' >>"$log"
	case $rc in
	0) say "$(printf '%s\n' "$outp" | grep -m1 "^PASS $c " || echo "PASS $c (${ms} ms)")"
	   pass=$((pass + 1)) ;;
	77) say "SKIP $c: no GPU"; skipped=$((skipped + 1)) ;;
	124 | 137) say "FAIL $c (${ms} ms): timed out after ${tmo}s"; failed=$((failed + 1)) ;;
	*) say "$(printf '%s\n' "$outp" | grep -m1 "^FAIL $c " || echo "FAIL $c (${ms} ms): exit $rc")"
	   failed=$((failed + 1)) ;;
	esac
done
if [ "$skipped" -gt 0 ]; then say "$pass passed, $failed failed, $skipped skipped"; else say "$pass passed, $failed failed"; fi
[ "$failed" -eq 0 ] && [ "$pass" -gt 0 ]
core=$?
[ $# -eq 0 ] || exit $core
if [ ! -f "$e2e_gpux" ]; then
	say "e2e stage skipped: no gpux at $e2e_gpux"
	exit $core
fi
say "e2e stage (log: ${OUT:-$dir/e2e/logs}${OUT:+/e2e}/e2e_results.txt)"
e2e_stage
e2e=$?
say "fault injection (tests/gpu/e2e/faults.sh)"
GPUX=$e2e_gpux E2E_DIR=$dir/e2e bash tests/gpu/e2e/faults.sh 2>&1 | tee -a "$log"
faults=${PIPESTATUS[0]}
say "live session (tests/gpu/e2e/live.sh)"
bash tests/gpu/e2e/live.sh "$dir/e2e" "$e2e_gpux" "${OUT:-$dir}/live" 2>&1 | tee -a "$log"
live=${PIPESTATUS[0]}
say "attach to a running program (tests/gpu/e2e/attach.sh)"
bash tests/gpu/e2e/attach.sh "$dir/e2e" "$e2e_gpux" "${OUT:-$dir}/attach" 2>&1 | tee -a "$log"
attached=${PIPESTATUS[0]}
say "attach to a PyTorch training loop (tests/gpu/e2e/attach_torch.sh)"
bash tests/gpu/e2e/attach_torch.sh "$e2e_gpux" "${OUT:-$dir}/attach_torch" 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || attached=1
say "cuda:kernel_end's clock (tests/gpu/e2e/clock_kernel_end.sh)"
bash tests/gpu/e2e/clock_kernel_end.sh "$e2e_gpux" "${OUT:-$dir}/clock" 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || attached=1
[ "$core" -eq 0 ] && [ "$e2e" -eq 0 ] && [ "$faults" -eq 0 ] && [ "$live" -eq 0 ] &&
	[ "$attached" -eq 0 ]
