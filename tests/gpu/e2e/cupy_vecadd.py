"""CuPy client: a RawKernel vector add compiled by NVRTC, n = 10000,
40 blocks x 256 threads (2 global loads + 1 store per i < n). The kernel
is extern "C" vecAdd. CuPy compiles to a cubin (SASS only) unless
CUPY_COMPILE_WITH_PTX=1, which run.sh sets for the cupy_vecadd cases
(cupy_vecadd_cubin leaves the default). An argument renames the kernel
(cupy_gpux_name: gpux_step, a name with gpux's prefix). Prints a summary
and checks it."""
import sys

import cupy as cp
import numpy as np

from pysum import check, summary

SRC = r"""
extern "C" __global__ void NAME(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}
"""


def main():
    n, blocks, threads = 10000, 40, 256
    i = np.arange(n)
    a = (i % 1000).astype(np.float32) * np.float32(0.25)
    b = (i // 7).astype(np.float32) * np.float32(0.125) - np.float32(100.0)
    want = a + b
    name = sys.argv[1] if len(sys.argv) > 1 else "vecAdd"
    kern = cp.RawKernel(SRC.replace("NAME", name), name)
    da, db = cp.asarray(a), cp.asarray(b)
    dc = cp.zeros(n, dtype=cp.float32)
    print("cupy RawKernel %s<<<%d, %d>>> n=%d" % (name, blocks, threads, n))
    kern((blocks,), (threads,), (da, db, dc, np.int32(n)))
    cp.cuda.Device().synchronize()
    c = cp.asnumpy(dc)
    summary("c", c)
    bad = check("c", c, want)
    print("result: FAIL" if bad else "result: ok")
    sys.stdout.flush()
    return bad


if __name__ == "__main__":
    sys.exit(main())
