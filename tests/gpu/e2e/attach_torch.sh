#!/usr/bin/env bash
# gpux -p on a PyTorch training loop while it runs (bench/gpu/gpt2_loop.py):
# its kernels are launched from the autograd thread, and the first hooked
# launch loads CUPTI, so the attach must neither leave the program's
# threads stopped nor wait on a lock one of them holds. Twice, 4 s each:
# cuda:launch and cuda:kernel_end counts. gpux must end by itself and say
# nothing (the second time included: its copy of the runtime adopts the
# first's CUPTI callbacks instead of being refused), the loop must go on
# stepping after each detach, and every window's @e must be within one
# step's launches of its @l (kernels still running at the cut).
# Skipped (exit 0, says so) without PyTorch and transformers.
# Usage: attach_torch.sh GPUX OUTDIR
set -u
gpux=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
loop=$here/../../../bench/gpu/gpt2_loop.py
mkdir -p "$out"
app=
fail() { echo "attach_torch: FAIL: $*"; [ -n "$app" ] && kill -9 $app 2>/dev/null; exit 1; }
python3 -c 'import torch, transformers; assert torch.cuda.is_available()' 2>/dev/null ||
	{ echo "attach_torch: SKIP (no PyTorch with CUDA, or no transformers)"; exit 0; }
steps() { grep -c '^step ' "$out/loop.txt"; }
python3 "$loop" 60 >"$out/loop.txt" 2>"$out/loop.err" &
app=$!
for _ in $(seq 600); do grep -q '^warm' "$out/loop.txt" && break; sleep 0.2; done
grep -q '^warm' "$out/loop.txt" || fail "the loop did not start ($(tail -n 2 "$out/loop.err"))"
for k in 1 2; do
	timeout -k 5 40 "$gpux" -p $app -e 'cuda:launch { @l = count(); } cuda:kernel_end { @e = count(); }
interval:s:4 { exit(); }' >"$out/g$k.out" 2>"$out/g$k.err"
	rc=$?
	[ "$rc" = 0 ] || fail "attach $k: gpux exited $rc ($(tail -n 2 "$out/g$k.err"))"
	[ ! -s "$out/g$k.err" ] || fail "attach $k: gpux said: $(head -n 3 "$out/g$k.err")"
	l=$(sed -n 's/^@l: //p' "$out/g$k.out") e=$(sed -n 's/^@e: //p' "$out/g$k.out")
	[ -n "$l" ] && [ -n "$e" ] && [ "$e" -gt 0 ] || fail "attach $k: no counts"
	[ "$e" -le "$l" ] && [ $((l - e)) -le 2500 ] || fail "attach $k: @e $e against @l $l"
	before=$(steps)
	sleep 2
	[ "$(steps)" -gt "$before" ] || fail "attach $k: the loop stopped after the detach"
	echo "attach_torch: attach $k: $l launches, $e ended in the window"
done
kill $app
wait $app 2>/dev/null
echo "attach_torch: PASS"
