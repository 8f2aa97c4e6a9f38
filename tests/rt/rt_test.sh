#!/usr/bin/env bash
# libgpux-rt.so in real processes, against the fake libcuda.so.1: the
# programs (drv_app linked with libcuda, gpa_app through dlopen and
# cuGetProcAddress) run with the runtime preloaded, under rt_ctl (the
# controller's stand-in, which reports the session segment afterwards)
# or under gpux itself. Usage: rt_test.sh CASE (ctest's way), or no
# argument for all. The paths come from the environment (CMakeLists.txt):
# RT_LIB RT_FAKE_DIR RT_CTL RT_DRV_APP RT_API_APP RT_GPA_APP RT_GPUX RT_CUDA_DIR
# RT_PTXAS RT_NEXT_LIB RT_LIB_ARCHS (the SMs of the runtime's helper
# library cubins); RT_FIRST: libraries to preload before the runtime
# (the ASan runtime and asan_dlsym.c in the sanitizer build, where
# RT_SANITIZED=ON). Exact outputs: expected/ (RT_BLESS=1 writes the
# missing ones, to be read before they are kept). RT_KNOWN_BUGS=1 runs
# the cases of runtime bugs not fixed yet. The fake driver's log
# (fake_cuda.c) tells what the driver was given.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

PTX=$RT_CUDA_DIR/kern.ptx
FATBIN=$RT_CUDA_DIR/kern_sass.fatbin
MANY=$RT_CUDA_DIR/kern_many_sass.fatbin
CUBIN=$RT_CUDA_DIR/kern.cubin
PTX_FATBIN=$RT_CUDA_DIR/kern_ptx.fatbin
if [ ! -e "$PTX" ] || [ ! -e "$FATBIN" ] || [ ! -e "$CUBIN" ] || [ ! -e "$PTX_FATBIN" ]; then
	echo "SKIP: no nvcc output in $RT_CUDA_DIR"
	exit 77
fi
PRELOAD=$RT_LIB
[ -n "${RT_FIRST:-}" ] && PRELOAD=$RT_FIRST:$RT_LIB
export LD_LIBRARY_PATH=$RT_FAKE_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export FAKE_CUDA_LOG=$tmp/log FAKE_CUDA_SAVE=$tmp/save
mkdir -p "$tmp/save"
# gpux's module cache (rt_cache.c) is each case's own, empty at first
export GPUX_CACHE_DIR=$tmp/gpux-cache
# no Triton or Inductor cache but the cases' own (rt_triton.c)
export TRITON_CACHE_DIR=$tmp/no-triton-cache TORCHINDUCTOR_CACHE_DIR=$tmp/no-inductor-cache
# the Compute Sanitizer: not found, whatever this machine has (its
# messages are the same everywhere)
export GPUX_SANITIZER_LIB=$tmp/no-sanitizer/libsanitizer-public.so
# CUPTI: not found either (the toolkit's cannot work with the fake
# driver): cuda:kernel_end times launches with CUDA events
export GPUX_CUPTI_LIB=$tmp/no-cupti/libcupti.so
unset GPUX_SESSION FAKE_CUDA_PRINTF FAKE_CUDA_REFUSE FAKE_CUDA_PTXAS FAKE_CUDA_OLD_JIT FAKE_CUDA_NO_MEMOPS

COUNT='gdev:kernel_exit { @[kernel] = count(); }'
# A count into a hashed map (a key the compiler cannot bound): the probes
# need the library's hash tables, which is when a patched module is
# linked with its cubin; COUNT's array update goes with the module as PTX
# (rt_image.c). The fake counts by kernel whatever the key.
HCOUNT='gdev:kernel_exit { @[gtid] = count(); }'
PRINTF='gdev:kernel_exit { printf("%s lane %d\n", kernel, lane); }'
EXIT='gdev:kernel_exit { @[kernel] = count(); exit(); }'

# A case fails when it calls fail, whatever it returns after (a check
# that does not end the case still counts).
fail() { echo "FAIL: $*"; echo "$*" >>"$tmp/failed"; return 1; }
# Cases that show a runtime bug not fixed yet: skipped unless
# RT_KNOWN_BUGS=1 (they expect the fixed behaviour).
# (none at the moment; kept for the next one found)
known_bug() {
	[ -n "${RT_KNOWN_BUGS:-}" ] && return 0
	echo "SKIP: known runtime bug: $*"
	return 77
}

# probes PROG: the probe module of a program, as gpux emits it.
probes() {
	"$RT_GPUX" --emit "$tmp/emit" -e "$1" >/dev/null 2>"$tmp/emit.err" ||
		{ cat "$tmp/emit.err"; fail "gpux --emit failed"; }
}

# ctl WANT_RC ARGS... -- CMD: rt_ctl (ARGS: its options) with the
# runtime preloaded; the program's stdout and stderr go to $tmp/out and
# $tmp/err, the report to $tmp/dump.
ctl() {
	local want=$1; shift
	timeout 60 "$RT_CTL" --preload "$PRELOAD" --dump "$tmp/dump" "$@" \
		>"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$?
	if [ "$rc" != "$want" ]; then
		echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"
		echo "--- dump"; cat "$tmp/dump" 2>/dev/null
		fail "rt_ctl $* exited $rc, expected $want"
	fi
}
# count_ctl WANT_RC GLOB ARGS... -- CMD: ctl with @[kernel] = count() at
# kernel_exit of the functions GLOB matches, one 4096-entry map.
count_ctl() {
	local rc=$1 glob=$2; shift 2
	probes "$COUNT" &&
	ctl "$rc" --ptx "$tmp/emit/device.ptx" --probe "1:$glob:gpux_probe_0" --map 8:8:4096 "$@"
}

same() { # same FILE EXPECTED (RT_BLESS=1: write EXPECTED instead; review it)
	[ -n "${RT_BLESS:-}" ] && [ ! -e "$here/expected/$2" ] && cp "$1" "$here/expected/$2"
	cmp -s "$here/expected/$2" "$1" || { diff -u "$here/expected/$2" "$1"; fail "$1 differs from $2"; }
}
err_empty() { [ ! -s "$tmp/err" ] || { cat "$tmp/err"; fail "stderr not empty"; }; }
log_has() { grep -qE -- "$1" "$tmp/log" || { cat "$tmp/log"; fail "the fake's log lacks /$1/"; }; }
log_lacks() { ! grep -qE -- "$1" "$tmp/log" || { cat "$tmp/log"; fail "the fake's log has /$1/"; }; }
# Every launch found its module set up: control block pointing at the
# context's ring and exit word, the clock offset calibrated.
set_up() {
	log_has '^cuLaunchKernel' || return 1
	! grep '^cuLaunchKernel' "$tmp/log" | grep -Eqv ' ctl=exit(\+ring)? clock=ok$' ||
		{ cat "$tmp/log"; fail "a launch of a module not set up"; }
}
# The image of load N is the original file, byte for byte.
loaded_untouched() { cmp -s "$tmp/save/load_$1.$2" "$3" || fail "load $1 is not $3"; }

# ---- through rt_ctl ----
# Driver-API loads: the patched module is what the driver gets; counts
# per kernel come back through the segment, names demangled.
t_drv_module() {
	count_ctl 0 "" -- "$RT_DRV_APP" module "$PTX" &&
	same "$tmp/out" drv_module.out && err_empty && same "$tmp/dump" drv_count.dump &&
	log_has '^load 1 cuModuleLoadDataEx ptx patched entries=gpux_clock_sample,add_one,_Z5scalePffi globals=5$' &&
	log_lacks ' plain ' &&
	set_up
}
# The patched module is compiled on every CPU (CU_JIT_SPLIT_COMPILE); a
# driver that does not know the option gets the load again without it.
t_drv_split_compile() {
	count_ctl 0 "" -- "$RT_DRV_APP" module "$PTX" &&
	same "$tmp/out" drv_module.out && err_empty && same "$tmp/dump" drv_count.dump &&
	log_has '^cuModuleLoadDataEx: jit option split-compile$'
}
t_drv_old_jit() {
	FAKE_CUDA_OLD_JIT=1 count_ctl 0 "" -- "$RT_DRV_APP" module "$PTX" &&
	same "$tmp/out" drv_module.out && err_empty && same "$tmp/dump" drv_count.dump &&
	log_has '^cuModuleLoadDataEx: jit option split-compile refused$' &&
	log_has '^load 1 cuModuleLoadDataEx ptx patched ' && set_up
}
t_drv_modex() {
	count_ctl 0 "" -- "$RT_DRV_APP" modex "$PTX" &&
	same "$tmp/out" drv_modex.out && err_empty && same "$tmp/dump" drv_count.dump &&
	log_has '^load 1 cuModuleLoadDataEx ptx patched ' && log_lacks ' plain ' &&
	set_up
}
t_drv_file() {
	count_ctl 0 "" -- "$RT_DRV_APP" file "$PTX" &&
	same "$tmp/out" drv_file.out && err_empty && same "$tmp/dump" drv_count.dump &&
	log_has '^load 1 cuModuleLoadDataEx ptx patched ' && log_lacks ' plain ' &&
	set_up
}
# Occupancy and attribute queries about an instrumented kernel are the
# original's: the same answers as without gpux (the fake counts an
# instrumented body's statements as more registers), the attribute the
# program set is set on the original too, and the launch goes to the
# instrumented one.
occupancy_case() {
	local mode=$1
	FAKE_CUDA_LOG=$tmp/alone.log "$RT_DRV_APP" "$mode" "$PTX" >"$tmp/alone" 2>&1 || { cat "$tmp/alone"; fail "alone"; return 1; }
	count_ctl 0 "" -- "$RT_DRV_APP" "$mode" "$PTX" &&
	{ cmp -s "$tmp/alone" "$tmp/out" || { diff -u "$tmp/alone" "$tmp/out"; fail "answers differ"; }; } &&
	grep -q ': [0-9]* registers, 4096 bytes of dynamic shared memory, [1-9][0-9]* blocks' "$tmp/out" ||
		{ cat "$tmp/out"; fail "no answers"; return 1; }
	log_has 'Attribute add_one load 2 attr 4 = ' && log_lacks 'Attribute add_one load 1 attr 4 = ' &&
	log_has 'SetAttribute add_one load 1 attr 8 := 4096' &&
	log_has 'SetAttribute add_one load 2 attr 8 := 4096' &&
	log_has '^cuOccupancyMaxActiveBlocksPerMultiprocessor add_one load 2 = ' &&
	log_has '^load 2 .* plain ' && set_up
}
t_occupancy() { occupancy_case occupancy; }
t_library_occupancy() { occupancy_case liboccupancy; }
# Loaded before any context: set up at the first launch.
t_drv_library() {
	count_ctl 0 "" -- "$RT_DRV_APP" library "$PTX" &&
	same "$tmp/out" drv_library.out && err_empty && same "$tmp/dump" drv_count.dump &&
	log_has '^load 1 cuLibraryLoadData ptx patched ' && log_lacks ' plain ' &&
	set_up
}
# A slot per context, each with its own maps; one rewrite for both.
t_two_contexts() {
	count_ctl 0 "" -- "$RT_DRV_APP" twoctx "$PTX" &&
	same "$tmp/out" twoctx.out && err_empty && same "$tmp/dump" twoctx.dump &&
	log_has '^load 2 cuModuleLoadDataEx ptx patched ' &&
	{ cmp -s "$tmp/save/load_1.ptx" "$tmp/save/load_2.ptx" || fail "two different rewrites"; } &&
	set_up
}
# A library loaded before any context is set up in each context at its
# first launch there; each context counts into its own slot.
t_library_contexts() {
	count_ctl 0 "" -- "$RT_DRV_APP" libctx "$PTX" &&
	same "$tmp/out" libctx.out && err_empty && same "$tmp/dump" libctx.dump &&
	log_has '^load 1 cuLibraryLoadData ptx patched ' && log_lacks ' plain ' &&
	set_up
}
# dlsym(cuGetProcAddress_v2), then everything through it; the launch is
# the per-thread-stream variant; the primary context's release ends it.
t_gpa() {
	count_ctl 0 "" -- "$RT_GPA_APP" "$PTX" &&
	same "$tmp/out" gpa.out && err_empty && same "$tmp/dump" gpa.dump &&
	log_has '^load 1 cuModuleLoadDataEx ptx patched ' &&
	log_has '^cuLaunchKernel_ptsz add_one grid=1,1,1 block=32,1,1 sites=1 ctl=exit clock=ok$'
}
# A glob on the demangled name without parameters: only scale() patched.
t_glob() {
	count_ctl 0 "scale" -- "$RT_DRV_APP" module "$PTX" &&
	same "$tmp/out" drv_module.out && err_empty && same "$tmp/dump" glob.dump &&
	log_has '^cuLaunchKernel add_one grid=4,1,1 block=64,1,1 sites=0 ctl=exit clock=ok$' &&
	log_has '^cuLaunchKernel _Z5scalePffi grid=2,1,1 block=8,4,1 sites=1 ctl=exit clock=ok$'
}
# Without GPUX_SESSION the runtime is loaded but does nothing: the
# program's output is what it is without the runtime, the driver gets
# the original module.
t_no_session() {
	LD_PRELOAD= "$RT_DRV_APP" module "$PTX" >"$tmp/plain.out" 2>&1 ||
		{ cat "$tmp/plain.out"; fail "drv_app alone failed"; return 1; }
	same "$tmp/plain.out" drv_module.out || return 1
	rm -f "$tmp/log" "$tmp/save"/*
	count_ctl 0 "" --no-session -- "$RT_DRV_APP" module "$PTX" &&
	same "$tmp/out" drv_module.out && err_empty && same "$tmp/dump" empty.dump &&
	log_has '^load 1 cuModuleLoadData ptx plain ' && loaded_untouched 1 ptx "$PTX" || return 1
	rm -f "$tmp/log" "$tmp/save"/*
	count_ctl 0 "" --no-session -- "$RT_GPA_APP" "$PTX" &&
	same "$tmp/out" gpa.out && err_empty && same "$tmp/dump" empty.dump &&
	log_has '^load 1 cuModuleLoadData ptx plain ' && loaded_untouched 1 ptx "$PTX"
}
t_bad_session_fd() {
	GPUX_SESSION=999 LD_PRELOAD=$PRELOAD timeout 60 "$RT_DRV_APP" module "$PTX" \
		>"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "drv_app failed"; return 1; }
	same "$tmp/out" drv_module.out && same "$tmp/err" bad_fd.err &&
	log_has '^load 1 cuModuleLoadData ptx plain ' && loaded_untouched 1 ptx "$PTX"
}
# One name per kernel: a cuda: map keyed by 'kernel' (stored as the
# kernel's id, 8 bytes) prints the whole name, as the gdev: map does, so
# the two join by kernel: for a name past cuda: strings' 63 bytes, and
# for one past the name table's 247 (250 bytes), which both cut alike with
# "...".
t_gpux_kernel_names() {
	[ "${RT_SANITIZED:-OFF}" = ON ] &&
		{ echo "SKIP: sanitizer build (gpux preloads the runtime before the ASan runtime)"; return 77; }
	local long=add_one_$(printf 'x%.0s' $(seq 80)) longer=add_one_$(printf 'y%.0s' $(seq 242))
	for name in $long $longer; do
		sed "s/\badd_one\b/$name/g" "$PTX" >"$tmp/named.ptx"
		DRV_APP_ADD_ONE=$name GPUX_RT=$RT_LIB timeout 60 "$RT_GPUX" -e 'cuda:launch { @c[kernel] = count(); }
gdev:kernel_exit { @g[kernel] = count(); }' -c "'$RT_DRV_APP' module '$tmp/named.ptx'" >"$tmp/out" 2>"$tmp/err" ||
			{ cat "$tmp/err"; fail "gpux exited $?"; return; }
		local c g
		c=$(sed -n 's/^@c\[\(.*\)\]: [0-9]*$/\1/p' "$tmp/out" | sort)
		g=$(sed -n 's/^@g\[\(.*\)\]: [0-9]*$/\1/p' "$tmp/out" | sort)
		[ -n "$c" ] && [ "$c" = "$g" ] || { cat "$tmp/out"; fail "the maps' kernels differ"; return; }
		grep -qF "@c[$name]: " "$tmp/out" || [ "$name" = "$longer" ] ||
			{ cat "$tmp/out"; fail "the whole name"; return; }
	done
	# past 247 bytes: the first 244 and "..."; -v says the whole name
	grep -qF "@c[${longer:0:244}...]: " "$tmp/out" || { cat "$tmp/out"; fail "the cut name"; return; }
	DRV_APP_ADD_ONE=$longer GPUX_RT=$RT_LIB timeout 60 "$RT_GPUX" -v -e 'cuda:launch { @c[kernel] = count(); }' \
		-c "'$RT_DRV_APP' module '$tmp/named.ptx'" >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/err"; fail "gpux -v exited $?"; return; }
	grep -qxF "gpux: a kernel name longer than 247 bytes is shown cut with \"...\": $longer" "$tmp/err" ||
		{ cat "$tmp/err"; fail "-v: the whole name"; }
}
# pid, tid and comm in cuda: probes: each thread's own, read once and
# kept (vm/bpf_vm_task.c), read again after the thread renames itself
# through pthread_setname_np or prctl (runtime/rt_rename.c hears of
# both), and another thread's its own.
t_gpux_task_cached() {
	[ "${RT_SANITIZED:-OFF}" = ON ] &&
		{ echo "SKIP: sanitizer build (gpux preloads the runtime before the ASan runtime)"; return 77; }
	GPUX_RT=$RT_LIB timeout 60 "$RT_GPUX" -e 'cuda:launch { printf("%s %d %d\n", comm, pid == tid, pid == cpid); }' \
		-c "'$RT_DRV_APP' rename '$PTX'" >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/err"; fail "gpux exited $?"; return; }
	printf '%s\n' "rt_drv_app 1 1" "rt_drv_app 1 1" "renamed1 1 1" "renamed2 1 1" "worker 0 1" \
		"drv_app: loaded (rename)" "drv_app: 5 launches, 3 names" | sort >"$tmp/want"
	grep -v -e '^$' -e '^Attaching ' "$tmp/out" | sort >"$tmp/got"
	diff "$tmp/want" "$tmp/got" || fail "comm, pid and tid"
}
# cuda:kernel_end through CUPTI's activity records (runtime/rt_cupti.c;
# here fake_cupti.c, which the fake driver tells of each kernel): every
# launch ends once, on the stream it was launched into (CUPTI's stream
# ids mapped back to the program's handles), with start <= end; no CUDA
# event is recorded for it.
t_gpux_kernel_end_cupti() {
	[ "${RT_SANITIZED:-OFF}" = ON ] &&
		{ echo "SKIP: sanitizer build (gpux preloads the runtime before the ASan runtime)"; return 77; }
	[ -n "${RT_FAKE_CUPTI:-}" ] || { echo "SKIP: no fake libcupti"; return 77; }
	GPUX_CUPTI_LIB=$RT_FAKE_CUPTI GPUX_RT=$RT_LIB timeout 60 "$RT_GPUX" -e 'cuda:launch { @l[kernel, stream] = count(); }
cuda:kernel_end { @e[kernel, stream] = count(); @ok = min(end > start && duration == end - start); }' \
		-c "'$RT_DRV_APP' streams '$PTX'" >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/err"; fail "gpux exited $?"; return; }
	err_empty || return
	local l e n
	l=$(sed -n 's/^@l\[\(.*\)$/\1/p' "$tmp/out" | sort)
	e=$(sed -n 's/^@e\[\(.*\)$/\1/p' "$tmp/out" | sort)
	[ -n "$l" ] && [ "$l" = "$e" ] || { cat "$tmp/out"; fail "launches and ends differ by kernel and stream"; return; }
	grep -qx '@ok: 1' "$tmp/out" || { cat "$tmp/out"; fail "start, end, duration"; return; }
	n=$(sed -n 's/^@l\[.*\]: //p' "$tmp/out" | awk '{ s += $1 } END { print s }')
	[ "$(grep -c '^cupti: kernel ' "$tmp/log")" = "$n" ] || { fail "CUPTI's records: not one per launch"; return; }
	log_has '^events created=0 ' || fail "CUDA events recorded"
}
# A burst of CUPTI records (20,000 kernels delivered in one flush, far
# more than the host region's ring holds) reaches the controller whole:
# delivery waits for it to read, nothing is dropped.
t_gpux_kernel_end_burst() {
	[ "${RT_SANITIZED:-OFF}" = ON ] &&
		{ echo "SKIP: sanitizer build (gpux preloads the runtime before the ASan runtime)"; return 77; }
	[ -n "${RT_FAKE_CUPTI:-}" ] || { echo "SKIP: no fake libcupti"; return 77; }
	GPUX_CUPTI_LIB=$RT_FAKE_CUPTI GPUX_RT=$RT_LIB timeout 120 "$RT_GPUX" -o "$tmp/lines" \
		-e 'cuda:kernel_end { printf("%s %llu %llu %llu\n", kernel, start, end, stream); }' \
		-c "'$RT_DRV_APP' many '$PTX' 20000 burst" >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/err"; fail "gpux exited $?"; return; }
	err_empty || return
	# 20,000 add_one<<<1, 32>>>, 3 add_one<<<4, 64>>>, one scale
	[ "$(grep -c '^add_one ' "$tmp/lines")" = 20003 ] &&
		[ "$(grep -c '^scale(' "$tmp/lines")" = 1 ] ||
		{ tail -3 "$tmp/lines"; fail "not one line per kernel"; }
}
# cuda:graph_launch: one event per replay, with the nodes and kernel
# nodes of the graph each was instantiated from, on the stream given.
t_gpux_graph_launch() {
	[ "${RT_SANITIZED:-OFF}" = ON ] &&
		{ echo "SKIP: sanitizer build (gpux preloads the runtime before the ASan runtime)"; return 77; }
	GPUX_RT=$RT_LIB timeout 60 "$RT_GPUX" -e 'cuda:graph_launch { @g[nodes, kernels] = count();
	@s[stream != 0] = count(); @x = count(); } cuda:launch { @l = count(); }' \
		-c "'$RT_DRV_APP' graphs '$PTX'" >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/err"; fail "gpux exited $?"; return; }
	err_empty || return
	# the captured launch is a launch event (at capture), the replays not
	printf 'Attaching 2 probes...\ndrv_app: loaded (graphs)\ndrv_app: graphs replayed 5 times\n\n\n@g[1, 1]: 5\n@l: 1\n@s[1]: 5\n@x: 5\n' |
		diff - "$tmp/out" || fail "the counts"
}
# gpux -p's runtime side: a process started without gpux, its CUDA
# context made and nothing loaded, gets the runtime loaded (ptrace,
# attach/inject.c) and joins the session through /proc; its bindings to
# libcuda (PLT slots not yet bound) go through the runtime from then on,
# so the module it loads next is instrumented and counted exactly, as
# under -c.
# no_attach_here: skips (77) where the runtime cannot be loaded late.
no_attach_here() {
	[ "${RT_SANITIZED:-OFF}" = ON ] || return 1
	echo "SKIP: sanitizer build (the runtime cannot load into an unsanitized process)"
}
# attach_ctl OUT DUMP -- CMD...: rt_ctl --attach on CMD counting kernel
# exits; some bindings go through the runtime, CMD's output is OUT, the
# report DUMP, and the module it loads is patched.
attach_ctl() {
	local out=$1 dump=$2
	shift 3
	probes "$COUNT" &&
	ctl 0 --ptx "$tmp/emit/device.ptx" --probe "1::gpux_probe_0" --map 8:8:4096 \
		--attach "$RT_LIB" -- "$@" || return
	grep -Eq '^rt_ctl: attached, [1-9][0-9]* bindings$' "$tmp/err" ||
		{ cat "$tmp/err"; fail "no binding goes through the runtime"; return; }
	same "$tmp/out" "$out" && same "$tmp/dump" "$dump" &&
	log_has '^load 1 cuModuleLoadDataEx ptx patched '
}
t_attach_late() {
	no_attach_here && return 77
	attach_ctl drv_late.out drv_count.dump -- "$RT_DRV_APP" late "$PTX"
}
# The same for a program that keeps cuGetProcAddress's answers in a
# table of its data, as cudart does: the table's entries are found and
# go through the runtime.
t_attach_table() {
	no_attach_here && return 77
	attach_ctl gpa_late.out gpa_late.dump -- "$RT_GPA_APP" "$PTX" late
}
# gpux -p with cuda: probes on a process gpux did not start: the runtime
# is loaded into it, its launches from then on are counted exactly, it
# ends as it would have, and gpux with it.
attach_run() { # attach_run PROGRAM [MODE]: gpux -p on drv_app late (or MODE), in $tmp/out, $tmp/err
	no_attach_here && return 77
	"$RT_DRV_APP" "${2:-late}" "$PTX" >"$tmp/app.out" 2>&1 &
	app=$!
	wait_for '^drv_app: waiting' "$tmp/app.out" || { kill -9 $app; fail "drv_app did not start"; return; }
	GPUX_RT=$RT_LIB timeout 60 "$RT_GPUX" -p $app -e "$1" >"$tmp/out" 2>"$tmp/err" </dev/null &
	gp=$!
}
wait_for() { # wait_for ERE FILE: up to 10 s
	for _ in $(seq 500); do grep -Eq "$1" "$2" 2>/dev/null && return 0; sleep 0.02; done
	return 1
}
# attach_counted [MODE]: gpux -p counting drv_app MODE's (default late)
# launches and module loads, attached and released before the launches:
# every one is counted, and the program's output is as alone
attach_counted() {
	local app gp
	attach_run 'cuda:launch { @[kernel] = count(); } cuda:module_load { @m = count(); }' "$@" || return
	wait_for '^Attaching 2 probes' "$tmp/out" || { kill -9 $app $gp; fail "gpux did not attach"; return; }
	sleep 0.2
	kill -USR1 $app
	wait $app || fail "the program exited $?"
	wait $gp || { cat "$tmp/err"; fail "gpux exited $?"; }
	same "$tmp/out" gpux_attach.out && err_empty && same "$tmp/app.out" drv_late.out
}
t_gpux_attach() {
	attach_counted
}
# gpux -p on a program whose main thread is inside the driver, holding
# its lock, whenever it is stopped: the runtime's attach (which calls
# the driver) runs on a thread of its own once that thread went on, so
# neither waits for the other; another thread loads and unloads a
# library all the while (the attach's scan holds the loader's lock and
# must not wait for it again); the counts are the idle program's.
t_gpux_attach_busy() {
	DRV_APP_DLOPEN=$RT_FAKE_CUPTI attach_counted busy
}
# gpux -p with device probes on a program whose module was loaded before
# (from a fatbin registered in its sections, as cudart's are): its kernel
# runs instrumented from the next launch and is counted exactly; on
# detach it runs untouched; a second gpux attaches again (a fresh copy
# of the runtime takes over) and counts only its own round; a third,
# while the second is attached, is refused; the program ends as alone.
fat_round() { # fat_round N OUT: gpux -p on $app for round N, its output in OUT
	GPUX_RT=$RT_LIB timeout 60 "$RT_GPUX" -p $app -e 'gdev:kernel_exit { @[kernel] = count(); }
cuda:launch { @l = count(); }' >"$2" 2>"$2.err" </dev/null &
	gp=$!
	wait_for '^Attaching 2 probes' "$2" || { kill -9 $app $gp; fail "gpux did not attach"; return 1; }
	if [ "$1" = 2 ]; then
		GPUX_RT=$RT_LIB timeout 60 "$RT_GPUX" -p $app -e 'cuda:launch { @ = count(); }' \
			>"$tmp/busy" 2>"$tmp/busy.err" </dev/null && { fail "attached beside another gpux"; return 1; }
		grep -qx "stdin: ERROR: cannot attach to pid $app: another gpux is tracing it" "$tmp/busy.err" ||
			{ cat "$tmp/busy.err"; fail "the busy error"; return 1; }
	fi
	kill -USR1 $app
	wait_for "^fat_app: round $1:" "$tmp/app.out" || { kill -9 $app $gp; fail "round $1 did not run"; return 1; }
	kill -INT $gp
	wait $gp || { cat "$2.err"; fail "gpux exited $?"; return 1; }
	[ ! -s "$2.err" ] || { cat "$2.err"; fail "gpux said something"; return 1; }
}
# Two gpux -p in turn with cuda:kernel_end timed by CUPTI (the fake):
# CUPTI takes one set of callbacks per process, so the second attach's
# copy of the runtime adopts the first's (which stopped the records at
# its detach) instead of being refused; each round's kernels end once.
# libcupti sits beside the runtime, as shipped: the copy, loaded from
# elsewhere, must drive the same one (the fake's kernels take 1000 ns,
# CUDA events' would not).
t_gpux_attach_kernel_end() {
	local app gp k
	no_attach_here && return 77
	[ -n "${RT_FAT_APP:-}" ] || { echo "SKIP: no fat_app (nvcc)"; return 77; }
	[ -n "${RT_FAKE_CUPTI:-}" ] || { echo "SKIP: no fake libcupti"; return 77; }
	mkdir -p "$tmp/lib"
	cp "$RT_LIB" "$tmp/lib/$(basename "$RT_LIB")" && cp "$RT_FAKE_CUPTI" "$tmp/lib/libcupti.so" || return
	env -u GPUX_CUPTI_LIB "$RT_FAT_APP" 3 5 >"$tmp/app.out" 2>&1 &
	app=$!
	wait_for '^fat_app: waiting' "$tmp/app.out" || { kill -9 $app; fail "fat_app did not start"; return; }
	for k in 1 2; do
		GPUX_RT=$tmp/lib/$(basename "$RT_LIB") timeout 60 "$RT_GPUX" -p $app -e 'cuda:launch { @l = count(); }
cuda:kernel_end { @e = count(); @d = max(duration); }' >"$tmp/out$k" 2>"$tmp/out$k.err" </dev/null &
		gp=$!
		wait_for '^Attaching 2 probes' "$tmp/out$k" || { kill -9 $app $gp; fail "gpux did not attach"; return; }
		kill -USR1 $app
		wait_for "^fat_app: round $k:" "$tmp/app.out" || { kill -9 $app $gp; fail "round $k did not run"; return; }
		kill -INT $gp
		wait $gp || { cat "$tmp/out$k.err"; fail "gpux exited $?"; return; }
		[ ! -s "$tmp/out$k.err" ] || { cat "$tmp/out$k.err"; fail "round $k: gpux said something"; return; }
		printf 'Attaching 2 probes...\n\n\n@d: 1000\n@e: 5\n@l: 5\n' | diff - "$tmp/out$k" ||
			{ fail "round $k's counts"; return; }
	done
	kill -USR1 $app
	wait $app || fail "the program exited $? after gpux left"
}
t_gpux_attach_device() {
	local app gp
	no_attach_here && return 77
	[ -n "${RT_FAT_APP:-}" ] || { echo "SKIP: no fat_app (nvcc)"; return 77; }
	"$RT_FAT_APP" 3 5 >"$tmp/app.out" 2>&1 &
	app=$!
	wait_for '^fat_app: waiting' "$tmp/app.out" || { kill -9 $app; fail "fat_app did not start"; return; }
	fat_round 1 "$tmp/out1" && fat_round 2 "$tmp/out2" || return
	kill -USR1 $app
	wait $app || fail "the program exited $? after gpux left"
	same "$tmp/app.out" fat_app.out || return
	for o in out1 out2; do
		printf 'Attaching 2 probes...\n\n\n@[add_one]: 5120\n@l: 5\n' | diff - "$tmp/$o" ||
			{ fail "$o's counts"; return; }
	done
	[ "$(grep -c 'cuLaunchKernel add_one .* sites=1' "$tmp/log")" = 10 ] ||
		fail "instrumented launches: not the two rounds'"
}
# A session that is gone (its controller's pid names no process, and the
# descriptor is not open here): a process started after gpux ended runs
# untouched, and says nothing.
t_session_gone() {
	GPUX_SESSION=999999999:999:0123456789abcdef0123456789abcdef LD_PRELOAD=$PRELOAD \
		timeout 60 "$RT_DRV_APP" module "$PTX" >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/err"; fail "drv_app failed"; return 1; }
	same "$tmp/out" drv_module.out && err_empty &&
	log_has '^load 1 cuModuleLoadData ptx plain ' && loaded_untouched 1 ptx "$PTX"
}
# The segment named with the wrong token (a descriptor reused for
# another file, a pid reused by another process): never taken.
t_session_bad_token() {
	count_ctl 0 "" --bad-token -- "$RT_DRV_APP" module "$PTX" &&
	same "$tmp/out" drv_module.out && err_empty && same "$tmp/dump" empty.dump &&
	log_has '^load 1 cuModuleLoadData ptx plain ' && loaded_untouched 1 ptx "$PTX"
}
# Children join the session: one started with every descriptor above 2
# closed (Python's spawn, subprocess) finds the segment through
# /proc/PID/fd; one that inherits them (fork + exec) through its own.
# Its counts are the module case's, in a slot of another process.
t_spawn_child() {
	count_ctl 0 "" -- "$RT_DRV_APP" spawn "$PTX" &&
	same "$tmp/out" drv_spawn.out && err_empty && same "$tmp/dump" child.dump
}
t_forkexec_child() {
	count_ctl 0 "" -- "$RT_DRV_APP" forkexec "$PTX" &&
	same "$tmp/out" drv_spawn.out && err_empty && same "$tmp/dump" child.dump
}
# No kernel matches: the module loads untouched, nothing is claimed.
t_no_match() {
	count_ctl 0 "nomatch*" -- "$RT_DRV_APP" module "$PTX" &&
	same "$tmp/out" drv_module.out && err_empty && same "$tmp/dump" empty.dump &&
	log_has '^load 1 cuModuleLoadData ptx plain ' && loaded_untouched 1 ptx "$PTX"
}
# SASS only: loaded untouched, each kernel reported once with the
# nvcc flags that would add PTX.
t_sass_only() {
	count_ctl 0 "" -- "$RT_DRV_APP" image "$FATBIN" &&
	same "$tmp/out" sass.out && same "$tmp/err" sass.err && same "$tmp/dump" empty.dump &&
	loaded_untouched 1 bin "$FATBIN" && loaded_untouched 2 bin "$FATBIN"
}
# Five SASS-only kernels of one module: one line counts them (a library
# of thousands is one line); --verbose names each.
t_sass_many() {
	count_ctl 0 "" -- "$RT_DRV_APP" image "$MANY" &&
	same "$tmp/err" sass_many.err && same "$tmp/dump" empty.dump || return 1
	count_ctl 0 "" --verbose -- "$RT_DRV_APP" image "$MANY" &&
	same "$tmp/err" sass_many_verbose.err
}
# A cubin loaded by itself: reported the same way.
t_sass_cubin() {
	count_ctl 0 "" -- "$RT_DRV_APP" image "$CUBIN" &&
	same "$tmp/out" sass.out && same "$tmp/err" sass_cubin.err && same "$tmp/dump" empty.dump &&
	loaded_untouched 1 bin "$CUBIN"
}
# The same cubin where a Compute Sanitizer is found (the fake's, and a
# ptxas that copies): its kernels are patched through SASS and counted
# per kernel, as the PTX path counts them; one line says so.
sass_patch() {
	GPUX_SANITIZER_LIB=$RT_FAKE_DIR/libcuda.so.1 GPUX_PTXAS=$here/fake_ptxas.sh "$@"
}
t_sass_patch() {
	sass_patch count_ctl 0 "" -- "$RT_DRV_APP" module "$CUBIN" &&
	same "$tmp/out" drv_module.out && same "$tmp/err" sass_patch.err &&
	same "$tmp/dump" sass_patch.dump &&
	log_has '^sanitizer subscribed$' && log_has '^sanitizer boot: 5 addresses$' &&
	log_has '^sanitizer patch point 2: gpux_sb_exit$' && log_lacks 'has no record'
}
# A kernel_exit probe of lifelong values (GPUX_SITE_ANYTIME, as the
# controller marks `@[kernel] = count()`): called from the block-enter
# patch point, none at block exit, the same counts.
t_sass_patch_anytime() {
	probes "$COUNT" &&
	sass_patch ctl 0 --ptx "$tmp/emit/device.ptx" --probe "1/16::gpux_probe_0" --map 8:8:4096 \
		-- "$RT_DRV_APP" module "$CUBIN" &&
	same "$tmp/out" drv_module.out && same "$tmp/err" sass_patch.err &&
	same "$tmp/dump" sass_patch.dump &&
	log_has '^sanitizer patch point 1: gpux_sb_enter$' && log_lacks 'patch point 2' &&
	log_lacks 'has no record'
}
# With -v, a line per kernel; a probe filtered to one kernel counts it
# alone (the other's record selects no probe).
t_sass_patch_filtered() {
	sass_patch count_ctl 0 "add*" --verbose -- "$RT_DRV_APP" module "$CUBIN" &&
	sed -i 's/ in [0-9.]* ms$/ in N ms/; s/^gpux: pid [0-9]*:/gpux: pid N:/' "$tmp/err" &&
	same "$tmp/err" sass_patch_verbose.err && same "$tmp/dump" sass_patch_filtered.dump
}
# A library loaded before any context: patched in each context at its
# first launch there (its CUkernels launched as functions), each
# context counting into its own slot, as the PTX path does.
t_sass_patch_library() {
	sass_patch count_ctl 0 "" -- "$RT_DRV_APP" library "$CUBIN" &&
	same "$tmp/out" drv_library.out && same "$tmp/err" sass_patch_library.err &&
	same "$tmp/dump" sass_patch.dump && log_lacks 'has no record'
}
t_sass_patch_contexts() {
	sass_patch count_ctl 0 "" -- "$RT_DRV_APP" libctx "$CUBIN" &&
	same "$tmp/out" libctx.out && same "$tmp/dump" sass_patch_libctx.dump &&
	[ "$(grep -c '^sanitizer boot: 5 addresses$' "$tmp/log")" = 2 ] ||
		{ cat "$tmp/log"; fail "a patch module booted in each context"; }
}
# No ptxas: the kernels run untouched, and gpux says why, once.
t_sass_patch_no_ptxas() {
	GPUX_SANITIZER_LIB=$RT_FAKE_DIR/libcuda.so.1 GPUX_PTXAS=$tmp/no-ptxas \
		count_ctl 0 "" -- "$RT_DRV_APP" module "$CUBIN" &&
	sed -i "s|$tmp|TMP|g" "$tmp/err" &&
	same "$tmp/err" sass_patch_no_ptxas.err && same "$tmp/dump" sass_patch_no_ptxas.dump
}
# A Triton kernel (recorded from Triton 3.6 on an H200: triton_cache/):
# the cubin Triton loads is found byte for byte in Triton's cache and
# the PTX beside it is instrumented and loaded instead.
TRITON=$here/triton_cache/recorded
t_triton() {
	mkdir -p "$tmp/tc" && cp -r "$TRITON" "$tmp/tc/HASH1" &&
	TRITON_CACHE_DIR=$tmp/tc count_ctl 0 "" -- "$RT_DRV_APP" image "$TRITON/add_kernel.cubin" &&
	same "$tmp/out" sass.out && same "$tmp/err" triton.err &&
	log_has '^load 1 cuModuleLoadData(Ex)? (ptx|elf) patched entries=gpux_clock_sample,add_kernel ' &&
	log_has '^load [23] cuModuleLoadData(Ex)? (ptx|elf) patched entries=gpux_clock_sample,add_kernel '
}
# ... and the instrumented module assembles for sm_90 within the
# registers of the cubin's own SASS.
t_triton_ptxas() {
	if [ ! -x "${RT_PTXAS:-}" ] || [ ! -x "$(dirname "$RT_PTXAS")/nvlink" ]; then
		echo "SKIP: no ptxas and nvlink"; return 77
	fi
	mkdir -p "$tmp/tc" && cp -r "$TRITON" "$tmp/tc/HASH1" &&
	FAKE_CUDA_PTXAS=$RT_PTXAS TRITON_CACHE_DIR=$tmp/tc count_ctl 0 "" --verbose -- \
		"$RT_DRV_APP" image "$TRITON/add_kernel.cubin" &&
	log_has '^load 1 cuModuleLoadData(Ex)? (ptx|elf) patched entries=gpux_clock_sample,add_kernel ' &&
	log_lacks 'ptxas failed|nvlink failed' &&
	grep -q 'kernels kept to the register count of their SASS' "$tmp/err" ||
		{ cat "$tmp/err"; fail "not kept to the SASS's registers"; }
}
# Inductor's cache (torch.compile): TORCHINDUCTOR_CACHE_DIR/triton/DEV/HASH.
t_triton_inductor() {
	mkdir -p "$tmp/ind/triton/0" && cp -r "$TRITON" "$tmp/ind/triton/0/HASH1" &&
	TORCHINDUCTOR_CACHE_DIR=$tmp/ind count_ctl 0 "" -- "$RT_DRV_APP" image "$TRITON/add_kernel.cubin" &&
	same "$tmp/err" triton.err && log_has '^load 1 cuModuleLoadData(Ex)? (ptx|elf) patched entries=gpux_clock_sample,add_kernel '
}
# No cached cubin of the same bytes: untouched, said once, naming the
# cache looked in. One byte of difference is enough.
t_triton_missing() {
	mkdir -p "$tmp/tc/HASH1" && cp "$TRITON"/* "$tmp/tc/HASH1/" &&
	printf '\1' | dd of="$tmp/tc/HASH1/add_kernel.cubin" bs=1 seek=4000 conv=notrunc 2>/dev/null &&
	TRITON_CACHE_DIR=$tmp/tc count_ctl 0 "" -- "$RT_DRV_APP" image "$TRITON/add_kernel.cubin" &&
	sed "s|$tmp|TMP|g" "$tmp/err" >"$tmp/err.n" && same "$tmp/err.n" triton_missing.err &&
	loaded_untouched 1 bin "$TRITON/add_kernel.cubin" && loaded_untouched 2 bin "$TRITON/add_kernel.cubin"
}
# Two cached copies of the cubin whose PTX differ: which one it came
# from cannot be told, so it runs untouched, said once: its second load
# finds the answer in the process's cache without looking again.
t_triton_clash() {
	mkdir -p "$tmp/tc" && cp -r "$TRITON" "$tmp/tc/HASH1" && cp -r "$TRITON" "$tmp/tc/HASH2" &&
	echo '// another compile' >>"$tmp/tc/HASH2/add_kernel.ptx" &&
	TRITON_CACHE_DIR=$tmp/tc count_ctl 0 "" -- "$RT_DRV_APP" image "$TRITON/add_kernel.cubin" &&
	sed "s|$tmp|TMP|g" "$tmp/err" >"$tmp/err.n" && same "$tmp/err.n" triton_clash.err &&
	loaded_untouched 1 bin "$TRITON/add_kernel.cubin" && loaded_untouched 2 bin "$TRITON/add_kernel.cubin"
}
# numba's way: cuLinkAddData gets the patched PTX, the program loads the
# linked cubin, which is instrumented (and not reported as SASS only).
t_link() {
	if [ ! -x "${RT_PTXAS:-}" ]; then echo "SKIP: no ptxas"; return 77; fi
	FAKE_CUDA_PTXAS=$RT_PTXAS count_ctl 0 "" -- "$RT_DRV_APP" link "$PTX" &&
	same "$tmp/out" drv_link.out && err_empty && same "$tmp/dump" drv_count.dump &&
	log_has '^cuLinkAddData ptx patched$' &&
	log_has '^load 1 cuModuleLoadData elf patched entries=gpux_clock_sample,add_one,_Z5scalePffi ' &&
	set_up
}
# The driver refuses the patched PTX: said once, the original loads.
t_refused() {
	FAKE_CUDA_REFUSE=1 count_ctl 0 "" -- "$RT_DRV_APP" module "$PTX" &&
	same "$tmp/out" drv_module.out && same "$tmp/err" refused.err &&
	same "$tmp/dump" refused.dump &&
	log_has '^load 1 cuModuleLoadDataEx ptx patched: refused$' &&
	log_has '^load 2 cuModuleLoadData ptx plain ' && loaded_untouched 2 ptx "$PTX"
}
# The patched module assembles for sm_90.
t_ptxas() {
	if [ ! -x "${RT_PTXAS:-}" ]; then echo "SKIP: no ptxas"; return 77; fi
	FAKE_CUDA_PTXAS=$RT_PTXAS count_ctl 0 "" -- "$RT_DRV_APP" module "$PTX" &&
	same "$tmp/out" drv_module.out && err_empty && same "$tmp/dump" drv_count.dump &&
	log_has '^load 1 cuModuleLoadDataEx ptx patched ' && log_lacks 'ptxas failed'
}
# A fatbin with SASS and PTX: the patched PTX keeps each kernel to the
# registers its SASS uses (.maxnreg), and ptxas (for sm_90, the fake
# device) compiles it within them.
t_register_cap() {
	local regs
	regs=$(sed -n 's/.*Used \([0-9]*\) registers.*/\1/p' "$RT_CUDA_DIR/kern_regs.ptxas")
	[ -n "$regs" ] || { fail "no register count from ptxas"; return 1; }
	probes 'gdev:access { @[kernel] = count(); }' &&
	ctl 0 --ptx "$tmp/emit/device.ptx" --probe "2::gpux_probe_0" --map 8:8:4096 --verbose \
		-- "$RT_DRV_APP" image "$RT_CUDA_DIR/kern_regs.fatbin" &&
	log_has '^load 1 cuModuleLoadDataEx ptx patched entries=gpux_clock_sample,heavy ' &&
	grep -q "kernels kept to the register count of their SASS" "$tmp/err" &&
	{ grep -qx ".maxnreg $regs" "$tmp/save/load_1.ptx" || { grep -n maxnreg "$tmp/save/load_1.ptx"; fail "no .maxnreg $regs"; }; } || return 1
	[ -x "${RT_PTXAS:-}" ] || { echo "SKIP: no ptxas to compile the capped module"; return 77; }
	"$RT_PTXAS" -arch=sm_90 -v "$tmp/save/load_1.ptx" -o "$tmp/capped.cubin" 2>"$tmp/ptxas" ||
		{ cat "$tmp/ptxas"; fail "ptxas refused the capped module"; return 1; }
	local used
	used=$(awk "/entry function 'heavy'/ { on = 1 } on && /Used [0-9]+ registers/ { sub(/.*Used /, \"\"); print \$1; exit }" "$tmp/ptxas")
	[ -n "$used" ] && [ "$used" -le "$regs" ] || { cat "$tmp/ptxas"; fail "heavy uses ${used:-?} registers, its SASS $regs"; }
}
# Relocatable device code: the module is linked again from both units'
# rewritten PTX (the fake's link runs ptxas -c and nvlink for real, the
# functions within the lowest register count of the linked SASS) and the
# launches of kernels from both files count.
t_rdc() {
	if [ ! -x "${RT_PTXAS:-}" ] || [ ! -x "$(dirname "$RT_PTXAS")/nvlink" ]; then
		echo "SKIP: no ptxas and nvlink"; return 77
	fi
	local c=$RT_CUDA_DIR
	FAKE_CUDA_PTXAS=$RT_PTXAS count_ctl 0 "" --verbose -- "$RT_DRV_APP" rdc \
		"$c/rdc_linked.fatbin" "$c/rdc_main.fatbin" "$c/rdc_lib.fatbin" &&
	grep -qx 'drv_app: rdc_vadd and rdc_fill<<<1, 64>>> from relocatable device code' "$tmp/out" &&
	[ "$(grep -c '^cuLinkAddData ptx patched$' "$tmp/log")" = 2 ] &&
	log_has '^cuLinkComplete units=2 maxreg=[1-9][0-9]*$' &&
	log_has '^load 1 cuModuleLoadDataEx elf patched entries=.*_Z8rdc_vaddPKfS0_Pfi' &&
	grep -q 'linked a module of relocatable device code again: 2 units, 2 of them instrumented' "$tmp/err" &&
	grep -q '_Z8rdc_vaddPKfS0_Pfi.*64\|rdc_vadd.*64' "$tmp/dump" &&
	grep -q 'rdc_fill.*64' "$tmp/dump" &&
	set_up || { cat "$tmp/err" "$tmp/dump" "$tmp/log"; fail "rdc"; }
	[ -z "${RT_SHOW:-}" ] || cat "$tmp/dump" "$tmp/log"
}
# ---- the helper library as a cubin (rt_link.c, rt_helpers.c) ----
# With the probes' link form in the segment (device.link.ptx), a patched
# module is the user's PTX and the probes linked with the library's
# cubin for the device (the fake's link runs ptxas -c and nvlink for
# real): the driver loads that cubin, which defines the helpers,
# gpux_ctl and gpux_clock_sample; the counts are those of the PTX path.
lib_tools() {
	if [ ! -x "${RT_PTXAS:-}" ] || [ ! -x "$(dirname "$RT_PTXAS")/nvlink" ]; then
		echo "SKIP: no ptxas and nvlink"; return 77
	fi
	case " ${RT_LIB_ARCHS:-} " in
	*" 90 "*) ;;
	*) echo "SKIP: the runtime has no helper library cubin for sm_90, the fake's"; return 77 ;;
	esac
}
lib_ctl() { # lib_ctl GLOB ARGS... -- CMD: count_ctl with the link form, verbose
	local glob=$1; shift
	probes "$HCOUNT" &&
	ctl 0 --ptx "$tmp/emit/device.ptx" --link-ptx "$tmp/emit/device.link.ptx" \
		--probe "1:$glob:gpux_probe_0" --map 8:8:4096 --verbose "$@"
}
linked_ok() { # linked_ok API: one link of the patched PTX and the cubin, loaded by API
	log_has '^cuLinkAddData ptx patched$' && log_has '^cuLinkAddData cubin$' &&
	log_has '^cuLinkComplete units=2 maxreg=0$' &&
	log_has "^load 1 $1 elf patched entries=.*gpux_clock_sample.* helpers=(.*,)?gpux_h_[a-z]+_count(,|\$)" &&
	log_lacks 'ptx patched entries' &&
	grep -qE "^gpux: linked a patched module with the helper library's sm_90 cubin \([0-9]+ registers\) in [0-9.]+ ms$" "$tmp/err" ||
		{ cat "$tmp/err"; fail "not linked with the library's cubin"; }
}
t_lib_module() {
	lib_tools || return
	FAKE_CUDA_PTXAS=$RT_PTXAS lib_ctl "" -- "$RT_DRV_APP" module "$PTX" &&
	same "$tmp/out" drv_module.out && same "$tmp/dump" drv_count.dump &&
	linked_ok cuModuleLoadDataEx &&
	grep -qE '^gpux: the driver loaded a patched module \(a linked cubin\) in [0-9.]+ ms$' "$tmp/err" &&
	set_up || { cat "$tmp/err"; fail "lib_module"; }
}
# gpux's module cache: the second run of the same program loads the
# linked module from it (no link), with the same counts; a third with
# --no-cache links again; a file of the cache that is not what it
# claims (another key, cut short) is not loaded.
t_lib_cache() {
	lib_tools || return
	export FAKE_CUDA_LINKED_DIR=$tmp/linked
	mkdir -p "$FAKE_CUDA_LINKED_DIR"
	FAKE_CUDA_PTXAS=$RT_PTXAS lib_ctl "" -- "$RT_DRV_APP" module "$PTX" &&
	linked_ok cuModuleLoadDataEx || return 1
	[ "$(ls "$GPUX_CACHE_DIR" | grep -c '\.cubin$')" = 1 ] || { ls -la "$GPUX_CACHE_DIR"; fail "no cache file"; return 1; }
	[ "$(stat -c %a "$GPUX_CACHE_DIR")" = 700 ] || fail "the cache folder is not 0700"
	: >"$tmp/log"
	FAKE_CUDA_PTXAS=$RT_PTXAS lib_ctl "" -- "$RT_DRV_APP" module "$PTX" &&
	same "$tmp/out" drv_module.out && same "$tmp/dump" drv_count.dump &&
	log_lacks '^cuLinkComplete' &&
	log_has '^load 1 cuModuleLoadDataEx elf patched entries=.*gpux_clock_sample' &&
	grep -qE "^gpux: a patched module linked with the helper library's sm_90 cubin, from gpux's cache in [0-9.]+ ms$" "$tmp/err" &&
	set_up || { cat "$tmp/err"; fail "not loaded from the cache"; return 1; }
	: >"$tmp/log"
	FAKE_CUDA_PTXAS=$RT_PTXAS lib_ctl "" --no-cache -- "$RT_DRV_APP" module "$PTX" &&
	log_has '^cuLinkComplete' || return 1
	# a file cut short, then one under another key: linked again
	local f
	f=$(ls "$GPUX_CACHE_DIR"/*.cubin)
	truncate -s 100 "$f"
	: >"$tmp/log"
	FAKE_CUDA_PTXAS=$RT_PTXAS lib_ctl "" -- "$RT_DRV_APP" module "$PTX" &&
	log_has '^cuLinkComplete' && same "$tmp/dump" drv_count.dump || return 1
	cp "$f" "$tmp/good" && dd if=/dev/zero of="$f" bs=1 seek=8 count=4 conv=notrunc 2>/dev/null
	: >"$tmp/log"
	FAKE_CUDA_PTXAS=$RT_PTXAS lib_ctl "" -- "$RT_DRV_APP" module "$PTX" &&
	log_has '^cuLinkComplete' && same "$tmp/dump" drv_count.dump
}
# The folder is kept within GPUX_CACHE_MAX_MB: at 0 nothing stays.
t_lib_cache_bound() {
	lib_tools || return
	GPUX_CACHE_MAX_MB=0 FAKE_CUDA_PTXAS=$RT_PTXAS lib_ctl "" -- "$RT_DRV_APP" module "$PTX" &&
	linked_ok cuModuleLoadDataEx &&
	[ -z "$(ls "$GPUX_CACHE_DIR")" ] || { ls -la "$GPUX_CACHE_DIR"; fail "the cache kept files past its bound"; }
}
# A cache folder others may write to is not used.
t_lib_cache_unsafe() {
	lib_tools || return
	mkdir -p "$GPUX_CACHE_DIR" && chmod 777 "$GPUX_CACHE_DIR" &&
	FAKE_CUDA_PTXAS=$RT_PTXAS lib_ctl "" -- "$RT_DRV_APP" module "$PTX" &&
	linked_ok cuModuleLoadDataEx &&
	grep -q "is not a folder only this user may write; it is not used" "$tmp/err" &&
	[ -z "$(ls "$GPUX_CACHE_DIR")" ] || { ls -la "$GPUX_CACHE_DIR"; cat "$tmp/err"; fail "an unsafe cache folder was used"; }
}
# The link with the library's cubin on a driver without
# CU_JIT_SPLIT_COMPILE: created again without the option.
t_lib_old_jit() {
	lib_tools || return
	FAKE_CUDA_OLD_JIT=1 FAKE_CUDA_PTXAS=$RT_PTXAS lib_ctl "" -- "$RT_DRV_APP" module "$PTX" &&
	same "$tmp/out" drv_module.out && same "$tmp/dump" drv_count.dump &&
	linked_ok cuModuleLoadDataEx && log_has '^cuLinkCreate: jit option split-compile refused$' &&
	set_up || { cat "$tmp/err"; fail "lib_old_jit"; }
}
# cuLibraryLoadData before any context: the link takes the primary one.
t_lib_library() {
	lib_tools || return
	FAKE_CUDA_PTXAS=$RT_PTXAS lib_ctl "" -- "$RT_DRV_APP" library "$PTX" &&
	same "$tmp/out" drv_library.out && same "$tmp/dump" drv_count.dump &&
	linked_ok cuLibraryLoadData &&
	grep -qE '^gpux: the driver loaded a patched library \(a linked cubin\) in ' "$tmp/err" &&
	set_up || { cat "$tmp/err"; fail "lib_library"; }
}
# JIT options that shape the code (here CU_JIT_MAX_REGISTERS) are the
# driver's to apply: the module carries the library as PTX; an info log
# (modex) leaves the link alone.
t_lib_jit_options() {
	lib_tools || return
	FAKE_CUDA_PTXAS=$RT_PTXAS lib_ctl "" -- "$RT_DRV_APP" modexreg "$PTX" &&
	same "$tmp/out" drv_modexreg.out && same "$tmp/dump" drv_count.dump &&
	log_has '^load 1 cuModuleLoadDataEx ptx patched ' && log_lacks '^cuLink' &&
	grep -q 'loaded with JIT options that shape its code carries the helper library as PTX' "$tmp/err" &&
	set_up || return 1
	: >"$tmp/log"
	FAKE_CUDA_PTXAS=$RT_PTXAS lib_ctl "" -- "$RT_DRV_APP" modex "$PTX" &&
	same "$tmp/out" drv_modex.out && linked_ok cuModuleLoadDataEx
}
# A device this build has no cubin for: the library goes as PTX, said once.
t_lib_no_cubin() {
	FAKE_CUDA_CC=130 lib_ctl "" -- "$RT_DRV_APP" twoctx "$PTX" &&
	same "$tmp/out" twoctx.out &&
	log_has '^load 1 cuModuleLoadDataEx ptx patched ' && log_lacks '^cuLink' &&
	[ "$(grep -c 'has no helper library cubin for sm_130: patched modules carry the library as PTX' "$tmp/err")" = 1 ] &&
	grep -qE '^gpux: the driver loaded a patched module \(PTX with the helper library\) in ' "$tmp/err" &&
	set_up || { cat "$tmp/err"; fail "lib_no_cubin"; }
}
# -v says what the probes cost each kernel in registers: the original
# image loaded beside the patched one (the fake counts an instrumented
# body's statements as more registers), once per module.
t_verbose_regs() {
	count_ctl 0 "" --verbose -- "$RT_DRV_APP" module "$PTX" &&
	[ "$(grep -cE '^gpux: registers per thread, without -> with probes: add_one [0-9]+ -> [0-9]+, scale\(float\*, float, int\) [0-9]+ -> [0-9]+; 0 unchanged$' "$tmp/err")" = 1 ] &&
	log_has '^load 2 cuModuleLoadData ' || { cat "$tmp/err"; fail "verbose_regs"; }
}
# The driver's link refuses the cubin: the module carries the library as
# PTX, as before, and -v says so once.
t_lib_link_refused() {
	lib_tools || return
	FAKE_CUDA_PTXAS=$RT_PTXAS FAKE_CUDA_LINK_NO_CUBIN=1 lib_ctl "" -- \
		"$RT_DRV_APP" twoctx "$PTX" &&
	same "$tmp/out" twoctx.out &&
	log_has '^cuLinkAddData cubin: refused$' && log_has '^load 1 cuModuleLoadDataEx ptx patched ' &&
	[ "$(grep -c "cannot link a patched module with the helper library's sm_90 cubin (.*): it carries the library as PTX" "$tmp/err")" = 1 ] &&
	set_up || { cat "$tmp/err" "$tmp/log"; fail "lib_link_refused"; }
}
# Register caps: the kernel keeps its SASS's count, the library comes at
# the largest budget within it, and nvlink takes the pair.
t_lib_register_cap() {
	lib_tools || return
	local regs lib
	regs=$(sed -n 's/.*Used \([0-9]*\) registers.*/\1/p' "$RT_CUDA_DIR/kern_regs.ptxas")
	[ -n "$regs" ] || { fail "no register count from ptxas"; return 1; }
	probes 'gdev:access { @[gtid] = count(); }' &&
	FAKE_CUDA_PTXAS=$RT_PTXAS ctl 0 --ptx "$tmp/emit/device.ptx" \
		--link-ptx "$tmp/emit/device.link.ptx" --probe "2::gpux_probe_0" --map 8:8:4096 \
		--verbose -- "$RT_DRV_APP" image "$RT_CUDA_DIR/kern_regs.fatbin" &&
	log_has '^cuLinkComplete units=2 maxreg=0$' &&
	log_has '^load 1 cuModuleLoadDataEx elf patched entries=heavy,gpux_clock_sample .*helpers=' || return 1
	lib=$(sed -n "s/.*sm_90 cubin (\([0-9]*\) registers).*/\1/p" "$tmp/err")
	[ -n "$lib" ] && [ "$lib" -ge 24 ] && [ "$lib" -le "$regs" ] ||
		{ cat "$tmp/err"; fail "the library at ${lib:-?} registers for a kernel of $regs"; }
}
# Relocatable device code: the library goes into the link once, as its
# cubin, besides both units' rewritten PTX.
t_lib_rdc() {
	lib_tools || return
	local c=$RT_CUDA_DIR
	FAKE_CUDA_PTXAS=$RT_PTXAS lib_ctl "" -- "$RT_DRV_APP" rdc \
		"$c/rdc_linked.fatbin" "$c/rdc_main.fatbin" "$c/rdc_lib.fatbin" &&
	grep -qx 'drv_app: rdc_vadd and rdc_fill<<<1, 64>>> from relocatable device code' "$tmp/out" &&
	[ "$(grep -c '^cuLinkAddData ptx patched$' "$tmp/log")" = 2 ] &&
	[ "$(grep -c '^cuLinkAddData cubin$' "$tmp/log")" = 1 ] &&
	log_has '^cuLinkComplete units=3 maxreg=[1-9][0-9]*$' &&
	log_has '^load 1 cuModuleLoadDataEx elf patched entries=.*_Z8rdc_vaddPKfS0_Pfi.* helpers=' &&
	grep -q 'linked a module of relocatable device code again: 2 units, 2 of them instrumented.*, the helper library as its cubin in' "$tmp/err" &&
	grep -q '_Z8rdc_vaddPKfS0_Pfi.*64\|rdc_vadd.*64' "$tmp/dump" &&
	grep -q 'rdc_fill.*64' "$tmp/dump" &&
	set_up || { cat "$tmp/err" "$tmp/dump" "$tmp/log"; fail "lib_rdc"; }
}
t_verbose() {
	count_ctl 0 "" --verbose -- "$RT_DRV_APP" module "$PTX" &&
	same "$tmp/out" drv_module.out && same "$tmp/dump" drv_count.dump &&
	grep -qE '^gpux: patched a module of [0-9]+ functions in [0-9]+\.[0-9]{2} ms$' "$tmp/err" &&
	! grep -qv '^gpux: ' "$tmp/err" || { cat "$tmp/err"; fail "verbose"; }
}
# printf records go through the device ring into the slot's event ring.
t_printf() {
	probes "$PRINTF" &&
	FAKE_CUDA_PRINTF=0:2:k,l ctl 0 --ptx "$tmp/emit/device.ptx" \
		--probe 1::gpux_probe_0 -- "$RT_DRV_APP" module "$PTX" &&
	same "$tmp/out" drv_module.out && err_empty && same "$tmp/dump" printf.dump
}
# exit() on the device reaches the segment's exit word.
t_device_exit() {
	probes "$EXIT" &&
	ctl 0 --ptx "$tmp/emit/device.ptx" --probe 1::gpux_probe_0 --map 8:8:4096 \
		-- "$RT_DRV_APP" module "$PTX" &&
	same "$tmp/out" drv_module.out && err_empty && same "$tmp/dump" exit.dump
}

# A map of one entry: the second kernel's key is dropped, and counted.
t_map_full() {
	probes "$COUNT" &&
	ctl 0 --ptx "$tmp/emit/device.ptx" --probe 1::gpux_probe_0 --map 8:8:1 \
		-- "$RT_DRV_APP" noclean "$PTX" &&
	same "$tmp/out" noclean.out && err_empty && same "$tmp/dump" map_full.dump
}
# The same, but the module is unloaded before the context ends: its drop
# count must still reach the last snapshot.
t_map_full_unloaded() {
	probes "$COUNT" &&
	ctl 0 --ptx "$tmp/emit/device.ptx" --probe 1::gpux_probe_0 --map 8:8:1 \
		-- "$RT_DRV_APP" module "$PTX" &&
	same "$tmp/out" drv_module.out && err_empty && same "$tmp/dump" map_full.dump
}
# Nobody reads the event ring: the first 1985 records fill it, the
# other 3019 are counted lost (slot ring_drops: device ring and event
# ring together).
t_ring_full() {
	probes 'gdev:kernel_exit { printf("%s lane %d\n", kernel, lane); @[kernel] = count(); }' &&
	FAKE_CUDA_PRINTF=0:32:0,l ctl 0 --count --ptx "$tmp/emit/device.ptx" \
		--probe 1::gpux_probe_0 --map 8:8:4096 -- "$RT_DRV_APP" many "$PTX" &&
	same "$tmp/out" many.out && err_empty && same "$tmp/dump" ring_full.dump
}
# The controller dies (SIGKILL) 100 ms into 5000 launches: the runtime
# sees it and turns the probes off (the rewriter's gpux_off; the fake
# then runs the kernels without their probes), and the program runs to
# its end. The counts published before stay; none after.
t_controller_dies() {
	count_ctl 0 "" --controller-dies 100 -- "$RT_DRV_APP" many "$PTX" &&
	same "$tmp/out" many.out && err_empty || return 1
	local on off
	on=$(grep -c 'add_one grid=1,1,1 block=32,1,1 .*clock=[a-z]*$' "$tmp/log")
	off=$(grep -c 'add_one grid=1,1,1 block=32,1,1 .* off$' "$tmp/log")
	echo "probed launches $on, unprobed $off"
	[ "$on" -gt 0 ] && [ "$off" -gt 0 ] && [ $((on + off)) = 5000 ] ||
		fail "launches with probes on $on, off $off: want both, 5000 in all" || return 1
	grep 'add_one grid=1,1,1 block=32,1,1' "$tmp/log" | tail -n1 | grep -q ' off$' ||
		fail "the last launch still probed"
}
# The program crashes right after 10 synchronised launches (a SIGSEGV,
# an abort): the runtime's handler takes the final snapshot, every
# launch is counted (4 x 64 x 10), and the signal still ends the program.
t_crash_segv() {
	# (under ASan, its own SIGSEGV report would end the program instead)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0 \
		count_ctl 139 "" -- "$RT_DRV_APP" segv "$PTX" &&
	same "$tmp/out" crash_segv.out && same "$tmp/dump" crash.dump
}
t_crash_abort() {
	count_ctl 134 "" -- "$RT_DRV_APP" abort "$PTX" &&
	same "$tmp/out" crash_abort.out && same "$tmp/dump" crash.dump
}
# The program exits without unloading or destroying anything: the
# runtime's exit handler writes the final snapshot.
t_exit_without_cleanup() {
	count_ctl 0 "" -- "$RT_DRV_APP" noclean "$PTX" &&
	same "$tmp/out" noclean.out && err_empty && same "$tmp/dump" drv_count.dump &&
	set_up
}
# 2.6 MB of printf records (10 KiB per 2 ms at most) through a 64 KiB
# device ring and the 1 MiB event ring (both wrap, fillers included),
# read while the program runs, with snapshots asked for meanwhile: every
# record arrives, intact.
t_ring_stream() {
	probes 'gdev:kernel_exit { printf("%s lane %d\n", kernel, lane); @[kernel] = count(); }' &&
	FAKE_CUDA_PRINTF=0:32:0,l ctl 0 --consume --ptx "$tmp/emit/device.ptx" \
		--probe 1::gpux_probe_0 --map 8:8:4096 -- "$RT_DRV_APP" many "$PTX" &&
	same "$tmp/out" many.out && err_empty && same "$tmp/dump" stream.dump
}

# Something else retains and releases the primary context of the
# device while the program's own context (on that device) is traced:
# its slot must stay live and count every launch.
t_primary_release() {
	count_ctl 0 "" -- "$RT_DRV_APP" primary "$PTX" &&
	same "$tmp/out" primary.out && err_empty && same "$tmp/dump" drv_count.dump
}
# Another interposer preloaded after the runtime looks up the next
# cuInit with dlsym(RTLD_NEXT): it must get libcuda's, not its own.
t_rtld_next() {
	if [ "${RT_SANITIZED:-OFF}" = ON ]; then
		echo "SKIP: sanitizer build (asan_dlsym.c answers RTLD_NEXT itself)"
		return 77
	fi
	count_ctl 0 "" --preload "$PRELOAD:$RT_NEXT_LIB" -- "$RT_DRV_APP" module "$PTX" &&
	same "$tmp/out" drv_module.out && same "$tmp/err" rtld_next.err &&
	same "$tmp/dump" drv_count.dump
}

# api_app's calls with nobody listening to cuda: events: each reaches
# the driver's own variant (per-thread ones included), and launches ask
# the driver for no kernel names.
t_api_quiet() {
	ctl 0 -- "$RT_API_APP" "$PTX" "$FATBIN" "$PTX_FATBIN" "$CUBIN" &&
	same "$tmp/out" api.out && grep -q '^api_app: stream=0x[0-9a-f]*$' "$tmp/err" &&
	{ [ "$(wc -l <"$tmp/err")" = 1 ] || { cat "$tmp/err"; fail "stderr"; }; } &&
	for f in cuMemAllocAsync_ptsz cuMemcpyHtoD_v2_ptds cuMemcpyDtoHAsync_v2_ptsz \
		 cuMemcpy_ptds cuMemcpyDtoD_v2_ptds cuMemFreeAsync_ptsz cuStreamSynchronize_ptsz \
		 cuCtxSynchronize_v2 cuMemcpy3DAsync_v2 cuMemAllocFromPoolAsync; do
		log_has "^call $f\$" || return 1
	done &&
	log_has '^cuLaunchKernel_ptsz add_one grid=1,1,1 block=32,1,1 ' &&
	log_lacks '^cu(Func|Kernel)GetName'
}

# ---- through gpux, the real controller ----
# gpux puts the runtime first in LD_PRELOAD; ASan wants its own runtime
# first, so in the sanitizer build these cases are skipped.
# gpux_run WANT_RC PROG CMD: gpux -e PROG -c "{ CMD; } > $tmp/app.out",
# with the runtime under test.
gpux_run() {
	if [ "${RT_SANITIZED:-OFF}" = ON ]; then
		echo "SKIP: sanitizer build (gpux preloads the runtime before the ASan runtime)"
		return 77
	fi
	local want=$1 prog=$2 cmd=$3
	GPUX_RT=$RT_LIB timeout 60 "$RT_GPUX" ${4:-} -e "$prog" -c "{ $cmd; } >'$tmp/app.out'" \
		>"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$?
	if [ "$rc" != "$want" ]; then
		echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"
		fail "gpux -e '$prog' -c '$cmd' exited $rc, expected $want"
	fi
}
t_gpux_count() {
	gpux_run 0 "$COUNT" "'$RT_DRV_APP' module '$PTX'" &&
	same "$tmp/out" gpux_count.out && err_empty && same "$tmp/app.out" drv_module.out
}
# gpux puts the link form in the segment: with a linker, the module is
# linked with the library's cubin; the output is the same.
t_gpux_lib() {
	lib_tools || return
	FAKE_CUDA_PTXAS=$RT_PTXAS gpux_run 0 "$HCOUNT" "'$RT_DRV_APP' module '$PTX'" &&
	same "$tmp/out" gpux_hcount.out && err_empty && same "$tmp/app.out" drv_module.out &&
	log_has '^load 1 cuModuleLoadDataEx elf patched .*helpers='
}
# An array count: the module goes as PTX with the library, no link.
t_gpux_lib_array() {
	lib_tools || return
	FAKE_CUDA_PTXAS=$RT_PTXAS gpux_run 0 "$COUNT" "'$RT_DRV_APP' module '$PTX'" &&
	same "$tmp/out" gpux_count.out && err_empty && same "$tmp/app.out" drv_module.out &&
	log_has '^load 1 cuModuleLoadDataEx ptx patched ' && log_lacks '^cuLink'
}
# A map keyed by kernel id has 32 shards, of which a snapshot copies
# only the rows of the ids in use: two kernels, so 8 bytes of state
# words and 16 of counts a shard (of 4096 rows: 48 KiB). The drop
# counters are 8-byte copies too.
t_gpux_kernel_rows() {
	rm -f "$tmp/log"
	FAKE_CUDA_LOG_COPIES=1 gpux_run 0 "$COUNT" "'$RT_DRV_APP' module '$PTX'" &&
	same "$tmp/out" gpux_count.out && err_empty || return
	log_has '^launch .* array map 0 key 1 ' || return
	local big n8 n16
	big=$(awk '$1 == "cuMemcpyDtoHAsync" && $2 > 4096' "$tmp/log" | wc -l)
	n8=$(grep -c '^cuMemcpyDtoHAsync 8$' "$tmp/log")
	n16=$(grep -c '^cuMemcpyDtoHAsync 16$' "$tmp/log")
	[ "$big" = 0 ] && [ "$n16" -ge 32 ] && [ $((n16 % 32)) = 0 ] && [ "$n8" -ge "$n16" ] ||
		{ cat "$tmp/log"; fail "whole tables copied, or not every shard's rows"; }
}
# A device timer 250 ppm fast: the runtime samples the clocks again,
# learns the rate and gives it to every module, so each launch of a 1.5 s
# run reads nsecs within 300 us of the host (without that, 375 us off by
# the end; the fake's sampler is a thread, slower to answer than a GPU,
# so the second sample may come late: by 1.2 s it is 300 us off).
t_gpux_clock_drift() {
	rm -f "$tmp/log"
	FAKE_CUDA_CLOCK_PPM=250 gpux_run 0 'gdev:kernel_exit /nsecs > 0/ { @[kernel] = count(); }' \
		"'$RT_DRV_APP' many '$PTX' 15000" && err_empty || return
	set_up || return
	[ "$(grep -c '^clock sample' "$tmp/log")" -ge 5 ] ||
		{ cat "$tmp/log"; fail "the clocks were not sampled again"; }
}
t_gpux_library() {
	gpux_run 0 "$COUNT" "'$RT_DRV_APP' library '$PTX'" &&
	same "$tmp/out" gpux_count.out && err_empty && same "$tmp/app.out" drv_library.out
}
t_gpux_gpa() {
	gpux_run 0 "$COUNT" "'$RT_GPA_APP' '$PTX'" &&
	same "$tmp/out" gpux_gpa.out && err_empty && same "$tmp/app.out" gpa.out
}
# Two contexts' slots merge into one map.
t_gpux_two_contexts() {
	gpux_run 0 "$COUNT" "'$RT_DRV_APP' twoctx '$PTX'" &&
	same "$tmp/out" gpux_twoctx.out && err_empty && same "$tmp/app.out" twoctx.out
}
# Two processes, a slot each; gpux merges their maps by kernel name.
t_gpux_two_processes() {
	gpux_run 0 "$COUNT" "'$RT_DRV_APP' module '$PTX' && '$RT_GPA_APP' '$PTX'" &&
	same "$tmp/out" gpux_two_processes.out && err_empty
}
# The gpu builtin: the device of the event's context, in device probes
# and in cuda: ones (kernel_end's from the poller thread too).
t_gpux_gpu() {
	FAKE_CUDA_DEVICES=2 gpux_run 0 'cuda:launch { @l[gpu] = count(); } cuda:kernel_end { @e[gpu] = count(); }' \
		"'$RT_DRV_APP' twodev '$PTX'" &&
	same "$tmp/out" gpux_gpu.out && err_empty
}
# Each patched module holds its context's device for the gpu builtin
# (the fake cannot run a probe's keys: it shows what the module holds).
t_gpu_module() {
	FAKE_CUDA_DEVICES=2 count_ctl 0 "" -- "$RT_DRV_APP" twodev "$PTX" &&
	log_has '^cuLaunchKernel add_one grid=1,1,1 block=64,1,1 sites=1 ctl=exit clock=ok$' &&
	[ "$(grep -c '^cuLaunchKernel add_one .* clock=ok gpu=1$' "$tmp/log")" = 2 ] ||
		{ cat "$tmp/log"; fail "the second device's module holds gpu=1"; }
}
# Children that closed their descriptors (spawn) or kept them (fork +
# exec), started by the program gpux runs: both join, their maps one run;
# cuda: probes run in each child's VM, keyed apart by pid.
t_gpux_children() {
	gpux_run 0 'cuda:launch { @l[pid == cpid] = count(); @n = count(); } gdev:kernel_exit { @x[kernel] = count(); }' \
		"'$RT_DRV_APP' spawn '$PTX' && '$RT_DRV_APP' forkexec '$PTX'" &&
	same "$tmp/out" gpux_children.out && err_empty
}
t_gpux_printf() {
	FAKE_CUDA_PRINTF=0:2:k,l gpux_run 0 "$PRINTF" "'$RT_DRV_APP' module '$PTX'" &&
	same "$tmp/out" gpux_printf.out && err_empty && same "$tmp/app.out" drv_module.out
}
t_gpux_sass_only() {
	gpux_run 0 "$COUNT" "'$RT_DRV_APP' image '$FATBIN'" &&
	same "$tmp/out" gpux_empty.out && same "$tmp/err" sass.err && same "$tmp/app.out" sass.out
}

# Every cuda: event of api_app (see there): counts and fields in maps;
# the stream the program made reads S, and an image's size (its file's)
# the file's name. Kernel names come from the
# driver once per function handle (scale from the library through
# cuKernelGetName), again after an unload.
API_EVENTS='cuda:module_load { @load[bytes, ptx, module != 0] = count(); }
cuda:malloc { @malloc[bytes, managed, ptr != 0] = count(); @live[ptr] = bytes; }
cuda:free { @free[@live[ptr]] = count(); delete(@live[ptr]); }
cuda:memcpy { @memcpy[kind, bytes, async, stream] = count(); }
cuda:sync { @sync[stream] = count(); }
cuda:launch { @launch[kernel, grid.x, grid.y, grid.z, block.x, block.y, block.z, shmem,
                      stream] = count(); }
cuda:launch:add_* { @add[kernel] = count(); }'
t_gpux_cuda_events() {
	gpux_run 0 "$API_EVENTS" "'$RT_API_APP' '$PTX' '$FATBIN' '$PTX_FATBIN' '$CUBIN'" || return
	same "$tmp/app.out" api.out || return 1
	local s
	s=$(sed -n 's/^api_app: stream=//p' "$tmp/err")
	[ -n "$s" ] && [ "$(wc -l <"$tmp/err")" = 1 ] || { cat "$tmp/err"; fail "stderr"; return 1; }
	# image sizes (nvcc's) by the file's name
	sed -e "s/\b$(printf %d "$s")\b/S/g" \
	    -e "s/^@load\[$(stat -c %s "$PTX"),/@load[kern.ptx,/" \
	    -e "s/^@load\[$(stat -c %s "$PTX_FATBIN"),/@load[kern_ptx.fatbin,/" \
	    -e "s/^@load\[$(stat -c %s "$FATBIN"),/@load[kern_sass.fatbin,/" \
	    -e "s/^@load\[$(stat -c %s "$CUBIN"),/@load[kern.cubin,/" "$tmp/out" >"$tmp/out.s"
	same "$tmp/out.s" api_events.out || return 1
	[ "$(grep -c '^cuFuncGetName ' "$tmp/log")" = 5 ] &&
	[ "$(grep -c '^cuKernelGetName ' "$tmp/log")" = 1 ] &&
	log_has '^cuFuncGetName _Z5scalePffi: refused$' &&
	log_has '^cuKernelGetName _Z5scalePffi$' || { cat "$tmp/log"; fail "name lookups"; }
}
# A map cuda: probes write and gdev: probes read: the runtime's VM
# works on a host table in the device's layout, whose contents the
# snapshots carry, and launches write the slots that changed to the
# device as one batch of stream writes (what the device reads: the GPU
# tests). A driver that refuses stream writes gets copies, and is asked
# once.
CROSS='cuda:launch { @t[kernel] = 5; @c[kernel] = count(); }
	gdev:kernel_entry { @y[kernel] = @t[kernel]; }'
t_gpux_cross_layer() {
	rm -f "$tmp/log"
	gpux_run 0 "$CROSS" "'$RT_DRV_APP' module '$PTX'" &&
	same "$tmp/out" gpux_cross_layer.out && err_empty || return
	# add_one's 3 launches and scale's one: a new slot (key, value,
	# state) at each kernel's first, then only the value
	[ "$(grep -c '^cuStreamBatchMemOp 3 ok$' "$tmp/log")" = 2 ] &&
	[ "$(grep -c '^cuStreamBatchMemOp 1 ok$' "$tmp/log")" = 2 ] &&
	[ "$(grep -c '^cuStreamBatchMemOp' "$tmp/log")" = 4 ] || { cat "$tmp/log"; fail "stream writes"; }
}
t_gpux_cross_layer_copies() {
	rm -f "$tmp/log"
	FAKE_CUDA_NO_MEMOPS=1 gpux_run 0 "$CROSS" "'$RT_DRV_APP' module '$PTX'" &&
	same "$tmp/out" gpux_cross_layer.out && err_empty || return
	[ "$(grep -c '^cuStreamBatchMemOp' "$tmp/log")" = 1 ] &&
	log_has '^cuStreamBatchMemOp 3 refused$' || { cat "$tmp/log"; fail "refused once"; }
}
# printf, exit() and clear() from cuda: probes.
t_gpux_cuda_printf_exit() {
	gpux_run 3 'cuda:malloc { printf("malloc %d\n", bytes); @m = count(); }
		cuda:launch { @l[kernel] = count(); clear(@m); }
		cuda:free { printf("free\n"); exit(3); }' \
		"'$RT_API_APP' '$PTX' '$FATBIN' '$PTX_FATBIN' '$CUBIN'" &&
	same "$tmp/out" gpux_cuda_printf_exit.out
}
# The first event before any launch or module load (a cudaMalloc first,
# as every cudart program does): the runtime thread starts safely.
t_gpux_cuda_first_alloc() {
	gpux_run 0 'cuda:malloc { @m = count(); } cuda:free { @f = count(); }' "'$RT_API_APP' first-alloc" &&
	printf 'Attaching 2 probes...\n\n\n@f: 1\n@m: 1\n' >"$tmp/want" &&
	{ cmp -s "$tmp/want" "$tmp/out" || { diff -u "$tmp/want" "$tmp/out"; fail "output"; }; } && err_empty
}
# BEGIN, END and interval beside gdev: and cuda: probes: BEGIN before
# the program, interval prints and clears maps held in the traced
# processes (through a baseline: the final print shows only the second
# run), END after it; a local map of BEGIN/END beside them. How many
# intervals fall between the runs depends on the machine: the first
# print and the end are compared.
t_gpux_interval() {
	gpux_run 0 'BEGIN { printf("begin\n"); @b = 1; }
		cuda:launch { @l[kernel] = count(); }
		gdev:kernel_exit { @e[kernel] = count(); }
		interval:ms:500 { print(@l); print(@e); clear(@e); zero(@l); }
		END { printf("end %d\n", @b); }' \
		"'$RT_DRV_APP' module '$PTX'; sleep 1.2; '$RT_DRV_APP' module '$PTX'" || return
	{ head -n 6 "$tmp/out"; sed -n '/^end 1$/,$p' "$tmp/out"; } >"$tmp/out.s"
	same "$tmp/out.s" gpux_interval.out && err_empty
}
# exit() in BEGIN: the program never starts; END still runs.
t_gpux_begin_exit() {
	gpux_run 0 'BEGIN { printf("begin\n"); exit(); } cuda:launch { @l = count(); }
		END { printf("end\n"); }' "touch '$tmp/ran'" || return
	printf 'Attaching 3 probes...\nbegin\nend\n\n\n@l: 0\n' >"$tmp/want"
	cmp -s "$tmp/want" "$tmp/out" || { diff -u "$tmp/want" "$tmp/out"; fail "output"; return 1; }
	[ ! -e "$tmp/ran" ] || fail "the program ran"
}
# -k in cuda: probes: the runtime's VM reports a failed delete as the
# kernel's would, through the session, once per launch, at the call.
t_gpux_helper_errors() {
	gpux_run 0 'cuda:launch { @l = count(); @x[2] = 1; delete(@x[1]); }' \
		"'$RT_DRV_APP' module '$PTX'" -k || return
	err_empty || return 1
	local n
	n=$(sed -n 's/^@l: //p' "$tmp/out")
	[ -n "$n" ] && [ "$n" -gt 0 ] &&
	[ "$(grep -c '^stdin:1:40-53: WARNING: Failed to map_delete_elem: No such file or directory (-2)$' "$tmp/out")" = "$n" ] ||
		{ cat "$tmp/out"; fail "want one warning per launch ($n)"; }
}
# A command that never used CUDA is told so once at the end, instead
# of blank maps alone; one ended by exit() before it could is not (it
# may not have got there yet), nor one that used CUDA (t_gpux_count).
NO_CUDA_MSG="gpux: WARNING: no CUDA context or module was seen in the command (it never used CUDA, or ran where gpux's runtime was not loaded): its gdev: and cuda: probes had nothing to fire on"
t_gpux_no_cuda() {
	gpux_run 0 "$COUNT cuda:launch { @l = count(); }" true || return
	printf '%s\n' "$NO_CUDA_MSG" >"$tmp/want"
	cmp -s "$tmp/want" "$tmp/err" || { diff -u "$tmp/want" "$tmp/err"; fail "stderr"; return 1; }
	grep -qx '@l: 0' "$tmp/out" || { cat "$tmp/out"; fail "output"; return 1; }
	gpux_run 0 "cuda:launch { @l = count(); } interval:ms:100 { exit(); }" "sleep 5" &&
	err_empty
}
# What BEGIN/END/interval cannot do to maps held in the traced program.
t_gpux_interval_refused() {
	gpux_run 1 'gdev:kernel_exit { @e[kernel] = count(); } END { printf("%d\n", @e["k"]); }' true ||
		return
	grep -q "^stdin:1:65-72: ERROR: @e is used by gdev: or cuda: probes, which keep it in the traced program; BEGIN, END and interval probes can print, clear and zero it but not read or write it yet$" "$tmp/err" ||
		{ cat "$tmp/err"; fail "read refused"; return 1; }
	gpux_run 1 'cuda:malloc { @m = max(bytes); } interval:s:1 { clear(@m); }' true || return
	grep -q "^stdin:1:49-58: ERROR: clear(@m): gdev: or cuda: probes hold @m; BEGIN, END and interval can clear or zero only their count, sum, avg, stats, hist and lhist maps$" "$tmp/err" ||
		{ cat "$tmp/err"; fail "clear refused"; }
}
# cuda:launch's nargs and arg0..: each parameter read with its own size
# (the driver's cuFuncGetParamInfo), 0 past the last: add_one(float *x,
# int n) with n = 256, scale(float *x, float a, int n) with a = 2.0f
# (0x40000000); arg0 is the buffer cuda:malloc saw.
t_gpux_launch_args() {
	gpux_run 0 'cuda:malloc { @buf[ptr] = 1; }
		cuda:launch { @a[kernel, nargs, @buf[arg0], arg1, arg2, arg11] = count(); }' \
		"'$RT_DRV_APP' module '$PTX'" || return
	grep -qxF '@a[add_one, 2, 1, 256, 0, 0]: 3' "$tmp/out" &&
	grep -qxF '@a[scale(float*, float, int), 3, 1, 1073741824, 256, 0]: 1' "$tmp/out" &&
	[ "$(grep -c '^@a\[' "$tmp/out")" = 2 ] || { cat "$tmp/out"; fail "launch arguments"; return 1; }
	# the same parameters packed in extra's CU_LAUNCH_PARAM_BUFFER_POINTER
	gpux_run 0 'cuda:malloc { @buf[ptr] = 1; }
		cuda:launch { @a[kernel, nargs, @buf[arg0], arg1, arg2] = count(); }' \
		"'$RT_DRV_APP' extra '$PTX'" || return
	grep -qxF '@a[add_one, 2, 1, 256, 0]: 1' "$tmp/out" ||
		{ cat "$tmp/out"; fail "launch arguments through extra"; }
}

# Memory actions of cuda: probes reach the driver with the event's
# stream, before the launch: drv_app mem launches add_one on 1 MiB of
# managed memory (n = 256, its own stream), then on device memory (n =
# 64, stream 0). A range past the allocation is cut at its end; on
# device memory every action is a counted no-op, said once at exit;
# alloc_base/alloc_size find the allocation from any address in it.
MEM='cuda:launch { prefetch(arg0, 4096); evict(arg0 + 4096, 1 << 30);
	advise(arg0, 512, READ_MOSTLY); advise(arg0 + 8192, 512, PREFERRED_CPU);
	advise(arg0, 4096, UNSET_ACCESSED_BY_GPU);
	@base[arg1] = alloc_base(arg0 + 100) - arg0; @size[arg1] = alloc_size(arg0 + 8);
	@free = gpu_free(); }'
t_gpux_mem_actions() {
	gpux_run 0 "$MEM" "'$RT_DRV_APP' mem '$PTX'" || return
	same "$tmp/app.out" drv_mem.out || return
	local want
	want=$(printf '%s\n' \
		'prefetch lo=0x[0-9a-f]*000 bytes=4096 to=gpu:0 flags=0 stream=app' \
		'prefetch lo=0x[0-9a-f]*000 bytes=1044480 to=host flags=0 stream=app' \
		'advise lo=0x[0-9a-f]*000 bytes=512 advice=1 at=gpu:0' \
		'advise lo=0x[0-9a-f]*000 bytes=512 advice=3 at=host' \
		'advise lo=0x[0-9a-f]*000 bytes=4096 advice=6 at=gpu:0' \
		'cuLaunchKernel add_one .*' 'cuLaunchKernel add_one .*')
	grep -E '^(prefetch|advise|cuLaunchKernel) ' "$tmp/log" >"$tmp/acts"
	[ "$(wc -l <"$tmp/acts")" = 7 ] && paste -d '\n' <(echo "$want") "$tmp/acts" |
		while read -r re && read -r line; do [[ $line =~ ^$re$ ]] || exit 1; done ||
		{ cat "$tmp/acts"; fail "driver calls"; return 1; }
	# the range cut at the allocation's end starts where the first ended
	local a b
	a=$(sed -n 1p "$tmp/acts" | sed 's/.*lo=0x\([0-9a-f]*\).*/\1/')
	b=$(sed -n 2p "$tmp/acts" | sed 's/.*lo=0x\([0-9a-f]*\).*/\1/')
	[ $((16#$b - 16#$a)) = 4096 ] || { cat "$tmp/acts"; fail "evict's address"; return 1; }
	printf '%s\n' '@base[64]: 0' '@base[256]: 0' '@free: 1073741824' '@size[64]: 4096' \
		'@size[256]: 1048576' >"$tmp/want"
	grep '^@' "$tmp/out" | cmp -s - "$tmp/want" || { cat "$tmp/out"; fail "alloc_base/alloc_size"; return 1; }
	sed "s/pid [0-9]*/pid N/" "$tmp/err" >"$tmp/err.n"
	same "$tmp/err.n" mem_actions.err
}
# A driver that refuses every hint: counted, its first refusal said
# once per action, the program's results unchanged.
t_gpux_mem_refused() {
	FAKE_CUDA_REFUSE_HINTS=1 gpux_run 0 "$MEM" "'$RT_DRV_APP' mem '$PTX'" || return
	same "$tmp/app.out" drv_mem.out || return
	sed -e "s/pid [0-9]*/pid N/" -e 's/(0x[0-9a-f]*,/(ADDR,/' "$tmp/err" >"$tmp/err.n"
	same "$tmp/err.n" mem_refused.err
}
# On a stream being captured into a graph, a prefetch or evict would end
# the program's capture with an error: skipped, counted, said at exit.
# Advice is no stream operation: it goes on.
t_gpux_mem_captured() {
	FAKE_CUDA_CAPTURING=1 gpux_run 0 "$MEM" "'$RT_DRV_APP' mem '$PTX'" || return
	same "$tmp/app.out" drv_mem.out && log_lacks '^prefetch ' && log_has '^advise ' || return
	sed "s/pid [0-9]*/pid N/" "$tmp/err" >"$tmp/err.n"
	same "$tmp/err.n" mem_captured.err
}
# Memory actions and alloc_* are cuda:-only, advise() takes a hint name.
t_gpux_mem_refusals() {
	gpux_run 1 'BEGIN { prefetch(0, 4096); }' true || return
	grep -qxF 'stdin:1:9-26: ERROR: prefetch() is not available in BEGIN' "$tmp/err" ||
		{ cat "$tmp/err"; fail "prefetch in BEGIN"; return 1; }
	gpux_run 1 'cuda:launch { advise(arg0, 8, READ_MOSTY); }' true || return
	grep -qxF "HINT: did you mean 'READ_MOSTLY'?" "$tmp/err" ||
		{ cat "$tmp/err"; fail "hint name"; return 1; }
	gpux_run 1 'interval:s:1 { $b = alloc_base(0); }' true || return
	grep -qxF 'stdin:1:21-34: ERROR: alloc_base() is not available in interval' "$tmp/err" ||
		{ cat "$tmp/err"; fail "alloc_base in interval"; }
}

# cuda: probes read what gdev: probes write as of the last snapshot: the
# second launch of drv_app mem comes after a synchronize, so it sees the
# first one's 64 exits; the first sees none.
t_gpux_cross_read() {
	gpux_run 0 'gdev:kernel_exit { @k[kernel] = count(); }
		cuda:launch { printf("%s saw %d\n", kernel, @k[kernel]); }' \
		"'$RT_DRV_APP' mem '$PTX'" || return
	same "$tmp/app.out" drv_mem.out && err_empty || return
	printf '%s\n' 'Attaching 2 probes...' 'add_one saw 0' 'add_one saw 64' >"$tmp/want"
	head -n 3 "$tmp/out" | cmp -s - "$tmp/want" && grep -qxF '@k[add_one]: 128' "$tmp/out" ||
		{ cat "$tmp/out"; fail "cross-layer read"; }
}
# A map both sides write has no one owner: refused where gdev: writes it.
t_gpux_cross_both_written() {
	gpux_run 1 'gdev:kernel_exit { @k[kernel] = blockIdx.x; } cuda:launch { @k[kernel] = 1; }' true ||
		return
	grep -qxF 'stdin:1:20-30: ERROR: @k is written by gdev: probes and by cuda: probes: one side may only read it' "$tmp/err" ||
		{ cat "$tmp/err"; fail "both written"; }
}

# An access probe whose predicate requires store, !store or atomic is
# spliced only at the instructions that can pass it: add_one and scale
# each load and store x once, and make no atomic.
t_gpux_access_only() {
	local pred want
	for pred in '2:' '1:/store/' '1:/!store && size == 4/' '0:/atomic/'; do
		want=${pred%%:*} pred=${pred#*:}
		rm -f "$tmp/log"
		gpux_run 0 "gdev:access $pred { @n[kernel] = count(); }" "'$RT_DRV_APP' module '$PTX'" ||
			return
		[ "$(grep -c "^cuLaunchKernel .* sites=$want " "$tmp/log")" = 4 ] ||
			{ grep '^cuLaunchKernel' "$tmp/log"; fail "$pred: not $want sites a kernel"; return 1; }
	done
}

# The runtime matches the clocks (a launch of its own) only when device
# probes read nsecs.
t_gpux_clock_on_demand() {
	gpux_run 0 "$COUNT" "'$RT_DRV_APP' module '$PTX'" || return
	log_has 'clock=unset' && log_lacks 'clock=ok' || return
	rm -f "$tmp/log"
	gpux_run 0 'gdev:kernel_exit { @t = max(nsecs); }' "'$RT_DRV_APP' module '$PTX'" || return
	log_has 'clock=ok' && log_lacks 'clock=unset'
}

# What the runtime has to say reaches gpux's stderr, not the program's,
# once however many times it is said (two loads of one SASS-only
# image), and -f json carries it as a "warning" record.
t_gpux_runtime_msgs() {
	gpux_run 0 "$COUNT" "'$RT_DRV_APP' image '$FATBIN' 2>'$tmp/app.err'; '$RT_DRV_APP' image '$FATBIN' 2>>'$tmp/app.err'" ||
		return
	[ ! -s "$tmp/app.err" ] || { cat "$tmp/app.err"; fail "the program's stderr has gpux's messages"; return 1; }
	same "$tmp/err" sass.err || return
	GPUX_RT=$RT_LIB timeout 60 "$RT_GPUX" -f json -e "$COUNT" \
		-c "'$RT_DRV_APP' image '$FATBIN' >/dev/null 2>'$tmp/app.err'" >"$tmp/out" 2>"$tmp/err" </dev/null ||
		{ cat "$tmp/err"; fail "gpux -f json exited $?"; return 1; }
	local want
	want=$(sed -e 's/^gpux: //' -e 's/"/\\"/g' -e 's/^/{"type": "warning", "data": "/' -e 's/$/"}/' "$here/expected/sass.err")
	grep -qxF "$want" "$tmp/out" || { cat "$tmp/out"; fail "no warning record"; }
}

# Every kind of probe in one program under one controller: a uprobe on
# the driver's launch entry points, cuda: launches, device exits, a
# tracepoint, an interval, END. The uprobe and cuda:launch see the same
# four launches; gdev: the 4 x 64 x 3 + 2 x 32 threads' exits.
t_gpux_mixed() {
	[ "$(id -u)" = 0 ] || { echo "SKIP: kernel probes need root"; return 77; }
	# a copy of the fake driver of its own: uprobes see every process,
	# and other cases run the shared one at the same time
	mkdir -p "$tmp/fake" && cp "$RT_FAKE_DIR/libcuda.so.1" "$tmp/fake/" || return
	LD_LIBRARY_PATH=$tmp/fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
	gpux_run 0 "uprobe:$tmp/fake/libcuda.so.1:cuLaunchKernel* { @u = count(); }
		cuda:launch { @l = count(); }
		gdev:kernel_exit { @e = count(); }
		tracepoint:syscalls:sys_enter_openat /pid == cpid/ { @i = count(); }
		interval:ms:100 { @t = count(); }
		END { print(@u); }" "'$RT_DRV_APP' module '$PTX'; sleep 0.3" || return
	same "$tmp/app.out" drv_module.out && err_empty || return
	# attach points counted as bpftrace counts them: every function the
	# glob matched (cuLaunchKernel, _ptsz, Ex, Ex_ptsz), and 5 more
	local n
	n=$(nm -D --defined-only "$tmp/fake/libcuda.so.1" | grep -c ' cuLaunchKernel')
	head -n 1 "$tmp/out" | grep -qx "Attaching $((n + 5)) probes..." ||
		{ cat "$tmp/out"; fail "attach count (uprobe functions: $n)"; return 1; }
	sed -n 2p "$tmp/out" | grep -qx '@u: 4' || { cat "$tmp/out"; fail "END print(@u)"; return 1; }
	grep -qx '@e: 832' "$tmp/out" && grep -qx '@l: 4' "$tmp/out" &&
	[ "$(grep -c -x '@u: 4' "$tmp/out")" = 2 ] &&
	grep -qE '^@i: [1-9][0-9]*$' "$tmp/out" && grep -qE '^@t: [1-9][0-9]*$' "$tmp/out" ||
		{ cat "$tmp/out"; fail "mixed maps"; }
}

# ---- cuda:kernel_end (through gpux) ----
# CUDA events around each launch; the fake GPU's clock moves FK_BLOCK_NS
# (1 us) per block of each kernel (fake_cuda.c), so durations are known.
# drv_app streams: 8 launches on two streams and the per-thread default
# one, through cuLaunchKernel, Ex, cooperative and _ptsz, the last one
# pending when the context goes. Every launch completes once, with its
# name, dims, shared memory and stream; start and end on nsecs' clock,
# between BEGIN and END; the filter as cuda:launch's.
KEND='BEGIN { printf("begin %llu\n", nsecs); }
cuda:launch { @l = count(); }
cuda:kernel_end { @e = count(); @streams[stream] = count(); @s[stream != 0] = count();
	@k[kernel, grid.x, grid.y, block.x, block.y, shmem, duration] = count();
	@exact = min(end - start == duration); @first = min(start); @last = max(end); }
cuda:kernel_end:add_* { @add = count(); }
cuda:launch:add_* { @ladd = count(); }
END { printf("end %llu\n", nsecs); }'
# The fake's event counts (at its exit): every event the runtime made
# destroyed, at least RECORDS recorded.
kend_events() {
	local c d r
	read -r c d r < <(sed -n 's/^events created=\([0-9]*\) destroyed=\([0-9]*\) recorded=\([0-9]*\)$/\1 \2 \3/p' "$tmp/log")
	[ -n "$c" ] && [ "$c" = "$d" ] && [ "$r" -ge "$1" ] ||
		{ grep '^events' "$tmp/log"; fail "events created ${c:-?}, destroyed ${d:-?}, recorded ${r:-?} (want >= $1)"; }
}
t_gpux_kernel_end() {
	gpux_run 0 "$KEND" "'$RT_DRV_APP' streams '$PTX'" || return
	same "$tmp/app.out" streams.out && err_empty || return 1
	local begin end first last
	begin=$(sed -n 's/^begin //p' "$tmp/out") end=$(sed -n 's/^end //p' "$tmp/out")
	first=$(sed -n 's/^@first: //p' "$tmp/out") last=$(sed -n 's/^@last: //p' "$tmp/out")
	[ -n "$begin" ] && [ -n "$first" ] && [ -n "$last" ] && [ -n "$end" ] &&
	[ "$begin" -le "$first" ] && [ "$first" -lt "$last" ] && [ "$last" -le "$end" ] ||
		{ cat "$tmp/out"; fail "times: BEGIN $begin, first start $first, last end $last, END $end"; return 1; }
	[ "$(grep -c '^@streams\[' "$tmp/out")" = 3 ] || { cat "$tmp/out"; fail "three streams"; return 1; }
	grep -v -e '^begin ' -e '^end ' -e '^@first: ' -e '^@last: ' -e '^@streams\[' "$tmp/out" >"$tmp/out.s"
	same "$tmp/out.s" kernel_end.out && kend_events 17
}
# Nobody probes it: no event is made or recorded.
t_gpux_kernel_end_off() {
	gpux_run 0 'cuda:launch { @l = count(); }' "'$RT_DRV_APP' streams '$PTX'" &&
	same "$tmp/app.out" streams.out && err_empty &&
	log_has '^events created=0 destroyed=0 recorded=0$'
}
# Events that complete only when something synchronises: the program's
# stream synchronize delivers the seven launches before it (before
# cuda:sync fires), the context's end (or the exit, without one) the
# last.
KEND_SYNC='cuda:launch { @l = count(); } cuda:kernel_end { @e = count(); @d = sum(duration); }
cuda:sync { @seen = max(@e); }'
t_gpux_kernel_end_late() {
	local want
	want=$(printf '%s\n' 'Attaching 3 probes...' '' '' '@d: 25000' '@e: 8' '@l: 8' '@seen: 7')
	FAKE_CUDA_EVENT_LATE=1 gpux_run 0 "$KEND_SYNC" "'$RT_DRV_APP' streams '$PTX'" || return
	same "$tmp/app.out" streams.out && err_empty || return 1
	[ "$(cat "$tmp/out")" = "$want" ] || { cat "$tmp/out"; fail "context end"; return 1; }
	kend_events 17 || return 1
	rm -f "$tmp/log"
	FAKE_CUDA_EVENT_LATE=1 gpux_run 0 "$KEND_SYNC" "'$RT_DRV_APP' streams '$PTX' exit" &&
	err_empty && [ "$(cat "$tmp/out")" = "$want" ] || { cat "$tmp/out"; fail "exit"; return 1; }
	kend_events 17
}
# 17000 launches with no synchronize until the end: the first 16384 wait
# for their kernels, the 620 after them are not timed (said at exit),
# the synchronize delivers the 16384 (1 us each).
t_gpux_kernel_end_full() {
	if [ "${RT_SANITIZED:-OFF}" = ON ]; then
		echo "SKIP: sanitizer build (gpux preloads the runtime before the ASan runtime)"
		return 77
	fi
	FAKE_CUDA_EVENT_LATE=1 GPUX_RT=$RT_LIB timeout 60 "$RT_GPUX" -v \
		-e 'cuda:launch { @l = count(); } cuda:kernel_end { @e = count(); @d = sum(duration); }' \
		-c "'$RT_DRV_APP' many '$PTX' 17000 >'$tmp/app.out'" >"$tmp/out" 2>"$tmp/err" </dev/null ||
		{ cat "$tmp/err"; fail "gpux exited $?"; return 1; }
	printf '%s\n' 'Attaching 2 probes...' '' '' '@d: 16384000' '@e: 16384' '@l: 17004' >"$tmp/want"
	cmp -s "$tmp/want" "$tmp/out" || { diff -u "$tmp/want" "$tmp/out"; fail "maps"; return 1; }
	sed 's/pid [0-9]*/pid N/' "$tmp/err" >"$tmp/err.n"
	grep -qxF 'gpux: WARNING: pid N: cuda:kernel_end: 620 launches not timed (16384 were waiting for their kernels already)' "$tmp/err.n" &&
	grep -qxF 'gpux: pid N: cuda:kernel_end: 16384 kernels timed' "$tmp/err.n" ||
		{ cat "$tmp/err"; fail "the drops, said at exit"; return 1; }
	kend_events 32768
}
# Launches into a stream being captured are not timed (FAKE_CUDA_CAPTURING:
# every stream but stream 0): drv_app mem's first launch is on its own
# stream, the second on stream 0.
t_gpux_kernel_end_captured() {
	FAKE_CUDA_CAPTURING=1 gpux_run 0 'cuda:launch { @l[stream != 0] = count(); }
		cuda:kernel_end { @e[stream != 0] = count(); }' "'$RT_DRV_APP' mem '$PTX'" || return
	same "$tmp/app.out" drv_mem.out && err_empty || return 1
	printf '%s\n' 'Attaching 2 probes...' '' '' '@e[0]: 1' '@l[0]: 1' '@l[1]: 1' >"$tmp/want"
	cmp -s "$tmp/want" "$tmp/out" || { diff -u "$tmp/want" "$tmp/out"; fail "maps"; return 1; }
	kend_events 3
}
# The runtime's side under valgrind (the sanitizer build cannot run it
# through gpux): no invalid access, no leak (the events, the pools and
# the context's stream go at its end, or at exit), late completions.
t_gpux_kernel_end_valgrind() {
	command -v valgrind >/dev/null || { echo "SKIP: valgrind not installed"; return 77; }
	local vg="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect"
	local n
	for n in "" exit; do
		FAKE_CUDA_EVENT_LATE=1 gpux_run 0 "$KEND_SYNC" "$vg '$RT_DRV_APP' streams '$PTX' $n" || return
		grep -qx '@e: 8' "$tmp/out" || { cat "$tmp/out" "$tmp/err"; fail "valgrind ($n)"; return 1; }
	done
}
# 'kernel' keys a map gdev: probes read as cuda:launch's does (the
# hidden kernel id), with the kernels' durations in it.
t_gpux_kernel_end_cross_layer() {
	gpux_run 0 'cuda:kernel_end { @d[kernel] = duration; }
		gdev:kernel_entry { @y[kernel] = @d[kernel]; }' "'$RT_DRV_APP' module '$PTX'" || return
	same "$tmp/app.out" drv_module.out && err_empty || return 1
	grep -qxF '@d[add_one]: 4000' "$tmp/out" && grep -qxF '@d[scale(float*, float, int)]: 2000' "$tmp/out" ||
		{ cat "$tmp/out"; fail "durations by kernel"; }
}

# ---- live sessions (gpux --repl -c): probes attach to a running program ----

# live SCRIPT [MODE]: gpux --repl -c "drv_app MODE" (live by default)
# driven by the session in SCRIPT (a file); gpux's stdout in $tmp/out,
# stderr in $tmp/err, the program's stdout in $tmp/app.out.
live() {
	if [ "${RT_SANITIZED:-OFF}" = ON ]; then
		echo "SKIP: sanitizer build (gpux preloads the runtime before the ASan runtime)"
		return 77
	fi
	# the session starts once the program launches (its signal handlers
	# are in): a loaded machine may take longer than the script's sleeps
	rm -f "$tmp/app.out"
	{
		for _ in $(seq 300); do
			grep -q '^drv_app: launching' "$tmp/app.out" 2>/dev/null && break
			sleep 0.1
		done
		cat "$1"
	} | GPUX_RT=$RT_LIB FAKE_CUDA_LOG=$tmp/log timeout 60 "$RT_GPUX" --repl \
		-c "exec '$RT_DRV_APP' ${2:-live} '$PTX' >'$tmp/app.out'" >"$tmp/out" 2>"$tmp/err"
	local rc=${PIPESTATUS[1]}
	[ "$rc" = 0 ] || { cat "$tmp/out" "$tmp/err"; fail "gpux --repl exited $rc"; }
}
# launches PHASE K: drv_app's launches in PHASE of add_one (K 1) or scale (K 2).
launches() {
	sed -n "s/^drv_app: phase $1: add_one \([0-9]*\), scale \([0-9]*\)/\\$2/p" "$tmp/app.out"
}
# Attach, detach, attach again, each between a :pause and a :resume with
# a signal to the program, which starts a new phase: every launch of
# phase 1 and phase 3 is counted, none of the others. The map lives on
# after its probe is detached and goes on from its count when a probe
# writing it is attached again.
t_live_attach_detach() {
	attach_detach live 1
}
# gpux --repl -p: the REPL on a process gpux did not start (fat_app,
# its module loaded before): a probe entered at the prompt counts the
# round the prompt's :kill starts, exactly; at the end of the session the
# process goes on untouched and ends as alone.
t_live_attach_pid() {
	local app
	no_attach_here && return 77
	[ -n "${RT_FAT_APP:-}" ] || { echo "SKIP: no fat_app (nvcc)"; return 77; }
	"$RT_FAT_APP" 3 5 >"$tmp/app.out" 2>&1 &
	app=$!
	wait_for '^fat_app: waiting' "$tmp/app.out" || { kill -9 $app; fail "fat_app did not start"; return; }
	printf '%s\n' 'gdev:kernel_exit { @[kernel] = count(); }' ':kill USR1' ':sleep 300ms' ':print @' |
		GPUX_RT=$RT_LIB timeout 60 "$RT_GPUX" --repl -p $app >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/out" "$tmp/err"; kill -9 $app; fail "gpux --repl -p exited $?"; return; }
	grep -qxF '@[add_one]: 5120' "$tmp/out" || { cat "$tmp/out" "$tmp/err"; kill -9 $app; fail "the count"; return; }
	for r in 2 3; do
		kill -USR1 $app
		wait_for "^fat_app: round $r:" "$tmp/app.out" || { kill -9 $app; fail "round $r"; return; }
	done
	wait $app || fail "the program exited $?"
	same "$tmp/app.out" fat_app.out && err_empty
	[ "$(grep -c 'cuLaunchKernel add_one .* sites=1' "$tmp/log")" = 5 ] ||
		fail "instrumented launches: not round 1's"
}
# The same through graphs (drv_app live-graph): one captured and updated
# from new captures, one whose kernel node the program sets on the
# executable graph. Their kernels run instrumented from the first launch
# after an attach, untouched from the first after a detach; the
# captures made while probes are attached hold the program's function
# (a generation's function would be unloaded under them). :top counts
# the graphs' kernels, untimed.
t_live_graph_attach_detach() {
	attach_detach live-graph 0 || return
	grep -q '^cuGraphExecUpdate_v2' "$tmp/log" || fail "the executable graph was never updated"
}
# The same with module variables (kern_vars.cu): a launch counter the
# program starts before the session attaches and reads at its end, and a
# __constant__ table. The instrumented copies count into the program's
# counter, so it has every launch of every phase, instrumented or not;
# the copies' PTX, their variables remapped, passes ptxas.
t_live_vars() {
	live_vars live
}
# The same through a library (cuLibraryLoadData, as cudart loads
# modules lazily): the copy's table holds the library's addresses in the
# context (cuLibraryGetGlobal).
t_live_vars_library() {
	live_vars live-lib
}
# live_vars MODE: the session of attach_detach against kern_vars.ptx.
live_vars() {
	local PTX=$RT_CUDA_DIR/kern_vars.ptx
	[ -f "$PTX" ] || { echo "SKIP: $PTX was not built (no nvcc)"; return 77; }
	FAKE_CUDA_PTXAS=$RT_PTXAS attach_detach "$1" 1 || return
	local n=0 p
	for p in 0 1 2 3 4; do
		n=$((n + $(launches $p 1) + $(launches $p 2)))
	done
	grep -qxF "drv_app: fk_runs $n" "$tmp/app.out" ||
		{ cat "$tmp/app.out"; fail "fk_runs: want $n, every launch"; return; }
	[ "$(grep -c ' patched entries=' "$tmp/log")" -ge 2 ] ||
		{ grep ' load ' "$tmp/log"; fail "two instrumented copies"; return; }
	! grep -q 'fk_runs: slot\|ptxas failed' "$tmp/log" ||
		{ grep 'fk_runs\|ptxas' "$tmp/log"; fail "a copy's table or PTX"; }
}
# A module loaded with JIT options that shape its code (here
# CU_JIT_MAX_REGISTERS, DRV_APP_MAXREG): the session's copies are
# compiled under them too, as the original was.
t_live_jit_options() {
	DRV_APP_MAXREG=40 attach_detach live 1 || return
	[ "$(grep -c '^cuModuleLoadDataEx maxregs=40: loaded' "$tmp/log")" -ge 3 ] ||
		{ grep 'load\|maxregs' "$tmp/log"; fail "the copies without the program's JIT options"; }
}
# Probes entered before :run attach before the program starts: every
# launch is counted, the first one too (drv_app module: add_one<<<4, 64>>>
# x3, scale<<<2, (8, 4)>>>); a host probe entered then is only checked.
t_live_run_queued() {
	if [ "${RT_SANITIZED:-OFF}" = ON ]; then
		echo "SKIP: sanitizer build (gpux preloads the runtime before the ASan runtime)"
		return 77
	fi
	cat >"$tmp/session" <<SESSION
gdev:kernel_exit { @[kernel] = count(); }
uprobe:/bin/sh:main { @u = count(); }
gdev:kernel_entry { @in[kernel] = count(); }
:run exec '$RT_DRV_APP' module '$PTX' >'$tmp/app.out'
:wait
@
@in
SESSION
	GPUX_RT=$RT_LIB FAKE_CUDA_LOG=$tmp/log timeout 60 "$RT_GPUX" --repl <"$tmp/session" \
		>"$tmp/out" 2>"$tmp/err" || { cat "$tmp/out" "$tmp/err"; fail "gpux --repl exited"; return; }
	grep -q '^drv_app: done' "$tmp/app.out" || { cat "$tmp/app.out"; fail "the program"; return; }
	local want
	want=$(printf '%s\n' 'Attached 1: gdev:kernel_exit' 'Attached 2: gdev:kernel_entry' \
		'@[scale(float*, float, int)]: 64' '@[add_one]: 768' \
		'@in[scale(float*, float, int)]: 64' '@in[add_one]: 768')
	[ "$(grep -E '^(Attached|@.*: [0-9]+$)' "$tmp/out")" = "$want" ] ||
		{ cat "$tmp/out" "$tmp/err"; fail "want every launch counted: $want"; return; }
	[ "$(cat "$tmp/err")" = 'gpux: the program exited with status 0' ] ||
		{ cat "$tmp/err"; fail "stderr"; }
}
# A probe entered after the program exited attaches to nothing (no
# "Attached" line for it): it is kept, said once, and the next :run
# counts every launch with it.
t_live_after_exit() {
	if [ "${RT_SANITIZED:-OFF}" = ON ]; then
		echo "SKIP: sanitizer build (gpux preloads the runtime before the ASan runtime)"
		return 77
	fi
	cat >"$tmp/session" <<SESSION
:run exec '$RT_DRV_APP' module '$PTX' >'$tmp/app.out'
:wait
gdev:kernel_exit { @[kernel] = count(); }
:run exec '$RT_DRV_APP' module '$PTX' >'$tmp/app2.out'
:wait
@
SESSION
	GPUX_RT=$RT_LIB FAKE_CUDA_LOG=$tmp/log timeout 60 "$RT_GPUX" --repl <"$tmp/session" \
		>"$tmp/out" 2>"$tmp/err" || { cat "$tmp/out" "$tmp/err"; fail "gpux --repl exited"; return; }
	grep -q '^drv_app: done' "$tmp/app2.out" || { cat "$tmp/app2.out"; fail "the program"; return; }
	local want
	want=$(printf '%s\n' 'Attached 1: gdev:kernel_exit' \
		'@[scale(float*, float, int)]: 64' '@[add_one]: 768')
	[ "$(grep -E '^(Attached|@.*: [0-9]+$)' "$tmp/out")" = "$want" ] ||
		{ cat "$tmp/out" "$tmp/err"; fail "want the second run counted: $want"; return; }
	want=$(printf '%s\n' 'gpux: the program exited with status 0' \
		'gpux: the program has exited: the probe attaches at the next :run' \
		'gpux: the program exited with status 0')
	[ "$(cat "$tmp/err")" = "$want" ] || { cat "$tmp/err"; fail "stderr"; }
}
# attach_detach MODE TIMED: the session above against drv_app MODE; :top's
# kernels timed (1) or not (0).
attach_detach() {
	cat >"$tmp/session" <<'SESSION'
:sleep 200ms
:pause
gdev:kernel_exit { @[kernel] = count(); }
:kill USR1
:resume
:sleep 200ms
:pause
:detach 1
:kill USR1
:resume
:sleep 100ms
:print @
:probes
:sleep 100ms
:pause
gdev:kernel_exit { @[kernel] = count(); }
:kill USR1
:resume
:sleep 200ms
:pause
:detach 2
:kill USR1
:resume
@
:kill
:wait
:top launches
SESSION
	live "$tmp/session" "$1" || return
	grep -q '^drv_app: phase 4:' "$tmp/app.out" ||
		{ cat "$tmp/app.out" "$tmp/err"; fail "4 phases"; return; }
	grep -qxF 'Attached 1: gdev:kernel_exit' "$tmp/out" && grep -qxF 'Detached 2' "$tmp/out" ||
		{ cat "$tmp/out"; fail "attach and detach lines"; return; }
	# after the first detach: phase 1's launches, and no probe; at the
	# end, 1 and 3
	local a1 s1 a3 s3
	a1=$(launches 1 1) s1=$(launches 1 2) a3=$(launches 3 1) s3=$(launches 3 2)
	[ "${a1:-0}" -gt 0 ] && [ "${a3:-0}" -gt 0 ] ||
		{ cat "$tmp/app.out"; fail "phases 1 and 3 launched nothing"; return; }
	local want
	# bpftrace's order: by value, so scale first when phase 1 ended
	# between an add_one and its scale
	# (a loaded machine may end phase 1 before its first scale: no line)
	if [ "$s1" -eq 0 ]; then
		want=$(printf '@[add_one]: %d\n\n' $((a1 * 32)))
	elif [ "$s1" -lt "$a1" ]; then
		want=$(printf '@[scale(float*, float, int)]: %d\n@[add_one]: %d\n\n' $((s1 * 32)) \
			$((a1 * 32)))
	else
		want=$(printf '@[add_one]: %d\n@[scale(float*, float, int)]: %d\n\n' $((a1 * 32)) \
			$((s1 * 32)))
	fi
	[ "$(sed -n '/^Detached 1$/,/^Attached 2/p' "$tmp/out" | sed '1d;$d')" = "$want" ] ||
		{ cat "$tmp/out"; fail "the counts after the first detach: want phase 1's"; return; }
	local sline="@[scale(float*, float, int)]: $(((s1 + s3) * 32))"
	grep -qxF "@[add_one]: $(((a1 + a3) * 32))" "$tmp/out" &&
	if [ $((s1 + s3)) -gt 0 ]; then grep -qxF "$sline" "$tmp/out"; else ! grep -q '^@\[scale' "$tmp/out"; fi ||
		{ cat "$tmp/out" "$tmp/app.out"; fail "the counts at the end: want phases 1 and 3"; return; }
	# :top: every launch of every phase, 32 threads each, timed or not
	local a=0 s=0 p
	for p in 0 1 2 3 4; do
		a=$((a + $(launches $p 1))) s=$((s + $(launches $p 2)))
	done
	local top
	top=$(sed -n '/^ *LAUNCHES  *THREADS  *GPU TIME  *AVG  *KERNEL$/,$p' "$tmp/out" |
		awk 'NR > 1 { n = $1; t = $2; timed = ($3 != "-"); $1 = $2 = $3 = $4 = ""; sub(/^ +/, "");
			    print n, t, timed, $0 }')
	want=$(printf '%d %d %d %s\n%d %d %d %s' "$a" $((a * 32)) "$2" add_one "$s" $((s * 32)) \
		"$2" 'scale(float*, float, int)')
	[ "$top" = "$want" ] || { cat "$tmp/out" "$tmp/app.out"; fail ":top: want $want"; return; }
	if grep -vqE '^gpux: the program exited with status 0$' "$tmp/err"; then
		cat "$tmp/err"; fail "stderr has more than the program's end"; return
	fi
}
# :top with two GPUs: add_one on the first, scale on the second; after
# the kernels, a table by GPU (gpu 0: add_one's launches, 1: scale's).
t_live_top_gpus() {
	cat >"$tmp/session" <<'SESSION'
:sleep 200ms
:kill
:wait
:top launches
SESSION
	FAKE_CUDA_DEVICES=2 live "$tmp/session" live-twodev || return
	local a s got want
	a=$(launches 0 1) s=$(launches 0 2)
	got=$(sed -n '/^ *LAUNCHES  *THREADS  *GPU TIME  *AVG  *GPU$/,$p' "$tmp/out" |
		awk 'NR > 1 && NF { print $1, $2, $NF }')
	want=$(printf '%d %d 0\n%d %d 1' "$a" $((a * 32)) "$s" $((s * 32)))
	[ "${a:-0}" -gt 0 ] && [ "${s:-0}" -gt 0 ] && [ "$got" = "$want" ] ||
		{ cat "$tmp/out" "$tmp/app.out" "$tmp/err"; fail ":top by GPU: want $want"; }
}
# The views: a two-key map as a grid, a map watched, and entries in
# error (a syntax error, a host probe, an unknown id, an unknown map),
# after which the session goes on. The fake's two-key count is keyed
# (0, kernel id).
t_live_views() {
	cat >"$tmp/session" <<'SESSION'
:sleep 200ms
gdev:kernel_exit { @a[sm, warp] = count(); }
:sleep 100ms
:heatmap @a
:watch @a 50ms 2
gdev:kernel_exit { @k[kernel] = count()
:probes

BEGIN { printf("hi\n"); }
:detach 9
:print @nope
:heatmap @k
gdev:kernel_exit { @k[kernel] = count(); }
:probes
:complete :print @
:clear @k
:print @k
:kill
:wait
SESSION
	live "$tmp/session" || return
	# :watch prints @a by count, which differs between runs: each
	# watch's two lines in key order
	sed -e 's/[0-9]\+-[0-9]\+/N-N/g' -e 's/^@a\[0, \([01]\)\]: [0-9]*$/@a[0, \1]: N/' \
		-e 's/^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]$/HH:MM:SS/' "$tmp/out" |
		awk '/^@a\[0, [01]\]: N$/ { k[n++] = $0; next }
		     { if (n == 2 && k[0] > k[1]) { t = k[0]; k[0] = k[1]; k[1] = t }
		       for (i = 0; i < n; i++) print k[i]; n = 0; print }
		     END { for (i = 0; i < n; i++) print k[i] }' >"$tmp/out.n"
	same "$tmp/out.n" live_views.out &&
	sed 's/^drv_app: phase 0: .*/drv_app: phase 0: N/' "$tmp/app.out" >"$tmp/app.n" &&
	same "$tmp/app.n" live_views.app.out &&
	same "$tmp/err" live_views.err
}

# --export through the traced program's backend: the last OTLP push, to
# tests/export's receiver, holds the gdev: and cuda: maps as they print.
t_gpux_export() {
	[ "${RT_SANITIZED:-OFF}" = ON ] && { echo "SKIP: sanitizer build (as gpux_run)"; return 77; }
	command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; return 77; }
	mkdir -p "$tmp/otlp"
	python3 "$here/../export/otlp_receiver.py" "$tmp/otlp" &
	local rpid=$! i
	for i in $(seq 600); do [ -s "$tmp/otlp/port" ] && break; sleep 0.1; done
	GPUX_RT=$RT_LIB timeout 60 "$RT_GPUX" --export "otlp:http://127.0.0.1:$(cat "$tmp/otlp/port")/v1/metrics" \
		-e 'cuda:launch { @c[kernel] = count(); } gdev:kernel_exit { @g[kernel] = count(); }' \
		-c "{ '$RT_DRV_APP' module '$PTX'; } >'$tmp/app.out'" >"$tmp/out" 2>"$tmp/err" </dev/null ||
		fail "gpux exited $?"
	python3 "$here/../export/export_util.py" otlp "$tmp/otlp" >"$tmp/otlp.txt"
	kill "$rpid"
	wait "$rpid" 2>/dev/null
	err_empty && same "$tmp/otlp.txt" gpux_export.otlp
}

# run_case T: T's status, 1 if it called fail.
run_case() {
	rm -rf "$tmp/failed" "$tmp/save"/* "$tmp/log"
	"$1"
	local rc=$?
	[ -e "$tmp/failed" ] && [ "$rc" != 77 ] && rc=1
	return $rc
}
. "$(dirname "$0")/../lib/cases.sh"
cases_main "${1:-}" run_case
