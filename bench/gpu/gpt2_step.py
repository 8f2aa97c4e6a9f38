"""A GPT-2-small training step (random init from GPT2Config: nothing is
downloaded), bf16 autocast, AdamW, batch 8 x 512, on the GPU. Runs
WARMUP steps, then STEPS timed ones (synchronized per step) and prints
the median step time, and the loss. Training uses atomics (the
embedding's backward), so the loss varies run to run in its last digits;
with GPT2_DETERMINISTIC=1 (and CUBLAS_WORKSPACE_CONFIG=:4096:8) it is the
same bit for bit, and must be the same under gpux. GPT2_STEP_TIMES=1 prints every timed step.
  python3 gpt2_step.py [STEPS [WARMUP]]"""
import os
import statistics
import sys
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def make_step():
    """The model, its optimizer and a batch on the GPU; returns one
    synchronized training step, which returns the loss (a tensor)."""
    if os.environ.get("GPT2_DETERMINISTIC"):
        # the loss bit for bit, run to run (atomics-free kernels)
        torch.use_deterministic_algorithms(True)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config()).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, 50257, (8, 512), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        return loss

    return step


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    step = make_step()
    times = []
    for i in range(warmup + steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss = step()
        if i >= warmup:
            times.append((time.perf_counter() - t0) * 1e3)
    print(f"step_ms {statistics.median(times):.2f} loss {loss.item():.6f}")
    if os.environ.get("GPT2_STEP_TIMES"):
        # every timed step, to tell the spread inside a run from that between runs
        print("steps_ms " + " ".join(f"{t:.2f}" for t in times))


if __name__ == "__main__":
    main()
