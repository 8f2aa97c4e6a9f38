#!/usr/bin/env bash
# ns per cuda: event in the userspace BPF VM (handler_bench) for a few
# cuda:launch programs: what a traced process pays per launch on top of
# the hook itself. Prints a markdown table. A benchmark, not a test.
#   bench/host/handler.sh     env: GPUX (default build/cli/gpux),
#                             HANDLER_BENCH (default build/bench/handler_bench)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
gpux=${GPUX:-$root/build/cli/gpux}
hb=${HANDLER_BENCH:-$root/build/bench/handler_bench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
progs=(
	'cuda:launch { @ = count(); }'
	'cuda:launch { @[kernel] = count(); }'
	'cuda:launch { @[grid.x, block.x] = count(); }'
	'cuda:launch { @t[kernel] = nsecs; } gdev:kernel_entry { @lat[kernel] = hist(nsecs - @t[kernel]); }'
	'cuda:launch /grid.x > 1000/ { @big = count(); }'
)
echo "| cuda:launch program | insns/run | median ns/event | min | max |"
echo "|---|---|---|---|---|"
for i in "${!progs[@]}"; do
	"$gpux" --emit "$tmp/$i" -e "${progs[$i]}" >/dev/null
	line=$("$hb" "$tmp/$i/host.bpf.o" gpux/cuda/launch 1000000)
	ins=$(sed -n 's/.*insns\/run=\([0-9]*\).*/\1/p' <<<"$line")
	med=$(sed -n 's/.*median_ns=\([0-9.]*\).*/\1/p' <<<"$line")
	lo=$(sed -n 's/.*min_ns=\([0-9.]*\).*/\1/p' <<<"$line")
	hi=$(sed -n 's/.*max_ns=\([0-9.]*\).*/\1/p' <<<"$line")
	echo "| \`${progs[$i]}\` | $ins | $med | $lo | $hi |"
done
