#!/bin/bash
# The Compute Sanitizer's patch module (runtime/sass_ptx.c) from real gpux
# programs: run_sass.sh SASS_PTX_TOOL GPUX PTXAS GOLDEN_DIR
# For each program: its probe module (`gpux -d ptx`), made into the patch
# and boot modules; ptxas compiles the patch module as a tools patch
# (`--compile-as-tools-patch`: no kernels, no redux.sync) for sm_80 and
# sm_90 and the boot module as usual; the callbacks (what follows the
# patch module's marker) against GOLDEN_DIR/NAME.ptx. A module without
# the helper library is refused with a reason. UPDATE=1 rewrites goldens.
set -u
tool=$1 gpux=$2 ptxas=$3 golden=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# NAME|PROGRAM|PROBES (KIND[:ONLY]:FUNC, in the program's order; ONLY as
# the controller writes it: 16 is GPUX_SITE_ANYTIME, a kernel_exit probe
# of lifelong values, which the block-enter callback calls)
cases=(
	'count_exit|gdev:kernel_exit { @[kernel] = count(); }|exit:16:gpux_probe_0'
	'clock_exit|gdev:kernel_exit { @t[kernel] = max(nsecs); }|exit:gpux_probe_0'
	'entry_exit|gdev:kernel_entry { @in[kernel] = count(); } gdev:kernel_exit { @out = hist(lane); }|entry:gpux_probe_0 exit:16:gpux_probe_1'
	'store_bytes|gdev:access /store/ { @bytes[kernel] = sum(size); }|access:1:gpux_probe_0'
	'loads_printf|gdev:access /!store/ { @pages[addr >> 21] = count(); } gdev:kernel_exit /lane == 0/ { printf("%s %d\n", kernel, sm); }|access:2:gpux_probe_0 exit:gpux_probe_1'
	'atomics_func|gdev:access /atomic/ { @a = count(); } gdev:func_entry { @f = count(); }|access:4:gpux_probe_0 func_entry:gpux_probe_1'
)
for c in "${cases[@]}"; do
	IFS='|' read -r name prog specs <<<"$c"
	"$gpux" -d ptx -e "$prog" >"$tmp/$name.ptx" || { echo "FAIL $name: gpux -d ptx"; fail=1; continue; }
	nmaps=$(grep -c '^\.visible \.global \.align 8 \.b8 gpux_map_' "$tmp/$name.ptx")
	# shellcheck disable=SC2086
	if ! "$tool" "$tmp/$name.ptx" "$nmaps" "$tmp/patch.ptx" "$tmp/boot.ptx" $specs; then
		echo "FAIL $name: sass_ptx_make"
		fail=1
		continue
	fi
	grep -q '^[[:space:]]*redux\.' "$tmp/patch.ptx" && { echo "FAIL $name: redux left in the patch module"; fail=1; }
	grep -q '\.entry' "$tmp/patch.ptx" && { echo "FAIL $name: a kernel left in the patch module"; fail=1; }
	sed -n '/^\/\/ gpux: the Sanitizer.s callbacks/,$p' "$tmp/patch.ptx" >"$tmp/cb.ptx"
	if [ "${UPDATE:-}" = 1 ]; then
		cp "$tmp/cb.ptx" "$golden/$name.ptx"
	elif ! diff -u "$golden/$name.ptx" "$tmp/cb.ptx"; then
		echo "FAIL $name: callbacks differ from $golden/$name.ptx"
		fail=1
	fi
	if [ -n "$ptxas" ]; then
		for arch in sm_80 sm_90; do
			"$ptxas" -arch=$arch --compile-as-tools-patch "$tmp/patch.ptx" -o "$tmp/p.cubin" ||
				{ echo "FAIL $name: ptxas --compile-as-tools-patch -arch=$arch"; fail=1; }
		done
		"$ptxas" -arch=sm_90 "$tmp/boot.ptx" -o "$tmp/b.cubin" ||
			{ echo "FAIL $name: ptxas on the boot module"; fail=1; }
	fi
	echo "ok $name ($nmaps maps)"
done
# refused with a reason: no helper library (no clock sampler) in the module
printf '.version 8.0\n.target sm_80\n.address_size 64\n' >"$tmp/bare.ptx"
if "$tool" "$tmp/bare.ptx" 0 "$tmp/p" "$tmp/b" exit:f 2>"$tmp/err"; then
	echo "FAIL: a module without the helper library was taken"
	fail=1
elif ! grep -q 'clock sampler' "$tmp/err"; then
	echo "FAIL: no reason given: $(cat "$tmp/err")"
	fail=1
fi
[ -n "$ptxas" ] || echo "(no ptxas: the modules were made, not compiled)"
exit $fail
