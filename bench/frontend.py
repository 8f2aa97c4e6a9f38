#!/usr/bin/env python3
"""Wall time of gpux front-end runs (parse, check, dump), median of N.

Usage: bench/frontend.py [GPUX] [N]
Each program runs N times as a fresh process, as a user would run it;
/bin/true is timed the same way to show the cost of starting a process.
"""
import statistics
import subprocess
import sys
import time

gpux = sys.argv[1] if len(sys.argv) > 1 else "build/cli/gpux"
n = int(sys.argv[2]) if len(sys.argv) > 2 else 500

cases = [
    ("/bin/true (process start)", ["/bin/true"]),
    ("-d ast kernel_exit count", [gpux, "-d", "ast", "-e",
                                  "gdev:kernel_exit { @[kernel] = count(); }"]),
    ("--dry-run kernel_exit count", [gpux, "--dry-run", "-e",
                                     "gdev:kernel_exit { @[kernel] = count(); }"]),
    ("--dry-run launch latency", [gpux, "--dry-run", "-e",
                                  "cuda:launch { @t[kernel] = nsecs; } "
                                  "gdev:kernel_entry { @lat[kernel] = hist(nsecs - @t[kernel]); }"]),
    ("--dry-run gpu_mem policy", [gpux, "--dry-run", "-e",
                                  "gpu_mem:access { @freq[chunk]++; if (@freq[chunk] > 3) "
                                  "{ move_tail(chunk); } return BYPASS; }"]),
]

print(f"{'case':32} {'median ms':>10} {'p90 ms':>8} {'min ms':>8}")
for name, argv in cases:
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        ts.append((time.perf_counter() - t) * 1000)
    ts.sort()
    print(f"{name:32} {statistics.median(ts):10.3f} {ts[int(n * 0.9)]:8.3f} {ts[0]:8.3f}")
