#!/usr/bin/env bash
# Include rules between the top-level folders (abi/README.md). Fails,
# naming the offending lines, when:
#   - a source reaches into another folder by a relative path
#     ("../codegen/host_rec.h"): folders see each other's headers only
#     through their targets' include directories (CMake);
#   - a folder includes another folder's private header (*_priv.h);
#   - an abi/ header includes anything but system and abi/ headers;
#   - two folders have headers of one name (the include path is flat, so
#     which one a quoted include means would depend on the target);
#   - a header has the name of a C or POSIX header (<sched.h>): through a
#     folder's public include directory it would shadow the system's for
#     every source that includes it, by angle brackets too;
#   - the folders' include graph has a cycle (A includes B's headers and
#     B, directly or through others, A's).
# tests/ may include what it tests and is not checked.
#   scripts/check_includes.sh [ROOT]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

# Sources of every folder but tests/, scripts/ and build trees.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	list() { git ls-files --cached --others --exclude-standard; }
else
	list() { find . -type f ! -path './.git/*' | sed 's|^\./||'; }
fi
mapfile -t files < <(list | grep -E '\.(c|h|cu|cuh|l|y)$' |
	grep -vE '^(tests|scripts|build[^/]*|fuzz-build[^/]*)/' | grep / | sort -u)

fail=0
bad() {
	echo "check_includes: $*" >&2
	fail=1
}
top() { echo "${1%%/*}"; }

# C11's headers and POSIX's, by name (sys/... ones need their folder).
system=" assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h
locale.h math.h setjmp.h signal.h stdalign.h stdarg.h stdatomic.h stdbool.h stddef.h
stdint.h stdio.h stdlib.h stdnoreturn.h string.h tgmath.h threads.h time.h uchar.h
wchar.h wctype.h aio.h arpa cpio.h dirent.h dlfcn.h fcntl.h fmtmsg.h fnmatch.h ftw.h
glob.h grp.h iconv.h langinfo.h libgen.h monetary.h mqueue.h ndbm.h netdb.h nl_types.h
poll.h pthread.h pwd.h regex.h sched.h search.h semaphore.h spawn.h strings.h
stropts.h syslog.h tar.h termios.h trace.h ulimit.h unistd.h utime.h utmpx.h wordexp.h
elf.h link.h malloc.h "
# Header name -> its folder.
declare -A home
for f in "${files[@]}"; do
	case $f in *.h | *.cuh) ;; *) continue ;; esac
	b=${f##*/} t=$(top "$f")
	# kmod/libc/ stands in for the C library in the kernel, on purpose
	[[ $system == *" $b "* ]] && [[ $f != kmod/libc/* ]] &&
		bad "$f has the name of the system header <$b>" 
	if [ -n "${home[$b]:-}" ] && [ "${home[$b]}" != "$t" ]; then
		bad "$b is a header of both ${home[$b]}/ and $t/"
	fi
	home[$b]=$t
done

# Folder -> folder edges, with one include line that makes each.
declare -A edge
for f in "${files[@]}"; do
	t=$(top "$f") dir=${f%/*}
	while IFS=: read -r line inc; do
		where="$f:$line: #include \"$inc\""
		h=${home[${inc##*/}]:-}
		if [[ $inc == */* ]]; then
			# resolve against the including file's folder
			r=$(realpath -m --relative-to=. "$dir/$inc")
			if [ "$(top "$r")" != "$t" ] || [[ $r == ../* ]]; then
				bad "$where reaches into another folder by a relative path"
				[ -f "$r" ] && h=$(top "$r")
			fi
		fi
		[ -z "$h" ] || [ "$h" = "$t" ] && continue # generated or our own
		[[ $inc == *_priv.h ]] && bad "$where: a private header of $h/"
		[ "$t" = abi ] && bad "$where: abi/ headers include only abi/ and system headers"
		[ -n "${edge[$t $h]:-}" ] || edge[$t $h]=$where
	done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
		sed -E 's/^([0-9]+):[^"]*"([^"]*)".*/\1:\2/')
done

# Cycles: the transitive closure of the edges, then any pair reaching
# each other.
mapfile -t tops < <(printf '%s\n' "${files[@]}" | cut -d/ -f1 | sort -u)
declare -A reach
for e in "${!edge[@]}"; do reach[$e]=1; done
for k in "${tops[@]}"; do
	for i in "${tops[@]}"; do
		[ -n "${reach[$i $k]:-}" ] || continue
		for j in "${tops[@]}"; do
			[ -n "${reach[$k $j]:-}" ] && reach[$i $j]=1
		done
	done
done
for i in "${tops[@]}"; do
	for j in "${tops[@]}"; do
		if [[ ! $i < $j || -z ${reach[$i $j]:-} || -z ${reach[$j $i]:-} ]]; then
			continue
		fi
		bad "$i/ and $j/ include each other's headers, directly or through" \
			"other folders (a cycle); their direct includes:"
		for e in "$i $j" "$j $i"; do
			[ -n "${edge[$e]:-}" ] && echo "  ${edge[$e]}" >&2
		done
	done
done

if [ "$fail" = 0 ]; then
	echo "check_includes: ${#files[@]} files in ${#tops[@]} folders, no cross-folder path," \
		"private header or cycle"
fi
exit "$fail"
