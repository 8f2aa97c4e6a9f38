"""PyTorch eager elementwise ops and a reduction over 2^20 floats. Their
kernels (libtorch_cuda.so) carry SASS only: gpux probes them through
SASS patching. The add writes 2^20 x 4 bytes; every thread launched
exits once. Deterministic: the same output every run."""
import torch

n = 1 << 20
x = torch.arange(n, device="cuda", dtype=torch.float32)
y = torch.full((n,), 2.0, device="cuda")
z = x + y
r = torch.relu(z - 1000.0)
s = r.sum(dtype=torch.float64)
torch.cuda.synchronize()
print(f"z[-1] {float(z[-1])} positive {int((r > 0).sum())} sum {float(s):.6e}")
