#!/usr/bin/env bash
# Run the GPU test suite (tests/gpu/) on a machine with a GPU, from the
# repo root, with build-gpu/ (scripts/gpu_build.sh) carried or built here.
# One harness process per case, each under a timeout, so a hung or
# faulting case cannot take the others with it. Prints PASS/FAIL lines
# and "N passed, N failed"; the log goes to $OUT/gpu_results.txt when
# $OUT is set (else build-gpu/gpu_results.txt).
#   scripts/gpu_test.sh [CASE...]       env: GPU_BUILD (folder), CASE_TIMEOUT
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${GPU_BUILD:-build-gpu}
log=${OUT:+$OUT/gpu_results.txt}
log=${log:-$dir/gpu_results.txt}
tmo=${CASE_TIMEOUT:-90}

# A carried folder may lose the exec bit.
[ -f "$dir/probe_harness" ] && [ ! -x "$dir/probe_harness" ] && chmod +x "$dir/probe_harness"
if [ ! -x "$dir/probe_harness" ] || [ ! -f "$dir/test_kernel.ptx" ]; then
	scripts/gpu_build.sh "$dir" || { echo "cannot build $dir here" >&2; exit 2; }
fi
mkdir -p "$(dirname "$log")"
: >"$log"
say() { echo "$@" | tee -a "$log"; }

say "gpux GPU tests, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null || echo no-git)"
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
