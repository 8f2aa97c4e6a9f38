#!/usr/bin/env bash
# gpux overhead on a GPU (bench/gpu/README.md): each preset runs once per
# mode, a fresh process each, and the benchmark's own median launch+sync
# time is compared with the baseline's (no gpux). Prints a markdown table.
#
#   bench/gpu/run.sh [PRESET...]   presets: tiny small medium large xlarge
#                                  gemm (default: all, in that order)
#   bench/gpu/run.sh -P            print the one-liners and stop
#   env: BENCH_DIR   built folder (default: this script's folder when it
#                    holds vecadd_bench, else build-gpu/bench of the repo)
#        GPUX        gpux binary (default BENCH_DIR/../gpux/gpux)
#        MODES       default "base empty count hist printf access"; also
#                    kend (cuda:kernel_end, the cost of timing each launch)
#        PRINTF_LINES  cap on printf lines per printf-mode run (default
#                    2000000): its iterations are cut to fit, at least 10
#        BENCH_MAX_S seconds of timed loop per run at most (default 8)
#        BENCH_TIMEOUT  seconds per process (default 90)
#        OUT         logs and results.md go to $OUT/bench/ (else BENCH_DIR/logs)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# preset -> the benchmark program and its arguments
declare -A P=(
	[tiny]="vecadd_bench 32 10000 32 1"
	[small]="vecadd_bench 1000 10000 256 4"
	[medium]="vecadd_bench 10000 10000 256 40"
	[large]="vecadd_bench 100000 1000 512 196"
	[xlarge]="vecadd_bench 1000000 1000 512 1954"
	[gemm]="gemm_bench 1024 100"
)
# mode -> gpux one-liner (base: no gpux)
declare -A PROG=(
	[empty]='gdev:kernel_exit { }'
	[count]='gdev:kernel_exit { @[kernel] = count(); }'
	[hist]='gdev:kernel_exit { @[gtid % 1024] = count(); }'
	[printf]='gdev:kernel_exit { printf("%d\n", nsecs); }'
	[access]='gdev:access { @ = count(); }'
	# blockfinish (bench/gpu/tools/): a cross-layer lookup, the clock and
	# a histogram in every thread (opt-in: MODES)
	[finish]='cuda:launch { @t[kernel] = nsecs; } gdev:kernel_exit { @us[kernel] = hist((nsecs - @t[kernel]) / 1000); }'
	# no instrumentation: CUDA events around each launch (opt-in: MODES)
	[kend]='cuda:kernel_end { @ = count(); }'
)
if [ "${1:-}" = -P ]; then # the one-liners, for tests/gpu/e2e/dryrun.sh
	printf '%s\n' "${PROG[@]}"
	exit 0
fi
if [ -n "${BENCH_DIR:-}" ]; then
	dir=$BENCH_DIR
elif [ -f "$here/vecadd_bench" ]; then
	dir=$here
else
	dir=$(cd "$here/../.." && pwd)/build-gpu/bench
fi
for f in "$dir/vecadd_bench" "$dir/gemm_bench"; do
	[ -f "$f" ] && [ ! -x "$f" ] && chmod +x "$f" # a carried folder may lose it
done
[ -x "$dir/vecadd_bench" ] || { echo "bench: no $dir/vecadd_bench (scripts/gpu_build.sh builds it)" >&2; exit 2; }
dir=$(cd "$dir" && pwd)
gpux=${GPUX:-$dir/../gpux/gpux}
# Absolute (the runs happen in $dir); a bare name is looked up in PATH.
if [[ $gpux == */* ]] && [ -e "$gpux" ]; then
	gpux=$(cd "$(dirname "$gpux")" && pwd)/$(basename "$gpux")
fi
read -r -a modes <<<"${MODES:-base empty count hist printf access}"
cap=${PRINTF_LINES:-2000000}
tmo=${BENCH_TIMEOUT:-90}
export BENCH_MAX_S=${BENCH_MAX_S:-8}
logdir=${OUT:+$OUT/bench}
logdir=${logdir:-$dir/logs}
mkdir -p "$logdir"
logdir=$(cd "$logdir" && pwd)
res=$logdir/results.md

presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(tiny small medium large xlarge gemm)
for p in "${presets[@]}"; do
	[ -n "${P[$p]:-}" ] || { echo "bench: unknown preset $p" >&2; exit 2; }
done
[ -f "$gpux" ] && [ ! -x "$gpux" ] && chmod +x "$gpux"
need_gpux=0
for m in "${modes[@]}"; do
	[ "$m" = base ] || need_gpux=1
	[ "$m" = base ] || [ -n "${PROG[$m]:-}" ] || { echo "bench: unknown mode $m" >&2; exit 2; }
done
if [ "$need_gpux" = 1 ] && [ ! -x "$gpux" ]; then
	echo "bench: gpux not found at $gpux (set GPUX=..., or MODES=base)" >&2
	exit 2
fi

: >"$res"
say() { echo "$@" | tee -a "$res"; }
say "gpux GPU overhead, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n1)"
[ "$need_gpux" = 1 ] && say "$("$gpux" -V 2>&1 | head -n1)"
say ""
say "| preset | mode | iters | median µs | p10 µs | p90 µs | ratio | probe check | wall s |"
say "|---|---|---|---|---|---|---|---|---|"

t_all=$(date +%s)
cd "$dir" || exit 2
for p in "${presets[@]}"; do
	read -r -a cmd <<<"${P[$p]}"
	if [ "${cmd[0]}" = gemm_bench ]; then
		n=${cmd[1]} iters=${cmd[2]} warm=3
		threads=$((n * n)) elems=$((n * n)) per_elem=$((2 * n / 16 + 1))
	else
		n=${cmd[1]} iters=${cmd[2]} warm=10
		threads=$((cmd[3] * cmd[4]))
		elems=$((n < threads ? n : threads)) per_elem=3
	fi
	base=
	for m in "${modes[@]}"; do
		it=$iters w=$warm
		if [ "$m" = printf ]; then
			it=$((cap / threads))
			[ "$it" -lt 10 ] && it=10
			[ "$it" -gt "$iters" ] && it=$iters
			[ "$it" -lt "$iters" ] && w=2
		fi
		if [ "${cmd[0]}" = gemm_bench ]; then
			args=("./${cmd[0]}" "$n" "$it" "$w")
		else
			args=("./${cmd[0]}" "$n" "$it" "${cmd[3]}" "${cmd[4]}" "$w")
		fi
		L=$logdir/$p-$m
		mapout=$L.maps
		[ "$m" = printf ] && mapout=/dev/null
		t0=$(date +%s%N)
		if [ "$m" = base ]; then
			timeout -k 5 "$tmo" "${args[@]}" >"$L.stdout" 2>"$L.stderr"
		else
			timeout -k 5 "$tmo" "$gpux" -o "$mapout" -e "${PROG[$m]}" -c "${args[*]}" \
				>"$L.stdout" 2>"$L.stderr"
		fi
		rc=$?
		wall=$(awk -v d=$(( $(date +%s%N) - t0 )) 'BEGIN { printf "%.1f", d / 1e9 }')
		line=$(grep -m1 'median_us=' "$L.stdout")
		if [ "$rc" -ne 0 ] || [ -z "$line" ] || ! grep -q '^check: ok' "$L.stdout"; then
			say "| $p | $m | $it | FAILED (exit $rc$(grep -q '^check: FAIL' "$L.stdout" && echo ', wrong result')) | | | | | $wall |"
			continue
		fi
		get() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$line"; }
		med=$(get median_us) p10=$(get p10_us) p90=$(get p90_us) ran=$(get iters)
		[ "$m" = base ] && base=$med
		ratio=-
		[ -n "$base" ] && ratio=$(awk -v a="$med" -v b="$base" 'BEGIN { printf "%.2fx", a / b }')
		# The maps must hold one event per thread (per access for access,
		# per launch for kend) of every launch that ran: warmup + timed
		# iterations.
		pc=-
		launches=$((w + ran))
		case $m in
		count | hist) want=$((launches * threads)) ;;
		access) want=$((launches * elems * per_elem)) ;;
		kend) want=$launches ;; # one completion per launch
		*) want= ;;
		esac
		if [ -n "$want" ]; then
			got=$(awk '/^@/ && match($0, /: [0-9]+$/) { s += substr($0, RSTART + 2) } END { printf "%.0f", s }' "$mapout")
			if [ "$got" = "$want" ]; then pc=ok; else pc="got $got, want $want"; fi
		fi
		note=$it
		[ "$ran" != "$it" ] && note="$ran of $it (BENCH_MAX_S)"
		say "| $p | $m | $note | $med | $p10 | $p90 | $ratio | $pc | $wall |"
	done
done
say ""
say "total $(( $(date +%s) - t_all )) s; logs in $logdir"
