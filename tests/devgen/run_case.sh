#!/bin/bash
# One device lowering case: run_case.sh DEVGEN CASE.gpx HELPERS_PTX PTXAS
set -u
devgen=$1 case_file=$2 lib=$3 ptxas=$4
cd "$(dirname "$case_file")" || exit 2
name=$(basename "$case_file" .gpx)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Refused: exactly the expected diagnostics and no output.
if [ -f "$name.err" ]; then
	if "$devgen" "$name.gpx" >"$tmp/out" 2>"$tmp/err"; then
		echo "FAIL: $name.gpx was lowered, expected a refusal"
		exit 1
	fi
	diff -u --label "$name.err (expected)" --label "$name (actual)" \
		"$name.err" "$tmp/err" || exit 1
	[ -s "$tmp/out" ] && { echo "FAIL: output for a refused program"; exit 1; }
	exit 0
fi

fail=0
# tolerant_*: the front end may warn.
if ! "$devgen" "$name.gpx" >"$tmp/bpf.txt" 2>"$tmp/err" ||
	{ [ -s "$tmp/err" ] && [ "${name#tolerant_}" = "$name" ]; }; then
	echo "FAIL: lowering or verification of $name.gpx"
	cat "$tmp/err"
	exit 1
fi
if [ -f "$name.bpf.txt" ]; then
	diff -u --label "$name.bpf.txt (expected)" --label "$name (actual)" \
		"$name.bpf.txt" "$tmp/bpf.txt" || fail=1
fi
# No device probe: nothing to assemble.
[ -s "$tmp/bpf.txt" ] || exit $fail
if [ -z "$ptxas" ] || [ -z "$lib" ] || [ ! -f "$lib" ]; then
	echo "SKIP: ptxas or the helper library (nvcc) is missing; $name was not assembled"
	[ $fail = 0 ] && exit 77
	exit 1
fi
for arch in sm_80 sm_90; do
	if ! "$devgen" --ptx $arch --lib "$lib" "$name.gpx" >"$tmp/$arch.ptx"; then
		echo "FAIL: PTX for $arch"
		fail=1
		continue
	fi
	if ! "$ptxas" -arch=$arch "$tmp/$arch.ptx" -o "$tmp/$arch.cubin"; then
		echo "FAIL: ptxas -arch=$arch rejected the module of $name"
		fail=1
	fi
	# NAME.ptx.expect: text every module must hold, one line each
	# (lines starting with # are comments, with ! text it must not hold).
	[ -f "$name.ptx.expect" ] || continue
	while IFS= read -r want; do
		case "$want" in ''|'#'*) continue ;; esac
		if [ "${want#!}" != "$want" ]; then
			if grep -qF -- "${want#!}" "$tmp/$arch.ptx"; then
				echo "FAIL: the $arch module of $name holds: ${want#!}"
				fail=1
			fi
		elif ! grep -qF -- "$want" "$tmp/$arch.ptx"; then
			echo "FAIL: the $arch module of $name lacks: $want"
			fail=1
		fi
	done <"$name.ptx.expect"
done
exit $fail
