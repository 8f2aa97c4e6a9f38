"""A workload of CuPy's own library kernels for bench/gpu/cupy.sh
(bench/gpu/README.md, "CuPy library kernels"): elementwise ufuncs, a
cp.fuse'd expression, reductions along an axis and in full, sort, argsort,
cumsum, norm, tril, einsum, plus cuBLAS's matmul and gemv (SASS-only
library code: gpux leaves those kernels untouched, they run all the same).

    cupy_bench.py [ITERS [SIZE [WARMUP]]]   ("" or - for a default)
        ITERS   timed iterations (default 2000); BENCH_MAX_S (default 8)
                stops the timed loop earlier, as in the C benchmarks
        SIZE    elements per array (default 4194304, rounded down to a
                multiple of 1024): 1-D float32 arrays, a (SIZE/1024) x 1024
                view of one, SIZE/4 elements for argsort, and a square of
                up to 1024 x 1024 for the cuBLAS products
        WARMUP  untimed iterations first (default 3): the first compiles
                every kernel (NVRTC, then the driver's JIT of the PTX)

Each iteration is the whole workload plus a device synchronize, timed with
time.perf_counter. Prints the per-iteration latency as
`warmup=W asked=ITERS iters=N median_us= p10_us= p90_us= min_us= mean_us=
total_s=` (iters < ITERS: cut by BENCH_MAX_S), a digest
of the last iteration's results (identical run to run and under a tracer:
the inputs are fixed and nothing random runs on the GPU), then the results
checked against numpy and `check: ok` (exit 0) or `check: FAIL` (exit 1).
Exit 3: no CuPy or no GPU here. Run it with CUPY_COMPILE_WITH_PTX=1 (CuPy
then hands the driver PTX, which gpux can instrument) and a fresh
CUPY_CACHE_DIR, as cupy.sh does.
"""
import hashlib
import math
import os
import sys
import time

import numpy as np

try:
    import cupy as cp
    cp.cuda.runtime.getDeviceCount()
except Exception as e:  # no CuPy, no driver or no device
    print("cupy_bench: cannot run here: %s" % e, file=sys.stderr)
    sys.exit(3)


@cp.fuse()
def fused(x, y, z):
    return cp.exp(-x * x) * y + cp.where(z > 0, z, z * 0.5)


def make_inputs(n):
    """Host arrays from a fixed seed; the device gets copies."""
    rng = np.random.default_rng(20261127)
    h = {
        "a": rng.standard_normal(n, dtype=np.float32),
        "b": rng.random(n, dtype=np.float32),
        "c": rng.standard_normal(n, dtype=np.float32),
        "k": rng.integers(0, 10, n, dtype=np.int32),
    }
    mm = min(1024, math.isqrt(n) // 32 * 32)
    h["m"] = h["a"].reshape(n // 1024, 1024)
    h["A"] = h["b"][:mm * mm].reshape(mm, mm)
    h["B"] = h["c"][:mm * mm].reshape(mm, mm)
    h["s"] = h["b"][:n // 4]
    h["v"] = h["c"][:mm]
    d = {name: cp.asarray(h[name]) for name in ("a", "b", "c", "k")}
    d["m"] = d["a"].reshape(n // 1024, 1024)  # views: no copies, no kernels
    d["A"] = d["b"][:mm * mm].reshape(mm, mm)
    d["B"] = d["c"][:mm * mm].reshape(mm, mm)
    d["s"] = d["b"][:n // 4]
    d["v"] = d["c"][:mm]
    return h, d


def step(d):
    """One iteration: every call a CuPy routine (its kernels are CuPy's,
    generated and compiled at run time, or its libraries')."""
    a, b, c, m = d["a"], d["b"], d["c"], d["m"]
    r = {}
    r["axpy"] = a * b + c                       # two elementwise kernels
    r["fused"] = fused(a, b, c)                 # one fused kernel
    r["exp"] = cp.exp(b)
    r["where"] = cp.where(a > c, a, c)
    r["sqrtabs"] = cp.sqrt(cp.abs(c))
    r["colsum"] = m.sum(axis=0)
    r["rowmax"] = m.max(axis=1)
    r["rowargmax"] = m.argmax(axis=1)
    r["colmean"] = m.mean(axis=0)
    r["total"] = r["axpy"].sum()
    r["sorted"] = cp.sort(a)
    r["order"] = cp.argsort(d["s"])
    r["cumsum"] = cp.cumsum(d["k"])
    r["norm"] = cp.linalg.norm(m, axis=1)
    r["tril"] = cp.tril(d["A"])
    r["einsum"] = cp.einsum("ij->i", m)
    r["matmul"] = cp.matmul(d["A"], d["B"])     # cuBLAS sgemm (SASS only)
    r["dot"] = cp.dot(d["A"], d["v"])           # cuBLAS sgemv (SASS only)
    return r


def pct(t, p):
    """Nearest-rank percentile of sorted samples (bench.h's pct)."""
    return t[min(int(p / 100.0 * (len(t) - 1) + 0.5), len(t) - 1)]


def near(got, want, tol, scale):
    """max |got - want| <= tol * scale, elementwise (scale: an array or a
    number, e.g. the sum of the magnitudes a float sum adds up)."""
    err = np.abs(got.astype(np.float64) - want)
    return bool(np.all(err <= tol * np.maximum(scale, 1e-30)))


def verify(h, r):
    """Each result against numpy (in float64 where sums are involved).
    Returns the names that do not match."""
    a, b, c, m = h["a"], h["b"], h["c"], h["m"].astype(np.float64)
    am = np.abs(m)
    cols = m.shape[1]
    bad = []

    def want(name, ok):
        print("check %s: %s" % (name, "ok" if ok else "MISMATCH"))
        if not ok:
            bad.append(name)

    # float32 rounding is relative to the terms, not to a sum that cancels
    ab = a.astype(np.float64) * b
    axpy = ab + c
    want("axpy", near(r["axpy"], axpy, 1e-6, np.abs(ab) + np.abs(c)))
    e, w = np.exp(-a.astype(np.float64) ** 2) * b, np.where(c > 0, c, c * 0.5)
    want("fused", near(r["fused"], e + w, 1e-5, e + np.abs(w)))
    want("exp", near(r["exp"], np.exp(b.astype(np.float64)), 1e-6, np.exp(b)))
    want("where", np.array_equal(r["where"], np.where(a > c, a, c)))
    want("sqrtabs", near(r["sqrtabs"], np.sqrt(np.abs(c.astype(np.float64))), 1e-6, np.sqrt(np.abs(c))))
    want("colsum", near(r["colsum"], m.sum(axis=0), 1e-5, am.sum(axis=0)))
    want("rowmax", np.array_equal(r["rowmax"], h["m"].max(axis=1)))
    ix = r["rowargmax"]
    want("rowargmax", ix.shape == (m.shape[0],) and np.all((ix >= 0) & (ix < cols)) and
         np.array_equal(h["m"][np.arange(m.shape[0]), np.clip(ix, 0, cols - 1)], h["m"].max(axis=1)))
    want("colmean", near(r["colmean"], m.mean(axis=0), 1e-5, am.mean(axis=0)))
    want("total", near(np.array([r["total"]]), np.array([axpy.sum()]), 1e-5, np.abs(axpy).sum()))
    want("sorted", np.array_equal(r["sorted"], np.sort(a)))
    o, s = r["order"], h["s"]
    want("order", o.shape == s.shape and np.array_equal(np.sort(o), np.arange(len(s))) and
         np.array_equal(s[o], np.sort(s)))
    want("cumsum", np.array_equal(r["cumsum"], np.cumsum(h["k"])))
    want("norm", near(r["norm"], np.sqrt((m * m).sum(axis=1)), 1e-4, np.sqrt((m * m).sum(axis=1))))
    want("tril", np.array_equal(r["tril"], np.tril(h["A"])))
    want("einsum", near(r["einsum"], m.sum(axis=1), 1e-5, am.sum(axis=1)))
    # the products on a sample: 64 entries of the GEMM, 64 of the GEMV
    A, B, v = (h[x].astype(np.float64) for x in ("A", "B", "v"))
    rng = np.random.default_rng(7)
    i, j = rng.integers(0, A.shape[0], 64), rng.integers(0, A.shape[0], 64)
    g = np.einsum("sk,ks->s", A[i], B[:, j])
    gs = np.einsum("sk,ks->s", np.abs(A[i]), np.abs(B[:, j]))
    want("matmul", near(r["matmul"][i, j], g, 1e-5, gs))
    want("dot", near(r["dot"][i], A[i] @ v, 1e-5, np.abs(A[i]) @ np.abs(v)))
    return bad


def main():
    def arg(i, default):  # "" or "-" keeps the default
        return int(sys.argv[i]) if len(sys.argv) > i and sys.argv[i] not in ("", "-") else default
    iters, n, warm = arg(1, 2000), arg(2, 1 << 22), arg(3, 3)
    n = max(n - n % 1024, 64 * 1024)
    iters, warm = max(iters, 1), max(warm, 1)
    max_s = float(os.environ.get("BENCH_MAX_S") or 8)
    if max_s <= 0:
        max_s = 8.0
    dev = cp.cuda.Device()
    name = cp.cuda.runtime.getDeviceProperties(dev.id)["name"]
    name = name.decode() if isinstance(name, bytes) else name
    print("cupy %s, %s, n=%d, CUPY_COMPILE_WITH_PTX=%s, CUPY_ACCELERATORS=%s" % (
        cp.__version__, name, n, os.environ.get("CUPY_COMPILE_WITH_PTX", "(unset)"),
        os.environ.get("CUPY_ACCELERATORS", "(default)")))
    sys.stdout.flush()

    h, d = make_inputs(n)
    dev.synchronize()
    for _ in range(warm):
        r = step(d)
        dev.synchronize()
    times = []
    t_start = time.perf_counter()
    for _ in range(iters):
        t0 = time.perf_counter()
        r = step(d)
        dev.synchronize()
        t1 = time.perf_counter()
        times.append((t1 - t0) * 1e6)
        if t1 - t_start > max_s:
            break
    total = time.perf_counter() - t_start
    t = sorted(times)
    print("cupy workload warmup=%d asked=%d iters=%d median_us=%.3f p10_us=%.3f p90_us=%.3f "
          "min_us=%.3f mean_us=%.3f total_s=%.3f" % (
              warm, iters, len(t), pct(t, 50), pct(t, 10), pct(t, 90), t[0], sum(t) / len(t), total))

    # The last iteration's results on the host: copies, no kernels.
    host = {k: cp.asnumpy(v) for k, v in r.items()}
    whole = hashlib.sha1()
    parts = []
    for k in sorted(host):
        x = np.ascontiguousarray(host[k])
        hk = hashlib.sha1(str(x.dtype).encode() + str(x.shape).encode() + x.tobytes())
        whole.update(hk.digest())
        parts.append("%s=%s" % (k, hk.hexdigest()[:12]))
    print("digests: " + " ".join(parts))
    print("digest=%s" % whole.hexdigest())
    bad = verify(h, host)
    print("check: FAIL (%s)" % " ".join(bad) if bad else "check: ok")
    sys.stdout.flush()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
