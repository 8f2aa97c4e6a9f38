"""GPT-2-small training steps (as gpt2_step.py: random init, bf16
autocast, AdamW, batch 8 x 512) for SECONDS, each step synchronized and
printed as "step END_NS MS" (END_NS: CLOCK_MONOTONIC when it ended), so
a tool attached and detached meanwhile (bench/gpu/attach_ab.sh) can be
compared with the same process's steps around it. Prints "warm" after
WARMUP steps.
  python3 gpt2_loop.py SECONDS [WARMUP]"""
import sys
import time

import torch

from gpt2_step import make_step

seconds = float(sys.argv[1])
warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 5
step = make_step()
end = None
i = 0
while end is None or time.monotonic() < end:
    torch.cuda.synchronize()
    t0 = time.monotonic_ns()
    step()
    t1 = time.monotonic_ns()
    i += 1
    if i == warmup:
        print("warm", flush=True)
        end = time.monotonic() + seconds
    elif i > warmup:
        print(f"step {t1} {(t1 - t0) / 1e6:.3f}", flush=True)
