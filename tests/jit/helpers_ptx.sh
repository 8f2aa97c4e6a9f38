#!/bin/bash
# The helper library alone: helpers_ptx.sh HELPERS_PTX PTXAS
set -u
lib=$1 ptxas=$2
if [ -z "$ptxas" ] || [ -z "$lib" ] || [ ! -f "$lib" ]; then
	echo "SKIP: ptxas or the helper library (nvcc) is missing"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for arch in sm_80 sm_90; do
	# -c: the library only defines functions, nothing calls them here.
	if ! "$ptxas" -c -arch=$arch "$lib" -o "$tmp/$arch.o"; then
		echo "FAIL: ptxas -arch=$arch rejected the helper library"
		fail=1
	fi
done
exit $fail
