#!/usr/bin/env bash
# One conformance case: a bpftrace program run by gpux and by bpftrace
# 0.17 against probe_tgt (tests/live/probe_tgt.c).
#   run_case.sh GPUX PROBE_TGT CASE_FILE
#
# A case file (cases/NAME.case) is bash, sourced with $TGT set to the
# path of a private copy of probe_tgt ($TMPDIR/tmp.*/probe_tgt). It sets:
#   PROG      the program (both tools get `-e "$PROG"`)
#   ARGS      array: the rest of the command line, e.g. (-c "$TGT 5")
#   RC        expected exit status of both tools (default 0)
#   GPUX_RC   gpux's, where it differs on purpose (README: gpux exits
#             with the traced command's status, bpftrace with 0)
#   NORM      normalisations applied to both outputs before every
#             comparison (names below; default none)
#   CMP_NORM  further normalisations for gpux-vs-bpftrace only
#   MODE      exact (default): stdout equals expected() byte for byte;
#             regex: as many lines, line i matches ^expected-line-i$
#   XFAIL     1: gpux is known to differ from bpftrace here (the case
#             says how); the case passes while gpux differs and fails
#             once gpux conforms (XPASS: drop the mark)
#   expected  a function printing the expected stdout (what bpftrace
#             prints: bpftrace is checked against it as well)
#
# Normalisations (the only ways outputs are altered before comparing):
#   sort_ties   in each run of map lines "@...: N", order lines of equal
#               N by text. bpftrace sorts map entries by value only;
#               ties come in kernel hash order, which changes from run
#               to run (random hash seed per map).
#   drop_cmd    drop probe_tgt's own line "sum N": the child writes it
#               to the same stdout, so where it lands among printf
#               lines printed as events arrive is a race.
#   hist_total  replace each histogram's bucket lines by one line
#               "total N" (the count of values); for time values
#               (nsecs deltas) whose buckets vary from run to run.
#   digits      replace each run of digits by "N" (values that vary).
#   addrs       replace each user-space address of 12 hex digits (0x or
#               not) by "ADDR": where ASLR puts the program and its
#               libraries changes from run to run, and a stack printed
#               after the process is gone shows bare addresses.
#   main_off    replace the offset in a frame "main+N" by "main+OFF":
#               where in main a call sits moves whenever probe_tgt's
#               main changes.
# stdout only is compared; stderr differs (bpftrace warns about
# RLIMIT_MEMLOCK, error texts are not compared) and is shown on failure.
# Skips (77) without root, bpftrace or tracefs.
set -u
GPUX=$1
TGT=$2
CASE=$3
BPFTRACE=${BPFTRACE:-bpftrace}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ "$(id -u)" = 0 ] || { echo "SKIP: not root"; exit 77; }
command -v "$BPFTRACE" >/dev/null || { echo "SKIP: no bpftrace"; exit 77; }
if [ ! -d /sys/kernel/tracing/events ] && [ ! -d /sys/kernel/debug/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		{ echo "SKIP: tracefs not mounted and mount failed"; exit 77; }
fi

# A private copy of probe_tgt: uprobes attach to the file, so probe_tgt
# runs elsewhere on the system (other test runs) do not fire them.
cp "$TGT" "$tmp/probe_tgt" || exit 1
TGT=$tmp/probe_tgt

# need_usdt: a case on probe_tgt's USDT probes calls it first; it skips
# where probe_tgt was built without sys/sdt.h (no .note.stapsdt then)
need_usdt() {
	grep -q stapsdt "$TGT" || { echo "SKIP: probe_tgt has no USDT probes (no sys/sdt.h)"; exit 77; }
}

# need_watchpoint: a watchpoint case calls it first; it skips where the
# kernel sets no hardware breakpoints (some VMs)
need_watchpoint() {
	"$TGT" wpcheck || { echo "SKIP: no hardware watchpoints here"; exit 77; }
}

# need_btf: a case on the kernel's types calls it first; it skips where
# the kernel has no BTF (bpftrace reads the same file)
need_btf() {
	[ -r /sys/kernel/btf/vmlinux ] || { echo "SKIP: the kernel has no BTF"; exit 77; }
}

PROG= ARGS=() RC=0 GPUX_RC= NORM= CMP_NORM= MODE=exact XFAIL=0
# shellcheck source=/dev/null
. "$CASE"

sort_ties() {
	awk '
	function flush(   i, j, t) {
		# insertion sort by (value, text): runs are short
		for (i = 2; i <= n; i++) for (j = i; j > 1 &&
		    (v[j-1] > v[j] || (v[j-1] == v[j] && l[j-1] > l[j])); j--) {
			t = v[j]; v[j] = v[j-1]; v[j-1] = t
			t = l[j]; l[j] = l[j-1]; l[j-1] = t
		}
		for (i = 1; i <= n; i++) print l[i]
		n = 0
	}
	/^@.*: -?[0-9]+$/ { n++; l[n] = $0; v[n] = $NF + 0; next }
	{ flush(); print }
	END { flush() }'
}
drop_cmd() { grep -v '^sum [0-9]*$'; }
hist_total() {
	awk '
	/^\[.*\|$/ { s = $0; sub(/ *\|.*$/, "", s); k = split(s, f, " ");
		total += f[k]; inh = 1; next }
	inh { print "total " total; total = 0; inh = 0 }
	{ print }
	END { if (inh) print "total " total }'
}
digits() { sed -E 's/[0-9]+/N/g'; }
addrs() { sed -E 's/(0x)?[0-9a-f]{12}\b/ADDR/g'; }
main_off() { sed -E 's/\bmain\+[0-9]+/main+OFF/g'; }
normalise() { # normalise NAMES... < in > out
	local f cmd=cat
	for f in "$@"; do cmd="$cmd | $f"; done
	eval "$cmd"
}

# tool NAME BIN: run one tool, stdout normalised into $tmp/NAME
tool() {
	timeout 60 "$2" -e "$PROG" "${ARGS[@]}" >"$tmp/$1.raw" 2>"$tmp/$1.err" </dev/null
	echo $? >"$tmp/$1.rc"
	# shellcheck disable=SC2086
	normalise $NORM <"$tmp/$1.raw" >"$tmp/$1"
	# shellcheck disable=SC2086
	normalise $CMP_NORM <"$tmp/$1" >"$tmp/$1.cmp"
}
# check NAME: stdout and status of tool NAME against the case
check() {
	local rc want=$RC
	[ "$1" = gpux ] && [ -n "$GPUX_RC" ] && want=$GPUX_RC
	rc=$(cat "$tmp/$1.rc")
	[ "$rc" = "$want" ] || { echo "$1 exited $rc, expected $want"; return 1; }
	if [ "$MODE" = regex ]; then
		awk -v want="$tmp/want" '
		{ if ((getline re < want) <= 0) { print "extra line " NR ": " $0; bad = 1; exit }
		  if ($0 !~ ("^" re "$")) { print "line " NR ": " $0 "\n  does not match: " re; bad = 1 } }
		END { if (!bad && (getline re < want) > 0) { print "missing line: " re; bad = 1 }
		      exit bad }' "$tmp/$1" || { echo "$1 stdout does not match"; return 1; }
	else
		diff -u "$tmp/want" "$tmp/$1" || { echo "$1 stdout differs from expected"; return 1; }
	fi
}

expected >"$tmp/want"
tool gpux "$GPUX"
tool bpftrace "$BPFTRACE"

show() { echo "--- $1 stdout"; cat "$tmp/$1.raw"; echo "--- $1 stderr"; cat "$tmp/$1.err"; }
# the expectation must hold for bpftrace itself
check bpftrace || { show bpftrace; echo "FAIL: bpftrace does not give the expected output"; exit 1; }

ok=1
check gpux || ok=0
if ! diff -u "$tmp/bpftrace.cmp" "$tmp/gpux.cmp"; then
	echo "gpux stdout differs from bpftrace's (above: - bpftrace, + gpux)"; ok=0
elif [ -z "$GPUX_RC" ] && [ "$(cat "$tmp/gpux.rc")" != "$(cat "$tmp/bpftrace.rc")" ]; then
	echo "exit status: gpux $(cat "$tmp/gpux.rc"), bpftrace $(cat "$tmp/bpftrace.rc")"; ok=0
fi
if [ "$XFAIL" = 1 ]; then
	[ $ok = 1 ] && { echo "XPASS: gpux now conforms; remove XFAIL from $CASE"; exit 1; }
	show gpux; echo "XFAIL: known difference (see $CASE)"; exit 0
fi
[ $ok = 1 ] || { show gpux; echo "FAIL"; exit 1; }
echo "PASS (same as bpftrace)"
