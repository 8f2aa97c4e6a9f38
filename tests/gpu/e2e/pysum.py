"""Result summary for the Python e2e programs, the same fields as common.h's
summary(): FNV-1a 64 of the bytes, the sequential double sum, a few
elements in hex float."""


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xffffffffffffffff
    return h


def summary(name, arr):
    vals = [float(v) for v in arr.tolist()]
    n = len(vals)
    s = 0.0
    for v in vals:
        s += v
    print("%s: n=%d fnv1a64=%016x sum=%s [0]=%s [1]=%s [%d]=%s [%d]=%s" % (
        name, n, fnv1a64(arr.tobytes()), s.hex(), vals[0].hex(), vals[1].hex(),
        n // 2, vals[n // 2].hex(), n - 1, vals[n - 1].hex()))


def check(name, got, want):
    """Exact comparison; prints one line, returns 1 on a mismatch."""
    gb, wb = got.tobytes(), want.tobytes()
    if gb == wb:
        print("check %s: ok" % name)
        return 0
    for i in range(len(got)):
        if got[i:i + 1].tobytes() != want[i:i + 1].tobytes():
            print("check %s: MISMATCH at %d: got %s want %s" % (
                name, i, float(got[i]).hex(), float(want[i]).hex()))
            break
    return 1
