#!/usr/bin/env bash
# Kernel probe runs (uprobe, uretprobe, tracepoint) with exact output.
#   live_test.sh GPUX TARGET CASE   run one case (ctest registers each)
#   live_test.sh GPUX TARGET        run them all
# TARGET is probe_tgt: N calls of gpux_tgt_add (returns the running sum)
# and N getppid(). Skips (77) without root, bpf() or tracefs.
set -u
GPUX=$1
TGT=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: not root"; exit 77
fi
if [ ! -d /sys/kernel/tracing/events ] && [ ! -d /sys/kernel/debug/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		{ echo "SKIP: tracefs not mounted and mount failed"; exit 77; }
fi

fail() { echo "FAIL: $*"; return 1; }

# run RC ARGS...: gpux with stdin from /dev/null, the status checked.
run() {
	local want=$1; shift
	"$GPUX" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$?
	if [ "$rc" != "$want" ]; then
		echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"
		fail "gpux $* exited $rc, expected $want"
	fi
}
# expect: stdout is exactly the here-document.
expect() {
	cat >"$tmp/want"
	diff -u "$tmp/want" "$tmp/out" || { echo "--- stderr"; cat "$tmp/err"; fail "stdout differs"; }
}
err_has() { grep -qE -- "$1" "$tmp/err" || { cat "$tmp/err"; fail "stderr lacks /$1/"; }; }

# list_pid GLOB: gpux -l GLOB under -p of a probe_tgt that waits, its
# pid left in the caller's $p; the status of the listing.
list_pid() {
	"$TGT" 1 5 >/dev/null &
	p=$!
	sleep 0.3
	run 0 -p "$p" -l "$1"
	local rc=$?
	kill "$p" 2>/dev/null; wait "$p" 2>/dev/null
	return "$rc"
}

t_uprobe_count() {
	run 0 -e "uprobe:$TGT:gpux_tgt_add { @ = count(); }" -c "$TGT 7" && expect <<OUT
Attaching 1 probe...
sum 28


@: 7
OUT
}
t_uretprobe_retval() {
	run 0 -e "uretprobe:$TGT:gpux_tgt_add { @[retval] = count(); @s = sum(retval); }" \
		-- "$TGT" 4 && expect <<OUT
Attaching 1 probe...
sum 10


@[1]: 1
@[3]: 1
@[6]: 1
@[10]: 1
@s: 20
OUT
}
t_comm_count() {
	run 0 -e "uprobe:$TGT:gpux_tgt_add { @[comm] = count(); }" -c "$TGT 3" && expect <<OUT
Attaching 1 probe...
sum 6


@[probe_tgt]: 3
OUT
}
t_tracepoint() {
	run 0 -e 'tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @ = count(); }' \
		-c "$TGT 9" && expect <<OUT
Attaching 1 probe...
sum 45


@: 9
OUT
}
# software: perf events sampled every N, on every CPU (dd's page faults
# and CPU clock; aliases and defaults); a hardware counter this machine
# may not have is refused with the reason, never half attached
t_software_events() {
	local dd="/usr/bin/dd if=/dev/zero of=/dev/null bs=1 count=300000"
	run 0 -e 'software:page-faults:1 /pid == cpid/ { @f[probe] = 1; }
s:cpu /pid == cpid/ { @c[probe] = 1; }' -c "$dd" && expect <<OUT
Attaching 2 probes...


@c[software:cpu]: 1
@f[software:page-faults:1]: 1
OUT
}
t_software_refused() {
	run 1 -e 'software:c* { @ = 1; }' || return
	err_has "software:c\\* names 5 events: a software probe samples one" || return
	run 1 -e 'software:cs:0 { @ = 1; }' || return
	err_has "software count must be a positive integer, not '0'"
}
t_hardware_counter() {
	# a counter the CPU has samples; one it lacks (a VM) is refused with
	# the reason and nothing stays attached
	"$GPUX" -e 'hardware:instructions:1000000 /pid == cpid/ { @ = 1; }' \
		-c "/usr/bin/dd if=/dev/zero of=/dev/null bs=1 count=300000" >"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$?
	case $rc in
	0) printf 'Attaching 1 probe...\n\n\n@: 1\n' | diff - "$tmp/out" || fail "stdout differs" ;;
	1) err_has "^stdin:1:1-30: ERROR: hardware:instructions:1000000: no CPU here counts this event" ;;
	*) cat "$tmp/err"; fail "gpux exited $rc" ;;
	esac
}
# a glob is one probe per tracepoint it matches (bpftrace's), each with
# its own args; one that matches none is refused
t_tracepoint_glob() {
	run 0 -e 'tracepoint:syscalls:sys_*_getppid /pid == cpid/ { @[probe] = count(); }
t:syscalls:sys_exit_getpp* /pid == cpid/ { @r[args->ret > 0] = count(); }' -c "$TGT 3" && expect <<OUT
Attaching 3 probes...
sum 6


@[tracepoint:syscalls:sys_enter_getppid]: 3
@[tracepoint:syscalls:sys_exit_getppid]: 3

@r[1]: 3
OUT
	run 1 -e 'tracepoint:nosuch*:x { @ = 1; }' || return
	err_has "^stdin:1:1-21: ERROR: tracepoints not found: nosuch\\*:x$"
}
t_tracepoint_args_arrow() {
	# bpftrace 0.17 writes a tracepoint's fields args->NAME
	run 0 -e 'tracepoint:syscalls:sys_exit_getppid /pid == cpid/ { @[args->ret > 0, args.ret == args->ret] = count(); }' \
		-c "$TGT 4" && expect <<OUT
Attaching 1 probe...
sum 10


@[1, 1]: 4
OUT
}
# An array field read by a variable index too (bpftrace takes literals
# only), and a literal past its end refused where it is written.
t_tracepoint_array_index() {
	run 0 -e 'tracepoint:raw_syscalls:sys_enter /pid == cpid && args.id == 231/ { $i = 0; printf("%d %d\n", args.args[$i], args.args[$i] == args.args[0]); }' \
		-c "$TGT 1" && expect <<OUT || return
Attaching 1 probe...
sum 1
0 1


OUT
	run 1 -e 'tracepoint:raw_syscalls:sys_enter { @ = args.args[6]; }' &&
		err_has "^stdin:1:51-52: ERROR: the index 6 is out of bounds for array of size 6$"
}
# debugf(): bpftrace's warning where it is called, nothing in the output,
# its lines in the kernel's trace buffer (a kernel probe's through
# bpf_trace_printk, BEGIN's from gpux's VM through trace_marker); more
# than three conversions refused as bpftrace refuses them.
t_debugf() {
	local tr=/sys/kernel/tracing/trace tok="gpuxdbg$$"
	[ -w "$tr" ] || tr=/sys/kernel/debug/tracing/trace
	run 0 -e "uprobe:$TGT:gpux_tgt_add { debugf(\"$tok %s %d\\n\", comm, arg1); }
		BEGIN { debugf(\"$tok begin %d\\n\", 42); }" -c "$TGT 2" && expect <<OUT || return
Attaching 2 probes...
sum 3


OUT
	[ "$(grep -c "^stdin:[12]:[0-9]*-[0-9]*: WARNING: The debugf() builtin is not recommended for production use. For more information see bpf_trace_printk in bpf-helpers(7).$" "$tmp/err")" = 2 ] ||
		{ cat "$tmp/err"; fail "the warnings"; return; }
	grep -q "bpf_trace_printk: $tok probe_tgt 1$" "$tr" && grep -q "bpf_trace_printk: $tok probe_tgt 2$" "$tr" &&
		grep -q "tracing_mark_write: $tok begin 42$" "$tr" ||
		{ grep "$tok" "$tr"; fail "the trace buffer's lines"; return; }
	run 1 -e 'BEGIN { debugf("%d %d %d %d\n", 1, 2, 3, 4); }' &&
		err_has '^stdin:1:9-44: ERROR: debugf: Cannot use more than 3 conversion specifiers$'
}
t_aliases() {
	# bpftrace's short provider names run as the long ones, and probe
	# says the long name, as bpftrace's does
	run 0 -e "u:$TGT:gpux_tgt_add { @u[probe] = count(); } ur:$TGT:gpux_tgt_add { @r[probe] = count(); }
		  t:syscalls:sys_enter_getppid /pid == cpid/ { @t[probe] = count(); }" \
		-c "$TGT 2" && expect <<OUT
Attaching 3 probes...
sum 3


@r[uretprobe:$TGT:gpux_tgt_add]: 2
@t[tracepoint:syscalls:sys_enter_getppid]: 2
@u[uprobe:$TGT:gpux_tgt_add]: 2
OUT
}
t_printf() {
	run 0 -e "uprobe:$TGT:gpux_tgt_add { printf(\"add %d %d\\n\", arg0, arg1); }" \
		-c "$TGT 3" || return 1
	grep -v '^sum' "$tmp/out" >"$tmp/out2"; mv "$tmp/out2" "$tmp/out"
	expect <<OUT
Attaching 1 probe...
add 0 1
add 1 2
add 3 3


OUT
}
t_exit() {
	# exit() ends gpux and the command (which would sleep 60 s) at once
	local t0=$SECONDS
	run 0 -e "uprobe:$TGT:gpux_tgt_add { @s = sum(arg1); exit(); }" \
		-c "$TGT 1 0 60" || return 1
	[ $((SECONDS - t0)) -lt 20 ] || fail "exit() did not end the command"
	grep -v '^sum' "$tmp/out" >"$tmp/out2"; mv "$tmp/out2" "$tmp/out"
	expect <<OUT
Attaching 1 probe...


@s: 1
OUT
}
t_hist() {
	run 0 -e "uretprobe:$TGT:gpux_tgt_add { @h = hist(retval); @m = max(retval); @a = avg(retval); }" \
		-c "$TGT 4" && expect <<OUT
Attaching 1 probe...
sum 10


@a: 5

@h: 
[1]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[2, 4)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[4, 8)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[8, 16)                1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@m: 10
OUT
}
t_pid() {
	"$TGT" 3 2 >/dev/null &
	local p=$!
	run 0 -e "uprobe:$TGT:gpux_tgt_add { @[comm] = count(); }" -p "$p" || return 1
	wait "$p"
	expect <<OUT
Attaching 1 probe...


@[probe_tgt]: 3
OUT
}
t_pid_only() {
	# another process of the same program is not counted under -p
	"$TGT" 2 2 >/dev/null &
	local p=$!
	"$TGT" 5 2 >/dev/null &
	local q=$!
	run 0 -e "uprobe:$TGT:gpux_tgt_add { @ = count(); }" -p "$p" || return 1
	wait "$p" "$q"
	expect <<OUT
Attaching 1 probe...


@: 2
OUT
}
t_exit_status() {
	run 3 -e "uprobe:$TGT:gpux_tgt_add { @ = count(); }" -c "$TGT 2; exit 3" || return 1
	grep -q '^@: 2$' "$tmp/out" || fail "no count"
}
t_no_root() {
	command -v setpriv >/dev/null || { echo "SKIP: no setpriv"; return 77; }
	setpriv --reuid=65534 --regid=65534 --clear-groups "$GPUX" \
		-e 'tracepoint:syscalls:sys_enter_getppid { @ = count(); }' -c true \
		>"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$?
	[ "$rc" = 1 ] || { cat "$tmp/err"; fail "exited $rc, expected 1"; }
	err_has 'ERROR: attaching this probe needs root' &&
		err_has '^tracepoint:syscalls:sys_enter_getppid'
}
# a missing target or function is an error at its attach point, as
# bpftrace says it, before anything attaches (no libbpf line)
t_missing_target() {
	run 1 -e 'uprobe:gpux_no_such_lib:foo { @ = count(); }' -c true &&
		err_has "^stdin:1:1-28: ERROR: uprobe target file 'gpux_no_such_lib' does not exist or is not executable$" ||
		return
	! grep -q libbpf "$tmp/err" || fail "a libbpf line"
}
t_missing_symbol() {
	run 1 -e "uprobe:$TGT:gpux_no_such_func { @ = count(); }" -c true &&
		err_has "^stdin:1:1-[0-9]+: ERROR: $TGT has no function gpux_no_such_func$" || return
	! grep -q libbpf "$tmp/err" || fail "a libbpf line"
}
t_begin_end() {
	# BEGIN after attaching and before the command runs, END after it
	# ends; maps used by kernel probes stay in the kernel
	run 0 -e "BEGIN { printf(\"Tracing\\n\"); @b = 1; } uprobe:$TGT:gpux_tgt_add { @n = count(); }
		  END { printf(\"bye\\n\"); print(@n); clear(@n); }" -c "$TGT 3" || return 1
	grep -v '^sum' "$tmp/out" >"$tmp/out2"; mv "$tmp/out2" "$tmp/out"
	expect <<OUT
Attaching 3 probes...
Tracing
bye
@n: 3


@b: 1
@n: 0
OUT
}
t_interval() {
	# interval probes beside a uprobe: the kernel map printed on a timer
	run 0 -e "uprobe:$TGT:gpux_tgt_add { @n = count(); } interval:ms:200 { print(@n); exit(); }" \
		-c "$TGT 2 0 5" || return 1
	grep -v '^sum' "$tmp/out" >"$tmp/out2"; mv "$tmp/out2" "$tmp/out"
	expect <<OUT
Attaching 2 probes...
@n: 2


@n: 2
OUT
}
t_glob() {
	# a symbol glob attaches to every function it matches, as bpftrace
	run 0 -e 'uprobe:libc:getp*id /pid == cpid/ { @ = count(); }' -c "$TGT 3" || return 1
	grep -v '^sum' "$tmp/out" >"$tmp/out2"; mv "$tmp/out2" "$tmp/out"
	expect <<OUT
Attaching $(nm -D --defined-only "$(ldconfig -p | awk '/libc.so.6 .*x86-64/ { print $NF; exit }')" |
	awk '$2 ~ /^[TtWw]$/ { sub(/@.*/, "", $3); print $3 }' | grep -E '^getp.*id$' | sort -u | wc -l) probes...


@: 3
OUT
}
t_glob_func() {
	# func and probe name the function each attachment fired for (its
	# BPF cookie indexes the names gpux wrote into a map)
	run 0 -e "uprobe:$TGT:gpux_tgt_* { @[func] = count(); @p[probe] = count(); }" -c "$TGT 4" &&
		grep -q '^@\[gpux_tgt_add\]: 4$' "$tmp/out" &&
		grep -qF "@p[uprobe:$TGT:gpux_tgt_add]: 4" "$tmp/out" || { cat "$tmp/out"; fail "func/probe"; return 1; }
	run 0 -e 'uretprobe:libc:getp*id /pid == cpid/ { @[func, probe] = count(); }' -c "$TGT 3" &&
		grep -qE '^@\[getppid, uretprobe:/.*libc\.so\.6:getppid\]: 3$' "$tmp/out" ||
		{ cat "$tmp/out"; fail "libc glob func"; }
}
# probe names longer than a string (64) print whole, as bpftrace's do,
# whatever the length of the checkout's path
t_long_probe_name() {
	local dir="$tmp/a_directory_name_long_enough_to_push_probe_names_past_64_bytes"
	mkdir -p "$dir" && cp "$TGT" "$dir/probe_tgt" || { fail "cannot copy $TGT"; return 1; }
	local t="$dir/probe_tgt"
	run 0 -e "uprobe:$t:gpux_tgt_a* { @g[probe] = count(); } uprobe:$t:gpux_tgt_add { @p[probe] = count(); }" -c "$t 2" &&
		grep -qxF "@g[uprobe:$t:gpux_tgt_add]: 2" "$tmp/out" &&
		grep -qxF "@p[uprobe:$t:gpux_tgt_add]: 2" "$tmp/out" ||
		{ cat "$tmp/out"; fail "probe names cut"; }
}
# Addresses in probe_tgt: gpux_tgt_add's start and size (nm), and the
# start of its last instruction (objdump), an offset into it that is on
# an instruction boundary whatever the compiler made of it.
tgt_sym() { nm -S "$TGT" | awk '$4 == "gpux_tgt_add" { print $1, $2 }'; }
tgt_last_insn() {
	objdump -d --no-show-raw-insn "$TGT" |
		awk '/<gpux_tgt_add>:$/ { f = 1; next } f && !NF { exit } f { a = $1 } END { sub(/:$/, "", a); print a }'
}
t_uprobe_offset() {
	# uprobe:PATH:FUNC+OFFSET fires at that byte of the function; func
	# is the function, probe the attach point with a decimal offset
	local start size last off
	read -r start size <<<"$(tgt_sym)"
	last=$(tgt_last_insn)
	off=$((0x$last - 0x$start))
	[ "$off" -gt 0 ] || { fail "gpux_tgt_add has one instruction"; return 1; }
	run 0 -e "uprobe:$TGT:gpux_tgt_add+$(printf 0x%x "$off") { @[func, probe] = count(); }" \
		-c "$TGT 6" && expect <<OUT
Attaching 1 probe...
sum 21


@[gpux_tgt_add, uprobe:$TGT:gpux_tgt_add+$off]: 6
OUT
}
t_uprobe_address() {
	# uprobe:PATH:ADDRESS: an address in the file; func names the
	# function holding it, probe the address in decimal, as bpftrace's
	local start size last
	read -r start size <<<"$(tgt_sym)"
	last=$(tgt_last_insn)
	run 0 -e "uprobe:$TGT:0x$start { @[func, probe] = count(); }
		  uprobe:$TGT:$((0x$last)) { @n = count(); }
		  uretprobe:$TGT:0x$start { @r = sum(retval); }" -c "$TGT 4" && expect <<OUT
Attaching 3 probes...
sum 10


@[gpux_tgt_add, uprobe:$TGT:$((0x$start))]: 4
@n: 4
@r: 20
OUT
}
t_uprobe_offset_outside() {
	# an offset past the function's end is refused at its attach point
	local start size
	read -r start size <<<"$(tgt_sym)"
	local ap="uprobe:$TGT:gpux_tgt_add+$((0x$size))"
	run 1 -e "$ap { @ = count(); }" -c true &&
		err_has "^stdin:1:1-$((${#ap} + 1)): ERROR: Offset outside the function bounds \\('gpux_tgt_add' size is $((0x$size))\\)$"
}
t_uprobe_address_refused() {
	# no function holds the address; a uretprobe inside a function
	local start size last
	read -r start size <<<"$(tgt_sym)"
	last=$(tgt_last_insn)
	run 1 -e "uprobe:$TGT:0x1 { @ = count(); }" -c true &&
		err_has "^stdin:1:1-[0-9]+: ERROR: Could not resolve address: $TGT:0x1 \\(no function holds it\\)$" || return 1
	run 1 -e "uretprobe:$TGT:0x$last { @ = count(); }" -c true &&
		err_has "ERROR: a uretprobe attaches at a function's start, and 0x$last is gpux_tgt_add\+$((0x$last - 0x$start))$"
}
t_glob_none() {
	run 1 -e "uprobe:$TGT:no_such_fn_* { @ = count(); }" -c true &&
		err_has 'no function of .* matches no_such_fn_\*'
}
t_cpid_needs_command() {
	run 1 -e "uprobe:$TGT:gpux_tgt_add /pid == cpid/ { @ = count(); }" &&
		err_has 'cpid needs a command: run the program with -c CMD or -- CMD ARGS'
}
# BEGIN, interval and END write a map the uprobe reads and writes: each
# run's changes (a delete too) are written into the kernel's map after
# it, so the uprobe sees BEGIN's and the interval's, END sees all.
t_vm_writes_kernel_map() {
	run 0 -e "BEGIN { @x = 1; @g[1] = 1; @g[2] = 2; }
		interval:ms:100 /@x < 100/ { @x = @x + 100; delete(@g[1]); }
		uprobe:$TGT:gpux_tgt_add { @x = @x * 2; @h = @g[1] + @g[2]; }
		END { @x = @x + 1; }" -c "$TGT 3 1" || return
	grep -qx '@x: 809' "$tmp/out" && grep -qx '@h: 2' "$tmp/out" && grep -qx '@g\[2\]: 2' "$tmp/out" &&
		! grep -q '^@g\[1\]' "$tmp/out" || { cat "$tmp/out" "$tmp/err"; fail "the writes"; }
}
# interval and END read what the uprobe wrote (copied from the kernel
# before each of them runs)
t_vm_reads_kernel_map() {
	run 0 -e "uprobe:$TGT:gpux_tgt_add { @s = arg0 + arg1; } interval:ms:100 { @seen = @s; } END { printf(\"end %d\\n\", @s); }" -c "$TGT 4" &&
		grep -q '^end 10$' "$tmp/out" || { cat "$tmp/out"; fail "END did not read @s"; }
}
t_libc_name() {
	# a bare library name resolves as bpftrace's does (libc -> libc.so.6)
	run 0 -e 'uprobe:libc:getppid /pid == cpid/ { @ = count(); }' -c "$TGT 4" &&
		grep -q '^@: 4$' "$tmp/out" || fail "libc getppid not counted 4 times"
}
t_list_uprobes() {
	# -l lists a binary's functions as bpftrace 0.17 does: sorted, the
	# target resolved; -p lists the process's executable through
	# /proc/PID/root
	run 0 -l "uprobe:$TGT:gpux_tgt*" || return 1
	expect <<OUT || return 1
uprobe:$TGT:gpux_tgt_add
OUT
	run 0 -l "u:$TGT:gpux_tgt*" && expect <<OUT || return 1
uprobe:$TGT:gpux_tgt_add
OUT
	run 0 -l "uretprobe:$TGT:*" || return 1
	grep -qxF "uretprobe:$TGT:main" "$tmp/out" && sort -c "$tmp/out" ||
		{ cat "$tmp/out"; fail "uretprobe listing"; return 1; }
	run 1 -l "uprobe:$tmp/none:*" &&
		err_has "uprobe target file '$tmp/none' does not exist or is not readable" || return 1
	local p
	list_pid 'uprobe:gpux_tgt*' || return 1
	expect <<OUT
uprobe:/proc/$p/root$TGT:gpux_tgt_add
OUT
}
t_dwarf_args() {
	# args.NAME from probe_tgt's DWARF (built with -g): integers, a
	# string through str(), and past six registers on the stack (where
	# bpftrace 0.17 fails compiling); -lv lists them as bpftrace does
	run 0 -e "uprobe:$TGT:gpux_stack_args { printf(\"%ld %ld %ld %ld\n\", args->a, args->f, args->g, args.h); }
		uprobe:$TGT:gpux_bytes { printf(\"%s %d\n\", str(args->p), args->n); }" -c "$TGT 1" || return 1
	grep -qxF "1 6 7 8" "$tmp/out" && grep -qxF "$(printf 'gpux\tbuf\001\377 10')" "$tmp/out" ||
		{ cat "$tmp/out"; fail "args values"; return 1; }
	# a pointer to a struct: its definition from DWARF, read through
	# -> (bpftrace 0.17 aborts on this file's DWARF for gpux_walk)
	run 0 -e "uprobe:$TGT:gpux_walk { printf(\"%d %d %s %ld %d %s\n\", args->r->id, args->r->kind,
		args->r->name, args->r->vals[2], args->r->next->kind, args->r->next->name); }" -c "$TGT 1" ||
		return 1
	grep -qxF "1 5 head 30 -3 tail" "$tmp/out" || { cat "$tmp/out"; fail "struct args"; return 1; }
	run 0 -lv "uprobe:$TGT:gpux_walk" && expect <<OUT || return 1
uprobe:$TGT:gpux_walk
    const struct gpux_rec* r
    const int* nums
OUT
	run 1 -e "uprobe:$TGT:gpux_tgt_add { @ = args->c; }" &&
		err_has "^stdin:1:[0-9-]+: ERROR: gpux_tgt_add has no argument 'c'$" || return 1
	run 1 -e "uretprobe:$TGT:gpux_tgt_add { @ = args->a; }" &&
		err_has "has no DWARF arguments: a uretprobe fires when the function returns" || return 1
	run 1 -e 'uprobe:/bin/true:main { @ = args->argc; }' &&
		err_has "ERROR: uprobe:/bin/true:main has no DWARF arguments: /bin/true has no DWARF"
}
t_jiffies() {
	# jiffies (bpftrace 0.17 lacks it; later versions read it the same
	# way): the kernel's ticks, rising
	run 0 -e "uprobe:$TGT:gpux_tgt_add { @j[arg1] = jiffies; }
		END { printf(\"%d\\n\", @j[3] >= @j[1] && @j[1] > 0); clear(@j); }" -c "$TGT 3" || return 1
	grep -qxF 1 "$tmp/out" || { cat "$tmp/out"; fail "jiffies"; }
}
t_kernel_types() {
	# the running kernel's records from BTF, five pointers deep to a
	# kernel char * (the executable's name), from a tracepoint and from
	# a uprobe, whose own reads are the process's (bpftrace 0.17 stops
	# short of these: it reports the fields missing)
	[ -r /sys/kernel/btf/vmlinux ] || { echo "SKIP: the kernel has no BTF"; return 77; }
	local name='str(curtask->mm->exe_file->f_path.dentry->d_name.name)'
	run 0 -e "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { printf(\"t %s\n\", $name); }
		uprobe:$TGT:gpux_tgt_add { printf(\"u %s %d\n\", $name, curtask->pid == (int32)pid); }" \
		-c "$TGT 1" || return 1
	grep -qxF "t probe_tgt" "$tmp/out" && grep -qxF "u probe_tgt 1" "$tmp/out" ||
		{ cat "$tmp/out"; fail "kernel records"; return 1; }
	# a field the kernel's record lacks, said as for the script's
	run 1 -e 'tracepoint:syscalls:sys_enter_getppid { @ = curtask->no_such_field; }' &&
		err_has "^stdin:1:[0-9-]+: ERROR: struct task_struct has no field named no_such_field$"
}
# probe_tgt's USDT probes: where it was built without sys/sdt.h it has
# none, and these skip
has_usdt() { grep -q stapsdt "$TGT"; }
t_list_usdt() {
	has_usdt || { echo "SKIP: probe_tgt has no USDT probes"; return 77; }
	# sorted, once each, the target as written (bpftrace 0.17's listing)
	run 0 -l "usdt:$TGT:*" && expect <<OUT || return 1
usdt:$TGT:gpux_end:done
usdt:$TGT:gpux_tgt:guarded
usdt:$TGT:gpux_tgt:kinds
usdt:$TGT:gpux_tgt:loop
usdt:$TGT:gpux_tgt:name
OUT
	run 0 -l "usdt:$TGT:gpux_tgt:*o*" && expect <<OUT || return 1
usdt:$TGT:gpux_tgt:loop
OUT
	run 0 -l "U:$TGT:*:done" && expect <<OUT || return 1
usdt:$TGT:gpux_end:done
OUT
	run 1 -l "usdt:$tmp/none:*" &&
		err_has "usdt target file '$tmp/none' does not exist or is not executable" || return 1
	local p
	list_pid 'usdt:*:loop' || return 1
	expect <<OUT
usdt:/proc/$p/root$TGT:gpux_tgt:loop
OUT
}
t_usdt_pid() {
	has_usdt || { echo "SKIP: probe_tgt has no USDT probes"; return 77; }
	# -p without a target: the probes of every file the process maps
	"$TGT" 3 1 >/dev/null &
	local p=$!
	run 0 -p "$p" -e 'usdt::gpux_tgt:loop { printf("%s %d\n", probe, arg1); }'
	local rc=$?
	wait "$p" 2>/dev/null
	[ "$rc" = 0 ] && expect <<OUT
Attaching 1 probe...
usdt:/proc/$p/root$TGT:gpux_tgt:loop -1
usdt:/proc/$p/root$TGT:gpux_tgt:loop -2
usdt:/proc/$p/root$TGT:gpux_tgt:loop -3


OUT
}
t_usdt_arg_range() {
	has_usdt || { echo "SKIP: probe_tgt has no USDT probes"; return 77; }
	# an argument a site lacks is an error at its use (bpftrace's words)
	run 1 -e "usdt:$TGT:gpux_tgt:* { @[arg2] = count(); }" -c "$TGT 1" &&
		err_has "ERROR: couldn't get argument 2 for $TGT:gpux_tgt:(guarded|kinds)" &&
		err_has "HINT: gpux_tgt:(guarded|kinds) has [12] arguments?: arg0" || return 1
	run 1 -e "usdt:$TGT:gpux_end:done { @ = arg0; }" -c "$TGT 1" &&
		err_has "HINT: gpux_end:done has no arguments" || return 1
	run 1 -e "usdt:$TGT:gpux_tgt:nope { @ = count(); }" -c "$TGT 1" &&
		err_has "no usdt probe gpux_tgt:nope in $TGT"
}
has_wp() { "$TGT" wpcheck; }
t_watch_pid() {
	has_wp || { echo "SKIP: no hardware watchpoints here"; return 77; }
	# FUNC+argN under -p: the function of /proc/PID/exe; the process
	# stopped at the call goes on once the watchpoint is set
	"$TGT" 3 1 >/dev/null &
	local p=$!
	run 0 -e 'watchpoint:gpux_watch+arg0:8:w { @[probe] = count(); }' -p "$p" || return 1
	wait "$p" || fail "probe_tgt failed" || return 1
	expect <<OUT
Attaching 1 probe...


@[watchpoint:/proc/$p/exe:gpux_watch:8:w]: 6
OUT
}
t_watch_exit_resumes() {
	has_wp || { echo "SKIP: no hardware watchpoints here"; return 77; }
	# exit() at the first hit: gpux leaves, and the -p process (stopped
	# for the second call's setup or not) runs to its end
	"$TGT" 3 1 >/dev/null &
	local p=$!
	run 0 -e 'watchpoint:gpux_watch+arg0:8:w { exit(); }' -p "$p" || return 1
	for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
	if kill -0 "$p" 2>/dev/null; then
		grep State "/proc/$p/status"
		kill -CONT "$p"
		fail "probe_tgt still runs after gpux left"
		return 1
	fi
	wait "$p" || fail "probe_tgt failed"
}
t_watch_needs_process() {
	run 1 -e 'watchpoint:gpux_watch+arg0:8:w { @ = count(); }' &&
		err_has 'ERROR: -p PID or -c CMD required for watchpoint'
}
t_watch_refused() {
	has_wp || { echo "SKIP: no hardware watchpoints here"; return 77; }
	# an address the debug registers cannot take (unaligned): located,
	# nothing left attached
	run 1 -e 'watchpoint:0x10000001:8:w { @ = count(); }' -c "$TGT 1" &&
		err_has 'watchpoint:0x10000001:8:w: cannot watch 8 bytes at 0x10000001: Invalid argument'
}
t_sigint() {
	"$GPUX" -e 'tracepoint:syscalls:sys_enter_getppid /comm == "gpux_none"/ { @ = count(); }' \
		>"$tmp/out" 2>"$tmp/err" </dev/null &
	local g=$!
	for _ in $(seq 100); do grep -q Attaching "$tmp/out" 2>/dev/null && break; sleep 0.05; done
	kill -INT "$g"
	wait "$g"
	local rc=$?
	[ "$rc" = 0 ] || fail "exited $rc after SIGINT"
	# a count() without keys prints 0 when nothing counted (bpftrace 0.17)
	expect <<OUT
Attaching 1 probe...


@: 0
OUT
}

# -l as bpftrace 0.17 takes it: a glob for the target file, for the
# provider, or for the whole name; a library that is not executable;
# and a pattern no attach point could hold.
t_list_globs() {
	mkdir -p "$tmp/bin" && cp "$TGT" "$tmp/bin/probe_tgt" && cp "$TGT" "$tmp/bin/probe_tgt2" &&
		cp "$TGT" "$tmp/bin/lib_noexec.so" && chmod -x "$tmp/bin/lib_noexec.so" || return 1
	run 0 -l "uprobe:$tmp/bin/probe_tgt*:gpux_tgt_add" && expect <<OUT || return 1
uprobe:$tmp/bin/probe_tgt:gpux_tgt_add
uprobe:$tmp/bin/probe_tgt2:gpux_tgt_add
OUT
	run 0 -l "*:$tmp/bin/probe_tgt:gpux_tgt_add" || return 1
	grep -qx "uprobe:$tmp/bin/probe_tgt:gpux_tgt_add" "$tmp/out" &&
		grep -qx "uretprobe:$tmp/bin/probe_tgt:gpux_tgt_add" "$tmp/out" &&
		[ ! -s "$tmp/err" ] || { cat "$tmp/out" "$tmp/err"; fail "provider glob"; return 1; }
	run 0 -l "uprobe:$tmp/bin/lib_noexec.so:gpux_tgt_add" && expect <<OUT || return 1
uprobe:$tmp/bin/lib_noexec.so:gpux_tgt_add
OUT
	run 0 -l '*sched_process_exi*' && expect <<OUT || return 1
tracepoint:sched:sched_process_exit
OUT
	run 1 -l '\n' && err_has "invalid character '\\\\' in the search pattern"
}
# A target named by a relative path without ./, and a function name in
# quotes with an offset, as bpftrace reads them.
t_uprobe_relative_quoted() {
	mkdir -p "$tmp/sub" && cp "$TGT" "$tmp/sub/probe_tgt" || return 1
	(cd "$tmp" && "$GPUX" -e 'uprobe:sub/probe_tgt:"gpux_tgt_add"+0 { @ = count(); }' \
		-c "sub/probe_tgt 3" >"$tmp/out" 2>"$tmp/err") || { cat "$tmp/err"; fail "rc"; return 1; }
	grep -qx '@: 3' "$tmp/out" || { cat "$tmp/out" "$tmp/err"; fail "count"; }
}
# uaddr() points to an integer of the object's size, as bpftrace types
# it: * reads 4 bytes of an int, 2 of a short, 8 of a long. Its address
# is the symbol's, so the program must not be position-independent.
t_uaddr_sized() {
	local np=${TGT}_nopie
	[ -x "$np" ] || { echo "SKIP: no $np"; return 77; }
	run 0 -e "uprobe:$np:gpux_tgt_add /arg1 == 1/ { printf(\"%x %d %lx\n\",
		*uaddr(\"gpux_tgt_int\"), *uaddr(\"gpux_tgt_short\"), *uaddr(\"gpux_tgt_long\")); }" \
		-c "$np 2" && grep -qx '12345678 -2 1122334455667788' "$tmp/out" ||
		{ cat "$tmp/out" "$tmp/err"; fail "uaddr reads"; }
}
# Probes on one software event run in the order written, as bpftrace's:
# the kernel runs such an event's handlers newest first.
t_software_order() {
	run 0 -e 'software:page-faults:1 { @a = 1; if (@go == 1) { printf("first"); } }
		software:page-faults:1 { @b = 1; if (@go == 1) { printf(" second\n"); exit(); } }
		software:page-faults:1 { if (@a == 1 && @b == 1) { @go = 1; } }' -c "$TGT 200" &&
		# faults on another CPU at the same time may add a "first"
		grep -Eqx '(first)+ second' "$tmp/out" || { cat "$tmp/out" "$tmp/err"; fail "order"; }
}
# strcontains() of a string a probe reads (bpftrace 0.17 runs out of BPF
# stack here): found at its start, in its middle, not at all, empty.
t_strcontains() {
	run 0 -e "uprobe:$TGT:gpux_bytes { \$s = str(arg0); printf(\"%d %d %d %d\n\",
		strcontains(\$s, \"gpux\"), strcontains(\$s, \"buf\"), strcontains(\$s, \"bug\"),
		strcontains(\$s, \"\")); }" -c "$TGT 1" && grep -qx '1 1 0 1' "$tmp/out" ||
		{ cat "$tmp/out" "$tmp/err"; fail "strcontains"; }
}
# Ctrl-C while the probes' records arrive as fast as their actions run
# (each system() switches tasks, which fires the probe again): gpux still
# ends, runs END, and says what it dropped. The bound is generous, a hang
# check, not a timing.
t_sigint_flood() {
	"$GPUX" --unsafe -e 'tracepoint:sched:sched_switch { system("true"); } END { printf("end\n"); }' \
		>"$tmp/out" 2>"$tmp/err" </dev/null &
	local g=$!
	for _ in $(seq 100); do grep -q Attaching "$tmp/out" 2>/dev/null && break; sleep 0.05; done
	sleep 1
	kill -INT "$g"
	for _ in $(seq 300); do kill -0 "$g" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$g" 2>/dev/null; then
		kill -KILL "$g"; wait "$g" 2>/dev/null
		fail "still running 30 s after SIGINT"
		return 1
	fi
	wait "$g"
	local rc=$?
	[ "$rc" = 0 ] || { cat "$tmp/err"; fail "exited $rc after SIGINT"; return 1; }
	grep -qx end "$tmp/out" || { tail -3 "$tmp/out"; fail "END did not run"; }
}
# bpftrace's runtime test engine waits for this line on stderr before it
# starts a test's AFTER command; it comes once the probes are attached.
t_notify_attached() {
	__BPFTRACE_NOTIFY_PROBES_ATTACHED=1 run 0 \
		-e "uprobe:$TGT:gpux_tgt_add { @ = count(); }" -c "$TGT 2" &&
		err_has '^__BPFTRACE_NOTIFY_PROBES_ATTACHED$' &&
		grep -q '^@: 2$' "$tmp/out" || fail "no count"
	run 0 -e "uprobe:$TGT:gpux_tgt_add { @ = count(); }" -c "$TGT 2"
	! grep -q NOTIFY "$tmp/err" || fail "the line came without the variable"
}
# --info asks the kernel: a program that loads here is reported as such.
# iter: the kernel's iterators, each object once. A waiting probe_tgt
# (stdio on /dev/null) is the process whose tasks, files and maps the
# iterators must list exactly as /proc does.
iter_tgt() {
	"$TGT" 1 5 </dev/null >/dev/null 2>&1 &
	p=$!
	sleep 0.3
}
iter_done() { kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; }
t_iter_task() {
	iter_tgt
	run 0 -e "iter:task /ctx->task->tgid == $p/ { printf(\"%s %d %d\n\", ctx->task->comm,
		ctx->task->pid, ctx->task->tgid); }" && expect <<OUT
Attaching 1 probe...
probe_tgt $p $p


OUT
	local rc=$?
	iter_done
	return "$rc"
}
# iter_as_proc WHAT EXPECTED PROGRAM: PROGRAM's stdout is exactly
# EXPECTED (built from what /proc says of probe_tgt $p).
iter_as_proc() {
	run 0 -e "$3" && { printf '%s' "$2" | diff -u - "$tmp/out"; } ||
		{ cat "$tmp/err"; fail "$1 differ from /proc/$p"; }
	local rc=$?
	iter_done
	return "$rc"
}
# every open file of it, with the kernel's path of each; END after
t_iter_task_file() {
	iter_tgt
	local want
	want=$(for f in /proc/$p/fd/*; do echo "${f##*/} $(readlink "$f")"; done | sort -n)
	iter_as_proc files "Attaching 2 probes...
$want
end


" "iter:task_file /ctx->task->tgid == $p/ { printf(\"%d %s\n\", ctx->fd,
		path(ctx->file->f_path)); } END { printf(\"end\n\"); }"
}
t_iter_task_vma() {
	iter_tgt
	local want
	want=$(cut -d' ' -f1 "/proc/$p/maps" | grep -v '^ffffffffff600000-')
	iter_as_proc maps "Attaching 1 probe...
$want


" "iter:task_vma /ctx->task->tgid == $p/ { printf(\"%lx-%lx\n\", ctx->vma->vm_start,
		ctx->vma->vm_end); }"
}
# Every memory map of every task: thousands of records, well past what
# one read of the iterator takes, read as the kernel writes them: as
# many lines as the kernel's own count of calls, none lost, none run
# twice; the last call (no object) is not a probe's.
t_iter_every_vma() {
	run 0 -e 'iter:task_vma { printf("%lx %s\n", ctx->vma->vm_start, ctx->task->comm);
		@ = count(); if (ctx->vma == 0) { @null = count(); } }' || return 1
	local lines n
	lines=$(grep -cE '^[0-9a-f]+ ' "$tmp/out")
	n=$(sed -n 's/^@: //p' "$tmp/out")
	[ "$lines" -gt 200 ] && [ "$lines" = "$n" ] && grep -qx '@null: 0' "$tmp/out" ||
		{ tail -5 "$tmp/out"; fail "$lines lines, @ says $n"; }
}
# BEGIN's map is read by the iterator; -f json; exit() ends the run
t_iter_json() {
	iter_tgt
	run 0 -f json -e "BEGIN { @want = $p; } iter:task /ctx->task->tgid == @want/ {
		printf(\"%s\n\", ctx->task->comm); @n = count(); }" && expect <<OUT
{"type": "attached_probes", "data": {"probes": 2}}
{"type": "printf", "data": "probe_tgt\n"}


{"type": "map", "data": {"@n": 1}}
{"type": "map", "data": {"@want": $p}}
OUT
	local rc=$?
	iter_done
	return "$rc"
}
# buf()s as big as their lengths: six in one printf fit the BPF stack
# (each was 72 bytes), the bytes as %r, %rx and %rh print them.
t_buf_six() {
	run 0 -e "uprobe:$TGT:gpux_bytes { printf(\"%r|%r|%rx|%rh|%r|%r\n\", buf(arg0, 4),
		buf(arg0 + 4, 4), buf(arg0 + 8, 2), buf(arg0, 2), buf(arg0, arg1), buf(arg0, 1)); }" \
		-c "$TGT 1" && expect <<'OUT'
Attaching 1 probe...
gpux|\x09buf|\x01\xff|67 70|gpux\x09buf\x01\xff|g
sum 1


OUT
}
# Records as map keys and values, read a dozen times in one probe: each
# read takes the statement's stack only (so 9 reads of 64 bytes fit),
# and a key or value as big as the record is stored from where it was
# read.
t_record_key_value() {
	run 0 -e "struct R { int id; short kind; char name[12]; long vals[3]; unsigned char flag;
		struct R *next; } uprobe:$TGT:gpux_walk { \$r = *(struct R *)arg0; @v[1] = *(struct R *)arg0;
		@k[*(struct R *)arg0] = 7; @n[*((struct R *)arg0)->next] = 8;
		\$i = 0; unroll(9) { @u[\$i] = *(struct R *)arg0; \$i++; }
		printf(\"%d %s %d\n\", \$r.id, @v[1].name, @v[1].vals[2]); }" -c "$TGT 1" || return 1
	grep -qx '1 head 30' "$tmp/out" && [ "$(grep -c '^@u\[[0-8]\]: { .id = 1, ' "$tmp/out")" = 9 ] && grep -q '^@k\[{.id=1,.kind=5,.name=head,' "$tmp/out" &&
		grep -q '^@n\[{.id=2,.kind=-3,.name=tail,.vals=\[7,-8,9\],.flag=200,' "$tmp/out" ||
		{ cat "$tmp/out" "$tmp/err"; fail "records as keys and values"; }
}
# iter:KIND:PIN: the iterator pinned in the BPF file system, gpux gone;
# each read of the file runs it, its printf() the kernel's seq_printf
# (flags, widths, strings, %p as bpftrace prints it).
t_iter_pinned() {
	local fs=/sys/fs/bpf pin=gpux_live_$$
	if ! grep -q " $fs bpf " /proc/mounts; then
		mount -t bpf bpf "$fs" 2>/dev/null || { echo "SKIP: no BPF file system at $fs"; return 77; }
	fi
	iter_tgt
	run 0 -e "iter:task:$pin /ctx->task->tgid == $p/ { printf(\"%s|%-6d|%5u|%x|%p|%c\n\",
		ctx->task->comm, ctx->task->pid, 42, 255, 4096, 65); @calls = count(); }" || { iter_done; return 1; }
	local want="Attaching 1 probe...
Program pinned to $fs/$pin


@calls: 0"
	printf '%s\n' "$want" | diff -u - "$tmp/out" || { iter_done; rm -f "$fs/$pin"; fail "gpux's output"; return 1; }
	local got
	got=$(cat "$fs/$pin"; cat "$fs/$pin")
	rm -f "$fs/$pin"
	iter_done
	[ "$got" = "$(printf 'probe_tgt|%-6d|   42|ff|0x1000|A\nprobe_tgt|%-6d|   42|ff|0x1000|A' "$p" "$p")" ] ||
		{ printf '%s\n' "$got"; fail "the pinned iterator's text"; }
}
t_info() {
	run 0 --info &&
		grep -q '^Kernel helpers$' "$tmp/out" &&
		grep -q '^  probe_read_user: yes$' "$tmp/out" &&
		grep -q '^  tracepoint: yes$' "$tmp/out" &&
		grep -q '^  uprobe: yes$' "$tmp/out" &&
		grep -q '^  kfunc: no$' "$tmp/out" &&
		grep -q '^  iter:task_file: yes$' "$tmp/out" &&
		grep -q '^GPU$' "$tmp/out" || { cat "$tmp/out"; fail "--info lacks a line"; }
}

. "$(dirname "$0")/../lib/cases.sh"
cases_main "${3:-}"
