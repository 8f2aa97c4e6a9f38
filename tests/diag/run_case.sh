#!/bin/bash
# Run one diagnostic case and compare its stderr byte for byte.
#   run_case.sh GPUX CASEFILE
# CASEFILE is NAME.gpx (run as `gpux --dry-run NAME.gpx`) or NAME.e (the
# program text, run as `gpux --dry-run -e "$(cat NAME.e)"` so the file name
# is stdin). The expected stderr is NAME.err; the exit status must be 1, or
# 0 for warning-only cases named warn_*.
set -u
if [ $# -ne 2 ]; then
	echo "usage: $0 GPUX CASEFILE" >&2
	exit 2
fi
gpux=$1
case_file=$2
dir=$(dirname "$case_file")
base=$(basename "$case_file")
name=${base%.*}
expected="$dir/$name.err"
if [ ! -f "$expected" ]; then
	echo "missing expected output $expected" >&2
	exit 2
fi
want_rc=1
case "$name" in warn_*) want_rc=0 ;; esac

actual=$(mktemp)
trap 'rm -f "$actual"' EXIT
cd "$dir" || exit 2
case "$base" in
*.gpx) "$gpux" --dry-run "$base" >/dev/null 2>"$actual" ;;
*.e) "$gpux" --dry-run -e "$(cat "$base")" >/dev/null 2>"$actual" ;;
*)
	echo "unknown case file type: $base" >&2
	exit 2
	;;
esac
rc=$?

status=0
if [ "$rc" -ne "$want_rc" ]; then
	echo "$name: exit status $rc, expected $want_rc"
	status=1
fi
if ! diff -u --label "$name.err (expected)" --label "$name (actual stderr)" \
	"$name.err" "$actual"; then
	echo "$name: stderr differs from $name.err"
	status=1
fi
exit $status
