#!/usr/bin/env python3
"""Checks a gpux -f perfetto timeline against the Chrome trace-event
format as Perfetto UI and chrome://tracing read it, then prints what it
holds, one "key value" a line, for the tests to compare:

    validate_trace.py FILE

Checked: the file parses as JSON (no NaN or Infinity) into an object
with a "traceEvents" list and a "displayTimeUnit" of "ms" or "ns"; each
event has the members its phase needs (X: name, ts, dur >= 0, pid, tid;
i: name, ts, pid, tid, a scope of g, p or t; C: name, ts, pid, numeric
args; M: one of the names that name or order tracks, with its arg),
numbers where numbers belong; every pid is named by a process_name, and
every tid an X or i event uses by a thread_name of that pid, each once;
the X events of one track nest (none ends inside another it started
after). Exit 1 with the first problems on stderr.

Printed: "events N", "cat CAT N" per category, "kernels N" (X events),
"kernel NAME" per distinct kernel name, "process NAME" and
"thread NAME" per track name, "printf TEXT" per printf line, "counter
NAME SERIES VALUE" per counter's last sample of each series."""
import json
import math
import sys

META = {"process_name": "name", "thread_name": "name",
        "process_sort_index": "sort_index", "thread_sort_index": "sort_index",
        "process_labels": "labels"}


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def integer(v):
    return isinstance(v, int) and not isinstance(v, bool)


def no_constants(name):
    raise ValueError("not JSON: " + name)


def check(doc, errors):
    def err(i, msg):
        errors.append("event %d: %s" % (i, msg))

    if not isinstance(doc, dict):
        errors.append("the document is not an object")
        return None
    if doc.get("displayTimeUnit", "ms") not in ("ms", "ns"):
        errors.append("displayTimeUnit is %r" % doc.get("displayTimeUnit"))
    evs = doc.get("traceEvents")
    if not isinstance(evs, list):
        errors.append("no traceEvents list")
        return None
    procs, threads = {}, {}
    used_pids, used_threads = set(), set()
    slices = {}
    for i, e in enumerate(evs):
        if not isinstance(e, dict):
            err(i, "not an object")
            continue
        ph = e.get("ph")
        if not integer(e.get("pid")):
            err(i, "pid is not an integer")
            continue
        pid = e["pid"]
        if ph != "C" and not integer(e.get("tid")):
            err(i, "tid is not an integer")
            continue
        if not isinstance(e.get("name"), str):
            err(i, "name is not a string")
        if "args" in e and not isinstance(e["args"], dict):
            err(i, "args is not an object")
        if "cat" in e and not isinstance(e["cat"], str):
            err(i, "cat is not a string")
        if ph == "M":
            key = META.get(e.get("name"))
            if not key or key not in e.get("args", {}):
                err(i, "metadata %r without its %s" % (e.get("name"), key))
                continue
            v = e["args"][key]
            if key == "name" and not isinstance(v, str):
                err(i, "a track name that is not a string")
            if key == "sort_index" and not integer(v):
                err(i, "a sort index that is not an integer")
            if e["name"] == "process_name":
                if pid in procs:
                    err(i, "pid %d named twice" % pid)
                procs[pid] = v
            elif e["name"] == "thread_name":
                t = (pid, e["tid"])
                if t in threads:
                    err(i, "thread %r named twice" % (t,))
                threads[t] = v
            continue
        if not number(e.get("ts")):
            err(i, "ts is not a number")
            continue
        used_pids.add(pid)
        if ph == "X":
            if not number(e.get("dur")) or e["dur"] < 0:
                err(i, "dur is not a number >= 0")
                continue
            used_threads.add((pid, e["tid"]))
            slices.setdefault((pid, e["tid"]), []).append((e["ts"], e["ts"] + e["dur"], i))
        elif ph in ("i", "I"):
            if e.get("s", "t") not in ("g", "p", "t"):
                err(i, "instant scope %r" % e.get("s"))
            used_threads.add((pid, e["tid"]))
        elif ph == "C":
            args = e.get("args")
            if not isinstance(args, dict) or not args or \
                    not all(number(v) for v in args.values()):
                err(i, "a counter without numeric args")
        else:
            err(i, "phase %r, which gpux does not write" % ph)
    for pid in sorted(used_pids - set(procs)):
        errors.append("pid %d has no process_name" % pid)
    for t in sorted(used_threads - set(threads)):
        errors.append("thread %r has no thread_name" % (t,))
    for t, s in slices.items():
        s.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for b, end, i in s:
            while stack and stack[-1] <= b:
                stack.pop()
            if stack and end > stack[-1]:
                err(i, "overlaps the slice before it on thread %r without nesting" % (t,))
            stack.append(end)
    return evs, procs, threads


def summary(evs, procs, threads):
    cats, kernels, printfs, counters = {}, set(), [], {}
    nx = 0
    for e in evs:
        if e.get("ph") == "M":
            continue
        cat = e.get("cat", "")
        cats[cat] = cats.get(cat, 0) + 1
        if e["ph"] == "X":
            nx += 1
            kernels.add(e["name"])
        if cat == "printf":
            printfs.append(e.get("args", {}).get("text", e["name"]))
        if e["ph"] == "C":
            for k, v in e["args"].items():
                counters[(e["name"], k)] = v
    out = ["events %d" % len(evs), "kernels %d" % nx]
    out += ["cat %s %d" % (c, n) for c, n in sorted(cats.items())]
    out += ["kernel %s" % k for k in sorted(kernels)]
    out += ["process %s" % n for n in sorted(procs.values())]
    out += ["thread %s" % n for n in sorted(threads.values())]
    out += ["printf %s" % t for t in printfs]
    out += ["counter %s %s %s" % (n, k, v) for (n, k), v in sorted(counters.items())]
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1], "rb") as f:
            doc = json.loads(f.read().decode("utf-8"), parse_constant=no_constants)
    except (ValueError, UnicodeDecodeError) as e:
        print("validate_trace: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        return 1
    errors = []
    got = check(doc, errors)
    if errors:
        for e in errors[:20]:
            print("validate_trace: " + e, file=sys.stderr)
        return 1
    print("\n".join(summary(*got)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
