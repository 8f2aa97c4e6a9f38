"""numba-cuda client: @cuda.jit vector add, n = 10000, launched as
vecadd[40, 256] (10240 threads; 2 global loads + 1 store per i < n).
numba compiles the kernel to PTX and links it at run time; its mangled
name contains 'vecadd'. Prints a summary of the result and checks it."""
import sys

import numpy as np

# The GPU machine's numba-cuda overloads np.row_stack, which NumPy 2.4
# removed (AttributeError at the first kernel compile): give it the alias
# it had (np.vstack) before numba-cuda is imported.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402

from pysum import check, summary  # noqa: E402


@cuda.jit
def vecadd(a, b, c, n):
    i = cuda.grid(1)
    if i < n:
        c[i] = a[i] + b[i]


def main():
    n, blocks, threads = 10000, 40, 256
    i = np.arange(n)
    a = (i % 1000).astype(np.float32) * np.float32(0.25)
    b = (i // 7).astype(np.float32) * np.float32(0.125) - np.float32(100.0)
    want = a + b
    da, db = cuda.to_device(a), cuda.to_device(b)
    dc = cuda.device_array(n, dtype=np.float32)
    print("numba vecadd[%d, %d] n=%d" % (blocks, threads, n))
    vecadd[blocks, threads](da, db, dc, np.int32(n))
    cuda.synchronize()
    c = dc.copy_to_host()
    summary("c", c)
    bad = check("c", c, want)
    print("result: FAIL" if bad else "result: ok")
    sys.stdout.flush()
    return bad


if __name__ == "__main__":
    sys.exit(main())
