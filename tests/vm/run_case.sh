#!/usr/bin/env bash
# run_case.sh VM_RUN_GPX CASE.gpx: the VM's output against CASE.expect.
# GPUX_UPDATE=1 rewrites the expectation instead.
set -u
bin=$1
cd "$(dirname "$2")" || exit 1
case=$(basename "$2")
base=${case%.gpx}
out=$("$bin" "$case" 2>&1)
rc=$?
if [ "${GPUX_UPDATE:-0}" = 1 ]; then
	printf '%s\n' "$out" >"$base.expect"
	exit 0
fi
diff -u "$base.expect" <(printf '%s\n' "$out") || exit 1
exit $rc
