"""GPT-2-small training steps (as gpt2_step.py: random init, bf16
autocast, AdamW, batch 8 x 512) for SECONDS, each step synchronized and
printed as "step END_NS MS" (END_NS: CLOCK_MONOTONIC when it ended), so
a tool attached and detached meanwhile (bench/gpu/attach_ab.sh) can be
compared with the same process's steps around it. Prints "warm" after
WARMUP steps.
With CUPTI_AB="SO LIBCUPTI W [ROUNDS]" the loop turns CUPTI's kernel records on
(SO: cupti_only.c built) and off itself every W seconds after the warm-up
(W ending in "steps": every so many steps, to pair steps closer than the
machine's slow periods), starting off, and prints each window as
"win on|off N START_NS END_NS", ending after ROUNDS on-windows and the
off-window after the last (attach_ab.sh CUPTI_ONLY=1: CUPTI's cost
without gpux).
  python3 gpt2_loop.py SECONDS [WARMUP]"""
import ctypes
import os
import sys
import time

import torch

from gpt2_step import make_step

seconds = float(sys.argv[1])
warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 5
step = make_step()
ab = os.environ.get("CUPTI_AB", "").split()
lib = None
if ab:
    lib = ctypes.CDLL(ab[0])
    lib.cupti_only_start.argtypes = [ctypes.c_char_p]
    lib.cupti_only_stop.restype = ctypes.c_longlong
    win_steps = int(ab[2][:-5]) if ab[2].endswith("steps") else 0
    win_ns = int(float(ab[2]) * 1e9) if not win_steps else 0
    rounds = int(ab[3]) if len(ab) > 3 else None
end = None
i = 0
on, n, w0, in_win = False, 0, None, 0
while end is None or time.monotonic() < end:
    torch.cuda.synchronize()
    t0 = time.monotonic_ns()
    step()
    t1 = time.monotonic_ns()
    i += 1
    if i == warmup:
        print("warm", flush=True)
        end = time.monotonic() + seconds
        w0 = t1
    elif i > warmup:
        print(f"step {t1} {(t1 - t0) / 1e6:.3f}", flush=True)
        in_win += 1
    if lib is not None and w0 is not None and (
            in_win >= win_steps if win_steps else t1 - w0 >= win_ns):
        # the window ends with this step; the switch itself is outside both
        torch.cuda.synchronize()
        extra = f" kernels={lib.cupti_only_stop()}" if on else ""
        print(f"win {'on' if on else 'off'} {n} {w0} {t1}{extra}", flush=True)
        if not on:
            if rounds is not None and n == rounds:
                break
            n += 1
            rc = lib.cupti_only_start(ab[1].encode())
            if rc != 0:
                sys.exit(f"gpt2_loop: CUPTI refused ({rc})")
        on = not on
        w0 = time.monotonic_ns()
        in_win = 0
