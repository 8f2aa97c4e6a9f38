#!/usr/bin/env bash
# Compares test_fatbin's element listing and PTX with cuobjdump's.
# Usage: cuobjdump_cmp.sh TEST_FATBIN CUOBJDUMP DIR
set -uo pipefail
tf=$1 cu=$2 dir=$3
if [ -z "$cu" ] || [ ! -x "$cu" ]; then
	echo "skipped: cuobjdump not found (configure with -DGPUX_CUOBJDUMP=PATH)"
	exit 77
fi
[ -f "$dir/stamp" ] || { echo "skipped: no CUDA test programs"; exit 77; }
# PTX lines without cuobjdump's headers, comments and indentation.
norm() {
	grep -v -E '^(Fatbin (elf|ptx) code:|=+$|arch = |code version = |host = |compile_size = |compressed$|ptxasOptions = |identifier = )' |
		sed -e 's://.*$::' -e 's/[[:space:]]\+/ /g' -e 's/^ //' -e 's/ $//' |
		grep -v '^$'
}
fail=0
for f in k_def.o k_none.o k_all.o k_size.o k_speed.o k_speed_all.o k_sass.o k_rdc.o two two_rdc; do
	if ! diff <("$cu" -lelf -lptx "$dir/$f" 2>/dev/null) <("$tf" list "$dir/$f"); then
		echo "listing differs: $f"; fail=1
	fi
	if ! diff <("$cu" -ptx "$dir/$f" 2>/dev/null | norm) <("$tf" ptxdump "$dir/$f" | norm); then
		echo "PTX differs: $f"; fail=1
	fi
done
exit $fail
