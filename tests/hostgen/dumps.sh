#!/usr/bin/env bash
# dumps.sh HOSTGEN DIR: -d ir, -d bpf and --emit on the golden uprobe.
set -u
bin=$1 dir=$2
case=$dir/uprobe_comm_count.gpx
fail=0
check() { # check WHAT PATTERN TEXT
	if ! grep -qF -- "$2" <<<"$3"; then
		echo "FAIL: $1 lacks: $2"
		fail=1
	fi
}
ir=$("$bin" --ir "$case")
check ir 'define i64 @p0_uprobe_malloc(ptr' "$ir"
check ir 'section "uprobe//lib/x86_64-linux-gnu/libc.so.6:malloc"' "$ir"
check ir 'section ".maps"' "$ir"
check ir '!DICompileUnit' "$ir"
bpf=$("$bin" --bpf "$case")
check bpf 'p0_uprobe_malloc: ; section uprobe//lib/x86_64-linux-gnu/libc.so.6:malloc' "$bpf"
check bpf '; uprobe:/lib/x86_64-linux-gnu/libc.so.6:malloc { @[comm] = count(); }' "$bpf"
check bpf 'call bpf_get_current_comm' "$bpf"
check bpf 'r1 = map[AT_] ll' "$bpf"
check bpf 'call bpf_map_lookup_elem' "$bpf"
check bpf 'exit' "$bpf"
kf=$("$bin" --bpf "$dir/gpu_mem_access.gpx")
check bpf-kfunc 'call bpf_uvm_pmm_chunk_move_tail' "$kf"
tmp=$(mktemp -d)
"$bin" --emit "$tmp" "$case" || fail=1
magic=$(head -c 4 "$tmp/host.bpf.o" | od -An -c | tr -d ' ')
[ "$magic" = '177ELF' ] || { echo "FAIL: --emit wrote no ELF ($magic)"; fail=1; }
rm -rf "$tmp"
[ $fail -eq 0 ] && echo "dumps ok"
exit $fail
