#!/usr/bin/env bash
# gpux -f perfetto against the fake libcuda (tests/rt/fake_cuda.c): the
# timeline of drv_app's kernels on several streams, copies, syncs and
# allocations, checked by validate_trace.py (the trace-event format,
# then what the file holds) against what the fake's log and the maps of
# the same run say; files left valid when the program or gpux is cut
# short; the user's printf lines and maps on it. Usage: timeline_test.sh
# CASE (ctest's way), or no argument for all. Paths from the
# environment (CMakeLists.txt): RT_LIB RT_FAKE_DIR RT_DRV_APP RT_GPUX
# RT_CUDA_DIR RT_SANITIZED.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

PTX=$RT_CUDA_DIR/kern.ptx
if [ ! -e "$PTX" ]; then
	echo "SKIP: no nvcc output in $RT_CUDA_DIR"
	exit 77
fi
if [ "${RT_SANITIZED:-OFF}" = ON ]; then
	echo "SKIP: sanitizer build (gpux preloads the runtime before the ASan runtime)"
	exit 77
fi
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
export LD_LIBRARY_PATH=$RT_FAKE_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export FAKE_CUDA_LOG=$tmp/log GPUX_RT=$RT_LIB GPUX_CACHE_DIR=$tmp/gpux-cache
export GPUX_SANITIZER_LIB=$tmp/no-sanitizer/libsanitizer-public.so
# no CUPTI (the toolkit's cannot work with the fake driver): kernels are
# timed with CUDA events
export GPUX_CUPTI_LIB=$tmp/no-cupti/libcupti.so
unset GPUX_SESSION FAKE_CUDA_EVENT_LATE FAKE_CUDA_DEVICES

fail() { echo "FAIL: $*"; echo "$*" >>"$tmp/failed"; return 1; }

# trace WANT_RC ARGS...: gpux -f perfetto -o $tmp/t.json ARGS, its
# stdout in $tmp/out, stderr in $tmp/err.
trace() {
	local want=$1; shift
	rm -f "$tmp/log"
	timeout 60 "$RT_GPUX" -f perfetto -o "$tmp/t.json" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$?
	[ "$rc" = "$want" ] || { cat "$tmp/out" "$tmp/err"; fail "gpux $* exited $rc, expected $want"; }
}
# valid [FILE]: the format holds; what it holds in $tmp/sum.
valid() {
	python3 "$here/validate_trace.py" "${1:-$tmp/t.json}" >"$tmp/sum" ||
		fail "${1:-$tmp/t.json} is not a valid trace"
}
# has LINE: the summary holds it; count KEY: the summary's number for KEY.
has() { grep -qxF -- "$1" "$tmp/sum" || { cat "$tmp/sum"; fail "the trace lacks '$1'"; }; }
count() { sed -n "s/^$1 \([0-9]*\)\$/\1/p" "$tmp/sum"; }
app() { echo "'$RT_DRV_APP' $1 '$PTX' ${2:-} >'$tmp/app.out'"; }

# drv_app streams: 8 launches on two streams and the per-thread default
# one, a copy, two stream synchronizes, an allocation and its free, a
# module load. Every launch is a kernel slice on its stream's track,
# named as cuda:launch's map names it, and an instant on the launching
# thread's track.
t_streams() {
	trace 0 -e 'cuda:launch { @l = count(); @k[kernel] = count(); }' -c "$(app streams)" &&
	valid || return
	cmp -s "$tmp/app.out" "$here/../rt/expected/streams.out" || fail "the program's output changed"
	grep -v '^gpux: timeline: 8 kernels, [0-9]* events in ' "$tmp/err" && fail "stderr: more than the summary"
	local launched
	launched=$(grep -c '^cuLaunch' "$tmp/log")
	[ "$launched" = 8 ] && [ "$(count kernels)" = 8 ] && [ "$(count 'cat kernel')" = 8 ] &&
	[ "$(count 'cat launch')" = 8 ] && grep -qx '@l: 8' "$tmp/out" ||
		{ cat "$tmp/sum" "$tmp/out"; fail "kernels in the trace, launches ($launched)"; return; }
	has 'cat memcpy 1' && has 'cat sync 2' && has 'cat malloc 1' && has 'cat free 1' &&
	has 'cat module 1' && has 'kernel add_one' && has 'kernel scale(float*, float, int)' &&
	has 'process GPU 0 (Fake GPU)' || return # the device's name, as the runtime wrote it
	# the kernels' names are the map's
	grep -qxF '@k[add_one]: 5' "$tmp/out" && grep -qxF '@k[scale(float*, float, int)]: 3' "$tmp/out" ||
		fail "the map's kernels"
	local streams
	streams=$(grep -cE '^thread (stream 0x[0-9a-f]+|default stream) \(pid [0-9]+\)$' "$tmp/sum")
	[ "$streams" = 3 ] || { cat "$tmp/sum"; fail "three stream tracks, not $streams"; }
	grep -qE '^process rt_drv_app \(pid [0-9]+\)$' "$tmp/sum" &&
	grep -qE '^thread rt_drv_app \(tid [0-9]+\)$' "$tmp/sum" || fail "the host process's tracks"
}
# -f chrome is the same format; no program: the timeline's own probes
# alone, nothing on stdout, what the file holds said on stderr.
t_no_program() {
	trace 0 -c "$(app streams)" && valid || return
	[ ! -s "$tmp/out" ] || { cat "$tmp/out"; fail "stdout not empty"; }
	[ "$(count kernels)" = 8 ] || fail "8 kernels"
	grep -qE '^gpux: timeline: 8 kernels, [0-9]+ events in .*/t.json ' "$tmp/err" ||
		{ cat "$tmp/err"; fail "the summary on stderr"; }
	cp "$tmp/sum" "$tmp/sum.perfetto"
	rm -f "$tmp/log"
	timeout 60 "$RT_GPUX" -q -f chrome -o "$tmp/t.json" -c "$(app streams)" >"$tmp/out" 2>"$tmp/err" ||
		fail "-f chrome exited $?"
	local n='s/0x[0-9a-f]*/0xN/g; s/[0-9][0-9]*/N/g'
	valid && sed "$n" "$tmp/sum" >"$tmp/a" && sed "$n" "$tmp/sum.perfetto" >"$tmp/b" &&
	cmp -s "$tmp/a" "$tmp/b" || { diff "$tmp/a" "$tmp/b"; fail "-f chrome differs"; }
	! grep -q '^gpux: timeline' "$tmp/err" || fail "-q still says what the file holds"
}
# A kernel name past cuda: strings' 63 bytes is whole in the trace, as
# the map keyed by kernel prints it.
t_names() {
	local long=add_one_$(printf 'x%.0s' $(seq 80))
	sed "s/\badd_one\b/$long/g" "$PTX" >"$tmp/named.ptx"
	DRV_APP_ADD_ONE=$long trace 0 -e 'cuda:launch { @c[kernel] = count(); }' \
		-c "'$RT_DRV_APP' streams '$tmp/named.ptx' >'$tmp/app.out'" && valid || return
	has "kernel $long" && grep -qxF "@c[$long]: 5" "$tmp/out" || fail "the whole name"
}
# Graph replays are instants on the launching thread's track, with the
# graph's node counts (their kernels are timed where CUPTI is, not
# under the fake driver).
t_graphs() {
	trace 0 -c "$(app graphs)" && valid || return
	has 'cat graph 5' && has 'cat launch 1'
	grep -q '"name":"graph launch",.*"nodes":1,"kernels":1}' "$tmp/t.json" ||
		fail "a replay's node counts"
}
# The user's printf lines are instants with their text, escaped; count()
# and sum() maps are counters whose last sample is the printed value.
t_program() {
	trace 0 -e 'BEGIN { printf("begin \"q\" \\ \x01 \xff\n"); }
		cuda:launch { @l = count(); @k[kernel] = count(); printf("launch %s\n", kernel); }
		cuda:kernel_end { @d = sum(duration); }' -c "$(app streams)" && valid || return
	has 'printf begin "q" \ '$'\x01'' �' && has 'counter @l value 8' &&
	has 'counter @k add_one 5' && has 'counter @k scale(float*, float, int) 3' &&
	[ "$(grep -c '^printf launch ' "$tmp/sum")" = 8 ] || return
	local d
	d=$(sed -n 's/^@d: //p' "$tmp/out")
	has "counter @d value $d"
}
# gpux's SIGINT, the program killed, gpux itself killed: the file is a
# whole document in each case, holding the kernels that ran by then.
# live_start: gpux (pid gp) on drv_app (pid app_pid) launching until
# SIGTERM, once a kernel is on the timeline.
live_start() {
	rm -f "$tmp/log" "$tmp/t.json"
	"$RT_GPUX" -f perfetto -o "$tmp/t.json" -e 'cuda:launch { @l = count(); }' \
		-c "'$RT_DRV_APP' live '$PTX'" >"$tmp/out" 2>"$tmp/err" </dev/null &
	gp=$!
	for _ in $(seq 1000); do
		app_pid=$(pgrep -P $gp)
		[ -n "$app_pid" ] && grep -q '"cat":"kernel"' "$tmp/t.json" 2>/dev/null && return 0
		sleep 0.02
	done
	kill -9 $gp
	fail "no kernel on the timeline"
}
t_interrupted() {
	local gp app_pid
	live_start || return
	kill -INT $gp
	wait $gp || fail "gpux exited $? after SIGINT"
	valid && [ "$(count kernels)" -ge 1 ] || return
	grep -q '^@l: [1-9]' "$tmp/out" && grep -q '^drv_app: phase 0: ' "$tmp/out" ||
		{ cat "$tmp/out"; fail "the maps, the program's end after SIGINT"; }
}
t_program_killed() {
	local gp app_pid rc
	live_start || return
	kill -9 $app_pid
	wait $gp
	rc=$?
	[ "$rc" = 137 ] || fail "gpux exited $rc, not the program's 128 + 9"
	valid && [ "$(count kernels)" -ge 1 ]
}
# Stopped first, so that no write of the timeline is under way: the file
# is whole as of gpux's last write.
t_gpux_killed() {
	local gp app_pid
	live_start || return
	kill -STOP $gp
	kill -9 $gp
	wait $gp 2>/dev/null
	kill -TERM $app_pid 2>/dev/null
	valid && [ "$(count kernels)" -ge 1 ]
}
# A file that cannot be written is refused before the program starts
# (a write that fails later: test_timeline.c).
t_write_error() {
	local rc
	rm -f "$tmp/app.out"
	timeout 60 "$RT_GPUX" -f perfetto -o /dev/full -c "$(app streams)" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	[ "$rc" = 1 ] && grep -qF 'cannot write the timeline /dev/full: No space left on device' "$tmp/err" &&
	[ ! -s "$tmp/app.out" ] || { cat "$tmp/err"; fail "/dev/full: $rc"; }
}
# What -f perfetto needs: a command and a file.
t_usage() {
	"$RT_GPUX" -f perfetto -e 'BEGIN { exit(); }' -o "$tmp/t.json" >"$tmp/out" 2>"$tmp/err"
	[ $? = 1 ] && grep -qF 'gpux: ERROR: -f perfetto traces a CUDA program: give it with -c CMD, -- CMD ARGS or -p PID' "$tmp/err" ||
		{ cat "$tmp/err"; fail "no command"; }
	"$RT_GPUX" -f perfetto -c true >"$tmp/out" 2>"$tmp/err"
	[ $? = 1 ] && grep -qF 'gpux: ERROR: -f perfetto writes the timeline to a file: name it with -o FILE' "$tmp/err" ||
		{ cat "$tmp/err"; fail "no file"; }
	# the user's mistake is theirs, not the timeline's probes'
	"$RT_GPUX" -f perfetto -o "$tmp/t.json" -e 'cuda:launch { @n = count(); ' -c true \
		>"$tmp/out" 2>"$tmp/err"
	[ $? = 1 ] && grep -q '^stdin:1:28-29: ERROR: syntax error, unexpected end of file' "$tmp/err" &&
	! grep -q 'timeline' "$tmp/err" || { cat "$tmp/err"; fail "an unclosed block"; }
}

run_case() {
	rm -f "$tmp/failed"
	"$1"
	local rc=$?
	[ -e "$tmp/failed" ] && rc=1
	return $rc
}
. "$(dirname "$0")/../lib/cases.sh"
cases_main "${1:-}" run_case
