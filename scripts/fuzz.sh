#!/usr/bin/env bash
# Fuzz with libFuzzer (clang, ASan, UBSan) for SECONDS (default 600):
#   scripts/fuzz.sh [SECONDS] [frontend|session]
# frontend (the default): the compile path (front end, device and host
# code generators). An input may take a while legitimately (100 x 80
# unrolled hist() statements: 6 s of LLVM, more under ASan, and 1.5 GB),
# so a hang is 30 s and the memory limit 4 GB.
# session: the controller's readers of the session segment, over
# segments a traced program could have written (fuzz_session.c).
# Crashers land in tests/fuzz/ as crash-*: minimise, fix, and copy them
# into tests/fuzz/regressions/ (session_regressions/ for the session
# target) so ctest replays them.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
target=${2:-frontend}
build=${FUZZ_BUILD:-build-fuzz}
case $target in
frontend) corpus=tests/fuzz/corpus; extra=(-max_len=2048 -dict=tests/fuzz/gpux.dict) ;;
session) corpus=tests/fuzz/session_corpus; extra=(-max_len=8192 -close_fd_mask=2) ;;
*) echo "usage: $0 [SECONDS] [frontend|session]" >&2; exit 2 ;;
esac
CC=${CC:-clang} cmake -S . -B "$build" -DGPUX_FUZZ=ON -DGPUX_SANITIZE=ON \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUX_WERROR=ON >/dev/null
make -C "$build" -j"$(nproc)" "fuzz_$target" >/dev/null
# The grown corpus stays in the build folder, so runs add up.
work=$build/corpus-$target
mkdir -p "$work"
cp "$corpus"/* "$work"/
log=$build/fuzz-$target.log
"$build/tests/fuzz/fuzz_$target" -max_total_time="$secs" -timeout=30 -rss_limit_mb=4096 \
	-artifact_prefix=tests/fuzz/ "${extra[@]}" "$work" >"$log" 2>&1 || true
grep -E 'INITED|DONE|ERROR|SUMMARY|Test unit written' "$log" || tail -n 20 "$log"
