#!/usr/bin/env bash
# UVM prefetch-policy benchmark driver, run on the GPU machine:
#
#   bench/policy/run.sh GPUX_BIN OUTDIR [REPS]     (REPS default 3)
#   bench/policy/run.sh --table OUTDIR             (only rebuild table.md)
#
# For each workload (stride_vadd, layer_sweep) and memory setting (fits =
# no balloon, --oversub 1.25, --oversub 1.5) it runs the rows `default`
# (the program alone), `oracle` (--oracle: the program's own prefetch) and
# each policy row of rows.txt for that workload
# (`GPUX_BIN [GPUX_ARGS] POLICY.gpx -c "PROG ARGS"`), REPS times, the
# rows interleaved within a repetition. Every run appends one line to
# OUTDIR/raw.txt; OUTDIR/table.md is then rebuilt from all of raw.txt (so
# several invocations on one OUTDIR, e.g. one per workload, add up).
# Each run's stdout and stderr are kept in OUTDIR/logs/. A failing run is
# recorded, never fatal. Progress goes to stderr.
#
# Environment (all optional):
#   WORKLOADS     workloads to run (default "stride_vadd layer_sweep")
#   SETTINGS      settings to run (default "fits 1.25 1.5"; a number R
#                 means --oversub R)
#   ROWS_FILE     policy rows (default bench/policy/rows.txt): lines
#                 "workload<TAB>name<TAB>path.gpx", # comments; a relative
#                 path is taken from the current directory, else from the
#                 repository root
#   ORACLE_EVICT  1: add the row oracle-evict (--oracle-evict)
#   STRIDE_ARGS   extra flags for stride_vadd (e.g. "--ws-mb 2048")
#   LAYER_ARGS    extra flags for layer_sweep (e.g. "--layers 16")
#   GPUX_ARGS     extra gpux options, placed before the .gpx (e.g. "-q")
#   BIN_DIR       where the workloads are (default OUTDIR/bin, built there
#                 with build.sh when missing)
#   RUN_TIMEOUT   seconds one run may take before it is killed (default 150)
#   BUDGET_S      no new run starts once this invocation has run this long
#                 or the next run would likely pass it (default 540: fits
#                 a 10-minute command limit)
set -u

src=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$src/../.." && pwd)

usage() {
	echo "usage: $0 GPUX_BIN OUTDIR [REPS]   |   $0 --table OUTDIR" >&2
	exit 2
}

# ---- the table, rebuilt from raw.txt ----------------------------------------
# raw.txt columns (tab-separated): workload setting row rep rc time_ms
# checksum wall_s; lines starting with # are headers.

median() { # numbers on stdin -> their median, or - when none
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) print "-";
		else if (NR % 2) printf "%.1f\n", v[(NR + 1) / 2];
		else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Successful runs of one workload+setting(+row): rc 0, time and checksum.
ok_runs() { # raw wl setting [row]
	awk -F'\t' -v w="$2" -v s="$3" -v r="${4-}" '
		$0 !~ /^#/ && $1 == w && $2 == s && (r == "" || $3 == r) &&
		$5 == 0 && $6 != "-" && $7 != "-"' "$1"
}

write_table() { # OUTDIR
	local out=$1 raw=$1/raw.txt wl setting row
	[ -f "$raw" ] || { echo "no $raw" >&2; return 1; }
	{
		echo "# UVM prefetch-policy benchmark"
		echo
		echo "Generated $(date -u '+%Y-%m-%d %H:%M UTC') from raw.txt; runs:"
		grep '^# run' "$raw" | sed 's/^# /- /'
		echo
		echo "median ms: median time_ms (launch loop, all passes) of the ok runs;"
		echo "speedup: default's median / the row's median, same setting;"
		echo "checksum: ok when every ok run's checksum equals the default row's."
		for wl in $(awk -F'\t' '!/^#/ && !seen[$1]++ { print $1 }' "$raw"); do
			echo
			echo "## $wl"
			echo
			echo "| setting | row | median ms | speedup vs default | checksum ok | runs ok |"
			echo "|---|---|---|---|---|---|"
			for setting in $(awk -F'\t' -v w="$wl" \
					'!/^#/ && $1 == w && !seen[$2]++ { print $2 }' "$raw"); do
				# Reference checksum: the default row's most common one,
				# else the most common of all ok runs of this setting.
				local ref base
				ref=$(ok_runs "$raw" "$wl" "$setting" default | cut -f7 |
					sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
				[ -n "$ref" ] || ref=$(ok_runs "$raw" "$wl" "$setting" | cut -f7 |
					sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
				base=$(ok_runs "$raw" "$wl" "$setting" default | cut -f6 | median)
				for row in $(awk -F'\t' -v w="$wl" -v s="$setting" \
						'!/^#/ && $1 == w && $2 == s && !seen[$3]++ { print $3 }' "$raw"); do
					local med total nok nbad fails ck speed
					med=$(ok_runs "$raw" "$wl" "$setting" "$row" | cut -f6 | median)
					total=$(awk -F'\t' -v w="$wl" -v s="$setting" -v r="$row" \
						'!/^#/ && $1 == w && $2 == s && $3 == r' "$raw" | wc -l)
					nok=$(ok_runs "$raw" "$wl" "$setting" "$row" | wc -l)
					nbad=$(ok_runs "$raw" "$wl" "$setting" "$row" |
						awk -F'\t' -v c="$ref" '$7 != c' | wc -l)
					fails=$(awk -F'\t' -v w="$wl" -v s="$setting" -v r="$row" \
						'!/^#/ && $1 == w && $2 == s && $3 == r && !($5 == 0 && $6 != "-" && $7 != "-") {
							printf "%s%s", (n++ ? "," : ""), ($5 == 124 || $5 == 137 ? "timeout" : ($5 == 0 ? "no output" : "rc=" $5)) }' "$raw")
					if [ "$nok" -eq 0 ]; then ck="FAIL ($fails)"
					elif [ "$nbad" -gt 0 ]; then ck="MISMATCH"
					elif [ -n "$fails" ]; then ck="ok (failed: $fails)"
					else ck="ok"; fi
					speed=$(awk -v b="$base" -v m="$med" 'BEGIN {
						if (b == "-" || m == "-" || m + 0 <= 0) print "-";
						else printf "%.2fx\n", b / m }')
					echo "| $setting | $row | $med | $speed | $ck | $nok/$total |"
				done
			done
		done
	} >"$out/table.md"
}

if [ "${1-}" = "--table" ]; then
	[ $# -eq 2 ] || usage
	write_table "$2" && cat "$2/table.md"
	exit
fi

# ---- running ----------------------------------------------------------------

[ $# -ge 2 ] && [ $# -le 3 ] || usage
gpux=$1 out=$2 reps=${3:-3}
case $reps in '' | *[!0-9]* | 0) usage ;; esac
workloads=${WORKLOADS:-stride_vadd layer_sweep}
settings=${SETTINGS:-fits 1.25 1.5}
rows_file=${ROWS_FILE:-$src/rows.txt}
bin=${BIN_DIR:-$out/bin}
run_timeout=${RUN_TIMEOUT:-150}
budget=${BUDGET_S:-540}
mkdir -p "$out/logs" || exit 1
raw=$out/raw.txt

for wl in $workloads; do
	if [ ! -x "$bin/$wl" ]; then
		echo "building the workloads into $bin" >&2
		"$src/build.sh" "$bin" >&2 || { echo "build failed" >&2; exit 1; }
		break
	fi
done

# Policy rows of rows.txt: "wl name path" per entry.
declare -a policy_wl=() policy_name=() policy_gpx=()
if [ -f "$rows_file" ]; then
	while IFS=$'\t' read -r r_wl r_name r_path _; do
		case $r_wl in '' | '#'*) continue ;; esac
		if [ -z "${r_name-}" ] || [ -z "${r_path-}" ]; then
			echo "rows.txt: ignoring malformed line for '$r_wl'" >&2
			continue
		fi
		case $r_path in
		/*) ;;
		*) if [ -e "$PWD/$r_path" ]; then r_path=$PWD/$r_path
		   else r_path=$root/$r_path; fi ;;
		esac
		policy_wl+=("$r_wl") policy_name+=("$r_name") policy_gpx+=("$r_path")
	done <"$rows_file"
fi

device=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
# the bundle's own record (scripts/gpu_build.sh): the copy of the tree on
# the GPU machine may carry an older .git
commit=$(cat "$(dirname "$gpux")/../commit" 2>/dev/null ||
	 git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
stamp=$(date -u '+%Y%m%dT%H%M%SZ')
printf '# run %s device "%s" commit %s reps %s workloads "%s" settings "%s" STRIDE_ARGS "%s" LAYER_ARGS "%s" GPUX_ARGS "%s"\n' \
	"$stamp" "${device:-unknown}" "$commit" "$reps" "$workloads" "$settings" \
	"${STRIDE_ARGS-}" "${LAYER_ARGS-}" "${GPUX_ARGS-}" >>"$raw"

t_start=$(date +%s)
last_wall=0 nrun=0 skipped=0

# One run: appends its line to raw.txt. Arguments: wl setting row rep gpx
# (gpx empty for the program's own rows).
run_one() {
	local wl=$1 setting=$2 row=$3 rep=$4 gpx=$5
	local -a args cmd gargs
	case $wl in
	stride_vadd) read -r -a args <<<"${STRIDE_ARGS-}" ;;
	layer_sweep) read -r -a args <<<"${LAYER_ARGS-}" ;;
	*) args=() ;;
	esac
	[ "$setting" = fits ] || args+=(--oversub "$setting")
	case $row in
	default) cmd=("$bin/$wl" "${args[@]}") ;;
	oracle) cmd=("$bin/$wl" "${args[@]}" --oracle) ;;
	oracle-evict) cmd=("$bin/$wl" "${args[@]}" --oracle-evict) ;;
	*) read -r -a gargs <<<"${GPUX_ARGS-}"
	   cmd=("$gpux" "${gargs[@]}" "$gpx" -c "$bin/$wl ${args[*]}") ;;
	esac

	local log=$out/logs/$stamp.$wl.$setting.$row.$rep rc t0 t1 time ck
	t0=$(date +%s.%N)
	if [ -n "$gpx" ] && [ ! -f "$gpx" ]; then
		echo "no such policy file: $gpx" >"$log.err"
		: >"$log.out"
		rc=127
	else
		echo "${cmd[*]}" >"$log.cmd"
		timeout -k 10 "$run_timeout" "${cmd[@]}" >"$log.out" 2>"$log.err" </dev/null
		rc=$?
	fi
	t1=$(date +%s.%N)
	time=$(awk '$1 == "time_ms" { v = $2 } END { print (v == "" ? "-" : v) }' "$log.err")
	ck=$(awk '$1 == "checksum" { v = $2 } END { print (v == "" ? "-" : v) }' "$log.out")
	last_wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", b - a + 0.5 }')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$setting" "$row" "$rep" \
		"$rc" "$time" "$ck" "$last_wall" >>"$raw"
	echo "[$nrun $(($(date +%s) - t_start))s] $wl $setting $row rep $rep:" \
		"rc $rc time_ms $time checksum $ck (${last_wall}s)" >&2
}

for wl in $workloads; do
	rows=(default oracle) gpxs=("" "")
	[ "${ORACLE_EVICT-0}" = 1 ] && rows+=(oracle-evict) gpxs+=("")
	for i in "${!policy_wl[@]}"; do
		[ "${policy_wl[$i]}" = "$wl" ] || continue
		rows+=("${policy_name[$i]}") gpxs+=("${policy_gpx[$i]}")
	done
	for setting in $settings; do
		for rep in $(seq 1 "$reps"); do
			for i in "${!rows[@]}"; do
				elapsed=$(($(date +%s) - t_start))
				if [ $((elapsed + last_wall)) -gt "$budget" ]; then
					skipped=$((skipped + 1))
					continue
				fi
				nrun=$((nrun + 1))
				run_one "$wl" "$setting" "${rows[$i]}" "$rep" "${gpxs[$i]}"
			done
		done
	done
done

if [ "$skipped" -gt 0 ]; then
	echo "budget of ${budget}s reached: $skipped runs skipped" >&2
	echo "# run $stamp: budget ${budget}s reached, $skipped runs skipped" >>"$raw"
fi
write_table "$out" && cat "$out/table.md"
echo "done: $nrun runs in $(($(date +%s) - t_start))s; $raw, $out/table.md" >&2
