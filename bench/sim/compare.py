#!/usr/bin/env python3
"""The simulator's default policy beside the real driver: for each run in
REAL.ndjson (bench/sim/uvm_workloads.cu, CUPTI on) and, when given, the
same runs without CUPTI (NOCUPTI.ndjson, for time), run gpux --sim on the
same workload and print a markdown table with the error per workload,
whether both byte counts are within 25%, and the ordering of workloads by
cost. With --per-pass, one row per pass instead (the model's pass k is
its run of k passes less its run of k - 1: the model is deterministic),
with the pass's time beside the model's estimate: a witness of how much
moved that does not depend on CUPTI delivering every record.

  bench/sim/compare.py [--per-pass] GPUX REAL.ndjson [NOCUPTI.ndjson]
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


LIMIT = 0.25


def within(sim_v, real_v):
    if not real_v:
        return sim_v == 0
    return abs(sim_v - real_v) <= LIMIT * real_v


def verdict(d, r):
    bad = [k for k, key in (("HtoD", "htod_bytes"), ("DtoH", "dtoh_bytes"))
           if not within(d[key], r[key])]
    return "yes" if not bad else "no (" + ", ".join(bad) + ")"


def per_pass(gpux, real):
    mib = 1 << 20
    print("| run | pass | HtoD MiB real / sim (err) | DtoH MiB real / sim (err) | ±25% | "
          "ms real / est sim (err) |")
    print("|---|---|---|---|---|---|")
    for r in real:
        prev = {"htod_bytes": 0, "dtoh_bytes": 0, "est_ms": 0}
        label = f"{r['workload']} {r['size'] // mib}m / {r['gpu'] // mib}m"
        if r.get("chunk") != 64 * mib:
            label += f", chunk {r['chunk'] // mib}m"
        for k, p in enumerate(r["per_pass"], 1):
            d = sim(gpux, spec(dict(r, passes=k)))
            s = {key: d[key] - prev[key] for key in prev}
            prev = {key: d[key] for key in prev}
            print(f"| {label} | {k} | {p['htod_bytes'] // mib} / {s['htod_bytes'] // mib} "
                  f"({err(s['htod_bytes'], p['htod_bytes'])}) | {p['dtoh_bytes'] // mib} / "
                  f"{s['dtoh_bytes'] // mib} ({err(s['dtoh_bytes'], p['dtoh_bytes'])}) | "
                  f"{verdict(s, p)} | {p['ms']:.0f} / {s['est_ms']:.0f} "
                  f"({err(s['est_ms'], p['ms'])}) |")


def main():
    args = sys.argv[1:]
    by_pass = "--per-pass" in args
    args = [a for a in args if a != "--per-pass"]
    gpux, real_path = args[0], args[1]
    real = [json.loads(l) for l in open(real_path) if l.startswith("{")]
    if by_pass:
        per_pass(gpux, real)
        return
    times = {}
    if len(args) > 2:
        for l in open(args[2]):
            if l.startswith("{"):
                r = json.loads(l)
                times[r["workload"]] = r["ms"]
    mib = 1 << 20
    print("| workload | HtoD MiB real / sim (err) | DtoH MiB real / sim (err) | ±25% | "
          "fault groups real / batches sim | ms real / est sim |")
    print("|---|---|---|---|---|---|")
    rows = []
    for r in real:
        d = sim(gpux, spec(r))
        ms = times.get(r["workload"], r["ms"])
        rows.append((r["workload"], ms, d["est_ms"]))
        print(f"| {r['workload']} | {r['htod_bytes'] // mib} / {d['htod_bytes'] // mib} "
              f"({err(d['htod_bytes'], r['htod_bytes'])}) | {r['dtoh_bytes'] // mib} / "
              f"{d['dtoh_bytes'] // mib} ({err(d['dtoh_bytes'], r['dtoh_bytes'])}) | "
              f"{verdict(d, r)} | "
              f"{r['gpu_page_faults']} / {d['batches']} | {ms:.0f} / {d['est_ms']:.0f} |")
    by_real = [w for w, _, _ in sorted(rows, key=lambda x: x[1])]
    by_sim = [w for w, _, _ in sorted(rows, key=lambda x: x[2])]
    print()
    print("cheapest to dearest, real:", " < ".join(by_real))
    print("cheapest to dearest, sim: ", " < ".join(by_sim))


if __name__ == "__main__":
    main()
