"""Triton client: a @triton.jit vector add, n = 98432 floats, BLOCK 1024,
num_warps 4: 97 programs of 128 threads (12,416 threads), the last one
masked to 128 elements. Triton compiles PTX, runs ptxas and loads the
cubin; its cache keeps the PTX beside it, which is how gpux instruments
the kernel. Prints a summary and checks it against numpy."""
import sys

import numpy as np
import torch
import triton
import triton.language as tl

from pysum import check, summary


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def main():
    n, block = 98432, 1024
    i = np.arange(n)
    a = (i % 1000).astype(np.float32) * np.float32(0.25)
    b = (i // 7).astype(np.float32) * np.float32(0.125) - np.float32(100.0)
    x, y = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, block),)
    add_kernel[grid](x, y, out, n, BLOCK=block, num_warps=4)
    torch.cuda.synchronize()
    got = out.cpu().numpy()
    summary("triton add", got)
    return check("triton add", got, a + b)


if __name__ == "__main__":
    sys.exit(main())
