#!/usr/bin/env bash
# Compile time of whole `gpux --dry-run` processes: a device one-liner
# (parse, check, lower, SIMT-verify, JIT to PTX with the helper library)
# and a host uprobe one-liner (parse, check, LLVM IR, O2, BPF backend, ELF
# in memory; no libbpf, no kernel), beside bpftrace's -d (debug dry run:
# parse, IR, codegen, no attach) for the same uprobe one-liner, measured
# in the same run. Wall time of whole
# processes, median of N fresh runs (N=50 by default), in ms.
#
# Then large programs (bench/gen_large.sh), whose compile time must grow
# linearly with their size: one BEGIN probe of 4,000 to 50,000
# statements (N/2 maps, and over 16 maps), 500 to 2,000 uprobes of 25
# statements, 2,000 BEGIN and interval probes, if/else chains and
# printf() runs. Each is a whole `gpux --dry-run FILE` process, the
# median of LARGE_RUNS runs (1 by default), in seconds; LARGE=0 skips
# them.
#
#   bench/compile.sh [BUILD_DIR] [N]
set -euo pipefail
build=${1:-build}
n=${2:-50}
here=$(cd "$(dirname "$0")" && pwd)
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

[ "${LARGE:-1}" = 0 ] && exit 0
runs=${LARGE_RUNS:-1}
# large SHAPE N: compile gen_large.sh SHAPE N, print the median seconds
large() {
	"$here/gen_large.sh" "$1" "$2" > "$tmp/large.gpx"
	local t=()
	for ((i = 0; i < runs; i++)); do
		local s e
		s=$(date +%s%N)
		"$gpux" --dry-run "$tmp/large.gpx" > /dev/null 2>&1 ||
			{ echo "gpux failed on $1 $2" >&2; exit 1; }
		e=$(date +%s%N)
		t+=($(( (e - s) / 1000000 )))
	done
	local med
	med=$(printf '%s\n' "${t[@]}" | sort -n | awk '{ a[NR] = $1 } END {
		printf "%.2f", ((NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) / 1000 }')
	printf '%-28s %8s s\n' "large $1 $2:" "$med"
}
echo "large programs, runs: $runs"
for k in 4000 8000 16000 50000; do large stmts $k; done
large stmts16 50000
for k in 500 1000 2000; do large uprobes $k; done
large begins 2000
large intervals 2000
for k in 400 800 1600; do large ifelse $k; done
for k in 2000 4000 8000; do large printf $k; done
