#!/usr/bin/env bash
# A timeline of a GPT-2-small training run (issue 39): 50 timed steps (5
# warm-up) alone and under `gpux -f perfetto` with a cuda:launch count,
# in alternated rounds; the median step of each, the median of each
# round's ratio, and for every traced run: the trace checked against the
# trace-event format (tests/timeline/validate_trace.py) and its kernels
# (complete events) against cuda:launch's count of the same run. The
# traces are left in $OUT/timeline only when KEEP_TRACES=1 (tens of MB).
#   bench/gpu/timeline.sh [ROUNDS]    env: GPUX, OUT, STEPS (default 50)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gpux=${GPUX:-$here/../../build-gpu/gpux/gpux}
validate=$here/../../tests/timeline/validate_trace.py
rounds=${1:-3}
steps=${STEPS:-50}
out=${OUT:-/tmp}/timeline
mkdir -p "$out"
py="python3 $here/gpt2_step.py $steps 5"
T=300
step() { grep -o 'step_ms [0-9.]*' "$1" | awk '{print $2}'; }
for r in $(seq "$rounds"); do
	timeout $T $py >"$out/alone.$r.txt" 2>&1
	echo "alone.$r $(step "$out/alone.$r.txt")"
	trace=$out/trace.$r.json
	timeout $T "$gpux" -f perfetto -o "$trace" -e 'cuda:launch { @l = count(); }' -c "$py" \
		>"$out/perfetto.$r.txt" 2>&1
	f=$out/perfetto.$r.txt
	l=$(sed -n 's/^@l: //p' "$f")
	if python3 "$validate" "$trace" >"$out/validate.$r.txt" 2>&1; then
		k=$(sed -n 's/^kernels //p' "$out/validate.$r.txt")
		v=valid
	else
		k=-
		v=INVALID
	fi
	echo "perfetto.$r $(step "$f") launches ${l:--} trace_kernels $k $v $(stat -c %s "$trace" 2>/dev/null) bytes"
	[ "${KEEP_TRACES:-0}" = 1 ] || rm -f "$trace"
done | tee "$out/runs.txt"
median() { sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
a=$(awk '$1 ~ /^alone\./ { print $2 }' "$out/runs.txt" | median)
p=$(awk '$1 ~ /^perfetto\./ { print $2 }' "$out/runs.txt" | median)
awk -v a="$a" -v p="$p" 'BEGIN { printf "alone    median step %s ms\nperfetto median step %s ms  %.3fx\n", a, p, p / a }' |
	tee "$out/summary.txt"
awk '{ split($1, q, "."); t[q[1], q[2]] = $2; r[q[2]] = 1 }
	END { for (x in r) if (t["alone", x] > 0 && t["perfetto", x] > 0) print t["perfetto", x] / t["alone", x] }' \
	"$out/runs.txt" | median | awk '{ printf "perfetto paired median %.3fx\n", $1 }' | tee -a "$out/summary.txt"
awk '$1 ~ /^perfetto\./ { n++; if ($4 != "" && $4 == $6 && $7 == "valid") ok++ }
	END { printf "trace valid with kernels = cuda:launch in %d of %d runs\n", ok, n }' "$out/runs.txt" |
	tee -a "$out/summary.txt"
