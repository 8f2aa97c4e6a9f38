#!/usr/bin/env bash
# Compile time of whole `gpux --dry-run` processes: a device one-liner
# (parse, check, lower, SIMT-verify, JIT to PTX with the helper library)
# and a host uprobe one-liner (parse, check, LLVM IR, O2, BPF backend, ELF
# in memory; no libbpf, no kernel), beside bpftrace's -d (debug dry run:
# parse, IR, codegen, no attach) for the same uprobe one-liner, measured
# in the same run. Wall time of whole
# processes, median of N fresh runs (N=50 by default), in ms.
#
#   bench/compile.sh [BUILD_DIR] [N]
set -euo pipefail
build=${1:-build}
n=${2:-50}
gpux=$build/cli/gpux
dev='gdev:kernel_exit { @[kernel] = count(); }'
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

"$gpux" --dry-run "$tmp/one.gpx" || { echo "gpux failed" >&2; exit 1; }
echo "device one-liner: $dev"
echo "host one-liner:   $prog"
echo "runs: $n"
echo "/bin/true:                  $(median_ms /bin/true) ms"
echo "gpux --dry-run (device):    $(median_ms "$gpux" --dry-run -e "$dev") ms"
echo "gpux --dry-run (uprobe):    $(median_ms "$gpux" --dry-run -e "$prog") ms"
if command -v bpftrace > /dev/null; then
	echo "bpftrace $(bpftrace --version | awk '{print $2}') -d:          $(median_ms bpftrace -d -e "$prog") ms"
else
	echo "bpftrace: not installed"
fi
