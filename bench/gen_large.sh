#!/usr/bin/env bash
# Large gpux programs, for compile-time scaling (bench/compile.sh) and the
# tests that keep it linear (tests/hostgen/big_case.sh). Prints the
# program on stdout.
#
#   bench/gen_large.sh stmts N      one BEGIN probe of N statements:
#                                   $v = $v + 1; @a1 = count(); $v = $v + 2;
#                                   @a2 = count(); ... (N/2 maps)
#   bench/gen_large.sh stmts16 N    the same over 16 maps (@a1..@a16)
#   bench/gen_large.sh uprobes N    N uprobe:libc:malloc probes of 25
#                                   statements ($v, and 12 maps keyed by comm)
#   bench/gen_large.sh begins N     the same as N BEGIN probes
#   bench/gen_large.sh intervals N  ... as N interval probes (N sections)
#   bench/gen_large.sh ifelse N     an if / else if chain of N branches
#   bench/gen_large.sh printf N     N printf() calls in one probe
set -euo pipefail
shape=${1:?shape}
n=${2:?count}
libc=/lib/x86_64-linux-gnu/libc.so.6
case $shape in
stmts | stmts16)
	awk -v n="$n" -v m=$([ "$shape" = stmts16 ] && echo 16 || echo 0) 'BEGIN {
		print "BEGIN {"; print "  $v = 0;"
		for (i = 1; i <= n / 2; i++) {
			printf "  $v = $v + %d;\n", i
			printf "  @a%d = count();\n", m ? (i - 1) % m + 1 : i
		}
		print "}" }' ;;
uprobes | begins | intervals)
	awk -v n="$n" -v shape="$shape" -v libc="$libc" 'BEGIN {
		for (j = 1; j <= n; j++) {
			if (shape == "uprobes")
				printf "uprobe:%s:malloc {\n", libc
			else if (shape == "begins")
				print "BEGIN {"
			else
				printf "interval:ms:%d {\n", 100 + j
			printf "  $v = %d;\n", j
			for (i = 1; i <= 12; i++)
				printf "  $v = $v + %d;\n  @c%d[comm] = count();\n", i, i
			print "}"
		} }' ;;
ifelse)
	awk -v n="$n" 'BEGIN {
		print "BEGIN {"; print "  $x = pid;"
		print "  if ($x == 0) { @b0 = count(); }"
		for (i = 1; i < n; i++)
			printf "  else if ($x == %d) { @b%d = count(); }\n", i, i % 16
		print "  else { @other = count(); }"
		print "}" }' ;;
printf)
	awk -v n="$n" 'BEGIN {
		print "BEGIN {"; print "  $v = pid;"
		for (i = 1; i <= n; i++)
			printf "  printf(\"line %d: %%d %%s\\n\", $v + %d, comm);\n", i, i
		print "}" }' ;;
*)
	echo "gen_large.sh: unknown shape $shape" >&2
	exit 2 ;;
esac
