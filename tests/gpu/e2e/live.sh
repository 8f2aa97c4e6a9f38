#!/usr/bin/env bash
# A live session on the GPU (issue: the REPL explores warp activity):
# gpux --repl -c live, driven by a script. Attaches gdev:kernel_exit
# @[kernel] = count() between two phases of the program, then
# @a[sm, warp] = count() with :heatmap and the active lanes under a
# predicate that keeps 8 of each warp's, then detaches; checks the counts
# of the launches between attach and detach are exact (every thread of
# each launch, from the program's own count of launches per phase), that
# every warp saw 8 active lanes (mask 0xff), that :top counts every
# launch of the run with its threads and a GPU time, and that the
# program's result is the one without gpux. Then the same kernels
# launched through CUDA graphs (live graph: one captured and updated from
# new captures, one whose kernel node the program sets on the executable
# graph): attached and detached the same way, counted exactly, :top
# counting the graphs' kernels. Both programs' kernels count their
# launches into a __device__ variable by a __constant__ step: the
# instrumented copies must use the program's variables, so the count is
# every launch of the run. Last, short programs with module variables
# (constant, named) and one loaded with JIT options (drvapi), started by
# :run with probes entered before it.
# Usage: live.sh E2E_DIR GPUX OUTDIR
set -u
e2e=$1 gpux=$2 out=$3
mkdir -p "$out"
fail() { echo "live: FAIL: $*"; exit 1; }
"$e2e/live" >"$out/alone.out" 2>&1 &
pid=$!
sleep 2
kill -TERM $pid
wait $pid || fail "live alone exited $?"
cat >"$out/session.txt" <<'SESSION'
:sleep 1s
:pause
gdev:kernel_exit { @[kernel] = count(); }
:kill USR1
:resume
:sleep 1s
:pause
:detach 1
:kill USR1
:resume
@
gdev:kernel_exit /lane < 8/ { @l[activelanes] = count(); @m[activemask] = count(); }
gdev:kernel_exit { @a[sm, warp] = count(); }
:sleep 500ms
:heatmap @a
:probes
:detach 2
:detach 3
:sleep 200ms
@l
@m
:kill TERM
:wait
:top launches
SESSION
timeout 120 "$gpux" --repl -c "exec '$e2e/live' >'$out/app.out'" <"$out/session.txt" \
	>"$out/session.out" 2>"$out/session.err" || fail "gpux exited $?"
cat "$out/session.out" "$out/session.err"
if grep -v '^gpux: the program exited with status 0$' "$out/session.err" | grep -q .; then
	fail "gpux said more than the program's end"
fi
a1=$(sed -n 's/^live: phase 1: add_one \([0-9]*\), scale \([0-9]*\)/\1/p' "$out/app.out")
s1=$(sed -n 's/^live: phase 1: add_one \([0-9]*\), scale \([0-9]*\)/\2/p' "$out/app.out")
[ "${a1:-0}" -gt 0 ] || { cat "$out/app.out"; fail "no launches in phase 1"; }
threads=65536
grep -qxF "@[add_one(float*, int)]: $((a1 * threads))" "$out/session.out" ||
	fail "add_one: want $a1 launches x $threads"
grep -qxF "@[scale(float*, float, int)]: $((s1 * threads))" "$out/session.out" ||
	fail "scale: want $s1 launches x $threads"
grep -q '^scale:' "$out/session.out" || fail "no heatmap"
# /lane < 8/ keeps 8 lanes of every warp, which arrives at the exit
# whole: one key each. It is the site's first probe: one before it
# whose leader works alone (a count's atomics) can leave the warp split
# for the next, as the hardware need not reconverge it.
[ "$(grep -c '^@l\[' "$out/session.out")" = 1 ] && grep -q '^@l\[8\]: [1-9]' "$out/session.out" ||
	fail "activelanes: want only 8"
[ "$(grep -c '^@m\[' "$out/session.out")" = 1 ] && grep -q '^@m\[255\]: [1-9]' "$out/session.out" ||
	fail "activemask: want only 0xff"
# :top after the end: every launch of every phase, 65536 threads each
sum() { sed -n "s/^live: phase [0-9]*: add_one \([0-9]*\), scale \([0-9]*\)/\\$1/p" "$out/app.out" |
	awk '{ n += $1 } END { print n + 0 }'; }
at=$(sum 1) st=$(sum 2)
top=$(sed -n '/^ *LAUNCHES  *THREADS  *GPU TIME  *AVG  *KERNEL$/,$p' "$out/session.out" |
	awk 'NR > 1 { print $1, $2, ($3 != "-") }')
[ "$top" = "$at $((at * threads)) 1
$st $((st * threads)) 1" ] || fail ":top: want $at and $st launches, timed"
# The same computation whatever the phases' lengths: x[0] converges.
[ "$(grep '^live: x\[0\]' "$out/app.out")" = "$(grep '^live: x\[0\]' "$out/alone.out")" ] ||
	fail "the result differs from the run without gpux"
grep -qxF "live: runs $((at + st))" "$out/app.out" ||
	fail "the module variables: want runs $((at + st)), every launch"
echo "live: direct launches PASS (phase 1: add_one $a1, scale $s1 launches, counted exactly)"

"$e2e/live" graph >"$out/graph_alone.out" 2>&1 &
pid=$!
sleep 2
kill -TERM $pid
wait $pid || fail "live graph alone exited $?"
cat >"$out/graph_session.txt" <<'SESSION'
:sleep 1s
:pause
gdev:kernel_exit { @[kernel] = count(); }
:kill USR1
:resume
:sleep 1s
:pause
:detach 1
:kill USR1
:resume
@
:sleep 300ms
:kill TERM
:wait
:top launches
SESSION
timeout 120 "$gpux" --repl -c "exec '$e2e/live' graph >'$out/graph_app.out'" \
	<"$out/graph_session.txt" >"$out/graph_session.out" 2>"$out/graph_session.err" ||
	fail "gpux (graphs) exited $?"
cat "$out/graph_session.out" "$out/graph_session.err"
ga1=$(sed -n 's/^live: phase 1: add_one \([0-9]*\), scale \([0-9]*\)/\1/p' "$out/graph_app.out")
gs1=$(sed -n 's/^live: phase 1: add_one \([0-9]*\), scale \([0-9]*\)/\2/p' "$out/graph_app.out")
[ "${ga1:-0}" -gt 64 ] || { cat "$out/graph_app.out"; fail "graphs: too few launches in phase 1"; }
grep -qxF "@[add_one(float*, int)]: $((ga1 * threads))" "$out/graph_session.out" ||
	fail "graphs: add_one: want $ga1 launches x $threads"
grep -qxF "@[scale(float*, float, int)]: $((gs1 * threads))" "$out/graph_session.out" ||
	fail "graphs: scale: want $gs1 launches x $threads"
gsum() { sed -n "s/^live: phase [0-9]*: add_one \([0-9]*\), scale \([0-9]*\)/\\$1/p" \
	"$out/graph_app.out" | awk '{ n += $1 } END { print n + 0 }'; }
gat=$(gsum 1) gst=$(gsum 2)
top=$(sed -n '/^ *LAUNCHES  *THREADS  *GPU TIME  *AVG  *KERNEL$/,$p' "$out/graph_session.out" |
	awk 'NR > 1 { print $1, $2 }')
[ "$top" = "$gat $((gat * threads))
$gst $((gst * threads))" ] || fail "graphs: :top: want $gat and $gst launches"
[ "$(grep '^live: x\[0\]' "$out/graph_app.out")" = "$(grep '^live: x\[0\]' "$out/graph_alone.out")" ] ||
	fail "graphs: the result differs from the run without gpux"
grep -qxF "live: runs $((gat + gst))" "$out/graph_app.out" ||
	fail "graphs: the module variables: want runs $((gat + gst)), every launch"
if grep -v '^gpux: the program exited with status 0$' "$out/graph_session.err" | grep -q .; then
	fail "graphs: gpux said more than the program's end"
fi

# Short programs with module variables, probes entered before :run: every
# launch runs them, counts and output as with gpux -e (expected/*.txt)
# and as without gpux. constant writes __constant__ coefficients and
# reads a __device__ array back; named reads its own gpux_table.
expected=$(dirname "$0")/expected
# drvapi loads its module with JIT options that shape code (FTZ, a
# register cap), which the session's copy gets too.
export DRVAPI_JIT_FTZ=1
for prog in constant named drvapi; do
	"$e2e/$prog" >"$out/${prog}_alone.out" 2>&1 || fail "$prog alone exited $?"
	cat >"$out/${prog}_session.txt" <<SESSION
gdev:kernel_exit { @[kernel] = count(); }
gdev:access { @a[kernel] = count(); }
:run exec '$e2e/$prog' >'$out/${prog}_app.out'
:wait
@
@a
SESSION
	timeout 60 "$gpux" --repl <"$out/${prog}_session.txt" >"$out/${prog}_session.out" \
		2>"$out/${prog}_session.err" || fail "gpux ($prog) exited $?"
	cat "$out/${prog}_session.out" "$out/${prog}_session.err"
	cmp -s "$out/${prog}_app.out" "$out/${prog}_alone.out" ||
		fail "$prog: the output differs from the run without gpux"
	# the map lines (not the checked entries' types, "@[string] :: count")
	[ "$(grep -E '^@\[.*: [0-9]+$' "$out/${prog}_session.out")" = \
	  "$(grep '^@' "$expected/${prog}_exit.txt")" ] ||
		fail "$prog: kernel_exit counts differ from expected/${prog}_exit.txt"
	if [ -f "$expected/${prog}_access.txt" ]; then
		[ "$(grep -E '^@a\[.*: [0-9]+$' "$out/${prog}_session.out" | sed 's/^@a/@/')" = \
		  "$(grep '^@' "$expected/${prog}_access.txt")" ] ||
			fail "$prog: access counts differ from expected/${prog}_access.txt"
	fi
	[ "$(cat "$out/${prog}_session.err")" = 'gpux: the program exited with status 0' ] ||
		fail "$prog: gpux said more than the program's end"
done
unset DRVAPI_JIT_FTZ
echo "live: PASS (direct: phase 1 add_one $a1, scale $s1; graphs: phase 1 add_one $ga1, scale $gs1; counted exactly; constant, named and drvapi from :run)"
