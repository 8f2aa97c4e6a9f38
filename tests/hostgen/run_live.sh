#!/usr/bin/env bash
# run_live.sh HOSTGEN CASE.gpx: load, attach, and check the count.
set -u
if [ ! -d /sys/kernel/tracing/events ] && [ ! -d /sys/kernel/debug/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		echo "note: tracefs not mounted and mount failed" >&2
fi
out=$("$1" --run "$2")
rc=$?
printf '%s\n' "$out"
[ $rc -eq 77 ] && exit 77
grep -q '^run ok' <<<"$out" || exit 1
exit $rc
