#!/usr/bin/env bash
# bpftrace's own runtime test suite, run as it ships against bpftrace and
# against gpux standing in for it. The suite is not part of this
# repository: pass the top of a bpftrace source tree, e.g. Debian's
#   apt-get source --download-only bpftrace=0.17.0-1   (needs a deb-src line)
#   tar xzf bpftrace_0.17.0.orig.tar.gz
# Builds the suite's test programs and libraries the way its CMake file
# does (-g -O0, -no-pie), then runs its engine (tests/runtime/engine) once
# with each tool as `bpftrace` and prints the score: of the tests bpftrace
# passes here, how many gpux passes. Root, about 15 minutes per tool.
#   bench/bpftrace_suite.sh BPFTRACE_SRC [GPUX] [WORK_DIR] [FILTER]
# TOOLS="gpux" runs gpux only, against the bpftrace log a previous run
# left in WORK_DIR.
set -uo pipefail
src=${1:?usage: bpftrace_suite.sh BPFTRACE_SRC [GPUX] [WORK_DIR] [FILTER]}
gpux=$(readlink -f "${2:-build/cli/gpux}")
work=${3:-/tmp/bpftrace_suite}
filter=${4:-*}
[ -x "$gpux" ] || { echo "bpftrace_suite: no gpux at $gpux"; exit 2; }
[ -d "$src/tests/runtime/engine" ] || { echo "bpftrace_suite: no tests/runtime/engine under $src"; exit 2; }
command -v bpftrace >/dev/null || { echo "bpftrace_suite: no bpftrace"; exit 2; }

tools=${TOOLS:-bpftrace gpux}
rm -rf "$work/tests" "$work/bin-bpftrace" "$work/bin-gpux"
mkdir -p "$work/tests/testprogs" "$work/tests/testlibs" "$work/bin-bpftrace" "$work/bin-gpux"
cp -r "$src/tests/runtime" "$work/tests/runtime"
# The engine reads one CMake-substituted value: whether AOT is built (no).
echo 'LIBBCC_BPF_CONTAINS_RUNTIME = bool(0)' >"$work/tests/runtime/engine/cmake_vars.py"
sdt=()
[ -f /usr/include/sys/sdt.h ] && sdt=(-DHAVE_SYSTEMTAP_SYS_SDT_H)
for c in "$src"/tests/testlibs/*.c; do
	n=$(basename "$c" .c)
	gcc -g -O0 -fPIC -shared "${sdt[@]}" -o "$work/tests/testlibs/lib$n.so" "$c" && chmod -x "$work/tests/testlibs/lib$n.so"
done
for c in "$src"/tests/testprogs/*.c; do
	n=$(basename "$c" .c)
	extra=()
	[ "$n" = usdt_lib ] && extra=(-fPIC -I"$src/tests/testlibs" -L"$work/tests/testlibs" -lusdt_tp -Wl,-rpath,"$work/tests/testlibs")
	gcc -g -O0 -no-pie "${sdt[@]}" -o "$work/tests/testprogs/$n" "$c" "${extra[@]}" -lpthread 2>"$work/build-$n.log" ||
		echo "bpftrace_suite: $n did not build (see $work/build-$n.log)"
done
ln -s "$(command -v bpftrace)" "$work/bin-bpftrace/bpftrace"
ln -s "$gpux" "$work/bin-gpux/bpftrace"

passed() { sed -n 's/^\[       OK \] //p' "$1" | sort; }
for tool in $tools; do
	(cd "$work/tests" && BPFTRACE_RUNTIME_TEST_EXECUTABLE="$work/bin-$tool" \
		timeout 3600 python3 runtime/engine/main.py --filter "$filter" >"$work/$tool.log" 2>&1)
	echo "$tool: $(sed -n 's/^\[==========\] \([0-9]*\) tests from.* ran.*/\1/p' "$work/$tool.log") ran," \
		"$(passed "$work/$tool.log" | wc -l) passed," \
		"$(sed -n 's/^\[   SKIP   \] \([0-9]*\) tests, listed below.*/\1/p' "$work/$tool.log") skipped"
done
passed "$work/bpftrace.log" >"$work/bpftrace.pass"
passed "$work/gpux.log" >"$work/gpux.pass"
both=$(comm -12 "$work/bpftrace.pass" "$work/gpux.pass" | wc -l)
base=$(wc -l <"$work/bpftrace.pass")
comm -23 "$work/bpftrace.pass" "$work/gpux.pass" >"$work/gap.txt"
echo "gpux passes $both of the $base tests bpftrace passes ($((base ? 100 * both / base : 0))%);" \
	"the rest: $work/gap.txt, logs: $work/{bpftrace,gpux}.log"
