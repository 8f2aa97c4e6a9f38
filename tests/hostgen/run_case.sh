#!/usr/bin/env bash
# run_case.sh HOSTGEN CASE.gpx: compare against CASE.expect or CASE.err.
set -u
bin=$1
# run beside the case so diagnostics name it as the .err files do
cd "$(dirname "$2")" || exit 1
case=$(basename "$2")
base=${case%.gpx}
# tracepoint layouts come from tracefs; mount it when the system has not.
if [ ! -d /sys/kernel/tracing/events ] && [ ! -d /sys/kernel/debug/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		echo "note: tracefs not mounted and mount failed" >&2
fi
if [ -f "$base.err" ]; then
	out=$("$bin" "$case" 2>&1)
	diff -u "$base.err" <(printf '%s\n' "$out") || exit 1
	exit 0
fi
args=()
grep -q '^load ok' "$base.expect" && args+=(--load)
out=$("$bin" "${args[@]}" "$case")
rc=$?
[ $rc -eq 77 ] && exit 77
diff -u "$base.expect" <(printf '%s\n' "$out") || exit 1
exit $rc
