#!/usr/bin/env bash
# Fuzz the compile path (front end, device and host code generators) with
# libFuzzer (clang, ASan, UBSan) for SECONDS (default 600). An input may
# take a while legitimately (100 x 80 unrolled hist() statements: 6 s of
# LLVM, more under ASan, and 1.5 GB), so a hang is 30 s and the memory
# limit 4 GB. Crashers land in tests/fuzz/ as crash-*: minimise, fix,
# and copy them into tests/fuzz/regressions/ so ctest replays them.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
build=${FUZZ_BUILD:-build-fuzz}
CC=${CC:-clang} cmake -S . -B "$build" -DGPUX_FUZZ=ON -DGPUX_SANITIZE=ON \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUX_WERROR=ON >/dev/null
make -C "$build" -j"$(nproc)" fuzz_frontend >/dev/null
# The grown corpus stays in the build folder, so runs add up.
work=$build/corpus
mkdir -p "$work"
cp tests/fuzz/corpus/* "$work"/
log=$build/fuzz.log
"$build"/tests/fuzz/fuzz_frontend -max_total_time="$secs" -max_len=2048 \
	-timeout=30 -rss_limit_mb=4096 -artifact_prefix=tests/fuzz/ \
	-dict=tests/fuzz/gpux.dict "$work" >"$log" 2>&1 || true
grep -E 'INITED|DONE|ERROR|SUMMARY|Test unit written' "$log" || tail -n 20 "$log"
