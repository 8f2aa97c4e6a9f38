#!/usr/bin/env python3
"""The simulator's default policy beside the real driver: for each run in
REAL.ndjson (bench/sim/uvm_workloads.cu, CUPTI on) and, when given, the
same runs without CUPTI (NOCUPTI.ndjson, for time), run gpux --sim on the
same workload and print a markdown table with the error per workload and
the ordering of workloads by cost.

  bench/sim/compare.py GPUX REAL.ndjson [NOCUPTI.ndjson]
"""
import json
import subprocess
import sys

KEYS = ("size", "gpu", "passes", "seed", "chunk", "stride", "touches", "batch",
        "hot_pct", "hot_share", "layers")


def spec(run):
    keys = ",".join(f"{k}={run[k]}" for k in KEYS if run.get(k) is not None)
    return f"{run['workload']}:{keys}"


def sim(gpux, s):
    out = subprocess.run([gpux, "-f", "json", "--sim", s], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[0])["data"]


def err(sim_v, real_v):
    return f"{100.0 * (sim_v - real_v) / real_v:+.0f}%" if real_v else "–"


def main():
    gpux, real_path = sys.argv[1], sys.argv[2]
    real = [json.loads(l) for l in open(real_path) if l.startswith("{")]
    times = {}
    if len(sys.argv) > 3:
        for l in open(sys.argv[3]):
            if l.startswith("{"):
                r = json.loads(l)
                times[r["workload"]] = r["ms"]
    mib = 1 << 20
    print("| workload | HtoD MiB real / sim (err) | DtoH MiB real / sim (err) | "
          "fault groups real / batches sim | ms real / est sim |")
    print("|---|---|---|---|---|")
    rows = []
    for r in real:
        d = sim(gpux, spec(r))
        ms = times.get(r["workload"], r["ms"])
        rows.append((r["workload"], ms, d["est_ms"]))
        print(f"| {r['workload']} | {r['htod_bytes'] // mib} / {d['htod_bytes'] // mib} "
              f"({err(d['htod_bytes'], r['htod_bytes'])}) | {r['dtoh_bytes'] // mib} / "
              f"{d['dtoh_bytes'] // mib} ({err(d['dtoh_bytes'], r['dtoh_bytes'])}) | "
              f"{r['gpu_page_faults']} / {d['batches']} | {ms:.0f} / {d['est_ms']:.0f} |")
    by_real = [w for w, _, _ in sorted(rows, key=lambda x: x[1])]
    by_sim = [w for w, _, _ in sorted(rows, key=lambda x: x[2])]
    print()
    print("cheapest to dearest, real:", " < ".join(by_real))
    print("cheapest to dearest, sim: ", " < ".join(by_sim))


if __name__ == "__main__":
    main()
