#!/usr/bin/env bash
# Device probes through the controller, without a GPU: gpux runs
# fake_app (which plays the traced program and its runtime) with a do-
# nothing library preloaded in place of libgpux-rt.so. Usage:
#   session_test.sh GPUX FAKE_APP RT_LIB CASE    one case (ctest's way)
#   session_test.sh GPUX FAKE_APP RT_LIB         all of them
# Exact outputs are in expected/NAME.out (stdout) and NAME.err (stderr).
set -u
GPUX=$1
FAKE=$2
export GPUX_RT=$3
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; return 1; }

# run RC ARGS...: gpux with stdin from /dev/null; checks the status.
run() {
	local want=$1; shift
	timeout 30 "$GPUX" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$?
	if [ "$rc" != "$want" ]; then
		echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"
		fail "gpux $* exited $rc, expected $want"
	fi
}
same() { # same FILE EXPECTED
	cmp -s "$here/expected/$2" "$1" || { diff -u "$here/expected/$2" "$1"; fail "$1 differs from $2"; }
}
same_out() { same "$tmp/out" "$1.out"; }
same_err() { same "$tmp/err" "$1.err"; }
err_has() { grep -qE -- "$1" "$tmp/err" || { cat "$tmp/err"; fail "stderr lacks /$1/"; }; }
err_empty() { [ ! -s "$tmp/err" ] || { cat "$tmp/err"; fail "stderr not empty"; }; }
out_empty() { [ ! -s "$tmp/out" ] || { cat "$tmp/out"; fail "stdout not empty"; }; }

# The program each scenario of fake_app plays against.
COUNT='gdev:kernel_exit { @[kernel] = count(); }'
AGGS='gdev:kernel_exit { @s[kernel] = stats(nsecs); @a = avg(warp); @mn = min(sm);
	@mx = max(sm); @sm = sum(sm); @x = sm; @n[blockIdx.x, kernel] = count(); }'
HIST='gdev:access { @h = hist(addr); @k[kernel] = hist(size); @l = lhist(warp, 0, 32, 4);
	@l2[sm] = lhist(sm, 0, 10, 3); }'
MERGE='gdev:kernel_exit { @[kernel] = count(); @h = hist(nsecs); @add += 2; @last = warp;
	@mn = min(sm); @mx = max(sm); @st = stats(sm); }'
PRINTF='gdev:kernel_exit { printf("%s block %d warp %d lane %d\n", kernel, blockIdx.x, warp, lane);
	printf("done\n"); }'
EXIT='gdev:kernel_exit { @[kernel] = count(); exit(); }'

# ---- output ----
t_counts() { run 0 -e "$COUNT" -- "$FAKE" counts && same_out counts && err_empty; }
t_sharded() { run 0 -e "$COUNT" -- "$FAKE" sharded && same_out counts && err_empty; }
t_counts_json() { run 0 -f json -e "$COUNT" -- "$FAKE" counts && same_out counts_json && err_empty; }
t_command_c() { run 0 -e "$COUNT" -c "'$FAKE' counts" && same_out counts && err_empty; }
t_output_file() {
	run 0 -o "$tmp/o.txt" -e "$COUNT" -- "$FAKE" counts && out_empty && same "$tmp/o.txt" counts.out
}
t_quiet() { run 0 -q -e "$COUNT" -- "$FAKE" counts && tail -n +2 "$here/expected/counts.out" | cmp -s - "$tmp/out"; }
t_probe_count() { # one probe table entry per event a glob names
	run 0 -e 'gdev:kernel_* { @[kernel] = count(); }' -- "$FAKE" counts &&
	[ "$(head -1 "$tmp/out")" = "Attaching 2 probes..." ] && tail -n +2 "$tmp/out" |
		cmp -s - <(tail -n +2 "$here/expected/counts.out") || fail "probe count"
}
t_aggs() { run 0 -e "$AGGS" -- "$FAKE" aggs && same_out aggs && err_empty; }
t_aggs_json() { run 0 -f json -e "$AGGS" -- "$FAKE" aggs && same_out aggs_json && err_empty; }
t_hist() { run 0 -e "$HIST" -- "$FAKE" hist && same_out hist && err_empty; }
t_hist_json() { run 0 -f json -e "$HIST" -- "$FAKE" hist && same_out hist_json && err_empty; }
t_merge() { run 0 -e "$MERGE" -- "$FAKE" merge && same_out merge && err_empty; }
t_merge_json() { run 0 -f json -e "$MERGE" -- "$FAKE" merge && same_out merge_json && err_empty; }
t_printf() { run 0 -e "$PRINTF" -- "$FAKE" printf && same_out printf && err_empty; }
t_printf_json() { run 0 -f json -e "$PRINTF" -- "$FAKE" printf && same_out printf_json && err_empty; }
t_bad_records() { run 1 -e "$PRINTF" -- "$FAKE" badrec && same_out badrec && same_err badrec; }
t_drops() { run 0 -e "$COUNT" -- "$FAKE" drops && same_out counts && same_err drops; }

# ---- the program's life ----
t_exit_status() { run 3 -e "$COUNT" -- "$FAKE" status3 && same_out counts && err_empty; }
t_device_exit() { run 0 -e "$EXIT" -- "$FAKE" exit && same_out exit && err_empty; }
t_device_exit_grandchild() {
	# under -c the shell forks the program: ending it must reach it too
	run 0 -e "$EXIT" -c "'$FAKE' exit '$tmp/pid'; true" && same_out exit && err_empty &&
	[ -s "$tmp/pid" ] || { fail "fake_app wrote no pid"; return 1; }
	local i
	for i in $(seq 1 500); do kill -0 "$(cat "$tmp/pid")" 2>/dev/null || return 0; sleep 0.01; done
	kill "$(cat "$tmp/pid")"
	fail "fake_app (the shell's child) still runs after gpux ended"
}
t_crash() { run 139 -e "$COUNT" -- "$FAKE" crash && same_out crash && same_err crash; }
t_exec_fails() {
	run 127 -e "$COUNT" -- "$tmp/none" && err_has "^gpux: cannot run $tmp/none: No such file or directory$" &&
	same_out empty_count
}
t_sigint() {
	# not under timeout(1): it would signal fake_app's group too
	"$GPUX" -e "$COUNT" -- "$FAKE" wait "$tmp/ready" >"$tmp/out" 2>"$tmp/err" </dev/null &
	local pid=$! i
	for i in $(seq 1 2000); do [ -e "$tmp/ready" ] && break; sleep 0.01; done
	[ -e "$tmp/ready" ] || { kill -9 "$pid"; fail "fake_app never got ready"; return 1; }
	# a background job ignores SIGINT; gpux takes it over, its child keeps ignoring it
	kill -INT "$pid"
	for i in $(seq 1 2000); do kill -0 "$pid" 2>/dev/null || break; sleep 0.01; done
	kill -0 "$pid" 2>/dev/null && { kill -9 "$pid"; fail "gpux did not stop on SIGINT"; return 1; }
	wait "$pid"
	local rc=$?
	[ "$rc" = 0 ] || { cat "$tmp/err"; fail "gpux exited $rc after SIGINT, expected 0"; return 1; }
	same_out exit && err_empty
}
t_environment() {
	# the program's own output is untouched; maps go to -o
	run 0 -o "$tmp/maps" -e "$COUNT" -- "$FAKE" env &&
	printf 'session fd set\nLD_PRELOAD=%s\nCUPY_COMPILE_WITH_PTX=1\n' "$GPUX_RT" | cmp -s - "$tmp/out" &&
	same "$tmp/maps" empty_count.out || { cat "$tmp/out"; fail "environment"; return 1; }
	# gpux gets this LD_PRELOAD too: under ASan, allow a library before libasan
	LD_PRELOAD=$GPUX_RT CUPY_COMPILE_WITH_PTX=0 \
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 run 0 -o "$tmp/maps" -e "$COUNT" -- "$FAKE" env &&
	printf 'session fd set\nLD_PRELOAD=%s:%s\nCUPY_COMPILE_WITH_PTX=0\n' "$GPUX_RT" "$GPUX_RT" |
		cmp -s - "$tmp/out" || { cat "$tmp/out"; fail "environment kept"; }
}

# ---- refused ----
t_no_command() {
	run 1 -e "$COUNT" && out_empty &&
	err_has '^gpux: ERROR: gdev: and cuda: probes need a CUDA program: use -c CMD or -- CMD ARGS$'
}
t_pid() { # a process that cannot exist (above any pid_max): nothing to load the runtime into
	run 1 -p 4000000 -e "$COUNT" && out_empty &&
	err_has '^gpux: ERROR: pid 4000000 does not exist$'
}
t_host_probes() {
	run 1 -e "uprobe:libc:realloc { @x = count(); } gdev:kernel_exit { @x = count(); }" -- "$FAKE" counts &&
	out_empty && err_has '^stdin:1:58-60: ERROR: @x is also used by uprobes or tracepoints \(in the kernel\): one map cannot be shared between kernel probes and gdev: or cuda: probes yet$'
}
t_no_runtime() {
	GPUX_RT=$tmp/none.so run 1 -e "$COUNT" -- "$FAKE" counts && out_empty &&
	err_has "^gpux: ERROR: cannot use the device runtime $tmp/none.so: No such file or directory$"
}
t_compile_error() {
	run 1 -e 'gdev:access { if (addr > 4096) { @big = count(); } }' -- "$FAKE" counts && out_empty &&
	err_has 'ERROR: branch depends on lane-varying value'
}
t_long_filter() {
	local glob
	glob=$(printf 'k%.0s' $(seq 1 200))
	run 1 -e "gdev:kernel_entry:$glob { @[kernel] = count(); }" -- "$FAKE" counts && out_empty &&
	err_has "ERROR: the filter '$glob' is too long for the runtime: 200 bytes, at most 183"
}

t_valgrind() {
	if ! command -v valgrind >/dev/null; then echo "SKIP: valgrind not installed"; return 0; fi
	if [ -n "${GPUX_SANITIZED:-}" ]; then echo "SKIP: sanitizer build"; return 0; fi
	local vg=(valgrind -q --error-exitcode=99 --leak-check=full
		--errors-for-leak-kinds=definite,indirect,possible
		--suppressions="$here/../cli/valgrind.supp")
	"${vg[@]}" "$GPUX" -e "$MERGE" -- "$FAKE" merge >"$tmp/out" 2>"$tmp/err" </dev/null
	[ $? -eq 0 ] || { cat "$tmp/err"; fail "valgrind on maps"; return 1; }
	same_out merge || return 1
	"${vg[@]}" "$GPUX" -e "$PRINTF" -- "$FAKE" badrec >"$tmp/out" 2>"$tmp/err" </dev/null
	[ $? -eq 1 ] || { cat "$tmp/err"; fail "valgrind on printf records"; return 1; }
	same_out badrec && same_err badrec
}

. "$(dirname "$0")/../lib/cases.sh"
cases_main "${4:-}"
