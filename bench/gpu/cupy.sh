#!/usr/bin/env bash
# CuPy's own library kernels under gpux (bench/gpu/README.md, "CuPy library
# kernels"): bench/gpu/cupy_bench.py alone (base), then under each tool of
# bench/gpu/tools/ (gpu_ext's Table 2), a fresh process and a fresh CuPy
# kernel cache each, with CUPY_COMPILE_WITH_PTX=1 (CuPy hands the driver
# PTX, which gpux instruments). Prints a markdown table: the workload's
# median, p10 and p90 per iteration, the ratio to base, the program's check
# (numpy, and its results' digest the same as base's), the check of the
# tool's maps, and the wall time of the whole process.
#
#   bench/gpu/cupy.sh [ITERS [SIZE]]   passed to cupy_bench.py (defaults
#                                      2000 iterations of 4194304 elements)
#   bench/gpu/cupy.sh -n               gpux --dry-run of every mode, and stop
#   env: GPUX     gpux binary (default build-gpu/gpux/gpux of the repository)
#        MODES    default "base blockfinish threadhist launchlate launches":
#                 base, a tool's name ($TOOLS/NAME.gpx), or launches (the
#                 one-liner below: how many launches one iteration makes)
#        TOOLS    the folder of the tools (default bench/gpu/tools)
#        PYTHON   python3 with cupy and numpy (default python3)
#        BENCH_MAX_S    seconds of timed loop per run at most (default 8)
#        BENCH_TIMEOUT  seconds per process (default 300: CuPy compiles
#                 every kernel with an empty cache, and the driver JITs
#                 every patched module, before the timed loop)
#        OUT      logs and cupy-results.md go to $OUT/bench/ (else
#                 build-gpu/bench/logs/)
# Exit status: 0 when every run ran and checked, 1 otherwise.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bench=$here/cupy_bench.py
py=${PYTHON:-python3}
gpux=${GPUX:-$root/build-gpu/gpux/gpux}
# Absolute; a bare name is looked up in PATH.
if [[ $gpux == */* ]] && [ -e "$gpux" ]; then
	gpux=$(cd "$(dirname "$gpux")" && pwd)/$(basename "$gpux")
fi
tools=${TOOLS:-$here/tools}
read -r -a modes <<<"${MODES:-base blockfinish threadhist launchlate launches}"
LAUNCHES='cuda:launch { @launches = count(); }'

# mode -> gpux's program arguments, in $prog
prog_of() {
	if [ "$1" = launches ]; then
		prog=(-e "$LAUNCHES")
	else
		prog=("$tools/$1.gpx")
	fi
}
for m in "${modes[@]}"; do
	if [ "$m" != base ] && [ "$m" != launches ] && [ ! -f "$tools/$m.gpx" ]; then
		echo "cupy: unknown mode $m (no $tools/$m.gpx)" >&2
		exit 2
	fi
done
[ -f "$gpux" ] && [ ! -x "$gpux" ] && chmod +x "$gpux" # a carried folder may lose it
if [ "${modes[*]}" != base ] && [ ! -x "$gpux" ] && ! command -v "$gpux" >/dev/null; then
	echo "cupy: gpux not found at $gpux (set GPUX=..., or MODES=base)" >&2
	exit 2
fi

if [ "${1:-}" = -n ]; then
	bad=0
	for m in "${modes[@]}"; do
		[ "$m" = base ] && continue
		prog_of "$m"
		if "$gpux" --dry-run "${prog[@]}"; then echo "ok $m"; else echo "FAILED $m"; bad=1; fi
	done
	exit $bad
fi

export BENCH_MAX_S=${BENCH_MAX_S:-8}
tmo=${BENCH_TIMEOUT:-300}
logdir=${OUT:+$OUT/bench}
logdir=${logdir:-$root/build-gpu/bench/logs}
mkdir -p "$logdir"
logdir=$(cd "$logdir" && pwd)
res=$logdir/cupy-results.md
args=("$@")
cmd=$(printf '%q ' "$py" "$bench" "${args[@]}")

: >"$res"
say() { echo "$@" | tee -a "$res"; }
say "gpux on CuPy's library kernels, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n1 || true)"
if [ "${modes[*]}" != base ]; then say "$("$gpux" -V 2>&1 | head -n1 || true)"; fi
say "\`${cmd% }\`, CUPY_COMPILE_WITH_PTX=1, BENCH_MAX_S=$BENCH_MAX_S"
say ""
say "| mode | iters | median µs | p10 µs | p90 µs | ratio | check | probe check | wall s |"
say "|---|---|---|---|---|---|---|---|---|"

# hist_check MAP RUNS UNIT: the buckets of @MAP[kernel] hists: how many
# kernels, the samples per iteration (all of them, warmup included, must
# divide by RUNS), and any below 0 (clocks out of step)
hist_check() {
	awk -v m="@$1" -v runs="$2" -v unit="$3" '
		/^@/ { cur = index($0, m "[") == 1; k += cur; next }
		cur && /^[[(].*[|].*[|]$/ {
			# the count ends where the bar starts; a 16-character
			# range and a long count meet with no space between
			# ("[16384T, 32768T)1215152192 |"), as in bpftrace
			c = substr($0, 1, index($0, " |") - 1); sub(/.*[^0-9]/, "", c)
			s += c
			# below 0, or a negative difference read as unsigned
			# (from 1024T: no run lasts that long)
			if ($0 ~ /^\(\.\.\., 0\)/ || $0 ~ /^\[[0-9][0-9][0-9][0-9]+T/) neg += c
		}
		END {
			if (!k || !s) { printf "no %s lines", m; exit }
			printf "%s: %d kernels, %.2f %s/iter", (s % runs || neg) ? "CHECK" : "ok", k, s / runs, unit
			if (s % runs) printf ", %.0f samples: not a multiple of %d runs", s, runs
			if (neg) printf ", %.0f below 0", neg
		}' "$4"
}

# thread_check RUNS FILE: @threads[threadIdx.x] counts: every index from 0
# up, never more exits at an index than at the one before (a launch of B
# threads per block counts once at each of 0..B-1), a multiple of RUNS
thread_check() {
	awk -v runs="$1" '
		/^@threads\[/ {
			k = $0; sub(/^@threads\[/, "", k); sub(/\].*/, "", k)
			c[k + 0] = $NF; if (k + 0 > mx) mx = k + 0; n++
		}
		END {
			if (!n) { printf "no @threads lines"; exit }
			for (i = 0; i <= mx; i++) {
				if (!(i in c)) { printf "CHECK: no @threads[%d]", i; exit }
				if (i && c[i] > c[i - 1]) { printf "CHECK: @threads[%d] > @threads[%d]", i, i - 1; exit }
				s += c[i]
			}
			if (s % runs) { printf "CHECK: %.0f exits, not a multiple of %d runs", s, runs; exit }
			printf "ok: threadIdx.x 0..%d, %.0f exits/iter", mx, s / runs
		}' "$2"
}

t_all=$(date +%s)
base='' base_out='' failed=0
for m in "${modes[@]}"; do
	L=$logdir/cupy-$m
	rm -rf "$L.cupy" "$L.maps"
	rc=0
	t0=$(date +%s%N)
	if [ "$m" = base ]; then
		CUPY_COMPILE_WITH_PTX=1 CUPY_CACHE_DIR=$L.cupy timeout -k 5 "$tmo" \
			"$py" "$bench" "${args[@]}" >"$L.stdout" 2>"$L.stderr" || rc=$?
	else
		prog_of "$m"
		CUPY_COMPILE_WITH_PTX=1 CUPY_CACHE_DIR=$L.cupy timeout -k 5 "$tmo" \
			"$gpux" -o "$L.maps" -c "$cmd" "${prog[@]}" >"$L.stdout" 2>"$L.stderr" || rc=$?
	fi
	wall=$(awk -v d=$(( $(date +%s%N) - t0 )) 'BEGIN { printf "%.1f", d / 1e9 }')
	rm -rf "$L.cupy"
	line=$(grep -m1 'median_us=' "$L.stdout" || true)
	if [ "$rc" -ne 0 ] || [ -z "$line" ] || ! grep -q '^check: ok' "$L.stdout"; then
		why="exit $rc"
		[ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && why="timed out after ${tmo}s"
		[ "$rc" -eq 3 ] && why=$(head -c 150 "$L.stderr" | tr '\n|' '  ')
		grep -q '^check: FAIL' "$L.stdout" && why="$why, wrong result: $(sed -n 's/^check: FAIL //p' "$L.stdout")"
		say "| $m | | FAILED ($why) | | | | | | $wall |"
		failed=1
		continue
	fi
	get() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$line"; }
	med=$(get median_us) p10=$(get p10_us) p90=$(get p90_us) ran=$(get iters) warm=$(get warmup)
	runs=$((warm + ran))
	if [ "$m" = base ]; then base=$med base_out=$L.stdout; fi
	ratio=-
	[ -n "$base" ] && ratio=$(awk -v a="$med" -v b="$base" 'BEGIN { printf "%.2fx", a / b }')
	# the same results as base, bit for bit
	chk=ok
	if [ -n "$base_out" ] && [ "$(grep '^digest=' "$L.stdout")" != "$(grep '^digest=' "$base_out")" ]; then
		chk="ok, but differs from base: $(awk 'NR == FNR { for (i = 2; i <= NF; i++) b[$i] = 1; next }
			{ for (i = 2; i <= NF; i++) if (!($i in b)) { sub(/=.*/, "", $i); printf "%s ", $i } }' \
			<(grep '^digests:' "$base_out") <(grep '^digests:' "$L.stdout"))"
		failed=1
	fi
	pc=-
	if [ "$m" != base ]; then
		if [ ! -s "$L.maps" ]; then
			pc="no output"
		else
			case $m in
			blockfinish) pc=$(hist_check finish_us "$runs" exits "$L.maps") ;;
			launchlate) pc=$(hist_check launch_ns "$runs" launches "$L.maps") ;;
			threadhist) pc=$(thread_check "$runs" "$L.maps") ;;
			launches) pc=$(awk -v runs="$runs" '/^@launches: / { printf "ok: %.2f launches/iter", $2 / runs; f = 1 }
				END { if (!f) printf "no @launches line" }' "$L.maps") ;;
			esac
		fi
	fi
	note=$ran asked=$(get asked)
	[ "$ran" != "$asked" ] && note="$ran of $asked (BENCH_MAX_S)"
	case $pc in ok* | -) ;; *) failed=1 ;; esac
	say "| $m | $note | $med | $p10 | $p90 | $ratio | $chk | $pc | $wall |"
done
say ""
ver=$(grep -m1 '^cupy ' "$logdir/cupy-${modes[0]}.stdout" 2>/dev/null || true)
[ -z "$ver" ] || say "$ver"
say "total $(( $(date +%s) - t_all )) s; logs in $logdir (cupy-MODE.stdout, .stderr, .maps)"
exit $failed
