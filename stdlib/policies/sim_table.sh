#!/bin/sh
# Regenerates the tables of stdlib/policies/README.md: the size of each
# gpu_ext port against gpu_ext's own (.bpf.c + loader), and what the
# simulator (gpux --sim, docs/SIMULATOR.md) says each does against the
# default on five workloads.
# Usage: stdlib/policies/sim_table.sh [--readme] [GPUX]
#   GPUX defaults to build/cli/gpux; --readme rewrites README.md's part
#   between its sim_table.sh markers instead of printing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
readme=
if [ "${1:-}" = --readme ]; then readme=1; shift; fi
gpux=${1:-$here/../../build/cli/gpux}
cd "$here"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "$readme" ]; then
	"$here/sim_table.sh" "$gpux" >"$tmp/tables"
	awk -v t="$tmp/tables" '
		/<!-- sim_table.sh output: end -->/ { skip = 0 }
		!skip { print }
		/<!-- sim_table.sh output: begin -->/ { while ((getline l < t) > 0) print l; skip = 1 }
	' README.md >"$tmp/README.md"
	cp "$tmp/README.md" README.md
	exit 0
fi

# Lines: non-blank lines of the .gpx, comments and #! included.
# gpu_ext: its .bpf.c plus its loader, as counted in its repository
# (timeslices: 408 + its 77-line header).
echo '| policy | what it does | gpux lines | gpu_ext lines | ratio |'
echo '|---|---|---:|---:|---:|'
while read -r f ext desc; do
	n=$(grep -cv '^[[:space:]]*$' "$f.gpx")
	echo "| $f | $desc | $n | $ext | 1/$(awk "BEGIN { printf \"%.1f\", $ext / $n }") |"
done <<'T'
eviction_fifo 145 evict in arrival order: accesses never refresh a chunk
eviction_mru 149 evict the most recently used chunk first
eviction_lfu 304 new chunks at the head; each access up to 255 moves a chunk to the tail
eviction_pid_quota 472 a process within PCT% of the chunks keeps LRU protection; over it, its chunks stop moving
eviction_freq_pid_decay 452 only every N-th access (N per process) protects a chunk
prefetch_always_max 139 prefetch the whole max region of the faulting block
prefetch_none 132 migrate only the faulting page
prefetch_adaptive_tree_iter 364 the driver's tree walk with threshold $1 (driver: 51)
prefetch_adaptive_sequential 573 prefetch PCT% (or NUM pages) forward, backward or from the block start
sched_timeslices 485 timeslice and interleave level by process name at task_init
eviction_fifo_chance 459 FIFO where a chunk at the head spends one of its per-process chances to go back to the tail
prefetch_pid_tree 454 the tree walk with a threshold per process
prefetch_eviction_pid 679 per-process tree threshold plus activate-time decay
prefetch_stride_fault 472 per-block stride detection on faults, prefetch PAGES ahead
T

# One row per policy and arguments; $H and $L stand for the high and low
# priority pids: tenant1/tenant2 (1, 2) in the generators, where seq,
# hotcold and random run pid 1 alone; trainer/server (101, 202) in the
# trace.
# shellcheck disable=SC2016 # $H and $L: placeholders, replaced below
rows='eviction_fifo.gpx
eviction_mru.gpx
eviction_lfu.gpx
eviction_pid_quota.gpx:$H:80:$L:20:0
eviction_pid_quota.gpx:$L:80:$H:20:0
eviction_freq_pid_decay.gpx:$H:1:$L:10:5
eviction_freq_pid_decay.gpx:$L:1:$H:10:5
prefetch_always_max.gpx
prefetch_none.gpx
prefetch_adaptive_tree_iter.gpx:51
prefetch_adaptive_tree_iter.gpx:30
prefetch_adaptive_sequential.gpx:100:forward:0
prefetch_adaptive_sequential.gpx:50:forward_start:0
eviction_fifo_chance.gpx:$H:3:$L:0:1
prefetch_pid_tree.gpx:$H:20:$L:80:50
prefetch_eviction_pid.gpx:$H:10:$L:80:50
prefetch_stride_fault.gpx:2:2:128'
works='seq:size=512m,gpu=384m,passes=2
stride:size=512m,gpu=384m,passes=2
hotcold:size=512m,gpu=256m,passes=3
random:size=512m,gpu=384m
mix:size=512m,gpu=384m,passes=3
trace:../../tests/sim/traces/small.trace,gpu=12m'

i=0
for w in $works; do
	i=$((i + 1))
	case $w in trace:*) h=101 l=202 ;; *) h=1 l=2 ;; esac
	# shellcheck disable=SC2046,SC2086 # one word per row
	"$gpux" -f json --sim "$w" $(echo $rows | sed "s/\\\$H/$h/g; s/\\\$L/$l/g") >"$tmp/$i"
	echo "$w" >"$tmp/$i.name"
done

echo
echo 'Each cell: est_ms speedup over the default, then the change in faults'
echo 'and in evictions against the default (the default row: its est_ms,'
echo 'faults and evictions).'
echo
printf '| policy'
for k in $(seq 1 "$i"); do printf ' | %s' "$(cat "$tmp/$k.name")"; done
printf ' |\n|---'
for k in $(seq 1 "$i"); do printf '|---:'; done
printf '|\n'
n=$(echo "$rows" | wc -l)
for r in $(seq 0 "$n"); do
	if [ "$r" = 0 ]; then label=default; else label=$(echo "$rows" | sed -n "${r}p"); fi
	printf '| %s' "$label"
	for k in $(seq 1 "$i"); do
		awk -v r=$((r + 1)) '
			function num(k,  m) { m = $0; sub(".*\"" k "\": ", "", m); sub(",.*", "", m); return m + 0 }
			NR == 1 { ms = num("est_ms"); f = num("faults"); e = num("evictions") }
			NR == r && r == 1 { printf " | %.1f ms, %d F, %d E", ms, f, e }
			NR == r && r > 1 {
				printf " | %.2fx, F %+.0f%%, E %+.0f%%", ms / num("est_ms"),
				       f ? 100 * (num("faults") - f) / f : 0, e ? 100 * (num("evictions") - e) / e : 0
			}' "$tmp/$k"
	done
	printf ' |\n'
done

# the scheduling model: per-tenant finish times (the text output's
# second table; JSON has no tenants for the default row)
echo
echo '| policy | workload | tenant | timeslice_us | interleave | finish_ms (default -> policy) |'
echo '|---|---|---:|---:|---:|---:|'
w=mix:size=512m,gpu=384m,work=100
for r in sched_timeslices.gpx:tenant1:4000:3 sched_timeslices.gpx:tenant2:2000:2; do
	"$gpux" --sim "$w" "$r" | awk -v r="$r" -v w="$w" '
		$NF == "yes" || $NF == "rejected" {
			if ($1 == "default") { d[$2] = $5; next }
			printf "| %s | %s | %s | %s | %s | %s -> %s |\n", r, w, $2, $3, $4, d[$2], $5
		}'
done
