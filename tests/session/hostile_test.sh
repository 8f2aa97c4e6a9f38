#!/usr/bin/env bash
# gpux against a traced program that scribbles over the session segment
# (hostile.c), without a GPU. Usage:
#   hostile_test.sh GPUX HOSTILE RT_LIB MODE [SEEDS]
# For each seed and each of two programs: gpux must exit 1 (not crash,
# not hang), say the segment was overwritten, run END, report no
# sanitizer error, and write no byte outside printable ASCII, newline
# and tab on stdout or stderr. Then the first program with -f perfetto,
# whose events come whole from the runtime (HOST_REC_CEV): the same,
# END's line and the events in a trace that validate_trace.py takes.
set -u
GPUX=$1
HOSTILE=$2
export GPUX_RT=$3
mode=$4
seeds=${5:-4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

progs=(
'cuda:launch { @l = count(); } gdev:kernel_exit { @x = count(); } END { printf("end\n"); }'
'cuda:launch { @k[kernel] = count(); @s = stats(1); printf("%s\n", kernel); }
 gdev:kernel_exit { @h = hist(nsecs); @n[kernel] = count(); @a = avg(warp); @m = max(sm);
	printf("%s %d\n", kernel, warp); }
 END { printf("end\n"); }'
)
failed=0
validate=$(dirname "$0")/../timeline/validate_trace.py
fail() { echo "FAIL: $mode seed $seed program $p: $*"; failed=1; }
# run SEED P [GPUX OPTIONS...]: program P under gpux against the
# hostile program; 0 when it held up, else the reason said and 1.
run() {
	local seed=$1 p=$2
	shift 2
	timeout 60 "$GPUX" "$@" -e "${progs[$p]}" -- "$HOSTILE" "$seed" "$mode" \
		>"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$? odd
	odd=$(cat "$tmp/out" "$tmp/err" | LC_ALL=C tr -d '\n\t -~' | wc -c)
	if [ "$rc" != 1 ]; then
		fail "exit status $rc, expected 1"
	elif grep -qE 'AddressSanitizer|LeakSanitizer|runtime error' "$tmp/err"; then
		fail "a sanitizer report"
	elif [ "$(grep -c "^gpux: WARNING: the traced program overwrote gpux's shared memory" \
		"$tmp/err")" != 1 ]; then
		fail "the overwritten segment not reported once"
	elif [ "$odd" != 0 ]; then
		fail "$odd bytes outside printable ASCII"
	else
		return 0
	fi
	echo "--- stdout"; LC_ALL=C cat -v "$tmp/out" | head -40
	echo "--- stderr"; LC_ALL=C cat -v "$tmp/err" | head -40
	return 1
}
for seed in $(seq 1 "$seeds"); do
	for p in 0 1; do
		run "$seed" "$p" && { grep -qx end "$tmp/out" || fail "END did not run"; }
	done
	# the timeline: END's line and the events in a valid trace
	p=0
	if run "$seed" 0 -f perfetto -o "$tmp/trace.json"; then
		if ! python3 "$validate" "$tmp/trace.json" >"$tmp/valid" 2>&1; then
			fail "the trace: $(head -3 "$tmp/valid")"
		elif ! grep -q '"end' "$tmp/trace.json"; then
			fail "END's line is not in the trace"
		fi
	fi
done
[ $failed = 0 ] && echo "PASS: $mode, $seeds seeds x $((${#progs[@]} + 1)) programs"
exit $failed
