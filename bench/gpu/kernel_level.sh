#!/usr/bin/env bash
# Kernel-level tracing on a GPT-2-small training step (issue 39): the
# step time alone, with cuda:launch + cuda:kernel_end + a cuda:memcpy
# count timed by CUPTI's activity records (the default), and the same
# with cuda:kernel_end timed by CUDA events around each launch
# (GPUX_KERNEL_END=events, the fallback), and with cuda:launch alone: the
# breakdown of where kernel-level tracing's time goes. Alternated rounds,
# medians (single runs spread by several percent), and the median of each
# round's ratio to that round's run alone. Each run also checks
# that cuda:kernel_end saw every launch (@e = @l).
#   bench/gpu/kernel_level.sh [ROUNDS]    env: GPUX, OUT,
#     MODES (default "alone launch cupti events"), STEPS (timed steps per
#     run, default 20), PIN (a CPU list: every run under taskset -c PIN, so
#     runs do not differ by the cores they landed on)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gpux=${GPUX:-$here/../../build-gpu/gpux/gpux}
rounds=${1:-3}
out=${OUT:-/tmp}/kernel_level
mkdir -p "$out"
py="python3 $here/gpt2_step.py ${STEPS:-20} 5"
modes=${MODES:-alone launch cupti events}
pin=()
[ -n "${PIN:-}" ] && pin=(taskset -c "$PIN")
T=300
step() { grep -o 'step_ms [0-9.]*' "$1" | awk '{print $2}'; }
val() { sed -n "s/^@$2: //p" "$1"; }
run() { # NAME [ENV=V] [gpux -e PROGRAM]
	local name=$1 env=$2; shift 2
	if [ $# -eq 0 ]; then timeout $T "${pin[@]}" $py >"$out/$name.txt" 2>&1
	else env $env timeout $T "${pin[@]}" "$gpux" -e "$1" -c "$py" >"$out/$name.txt" 2>&1; fi
	local f=$out/$name.txt
	echo "$name $(step "$f") launches $(val "$f" l) ends $(val "$f" e) copies $(val "$f" m)"
}
LAUNCH='cuda:launch { @l = count(); }'
ALL='cuda:launch { @l = count(); } cuda:kernel_end { @e = count(); } cuda:memcpy { @m = count(); }'
for r in $(seq "$rounds"); do
	for m in $modes; do
		case $m in
		alone) run "alone.$r" X=1 ;;
		launch) run "launch.$r" X=1 "$LAUNCH" ;;
		cupti) run "cupti.$r" X=1 "$ALL" ;;
		events) run "events.$r" GPUX_KERNEL_END=events "$ALL" ;;
		esac
	done
done | tee "$out/runs.txt"
median() { sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
a=$(awk '$1 ~ /^alone\./ { print $2 }' "$out/runs.txt" | median)
for k in $modes; do
	m=$(awk -v k="$k" 'index($1, k ".") == 1 { print $2 }' "$out/runs.txt" | median)
	awk -v k="$k" -v m="$m" -v a="$a" 'BEGIN { printf "%-7s median step %s ms  %.3fx\n", k, m, m / a }'
done | tee "$out/summary.txt"
# paired: each traced run against the alone run of its own round, the
# median of those ratios (drift between rounds cancels out)
for k in ${modes/alone/}; do
	awk -v k="$k" '{ split($1, p, "."); t[p[1], p[2]] = $2; r[p[2]] = 1 }
		END { for (x in r) if (t["alone", x] > 0 && t[k, x] > 0) print t[k, x] / t["alone", x] }' \
		"$out/runs.txt" | median | awk -v k="$k" '{ printf "%-7s paired median %.3fx\n", k, $1 }'
done | tee -a "$out/summary.txt"
# every launch ended once: @e = @l in every traced run with kernel_end
awk '$1 ~ /^(cupti|events)\./ { if ($4 == "" || $4 != $6) bad++; n++ }
	END { printf "kernel_end saw every launch in %d of %d runs\n", n - bad, n }' "$out/runs.txt" |
	tee -a "$out/summary.txt"
