#!/bin/bash
# Run one REPL case: pipe NAME.in into `gpux --repl` (stdin is not a
# terminal, so plain lines and no prompt) and compare stdout with NAME.out
# and stderr with NAME.err byte for byte; a missing expected file means
# the stream must be empty. The exit status must be 0.
#   run_case.sh GPUX CASE.in
set -u
if [ $# -ne 2 ]; then
	echo "usage: $0 GPUX CASE.in" >&2
	exit 2
fi
gpux=$1
case_file=$2
dir=$(dirname "$case_file")
name=$(basename "$case_file" .in)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A HOME of its own: plain mode must not touch the history file.
HOME=$tmp "$gpux" --repl <"$case_file" >"$tmp/out" 2>"$tmp/err"
rc=$?

status=0
if [ "$rc" -ne 0 ]; then
	echo "$name: exit status $rc, expected 0"
	status=1
fi
for stream in out err; do
	want="$dir/$name.$stream"
	[ -f "$want" ] || want=/dev/null
	if ! diff -u --label "$name.$stream (expected)" \
		--label "$name (actual std$stream)" "$want" "$tmp/$stream"; then
		echo "$name: std$stream differs"
		status=1
	fi
done
if [ -e "$tmp/.gpux_history" ]; then
	echo "$name: plain mode wrote a history file"
	status=1
fi
exit $status
