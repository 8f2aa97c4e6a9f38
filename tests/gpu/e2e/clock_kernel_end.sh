#!/usr/bin/env bash
# cuda:kernel_end's start and end are on nsecs' clock (CLOCK_MONOTONIC),
# through CUPTI's records and through CUDA events alike: a PyTorch loop
# launches one kernel at a time and waits for it, so the n-th kernel_end
# belongs to the n-th launch, and its start must fall after that
# launch's nsecs and within a second of it, its end after its start.
# Skipped (exit 0, says so) without PyTorch.
# Usage: clock_kernel_end.sh GPUX OUTDIR
set -u
gpux=$1 out=$2
mkdir -p "$out"
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null ||
	{ echo "clock_kernel_end: SKIP (no PyTorch with CUDA)"; exit 0; }
cat >"$out/loop.py" <<'PY'
import time, torch
x = torch.zeros(4096, device="cuda")
torch.cuda.synchronize()
for _ in range(300):
    x.add_(1)
    torch.cuda.synchronize()
    time.sleep(0.001)
print("sum", int(x.sum().item()))
PY
PROG='cuda:launch { @s++; @t[@s] = nsecs; }
cuda:kernel_end { @e++; $d = (int64)start - (int64)@t[@e];
  @min_us = min($d / 1000); @max_us = max($d / 1000); @early = sum($d < 0);
  @bad = sum(end < start); }'
rc=0
for how in cupti events; do
	env=()
	[ "$how" = events ] && env=(GPUX_KERNEL_END=events)
	env "${env[@]}" timeout -k 5 120 "$gpux" -e "$PROG" -c "python3 $out/loop.py" \
		>"$out/$how.out" 2>"$out/$how.err"
	g=$?
	v() { sed -n "s/^@$1: //p" "$out/$how.out"; }
	s=$(v s) e=$(v e) early=$(v early) bad=$(v bad) lo=$(v min_us) hi=$(v max_us)
	if [ "$g" != 0 ] || ! grep -q '^sum 1228800$' "$out/$how.out"; then
		echo "clock_kernel_end: FAIL ($how): gpux exited $g or the loop's output differs"; rc=1
	elif [ -z "$s" ] || [ "$s" != "$e" ] || [ "$early" != 0 ] || [ "$bad" != 0 ] ||
		[ -z "$hi" ] || [ "$hi" -ge 1000000 ]; then
		echo "clock_kernel_end: FAIL ($how): $s launches, $e ends, $early started before their launch, $bad ended before they started, start - launch $lo..$hi us"
		rc=1
	else
		echo "clock_kernel_end: $how: $e kernels, start - launch $lo..$hi us"
	fi
done
[ $rc = 0 ] && echo "clock_kernel_end: PASS"
exit $rc
