#!/bin/bash
# attach/inject.c on real processes: inject_test.sh TOOL TARGET PAYLOAD CASE
#   load      a library loaded into a sleeping process: its entry runs
#             there, returns, and the process goes on and ends as it
#             would have (its AVX registers intact, its sleeps resumed)
#   twice     loaded again into the same process: still fine
#   traced    a process someone else traces: a clear error, untouched
#   gpux_traced  the same through gpux -p (GPUX, the fifth argument)
#   gone      no such process: a clear error
#   badlib    a library that cannot load: dlopen's reason, untouched
set -u
tool=$1 target=$2 payload=$3 case=$4 gpux=${5:-}
tmp=$(mktemp -d)
trap 'kill -9 $tp 2>/dev/null; rm -rf "$tmp"' EXIT
tp=
fail() { echo "FAIL $case: $*"; cat "$tmp/out" "$tmp/inj" "$tmp/err" 2>/dev/null; exit 1; }
start() { # start SECONDS [traced]
	"$target" "$@" >"$tmp/out" 2>&1 &
	tp=$!
	for _ in $(seq 100); do grep -q '^target: ready' "$tmp/out" && return; sleep 0.02; done
	fail "the target did not start"
}
finish() { # the target ends by itself, as it would have
	wait "$tp" || fail "the target exited $?"
	grep -q '^target: registers intact after' "$tmp/out" || fail "the target's state changed"
}
case $case in
load | twice)
	start 1.5
	n=1; [ "$case" = twice ] && n=2
	for i in $(seq $n); do
		"$tool" "$tp" "$payload" gpux_inject_test "hello $i" >"$tmp/inj" 2>"$tmp/err" ||
			fail "inject_library failed"
		grep -qx 'entry returned 7' "$tmp/inj" || fail "the entry's return value"
		sleep 0.1
	done
	finish
	[ "$(grep -c "^payload: loaded in pid $tp, arg 'hello [0-9]'$" "$tmp/out")" = "$n" ] ||
		fail "the payload's line in the target"
	;;
traced)
	start 0.5 traced
	"$tool" "$tp" "$payload" gpux_inject_test x >"$tmp/inj" 2>"$tmp/err" && fail "injected into a traced process"
	grep -q "^gpux: ERROR: cannot attach to pid $tp: ptrace is not permitted" "$tmp/err" ||
		fail "the error"
	kill -9 "$tp"; wait "$tp" 2>/dev/null
	! grep -q '^payload' "$tmp/out" || fail "the payload ran"
	;;
gpux_traced)
	start 0.5 traced
	"$gpux" -p "$tp" -e 'cuda:launch { @ = count(); }' >"$tmp/inj" 2>"$tmp/err" &&
		fail "gpux attached to a traced process"
	grep -q "ERROR: cannot attach to pid $tp: ptrace is not permitted" "$tmp/err" || fail "the error"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "more than the one error"
	kill -9 "$tp"; wait "$tp" 2>/dev/null
	! grep -q '^payload' "$tmp/out" || fail "the payload ran"
	;;
gone)
	"$tool" 999999999 "$payload" >"$tmp/inj" 2>"$tmp/err" && fail "injected into nothing"
	grep -qx 'gpux: ERROR: cannot attach to pid 999999999: no such process' "$tmp/err" ||
		fail "the error"
	;;
badlib)
	start 1
	"$tool" "$tp" "$tmp/no-such-lib.so" gpux_inject_test x >"$tmp/inj" 2>"$tmp/err" &&
		fail "loaded a missing library"
	grep -q "^gpux: ERROR: cannot attach to pid $tp: dlopen failed there: .*no-such-lib.so" \
		"$tmp/err" || fail "the error"
	finish
	;;
*) echo "unknown case $case"; exit 2 ;;
esac
echo "ok $case"
