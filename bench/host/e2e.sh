#!/usr/bin/env bash
# End-to-end wall time of whole gpux and bpftrace processes, in one run:
#   BEGIN { printf("hi\n"); exit(); }
#   BEGIN { exit(); }
#   uprobe:PROBE_TGT:gpux_tgt_add { @ = count(); }  with -c 'PROBE_TGT N'
# (probe_tgt: tests/live/probe_tgt.c, N calls of gpux_tgt_add). Each
# process is timed with date +%s%N around it, runs alternate between the
# tools, median of RUNS (10) per tool and program. Prints a markdown
# table; ratio is the median over gpux's median for the same program.
# Needs root (uprobes; bpftrace's BEGIN is a uprobe too).
#
#   bench/host/e2e.sh [BUILD_DIR] [RUNS] [N]
set -euo pipefail
build=${1:-build}
runs=${2:-10}
n=${3:-1000}
gpux=$build/cli/gpux
tgt=$(realpath "$build/tests/live/probe_tgt")
bpftrace=${BPFTRACE:-bpftrace}
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
[ -x "$gpux" ] && [ -x "$tgt" ] || { echo "build $build first" >&2; exit 1; }

progs=('BEGIN { printf("hi\n"); exit(); }'
	'BEGIN { exit(); }'
	"uprobe:$tgt:gpux_tgt_add { @ = count(); }")
cmds=('' '' "$tgt $n")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# one TOOL PROG CMD: run once, print the wall time in microseconds
one() {
	local s e
	s=$(date +%s%N)
	if [ -n "$3" ]; then "$1" -e "$2" -c "$3" >"$tmp/out" 2>&1 </dev/null
	else "$1" -e "$2" >"$tmp/out" 2>&1 </dev/null; fi ||
		{ echo "failed: $1 -e '$2'" >&2; cat "$tmp/out" >&2; exit 1; }
	e=$(date +%s%N)
	echo $(((e - s) / 1000))
}
median() { sort -n | awk '{ a[NR] = $1 } END {
	printf "%.1f", ((NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) / 1000 }'; }

echo "| tool | program | median ms | ratio |"
echo "|---|---|---|---|"
for i in "${!progs[@]}"; do
	p=${progs[$i]} c=${cmds[$i]}
	: >"$tmp/g"; : >"$tmp/b"
	for ((r = 0; r < runs; r++)); do
		one "$gpux" "$p" "$c" >>"$tmp/g"
		one "$bpftrace" "$p" "$c" >>"$tmp/b"
	done
	# check the count went through both
	if [ -n "$c" ]; then
		"$gpux" -e "$p" -c "$c" 2>/dev/null | grep -qx "@: $n" || echo "gpux count wrong" >&2
	fi
	g=$(median <"$tmp/g") b=$(median <"$tmp/b")
	label=${p//$tgt/PROBE_TGT}
	[ -n "$c" ] && label="$label -c 'probe_tgt $n'"
	echo "| gpux | \`$label\` | $g | 1.00 |"
	echo "| bpftrace $("$bpftrace" --version | awk '{print $2}') | \`$label\` | $b | $(awk -v b="$b" -v g="$g" 'BEGIN { printf "%.2f", b / g }') |"
done
