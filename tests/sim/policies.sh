#!/bin/sh
# tests/sim/policies.sh BUILD_DIR: every driver policy of stdlib/policies
# (the files with gpu_mem: or gpu_sched: probes) in the simulator, on a
# generated workload and on a recorded trace (traces/small.trace), in
# text and in JSON. For each run: exit 0, nothing on stderr, the default
# row and the policy's row; in JSON, every row moved at least its faults
# to the GPU (htod_bytes >= faults x 4096), the policy's row ran hooks
# and made no kfunc errors; and a property of the policy against the
# default (or another policy) on its generated workload (the cases
# below). Prints PASS/FAIL per check and exits 1 on any FAIL.
set -u
build=${1:?usage: policies.sh BUILD_DIR}
gpux=$build/cli/gpux
here=$(cd "$(dirname "$0")" && pwd)
pol=$here/../../stdlib/policies
trace="trace:$here/traces/small.trace,gpu=12m"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1${2:+: $2}"; fails=$((fails + 1)); }

# FILE|ARGS|WORKLOAD|PROPERTY; $H and $L in ARGS are the high and low
# priority pids: 1 and 2 in the generators (seq and hotcold run pid 1
# alone), 101 and 202 in the trace.
# shellcheck disable=SC2016 # $H and $L: placeholders, replaced below
cases='eviction_fifo.gpx||hotcold|differs
eviction_fifo_chance.gpx|:$H:0:$L:0:0|hotcold|like_eviction_fifo
eviction_fifo_chance.gpx|:$H:3:$L:0:1|hotcold|fewer_faults
eviction_mru.gpx||seq|fewer_faults
eviction_lfu.gpx||hotcold|fewer_faults
eviction_pid_quota.gpx|:$H:80:$L:20:0|hotcold|differs
eviction_pid_quota.gpx|:$H:0:$L:0:0|hotcold|same
eviction_freq_pid_decay.gpx|:$H:1:$L:10:5|hotcold|same
eviction_freq_pid_decay.gpx|:$L:1:$H:10:5|hotcold|differs
prefetch_always_max.gpx||seq|fewer_faults
prefetch_none.gpx||hotcold|no_prefetch
prefetch_adaptive_tree_iter.gpx|:51|hotcold|same
prefetch_adaptive_tree_iter.gpx|:30|hotcold|more_prefetch
prefetch_adaptive_sequential.gpx|:0:forward:0|hotcold|no_prefetch
prefetch_adaptive_sequential.gpx|:100:forward_start:0|seq|fewer_faults
prefetch_pid_tree.gpx|:$H:51:$L:51:51|hotcold|same
prefetch_pid_tree.gpx|:$H:30:$L:51:51|hotcold|more_prefetch
prefetch_pid_tree.gpx|:$L:30:3:30:51|hotcold|same
prefetch_eviction_pid.gpx|:$H:10:$L:80:50|mix|fewer_faults
prefetch_stride_fault.gpx|:2:2:128|stride|less_htod
sched_timeslices.gpx|:tenant1:4000:3|mix|tenant1_sooner'

workload() {
	case $1 in
	seq) echo seq:size=32m,gpu=24m,passes=2 ;;
	hotcold) echo hotcold:size=64m,gpu=32m,passes=3 ;;
	mix) echo mix:size=32m,gpu=24m,work=50 ;;
	stride) echo stride:size=32m,gpu=24m,passes=2 ;;
	esac
}

# field NAME LINE: a number of one JSON row
field() { echo "$2" | sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p"; }

# run NAME WORKLOAD ROW [-f json]: gpux's exit, stderr, both rows
run() {
	name=$1 rw=$2 row=$3
	shift 3
	"$gpux" "$@" --sim "$rw" "$row" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" != 0 ]; then
		fail "$name: exit 0" "exit $rc: $(head -c 300 "$tmp/err")"
		return 1
	fi
	pass "$name: exit 0"
	if [ -s "$tmp/err" ]; then fail "$name: no stderr" "$(head -c 300 "$tmp/err")"; else pass "$name: no stderr"; fi
	if [ "${1:-}" = -f ]; then
		d=$(grep -F '"policy": "default"' "$tmp/out")
		p=$(grep -F "\"policy\": \"$row\"" "$tmp/out")
	else
		d=$(grep '^default ' "$tmp/out" | head -n 1)
		p=$(grep -F "$row " "$tmp/out" | grep -v '^default ' | head -n 1)
	fi
	if [ -n "$d" ] && [ -n "$p" ]; then pass "$name: default and policy rows"
	else fail "$name: default and policy rows" "$(head -c 300 "$tmp/out")"; return 1; fi
}

# json_checks NAME: the rows of the last JSON run ($d, $p)
json_checks() {
	ok=1
	for l in "$d" "$p"; do
		jh=$(field htod_bytes "$l") jf=$(field faults "$l")
		[ "$jh" -ge $((jf * 4096)) ] || ok=0
	done
	if [ $ok = 1 ]; then pass "$1: htod_bytes >= faults x 4096"; else fail "$1: htod_bytes >= faults x 4096"; fi
	if [ "$(field policy_errors "$p")" = 0 ]; then pass "$1: no policy errors"
	else fail "$1: no policy errors" "policy_errors $(field policy_errors "$p")"; fi
	if grep -q 'gpu_mem:' "$2"; then
		if [ "$(field hook_calls "$p")" -gt 0 ]; then pass "$1: hooks ran"; else fail "$1: hooks ran" "hook_calls 0"; fi
	fi
}

# holds PROPERTY: of the policy's row ($p) against the default's ($d)
holds() {
	df=$(field faults "$d") pf=$(field faults "$p")
	de=$(field evictions "$d") pe=$(field evictions "$p")
	dp=$(field prefetched_pages "$d") pp=$(field prefetched_pages "$p")
	dh=$(field htod_bytes "$d") ph=$(field htod_bytes "$p")
	case $1 in
	differs) [ "$pf/$pe/$ph" != "$df/$de/$dh" ] ;;
	same) [ "$pf/$pe/$pp/$ph" = "$df/$de/$dp/$dh" ] ;;
	fewer_faults) [ "$pf" -lt "$df" ] ;;
	no_prefetch) [ "$pp" = 0 ] && [ "$dp" -gt 0 ] ;;
	more_prefetch) [ "$pp" -gt "$dp" ] ;;
	less_htod) [ "$ph" -lt "$dh" ] ;;
	like_*) # the same counts as another policy of stdlib/policies
		o=$("$gpux" -f json --sim "$w" "$pol/${1#like_}.gpx" | grep -F "/${1#like_}.gpx\"")
		[ "$(field faults "$o")/$(field evictions "$o")/$(field htod_bytes "$o")" = "$pf/$pe/$ph" ] ;;
	tenant1_sooner)
		t=$(echo "$p" | sed 's/.*"tenants": \[//' | tr '}' '\n')
		t1=$(echo "$t" | grep '"pid": 1,') t2=$(echo "$t" | grep '"pid": 2,')
		[ "$(field timeslice_us "$t1")" = 4000 ] && [ "$(field timeslice_us "$t2")" = 1024 ] &&
			[ "$(field finish_us "$t1")" -lt "$(field finish_us "$t2")" ] ;;
	*) false ;;
	esac
}

# property NAME PROPERTY
property() {
	if holds "$2"; then pass "$1: $2"
	else fail "$1: $2" "default: faults $df evictions $de prefetched $dp; policy: $pf $pe $pp"; fi
}

[ -x "$gpux" ] || { echo "FAIL: no gpux at $gpux"; exit 1; }

# every driver policy has a case
for f in "$pol"/*.gpx; do
	grep -Eq '^[[:space:]]*gpu_(mem|sched):' "$f" || continue
	b=$(basename "$f")
	if echo "$cases" | grep -q "^$b|"; then pass "$b: has a case"; else fail "$b: has a case" "add one to $0"; fi
done

# shellcheck disable=SC2016 # sed's $H and $L
echo "$cases" | while IFS='|' read -r f a w prop; do
	[ -n "$f" ] || continue
	echo "$f|$(echo "$a" | sed 's/\$H/1/g; s/\$L/2/g')|$(workload "$w")|$prop|$(echo "$a" | sed 's/\$H/101/g; s/\$L/202/g')"
done >"$tmp/cases"

while IFS='|' read -r f ga w prop ta; do
	row="$pol/$f$ga"
	n="$f$ga on $w"
	run "$n" "$w" "$row" && :
	if run "$n (json)" "$w" "$row" -f json; then
		json_checks "$n (json)" "$pol/$f"
		property "$n (json)" "$prop"
	fi
	row="$pol/$f$ta"
	n="$f$ta on the trace"
	run "$n" "$trace" "$row" && :
	if run "$n (json)" "$trace" "$row" -f json; then
		json_checks "$n (json)" "$pol/$f"
	fi
done <"$tmp/cases"

echo "$fails failed"
[ "$fails" = 0 ]
