#!/bin/bash
# One nvcc-made module: run_cuda.sh REWRITE_PTX GPUX PTXAS NAME.ptx GOLDEN
# Rewrites it with the probes of three real gpux programs (their PTX from
# `gpux -d ptx`), runs ptxas for sm_80 and sm_90 on every result, and
# compares the site counts with GOLDEN; rewritten again as a live
# session's copy (variables remapped), ptxas on that too, its variables
# in GOLDEN. UPDATE=1 rewrites GOLDEN.
set -u
rw=$1 gpux=$2 ptxas=$3 ptx=$4 golden=$5
if [ -z "$ptxas" ] || [ ! -f "$ptx" ]; then
	echo "SKIP: no nvcc/ptxas, or $ptx was not built"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
progs=(
	'gdev:access { @pages[addr >> 21] = count(); }'
	'gdev:kernel_entry { @in[kernel] = count(); } gdev:kernel_exit { @out[kernel] = count(); }'
	'gdev:func_entry { @f = count(); } gdev:func_exit { @g = count(); } gdev:access /store/ { @bytes[kernel] = sum(size); }'
)
probes=(
	'access:*:gpux_probe_0'
	'kernel_entry:*:gpux_probe_0 kernel_exit:*:gpux_probe_1'
	'func_entry:*:gpux_probe_0 func_exit:*:gpux_probe_1 access:*:gpux_probe_2'
)
fail=0
for i in 0 1 2; do
	"$gpux" -d ptx -e "${progs[$i]}" >"$tmp/probes$i.ptx" || { echo "FAIL: gpux"; exit 1; }
	args=()
	for p in ${probes[$i]}; do args+=(-P "$p"); done
	echo "# ${progs[$i]}" >>"$tmp/sites"
	if ! "$rw" -p "$tmp/probes$i.ptx" "${args[@]}" -s "$tmp/s" "$ptx" >"$tmp/out$i.ptx"; then
		echo "FAIL: rewrite with program $i"
		fail=1
		continue
	fi
	cat "$tmp/s" >>"$tmp/sites"
	for arch in sm_80 sm_90; do
		"$ptxas" -arch=$arch "$tmp/out$i.ptx" -o "$tmp/out.cubin" ||
			{ echo "FAIL: ptxas -arch=$arch, program $i"; fail=1; }
	done
	# as a live session's copy: its variables the original's (-V)
	if ! "$rw" -p "$tmp/probes$i.ptx" "${args[@]}" -V -s "$tmp/v" "$ptx" >"$tmp/live$i.ptx"; then
		echo "FAIL: rewrite with program $i for a live copy"
		fail=1
		continue
	fi
	"$ptxas" -arch=sm_90 "$tmp/live$i.ptx" -o "$tmp/out.cubin" ||
		{ echo "FAIL: ptxas, program $i, a live copy"; fail=1; }
	[ $i = 0 ] && grep '^var ' "$tmp/v" >>"$tmp/sites"
done
[ "${UPDATE:-}" = 1 ] && cp "$tmp/sites" "$golden"
diff -u "$golden" "$tmp/sites" || fail=1
exit $fail
