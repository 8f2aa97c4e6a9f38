"""torch.compile client: a fused elementwise function and a row sum,
compiled by Inductor into Triton kernels (loaded as cubins, their PTX in
Triton's cache), on fixed inputs. Prints a summary of the results; the
values are deterministic for one machine and one Triton version."""
import sys

import torch

from pysum import summary


def f(x, y):
    return (x * y + 1.0).relu() * 0.5, (x - y).abs().sum(dim=1)


def main():
    torch.manual_seed(3)
    x = torch.randn(300, 1000, device="cuda")
    y = torch.randn(300, 1000, device="cuda")
    g = torch.compile(f)
    a, s = g(x, y)
    torch.cuda.synchronize()
    ea, es = f(x, y)
    summary("compiled elementwise", a.flatten().cpu().numpy())
    print("row sums close to eager: %s" % bool(torch.allclose(s, es, rtol=1e-5, atol=1e-3)))
    print("elementwise close to eager: %s" % bool(torch.allclose(a, ea, rtol=1e-5, atol=1e-6)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
