#!/usr/bin/env bash
# The cost of kernel-level tracing inside one process (issue 39): a
# GPT-2 training loop (gpt2_loop.py) runs while gpux -p attaches the
# issue's program (cuda:launch + cuda:kernel_end + a cuda:memcpy count)
# for W seconds, detaches, waits W seconds, and again, ROUNDS times. Each
# attached window's median step is set against the mean of the detached
# windows on either side of it: the machine's slow periods last seconds,
# so windows seconds apart share them, where separate processes do not
# (kernel_level.sh). The first SETTLE seconds of each window are left
# out (attaching, detaching). Also checks that kernel_end saw every
# launch in each window but those still running at the cut. With
# PERFETTO=1 each attached window is instead
# `gpux -p -f perfetto` with a cuda:launch count (the timeline's cost),
# and its trace is checked (tests/timeline/validate_trace.py) and its
# kernels set against the count.
#   bench/gpu/attach_ab.sh [ROUNDS [W]]   env: GPUX, OUT, SETTLE (default 1),
#     LOOP (the program, given SECONDS; default gpt2_loop.py), PERFETTO,
#     LAUNCH_ONLY
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gpux=${GPUX:-$here/../../build-gpu/gpux/gpux}
rounds=${1:-8}
win=${2:-6}
settle=${SETTLE:-1}
perfetto=${PERFETTO:-0}
validate=$here/../../tests/timeline/validate_trace.py
out=${OUT:-/tmp}/attach_ab
[ "$perfetto" = 1 ] && out=${out}_perfetto
[ "${LAUNCH_ONLY:-0}" = 1 ] && out=${out}_launch
cupti_only=${CUPTI_ONLY:-0}
[ "$cupti_only" = 1 ] && out=${out}_cupti_only
mkdir -p "$out"
# each attached window's median step against the detached windows around it
summarize() {
python3 - "$1" "$2" <<'PY'
import statistics as st, sys
out, settle = sys.argv[1], float(sys.argv[2]) * 1e9
steps = [(int(l.split()[1]), float(l.split()[2])) for l in open(out + "/loop.txt") if l.startswith("step ")]
wins = [l.split() for l in open(out + "/windows.txt")]
def med(a, b):
    v = [ms for t, ms in steps if a + settle <= t <= b]
    return (st.median(v), len(v)) if v else (None, 0)
off = {int(w[1]): med(int(w[2]), int(w[3])) for w in wins if w[0] == "off"}
ratios = []
for w in wins:
    if w[0] != "on":
        continue
    r = int(w[1])
    m, n = med(int(w[2]), int(w[3]))
    around = [off[k][0] for k in (r - 1, r) if off.get(k, (None,))[0]]
    if m is None or not around:
        print(f"round {r}: no steps"); continue
    base = sum(around) / len(around)
    ratios.append(m / base)
    print(f"round {r}: attached {m:.2f} ms ({n} steps), detached around {base:.2f} ms, {m / base:.3f}x")
if ratios:
    print(f"attached/detached: median {st.median(ratios):.3f}x over {len(ratios)} rounds "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f})")
# windows of a few steps: each step of a window against the same step
# of the windows around it (the first after a switch pays the switch)
def in_win(a, b):
    return [ms for t, ms in steps if a <= t <= b]
per = {int(w[1]) if w[0] == "on" else -1 - int(w[1]): in_win(int(w[2]), int(w[3])) for w in wins}
k = max((len(v) for v in per.values()), default=0)
if 0 < k <= 4 and settle == 0:
    for pos in range(k):
        rs = []
        for r in (x for x in per if x > 0):
            on, around = per[r], [per.get(-1 - j) for j in (r - 1, r)]
            around = [v[pos] for v in around if v and len(v) > pos]
            if len(on) > pos and around:
                rs.append(on[pos] / (sum(around) / len(around)))
        if rs:
            print(f"step {pos + 1} of each window: median {st.median(rs):.3f}x over {len(rs)} rounds")
PY
}
mono() { python3 -c 'import time; print(time.monotonic_ns())'; }
if [ "$cupti_only" = 1 ]; then
	so=${CUPTI_SO:-$(dirname "$gpux")/../bench/cupti_only.so}
	case $win in
	*steps) total=36000 settle=0 ;; # the loop stops after its windows
	*) total=$(((2 * rounds + 1) * win + win / 2)) ;;
	esac
	CUPTI_AB="$so $(dirname "$gpux")/libcupti.so $win $rounds" \
		${LOOP:-python3 $here/gpt2_loop.py} "$total" >"$out/loop.txt" 2>"$out/loop.err"
	grep '^win ' "$out/loop.txt" | cut -d' ' -f2- >"$out/windows.txt"
	[ -s "$out/windows.txt" ] || { echo "attach_ab: no windows"; tail "$out/loop.err"; exit 1; }
	summarize "$out" "$settle" | tee "$out/summary.txt"
	sed -n 's/^win on \([0-9]*\) .*kernels=/window \1: kernels recorded /p' "$out/loop.txt" |
		tee -a "$out/summary.txt"
	exit 0
fi
total=$(((2 * rounds + 1) * (win + 2) + 30))
${LOOP:-python3 $here/gpt2_loop.py} "$total" >"$out/loop.txt" 2>"$out/loop.err" &
app=$!
for _ in $(seq 600); do grep -q '^warm' "$out/loop.txt" && break; sleep 0.5; done
grep -q '^warm' "$out/loop.txt" || { echo "attach_ab: the loop did not start"; cat "$out/loop.err"; kill $app; exit 1; }
ALL='cuda:launch { @l = count(); } cuda:kernel_end { @e = count(); } cuda:memcpy { @m = count(); }'
fmt=()
# LAUNCH_ONLY=1: a cuda:launch count alone (the hooks' share of the cost,
# no CUPTI): set against the default, what kernel timing adds
[ "$perfetto" = 1 ] || [ "${LAUNCH_ONLY:-0}" = 1 ] && ALL='cuda:launch { @l = count(); }'
: >"$out/windows.txt"
a=$(mono); sleep "$win"; echo "off 0 $a $(mono)" >>"$out/windows.txt"
for r in $(seq "$rounds"); do
	a=$(mono)
	[ "$perfetto" = 1 ] && fmt=(-f perfetto -o "$out/trace.$r.json")
	timeout -k 5 $((win + 60)) "$gpux" "${fmt[@]}" -p $app -e "$ALL interval:s:$win { exit(); }" \
		>"$out/on.$r.txt" 2>&1
	echo "on $r $a $(mono) rc=$?" >>"$out/windows.txt"
	if [ "$perfetto" = 1 ]; then
		python3 "$validate" "$out/trace.$r.json" >"$out/validate.$r.txt" 2>&1 &&
			sed -n 's/^kernels /@e: /p' "$out/validate.$r.txt" >>"$out/on.$r.txt"
		rm -f "$out/trace.$r.json"
	fi
	a=$(mono); sleep "$win"; echo "off $r $a $(mono)" >>"$out/windows.txt"
done
kill $app 2>/dev/null
wait $app 2>/dev/null
summarize "$out" "$settle" | tee "$out/summary.txt"
ok=0 n=0
for f in "$out"/on.*.txt; do
	n=$((n + 1))
	l=$(sed -n 's/^@l: //p' "$f") e=$(sed -n 's/^@e: //p' "$f")
	# kernels still running at the cut end after it: a step's launches
	[ -n "$l" ] && [ -n "$e" ] && [ "$e" -le "$l" ] && [ $((l - e)) -le 2500 ] && ok=$((ok + 1))
	[ -n "$l" ] && echo "window $n: @l $l, @e ${e:-none} ($((l - ${e:-0})) not seen)" >>"$out/summary.txt"
done
what="kernel_end saw"
[ "$perfetto" = 1 ] && what="a valid trace held"
echo "$what every launch but those running at the cut (at most 2,500) in $ok of $n windows" |
	tee -a "$out/summary.txt"
