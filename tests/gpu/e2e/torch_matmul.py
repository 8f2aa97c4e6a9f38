"""PyTorch client: a 1024 x 1024 matmul and a relu on the GPU. PyTorch's
own kernels and cuBLAS's are SASS only (no PTX), so gpux cannot splice
probes into them: they must run untouched, the result unchanged, and
gpux must say so in a few lines per library, not one per kernel.
Prints a summary of the result (the same inputs every run: seeded)."""
import torch

torch.manual_seed(1)
a = torch.randn(1024, 1024, device="cuda")
b = torch.relu(a @ a)
torch.cuda.synchronize()
c = b.cpu()
print(f"relu(a @ a): shape {tuple(c.shape)} positive {int((c > 0).sum())} "
      f"sum {float(c.double().sum()):.6e}")
