#!/bin/bash
# One hand-written case: run_case.sh REWRITE_PTX CASE.ptx STUB PTXAS
# The rewritten module must equal CASE.out and the site counts and
# warnings CASE.sites; an err_* case must fail with exactly CASE.err.
# Every rewritten module must pass ptxas for sm_80 and sm_90.
# UPDATE=1 rewrites the goldens.
set -u
rw=$1 case_file=$2 stub=$3 ptxas=$4
dir=$(dirname "$case_file") name=$(basename "$case_file" .ptx)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=()
for p in $(sed -n 's,^// probes: ,,p' "$case_file"); do
	args+=(-P "$p")
done
# "// live: 1": remapped as a live session's copy (-V)
grep -q '^// live: 1' "$case_file" && args+=(-V)
for r in $(sed -n 's,^// maxregs: ,,p' "$case_file"); do
	args+=(-R "$r")
done
if [[ $name == err_* ]]; then
	if "$rw" -p "$stub" "${args[@]}" "$case_file" >"$tmp/out" 2>"$tmp/err"; then
		echo "FAIL: $name was accepted"
		exit 1
	fi
	[ "${UPDATE:-}" = 1 ] && cp "$tmp/err" "$dir/$name.err"
	diff -u "$dir/$name.err" "$tmp/err" || exit 1
	exit 0
fi
"$rw" -p "$stub" "${args[@]}" -s "$tmp/sites" "$case_file" >"$tmp/out" || exit 1
if [ "${UPDATE:-}" = 1 ]; then
	cp "$tmp/out" "$dir/$name.out"
	cp "$tmp/sites" "$dir/$name.sites"
fi
fail=0
diff -u "$dir/$name.out" "$tmp/out" || fail=1
diff -u "$dir/$name.sites" "$tmp/sites" || fail=1
if [ -z "$ptxas" ]; then
	echo "SKIP: no ptxas; $name was not assembled"
	[ $fail = 0 ] && exit 77
	exit 1
fi
for arch in sm_80 sm_90; do
	"$ptxas" -arch=$arch "$tmp/out" -o "$tmp/$arch.cubin" ||
		{ echo "FAIL: ptxas -arch=$arch rejected $name"; fail=1; }
done
exit $fail
