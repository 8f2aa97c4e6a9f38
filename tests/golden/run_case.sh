#!/bin/bash
# A valid program must check cleanly.
#   run_case.sh GPUX NAME.gpx
# `gpux --dry-run NAME.gpx` must exit 0 with empty stderr. Programs named
# tolerant_* may print WARNING diagnostics (e.g. tracepoints on a machine
# without tracefs): their stderr may hold only WARNING messages with their
# excerpt and HINT lines, never an ERROR.
set -u
if [ $# -ne 2 ]; then
	echo "usage: $0 GPUX NAME.gpx" >&2
	exit 2
fi
gpux=$1
dir=$(dirname "$2")
base=$(basename "$2")
name=${base%.gpx}
cd "$dir" || exit 2

err=$(mktemp)
trap 'rm -f "$err"' EXIT
"$gpux" --dry-run "$base" >/dev/null 2>"$err"
rc=$?
status=0
if [ "$rc" -ne 0 ]; then
	echo "$name: gpux --dry-run exited $rc, expected 0"
	status=1
fi
case "$name" in
tolerant_*)
	# Each message starts with "FILE:...: LEVEL:"; every one must be a
	# WARNING. Excerpt, underline and HINT lines follow a message.
	if grep -q -E "^$base:[0-9:-]*: ERROR: |^[^ :]*: ERROR: " "$err" ||
		{ [ -s "$err" ] && ! grep -q -E "^$base:[0-9:-]*: WARNING: " "$err"; }; then
		echo "$name: stderr holds more than warnings:"
		status=1
	fi
	;;
*)
	if [ -s "$err" ]; then
		echo "$name: stderr is not empty:"
		status=1
	fi
	;;
esac
[ "$status" -eq 0 ] || cat "$err"
exit $status
