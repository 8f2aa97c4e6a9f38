#!/usr/bin/env python3
"""Helpers of export_test.sh, standard library only.

    export_util.py otlp DIR          the last body otlp_receiver.py
                                     recorded, one line per data point
    export_util.py bodies DIR        every recorded post, checked: path,
                                     content type, resource, times
    export_util.py query URL EXPR    a Prometheus instant query, one line
                                     per series: {labels} value (job and
                                     instance left out), sorted
    export_util.py get URL           GET: the status line, then the body
    export_util.py port              a free TCP port of 127.0.0.1
"""
import json
import os
import socket
import sys
import urllib.error
import urllib.parse
import urllib.request


def attrs(point, drop=()):
    kv = ["%s=%s" % (a["key"], json.dumps(a["value"]["stringValue"]))
          for a in point.get("attributes", []) if a["key"] not in drop]
    return "{" + ",".join(kv) + "}"


def point_line(name, kind, label, p):
    head = "%s %s %s" % (name, label, attrs(p))
    if kind in ("sum", "gauge"):
        return "%s %s" % (head, p["asInt"])
    if kind == "summary":
        return "%s count=%s sum=%s" % (head, p["count"], p["sum"])
    counts = [int(c) for c in p["bucketCounts"]]
    while counts and counts[-1] == 0:
        counts.pop()
    bounds = p["explicitBounds"]
    assert len(p["bucketCounts"]) == len(bounds) + 1, "buckets and bounds disagree"
    assert sum(int(c) for c in p["bucketCounts"]) == int(p["count"]), "count is not the total"
    return "%s count=%s counts=%s nbounds=%d bounds=%s" % (
        head, p["count"], ",".join(map(str, counts)), len(bounds),
        ",".join(str(b) for b in bounds[:5]))


def records(d):
    names = sorted(n for n in os.listdir(d) if n.endswith(".json") and n[0] != ".")
    return [json.load(open(os.path.join(d, n))) for n in names]


def check_body(rec):
    assert rec["path"] == "/v1/metrics", rec["path"]
    assert rec["content_type"] == "application/json", rec["content_type"]
    rm = rec["body"]["resourceMetrics"]
    assert len(rm) == 1
    res = {a["key"]: a["value"]["stringValue"] for a in rm[0]["resource"]["attributes"]}
    assert res["service.name"] == "gpux", res
    sm = rm[0]["scopeMetrics"]
    assert len(sm) == 1 and sm[0]["scope"]["name"] == "gpux"
    for m in sm[0]["metrics"]:
        kind = [k for k in ("sum", "gauge", "histogram", "summary") if k in m]
        assert len(kind) == 1, m
        for p in m[kind[0]]["dataPoints"]:
            assert int(p["startTimeUnixNano"]) <= int(p["timeUnixNano"]), p
    return sm[0]["metrics"]


def otlp(d):
    recs = records(d)
    if not recs:
        sys.exit("no OTLP post recorded")
    for m in check_body(recs[-1]):
        kind = [k for k in ("sum", "gauge", "histogram", "summary") if k in m][0]
        data = m[kind]
        label = kind
        if kind == "sum":
            label = "sum(monotonic=%s,temporality=%s)" % (
                str(data["isMonotonic"]).lower(), data["aggregationTemporality"])
        elif kind == "histogram":
            label = "histogram(temporality=%s)" % data["aggregationTemporality"]
        for p in data["dataPoints"]:
            print(point_line(m["name"], kind, label, p))


def bodies(d):
    recs = records(d)
    for r in recs:
        check_body(r)
    print(len(recs))


def query(url, expr):
    q = urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen("%s/api/v1/query?%s" % (url, q), timeout=10) as r:
        res = json.load(r)
    assert res["status"] == "success", res
    lines = []
    for s in res["data"]["result"]:
        labels = {k: v for k, v in s["metric"].items() if k not in ("job", "instance")}
        kv = ",".join("%s=%s" % (k, json.dumps(labels[k])) for k in sorted(labels))
        lines.append("{%s} %s" % (kv, s["value"][1]))
    print("\n".join(sorted(lines)))


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            print(r.status, r.headers.get("Content-Type"))
            sys.stdout.write(r.read().decode())
    except urllib.error.HTTPError as e:
        print(e.code, e.headers.get("Content-Type"))
        sys.stdout.write(e.read().decode())


def port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])
    s.close()


cmd = sys.argv[1]
if cmd == "otlp":
    otlp(sys.argv[2])
elif cmd == "bodies":
    bodies(sys.argv[2])
elif cmd == "query":
    query(sys.argv[2], sys.argv[3])
elif cmd == "get":
    get(sys.argv[2])
elif cmd == "port":
    port()
else:
    sys.exit("unknown command " + cmd)
