#!/usr/bin/env bash
# Driver probes against the driver's BTF, without the driver: btf_gen
# writes the variants (btf_gen.c), GPUX_BTF_DIR points gpux at one, and
# the cases check what the compiled object reads and declares: the
# struct_ops variable, its members in order, the offsets of the loads in
# the disassembly, the kfuncs called; and the one error when the driver
# has no gpu_ext hooks. Usage:
#   btf_test.sh GPUX BTF_GEN HOSTGEN CASE   run one case (ctest registers each)
#   btf_test.sh GPUX BTF_GEN HOSTGEN        run them all
set -u
GPUX=$1 GEN=$2 HOSTGEN=$3
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
B=$tmp/btf
"$GEN" "$B" || { echo "FAIL: btf_gen"; exit 1; }
mkdir -p "$B/both" "$B/empty" && cp "$B/genc/nvidia_uvm" "$B/sched/nvidia" "$B/both/"

fail() { echo "FAIL: $*"; return 1; }

# run VARIANT RC ARGS...: gpux with GPUX_BTF_DIR=$B/VARIANT ("-": unset),
# stdin from /dev/null, the status checked.
run() {
	local v=$1 want=$2; shift 2
	if [ "$v" = - ]; then
		env -u GPUX_BTF_DIR "$GPUX" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	else
		GPUX_BTF_DIR="$B/$v" "$GPUX" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	fi
	local rc=$?
	if [ "$rc" != "$want" ]; then
		echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"
		fail "GPUX_BTF_DIR=$v gpux $* exited $rc, expected $want"
	fi
}
out_has() { grep -qE -- "$1" "$tmp/out" || { cat "$tmp/out"; fail "stdout lacks /$1/"; }; }
err_has() { grep -qE -- "$1" "$tmp/err" || { cat "$tmp/err"; fail "stderr lacks /$1/"; }; }
err_empty() { [ ! -s "$tmp/err" ] || { cat "$tmp/err"; fail "stderr not empty"; }; }
# exactly one error, and it is this line
one_error() {
	local n
	n=$(grep -c 'ERROR:' "$tmp/err")
	[ "$n" = 1 ] || { cat "$tmp/err"; fail "$n errors, expected one"; return 1; }
	grep -qxF -- "$1" "$tmp/err" || { cat "$tmp/err"; fail "stderr lacks the line: $1"; }
}
# loads FUNC: the loads in FUNC's -d bpf listing (stdout) as SIZE+OFF,
# but those from the stack and map values (r10, r0)
loads() {
	awk -v f="$1: " 'index($0, f) == 1 { on = 1; next } /^$/ { on = 0 } on' "$tmp/out" |
		sed -nE 's/^ *[0-9]+: r[0-9]+ = \*\(u([0-9]+) \*\)\(r([1-9]) \+ ([0-9]+)\)$/u\1+\3/p' |
		paste -sd' '
}
loads_are() { # loads_are FUNC WANT
	local got
	got=$(loads "$1")
	[ "$got" = "$2" ] || { cat "$tmp/out"; fail "$1 loads '$got', expected '$2'"; }
}
# struct_ops OBJ: what the object's BTF declares (btf_gen --struct-ops)
struct_ops() { "$GEN" --struct-ops "$1" >"$tmp/so" || fail "btf_gen --struct-ops $1"; }
so_has() { grep -qxF -- "$1" "$tmp/so" || { cat "$tmp/so"; fail "object BTF lacks: $1"; }; }

# An LFU-like policy and one reading every field that moves.
LFU='gpu_mem:activate { @freq[chunk] = 1; move_head(chunk); }
gpu_mem:access { if (@freq[chunk] > 0 && @freq[chunk] < 255) { @freq[chunk]++; move_tail(chunk); } return BYPASS; }
gpu_mem:prefetch { set_prefetch_region(max_first, max_outer); return BYPASS; }'
FIELDS='gpu_mem:access { @v[va] = count(); }
gpu_mem:activate { @o[owner] = count(); }
gpu_mem:evict_prepare { @h[head] = count(); }
gpu_mem:prefetch { set_prefetch_region(max_first, max_outer); return BYPASS; }'
SCHED='gpu_sched:task_init { @t = sum(timeslice); set_timeslice(2000); }
gpu_sched:bind /channels > 4/ { @i[interleave] = count(); reject_bind(); }'

# Gen B (struct uvm_gpu_ext), split BTF over a vmlinux as sysfs has it.
t_genb_struct_ops() {
	run genb 0 --emit "$tmp/e" -e "$LFU" && err_empty && struct_ops "$tmp/e/host.bpf.o" || return 1
	so_has 'struct_ops gpux_uvm_gpu_ext: struct uvm_gpu_ext, 6 members: uvm_bpf_test_trigger_kfunc uvm_prefetch_before_compute uvm_prefetch_on_tree_iter uvm_pmm_chunk_activate uvm_pmm_chunk_used uvm_pmm_eviction_prepare' &&
		so_has 'kfunc void bpf_uvm_pmm_chunk_move_head(struct uvm_gpu_chunk_struct *, struct list_head *)' &&
		so_has 'kfunc void bpf_uvm_pmm_chunk_move_tail(struct uvm_gpu_chunk_struct *, struct list_head *)' &&
		so_has 'kfunc void bpf_uvm_set_va_block_region(struct uvm_va_block_region *, long, long)'
}
# Gen C (struct gpu_mem_ops): the other names throughout.
t_genc_struct_ops() {
	run genc 0 --emit "$tmp/e" -e "$LFU" && err_empty && struct_ops "$tmp/e/host.bpf.o" || return 1
	so_has 'struct_ops gpux_gpu_mem_ops: struct gpu_mem_ops, 6 members: gpu_test_trigger gpu_page_prefetch gpu_page_prefetch_iter gpu_block_activate gpu_block_access gpu_evict_prepare' &&
		so_has 'kfunc void bpf_gpu_block_move_tail(struct uvm_gpu_chunk_struct *, struct list_head *)' || return 1
	run genc 0 -d bpf -e "$LFU" && out_has '^p0_gpu_mem_activate: ; section struct_ops/gpu_block_activate$' &&
		out_has '^p1_gpu_mem_access: ; section struct_ops/gpu_block_access$' &&
		out_has 'call bpf_gpu_block_move_head$' && out_has 'call bpf_gpu_block_move_tail$' &&
		out_has 'call bpf_gpu_set_prefetch_region$' || return 1
	if grep -q 'bpf_uvm_' "$tmp/out"; then fail "a Gen B kfunc in a Gen C object"; fi
}
# Gen D (gpu_mem_ops with decision contexts): a move is a request on
# the hook's context, bpf_gpu_request_reorder(ctx, USED 1, HEAD 1 or
# TAIL 2), for the hook's own chunk only; evict_prepare has no context.
t_gend_decision() {
	run gend 0 --emit "$tmp/e" -e "$LFU" && err_empty && struct_ops "$tmp/e/host.bpf.o" || return 1
	so_has 'struct_ops gpux_gpu_mem_ops: struct gpu_mem_ops, 6 members: gpu_test_trigger gpu_page_prefetch gpu_page_prefetch_iter gpu_block_activate gpu_block_access gpu_evict_prepare' &&
		so_has 'kfunc long bpf_gpu_request_reorder(struct uvm_bpf_pmm_decision_ctx *, long, long)' &&
		so_has 'kfunc long bpf_gpu_set_prefetch_region(struct uvm_bpf_prefetch_decision *, long, long)' || return 1
	run gend 0 -d bpf -e "$LFU" || return 1
	[ "$(grep -E ': (r[23] = [12]|call bpf_gpu_request_reorder)$' "$tmp/out" | sed -E 's/^ +[0-9]+: //' |
		paste -sd' ')" = 'r2 = 1 r3 = 1 call bpf_gpu_request_reorder r2 = 1 r3 = 2 call bpf_gpu_request_reorder' ] ||
		{ cat "$tmp/out"; fail "move_head then move_tail as requests"; return 1; }
	if grep -q 'bpf_gpu_block_move' "$tmp/out"; then fail "a Gen C kfunc in a Gen D object"; return 1; fi
	run gend 1 --dry-run -e 'gpu_mem:evict_prepare { move_tail(head); }' &&
		one_error "stdin:1:25-40: ERROR: move_tail() cannot be called in gpu_mem:evict_prepare: the gpu_mem_ops ABI passes this hook no 'decision' argument for bpf_gpu_request_reorder()" || return 1
	run gend 1 --dry-run -e 'gpu_mem:access { $x = chunk; move_tail($x); }' &&
		one_error "stdin:1:40-42: ERROR: move_tail() in the gpu_mem_ops ABI moves only the hook's own chunk" &&
		err_has '^HINT: move_tail\(chunk\)$'
}
# evict_prepare's head moved: through kmod/'s bpf_gpu_list_move_first
# (list, 0 head or 1 tail) where BTF has it; elsewhere through gpu_ext's
# kfunc (which the kernel's verifier then refuses that pointer); a chunk
# that is not head goes to gpu_ext's kfunc in both.
t_kmod_move_first() {
	local P='gpu_mem:evict_prepare { move_tail(head); move_head(head); }'
	run kmod 0 --emit "$tmp/e" -e "$P" && err_empty && struct_ops "$tmp/e/host.bpf.o" || return 1
	so_has 'kfunc void bpf_gpu_list_move_first(struct list_head *, long)' || return 1
	run kmod 0 -d bpf -e "$P" || return 1
	[ "$(grep -E ': (r2 = [01]|call bpf_gpu_[a-z_]+)$' "$tmp/out" | sed -E 's/^ +[0-9]+: //' |
		paste -sd' ')" = 'r2 = 1 call bpf_gpu_list_move_first r2 = 0 call bpf_gpu_list_move_first' ] ||
		{ cat "$tmp/out"; fail "head moved by bpf_gpu_list_move_first"; return 1; }
	run genc 0 -d bpf -e "$P" && out_has 'call bpf_gpu_block_move_tail$' || return 1
	if grep -q 'bpf_gpu_list_move_first' "$tmp/out"; then fail "kmod's kfunc bound without it"; return 1; fi
	run kmod 0 -d bpf -e "$LFU" && out_has 'call bpf_gpu_block_move_tail$' || return 1
}
# Offsets from BTF: chunk->va_block @32, ->start @48; the owner through
# the anonymous struct of mm_struct; head = next - offsetof(list) (16).
t_genb_offsets() {
	run genb 0 -d bpf -e "$FIELDS" || return 1
	loads_are p0_gpu_mem_access 'u64+8 u64+32 u64+48' &&
		loads_are p1_gpu_mem_activate 'u64+8 u64+32 u64+40 u64+0 u64+1704 u64+904 u32+2460' &&
		loads_are p2_gpu_mem_evict_prepare 'u64+8 u64+0' && out_has '^ +[0-9]+: r1 \+= -16$' &&
		loads_are p3_gpu_mem_prefetch 'u64+24 u64+16 u16+2 u16+0'
}
# Another layout: list @8, va_block @40, start @24, u32 regions; no
# managed_range, no prefetch_iter member, no move_head kfunc.
t_layout_offsets() {
	run layout 0 -d bpf -e "$(grep -v activate <<<"$FIELDS")" || return 1
	loads_are p0_gpu_mem_access 'u64+8 u64+40 u64+24' &&
		loads_are p1_gpu_mem_evict_prepare 'u64+8 u64+0' && out_has '^ +[0-9]+: r1 \+= -8$' &&
		loads_are p2_gpu_mem_prefetch 'u64+24 u64+16 u32+4 u32+0' || return 1
	run layout 0 --emit "$tmp/e" -e 'gpu_mem:access { move_tail(chunk); return BYPASS; }' &&
		struct_ops "$tmp/e/host.bpf.o" &&
		so_has 'struct_ops gpux_gpu_mem_ops: struct gpu_mem_ops, 5 members: gpu_test_trigger gpu_page_prefetch gpu_block_activate gpu_block_access gpu_evict_prepare'
}
# What the layout lacks is an error at its use, naming the ABI.
t_layout_missing() {
	run layout 1 --dry-run -e 'gpu_mem:access { @[owner] = count(); }' &&
		one_error "stdin:1:20-25: ERROR: 'owner' is not available in gpu_mem:access: the gpu_mem_ops ABI does not provide it" || return 1
	run layout 1 --dry-run -e 'gpu_mem:activate { move_head(chunk); }' &&
		one_error 'stdin:1:20-36: ERROR: move_head() has no kfunc in the gpu_mem_ops ABI' || return 1
	run layout 1 --dry-run -e 'gpu_mem:prefetch_iter { return 0; }' &&
		one_error "stdin:1:1-22: ERROR: gpu_mem:prefetch_iter is not available: the driver's struct gpu_mem_ops has no member for it"
}
# The prefetch hooks' va and owner: a kprobe on the function that calls
# them reads the faulting block (arg 0, %di at 112 in pt_regs) through
# bpf_probe_read_kernel at BTF's offsets (start @48; managed_range @40,
# va_space_mm @1704, owner @904, tgid @2460, 4 bytes) into a per-CPU
# array of two slots, which the hooks read.
CAP='gpu_mem:prefetch { @v[va] = count(); @o[owner] = count(); return DEFAULT; }
gpu_mem:prefetch_iter { @p[owner] = count(); }'
# adds FUNC: the immediate operands of FUNC's "r3 += N" lines
adds() {
	awk -v f="$1: " 'index($0, f) == 1 { on = 1; next } /^$/ { on = 0 } on' "$tmp/out" |
		sed -nE 's/^ *[0-9]+: r3 \+= ([0-9]+)$/\1/p' | paste -sd' '
}
t_genb_capture() {
	run genb 0 -d bpf -e "$CAP" && err_empty || return 1
	out_has '^gpux_capture_kprobe: ; section kprobe/uvm_perf_prefetch_get_hint_va_block$' &&
		[ "$(adds gpux_capture_kprobe)" = '48 40 1704 904 2460' ] || { cat "$tmp/out"; fail "capture offsets: $(adds gpux_capture_kprobe)"; return 1; }
	[ "$(grep -c 'r3 = \*(u64 \*)(r7 + 112)$' "$tmp/out")" = 2 ] || fail "arg 0 read once a field" || return 1
	[ "$(grep -c 'call bpf_probe_read_kernel$' "$tmp/out")" = 6 ] || fail "six kernel reads" || return 1
	[ "$(grep -c 'map\[gpux_capture\]' "$tmp/out")" = 4 ] || fail "the capture and three reads use gpux_capture" || return 1
	GPUX_BTF_DIR="$B/genb" "$HOSTGEN" <(echo "$CAP") >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/err"; fail "hostgen"; return 1; }
	out_has '^prog kprobe/uvm_perf_prefetch_get_hint_va_block driver$' &&
		out_has '^map gpux_capture type 6 key 4 value 16 entries 1$'
}
# The other layout: start @24, and without managed_range no owner.
t_layout_capture() {
	run layout 0 -d bpf -e 'gpu_mem:prefetch { @v[va] = count(); }' || return 1
	[ "$(adds gpux_capture_kprobe)" = 24 ] || { cat "$tmp/out"; fail "capture offsets: $(adds gpux_capture_kprobe)"; return 1; }
	run layout 1 --dry-run -e 'gpu_mem:prefetch { @[owner] = count(); }' &&
		one_error "stdin:1:22-27: ERROR: 'owner' is not available in gpu_mem:prefetch: the gpu_mem_ops ABI does not provide it"
}
# nv_gpu_sched_ops with on_timeslice_control; contexts as gpu_ext's.
t_sched_offsets() {
	run sched 0 -d bpf -e "$SCHED" || return 1
	loads_are p0_gpu_sched_task_init 'u64+0 u64+16' &&
		loads_are p1_gpu_sched_bind 'u64+0 u32+12 u32+24' &&
		out_has 'call bpf_nv_gpu_set_timeslice$' && out_has 'call bpf_nv_gpu_reject_bind$' || return 1
	run sched 0 --emit "$tmp/e" -e "$SCHED" && struct_ops "$tmp/e/host.bpf.o" &&
		so_has 'struct_ops gpux_nv_gpu_sched_ops: struct nv_gpu_sched_ops, 4 members: on_task_init on_bind on_task_destroy on_timeslice_control' &&
		so_has 'kfunc long bpf_nv_gpu_set_timeslice(struct nv_gpu_task_init_ctx *, long)' &&
		so_has 'kfunc void bpf_nv_gpu_reject_bind(struct nv_gpu_bind_ctx *)'
}
# The first gpu_ext's contexts: default_timeslice @8, 3 members.
t_sched_old_layout() {
	run layout 0 -d bpf -e "$SCHED" || return 1
	loads_are p0_gpu_sched_task_init 'u64+0 u64+8' || return 1
	run layout 0 --emit "$tmp/e" -e "$SCHED" && struct_ops "$tmp/e/host.bpf.o" &&
		so_has 'struct_ops gpux_nv_gpu_sched_ops: struct nv_gpu_sched_ops, 3 members: on_task_init on_bind on_task_destroy' &&
		so_has 'kfunc void bpf_nv_gpu_set_timeslice(struct nv_gpu_task_init_ctx *, long)'
}
# Both providers at once; libbpf opens the bound object, its struct_ops
# values sized as the driver's structs.
t_both_open() {
	printf '%s\n%s\n' "$LFU" "$SCHED" >"$tmp/p.gpx"
	GPUX_BTF_DIR="$B/both" "$HOSTGEN" "$tmp/p.gpx" >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/out" "$tmp/err"; fail "hostgen"; return 1; }
	out_has '^prog struct_ops/gpu_block_access driver$' && out_has '^prog struct_ops/on_bind driver$' &&
		out_has '^map gpux_gpu_mem_ops type 26 key 4 value 48 entries 1$' &&
		out_has '^map gpux_nv_gpu_sched_ops type 26 key 4 value 32 entries 1$'
}
# Without GPUX_BTF_DIR a dry run checks against the built-ins.
t_dry_run_builtin() {
	run - 0 -d bpf -e "$FIELDS" && err_empty || return 1
	out_has 'section struct_ops/uvm_pmm_chunk_used$' && loads_are p0_gpu_mem_access 'u64+8 u64+32 u64+8'
}
# A stock driver: one error, at the first probe of the provider lacking.
t_stock_error() {
	run stock 1 --dry-run -e "$LFU" &&
		one_error "stdin:1:1-17: ERROR: gpu_mem probes need the gpu_ext driver: $B/stock/nvidia_uvm has no struct gpu_mem_ops or uvm_gpu_ext (a stock NVIDIA driver's BTF); run the policy in the simulator with --sim WORKLOAD" || return 1
	run stock 1 --dry-run -e "$SCHED" &&
		one_error "stdin:1:1-20: ERROR: gpu_sched probes need the gpu_ext driver: $B/stock/nvidia has no struct nv_gpu_sched_ops (a stock NVIDIA driver's BTF); run the policy in the simulator with --sim WORKLOAD"
}
t_missing_files_error() {
	run empty 1 --dry-run -e "$LFU" &&
		one_error "stdin:1:1-17: ERROR: gpu_mem probes need the gpu_ext driver: no nvidia_uvm module BTF (GPUX_BTF_DIR has no $B/empty/nvidia_uvm); run the policy in the simulator with --sim WORKLOAD" || return 1
	# a driver with gpu_mem's hooks but no nvidia BTF: only gpu_sched is refused
	printf '%s\n%s\n' "$LFU" "$SCHED" >"$tmp/p.gpx"
	run genc 1 --dry-run "$tmp/p.gpx" &&
		one_error "$tmp/p.gpx:4:1-20: ERROR: gpu_sched probes need the gpu_ext driver: no nvidia module BTF (GPUX_BTF_DIR has no $B/genc/nvidia); run the policy in the simulator with --sim WORKLOAD"
}
# Split BTF needs its base: without vmlinux the module cannot be read.
t_split_needs_base() {
	mkdir "$tmp/nobase" && cp "$B/genb/nvidia_uvm" "$tmp/nobase/" || return 1
	GPUX_BTF_DIR="$tmp/nobase" "$GPUX" --dry-run -e "$LFU" >"$tmp/out" 2>"$tmp/err" </dev/null
	[ $? = 1 ] || fail "exited $?, expected 1" || return 1
	err_has "ERROR: gpu_mem probes need the gpu_ext driver: cannot read the BTF in $tmp/nobase/nvidia_uvm: "
}
# Running: the driver is looked for before anything starts.
t_run_stock_refused() {
	run stock 1 -e "$LFU" -c "touch $tmp/ran" &&
		one_error "stdin:1:1-17: ERROR: gpu_mem probes need the gpu_ext driver: $B/stock/nvidia_uvm has no struct gpu_mem_ops or uvm_gpu_ext (a stock NVIDIA driver's BTF); run the policy in the simulator with --sim WORKLOAD" || return 1
	[ ! -e "$tmp/ran" ] || fail "the command ran"
}
# Without GPUX_BTF_DIR, /sys/kernel/btf: here without an NVIDIA driver.
t_run_sysfs() {
	[ -e /sys/kernel/btf/nvidia_uvm ] && { echo "SKIP: an NVIDIA driver is loaded"; return 77; }
	run - 1 -e "$LFU" &&
		one_error "stdin:1:1-17: ERROR: gpu_mem probes need the gpu_ext driver: no nvidia_uvm module BTF (/sys/kernel/btf/nvidia_uvm does not exist: the NVIDIA driver is not loaded); run the policy in the simulator with --sim WORKLOAD"
}
# With gpu_ext's BTF, attaching needs libbpf 1.4 (module struct_ops),
# then root; past both, libbpf loads and the driver registers.
t_run_attach_refused() {
	run genc 1 -e "$LFU" -c "touch $tmp/ran" || return 1
	[ ! -e "$tmp/ran" ] || fail "the command ran" || return 1
	if grep -q 'libgpux-host.so has libbpf 1\.[0-3]$' "$tmp/err"; then
		one_error 'stdin:1:1-17: ERROR: gpu_mem probes cannot be attached: attaching needs libbpf 1.4 or newer, which loads struct_ops of a kernel module; libgpux-host.so has libbpf '"$(sed -n 's/.*has libbpf \(1\.[0-3]\)$/\1/p' "$tmp/err")" &&
			err_has '^HINT: --dry-run checks them; --sim WORKLOAD runs them in the simulator$'
	else
		# a newer libbpf: refused as non-root, or by the kernel (no driver)
		grep -qE 'needs root|cannot load the policy|cannot register' "$tmp/err" ||
			{ cat "$tmp/err"; fail "no refusal said"; }
	fi
}
# No leak or invalid access while binding, on success and refusals.
t_valgrind() {
	command -v valgrind >/dev/null || { echo "SKIP: valgrind not installed"; return 77; }
	[ -z "${GPUX_SANITIZED:-}" ] || { echo "SKIP: sanitizer build"; return 77; }
	local vg=(valgrind -q --error-exitcode=99 --leak-check=full
		--errors-for-leak-kinds=definite,indirect,possible
		--suppressions="$here/../cli/valgrind.supp")
	printf '%s\n%s\n%s\n' "$LFU" "$FIELDS" "$SCHED" >"$tmp/p.gpx"
	GPUX_BTF_DIR="$B/both" "${vg[@]}" "$GPUX" --dry-run "$tmp/p.gpx" >/dev/null 2>"$tmp/vg" ||
		{ cat "$tmp/vg"; fail "valgrind on a bound dry run"; return 1; }
	GPUX_BTF_DIR="$B/stock" "${vg[@]}" "$GPUX" --dry-run "$tmp/p.gpx" >/dev/null 2>"$tmp/vg"
	[ $? = 1 ] || { cat "$tmp/vg"; fail "valgrind on a stock driver"; return 1; }
	GPUX_BTF_DIR="$B/both" "${vg[@]}" "$GPUX" -e "$SCHED" >/dev/null 2>"$tmp/vg"
	[ $? = 1 ] || { cat "$tmp/vg"; fail "valgrind on a refused run"; }
}

# The script's kernel types from BTF (btf_gen's kernel/vmlinux):
# sizes, an enum's values, the records' fields with -d types, and the
# errors; each run of the compiler under valgrind too.
t_kernel_types() {
	local K=$B/kernel
	GPUX_BTF_DIR=$K "$GPUX" -e 'BEGIN { printf("%d %d %d %d\n", sizeof(struct gpux_kbits),
		sizeof(union gpux_ku), GPUX_KE_A, GPUX_KE_B); exit(); }' >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/err"; fail "BEGIN on kernel types"; return 1; }
	out_has '^40 8 7 -2$' || return 1
	# the REPL reads them too
	printf ':type sizeof(struct gpux_kbits)\n:quit\n' | GPUX_BTF_DIR=$K "$GPUX" --repl \
		>"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "the REPL"; return 1; }
	out_has '^uint64 ' || return 1
	# without libbpf.so.1 (the GPU machine): through the libbpf the host
	# module carries; without that too: said at the record
	GPUX_LIBBPF=/nonexistent GPUX_BTF_DIR=$K "$GPUX" -e 'BEGIN { printf("%d\n",
		sizeof(struct gpux_kbits)); exit(); }' >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/err"; fail "kernel types through the host module's libbpf"; return 1; }
	out_has '^40$' || return 1
	GPUX_LIBBPF=/nonexistent GPUX_HOST_MODULE=/nonexistent GPUX_BTF_DIR=$K "$GPUX" \
		-e 'BEGIN { printf("%d\n", sizeof(struct gpux_kbits)); exit(); }' >"$tmp/out" 2>"$tmp/err"
	[ $? = 1 ] && err_has "^stdin:1:31-48: ERROR: Unknown struct: 'struct gpux_kbits'$" &&
		err_has "^HINT: the kernel's types were not read: the kernel's types \\(BTF\\) are read with libbpf.so.1, which cannot be loaded here$" ||
		return 1
	# the fields' types: bit-fields as integers, the anonymous members'
	# fields as the record's own, the byte array (unsigned) an array, the pointer
	local p='kprobe:f { $k = (struct gpux_kbits *)arg0;
		@ = ($k->a, $k->b, $k->c, $k->d, $k->e, $k->u1, $k->s2, $k->addr, $k->kind); @p = $k->next; }'
	GPUX_BTF_DIR=$K "$GPUX" -d types -e "$p" >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/err"; fail "-d types"; return 1; }
	out_has '^ @ :: \(uint32,int32,int32,uint32,uint8,int32,int16,uint8\[16\],int32\) \(host\)$' &&
		out_has '^ @p :: struct gpux_kbits \* \(host\)$' || return 1
	if [ -z "${GPUX_SANITIZED:-}" ]; then
		GPUX_BTF_DIR=$K valgrind -q --error-exitcode=99 --leak-check=full \
			--errors-for-leak-kinds=definite,indirect,possible \
			--suppressions="$here/../cli/valgrind.supp" "$GPUX" --dry-run -e "$p" \
			>/dev/null 2>"$tmp/vg" || { cat "$tmp/vg"; fail "valgrind"; return 1; }
	fi
	# a record the kernel lacks, and where the kernel's types are unreadable
	GPUX_BTF_DIR=$K "$GPUX" --dry-run -e 'kprobe:f { @ = ((struct gpux_nope *)arg0)->a; }' \
		>"$tmp/out" 2>"$tmp/err"
	[ $? = 1 ] && one_error "stdin:1:18-36: ERROR: Unknown struct: 'struct gpux_nope'" || return 1
	mkdir -p "$tmp/bad" && echo 'not BTF' >"$tmp/bad/vmlinux"
	GPUX_BTF_DIR=$tmp/bad "$GPUX" --dry-run -e 'kprobe:f { @ = ((struct gpux_kbits *)arg0)->a; }' \
		>"$tmp/out" 2>"$tmp/err"
	[ $? = 1 ] && err_has "^HINT: the kernel's types were not read: cannot read the kernel's types \(BTF\) at $tmp/bad" ||
		return 1
	# a bit-field wider than its type is refused, in the script's record
	"$GPUX" --dry-run -e 'struct s { char a:9; }; kprobe:f { @ = ((struct s *)arg0)->a; }' \
		>"$tmp/out" 2>"$tmp/err"
	[ $? = 1 ] && err_has "bit-field 'a' needs an integer type as wide as its width"
}
# A kernel header this machine lacks, where the kernel's types come from
# BTF: read as empty, with a warning at its #include; not without BTF,
# nor for a header outside the kernel's trees; nothing left in TMPDIR.
t_kernel_headers_missing() {
	local p='#include <linux/gpux_nope.h>
#include <net/gpux/deeper.h>
kprobe:f { @ = ((struct gpux_kbits *)arg0)->a; }'
	mkdir -p "$tmp/td"
	TMPDIR=$tmp/td GPUX_BTF_DIR=$B/kernel "$GPUX" --dry-run -e "$p" >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/err"; fail "a missing kernel header with BTF"; return 1; }
	err_has "^stdin:1:1-29: WARNING: linux/gpux_nope.h: not found; the kernel's types are read from its BTF instead \\(the header's macros are not defined\\)$" &&
		err_has "^stdin:2:1-29: WARNING: net/gpux/deeper.h: not found" || return 1
	[ -z "$(ls -A "$tmp/td")" ] || { ls -R "$tmp/td"; fail "stand-in headers left behind"; return 1; }
	# they are made under TMPDIR: where none can be, the header is missing
	TMPDIR=$tmp/none GPUX_BTF_DIR=$B/kernel "$GPUX" --dry-run -e "$p" >"$tmp/out" 2>"$tmp/err"
	[ $? = 1 ] && one_error "stdin:1:1-29: ERROR: 'linux/gpux_nope.h' file not found" ||
		return 1
	GPUX_BTF_DIR=$B/genc "$GPUX" --dry-run -e "$p" >"$tmp/out" 2>"$tmp/err"
	[ $? = 1 ] && one_error "stdin:1:1-29: ERROR: 'linux/gpux_nope.h' file not found" ||
		return 1
	GPUX_BTF_DIR=$B/kernel "$GPUX" --dry-run -e '#include <gpux_nope.h>
BEGIN { exit(); }' >"$tmp/out" 2>"$tmp/err"
	[ $? = 1 ] && one_error "stdin:1:1-23: ERROR: 'gpux_nope.h' file not found"
}
# Reading them: a file name's bytes through the record, each field as
# C lays it out (bit-fields across bytes, read without their own sign as
# bpftrace 0.17 reads them; the anonymous union's, the array as an IPv6
# address). Needs root and tracefs.
t_kernel_types_read() {
	[ "$(id -u)" = 0 ] || { echo "SKIP: not root"; return 77; }
	[ -d /sys/kernel/tracing/events/syscalls ] || { echo "SKIP: no tracefs"; return 77; }
	local F=/proc/self/root/proc/self/mountinfo
	GPUX_BTF_DIR=$B/kernel "$GPUX" -e "tracepoint:syscalls:sys_enter_openat
		/str(args->filename) == \"$F\"/ { \$k = (struct gpux_kbits *)args->filename;
		printf(\"%d %d %d %d %d %d %d %d %s %d\\n\", \$k->a, \$k->b, \$k->c, \$k->d,
		\$k->e, \$k->u1, \$k->s1, \$k->s2, ntop(\$k->addr), \$k->kind); }" \
		-c "/usr/bin/head -c 0 $F" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "run"; return 1; }
	# "/pro" = 0x6f72702f: a = 7, b = 5, c = 0b111 (signed: 7), d = 228, e = 'o'
	out_has '^7 5 7 228 111 1702047587 12131 25971 6c66:2f72:6f6f:742f:7072:6f63:2f73:656c 7300718$'
}

. "$(dirname "$0")/../lib/cases.sh"
cases_main "${4:-}"
