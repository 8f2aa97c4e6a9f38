#!/usr/bin/env bash
# Large programs through the host lowering (codegen/host_passes.c).
#
#   big_case.sh dryrun GPUX SHAPE N   gpux --dry-run compiles the program of
#                                     bench/gen_large.sh SHAPE N (ctest's
#                                     TIMEOUT catches a return to
#                                     superlinear compile time)
#   big_case.sh run GPUX              a BEGIN probe of about 14,000
#                                     statements runs in the userspace VM and
#                                     prints the maps and lines computed here
#   big_case.sh load HOSTGEN          the kernel's verifier loads a uprobe of
#                                     about 6,000 statements (77: bpf() refused)
#
# The programs are big enough for every large-program path: the light
# pipeline, line info without text, no DWARF, straight-line runs cut into
# blocks, the maps' BTF written by gpux.
set -u
mode=$1
bin=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# gen HEAD P S R B M: one probe (HEAD, e.g. "BEGIN {") into $tmp/p.gpx and
# the output gpux must print into $tmp/want: P pairs "$v = $v + i;
# @aNNN = count()" over M maps, S pairs "$w = ...; @wK = $w" (no branch:
# cut into blocks), R printf() lines, an if/else chain of B branches on $v.
gen() {
	awk -v head="$1" -v P="$2" -v S="$3" -v R="$4" -v B="$5" -v M="$6" \
	    -v prog="$tmp/p.gpx" -v want="$tmp/want" 'BEGIN {
		print head > prog
		print "  $v = 0;\n  $w = 0;" > prog
		for (i = 1; i <= P; i++) {
			printf "  $v = $v + %d;\n  @a%03d = count();\n", i, i % M > prog
			v += i
			a[i % M]++
		}
		for (j = 1; j <= S; j++) {
			printf "  $w = $w + $v %% 1000 + %d;\n  @w%d = $w;\n", j, j % 10 > prog
			w += v % 1000 + j
			wl[j % 10] = w
		}
		for (j = 1; j <= R; j++) {
			printf "  printf(\"p%%d %%d\\n\", %d, $v + %d);\n", j, j > prog
			line[j] = sprintf("p%d %d", j, v + j)
		}
		printf "  if ($v %% %d == 0) { @branch = 0; }\n", B > prog
		for (k = 1; k < B; k++)
			printf "  else if ($v %% %d == %d) { @branch = %d; }\n", B, k, k > prog
		print "  exit();\n}" > prog
		print "Attaching 1 probe..." > want
		for (j = 1; j <= R; j++)
			print line[j] > want
		print "\n" > want
		close(want)
		sort = "LC_ALL=C sort >> " want
		for (k in a)
			printf "@a%03d: %d\n", k, a[k] | sort
		for (k in wl)
			printf "@w%d: %d\n", k, wl[k] | sort
		printf "@branch: %d\n", v % B | sort
		close(sort)
	}'
}

case $mode in
dryrun)
	bash "$here/../../bench/gen_large.sh" "$3" "$4" > "$tmp/p.gpx" || exit 1
	"$bin" --dry-run "$tmp/p.gpx"
	;;
run)
	gen "BEGIN {" 6000 1000 100 50 97
	"$bin" "$tmp/p.gpx" > "$tmp/out" || exit 1
	diff -u "$tmp/want" "$tmp/out" > "$tmp/diff" || { head -40 "$tmp/diff"; exit 1; }
	;;
load)
	# a kernel program uses at most 64 maps
	gen "uprobe:/lib/x86_64-linux-gnu/libc.so.6:malloc {" 2500 600 100 50 40
	out=$("$bin" --load "$tmp/p.gpx")
	rc=$?
	[ $rc -eq 77 ] && exit 77
	printf '%s\n' "$out" | grep -qx 'load ok' || { printf '%s\n' "$out" | tail -5; exit 1; }
	exit $rc
	;;
*)
	echo "big_case.sh: unknown mode $mode" >&2
	exit 2
	;;
esac
