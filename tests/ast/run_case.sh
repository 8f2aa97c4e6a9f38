#!/bin/bash
# Compare the AST dumps of one program with their golden files.
#   run_case.sh GPUX NAME.gpx
# NAME.ast holds the stdout of `gpux -d ast NAME.gpx`, NAME.types (optional)
# that of `gpux -d types NAME.gpx`. Both must exit 0 with empty stderr,
# unless NAME.STAGE.err holds the expected stderr (warnings) byte for byte.
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

out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
status=0
checked=0
for stage in ast types; do
	[ -f "$name.$stage" ] || continue
	checked=$((checked + 1))
	"$gpux" -d "$stage" "$base" >"$out" 2>"$err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "$name: gpux -d $stage exited $rc"
		status=1
	fi
	if [ -f "$name.$stage.err" ]; then
		if ! diff -u --label "$name.$stage.err (expected)" \
			--label "$name -d $stage (actual stderr)" \
			"$name.$stage.err" "$err"; then
			echo "$name: -d $stage stderr differs from $name.$stage.err"
			status=1
		fi
	elif [ -s "$err" ]; then
		echo "$name: gpux -d $stage wrote to stderr:"
		cat "$err"
		status=1
	fi
	if ! diff -u --label "$name.$stage (expected)" \
		--label "$name -d $stage (actual)" "$name.$stage" "$out"; then
		echo "$name: -d $stage output differs from $name.$stage"
		status=1
	fi
done
if [ "$checked" -eq 0 ]; then
	echo "$name: no $name.ast or $name.types to compare with"
	exit 2
fi
exit $status
