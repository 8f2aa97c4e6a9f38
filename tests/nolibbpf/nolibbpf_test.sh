#!/usr/bin/env bash
# gpux built without libbpf: --dry-run (and --emit) compile every probe
# kind, uprobe targets and symbol globs resolve (libelf only), and
# running a kernel probe fails with a message, not a crash.
#   nolibbpf_test.sh GPUX CASE   run one case (ctest registers each)
#   nolibbpf_test.sh GPUX        run them all
set -u
GPUX=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

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
err_has() { grep -qE -- "$1" "$tmp/err" || { cat "$tmp/err"; fail "stderr lacks /$1/"; }; }
out_has() { grep -qE -- "$1" "$tmp/out" || { cat "$tmp/out"; fail "stdout lacks /$1/"; }; }
err_empty() { [ ! -s "$tmp/err" ] || { cat "$tmp/err"; fail "stderr not empty"; }; }
dry() { run 0 --dry-run -e "$1" && err_empty; }

# The premise: the module gpux loads has the compiler, not the attacher.
t_module_lacks_libbpf() {
	local mod
	mod="$(dirname "$GPUX")/libgpux-host.so"
	[ -f "$mod" ] || fail "no $mod"
	nm -D --defined-only "$mod" >"$tmp/syms" || fail "nm $mod"
	grep -qw host_compile "$tmp/syms" || fail "$mod lacks host_compile"
	if grep -qw kattach_open "$tmp/syms"; then fail "$mod has kattach_open"; fi
	if grep -qw host_bind_driver "$tmp/syms"; then fail "$mod has host_bind_driver"; fi
	if ldd "$mod" | grep -q 'libbpf\.so'; then fail "$mod needs libbpf.so"; fi
}
t_dry_vm() {
	dry 'BEGIN { @n = 1; printf("hi\n"); } interval:ms:100 { @n++; exit(); } END { print(@n); }'
}
t_dry_uprobe_lib() { dry 'uprobe:libc:malloc { @[comm] = count(); }'; }
# probe is sized from the library's path and the glob's matches, which
# are resolved while compiling
t_dry_uprobe_glob() { dry 'uprobe:libc:mall* { @[func] = count(); printf("%s\n", probe); }'; }
t_dry_uretprobe() { dry 'uretprobe:libc:malloc { @bytes = hist(retval); }'; }
t_dry_tracepoint() {
	if [ ! -d /sys/kernel/tracing/events ] && [ ! -d /sys/kernel/debug/tracing/events ]; then
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
			{ echo "SKIP: tracefs not mounted and mount failed"; return 77; }
	fi
	dry 'tracepoint:syscalls:sys_enter_openat { @[comm] = count(); }'
}
t_dry_kernel_and_vm() {
	dry 'BEGIN { printf("tracing\n"); } uprobe:libc:free { @ = count(); } END { print(@); }'
}
t_dry_cuda() { dry 'cuda:launch { @[kernel] = count(); } cuda:memcpy { @b[kind] = sum(bytes); }'; }
t_dry_gdev() { dry 'gdev:kernel_exit { @[kernel] = count(); }'; }
t_dry_cuda_gdev() {
	dry 'cuda:launch { @t[kernel] = nsecs; } gdev:kernel_entry { @lat[kernel] = hist(nsecs - @t[kernel]); }'
}
t_dry_gpu_mem() { dry 'gpu_mem:access { @ = count(); return DEFAULT; }'; }
t_dry_gpu_sched() { dry 'gpu_sched:task_init { set_timeslice(1000); }'; }
# probe is sized to hold the longest function the glob matches, which
# only reading the target's symbols (host_path.c, libelf) tells
t_probe_sized_by_glob() {
	local tgt="$tmp/gpux-built-without-libbpf" m want
	ln -s "$(readlink -f "$GPUX")" "$tgt" || return 1
	m=$({ nm --defined-only "$tgt"; nm -D --defined-only "$tgt"; } 2>/dev/null |
		awk '$2 ~ /^[TtWw]$/ && $3 ~ /^diag_/ { sub(/@.*/, "", $3); print length($3) }' |
		sort -n | tail -1)
	[ -n "$m" ] || fail "no diag_* function in $tgt" || return 1
	want=$(( (${#tgt} + m + 9 + 7) / 8 * 8 )) # "uprobe:" TARGET ":" SYM NUL
	(( want > 64 && want <= 192 )) || fail "$want bytes cannot tell a glob from none" || return 1
	run 0 -d ir -e "uprobe:$tgt:diag_* { printf(\"%s\\n\", probe); }" &&
		out_has "%sym = alloca \\[$want x i8\\]"
}
# what --dry-run compiled, written out: a BPF object for the host probes
t_emit_uprobe_glob() {
	run 0 --emit "$tmp/e" -e 'uprobe:libc:mall* { @[probe] = count(); }' || return 1
	[ "$(head -c 4 "$tmp/e/host.bpf.o" | od -An -c | tr -d ' ')" = '177ELF' ] ||
		fail "host.bpf.o is not an ELF object"
}
t_run_uprobe_refused() {
	run 1 -e 'uprobe:libc:malloc { @ = count(); }' &&
		err_has 'ERROR: this build cannot attach probes: libgpux-host.so was built without libbpf'
}
# with a command: refused before the command starts
t_run_tracepoint_cmd_refused() {
	run 1 -e 'tracepoint:syscalls:sys_enter_openat { @ = count(); }' -c "touch $tmp/ran" &&
		err_has 'cannot attach probes' || return 1
	[ ! -e "$tmp/ran" ] || fail "the command ran"
}
# driver probes: attaching and reading the driver's BTF need libbpf
t_run_gpu_mem_refused() {
	run 1 -e 'gpu_mem:access { move_tail(chunk); return BYPASS; }' &&
		err_has '^stdin:1:1-15: ERROR: this build cannot attach gpu_mem probes: libgpux-host.so was built without libbpf$'
}
t_dry_btf_dir_refused() {
	GPUX_BTF_DIR=$tmp run 1 --dry-run -e 'gpu_sched:task_init { set_timeslice(1000); }' &&
		err_has "^stdin:1:1-20: ERROR: gpu_sched probes need the driver's BTF, which this build cannot read: libgpux-host.so was built without libbpf$"
}
# root would not help: the build's limit is said first
t_run_no_root_refused() {
	command -v setpriv >/dev/null || { echo "SKIP: no setpriv"; return 77; }
	[ "$(id -u)" = 0 ] || { echo "SKIP: not root"; return 77; }
	setpriv --reuid=65534 --regid=65534 --clear-groups "$GPUX" \
		-e 'uretprobe:libc:malloc { @ = count(); }' >"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$?
	[ "$rc" = 1 ] || { cat "$tmp/err"; fail "exited $rc, expected 1"; }
	err_has 'built without libbpf'
}

. "$(dirname "$0")/../lib/cases.sh"
cases_main "${2:-}"
