#!/usr/bin/env bash
# Fault injection. A device fault, exit() from a second thread and a
# fork() keep the program's status and output. A program that crashes
# (SIGSEGV, SIGABRT) right after
# 10 synchronised launches of 1024 x 1024 threads: gpux exits with its
# status, its output is its own, and the maps hold every exit and launch.
# Then gpux dies (SIGKILL) while it traces a program that
# launches a kernel in a loop under a printf probe (a record per block).
# The program must run to its end with its own output, and from the
# moment the runtime sees its controller gone it must run at its own
# speed: the launches after the kill (past a grace of 4000) take at most
# 1.2x the time the same launches take alone.
#   tests/gpu/e2e/faults.sh     env: E2E_DIR (built e2e folder), GPUX,
#                               KILL_LAUNCHES (default 300000), OUT
# Prints PASS/FAIL lines and "N passed, N failed"; exit 1 on a failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${E2E_DIR:-$here}
[ -x "$dir/loop" ] || dir=$here/../../../build-gpu/e2e
gpux=${GPUX:-$dir/../gpux/gpux}
gpux=$(cd "$(dirname "$gpux")" && pwd)/$(basename "$gpux")
n=${KILL_LAUNCHES:-300000}
logs=${OUT:+$OUT/e2e}
logs=${logs:-$dir/logs}
mkdir -p "$logs"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
pass=0 failed=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

# mean ns per launch of the windows of TIMES from launch FROM on
rate() { awk -v from="$2" '$1 > from { if (!k0) { k0 = $1; t0 = $2 } k1 = $1; t1 = $2 }
	END { if (k1 > k0) printf "%.1f", (t1 - t0) / (k1 - k0); else print 0 }' "$1"; }

cd "$dir" || exit 2
CRASH='gdev:kernel_exit { @exits = count(); } cuda:launch { @launches = count(); }'
for how in segv abort; do
	./crash "$how" >"$t/crash.out" 2>/dev/null
	want=$?
	"$gpux" -o "$t/crash.maps" -e "$CRASH" -c "./crash $how" >"$t/crash.gpux.out" 2>"$t/crash.err"
	rc=$?
	cp "$t/crash.maps" "$logs/crash-$how.maps" 2>/dev/null
	if [ "$rc" != "$want" ] || [ "$want" -lt 128 ]; then
		bad "crash $how" "gpux exited $rc, the program alone $want"
	elif ! cmp -s "$t/crash.out" "$t/crash.gpux.out"; then
		bad "crash $how" "the program's output differs under gpux"
	elif ! grep -qx '@exits: 10485760' "$t/crash.maps" || ! grep -qx '@launches: 10' "$t/crash.maps"; then
		bad "crash $how" "maps: $(grep '^@' "$t/crash.maps" | tr '\n' ' ')"
	else
		ok "crash $how: exit $rc, 10485760 exits and 10 launches counted"
	fi
done

# a device fault, exit() from a second thread, fork(): the same status
# and output as alone, and the maps printed
for how in devfault thread_exit fork; do
	./edge "$how" >"$t/edge.out" 2>/dev/null
	want=$?
	"$gpux" -o "$t/edge.maps" -e 'gdev:kernel_exit { @exits = count(); }' -c "./edge $how" \
		>"$t/edge.gpux.out" 2>"$t/edge.err"
	rc=$?
	cp "$t/edge.maps" "$logs/edge-$how.maps" 2>/dev/null
	cp "$t/edge.err" "$logs/edge-$how.stderr" 2>/dev/null
	if [ "$rc" != "$want" ]; then
		bad "edge $how" "gpux exited $rc, the program alone $want: $(head -c 300 "$t/edge.err" | tr '\n' ' ')"
	elif ! cmp -s "$t/edge.out" "$t/edge.gpux.out"; then
		bad "edge $how" "output differs: $(diff "$t/edge.out" "$t/edge.gpux.out" | head -c 300 | tr '\n' ' ')"
	elif ! grep -q '^@exits: [1-9]' "$t/edge.maps"; then
		bad "edge $how" "no exits counted: $(head -c 200 "$t/edge.maps" | tr '\n' ' ')"
	else
		ok "edge $how: exit $rc, output unchanged, $(grep '^@exits' "$t/edge.maps")"
	fi
done

LOOP_TIMES=$t/alone.times ./loop "$n" >"$t/alone.out" 2>&1 || { bad killed "the program fails alone"; exit 1; }
PRINTF='gdev:kernel_exit /threadIdx.x == 0/ { printf("%d\n", blockIdx.x); }'
"$gpux" -e "$PRINTF" -c "LOOP_TIMES=$t/gpux.times exec ./loop $n >$t/gpux.out 2>&1" \
	>"$t/gpux.stdout" 2>"$t/gpux.stderr" &
g=$!
# kill gpux once a quarter of the launches are done, or after 8 s (a
# record per block crawls while gpux lives: the ring, the controller)
for _ in $(seq 1 80); do
	done_k=$(tail -n1 "$t/gpux.times" 2>/dev/null | cut -d' ' -f1)
	[ "${done_k:-0}" -ge $((n / 4)) ] && break
	sleep 0.1
done
app=$(pgrep -P "$g" -x loop || pgrep -n -x loop)
kill -9 "$g"
wait "$g" 2>/dev/null
killed_at=$(tail -n1 "$t/gpux.times" 2>/dev/null | cut -d' ' -f1)
killed_at=${killed_at:-0}
for _ in $(seq 1 1200); do
	kill -0 "$app" 2>/dev/null || break
	sleep 0.1
done
cp "$t"/*.times "$t/gpux.stderr" "$logs/" 2>/dev/null
if kill -0 "$app" 2>/dev/null; then
	kill -9 "$app"
	bad killed "the program was still running 120 s after gpux died"
else
	ok "killed: the program ended after gpux died (killed after $killed_at of $n launches)"
fi
if cmp -s "$t/alone.out" "$t/gpux.out"; then ok "killed: output unchanged"
else bad killed "output differs: $(diff "$t/alone.out" "$t/gpux.out" | head -c 300 | tr '\n' ' ')"; fi
from=$((killed_at + 4000))
ra=$(rate "$t/alone.times" "$from") rg=$(rate "$t/gpux.times" "$from")
probed=$(awk -v to="$killed_at" '$1 <= to { k = $1; ns = $2 } END { if (k) printf "%.1f", ns / k }' "$t/gpux.times")
echo "ns per launch: alone $ra, traced before the kill $probed, after it $rg"
if awk -v a="$ra" -v g="$rg" 'BEGIN { exit !(a > 0 && g > 0 && g <= 1.2 * a) }'; then
	ok "killed: launches after the kill at the program's own speed"
else
	bad killed "after the kill $rg ns per launch, alone $ra (want at most 1.2x)"
fi
echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
