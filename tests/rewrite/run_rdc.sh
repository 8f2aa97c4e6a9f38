#!/bin/bash
# Relocatable device code linked again, offline: run_rdc.sh REWRITE_PTX
# GPUX PTXAS NVLINK MAIN.ptx LIB.ptx (nvcc -rdc=true -ptx output). Both
# units are rewritten with the probes of a real gpux program as the
# runtime rewrites them (-u 1, -u 2: the probes' functions internal to
# each unit, their data defined by the first, weak in the second), the
# kernel of the first kept to 24 registers; each is assembled as a
# relocatable object for sm_80 and sm_90 (ptxas -c, every function within
# those 24 registers, as the runtime asks of the driver's link: nvlink
# checks a kernel's cap against each function of a unit it calls, by
# name) and nvlink links
# them: the probes' data and entry are defined once, the user's extern
# function and variable resolve, every kernel is there. The second unit
# rewritten as a first one must not link (two definitions): the weak
# copy is what makes it link.
set -u
rw=$1 gpux=$2 ptxas=$3 nvlink=$4 main=$5 lib=$6
if [ -z "$ptxas" ] || [ -z "$nvlink" ] || [ ! -f "$main" ] || [ ! -f "$lib" ]; then
	echo "SKIP: no nvcc/ptxas/nvlink, or the units were not built"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prog='gdev:kernel_exit { @[kernel] = count(); } gdev:func_entry { @f = count(); }'
"$gpux" -d ptx -e "$prog" >"$tmp/probes.ptx" || { echo "FAIL: gpux"; exit 1; }
args=(-P 'kernel_exit:*:gpux_probe_0' -P 'func_entry:*:gpux_probe_1')
"$rw" -p "$tmp/probes.ptx" "${args[@]}" -u 1 -R _Z8rdc_vaddPKfS0_Pfi=24 -s "$tmp/s1" "$main" \
	>"$tmp/main.ptx" &&
"$rw" -p "$tmp/probes.ptx" "${args[@]}" -u 2 -s "$tmp/s2" "$lib" >"$tmp/lib.ptx" &&
"$rw" -p "$tmp/probes.ptx" "${args[@]}" -u 1 -s "$tmp/s3" "$lib" >"$tmp/lib_strong.ptx" ||
	{ echo "FAIL: rewrite"; exit 1; }
grep -q '^\.weak .global .align 8 .b8 gpux_map_0' "$tmp/lib.ptx" &&
! grep -q '^\.visible .global .align 8 .b8 gpux_map_0' "$tmp/lib.ptx" ||
	{ echo "FAIL: -u 2 left the probes' maps visible"; exit 1; }
! grep -qE '^\.(visible|weak) \.func.* gpux_' "$tmp/main.ptx" "$tmp/lib.ptx" ||
	{ echo "FAIL: a probes function is visible outside its unit"; exit 1; }
fail=0
for arch in sm_80 sm_90; do
	for u in main lib lib_strong; do
		"$ptxas" -arch=$arch -c -maxrregcount=24 "$tmp/$u.ptx" -o "$tmp/$u.$arch.o" ||
			{ echo "FAIL: ptxas -c -arch=$arch $u"; fail=1; }
	done
	if ! "$nvlink" -arch=$arch "$tmp/main.$arch.o" "$tmp/lib.$arch.o" -o "$tmp/linked.$arch.cubin" 2>"$tmp/err"; then
		cat "$tmp/err"; echo "FAIL: nvlink -arch=$arch"; fail=1; continue
	fi
	syms=$(readelf -sW "$tmp/linked.$arch.cubin")
	for s in gpux_ctl gpux_map_0 gpux_off gpux_clock_sample \
		 _Z8rdc_vaddPKfS0_Pfi _Z8rdc_fillPfi _Z9rdc_twicef rdc_scale; do
		n=$(awk -v s="$s" '$NF == s && $(NF - 1) != "UND"' <<<"$syms" | wc -l)
		[ "$n" = 1 ] || { echo "FAIL: $arch: $s defined $n times"; fail=1; }
	done
	if "$nvlink" -arch=$arch "$tmp/main.$arch.o" "$tmp/lib_strong.$arch.o" \
		-o "$tmp/dup.cubin" 2>/dev/null; then
		echo "FAIL: $arch: two strong probes modules linked"; fail=1
	fi
done
[ $fail = 0 ] && echo "PASS: both units instrumented, linked for sm_80 and sm_90"
exit $fail
