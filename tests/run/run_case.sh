#!/usr/bin/env bash
# run_case.sh GPUX CASE.gpx: gpux runs CASE.gpx; its stdout must equal
# CASE.out byte for byte. The .out files are bpftrace 0.17's output for
# the same file (as root: bpftrace CASE.gpx > CASE.out; for json_*.gpx,
# bpftrace -f json CASE.gpx > CASE.out), never edited, so bpftrace is not
# needed here. Cases named json_* run with -f json.
set -u
bin=$1
cd "$(dirname "$2")" || exit 1
base=$(basename "$2" .gpx)
fmt=()
[[ $base == json_* ]] && fmt=(-f json)
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
timeout 10 "$bin" "${fmt[@]}" "$base.gpx" >"$out"
rc=$?
cmp -s "$base.out" "$out" || { diff -u "$base.out" "$out"; exit 1; }
exit $rc
