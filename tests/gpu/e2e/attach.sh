#!/usr/bin/env bash
# gpux -p on a CUDA program it did not start (issue: whole jobs):
# attach_loop runs a kernel loop for 30 s of its own time. Twice (attach,
# detach, attach again): the program is paused at a known launch count,
# gpux attaches with a cuda:launch and a gdev:kernel_exit count, the
# program runs 5 s and pauses again, gpux detaches (Ctrl-C) and the
# program resumes. Checks that the counts are the launches between the
# two pauses (every thread of each for the exits), that gpux said
# nothing else, and that the program's output and status are those of a
# run alone; prints its speed before, while and after gpux was attached.
# Usage: attach.sh E2E_DIR GPUX OUTDIR
set -u
e2e=$1 gpux=$2 out=$3
mkdir -p "$out"
app=
fail() { echo "attach: FAIL: $*"; [ -n "$app" ] && kill -9 $app 2>/dev/null; exit 1; }
wait_lines() { # wait_lines N ERE FILE: until FILE has N lines matching, up to 60 s
	for _ in $(seq 3000); do
		[ "$(grep -cE "$2" "$3" 2>/dev/null)" -ge "$1" ] && return 0
		sleep 0.02
	done
	return 1
}
paused() { grep '^attach_loop: paused at' "$out/app.err" | sed -n "$1s/[^0-9]*\([0-9]*\).*/\1/p"; }
"$e2e/attach_loop" 3 >"$out/alone.out" 2>"$out/alone.err"
alone=$?
"$e2e/attach_loop" 30 >"$out/app.out" 2>"$out/app.err" &
app=$!
wait_lines 1 '^attach_loop: second 3:' "$out/app.err" || fail "the program did not run"
threads=1048576
for k in 1 2; do
	kill -USR1 $app
	wait_lines $((2 * k - 1)) '^attach_loop: paused at' "$out/app.err" || fail "no pause"
	a=$(paused $((2 * k - 1)))
	timeout 120 "$gpux" -p $app -e 'cuda:launch { @l = count(); } gdev:kernel_exit { @e = count(); }' \
		>"$out/g$k.out" 2>"$out/g$k.err" &
	gp=$!
	wait_lines 1 '^Attaching 2 probes' "$out/g$k.out" || fail "gpux did not attach"
	kill -USR2 $app
	sleep 5
	kill -USR1 $app
	wait_lines $((2 * k)) '^attach_loop: paused at' "$out/app.err" || fail "no second pause"
	b=$(paused $((2 * k)))
	kill -INT $gp
	wait $gp || fail "gpux $k exited $?: $(cat "$out/g$k.err")"
	kill -USR2 $app
	cat "$out/g$k.out" "$out/g$k.err"
	[ ! -s "$out/g$k.err" ] || fail "gpux $k said something"
	grep -qxF "@l: $((b - a))" "$out/g$k.out" || fail "attach $k: want @l $((b - a)) launches"
	grep -qxF "@e: $(((b - a) * threads))" "$out/g$k.out" ||
		fail "attach $k: want @e $(((b - a) * threads)) exits"
	echo "attach $k: launches $a..$b counted exactly: $((b - a)) launches, $(((b - a) * threads)) exits"
done
wait $app
rc=$?
[ "$rc" = "$alone" ] || fail "the program exited $rc, alone $alone"
cmp -s "$out/app.out" "$out/alone.out" || fail "the output differs from the run alone"
# launches per second: before the first attach, while attached, after the last detach
awk 'BEGIN { phase = 0 } function r(p) { return s[p] ? sprintf("%.0f", n[p] / s[p]) : "-" }
	/paused at/ { phase++ } /^attach_loop: second/ { n[phase] += $4; s[phase]++ }
	END { print "attach: launches per second: before " r(0) ", attached " r(1) " and " r(3) \
		", between " r(2) ", after " r(4) }' "$out/app.err"
echo "attach: PASS ($(tail -n 1 "$out/app.err"); output and status as alone)"
