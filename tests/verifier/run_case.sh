#!/bin/bash
# Run one SIMT verifier case and compare its stderr byte for byte.
#   run_case.sh VERIFY_BPF CASEFILE
# ok_NAME.bpf must exit 0 with empty stderr; bad_NAME.bpf must exit 1
# with stderr equal to bad_NAME.err. The file is passed by its base name
# (run from its folder), so messages read "bad_NAME.bpf:L:C1-C2: ...".
set -u
if [ $# -ne 2 ]; then
	echo "usage: $0 VERIFY_BPF CASEFILE" >&2
	exit 2
fi
verify=$1
case_file=$2
dir=$(dirname "$case_file")
base=$(basename "$case_file")
name=${base%.*}
cd "$dir" || exit 2

actual=$(mktemp)
trap 'rm -f "$actual"' EXIT
"$verify" "$base" >/dev/null 2>"$actual"
rc=$?

status=0
case "$name" in
ok_*)
	if [ "$rc" -ne 0 ] || [ -s "$actual" ]; then
		echo "$name: expected acceptance, got exit status $rc:"
		cat "$actual"
		status=1
	fi
	;;
bad_*)
	if [ ! -f "$name.err" ]; then
		echo "missing expected output $name.err" >&2
		exit 2
	fi
	if [ "$rc" -ne 1 ]; then
		echo "$name: exit status $rc, expected 1"
		status=1
	fi
	if ! diff -u --label "$name.err (expected)" \
		--label "$name (actual stderr)" "$name.err" "$actual"; then
		echo "$name: stderr differs from $name.err"
		status=1
	fi
	;;
*)
	echo "case names start with ok_ or bad_: $base" >&2
	exit 2
	;;
esac
exit $status
