#!/usr/bin/env bash
# The cost of gpux's cuda:launch path per launch (bench/gpu/README.md):
# launch_bench alone, then under gpux with the runtime loaded but no
# launch probe (cuda:malloc), then with counting cuda:launch probes, and
# with cuda:kernel_end (CUPTI's records; CUDA events in *_events modes). Each
# mode runs RUNS times (fresh processes); prints each run's median ns per
# launch and a markdown table of the medians and the differences.
#   bench/gpu/launch.sh [capture]  env: BENCH_DIR, GPUX, RUNS (default 5),
#                                  BATCHES (default 2000), OUT, MODES
# capture: launches into a stream under graph capture (launch_bench.cu):
# the API path alone, without the GPU's queue.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${BENCH_DIR:-$here}
[ -f "$dir/launch_bench" ] || dir=$(cd "$here/../.." && pwd)/build-gpu/bench
gpux=${GPUX:-$dir/../gpux/gpux}
runs=${RUNS:-5}
batches=${BATCHES:-2000}
logs=${OUT:+$OUT/bench}
logs=${logs:-$dir/logs}
mkdir -p "$logs"
how=${1:-}
chmod +x "$dir/launch_bench" 2>/dev/null
declare -A PROG=(
	[runtime]='cuda:malloc { @ = count(); }'
	[count]='cuda:launch { @ = count(); }'
	[count_kernel]='cuda:launch { @[kernel] = count(); }'
	# the task's own: pid, tid and comm, kept per thread (vm/bpf_vm_task.c)
	[count_task]='cuda:launch { @[pid, tid, comm] = count(); }'
	# a memory action that does nothing (launch_bench passes a null
	# pointer): the VM's call, the allocation lookup, the driver's
	# pointer query; under capture, the capture check
	[prefetch_noop]='cuda:launch { prefetch(arg0, 4096); }'
	# two cuEventRecord calls and the pending list per launch (under
	# capture: the capture check alone, nothing is timed)
	[kend]='cuda:kernel_end { @ = count(); }'
	# issue 39's program: kernel_end from CUPTI's activity records (the
	# default); all_events: the same from CUDA events (GPUX_KERNEL_END)
	[all]='cuda:launch { @l = count(); } cuda:kernel_end { @e = count(); } cuda:memcpy { @m = count(); }'
	[all_events]='cuda:launch { @l = count(); } cuda:kernel_end { @e = count(); } cuda:memcpy { @m = count(); }'
	# -f perfetto: the timeline's own probes (a record per launch and per
	# kernel, sync, copy) beside a count; -o is the trace
	[perfetto]='cuda:launch { @l = count(); }'
	# a cross-layer map: each launch writes its slot to the device on
	# its stream before the kernel (rt_push.c); the device probe never
	# runs its body
	[cross]='cuda:launch { @t[kernel] = nsecs; } gdev:kernel_entry /blockIdx.x == 1234567/ { @h[kernel] = hist(nsecs - @t[kernel]); }'
)
modes=${MODES:-base runtime count count_kernel prefetch_noop kend cross}
declare -A MED VALS
# rounds of every mode, so that a drift of the machine spreads over all
for r in $(seq "$runs"); do
	for m in $modes; do
		log=$logs/launch${how:+_$how}_${m}_$r.log
		if [ "$m" = base ]; then
			"$dir/launch_bench" "$batches" 256 20 $how >"$log" 2>&1
		else
			ke=X=1 fmt=
			[[ $m == *_events ]] && ke=GPUX_KERNEL_END=events
			o=$logs/launch_${m}_$r.out
			# the trace (hundreds of bytes a launch) is not kept
			[ "$m" = perfetto ] && fmt="-f perfetto" o=${TMPDIR:-/tmp}/launch_trace_$r.json
			env $ke \
				"$gpux" -q $fmt -o "$o" -e "${PROG[$m]}" -- \
				"$dir/launch_bench" "$batches" 256 20 $how >"$log" 2>&1
			[ "$m" = perfetto ] && echo "trace $(stat -c %s "$o" 2>/dev/null) bytes" >>"$log" && rm -f "$o"
		fi
		v=$(grep -o 'median_ns=[0-9.]*' "$log" | cut -d= -f2)
		echo "$m run $r: ${v:-FAILED} ns/launch"
		[ -n "$v" ] && VALS[$m]="${VALS[$m]:-} $v"
	done
done
for m in $modes; do
	MED[$m]=$(printf '%s\n' ${VALS[$m]:-} | sort -g | awk '{a[NR]=$1} END {print NR ? a[int((NR+1)/2)] : "nan"}')
done
{
	echo "| mode | gpux program | median ns per launch | minus runtime |"
	echo "|---|---|---|---|"
	for m in $modes; do
		d=""
		[ -n "${MED[runtime]:-}" ] &&
			d=$(awk -v a="${MED[$m]}" -v b="${MED[runtime]}" 'BEGIN { printf "%+.1f", a - b }')
		echo "| $m | \`${PROG[$m]:-(none)}\` | ${MED[$m]} | $d |"
	done
} | tee "$logs/launch${how:+_$how}.md"
