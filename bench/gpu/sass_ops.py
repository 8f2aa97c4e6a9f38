"""What SASS patching costs one kernel at a time: a few PyTorch ops
(SASS-only kernels) each timed with CUDA events over ITERS launches, the
median of ROUNDS, in microseconds per launch. Run alone and under gpux
(bench/gpu/sass_cost.sh) and compare.
  python3 sass_ops.py [ITERS [ROUNDS]]"""
import statistics
import sys

import torch

iters = int(sys.argv[1]) if len(sys.argv) > 1 else 200
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
torch.manual_seed(0)
big = torch.randn(64 << 20, device="cuda")          # 256 MB fp32
small = torch.randn(1 << 16, device="cuda")         # launch-bound
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
act = torch.randn(8 * 512, 768, device="cuda", dtype=torch.bfloat16)
ln = torch.nn.LayerNorm(768, device="cuda", dtype=torch.bfloat16)
ops = {
    "add_256MB": lambda: big.add_(1.0),
    "add_256KB": lambda: small.add_(1.0),
    "gemm_4096_bf16": lambda: a @ b,
    "softmax_4096x768": lambda: torch.softmax(act, dim=-1),
    "layernorm_4096x768": lambda: ln(act),
    "sum_256MB": lambda: big.sum(),
}
for name, op in ops.items():
    for _ in range(10):
        op()
    per = []
    for _ in range(rounds):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        s.record()
        for _ in range(iters):
            op()
        e.record()
        e.synchronize()
        per.append(s.elapsed_time(e) * 1e3 / iters)
    print(f"op {name} {statistics.median(per):.2f} us")
