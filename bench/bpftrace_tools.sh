#!/usr/bin/env bash
# Published bpftrace scripts under gpux: each .bt tool that Debian's
# bpftrace package ships (/usr/sbin/*.bt) is compiled by `bpftrace -d`
# (parse, semantic checks, codegen; nothing attached) and by
# `gpux --dry-run`; prints each tool whose outcome differs with gpux's
# first error, then the counts: how many each starts, how many bpftrace
# starts and gpux does not. Needs bpftrace (root for its BTF and
# headers).
#   bench/bpftrace_tools.sh [GPUX] [TOOLS_DIR]
set -uo pipefail
gpux=${1:-build/cli/gpux}
dir=${2:-/usr/sbin}
command -v bpftrace >/dev/null || { echo "bpftrace_tools: no bpftrace"; exit 2; }
n=0 g_ok=0 b_ok=0 gap=0
for f in "$dir"/*.bt; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	g=$(timeout 60 "$gpux" --dry-run "$f" 2>&1 >/dev/null | grep -m1 'ERROR')
	b=$(timeout 60 bpftrace -d "$f" 2>&1 >/dev/null | grep -v RLIMIT_MEMLOCK | grep -m1 'ERROR')
	[ -z "$g" ] && g_ok=$((g_ok + 1))
	[ -z "$b" ] && b_ok=$((b_ok + 1))
	if [ -z "$b" ] && [ -n "$g" ]; then
		gap=$((gap + 1))
		printf '%-20s %s\n' "$(basename "$f")" "$(sed "s|$dir/||" <<<"$g" | cut -c1-110)"
	fi
done
echo "tools: $n; bpftrace starts $b_ok, gpux $g_ok; bpftrace but not gpux: $gap"
