#!/usr/bin/env bash
# CLI tests: exit codes and output of gpux's options. Usage:
#   cli_test.sh GPUX CASE     run one case (ctest registers each)
#   cli_test.sh GPUX          run them all
set -u
GPUX=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; return 1; }

# run RC ARGS...: run gpux with stdin from /dev/null, check the status.
run() {
	local want=$1; shift
	"$GPUX" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$?
	if [ "$rc" != "$want" ]; then
		echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"
		fail "gpux $* exited $rc, expected $want"
	fi
}
out_has() { grep -qE -- "$1" "$tmp/out" || { cat "$tmp/out"; fail "stdout lacks /$1/"; }; }
err_has() { grep -qE -- "$1" "$tmp/err" || { cat "$tmp/err"; fail "stderr lacks /$1/"; }; }
out_empty() { [ ! -s "$tmp/out" ] || { cat "$tmp/out"; fail "stdout not empty"; }; }
err_empty() { [ ! -s "$tmp/err" ] || { cat "$tmp/err"; fail "stderr not empty"; }; }
out_lines() { local n; n=$(wc -l <"$tmp/out"); [ "$n" -eq "$1" ] || fail "stdout has $n lines, expected $1"; }
# --sim's table: its lines from "workload" on (the policies' output comes before)
table_lines() {
	local n; n=$(sed -n '/^workload /,$p' "$tmp/out" | wc -l)
	[ "$n" -eq "$1" ] || { cat "$tmp/out"; fail "the table has $n lines, expected $1"; }
}

t_help() { run 0 -h && out_has '^USAGE:' && out_has -- '--dry-run' && err_empty; }
t_help_long() { run 0 --help && out_has '^USAGE:'; }
t_version() {
	run 0 -V && out_has '^gpux v[0-9]+\.[0-9]+\.[0-9]+( \([0-9a-f]+(-dirty)?\))?$' && out_lines 1
}
t_no_program() { run 1 && err_has 'no program given' && out_empty; }
t_bad_option() { run 1 -Z && err_has 'unknown option -Z' && err_has "gpux --help"; }
t_bad_long_option() { run 1 --bogus && err_has 'unknown option --bogus'; }
t_missing_arg() { run 1 -e && err_has 'option -e needs an argument'; }
t_bad_stage() { run 1 -d llvm -e 'BEGIN {}' && err_has "unknown stage 'llvm'"; }
t_bad_format() { run 1 -f xml -e 'BEGIN {}' && err_has "unknown output format 'xml'"; }
# -p's refusals, in bpftrace's words (one that is not there: before
# anything is compiled)
t_bad_pid() { run 1 -p abc -e 'BEGIN {}' && err_has "^gpux: ERROR: pid 'abc' is not a valid decimal number$"; }
t_zero_pid() {
	run 1 -p 0 -e 'BEGIN {}' && err_has "^gpux: ERROR: pid '0' out of valid pid range \\[1,4194304\\]$" &&
	run 1 -p 99999999999999999999 -e 'BEGIN {}' && err_has "out of valid pid range"
}
t_gone_pid() {
	sleep 0 & local p=$!
	wait $p
	run 1 -p $p -e 'BEGIN {}' && err_has "^gpux: ERROR: pid $p does not exist$"
}
t_list_all() {
	run 0 -l && err_empty && out_has '^gdev:kernel_entry$' && out_has '^gdev:access$' &&
	out_has '^cuda:launch$' && out_has '^gpu_mem:access$' && out_has '^gpu_sched:task_init$' &&
	out_has '^BEGIN$' && out_has '^uprobe:'
}
t_list_glob() { run 0 -l 'gdev:*' && out_lines 5 && out_has '^gdev:func_exit$'; }
t_list_cuda() { run 0 -l 'cuda:*' && out_lines 8 && out_has '^cuda:kernel_end$' && out_has '^cuda:graph_launch$'; }
t_list_kernel_end() {
	run 0 -lv cuda:kernel_end && out_has 'filter: kernel name glob' &&
	out_has '^    uint64  duration  end - start, ns$' && out_has '^    dim3    block '
}
t_list_glob_alias() { run 0 -l 'gpu_mem:*' && out_lines 5; }
t_list_nomatch() { run 1 -l 'nosuch:*' && err_has "no probes match 'nosuch:\*'" && out_empty; }
t_list_verbose() {
	run 0 -lv 'gdev:access' && out_has '^gdev:access' && out_has 'addr' &&
	out_has 'lane-varying' && out_has 'uniform'
}
t_list_verbose_policy() { run 0 -lv 'gpu_mem:access' && out_has 'BYPASS' && out_has 'move_tail'; }
t_list_with_e() { run 1 -l -e 'BEGIN {}' && err_has '-l cannot be combined with -e'; }
t_dry_run_ok() { run 0 --dry-run -e 'gdev:kernel_exit { @[kernel] = count(); }' && out_empty && err_empty; }
# -lv lists the builtins a probe can use: no kernel helper's in BEGIN,
# no traced program's (gpu) in a uprobe
t_list_builtins_runner() {
	run 0 -lv BEGIN && ! grep -qE 'ustack|kstack|curtask|gpu ' "$tmp/out" || fail "BEGIN lists them"
	run 0 -lv 'uprobe:*' && out_has 'ustack kstack curtask' && ! grep -q ' gpu ' "$tmp/out" ||
		fail "uprobe's"
}
# a parameter that is not a number where one is compared says so; in
# --sim, a missing one says how the simulator takes them
t_positional_hints() {
	run 1 --dry-run -e 'BEGIN { if (pid == $1) { exit(); } }' abc &&
		err_has "^HINT: \\\$1 is 'abc', which is not a number$" || return
	printf 'gpu_mem:activate { if (owner == $1) { return 1; } }\n' >"$tmp/p.gpx"
	run 0 --sim seq:size=8m,gpu=4m "$tmp/p.gpx" &&
		err_has "^HINT: give it after the policy's file: gpux --sim WORKLOAD policy.gpx:ARG:ARG$"
}
# a policy's printf, print() and maps in --sim, as a run on a driver
# prints them, before the table (which now says its hook calls)
t_sim_policy_output() {
	printf 'gpu_mem:activate { @a = count(); if (@a == 1) { printf("first\\n"); } }\nEND { print(@a); }\n' >"$tmp/p.gpx"
	run 0 --sim seq:size=8m,gpu=4m "$tmp/p.gpx" || return
	head -n 6 "$tmp/out" >"$tmp/head"
	printf 'first\n@a: 8\n\n\n@a: 8\n\n' | diff - "$tmp/head" || fail "the policy's output"
	grep -qE "^$tmp/p.gpx +4096 .* 8 +0$" "$tmp/out" || { cat "$tmp/out"; fail "hooks and errors"; }
}
# -I and --include reach a shell through the preprocessor: a quote in
# one is refused
t_include_quote() {
	run 1 -I "a'b" -e 'BEGIN {}' && err_has "-I cannot hold a single quote"
}
# an error on a line of 80 KB (a generated program) echoes the part
# around it, cut with "...", the marks still under the span
t_long_line_error() {
	python3 -c "print('BEGIN { ' + '@a = 1; ' * 5000 + '@b = 1 + \"x\"; ' + '@c = 2; ' * 5000 + '}')" >"$tmp/long.gpx"
	run 1 --dry-run "$tmp/long.gpx" && err_has "long.gpx:1:40014-40021: ERROR: Type mismatch" || return
	local n; n=$(sed -n 2p "$tmp/err" | wc -c)
	[ "$n" -lt 1000 ] || fail "the echoed line has $n bytes"
	local at; at=$(sed -n 2p "$tmp/err" | grep -bo '1 + "x"' | cut -d: -f1)
	[ "$(sed -n 3p "$tmp/err" | grep -bo '~~~~~~~' | cut -d: -f1)" = "$at" ] || fail "the marks"
}
# -B line|full|none (bpftrace's): accepted, the output as without it
t_buffering() {
	for m in line full none; do
		run 0 -B $m -e 'BEGIN { printf("x\n"); exit(); }' && out_has '^x$' || return
	done
	run 1 -B bogus -e 'BEGIN {}' && err_has "-B must be either 'line', 'full', or 'none', not 'bogus'"
}
# --no-warnings (bpftrace's) drops the program's warnings, not its errors;
# -q keeps them, as bpftrace's -q does
t_no_warnings() {
	run 0 --dry-run -e 'BEGIN { print(@x); }' && err_has 'WARNING: @x is never assigned' &&
		run 0 -q --dry-run -e 'BEGIN { print(@x); }' && err_has 'WARNING: @x is never assigned' &&
		run 0 --no-warnings --dry-run -e 'BEGIN { print(@x); }' && err_empty &&
		run 1 --no-warnings --dry-run -e 'BEGIN { print(@x); @y = 1 + "a"; }' &&
		err_has 'ERROR' && ! grep -q WARNING "$tmp/err"
}
# bpftrace's --usdt-file-activation is taken (what attaching does anyway)
t_usdt_file_activation() {
	run 0 --usdt-file-activation --dry-run -e 'BEGIN { exit(); }' && err_empty
}
# A long compile draws what gpux is doing on a terminal's stderr and
# erases it when done (GPUX_PROGRESS_MS=0: from the start, so a short
# compile shows it); without a terminal stderr stays empty.
t_progress_line() {
	command -v script >/dev/null || { echo "SKIP: no script(1)"; return 77; }
	python3 -c "print('BEGIN {'); [print(f'  @a[{i % 50}] = {i};') for i in range(3000)]; print('}')" >"$tmp/big.gpx"
	GPUX_PROGRESS_MS=0 script -qec "'$GPUX' --dry-run '$tmp/big.gpx'" /dev/null >"$tmp/tty" 2>&1 ||
		{ cat -A "$tmp/tty"; fail "gpux under script(1)"; return; }
	grep -qE $'\rgpux: (checking the program|compiling host probes)\\.\\.\\. [0-9]+ s\e\\[K' "$tmp/tty" &&
		grep -q $'\r\e\\[K' "$tmp/tty" || { cat -A "$tmp/tty"; fail "no progress line drawn and erased"; return; }
	GPUX_PROGRESS_MS=0 run 0 --dry-run "$tmp/big.gpx" && err_empty
}
t_dry_run_error() {
	run 1 --dry-run -e 'gdev:kernel_exit { @[kernel] = count() }}' &&
	err_has '^stdin:1:' && err_has 'ERROR: syntax error' && out_empty
}
t_dump_ast() {
	run 0 -d ast -e 'gdev:kernel_exit { @[kernel] = count(); }' && err_empty &&
	out_has '^Program$' && out_has '^ probe <1:1-42>$' && out_has '^  attach gdev:kernel_exit' &&
	out_has '^    map @ <1:20-29>$' && out_has '^     identifier kernel'
}
t_dump_types() {
	run 0 -d types -e 'gdev:access { @p[addr >> 21] = count(); }' &&
	out_has 'probe \(device\)' && out_has 'builtin|field addr :: uint64 varying' &&
	out_has '^Maps$' && out_has '@p\[uint64\] :: count \(device\)'
}
t_dump_both() { run 0 -d ast,types -e 'BEGIN { @x = 1; }' && [ "$(grep -c '^Program$' "$tmp/out")" -eq 2 ]; }
t_dump_syntax_error() { run 1 -d ast -e 'BEGIN { @x = ; }' && out_empty && err_has 'syntax error'; }
t_file() {
	printf 'gdev:kernel_exit\n{\n\t@[kernel] = count();\n}\n' >"$tmp/p.gpx"
	run 0 --dry-run "$tmp/p.gpx" && err_empty
}
t_file_error_name() {
	printf 'BEGIN {\n  @x = $y;\n}\n' >"$tmp/bad.gpx"
	run 1 --dry-run "$tmp/bad.gpx" && err_has "^$tmp/bad.gpx:2:8-10: ERROR: Undefined or undeclared variable: \\\$y$"
}
t_file_missing() { run 1 --dry-run "$tmp/none.gpx" && err_has "failed to open file '$tmp/none.gpx': No such file"; }
t_file_stdin() {
	echo 'BEGIN { @x = 1; }' | "$GPUX" --dry-run - >"$tmp/out" 2>"$tmp/err"
	[ $? -eq 0 ] || fail "stdin program rejected"
}
t_positional() {
	# a parameter not given is 0, "" in str(), as in bpftrace, with a warning
	printf 'BEGIN { printf("%%d %%s %%s\\n", $1, $2, str($3)); }\n' >"$tmp/a.gpx"
	run 0 --dry-run "$tmp/a.gpx" 5 hello 7 && err_empty &&
	run 0 --dry-run "$tmp/a.gpx" 5 hello &&
	err_has 'WARNING: positional parameter \$3 is not given' || return 1
	run 1 --dry-run "$tmp/a.gpx" 5 && err_has '%s specifier expects a value of type string'
}
t_json_timestamps() {
	# strftime() values are json strings (bpftrace 0.17 writes them bare)
	run 0 -f json -e 'BEGIN { @v = strftime("%%", 0); print(strftime("x", 0)); exit(); }' &&
		out_has '^\{"type": "value", "data": "x"\}$' &&
		out_has '^\{"type": "map", "data": \{"@v": "%"\}\}$'
}
t_command_c() {
	run 0 --dry-run -e 'gdev:kernel_exit { @[kernel] = count(); }' -c './app --n 3' &&
	err_has "would trace command: ./app --n 3"
}
t_command_dashdash() {
	run 0 --dry-run -e 'BEGIN {}' -- ./app -x 1 && err_has 'would trace command: ./app -x 1'
}
t_interval_alias() {
	# i: is interval: (it was refused as a probe this build cannot run)
	run 0 -e 'i:ms:20 { printf("%s\n", probe); exit(); }' && out_has '^interval:ms:20$'
}
t_command_words() {
	# -c of plain words runs the program itself, as bpftrace's -c: its
	# exit status, its pid is cpid (no shell runs first: live.tracepoint
	# counts the command's getppid calls by pid == cpid exactly)
	run 3 -e 'BEGIN { }' -c "/bin/sh -c 'exit 3'" || return
	run 1 -e 'BEGIN { }' -c "/bin/false" || return
	run 127 -e 'BEGIN { }' -c "$tmp/none a b" &&
		err_has "^gpux: cannot run $tmp/none: No such file or directory$" || return
	printf '#!/bin/sh\necho "$$" >"$1"\n' >"$tmp/pid.sh" && chmod +x "$tmp/pid.sh" &&
	"$GPUX" -e 'BEGIN { printf("%d\n", cpid); }' -c "$tmp/pid.sh $tmp/pid" >"$tmp/out" 2>"$tmp/err" </dev/null ||
		{ cat "$tmp/err"; fail "gpux -c pid.sh"; return 1; }
	[ "$(cat "$tmp/pid")" = "$(sed -n 2p "$tmp/out")" ] || { cat "$tmp/out" "$tmp/pid"; fail "cpid"; return 1; }
	# a command with shell syntax still gets a shell
	run 0 -e 'BEGIN { }' -c "echo a | cat >$tmp/piped" && [ "$(cat "$tmp/piped")" = a ] ||
		fail "a pipeline under -c"
}

t_sigusr1() {
	# SIGUSR1 prints every map, as bpftrace 0.17 does, and the run goes on
	"$GPUX" -e 'BEGIN { @a = 1; @b[2] = 3; }' >"$tmp/out" 2>"$tmp/err" </dev/null &
	local g=$!
	for _ in $(seq 100); do grep -q Attaching "$tmp/out" 2>/dev/null && break; sleep 0.05; done
	kill -USR1 "$g"
	for _ in $(seq 100); do grep -q '^@b' "$tmp/out" 2>/dev/null && break; sleep 0.05; done
	kill -INT "$g"
	wait "$g" || { fail "exited $? after SIGUSR1, SIGINT"; return 1; }
	printf 'Attaching 1 probe...\n@a: 1\n@b[2]: 3\n\n\n@a: 1\n@b[2]: 3\n' >"$tmp/want"
	cmp -s "$tmp/want" "$tmp/out" || { diff -u "$tmp/want" "$tmp/out"; fail "output"; }
}

t_interval_behind() {
	# an interval shorter than its probe takes skips the periods it
	# missed, as a kernel timer does: gpux still sees SIGINT and prints
	"$GPUX" -e 'interval:hz:1000000000 { @ = count(); }' >"$tmp/out" 2>"$tmp/err" </dev/null &
	local g=$! t0
	for _ in $(seq 100); do grep -q Attaching "$tmp/out" 2>/dev/null && break; sleep 0.05; done
	sleep 0.3
	kill -INT "$g"
	t0=$SECONDS
	while kill -0 "$g" 2>/dev/null && [ $((SECONDS - t0)) -lt 10 ]; do sleep 0.1; done
	if kill -0 "$g" 2>/dev/null; then
		kill -KILL "$g"; wait "$g"
		fail "gpux did not end on SIGINT"; return 1
	fi
	wait "$g" || { cat "$tmp/err"; fail "gpux exited $? after SIGINT"; return 1; }
	out_has '^@: [0-9]+$'
}
t_command_quiet() { run 0 -q --dry-run -e 'BEGIN {}' -c ./app && err_empty; }
t_command_both() { run 1 -e 'BEGIN {}' -c ./a -- ./b && err_has 'either with -c or after --'; }
t_pid() { run 0 --dry-run -p 1 -e 'BEGIN {}' && err_has 'would trace process 1'; }
t_pid_and_cmd() { run 1 -p 1 -c ./a -e 'BEGIN {}' && err_has 'cannot be combined'; }
t_dashdash_empty() { run 1 -e 'BEGIN {}' -- && err_has "'--' must be followed by a command"; }
t_output_file() {
	run 0 -o "$tmp/o.txt" -d ast -e 'BEGIN {}' && out_empty && grep -q '^Program$' "$tmp/o.txt" ||
	fail "-o did not receive the dump"
}
t_output_unwritable() { run 1 -o /nonexistent/dir/x -e 'BEGIN {}' && err_has 'cannot open /nonexistent/dir/x'; }
# without gpu_ext's driver (tests/btf has the variants of this refusal)
t_attach_unavailable() {
	env -u GPUX_BTF_DIR "$GPUX" -e 'gpu_sched:task_init { set_timeslice(1000); }' -c "touch $tmp/ran" \
		>"$tmp/out" 2>"$tmp/err" </dev/null
	[ $? = 1 ] || fail "exited $?, expected 1" || return 1
	err_has '^stdin:1:1-20: ERROR: gpu_sched probes need the gpu_ext driver: ' &&
		err_has -- '--sim WORKLOAD' && [ ! -e "$tmp/ran" ] || fail "refused after the command ran"
}
# gdev: runs with a command (tests/session); without one it says so
t_gdev_needs_command() { run 1 -e 'gdev:kernel_exit {}' && err_has 'gdev: and cuda: probes need a CUDA program' && out_empty; }
t_cuda_needs_command() { run 1 -e 'cuda:launch {}' && err_has 'gdev: and cuda: probes need a CUDA program' && out_empty; }
t_json_format_accepted() { run 0 -f json --dry-run -e 'BEGIN {}'; }
t_no_repl_without_tty() { run 1 && err_has 'no program given'; }
t_nul_byte() {
	printf 'BEGIN {\0}' >"$tmp/nul.gpx"
	run 1 --dry-run "$tmp/nul.gpx" && err_has 'nul.gpx:1:8-9: ERROR: the program contains a NUL byte$'
}
t_errors_then_warnings() {
	run 1 --dry-run -e 'interval:s:1 { print(@nope); } BEGIN { $x = $y; }' &&
	[ "$(grep -E 'ERROR|WARNING' "$tmp/err" | head -1 | grep -c ERROR)" -eq 1 ] &&
	err_has 'WARNING: @nope is never assigned'
}

t_stdlib_tools() {
	for f in "$here"/../../stdlib/tools/*.gpx; do
		run 0 --dry-run "$f" && err_empty || return 1
	done
}
t_stdlib_policies() {
	run 0 --dry-run "$here/../../stdlib/policies/eviction_lfu.gpx" && err_empty &&
		run 0 --dry-run "$here/../../stdlib/policies/sched_timeslices.gpx" llama-server 1000000 3 &&
		err_empty
}
# Valgrind as well as ASan: no leak or invalid access on a full check,
# a dump and an error path.
t_valgrind() {
	if ! command -v valgrind >/dev/null; then echo "SKIP: valgrind not installed"; return 0; fi
	# ASan and valgrind cannot share a process; the plain build runs this.
	if [ -n "${GPUX_SANITIZED:-}" ]; then echo "SKIP: sanitizer build"; return 0; fi
	local vg=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect,possible
		--suppressions="$here/valgrind.supp")
	# "Still reachable" is left out: libLLVM allocates in static constructors.
	"${vg[@]}" "$GPUX" -d types -e 'gdev:access /store/ { @b[kernel, addr >> 12] = sum(size); }' >/dev/null 2>"$tmp/vg1"
	[ $? -eq 0 ] || { cat "$tmp/vg1"; fail "valgrind on a valid program"; return 1; }
	"${vg[@]}" "$GPUX" --dry-run -e 'gdev:kernel_exit { @m[1] = 1; @m["a"] = 2; printf("%d %s\n", 1); }' >/dev/null 2>"$tmp/vg2"
	[ $? -eq 1 ] || { cat "$tmp/vg2"; fail "valgrind on an invalid program"; return 1; }
	"${vg[@]}" "$GPUX" -lv >/dev/null 2>"$tmp/vg3"
	[ $? -eq 0 ] || { cat "$tmp/vg3"; fail "valgrind on -lv"; return 1; }
	# The whole code generation path: device lowering, verifier, JIT, LLVM.
	"${vg[@]}" "$GPUX" --dry-run -e 'cuda:launch { @t[kernel] = nsecs; } gdev:kernel_entry { @lat[kernel] = hist(nsecs - @t[kernel]); }' >/dev/null 2>"$tmp/vg4"
	[ $? -eq 0 ] || { cat "$tmp/vg4"; fail "valgrind on a dry run"; }
}

# Code generation through the CLI: every stage prints, --emit writes
# files that ptxas and libbpf's loader can take.
ptxas_ok() { command -v ptxas >/dev/null; }
t_dump_bpf_device() {
	run 0 -d bpf -e 'gdev:access { @pages[addr >> 21] = count(); }' && err_empty &&
	out_has '^gpux_probe_0: gdev:access$' && out_has '^; gdev:access \{ @pages' &&
	out_has 'r6 >>= 21' && out_has 'call agg_count'
}
t_dump_bpf_host() {
	run 0 -d bpf -e 'uprobe:/lib/x86_64-linux-gnu/libc.so.6:malloc { @[comm] = count(); }' &&
	out_has 'get_current_comm|call' && out_has 'exit'
}
t_dump_ir() {
	run 0 -d ir -e 'uprobe:/lib/x86_64-linux-gnu/libc.so.6:malloc { @[comm] = count(); }' &&
	out_has '^target triple = "bpfel"$' && out_has '^define '
}
t_dump_verifier() {
	run 0 -d verifier -e 'gdev:access { @p[addr >> 21] = count(); }' &&
	out_has 'r6 = varying' && out_has 'call agg_count'
}
t_dump_ptx() {
	run 0 -d ptx -e 'gdev:kernel_exit { printf("%d %d\n", threadIdx.x, nsecs); }' &&
	out_has '^\.target sm_80$' && out_has 'gpux_probe_0\(' || return 1
	ptxas_ok || { echo "SKIP: ptxas not installed"; return 0; }
	cp "$tmp/out" "$tmp/m.ptx"
	ptxas -arch=sm_80 -c "$tmp/m.ptx" -o "$tmp/m80.o" && ptxas -arch=sm_90 -c "$tmp/m.ptx" -o "$tmp/m90.o" ||
		fail "ptxas rejected gpux -d ptx output"
}
# Policies given together compose: `gpux lfu.gpx quota.gpx 3` is one
# program (the .gpx files first, then $1...), its probes on one hook one
# struct_ops program; a diagnostic names the file and its own line.
t_sim_default_only() {
	run 0 --sim seq:size=16m,gpu=8m,passes=2 && err_empty && out_lines 4 &&
	out_has '^workload seq:size=16m,gpu=8m,passes=2, GPU memory 8 MiB$' &&
	out_has '^default +8192 +32 +32\.0 +24\.0 +12 +4096 +0 '
}
t_sim_policy_rows() {
	printf 'gpu_mem:activate { move_head(chunk); }\n' >"$tmp/mru.gpx"
	printf 'gpu_mem:prefetch { set_prefetch_region(max_first, max_outer); return BYPASS; }\n' >"$tmp/max.gpx"
	run 0 --sim seq:size=16m,gpu=8m,passes=2 "$tmp/mru.gpx" "$tmp/max.gpx" "$tmp/mru.gpx+$tmp/max.gpx" &&
	err_empty && table_lines 7 && out_has "^$tmp/mru.gpx:$" &&
	out_has "^$tmp/max.gpx +4096 +16 +32\.0 +24\.0 +12 +2048 +4096 " && out_has "^$tmp/mru.gpx\+$tmp/max.gpx +[0-9]+ "
}
t_sim_json() {
	printf 'gpu_mem:prefetch { return BYPASS; }\n' >"$tmp/none.gpx"
	run 0 -f json --sim random:size=8m,touches=500 "$tmp/none.gpx" && err_empty && out_lines 2 &&
	out_has '^\{"type": "sim", "data": \{"policy": "default", "workload": "random:size=8m,touches=500"' &&
	out_has '"policy": "[^"]*none.gpx".*"prefetched_pages": 0,'
}
t_sim_sched() {
	printf 'gpu_sched:task_init /comm == "tenant1"/ { set_timeslice(4096); }\n' >"$tmp/ts.gpx"
	run 0 --sim mix:size=8m,work=10 "$tmp/ts.gpx" && err_empty &&
	out_has "^$tmp/ts.gpx +1 +4096 +0 +" && out_has '^default +2 +1024 +0 +20\.50 +yes$'
}
t_sim_args() {
	printf 'gpu_mem:access /@n[chunk]++ > $1/ { move_tail(chunk); return BYPASS; }\n' >"$tmp/lfu.gpx"
	run 0 --sim hotcold:size=16m,gpu=8m,passes=3 "$tmp/lfu.gpx:2" && err_empty && table_lines 5
}
# Moves in evict_prepare: `head` is read again after each. Three chunks,
# blocks A B C D touched in turn: D's fault finds A B C; the first move
# makes it B C A, the second (head now B) C A B, and C goes. A and B
# then hit: 4 faults, 1 eviction. (Moving A twice would evict B, which
# faults again.) The default: D evicts A, A evicts B: 5 and 2.
t_sim_evict_moves() {
	printf 'N 1 t\nA 1 0x7f0000000000 8388608\n' >"$tmp/four.trace"
	for b in 0 2 4 6; do printf 'T 1 0x7f0000%s00000 4096\nL\n' "$b" >>"$tmp/four.trace"; done
	printf 'T 1 0x7f0000000000 4096\nT 1 0x7f0000200000 4096\nL\n' >>"$tmp/four.trace"
	printf 'gpu_mem:evict_prepare { move_tail(head); move_tail(head); }\n' >"$tmp/two.gpx"
	run 0 -f json --sim "trace:$tmp/four.trace,gpu=6m" "$tmp/two.gpx" && err_empty &&
	out_has '"policy": "default".*"faults": 5,.*"evictions": 2,' &&
	out_has '"policy": "[^"]*two.gpx".*"faults": 4,.*"evictions": 1,.*"hook_calls": 1, "policy_errors": 0'
}
t_sim_errors() {
	run 1 --sim zipf && err_has "unknown workload 'zipf'" || return 1
	run 1 --sim seq:size=1q && err_has "workload key size: '1q' is not a number" || return 1
	run 1 --sim trace:/nonexistent && err_has 'cannot open trace /nonexistent' || return 1
	printf 'A 1 0x1000 4096\nT 1 zzz\n' >"$tmp/bad.trace"
	run 1 --sim "trace:$tmp/bad.trace" && err_has 'line 2: unrecognised record' || return 1
	printf 'gdev:kernel_exit { @ = count(); }\n' >"$tmp/dev.gpx"
	run 1 --sim seq "$tmp/dev.gpx" && err_has 'dev.gpx:1:1-17: ERROR: --sim runs driver probes' || return 1
	run 1 --sim seq -c true "$tmp/dev.gpx" && err_has 'takes no command' || return 1
	printf 'gpu_mem:access { @x = count(); \n' >"$tmp/syntax.gpx"
	run 1 --sim seq "$tmp/syntax.gpx" && err_has 'syntax.gpx:' && out_empty
}
t_files_compose() {
	printf '#!/usr/bin/env gpux\n// hot chunks stay\ngpu_mem:access /@hot[chunk] > $1/ { move_tail(chunk); return BYPASS; }\ngpu_mem:access { @hot[chunk]++; }' >"$tmp/lfu.gpx"
	printf '#!/usr/bin/env gpux\ngpu_mem:access { move_head(chunk); return ENTER_LOOP; }\n' >"$tmp/quota.gpx"
	printf '\n\ngpu_mem:access { @q[chunk] = counnt(); }\n' >"$tmp/bad.gpx"
	run 0 -d bpf "$tmp/lfu.gpx" "$tmp/quota.gpx" 3 && err_empty || return 1
	[ "$(grep -c '^[a-z_0-9]*: ; section' "$tmp/out")" = 1 ] &&
		out_has '^compose_uvm_pmm_chunk_used: ; section struct_ops/uvm_pmm_chunk_used$' &&
		out_has 'move_tail' && out_has 'move_head' || return 1
	run 1 --dry-run "$tmp/lfu.gpx" "$tmp/bad.gpx" 3 &&
		err_has "^$tmp/bad.gpx:3:30-38: ERROR: Unknown function: counnt\$" || return 1
	run 0 --dry-run "$tmp/lfu.gpx" "$tmp/quota.gpx" &&
		err_has "^$tmp/lfu.gpx:3:31-33: WARNING: positional parameter \\\$1 is not given" || return 1
	run 1 --dry-run "$tmp/lfu.gpx" "$tmp/none.gpx" && err_has "failed to open file '.*none.gpx'"
}

# prefetch() through the whole device pipeline: lowering, the SIMT
# verifier, the JIT (one inlined prefetch per probe) and ptxas.
t_dump_ptx_prefetch() {
	local prog='gdev:access { prefetch(addr + 4194304); } gdev:kernel_entry { prefetch(0); }'
	run 0 -d ptx -e "$prog" && err_empty && cp "$tmp/out" "$tmp/m.ptx" || return 1
	[ "$(grep -c 'prefetch\.global\.L2 \[%t0\];' "$tmp/m.ptx")" -eq 2 ] ||
		{ cat "$tmp/m.ptx"; fail "not one prefetch.global.L2 per probe"; return 1; }
	run 0 -d bpf -e "$prog" && out_has 'call prefetch$' || return 1
	ptxas_ok || { echo "SKIP: ptxas not installed"; return 0; }
	ptxas -arch=sm_80 -c "$tmp/m.ptx" -o "$tmp/m80.o" && ptxas -arch=sm_90 -c "$tmp/m.ptx" -o "$tmp/m90.o" ||
		fail "ptxas rejected the prefetch module"
}
t_emit() {
	run 0 --emit "$tmp/em" -e 'cuda:launch { @t[kernel] = nsecs; } gdev:kernel_entry { @lat[kernel] = hist(nsecs - @t[kernel]); }' &&
	[ -s "$tmp/em/device.ptx" ] && [ -s "$tmp/em/device.link.ptx" ] && [ -s "$tmp/em/device.bpf" ] &&
	[ -s "$tmp/em/host.bpf.o" ] ||
		{ ls -l "$tmp/em"; fail "--emit did not write device.ptx, device.link.ptx, device.bpf and host.bpf.o"; return 1; }
	grep -q '^\.extern \.func .* gpux_h_agg_count(' "$tmp/em/device.link.ptx" &&
	! grep -q '^\.visible \.func .* gpux_h_\|gpux_ctl' "$tmp/em/device.link.ptx" ||
		{ cat "$tmp/em/device.link.ptx"; fail "device.link.ptx defines or declares the library"; return 1; }
	file "$tmp/em/host.bpf.o" 2>/dev/null | grep -q 'eBPF' || head -c 4 "$tmp/em/host.bpf.o" | grep -q 'ELF' ||
		fail "host.bpf.o is not an ELF object"
	ptxas_ok || { echo "SKIP: ptxas not installed"; return 0; }
	ptxas -arch=sm_90 -c "$tmp/em/device.ptx" -o "$tmp/d.o" || fail "ptxas rejected device.ptx"
	ptxas -arch=sm_90 -c "$tmp/em/device.link.ptx" -o "$tmp/l.o" || fail "ptxas rejected device.link.ptx"
}
t_dry_run_device_refusal() {
	run 1 --dry-run -e 'gdev:kernel_exit { if (kernel == "x") { @a = count(); } }' &&
	err_has '^stdin:1:24-37: ERROR: string comparison is not supported on the device yet$'
}
t_dry_run_verifier_refusal() {
	run 1 --dry-run -e 'gdev:access { @m[lane] = 1; }' && err_has '^stdin:1:' && err_has 'lane-varying key'
}

# Issue 4's acceptance through the CLI: each golden one-liner
# (tests/ast/design_*.gpx) compiles to PTX (ptxas: sm_80, sm_90) and/or a BPF
# object.
t_design_goldens_emit() {
	local i=0 p
	while IFS= read -r p; do
		i=$((i + 1))
		run 0 --emit "$tmp/g$i" -e "$p" || return 1
		[ -s "$tmp/g$i/device.ptx" ] || [ -s "$tmp/g$i/host.bpf.o" ] ||
			{ fail "no output for: $p"; return 1; }
		if [ -s "$tmp/g$i/device.ptx" ] && ptxas_ok; then
			for a in sm_80 sm_90; do
				ptxas -arch=$a -c "$tmp/g$i/device.ptx" -o "$tmp/g$i/$a.o" ||
					{ fail "ptxas -arch=$a rejected the PTX of: $p"; return 1; }
			done
		fi
	done <<'GOLDEN'
gdev:kernel_exit { @[kernel] = count(); }
gdev:kernel_entry:*gemm* { @sm[sm] = count(); @w = lhist(warp, 0, 32, 1); }
gdev:access /store/ { @bytes[kernel] = sum(size); }
gdev:access { @pages[addr >> 21] = count(); }
gdev:kernel_exit { printf("%s block %d warp %d at %d\n", kernel, blockIdx.x, warp, nsecs); }
cuda:launch { @t[kernel] = nsecs; } gdev:kernel_entry { @lat[kernel] = hist(nsecs - @t[kernel]); }
interval:s:1 { @ = count(); print(@); clear(@); }
uprobe:libcuda:cuLaunchKernel { @[comm] = count(); }
gpu_mem:access { @freq[chunk]++; if (@freq[chunk] > 3) { move_tail(chunk); } return BYPASS; }
gpu_sched:task_init /comm == "llama-server"/ { set_timeslice(1000000); }
GOLDEN
}

. "$(dirname "$0")/../lib/cases.sh"
cases_main "${2:-}"
