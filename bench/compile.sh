#!/usr/bin/env bash
# Compile time of a host uprobe one-liner to a BPF object: gpux's host
# lowering (tests/hostgen's driver with --compile-only: read, parse,
# check, LLVM IR, O2, BPF backend, ELF in memory; no libbpf, no kernel)
# beside bpftrace's -d (debug dry run: parse, IR, codegen, no attach),
# for the same one-liner, measured in the same run. Wall time of whole
# processes, median of N fresh runs (N=50 by default), in ms.
#
#   bench/compile.sh [BUILD_DIR] [N]
set -euo pipefail
build=${1:-build}
n=${2:-50}
hostgen=$build/tests/hostgen/hostgen
prog='uprobe:/lib/x86_64-linux-gnu/libc.so.6:malloc { @[comm] = count(); }'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' "$prog" > "$tmp/one.gpx"

# median_ms CMD...: run CMD n times, print the median wall time in ms
median_ms() {
	local t=()
	for ((i = 0; i < n; i++)); do
		local s e
		s=$(date +%s%N)
		"$@" > /dev/null 2>&1
		e=$(date +%s%N)
		t+=($(( (e - s) / 1000 )))
	done
	printf '%s\n' "${t[@]}" | sort -n | awk '{ a[NR] = $1 } END {
		m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "%.2f (min %.2f, max %.2f)", m / 1000, a[1] / 1000, a[NR] / 1000 }'
}

"$hostgen" --compile-only "$tmp/one.gpx" || { echo "hostgen failed" >&2; exit 1; }
echo "one-liner: $prog"
echo "runs: $n"
echo "/bin/true:                 $(median_ms /bin/true) ms"
echo "gpux host compile:         $(median_ms "$hostgen" --compile-only "$tmp/one.gpx") ms"
if command -v bpftrace > /dev/null; then
	echo "bpftrace $(bpftrace --version | awk '{print $2}') -d:          $(median_ms bpftrace -d -e "$prog") ms"
else
	echo "bpftrace: not installed"
fi
