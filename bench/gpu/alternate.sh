#!/usr/bin/env bash
# One mode against the baseline, alternating: run.sh with MODES="base M"
# ROUNDS times, so each ratio compares runs seconds apart, then the
# median ratio per preset. For cells whose cost is below the spread of
# one run to the next (bench/gpu/README.md: `empty`, ~10 µs launches).
#
#   bench/gpu/alternate.sh [PRESET...]      (default: every preset)
#   env: MODE    the mode (default empty; see run.sh)
#        ROUNDS  rounds (default 5)
#        OUT     logs go to $OUT/alternate/round-K/ (else a temp folder)
#        and whatever run.sh takes (BENCH_DIR, GPUX, BENCH_MAX_S)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=${MODE:-empty}
rounds=${ROUNDS:-5}
top=${OUT:-$(mktemp -d)}/alternate
mkdir -p "$top"
all=$top/ratios.txt
: >"$all"
for ((k = 1; k <= rounds; k++)); do
	OUT=$top/round-$k MODES="base $mode" bash "$here/run.sh" "$@" >/dev/null ||
		echo "alternate: round $k: run.sh failed" >&2
	# "| preset | mode | iters | median | p10 | p90 | ratio | check | wall |"
	awk -F'|' -v m="$mode" -v k="$k" '
		{ for (i = 2; i <= NF; i++) gsub(/^ +| +$/, "", $i) }
		$3 == m && $8 == "" { print "alternate: round " k ": " $2 " failed" > "/dev/stderr"; next }
		$3 == m { r = $8; sub(/x$/, "", r); print k, $2, r, $9 }
	' "$top/round-$k/bench/results.md" >>"$all"
done
echo "| preset | $mode, each round (x the base) | median | probe checks |"
echo "|---|---|---|---|"
awk '
	{ key = $2; if (!(key in n)) order[++np] = key
	  v[key, ++n[key]] = $3; if ($4 != "ok" && $4 != "-") bad[key]++ }
	END {
		for (j = 1; j <= np; j++) {
			key = order[j]; c = n[key]; line = ""
			for (i = 1; i <= c; i++) { a[i] = v[key, i]; line = line (i > 1 ? ", " : "") a[i] }
			for (i = 2; i <= c; i++) for (h = i; h > 1 && a[h - 1] + 0 > a[h] + 0; h--) {
				t = a[h]; a[h] = a[h - 1]; a[h - 1] = t }
			med = c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
			printf "| %s | %s | %.2fx | %s |\n", key, line, med, bad[key] ? bad[key] " wrong" : "ok"
		}
	}
' "$all"
