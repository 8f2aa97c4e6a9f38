#!/bin/bash
# One JIT case: run_case.sh JIT_BPF CASE.bpf HELPERS_PTX PTXAS
set -u
jit=$1 case_file=$2 lib=$3 ptxas=$4
cd "$(dirname "$case_file")" || exit 1
name=$(basename "$case_file" .bpf)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A refused program: exactly the expected diagnostics, no output.
if [ -f "$name.err" ]; then
	if "$jit" --func-only "$name.bpf" >"$tmp/out" 2>"$tmp/err"; then
		echo "FAIL: the JIT accepted $name.bpf"
		exit 1
	fi
	diff -u "$name.err" "$tmp/err" || exit 1
	[ -s "$tmp/out" ] && { echo "FAIL: output for a refused program"; exit 1; }
	exit 0
fi

fail=0
if ! "$jit" --func-only "$name.bpf" >"$tmp/func.ptx"; then
	echo "FAIL: the JIT refused $name.bpf"
	exit 1
fi
if [ -f "$name.ptx" ]; then
	diff -u "$name.ptx" "$tmp/func.ptx" || fail=1
fi
if [ -z "$ptxas" ] || [ -z "$lib" ] || [ ! -f "$lib" ]; then
	echo "SKIP: ptxas or the helper library (nvcc) is missing; $name was not assembled"
	[ $fail = 0 ] && exit 77
	exit 1
fi
for arch in sm_80 sm_90; do
	if ! "$jit" --target $arch --lib "$lib" "$name.bpf" >"$tmp/$arch.ptx"; then
		fail=1
		continue
	fi
	if ! "$ptxas" -arch=$arch "$tmp/$arch.ptx" -o "$tmp/$arch.cubin"; then
		echo "FAIL: ptxas -arch=$arch rejected the module of $name"
		fail=1
	fi
done
exit $fail
